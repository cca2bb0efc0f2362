"""``workgroup usage`` messages: a too-short session prefix is asked to be longer, and the exit codes
that ``--help`` prints are the ones docs/usage.md gives (one text, quoted in both)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.harness import cli
from support.usage_fixtures import build

from toolkit.commands.usage import REPORT_EXIT_CODES, SESSION_EXIT_CODES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "usage.md"


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in build(tmp_path / "logs").items():
        monkeypatch.setenv(key, value)


def test_a_prefix_shorter_than_four_characters_is_asked_to_be_longer(logs: None) -> None:
    code, out, err = cli("usage", "session", "s-b", "--timezone", "UTC")
    assert code == 2 and out == ""
    assert "USAGE_SHORT_PREFIX" in err and "at least 4 characters (this one has 3)" in err
    assert "no session" not in err and "Traceback" not in err
    code, out, _ = cli("usage", "session", "s-bb", "--timezone", "UTC")  # four: a unique prefix
    assert code == 0 and "s-bbbb" in out
    code, _, err = cli("usage", "session", "s-zzzz", "--timezone", "UTC")  # long enough, names nothing
    assert code == 1 and "USAGE_NO_SESSION" in err


@pytest.mark.parametrize(
    ("argv", "text"),
    [(("usage", "--help"), REPORT_EXIT_CODES), (("usage", "session", "--help"), SESSION_EXIT_CODES)],
)
def test_help_and_docs_give_the_same_exit_codes(argv: tuple[str, ...], text: str) -> None:
    code, out, _ = cli(*argv)
    assert code == 0
    assert _flat(text) in _flat(out)
    assert _flat(text) in _flat(DOCS.read_text(encoding="utf-8"))
    assert out.count("Exit codes") == 1  # not the generic map as well


def test_the_documented_session_codes_are_the_real_ones(logs: None) -> None:
    # each code SESSION_EXIT_CODES names, produced: 1 no such session, 2 short or shared prefix
    assert cli("usage", "session", "s-zzzz")[0] == 1
    assert cli("usage", "session", "s-a")[0] == 2
    assert cli("usage", "session", "0000")[0] == 2  # 0000aaaa, 0000bbbb, ...: more than one
    assert cli("usage", "session", "s-aaaa", "--workflow", "nope")[0] == 2
