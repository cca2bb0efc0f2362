"""Hostile inputs for the hostile-input suite (tests/project/testsupport/hostile.py) and a per-entry-point tally.

Generators, not fixtures: each returns bytes, or plants a file of some kind at a path.

* ``CONTENTS``: hostile file contents by name (deep nesting, bad encodings, huge numbers ...);
  ``huge(cap)`` makes a file one byte over a cap (the suite lowers the cap through
  ``WORKGROUP_MAX_READ_BYTES`` instead of writing megabytes).
* ``KINDS``: things that are not a regular file, planted at a path: FIFO, socket, directory,
  dangling symlink, symlink to a FIFO, symlink to ``/dev/zero`` (an endless device).
* ``REQUEST_FRAGMENTS``: raw JSON text spliced into a valid runtime request in place of one value
  (what ``json.dumps`` could never produce: 100,000-deep arrays, lone surrogates, ``NaN``,
  5,000-digit integers ...).
* ``PATH_TRICKS``: owned paths that try to escape the root or hide what they are.

``tried(entry)`` counts one hostile input against an entry point; ``pytest_terminal_summary``
(imported into conftest.py) prints the tally at the end of the run.
"""

from __future__ import annotations

import os
import signal
import socket
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DEEP = 100_000

HOSTILE_COUNTS: Counter[str] = Counter()


def tried(entry: str, count: int = 1) -> None:
    """Record ``count`` hostile inputs tried against ``entry`` (a command or runtime op)."""
    HOSTILE_COUNTS[entry] += count


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The tally: how many hostile inputs each entry point was given in this run."""
    if not HOSTILE_COUNTS:
        return
    terminalreporter.section("hostile inputs per entry point")
    width = max(len(name) for name in HOSTILE_COUNTS)
    for name, count in sorted(HOSTILE_COUNTS.items()):
        terminalreporter.write_line(f"{name:<{width}}  {count:>6}")
    terminalreporter.write_line(
        f"{'total':<{width}}  {sum(HOSTILE_COUNTS.values()):>6} over {len(HOSTILE_COUNTS)} entry points"
    )


def deep_array(depth: int = DEEP) -> bytes:
    return b"[" * depth + b"]" * depth


def deep_object(depth: int = DEEP) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


def deep_unclosed(depth: int = DEEP) -> bytes:
    return b"[" * depth


def deep_in_string(depth: int = DEEP) -> bytes:
    # brackets inside a string are not nesting: valid, shallow JSON that a naive count refuses
    return b'{"text": "' + b"[" * depth + b'"}'


CONTENTS: dict[str, bytes] = {
    "deep-array": deep_array(),
    "deep-object": deep_object(),
    "deep-unclosed": deep_unclosed(),
    "deep-mixed": b'{"a":[' * (DEEP // 2) + b"0" + b"]}" * (DEEP // 2),
    "latin-1": '{"name": "caf\u00e9"}'.encode("latin-1"),
    "utf-16-bom": '{"name": "x"}'.encode("utf-16"),
    "invalid-utf8": b'{"name": "\xff\xfe\xc3\x28"}',
    "overlong-utf8": b'{"name": "\xc0\xaf"}',
    "utf8-bom": b'\xef\xbb\xbf{"name": "x"}',
    "nul-bytes": b'{"name": "a\x00b"}\x00',
    "lone-surrogate": b'{"name": "\\ud800"}',
    "nan": b'{"value": NaN, "other": Infinity}',
    "huge-int": b'{"value": ' + b"9" * 5000 + b"}",
    "huge-exponent": b'{"value": 1e999999}',
    "duplicate-keys": b'{"schema": "a", "schema": "b"}',
    "not-json": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "empty": b"",
    "whitespace": b"   \n\t ",
    "top-level-array": b"[1, 2, 3]",
    "truncated": b'{"schema": "workgroup.',
    "yaml-bomb": b'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n'
    b"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n",
}


def huge(cap: int, fill: bytes = b" ") -> bytes:
    """Valid-looking JSON one byte over ``cap``: only the size rule can refuse it."""
    body = b'{"pad": "' + fill * cap + b'"}'
    return body


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    # bound by its name from inside its directory: AF_UNIX paths are limited to ~108 bytes
    sock = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    try:
        os.chdir(path.parent)
        sock.bind(path.name)
    finally:
        os.chdir(here)
        sock.close()


def _directory(path: Path) -> None:
    path.mkdir()


def _dangling(path: Path) -> None:
    path.symlink_to(path.parent / f".{path.name}.nowhere")


def _link_to_fifo(path: Path) -> None:
    target = path.parent / f".{path.name}.fifo"
    os.mkfifo(target)
    path.symlink_to(target)


def _link_to_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


KINDS: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo,
    "socket": _socket,
    "directory": _directory,
    "dangling-symlink": _dangling,
    "symlink-to-fifo": _link_to_fifo,
    "symlink-to-dev-zero": _link_to_zero,
}


def plant(path: Path, hostile: str, cap: int = 4096) -> None:
    """Put the hostile thing named ``hostile`` (a KINDS or CONTENTS name, or "huge") at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove(path)
    if hostile in KINDS:
        KINDS[hostile](path)
    elif hostile == "huge":
        path.write_bytes(huge(cap))
    else:
        path.write_bytes(CONTENTS[hostile])


