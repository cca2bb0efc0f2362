"""pre-commit hook ``workgroup-privacy``: blocks secrets, provider session ids, raw transcripts,
home paths and emails in workflow artifacts (the manifest's ``files`` selects them)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of the hook's cold start
    from toolkit.privacy.files import ScanReport

USAGE = "[--artifact-path GLOB ...] [FILENAME ...]"
ARTIFACT_HELP = (
    "--artifact-path GLOB  also treat files matching GLOB (repository-relative: notes/**, "
    "*.session.md) as workflow artifacts: every privacy rule applies; repeatable; adds to "
    "privacy.artifact_paths of .workgroup/config.yml"
)


def parse_filenames(
    argv: Sequence[str] | None, prog: str, description: str, globs: list[str] | None = None
) -> list[str] | int:
    """The file names pre-commit passes (after an optional ``--``), or an exit code for
    ``--help`` (0) and unknown options (2). ``--artifact-path GLOB`` (or ``=GLOB``) go into
    ``globs`` when given (the privacy hooks' ``args:``). Plain parsing instead of argparse:
    argparse pulls in shutil, bz2 and lzma, a noticeable share of the hook's cold start."""
    from toolkit.core.display import option_name, shown

    args = list(sys.argv[1:] if argv is None else argv)
    names: list[str] = []
    usage = USAGE if globs is not None else "[FILENAME ...]"
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            return names + args[index:]
        if arg in ("-h", "--help"):
            return _write_help(f"usage: {prog} {usage}\n\n{description}", globs is not None)
        if globs is not None and _is_artifact_option(arg):
            index = _take_glob(arg, args, index, globs)
            if index < 0:
                sys.stderr.write(f"usage: {prog} {usage}\n{prog}: error: --artifact-path needs a GLOB\n")
                return 2
            continue
        if _is_option(arg):
            sys.stderr.write(
                f"usage: {prog} {usage}\n{prog}: error: unrecognized argument {shown(option_name(arg))}\n"
            )
            return 2
        names.append(arg)
    return names


def _write_help(text: str, artifact_paths: bool) -> int:
    """Print the help (with the ``--artifact-path`` paragraph for the privacy hooks); exit code 0."""
    more = f"\n\n{ARTIFACT_HELP}" if artifact_paths else ""
    sys.stdout.write(f"{text}{more}\n")
    return 0


def _is_option(arg: str) -> bool:
    """True for an argument that looks like an option (``-`` alone is a file name)."""
    return arg.startswith("-") and arg != "-"


def _is_artifact_option(arg: str) -> bool:
    """True for ``--artifact-path`` and ``--artifact-path=GLOB``."""
    return arg == "--artifact-path" or arg.startswith("--artifact-path=")


def _take_glob(arg: str, args: list[str], index: int, globs: list[str]) -> int:
    """Append the GLOB of an ``--artifact-path`` option (its ``=GLOB``, else the next argument, at
    ``index``) to ``globs``; the index of the argument after it, or -1 when no GLOB follows."""
    if "=" in arg:
        globs.append(arg.partition("=")[2])
        return index
    if index < len(args):
        globs.append(args[index])
        return index + 1
    return -1


def run(argv: Sequence[str] | None, description: str, prog: str = "workgroup-privacy-hook") -> int:
    """Shared body of the privacy hooks: scan the named files, print findings, exit 1 on any.
    ``prog`` is the hook's own console script, the name its usage and errors print."""
    globs: list[str] = []
    names = parse_filenames(argv, prog, description, globs)
    if isinstance(names, int):
        return names
    from pathlib import Path

    from toolkit.core.errors import ToolkitError
    from toolkit.privacy.gate import SUPPRESS_HINT, run_gate

    root = Path.cwd()
    try:
        from toolkit.privacy.artifacts import configured_globs, validate_globs
        from toolkit.privacy.files import set_artifact_paths

        team = validate_globs(globs, "--artifact-path") + configured_globs(root)
        if team:
            set_artifact_paths(team)
        report = run_gate([Path(name) for name in names], root)
    except ToolkitError as exc:
        sys.stderr.write(exc.diagnostics() + "\n")
        return int(exc.exit_code)
    if not report.findings:
        from toolkit.core.display import shown

        for notice in report.notices:
            sys.stderr.write(f"privacy: {shown(notice)}\n")
        return 0
    return report_findings(report, SUPPRESS_HINT)


def report_findings(report: ScanReport, hint: str) -> int:
    """The privacy hooks' refusal: the findings (masked) on stdout, the summary and ``hint`` on
    stderr, workflow annotations in a GitHub Actions job; exit 1."""
    from toolkit.core.findings import emit
    from toolkit.infra.ci import github_actions
    from toolkit.privacy.gate import shared_findings

    emit(
        "privacy",
        shared_findings(report),
        as_json=False,
        stdout=sys.stdout,
        stderr=sys.stderr,
        checked=report.files_scanned,
        notices=report.notices,
        annotate=github_actions(),
    )
    sys.stderr.write(f"values are masked. {hint}\n")
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """The hook under the stdout guard: a stdout that refuses the findings is exit 3, no traceback."""
    from toolkit.infra.output import guarded

    return guarded(lambda: _main(argv))


def _main(argv: Sequence[str] | None = None) -> int:
    return run(argv, "Privacy gate for workflow artifacts.")


if __name__ == "__main__":
    raise SystemExit(main())
