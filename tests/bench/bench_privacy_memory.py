"""Peak memory of ``workgroup privacy scan`` against input size and line length (run on purpose).

    .venv/bin/python tests/bench/bench_privacy_memory.py [--detect-secrets PATH] [--sizes 1,4,16]

Generated files, each scanned by one command in its own process: ``workgroup privacy scan FILE``
and, when given (``--detect-secrets``, or ``detect-secrets`` on ``PATH``), ``detect-secrets scan
FILE`` on the same file. Each command is started by a fresh runner process that reports
``RUSAGE_CHILDREN``: the peak RSS and the CPU seconds of that one command. The first row is a
tiny file (each tool's fixed cost); ``over base`` is a peak less that row's, and ``x line`` is
that excess divided by the longest line (lines of 64 KB and more), ``x file`` by the file's
size. Shapes:

* ``pw-line``: one line of ``password=<14 random characters>`` pairs (every pair a candidate);
* ``run-line``: one line of random 30-character tokens (every token a high-entropy candidate);
* ``pw-lines``: lines of 100 characters of the same pairs (short lines, many of them);
* ``pw-2lines``: two lines of the same pairs, half the size each (two long lines in a row);
* ``pw-s2lines``: 3 MB of those short lines, then two long lines of the pairs, ``size`` between them;
* ``prose``: lines of ordinary words with a password pair every 50 lines.

A file up to 4 MiB is read and scanned whole; a larger one in windows of whole lines (about
1 MB each, a longer line whole), so with short lines the peak stops growing with the file
(measured at c5f2a4b: the same ~9 MB over base at 8 MB and at 16 MB).

What a scan holds (``toolkit/privacy/scantext.py``): the text and its lower-cased byte view,
plus a constant; reading gathers a long line's raw bytes in one buffer and decodes it once,
releasing each block before the window it completed is scanned. So ``x line`` is about 2 plus a
constant over the line: measured at c5f2a4b 2.3-2.4 at 4 MB, 2.2 at 8 MB and 2.1 at 16 MB (2x + 0.2
to 1.5 MB). Two long lines in a row (``pw-2lines``) were one window (the overlap repeated the
previous window's last line whole): 5.4-5.5x one line; since only a tail of a long line is
repeated, 2.4x at 16 MB (18.5 MB over base for two 7.8 MB lines) and 3.1x at 8 MB (11.9 MB for
two 3.9 MB lines: the 4 MiB first read is still held while the first line's window is made).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import string
import subprocess
import sys
import tempfile
from pathlib import Path

_RUNNER = (
    "import resource, subprocess, sys\n"
    "try:\n"
    "    done = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,"
    " timeout=float(sys.argv[1]))\n"
    "    code = done.returncode\n"
    "except subprocess.TimeoutExpired:\n"
    "    code = 'timeout'\n"
    "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(code, use.ru_maxrss, use.ru_utime + use.ru_stime)\n"
)
_ALPHABET = string.ascii_letters + string.digits
_WORDS = "the of and to in is for on with as by that this from at are be or an it was file line value".split()


def _measure(command: list[str], timeout: float, cwd: str) -> tuple[str, int, float]:
    """(exit code or 'timeout', peak RSS KB, CPU seconds) of ``command`` in its own process, run
    in ``cwd`` (the files are named relative to it: detect-secrets skips a path outside it)."""
    out = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(timeout), *command],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
    ).stdout.split()
    return out[0], int(out[1]), float(out[2])


def _token(rng: random.Random, size: int) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(size))


def _write(path: Path, shape: str, size: int) -> int:
    """Write about ``size`` bytes of ``shape`` to ``path``; the longest line's length."""
    rng = random.Random(1)
    lines: list[str] = []
    total = 0
    if shape == "pw-s2lines":  # 3 MB of short lines, then two long lines (half the rest each)
        while total < 3_000_000:
            line = " ".join("password=" + _token(rng, 14) for _ in range(4))
            lines.append(line)
            total += len(line) + 1
        size += total
    if shape in ("pw-line", "run-line", "pw-2lines", "pw-s2lines"):
        parts: list[str] = []
        first, first_total = len(lines), total
        while total < size:
            part = "password=" + _token(rng, 14) if shape != "run-line" else _token(rng, 30)
            parts.append(part)
            total += len(part) + 1
            if (
                shape in ("pw-2lines", "pw-s2lines")
                and len(lines) == first
                and total >= (size + first_total) // 2
            ):
                lines.append(" ".join(parts))
                parts = []
        lines.append(" ".join(parts))
    elif shape == "pw-lines":
        while total < size:
            line = " ".join("password=" + _token(rng, 14) for _ in range(4))
            lines.append(line)
            total += len(line) + 1
    else:  # prose
        count = 0
        while total < size:
            count += 1
            words = [rng.choice(_WORDS) for _ in range(14)]
            if count % 50 == 0:
                words.append("password=" + _token(rng, 14))
            line = " ".join(words)
            lines.append(line)
            total += len(line) + 1
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return max(len(line) for line in lines) + 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workgroup", default=str(Path(sys.executable).parent / "workgroup"))
    parser.add_argument("--detect-secrets", default=shutil.which("detect-secrets") or "")
    parser.add_argument("--sizes", default="1,4,16", help="MB, comma-separated")
    parser.add_argument("--shapes", default="pw-line,run-line,pw-lines,prose")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    sizes = [int(float(s) * 1_000_000) for s in args.sizes.split(",")]
    tools = [("workgroup", [args.workgroup, "privacy", "scan"])]
    if args.detect_secrets:
        tools.append(("detect-secrets", [args.detect_secrets, "scan"]))
    print(
        f"python {sys.version.split()[0]} | cores: {os.cpu_count()} | load average: {os.getloadavg()[0]:.2f}"
    )
    header = f"{'shape':9} {'MB':>6} {'line KB':>8}"
    for name, _ in tools:
        header += f" | {name + ' peak MB':>22} {'over base':>9} {'-2x line':>8} {'x line':>6} {'x file':>6} {'cpu s':>6}"
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        tiny = Path(tmp) / "tiny.txt"
        tiny.write_text("nothing to see here\n", encoding="ascii")
        base: dict[str, int] = {}
        row = f"{'tiny':9} {0:6.2f} {0:8.1f}"
        for name, command in tools:
            code, peak, cpu = _measure([*command, tiny.name], args.timeout, tmp)
            base[name] = peak
            row += f" | {peak / 1024:22.1f} {0:9.1f} {'':>8} {'':>6} {'':>6} {cpu:6.2f}"
        print(row, flush=True)
        for shape in args.shapes.split(","):
            for size in sizes:
                path = Path(tmp) / f"{shape}-{size}.txt"
                longest = _write(path, shape, size)
                row = f"{shape:9} {path.stat().st_size / 1e6:6.2f} {longest / 1024:8.1f}"
                for name, command in tools:
                    code, peak, cpu = _measure([*command, path.name], args.timeout, tmp)
                    over = (peak - base[name]) / 1024
                    per_line = f"{over * 1024 * 1024 / longest:6.1f}" if longest >= 64 * 1024 else f"{'-':>6}"
                    per_file = over * 1024 * 1024 / path.stat().st_size
                    shown = f"{peak / 1024:.1f}" + (" (timeout)" if code == "timeout" else "")
                    less_two = over - 2 * longest / (1024 * 1024)
                    row += f" | {shown:>22} {over:9.1f} {less_two:8.1f} {per_line} {per_file:6.1f} {cpu:6.2f}"
                print(row, flush=True)
                path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