def remove(path: Path) -> None:
    """Remove whatever is at ``path`` (file, FIFO, socket, symlink or directory tree)."""
    import shutil

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    for extra in path.parent.glob(f".{path.name}.*"):
        extra.unlink()


HOSTILE_NAMES: tuple[str, ...] = (*KINDS, *CONTENTS, "huge")

# Raw JSON text put in place of one value of a valid request.
REQUEST_FRAGMENTS: dict[str, bytes] = {
    "deep-array": deep_array(),
    "deep-object": deep_object(),
    "deep-string-brackets": b'"' + b"[" * 1000 + b'"',
    "lone-surrogate": b'"\\udc80"',
    "surrogate-pair-split": b'"\\ud83d x"',
    "bidi-override": b'"src/a\\u202etxt.py"',
    "nel": b'"t\\u0085x"',
    "nan": b"NaN",
    "infinity": b"-Infinity",
    "huge-int": b"9" * 5000,
    "huge-exponent": b"1e999999",
    "negative-zero": b"-0.0",
    "null": b"null",
    "long-string": b'"' + b"x" * 200_000 + b'"',
    "many-keys": b"{" + b",".join(b'"k%d":0' % i for i in range(5000)) + b"}",
    "wide-array": b"[" + b",".join([b"0"] * 50_000) + b"]",
    "fullwidth-dots": '"\uff0e\uff0e/x"'.encode(),
    "git-dir": b'".git/config"',
}

PATH_TRICKS: tuple[str, ...] = (
    "\uff0e\uff0e/x",
    "\u2025/x",
    "a\uff0fb",
    "src/evil\u202etxt.py",
    "src/a\u200bb.py",
    "src/a\u0085b.py",
    ".git/config",
    "sub/.git/HEAD",
    ".GIT/hooks/pre-commit",
    "../outside",
    "/etc/passwd",
    "C:/x",
    "https://x/y",
    "a\x00b",
    " padded",
)


class Hung(BaseException):
    """Raised by the watchdog: an entry point blocked (never caught by ``except Exception``)."""


@contextmanager
def watchdog(seconds: float = 10.0) -> Iterator[None]:
    """Fail instead of hanging: a blocked ``open`` of a FIFO is interrupted by SIGALRM."""

    def _alarm(signum: int, frame: object) -> None:
        raise Hung(f"blocked for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def snapshot(*roots: Path, skip: tuple[str, ...] = ("locks",)) -> dict[str, tuple[str, bytes | int]]:
    """What is on disk under ``roots``: kind and content of every entry (lock files excluded)."""
    seen: dict[str, tuple[str, bytes | int]] = {}
    for root in roots:
        if not root.exists():
            continue
        for base, dirs, files in os.walk(root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d not in skip and d != "objects")
            for name in (*dirs, *files):
                path = Path(base, name)
                if os.path.islink(path):
                    seen[str(path)] = ("link", os.readlink(path).encode())
                elif path.is_dir():
                    continue  # an empty directory made on the way (a lock's) changes nothing
                elif path.is_file():
                    seen[str(path)] = ("file", path.read_bytes())
                else:
                    seen[str(path)] = ("special", os.lstat(path).st_mode)
    return seen
