"""Peak memory of ``workgroup privacy scan`` on one long line: a constant plus a small multiple
of the line, however many candidates the line holds (the findings are capped per rule).

Each scan runs in its own ``workgroup`` process, started by a fresh runner process that reports
``RUSAGE_CHILDREN`` peak RSS: the only child it ever had is that scan. The base is the same
command on a tiny file, measured in the same test.
"""

from __future__ import annotations

import random
import string
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

WORKGROUP = str(Path(sys.executable).parent / "workgroup")
_RUNNER = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)
LINE_BYTES = 4_000_000
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KB on Linux")


def _peak_kb(*args: str) -> tuple[int, int]:
    """(exit code, peak RSS in KB) of ``workgroup ARGS`` run from a fresh runner process."""
    out = subprocess.run(
        [sys.executable, "-c", _RUNNER, WORKGROUP, *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.split()
    return int(out[0]), int(out[1])


def _one_line(path: Path, unit: str, size_bytes: int = LINE_BYTES) -> Path:
    """A single line of about ``size_bytes`` bytes: ``unit`` filled with random characters."""
    rng = random.Random(1)
    alphabet = string.ascii_letters + string.digits
    count = size_bytes // (len(unit.format("")) + 15) + 1
    chars = "".join(rng.choices(alphabet, k=14 * count))  # drawn at once: an 8 MB line in ~1 s
    parts = [unit.format(chars[i : i + 14]) for i in range(0, 14 * count, 14)]
    path.write_text(" ".join(parts) + "\n", encoding="ascii")
    return path


@pytest.mark.parametrize(
    ("unit", "suffix"),
    [
        ("password={}", ".txt"),  # every pair a password-assignment candidate (seeded rule)
        ("Xy7{}Qz9Kp2Lm4Nb", ".txt"),  # every word a high-entropy run
        ("password={}", ".log"),  # a log: every rule, the line rules (transcripts) included
    ],
    ids=["password-pairs", "entropy-runs", "log-password-pairs"],
)
def test_peak_memory_is_base_plus_a_small_multiple_of_the_line(
    tmp_path: Path, unit: str, suffix: str
) -> None:
    tiny = tmp_path / f"tiny{suffix}"
    tiny.write_text("nothing to see\n", encoding="ascii")
    code, base = _peak_kb("privacy", "scan", str(tiny))
    assert code == 0
    big = _one_line(tmp_path / f"line{suffix}", unit)
    code, peak = _peak_kb("privacy", "scan", str(big))
    assert code == 1  # findings (capped at 1,000 per rule), not a crash
    line_kb = big.stat().st_size // 1024
    # the text and its lower-cased view (2x; reading holds the bytes read and the text, 2x too),
    # plus a constant: the findings (capped per rule), the patterns compiled for the rules that
    # run (the tiny base compiles few), the seed occurrences kept (at most 256 KB) and chunks of
    # the text (64 KiB) made where bytes are needed. Measured 2x + 1.1-1.8 MB
    # (tests/bench/bench_privacy_memory.py); with the ASCII view as a third copy it was
    # 3.3-3.5x, with every seed occurrence kept 2.2x. One more copy of the line is 4 MB
    assert peak - base < 2 * line_kb + 3072, (base, peak, line_kb)


@pytest.mark.parametrize(
    ("unit", "suffix"),
    [
        ("password={}", ".txt"),
        ("Xy7{}Qz9Kp2Lm4Nb", ".txt"),
        ("password={}", ".log"),
    ],
    ids=["password-pairs", "entropy-runs", "log-password-pairs"],
)
def test_a_line_longer_than_the_read_at_once_is_held_as_one_window(
    tmp_path: Path, unit: str, suffix: str
) -> None:
    """A file over 4 MiB is read in windows of whole lines; a line of 8 MB is one window, and
    its bytes are gathered in one buffer and decoded once (no list of decoded pieces joined)."""
    tiny = tmp_path / f"tiny{suffix}"
    tiny.write_text("nothing to see\n", encoding="ascii")
    code, base = _peak_kb("privacy", "scan", str(tiny))
    assert code == 0
    big = _one_line(tmp_path / f"line{suffix}", unit, 8_000_000)
    code, peak = _peak_kb("privacy", "scan", str(big))
    assert code == 1
    line_kb = big.stat().st_size // 1024
    # the line read (its bytes, then its text: 2x), then scanned (the text and its lower-cased
    # view: 2x), plus the constant of the 4 MB test. Measured 2x + 0.9-1.0 MB
    # (tests/bench/bench_privacy_memory.py); 2x + 4.9-5.1 MB (2.6x) when the line was joined
    # from a list of decoded pieces (the allocator kept the freed pieces through the scan), 4.1x
    # with the first 4 MiB held and the ASCII view a third copy, ~39x before the seeded-rule fix
    assert peak - base < 2 * line_kb + 3072, (base, peak, line_kb)


@pytest.mark.parametrize("chunk", [1, 7, 23, 24, 25, 64, 1000])
@pytest.mark.parametrize("seed", range(12))
def test_token_runs_in_chunks_equal_the_entropy_pattern(
    monkeypatch: pytest.MonkeyPatch, chunk: int, seed: int
) -> None:
    """The marks made a chunk at a time find every run the pattern does, runs crossing one
    chunk boundary or several included."""
    from toolkit.privacy import secrets
    from toolkit.privacy.scantext import ScanText

    monkeypatch.setattr(secrets, "_MARK_CHUNK", chunk)
    rng = random.Random(seed)
    pieces = [
        "a" * 10,
        "B" * 14,
        "09" * 7,
        "+/",
        "_-",
        "=",
        "==",
        "===",
        " ",
        ".",
        "\u00e9",
        "x" * 24,
        "y" * 90,
    ]
    text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 160)))
    want = [m.span() for m in secrets._ENTROPY_RUN.finditer(text)]
    assert list(secrets.token_runs(ScanText(text))) == want


