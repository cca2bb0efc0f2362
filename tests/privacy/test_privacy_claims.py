"""VERIFY CEO-14: the docs-claims check refuses blanket claims that cached input removes
context tokens and accepts billing / context-reuse descriptions."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.harness import CliResult, cli

from toolkit.privacy.claims import find_claims


def claims_hook(*files: str) -> CliResult:
    """``workgroup-docs-claims-hook FILES`` in-process, through the suite's one CLI helper."""
    return cli(*files, script="workgroup-docs-claims-hook")


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "text",
    [
        "Prompt caching removes tokens from the context window.",  # removal verb + context tokens
        "Cached input no longer counts toward your context tokens.",  # "no longer counts" is the claim
        "Cache hits eliminate context tokens.",
        "Caching reduces the context size by 90%.",
        "With the prompt cache, cached tokens don't count against the context window.",
        "Our cache\nfrees up context window space for every agent.",  # wrapped across lines
    ],
)
def test_blanket_claims_are_refused(text: str) -> None:
    assert len(find_claims(text)) == 1


@pytest.mark.parametrize(
    "text",
    [
        "Cache reads are billed at a lower rate.",  # billing framing
        "Caching gives context reuse and lower latency.",  # reuse framing
        "They MUST NOT claim cached input removes logical context tokens.",  # the seed itself
        "Savings are lower billed cost, never cached input removing context tokens.",  # negated
        "Caching does not remove context tokens: the model still reads them.",
        "The cache is cleared on restart.",  # caching without any token claim
        "Compaction removes tokens from the context window.",  # no caching involved
        "Prompt caching cuts the cost of repeated input tokens.",  # cost, not context
    ],
)
def test_billing_and_reuse_descriptions_pass(text: str) -> None:
    assert find_claims(text) == []


def test_position_and_inline_allow() -> None:
    text = "# Title\n\nIntro line.\nSee: prompt caching removes context tokens. Done.\n"
    (claim,) = find_claims(text)
    assert (claim.line, text.split("\n")[3][claim.start : claim.end]) == (
        4,
        "See: prompt caching removes context tokens.",
    )
    allowed = text.replace("Done.", "Done. <!-- workgroup: allow docs-cache-token-claim -->")
    assert find_claims(allowed) == []


def test_hook_main(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_text("Caching removes context tokens.\n", encoding="utf-8")
    good = tmp_path / "good.md"
    good.write_text("Cache reads are billed at a lower rate.\n", encoding="utf-8")
    binary = tmp_path / "b.md"
    binary.write_bytes(b"\x00cache removes context tokens")
    assert claims_hook(str(good), str(binary)).exit_code == 0
    captured = claims_hook(str(bad), str(good))
    assert captured.exit_code == 1
    out = captured.stdout
    assert f"{bad}:1:1: docs-cache-token-claim blanket claim" in out and str(good) not in out
    assert "  fix: describe cache reads as lower billed cost" in out
    assert "docs-claims: 1 finding (1 error, 0 warnings) in 2 files" in captured.stderr


def test_our_own_documentation_passes() -> None:
    docs = [ROOT / "README.md", *sorted((ROOT / "templates").glob("**/*.md"))]
    assert claims_hook(*[str(p) for p in docs if p.is_file()]).exit_code == 0
