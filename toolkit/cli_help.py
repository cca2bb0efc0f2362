"""``workgroup ... --help`` without loading typer: the help texts, rendered once by typer itself.

Loading typer costs more than half of a ``--help`` (its vendored click, inspect, shellingham, ...).
The texts cannot change between two releases unless a command's source changes, so they are
rendered ahead of time by the real typer app (``python -m toolkit.cli_help --write``) into
``toolkit/_help_texts.py``, and ``workgroup X --help`` prints the stored text when all three hold:

- the request is exactly ``[COMMAND [SUBCOMMAND]] --help`` for a command in the table;
- the terminal is at least as wide as the one the texts were rendered for (click wraps help at
  ``min(columns, 80) - 2``, so any terminal of 80 columns or more gets the same text);
- the checksum of the sources the texts came from (``toolkit/cli.py``, every
  ``toolkit/commands/*.py``, typer's ``__init__.py`` which carries its version, and the toolkit
  version) still matches, so an edited command in a development checkout is rendered by typer
  until the table is regenerated.

Anything else goes to the typer app as before. tests/cli/test_cli_help.py fails when the stored
texts differ from what typer renders now (a help text that depends on a constant outside the
checksummed files is caught there), and checks that the fast path prints the same bytes.
"""

from __future__ import annotations

import os
import sys
import zlib

TYPE_CHECKING = False  # the fast path imports nothing it does not need
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

RENDER_COLUMNS = 80
# dispatched by toolkit.entry before the help table is consulted: its --help is never served here
_ROUTED_EARLIER = frozenset({"runtime", "agent-hook"})
_MODULE_FILE = "_help_texts.py"
# `workgroup cm SCRIPT ...` hands its arguments to the drop-in script (toolkit/commands/cm.py); its
# --help is argparse's, printed by the script itself without the typer app
CM_SCRIPTS = {
    "call": "toolkit.cm.adapter",
    "log-event": "toolkit.cm.events",
    "usage-report": "toolkit.cm.report",
}


def sources_checksum(version: str, package_dir: str | None = None, search_path: Sequence[str] = ()) -> int:
    """CRC-32 over what the help texts are rendered from (a change detector, not a security check)."""
    package_dir = package_dir or os.path.dirname(os.path.abspath(__file__))
    commands = os.path.join(package_dir, "commands")
    files = [os.path.join(package_dir, "cli.py")]
    files += [os.path.join(commands, n) for n in sorted(os.listdir(commands)) if n.endswith(".py")]
    typer_init = _find_typer(search_path or sys.path)
    files += [typer_init] if typer_init else []
    crc = zlib.crc32(version.encode())
    for path in files:
        crc = zlib.crc32(os.path.basename(path).encode(), crc)
        with open(path, "rb") as fh:
            crc = zlib.crc32(fh.read(), crc)
    return crc


def _find_typer(search_path: Sequence[str]) -> str | None:
    """typer's ``__init__.py`` where the import system would find it, without importing typer."""
    for entry in search_path:
        candidate = os.path.join(entry or ".", "typer", "__init__.py")
        if os.path.isfile(candidate):
            return candidate
    return None


def stored_help(
    path: Sequence[str],
    texts: Mapping[str, str],
    stored_checksum: int,
    columns: int,
    checksum: int,
) -> str | None:
    """The stored help of command ``path`` if it is valid for this terminal and these sources."""
    if any(not name or not name.isprintable() or " " in name for name in path):
        return None  # `workgroup "capsule seal" --help` is no command, whatever its joined name
    text = texts.get(" ".join(path))
    if text is None or columns < RENDER_COLUMNS or checksum != stored_checksum:
        return None
    return text


