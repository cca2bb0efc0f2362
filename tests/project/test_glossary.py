"""docs/glossary.md indexes every seed criterion the project cites, and names only real files."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = ROOT / "docs" / "glossary.md"
CITED = re.compile(r"\bCEO-(\d{2})\b")
ROW = re.compile(r"^\| (CEO-\d{2}) \|", re.MULTILINE)
PATH = re.compile(r"`((?:toolkit|tests|hooks)/[^`]+)`")


def _cited_ids() -> set[str]:
    found: set[str] = set()
    for folder in ("toolkit", "hooks", "tests", "docs"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".md"} and path != GLOSSARY:
                found.update(f"CEO-{n}" for n in CITED.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_cited_criterion_is_in_the_glossary() -> None:
    listed = set(ROW.findall(GLOSSARY.read_text(encoding="utf-8")))
    assert _cited_ids() - listed == set()


def test_the_glossary_lists_each_criterion_once_in_order() -> None:
    listed = ROW.findall(GLOSSARY.read_text(encoding="utf-8"))
    assert listed == [f"CEO-{n:02d}" for n in range(1, 22)]


def test_every_path_the_glossary_names_exists() -> None:
    named = PATH.findall(GLOSSARY.read_text(encoding="utf-8"))
    assert named and [p for p in named if not (ROOT / p).exists()] == []
