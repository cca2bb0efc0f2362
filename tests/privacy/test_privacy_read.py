"""The gate never passes what it did not read (issue 24): every encoding, size, binary and
compressed file is read whole, and what cannot be read is a finding in a workflow artifact.

Real files on disk, scanned through ``scan_paths`` (what both privacy hooks run). The fake
secrets are built at run time, so this file holds no literal secret.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import random
import string
import zipfile
from pathlib import Path

import pytest

from toolkit.privacy import streams
from toolkit.privacy.files import ScanReport, scan_paths
from toolkit.privacy.providers import base62_crc32
from toolkit.privacy.streams import HEAD_BYTES, windows

R = random.Random(24)


def _random(n: int) -> str:
    while True:
        value = "".join(R.choice(string.ascii_letters + string.digits) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value):
            return value


def github_token() -> str:
    body = _random(30)
    return "gh" + "p_" + body + base62_crc32(body)


def aws_line() -> str:
    return "aws_secret_" + "access_key = " + _random(40)


def pem_key() -> list[str]:
    return [
        "-----BEGIN RSA PRIVATE" + " KEY-----",
        _random(64),
        _random(64),
        "-----END RSA PRIVATE" + " KEY-----",
    ]


GH = github_token()
TOKEN_LINE = "token = " + GH


def _scan(root: Path, *names: str) -> ScanReport:
    return scan_paths([root / n for n in names], root)


def _hits(report: ScanReport) -> list[tuple[str, int, int, str]]:
    return [(i.path, i.finding.line, i.finding.start, i.finding.rule) for i in report.findings]


def _write(root: Path, rel: str, data: bytes) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(data)


@pytest.mark.parametrize(
    "encoding, bom",
    [
        ("utf-16-le", b"\xff\xfe"),  # what PowerShell's `>` writes
        ("utf-16-be", b"\xfe\xff"),
        ("utf-32-le", b"\xff\xfe\x00\x00"),
        ("utf-32-be", b"\x00\x00\xfe\xff"),
        ("utf-8", b"\xef\xbb\xbf"),
        ("utf-16-le", b""),  # no mark: every other byte NUL says UTF-16LE
        ("utf-16-be", b""),
    ],
)
def test_text_is_decoded_by_its_byte_order_mark(tmp_path: Path, encoding: str, bom: bytes) -> None:
    text = f"# notes\r\nplain line\r\n{TOKEN_LINE}\r\n"
    _write(tmp_path, "notes.txt", bom + text.encode(encoding))
    report = _scan(tmp_path, "notes.txt")
    assert _hits(report) == [("notes.txt", 3, 8, "github-token")], report.notices
    assert report.notices == [] and report.files_scanned == 1


def test_a_nul_byte_before_the_token_does_not_hide_it(tmp_path: Path) -> None:
    _write(tmp_path, "src/nul.txt", b"header\x00\n" + TOKEN_LINE.encode() + b"\n")
    assert _hits(_scan(tmp_path, "src/nul.txt")) == [("src/nul.txt", 2, 8, "github-token")]
    # a long text with one stray NUL stays text, read in its own context (a transcript here)
    record = b'{"role": "user", "content": "an ordinary message of the session"}\n'
    _write(tmp_path, ".reviews/log.jsonl", b"\x00" + record * 200)
    report = _scan(tmp_path, ".reviews/log.jsonl")
    assert {i.finding.category.value for i in report.findings} == {"transcript"}
    assert report.notices == []


def test_binary_data_has_its_printable_runs_scanned(tmp_path: Path) -> None:
    noise = random.Random(5).randbytes(300_000)
    ascii_at = noise[:100_000] + b"\n" + TOKEN_LINE.encode() + b"\x00"
    wide = ("key=" + GH).encode("utf-16-le")
    blob = b"\x89PNG\r\n\x1a\n\x00\x00" + ascii_at + noise[100_000:200_000] + wide + noise[200_000:]
    _write(tmp_path, "assets/logo.png", blob)
    report = _scan(tmp_path, "assets/logo.png")
    rules = [(i.finding.rule, i.finding.masked[:4]) for i in report.findings]
    assert rules == [("github-token", "ghp_"), ("github-token", "ghp_")], report.notices
    first = report.findings[0].finding
    assert first.line == 1 + blob[: blob.index(TOKEN_LINE.encode())].count(b"\n") and first.start == 8
    assert GH not in repr(report.findings)


def test_random_binary_data_raises_no_false_alarm(tmp_path: Path) -> None:
    _write(tmp_path, "data/noise.bin", b"\x00" + random.Random(11).randbytes(3 * 1024 * 1024))
    report = _scan(tmp_path, "data/noise.bin")
    assert report.findings == [] and report.notices == [] and report.files_scanned == 1


def test_a_large_file_is_read_whole_with_lines_right(tmp_path: Path) -> None:
    """Over 4.5 MB: a secret on line 1, one on the very last line (no final newline), one line
    across the raw cut at HEAD_BYTES (a byte cut would split it) and a private key whose first
    line ends a window while its body starts the next (found only through the overlap)."""
    filler = "x = 1  # ordinary source code line, nothing to see here\n"
    first = aws_line() + "\n"
    lines = [first]
    size = len(first)
    while size + len(filler) < HEAD_BYTES - 200:
        lines.append(filler)
        size += len(filler)
    pad = HEAD_BYTES - 30 - size  # the AWS line covers byte HEAD_BYTES, where the head read ends
    lines.append("#" * (pad - 1) + "\n")
    straddle = aws_line() + "\n"
    lines.append(straddle)
    size += pad + len(straddle)
    window_end = HEAD_BYTES + 1 + streams.BLOCK_BYTES  # where the second window's text ends
    while size + len(filler) < window_end - 300:
        lines.append(filler)
        size += len(filler)
    key = pem_key()
    lines.append("#" * (window_end - 10 - len(key[0]) - 1 - size - 1) + "\n")
    begin_line = len(lines) + 1
    lines.extend(k + "\n" for k in key)  # the first body line runs over window_end
    size = sum(map(len, lines))
    assert sum(map(len, lines[:begin_line])) == window_end - 10  # the key's first line ends there
    while size < window_end + 200_000:
        lines.append(filler)
        size += len(filler)
    last = aws_line()
    lines.append(last)
    text = "".join(lines)
    _write(tmp_path, "src/big.py", text.encode())
    assert len(text) > 4_500_000
    cut = text.encode()[: HEAD_BYTES + 1].rfind(b"\n")
    straddle_at = text.index(straddle)
    assert straddle_at < HEAD_BYTES < straddle_at + len(straddle) and cut < straddle_at
    report = _scan(tmp_path, "src/big.py")
    assert _hits(report) == [
        ("src/big.py", 1, 24, "aws-secret-access-key"),
        ("src/big.py", text[:straddle_at].count("\n") + 1, 24, "aws-secret-access-key"),
        ("src/big.py", begin_line, 0, "private-key"),
        ("src/big.py", text.count("\n") + 1, 24, "aws-secret-access-key"),
    ], report.notices


def test_windows_cover_every_line_once_in_bounded_memory() -> None:
    lines = [f"line {i} " + "y" * (i * 37 % 300) + "\n" for i in range(5000)]
    lines[2500] = "z" * 5000 + "\n"  # a line longer than a window
    text = "".join(lines)
    pieces = [text[i : i + 777] for i in range(0, len(text), 777)]
    seen: list[str] = []
    longest = max(map(len, lines))
    for window, first, repeated, shift in windows(iter(pieces), size=2000, overlap=500):
        got = window.split("\n")
        if got[-1] == "":
            got.pop()
        want = [s.rstrip("\n") for s in lines[first - 1 : first - 1 + repeated]]
        if shift:  # the 5000-character line: only its last 4 overlaps are repeated
            want = [want[0][shift:]]
            assert len(want[0]) == 4 * 500
        assert got[:repeated] == want
        assert first - 1 + repeated == len(seen)  # the new part starts where the last one ended
        seen.extend(g + "\n" for g in got[repeated:])
        assert len(window) <= 2000 + 777 + 2 * longest + 500
    assert seen == lines


def test_a_long_line_without_line_ends_is_read_in_linear_time() -> None:
    pieces = ["a" * 100_000] * 200  # 20 MB on one line: joined once, not once per piece
    out = list(windows(iter(pieces), size=1000, overlap=100))
    assert len(out) == 1 and len(out[0][0]) == 20_000_000


@pytest.mark.parametrize("seed", range(300))
def test_utf8_windows_cover_the_decoded_text_line_by_line(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The windows made from raw UTF-8 bytes hold every line of the text the incremental decoder
    gives (bad bytes, a character split across blocks, a byte-order mark, blocks larger than a
    window taken a part at a time), each new line once and the repeated ones those before it."""
    rng = random.Random(seed)
    block = rng.choice([1, 2, 3, 7, 64])
    monkeypatch.setattr(streams, "BLOCK_BYTES", block)
    units = [
        b"\n",
        b"\n\n",
        b"abc",
        b"\xc3\xa9",
        b"\xe2\x82\xac",
        b"\xf0\x9f\x98\x80",
        b"\xe2\x82",
        b"\xff",
        b"x" * 50,
    ]
    data = b"".join(rng.choice(units) for _ in range(rng.randrange(0, 300)))
    encoding = "utf-8"
    if rng.random() < 0.3:
        data, encoding = b"\xef\xbb\xbf" + data, "utf-8-sig"
    blocks: list[bytes] = []
    while sum(map(len, blocks)) < len(data):
        at = sum(map(len, blocks))
        blocks.append(data[at : at + rng.choice([1, 2, 3, block, 4 * block + 1, 17])])
    size, overlap = rng.choice([1, 5, 20, 100, 1000]), rng.choice([0, 3, 10, 50])
    lines = "".join(streams.decoded(iter(blocks), encoding)).splitlines(keepends=True)
    seen: list[str] = []
    for window, first, repeated, shift in streams.utf8_windows(iter(blocks), encoding, size, overlap):
        got = window.splitlines(keepends=True)
        want = lines[first - 1 : first - 1 + repeated]
        if shift:  # the cut tail of one long line: at most LINE_TAIL overlaps of it
            assert repeated == 1 and 0 < len(got[0]) <= streams.LINE_TAIL * overlap + 1 < len(want[0])
            want = [want[0][shift:]]
        assert got[:repeated] == want
        assert first - 1 + repeated == len(seen)
        seen.extend(got[repeated:])
    assert seen == lines