@pytest.mark.parametrize("seed", range(40))
def test_seed_starts_are_the_sorted_set_of_every_window(seed: int) -> None:
    """The starts generated as they are used are the ones a set of every window gave: every
    position ``near`` before a seed occurrence, ascending, each once (seeds next to each other,
    overlapping windows and a window cut at the text's start included)."""
    from toolkit.privacy.engine import RULES
    from toolkit.privacy.scantext import ScanText

    rng = random.Random(seed)
    pieces = [
        "pass",
        "pwd",
        "key",
        "token",
        "secret",
        "bearer",
        "-u",
        "login",
        "user",
        "x",
        "  ",
        "=",
        "PASS",
    ]
    text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 200)))
    view = ScanText(text)
    for rule in (r for r in RULES if r.tuning.seeds):
        haystack = view.ascii_bytes() if rule.tuning.seed_case else view.low_ascii
        low, high = rule.tuning.near
        every: set[int] = set()
        for seed_word in rule.tuning.seeds:
            at = haystack.find(seed_word.encode())
            while at != -1:
                every.update(range(max(0, at - high), at - low + 1))
                at = haystack.find(seed_word.encode(), at + 1)
        starts = rule._seed_starts(view)
        if starts is not None:
            assert list(starts) == sorted(every), rule.id


_PIECES = [
    "\n",
    "\n\n",
    "  ",
    "password = 'Xy7kq9Lm2Pz'",
    "token=ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5",
    "AKIA" + "Z7QK2M4N6P8R3T5V",
    "Kq7Zp2Lx9Vb4Nm6Tc8Rd3Wf5",
    "# workgroup: allow password-assignment",
    "x  # workgroup: allow secret",
    "workgroup:",
    "\u00e9t\u00e9 ",
    "user@example.org",
    "a" * 30,
]


@pytest.mark.parametrize("seed", range(40))
def test_lines_and_columns_without_a_list_of_lines(seed: int) -> None:
    """Each finding's line and columns, located by counting newlines from the nearest located
    offset, name exactly its value in ``text.split("\\n")``; the allow comments found from the
    marker's occurrences are the ones a pass over every line finds."""
    from toolkit.privacy import engine
    from toolkit.privacy.scantext import ScanText
    from toolkit.privacy.types import Context

    rng = random.Random(seed)
    text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(1, 120)))
    lines = text.split("\n")
    found = engine.scan_text_with_values(text, Context.GENERIC)
    for finding, value in found:
        assert lines[finding.line - 1][finding.start : finding.end] == value
    view = ScanText(text)
    assert engine._allowed_rules(engine._allow_lines(view)) == engine._allowed_rules(enumerate(lines))


