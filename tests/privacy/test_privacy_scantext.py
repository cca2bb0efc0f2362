"""The text as the rules read it (``ScanText``): the views made a chunk at a time equal the
views of the whole text, and an ASCII text is searched in place (no ASCII copy is held)."""

from __future__ import annotations

import random

import pytest

from toolkit.privacy import scantext
from toolkit.privacy.engine import RULES, scan_text_with_values
from toolkit.privacy.needles import present_literals
from toolkit.privacy.rules import Rule, lazy
from toolkit.privacy.scantext import ScanText
from toolkit.privacy.types import Context

LITERALS = sorted({w for rule in RULES for w in rule.tuning.literals})


def _soup(rng: random.Random, size: int) -> str:
    pieces = [*LITERALS, " ", "\n", "x", "password=Xy7kq9Lm2Pz4 ", "SECRET", "\u00e9"]
    return "".join(rng.choice(pieces) for _ in range(size))


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("chunk", [7, 16, 33])
def test_views_made_a_chunk_at_a_time_equal_the_whole_text_views(
    monkeypatch: pytest.MonkeyPatch, seed: int, chunk: int
) -> None:
    """Chunks far shorter than the text (literals straddle every cut): the lower-cased view, the
    literals found and the findings are those of the text read whole."""
    rng = random.Random(seed)
    text = _soup(rng, 300).encode("ascii", "replace").decode()  # ASCII: the chunked path
    whole = ScanText(text)
    want_low, want_present = bytes(whole.low_ascii), present_literals(text.encode())
    want_found = scan_text_with_values(text, Context.GENERIC)
    monkeypatch.setattr(scantext, "CHUNK", chunk)
    view = ScanText(text)
    assert isinstance(view.low_ascii, bytearray)  # filled a chunk at a time
    assert bytes(view.low_ascii) == want_low == text.encode().lower()
    assert view._literals() == want_present
    assert scan_text_with_values(text, Context.GENERIC) == want_found


@pytest.mark.parametrize("seed", range(20))
def test_an_ascii_text_is_searched_in_place_as_its_bytes_would_be(seed: int) -> None:
    """Over an ASCII text (no ASCII copy held) ``find``, ``hits`` and ``ascii_slice`` give what the
    same searches over its bytes give, a pattern with ``\\s`` and case folding included (the
    str pattern is compiled with ``re.ASCII``: ``\\s`` does not match \\x1c-\\x1f)."""
    rng = random.Random(seed)
    alphabet = ["a", "B", "k", "K", " ", "\t", "\x1c", "\x1f", ".", "ab.cdEFgh.", "Secret", "\n"]
    text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 200)))
    view = ScanText(text)
    assert view._ascii is None
    data = text.encode("ascii")
    for pattern in (lazy(r"\.[A-Za-z0-9_-]{6}\."), lazy(r"k\s+b", 2), lazy(r"\S{3}")):
        assert list(view.hits(pattern)) == [m.span() for m in pattern.bytes_compiled.finditer(data)]
    for start in (0, 3, 50):
        assert view.find("Secret", start) == data.find(b"Secret", start)
        assert view.ascii_slice(start, start + 20) == data[start : start + 20]


def test_a_text_with_non_ascii_keeps_its_ascii_view() -> None:
    view = ScanText("caf\u00e9 Secret \u212a")
    assert view.ascii_bytes() == b"caf? Secret ?"
    assert view.find("Secret") == 5 and list(view.hits(lazy("Sec"))) == [(5, 8)]


@pytest.mark.parametrize("seed", range(30))
def test_seed_starts_found_per_region_equal_the_kept_occurrences(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Seeds whose occurrences do not fit in ``_KEEP`` are found again a region at a time: the
    starts and the findings are those made from the kept occurrences (regions of a few
    characters, so seeds straddle and skip many of them)."""
    rng = random.Random(seed)
    pieces = ["password", "PASS", "secret", "token", "-u", "machine", "ghp_", "=", " ", "\n", "Xy7kq9Lm2Pz4"]
    text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 300)))
    seeded = [rule for rule in RULES if rule.tuning.seeds]
    want = {rule.id: _starts(rule, ScanText(text)) for rule in seeded}
    want_found = scan_text_with_values(text, Context.GENERIC)
    monkeypatch.setattr(scantext, "_REGION", rng.choice([1, 5, 40]))
    for keep in (0, 3):
        monkeypatch.setattr(scantext, "_KEEP", keep)
        view = ScanText(text)
        assert {rule.id: _starts(rule, view) for rule in seeded} == want
        assert scan_text_with_values(text, Context.GENERIC) == want_found


def _starts(rule: Rule, view: ScanText) -> list[int] | None:
    starts = rule._seed_starts(view)
    return None if starts is None else list(starts)