@pytest.mark.parametrize("seed", range(100))
def test_utf8_windows_of_ascii_blocks_are_the_text_windows(seed: int) -> None:
    """Over ASCII data in blocks no larger than a read, the windows are exactly the ones the
    decoded pieces make (the same cuts, first lines and repeated lines)."""
    rng = random.Random(seed)
    data = b"".join(
        rng.choice([b"\n", b"abc", b"x" * 50, b"\n\n", b"y" * 7]) for _ in range(rng.randrange(0, 300))
    )
    blocks = [data[i : i + 17] for i in range(0, len(data), 17)]
    size, overlap = rng.choice([1, 5, 20, 100, 1000]), rng.choice([0, 3, 10, 50])
    want = list(windows(streams.decoded(iter(blocks), "utf-8"), size, overlap))
    assert list(streams.utf8_windows(iter(blocks), "utf-8", size, overlap)) == want


def _gz(data: bytes) -> bytes:
    return gzip.compress(data)


def _zip(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("docs/readme.md", "nothing here\n")
        archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "name, pack",
    [
        ("notes.txt.gz", _gz),
        ("notes.txt.bz2", bz2.compress),
        ("notes.txt.xz", lzma.compress),
        ("notes.zip", lambda d: _zip("deep/notes.txt", d)),
        ("notes.txt.gz.gz", lambda d: _gz(_gz(d))),  # nested
        ("multi.gz", lambda d: _gz(b"first member\n") + _gz(d)),  # concatenated members
    ],
)
def test_compressed_files_are_read_through(tmp_path: Path, name: str, pack: object) -> None:
    assert callable(pack)
    _write(tmp_path, f"src/{name}", pack(f"intro\n{TOKEN_LINE}\n".encode()))
    report = _scan(tmp_path, f"src/{name}")
    shown = f"src/{name}!deep/notes.txt" if name.endswith(".zip") else f"src/{name}"
    line = 3 if name == "multi.gz" else 2
    assert _hits(report) == [(shown, line, 8, "github-token")], report.notices