def test_located_offsets_in_any_order_past_the_checkpoint_distance(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offsets asked for out of order (rule after rule) with checkpoints kept every few
    characters give the same (line, line start) as the line starts of every line."""
    import bisect

    from toolkit.privacy import engine

    monkeypatch.setattr(engine, "_CHECKPOINT_EVERY", 5)
    rng = random.Random(7)
    text = "".join(rng.choice(["ab", "\n", "cde", "\n\n", "f"]) for _ in range(400))
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    collector = engine._Collector(text, [])
    for offset in [rng.randrange(len(text)) for _ in range(600)]:
        line = bisect.bisect_right(starts, offset) - 1
        assert collector.locate(offset) == (line, starts[line])


def _lines(path: Path, layout: list[int]) -> Path:
    """Lines of ``password=<14 random characters>`` pairs, one of about each size in ``layout``."""
    rng = random.Random(2)
    alphabet = string.ascii_letters + string.digits
    lines = []
    for size in layout:
        count = size // 24 + 1
        chars = "".join(rng.choices(alphabet, k=14 * count))
        lines.append(" ".join("password=" + chars[i : i + 14] for i in range(0, 14 * count, 14)))
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


@pytest.mark.parametrize(
    "layout",
    [[8_000_000, 8_000_000], [8_000_000, 100, 100, 100, 8_000_000], [100] * 30_000 + [8_000_000, 8_000_000]],
    ids=["two-long-lines", "long-short-long", "short-then-two-long"],
)
def test_two_long_lines_in_a_row_are_not_one_window(tmp_path: Path, layout: list[int]) -> None:
    """A long line after a long line is scanned with only a bounded tail of the first (its
    last overlaps), never with the whole of it, and the first window is let go before the next
    is read: the peak stays near one long line's (its bytes and text while it is decoded, then
    its text and lower-cased view), wherever the reads cut the lines."""
    tiny = tmp_path / "tiny.txt"
    tiny.write_text("nothing to see\n", encoding="ascii")
    code, base = _peak_kb("privacy", "scan", str(tiny))
    assert code == 0
    big = _lines(tmp_path / "lines.txt", layout)
    code, peak = _peak_kb("privacy", "scan", str(big))
    assert code == 1
    line_kb = max(layout) // 1024
    # measured 2.4-2.9x one line (19-22 MB over base for 8 MB lines: the bytes and text of a
    # line while it is decoded, the read buffer's growth and the allocator's holes after the
    # first long line; one 8 MB line alone is 2.1x). When the next window repeated the first
    # long line whole, the two lines were one window: 5x (about 40 MB)
    assert peak - base < 3 * line_kb + 3072, (base, peak, line_kb)


@pytest.mark.parametrize(
    "layout",
    [lambda n: [n, n], lambda n: [100] * 30_000 + [n, n]],
    ids=["two-long-lines", "short-then-two-long"],
)
def test_peak_grows_by_twice_what_the_longest_line_grows(
    tmp_path: Path, layout: Callable[[int], list[int]]
) -> None:
    """#28: peak memory is a constant plus twice the longest line. The constant (the windows of
    short lines, the first 4 MiB read, the findings, the allocator's holes) is measured at
    2-9 MB whatever the line (it settles once the lines pass the allocator's mmap threshold,
    which rises with the first 4 MiB read); the slope is what this checks: from 8 MB lines to
    16 MB lines the peak grows by twice the growth of the line (measured 1.9-2.1x), where one
    more copy of the line held anywhere would make it 3x."""
    peaks = []
    for size in (8_000_000, 16_000_000):
        big = _lines(tmp_path / f"lines-{size}.txt", layout(size))
        code, peak = _peak_kb("privacy", "scan", str(big))
        assert code == 1
        peaks.append(peak)
        big.unlink()
    grown_kb = 8_000_000 // 1024
    assert peaks[1] - peaks[0] < 2.3 * grown_kb, (peaks, grown_kb)
