"""The suite's harness: a real throwaway git repository (``GitRepo``) and the CLI run in-process
(``cli``, the one way a test runs a console script in-process) or as a real process (``run_workgroup``,
``runtime_call``). Fixtures that hand these out live in tests/conftest.py."""

from __future__ import annotations

import functools
import importlib
import io
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import pygit2

ROOT = Path(__file__).resolve().parents[2]
AUTHOR = pygit2.Signature("Test Author", "author@example.invalid", 1_700_000_000, 0)


class GitRepo:
    """A real repository with a fixed author; ``commit`` makes real commits."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.raw = pygit2.init_repository(str(path), bare=False, initial_head="main")
        self._tick = 0

    def write(self, rel: str, text: str | bytes) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
        return target

    def commit(self, message: str = "change", files: dict[str, str] | None = None) -> str:
        for rel, text in (files or {}).items():
            self.write(rel, text)
        self.raw.index.add_all()
        self.raw.index.write()
        tree = self.raw.index.write_tree()
        self._tick += 1
        sig = pygit2.Signature(AUTHOR.name, AUTHOR.email, AUTHOR.time + self._tick, 0)
        parents = [] if self.raw.head_is_unborn else [self.raw.head.target]
        return str(self.raw.create_commit("HEAD", sig, sig, message, tree, parents))

    def link(self, rel: str, target: str | Path) -> Path:
        """A symlink at ``rel`` pointing at ``target`` (as written), committed: mode 120000 in the
        tree, as a clone checks it out (the confined-layer tests plant hostile layouts with it)."""
        path = self.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
        self.commit(f"link {rel}")
        entry = self.raw.revparse_single("HEAD").peel(pygit2.Tree)[rel]
        assert entry.filemode == pygit2.enums.FileMode.LINK  # really committed as a symlink
        return path


class CliResult(NamedTuple):
    """What one in-process ``workgroup`` run answered: unpacks as ``code, out, err``."""

    exit_code: int
    stdout: str
    stderr: str


@functools.cache
def console_script(name: str) -> Callable[[], int]:
    """The function a console script of ``[project.scripts]`` calls (``workgroup``: ``toolkit.entry:main``)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    module, _, attr = project["project"]["scripts"][name].partition(":")
    main: Callable[[], int] = getattr(importlib.import_module(module), attr)
    return main


def cli(
    *args: str,
    stdin: str | bytes = b"",
    cwd: Path | str | None = None,
    env: Mapping[str, str | None] | None = None,
    script: str = "workgroup",
) -> CliResult:
    """Run ``workgroup ARGS`` (or another console ``script``) in-process, the way the console script
    does: its ``main()`` with ``sys.argv`` set (so ``workgroup``'s early dispatch of runtime,
    agent-hook and statusline is taken), a ``SystemExit`` turned into its exit code, and stdin, stdout
    and stderr as byte-backed streams. ``env`` sets variables for the run (``None`` unsets one);
    the environment, the working directory and the streams are restored afterwards.

    The one in-process CLI helper of the suite; :func:`run_workgroup` runs a real process.
    """
    main = console_script(script)
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="", write_through=True)
    err = io.TextIOWrapper(
        io.BytesIO(), encoding="utf-8", errors="backslashreplace", newline="", write_through=True
    )
    saved = (sys.stdin, sys.stdout, sys.stderr, sys.argv)
    saved_env = dict(os.environ)  # a console script may change its environment (the adapter drops keys)
    previous = Path.cwd() if cwd is not None else None
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    sys.stdout, sys.stderr, sys.argv = out, err, [script, *args]
    for name, value in (env or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        if cwd is not None:
            os.chdir(cwd)
        try:
            code = main()
        except SystemExit as exc:  # argparse's own exit, as the interpreter would turn it into a status
            if isinstance(exc.code, str):
                err.write(exc.code + "\n")
            code = 1 if isinstance(exc.code, str) else int(exc.code or 0)
    finally:
        if previous is not None:
            os.chdir(previous)
        for name in set(os.environ) - set(saved_env):
            del os.environ[name]
        for name, value in saved_env.items():
            if os.environ.get(name) != value:
                os.environ[name] = value
        sys.stdin, sys.stdout, sys.stderr, sys.argv = saved
    return CliResult(code, _text(out), _text(err))


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer
    assert isinstance(raw, io.BytesIO)
    return raw.getvalue().decode("utf-8", errors="backslashreplace")


def run_workgroup(
    *args: str,
    stdin: str | bytes | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``workgroup ARGS`` as a subprocess, the way users and hooks call it."""
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    return subprocess.run(
        [sys.executable, "-m", "toolkit", *args],
        input=data,
        capture_output=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )


def runtime_call(op: str, request: Any, cwd: Path | None = None) -> tuple[int, dict[str, Any]]:
    proc = run_workgroup("runtime", op, stdin=json.dumps(request), cwd=cwd)
    lines = proc.stdout.decode("utf-8").splitlines()
    assert len(lines) == 1, proc.stdout
    return proc.returncode, json.loads(lines[0])


def declared_keys(shape: type) -> list[str]:
    """A TypedDict's keys in their declared order (what an answer built for it prints)."""
    return list(shape.__annotations__)


_LOADED_PROBE = (
    "import io, json, sys\n"
    "from toolkit.entry import main\n"
    "sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[2].encode()))\n"
    "main(['runtime', sys.argv[1]])\n"
    "sys.stderr.write(json.dumps([n for n in json.loads(sys.argv[3]) if n in sys.modules]))\n"
)


def runtime_loads(op: str, request: Any, names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` a child process has imported after answering ``workgroup runtime OP``
    (run it without coverage: coverage's own imports would count)."""
    proc = subprocess.run(
        [sys.executable, "-c", _LOADED_PROBE, op, json.dumps(request), json.dumps(names)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.stdout.startswith('{"ok":'), proc.stdout + proc.stderr
    loaded: list[str] = json.loads(proc.stderr)
    return loaded