def test_a_compressed_event_log_is_read_in_its_context(tmp_path: Path) -> None:
    record = b'{"role": "assistant", "content": "done, the tests pass"}\n'
    _write(tmp_path, ".reviews/session.jsonl.gz", _gz(record * 10))
    report = _scan(tmp_path, ".reviews/session.jsonl.gz")
    assert len(report.findings) == 10 and {i.finding.category.value for i in report.findings} == {
        "transcript"
    }


def test_what_cannot_be_read_is_a_finding_in_artifacts_and_a_notice_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corrupt = b"\x1f\x8b\x08\x00" + b"not really deflate data" * 10
    truncated = _gz(b"a line\n" * 10_000)[:-40]
    monkeypatch.setattr(streams, "MAX_EXPANDED_BYTES", 1024 * 1024)
    bomb = _gz(b"\x00" * (8 * 1024 * 1024))  # 8 MiB of zeros in a few KiB, past the lowered cap
    for name, data in (("corrupt.gz", corrupt), ("truncated.gz", truncated), ("bomb.gz", bomb)):
        _write(tmp_path, f".reviews/{name}", data)
        _write(tmp_path, f"src/{name}", data)
    report = _scan(tmp_path, ".reviews", "src")
    found = {(i.path, i.finding.rule, i.finding.category.value) for i in report.findings}
    assert found == {
        (f".reviews/{n}", "unreadable-file", "unreadable") for n in ("bomb.gz", "corrupt.gz", "truncated.gz")
    }
    reasons = {i.path: i.finding.masked for i in report.findings}
    assert "more than 1048576 bytes" in reasons[".reviews/bomb.gz"]
    assert "corrupt" in reasons[".reviews/corrupt.gz"] and "truncated" in reasons[".reviews/truncated.gz"]
    assert sorted(report.notices) == [
        "src/bomb.gz: not scanned (decompresses to more than 1048576 bytes)",
        "src/corrupt.gz: not scanned (gzip data is corrupt)",
        "src/truncated.gz: not scanned (compressed data is truncated)",
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_file_without_read_permission_is_a_finding_in_artifacts(tmp_path: Path) -> None:
    for rel in (".reviews/locked.md", "src/locked.md"):
        _write(tmp_path, rel, b"text\n")
        (tmp_path / rel).chmod(0)
    report = _scan(tmp_path, ".reviews/locked.md", "src/locked.md")
    assert _hits(report) == [(".reviews/locked.md", 1, 0, "unreadable-file")]
    assert report.notices == ["src/locked.md: not scanned (permission denied)"]


def test_sniff_tells_text_from_binary() -> None:
    assert streams.sniff(b"plain text\n") == "utf-8"
    assert streams.sniff("résumé".encode()) == "utf-8"
    assert streams.sniff(b"\x00" + b"mostly text " * 100) == "utf-8"  # a stray NUL
    assert streams.sniff(b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00" + bytes(range(256)) * 4) == "binary"
    assert streams.sniff("plain ascii text".encode("utf-16-le")) == "utf-16-le"
    assert streams.sniff("plain ascii text".encode("utf-32-le")) == "utf-32-le"
    assert streams.sniff(b"BZh91AY&SY") == "bzip2" and streams.sniff(b"BZh9 is just text") == "utf-8"


PEAK = """
import resource, sys
from pathlib import Path
from toolkit.privacy.files import scan_paths
root = Path(sys.argv[1])
report = scan_paths([root / sys.argv[2]], root)
print(len(report.findings), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def test_memory_stays_bounded_on_a_large_file(tmp_path: Path) -> None:
    """64 MiB of text with a secret at its end: the scan's peak memory grows by far less than
    the file (read whole, it would hold the bytes and the text: over 128 MiB)."""
    import subprocess
    import sys

    line = "value = compute(1, 2)  # an ordinary line of source code\n"
    with (tmp_path / "huge.py").open("w", encoding="utf-8") as out:
        chunk = line * (1024 * 1024 // len(line))
        for _ in range(64):
            out.write(chunk)
        out.write(aws_line() + "\n")
    (tmp_path / "small.py").write_text(line + aws_line() + "\n", encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    peaks = {}
    for name in ("small.py", "huge.py"):
        done = subprocess.run(
            [sys.executable, "-c", PEAK, str(tmp_path), name],
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
        )
        found, peak_kib = map(int, done.stdout.split())
        assert found == 1, name
        peaks[name] = peak_kib
    assert peaks["huge.py"] - peaks["small.py"] < 48 * 1024, peaks


def test_a_large_transcript_keeps_the_per_rule_cap_per_file(tmp_path: Path) -> None:
    """The 5 MB transcript of the issue is found; as in one scan of a text, at most 1,000
    findings of a rule per file, however many windows it takes."""
    record = b'{"role": "user", "content": "an ordinary message of the pasted session"}\n'
    _write(tmp_path, ".reviews/session.jsonl", record * (5_100_000 // len(record)))
    report = _scan(tmp_path, ".reviews/session.jsonl")
    rules = {i.finding.rule for i in report.findings}
    assert rules == {"chat-message-record"} and len(report.findings) == 1000
    assert [i.finding.line for i in report.findings] == list(range(1, 1001))


_ALNUM = string.ascii_letters + string.digits
_B64 = _ALNUM + "+/"


def _long_secret_file(rng: random.Random) -> str:
    """Long lines (longer than the repeated tail of a small overlap), short lines, password
    pairs, AWS keys and private keys whose header ends a long line and whose body is the next
    line (a finding that spans a window cut). Every key block is closed: the check that a
    value lies inside a key block looks 16 KiB back, further than these small overlaps."""

    def token(size: int, alphabet: str = _ALNUM) -> str:
        return "".join(rng.choices(alphabet, k=size))

    def long_line() -> str:
        words = [
            rng.choice(["password=" + token(14), token(30), "the value", "x" * 20])
            for _ in range(rng.randrange(20, 160))
        ]
        return " ".join(words)

    lines: list[str] = []
    for _ in range(rng.randrange(1, 14)):
        kind = rng.randrange(5)
        if kind == 0:
            lines.append(long_line())
        elif kind == 1:
            lines.extend(
                rng.choice(["short line", "", "password = 'Xy7kq9Lm2Pz'", TOKEN_LINE]) for _ in range(3)
            )
        elif kind == 2:  # a private key whose header ends a long line
            lines.append(long_line() + " -----BEGIN RSA PRIVATE KEY-----")
            lines.append(token(64, _B64))
            lines.append("-----END RSA PRIVATE KEY-----")
        elif kind == 3:
            lines.append("aws_secret_access_key = " + token(40, _B64))
        else:  # the header and the body on one long line, then a long line
            lines.append(long_line() + " -----BEGIN RSA PRIVATE KEY----- " + token(64, _B64))
            lines.append("-----END RSA PRIVATE KEY----- " + long_line())
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(60))
def test_windowed_findings_are_the_whole_text_findings(seed: int) -> None:
    """Scanned in small windows from its bytes (cuts after long lines and between two long lines,
    the repeated tail of a long line cut short), a file gives the findings of one scan of its
    whole text: the same lines and columns, each once, a private key spanning a cut included."""
    from toolkit.privacy.files import context_for, scan_loaded, scan_window_list

    rng = random.Random(seed)
    text = _long_secret_file(rng)
    data = text.encode()
    context = context_for("notes.txt")
    whole = sorted(
        (f.finding.line, f.finding.start, f.finding.end, f.finding.rule)
        for f in scan_loaded(text, "n", "notes.txt", context)
    )
    overlap = rng.choice([40, 100, 250])
    size = rng.choice([1, 200, 700, 3000])
    step = rng.choice([7, 64, 500, 4096])
    blocks = [data[i : i + step] for i in range(0, len(data), step)]
    parts = list(streams.utf8_windows(iter(blocks), "utf-8", size, overlap))
    cut_short = sum(1 for part in parts if part[3])
    got = sorted(
        (f.finding.line, f.finding.start, f.finding.end, f.finding.rule)
        for f in scan_window_list(iter(parts), "n", "notes.txt", context)
    )
    assert got == whole, (seed, overlap, size, step, cut_short)
