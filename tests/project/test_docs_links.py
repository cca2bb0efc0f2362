"""Every relative link in README.md and docs/ resolves (a file, and a heading when it names one)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _anchor(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    body = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_anchor(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+)$", body, re.M)}


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]


def _broken(pages: list[Path], root: Path = ROOT) -> list[str]:
    broken = []
    for page in pages:
        body = _FENCE.sub("", page.read_text(encoding="utf-8"))
        for target in _LINK.findall(body):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, fragment = target.partition("#")
            dest = page if not file_part else (page.parent / file_part).resolve()
            if not dest.exists():
                broken.append(f"{page.relative_to(root)}: {target} (no such file)")
            elif fragment and dest.suffix == ".md" and fragment not in _anchors(dest):
                broken.append(f"{page.relative_to(root)}: {target} (no such heading)")
    return broken


def test_every_relative_link_resolves() -> None:
    assert _broken(_pages()) == []


def test_the_checker_catches_a_broken_link(tmp_path: Path) -> None:
    (tmp_path / "runtime.md").write_text("# Decision runtime\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[x](no-such-page.md) [y](runtime.md#no-such-heading) [z](runtime.md#decision-runtime)\n"
        "```\n[in a fence](ignored.md)\n```\n",
        encoding="utf-8",
    )
    found = _broken([page], tmp_path)
    assert len(found) == 2
    assert any("no-such-page.md" in b for b in found)
    assert any("no-such-heading" in b for b in found)


def test_readme_stays_short_and_links_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"docs/{page.name}" in readme, f"README does not link docs/{page.name}"