def fast_help(args: Sequence[str]) -> str | None:
    """The help text ``workgroup ARGS`` would print, or None when typer has to render it."""
    if not args or args[-1] != "--help" or (args[:1] and args[0] in _ROUTED_EARLIER):
        return None
    try:
        from toolkit import _help_texts
    except ImportError:  # not generated (a partial checkout): typer renders the help
        return None
    if " ".join(args[:-1]) not in _help_texts.TEXTS:  # the cheap test first; stored_help decides
        return None
    import shutil

    from toolkit import __version__

    try:
        checksum = sources_checksum(__version__)
    except OSError:  # sources not readable (a zipped install): typer renders the help
        return None
    return stored_help(
        args[:-1],
        _help_texts.TEXTS,
        _help_texts.SOURCES_CHECKSUM,
        shutil.get_terminal_size().columns,
        checksum,
    )


def write_help(text: str) -> int:
    """Print ``text`` on stdout; a stdout that refuses it is exit 3 (``OUTPUT_UNWRITABLE``)."""
    from toolkit.infra.output import write_stdout

    write_stdout(text)  # entry.main's guard turns a failure into the coded line and exit 3
    return 0


# --- rendering (typer) ----------------------------------------------------------------------


def help_paths() -> Iterator[tuple[str, ...]]:
    """Every command path whose ``--help`` the typer app renders itself, top level first."""
    from toolkit.cli import COMMAND_MODULES, load_command

    yield ()
    for module in COMMAND_MODULES:
        name, command = load_command(module)
        if name not in _ROUTED_EARLIER:
            yield from _walk((name,), command)


def _walk(path: tuple[str, ...], command: object) -> Iterator[tuple[str, ...]]:
    if not getattr(command, "add_help_option", True):  # passes --help on (the CM scripts' argparse)
        return
    yield path
    for sub_name, sub in getattr(command, "commands", {}).items():
        yield from _walk((*path, sub_name), sub)


def render(path: Sequence[str], columns: int = RENDER_COLUMNS) -> str:
    """What the typer app prints for ``workgroup PATH --help`` on a terminal ``columns`` wide."""
    import contextlib
    import io

    from toolkit.cli import run

    out = io.StringIO()
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)  # what shutil.get_terminal_size (and so click) reads first
    try:
        with contextlib.redirect_stdout(out):
            code = run([*path, "--help"])
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    if code != 0:
        raise RuntimeError(f"workgroup {' '.join(path)} --help exited {code}")
    return out.getvalue()


def module_text() -> str:
    """The source of ``toolkit/_help_texts.py`` for the current commands."""
    from toolkit import __version__

    lines = [
        '"""Every ``workgroup ... --help`` text as the typer app prints it on an 80-column terminal.',
        "",
        "Generated by ``python -m toolkit.cli_help --write`` (see toolkit/cli_help.py); do not edit.",
        '"""',
        "",
        f"SOURCES_CHECKSUM = {sources_checksum(__version__)}",
        "TEXTS: dict[str, str] = {",
    ]
    for path in help_paths():
        lines.append(f"    {_literal(' '.join(path))}: {_literal(render(path))},")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _literal(text: str) -> str:
    """``text`` as a Python string literal the way ruff format writes it (fewest escaped quotes)."""
    quote = "'" if text.count('"') > text.count("'") else '"'
    escapes = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", quote: "\\" + quote}
    body = "".join(
        escapes.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x20 or ch == "\x7f" else ch) for ch in text
    )
    return quote + body + quote


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m toolkit.cli_help --write|--check``: regenerate or check the stored help texts."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args not in (["--write"], ["--check"]):
        sys.stderr.write("usage: python -m toolkit.cli_help --write|--check\n")
        return 2
    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), _MODULE_FILE)
    text = module_text()
    try:
        with open(target, encoding="utf-8") as fh:
            current = fh.read()
    except FileNotFoundError:
        current = ""
    if current == text:
        return 0
    if args == ["--check"]:
        sys.stderr.write(f"{_MODULE_FILE} is stale: run `python -m toolkit.cli_help --write`\n")
        return 1
    with open(target, "w", encoding="utf-8") as fh:
        fh.write(text)
    sys.stderr.write(f"wrote toolkit/{_MODULE_FILE}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
