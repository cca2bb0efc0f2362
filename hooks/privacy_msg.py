"""pre-commit hook ``workgroup-privacy-commit-msg``: a commit message is committed and shared,
so it is scanned like a workflow artifact would be for what matters there: secrets and
credentials (source context) and provider session ids. Git's ``#`` comment lines (the template
and ``--verbose`` diff, which git strips) are not part of the message and are not scanned.

pre-commit passes the path of the message file (``.git/COMMIT_EDITMSG``); exit 1 with the
masked findings, 0 when clean; a message that cannot be read is not a pass (exit 3).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of the hook's cold start
    from toolkit.privacy.files import FileFinding

DESCRIPTION = "Privacy gate for the commit message: secrets and provider session ids."
PROG = "workgroup-privacy-commit-msg-hook"
# the whole message is read (never a prefix): past this a message is refused, not skipped
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
_SCISSORS = "# ------------------------ >8 ------------------------"


def message_text(raw: bytes) -> str:
    """The message as git will store it (``--cleanup=strip``): lines from the scissors line on
    and ``#`` comment lines blanked (kept as empty lines, so line numbers stay the file's)."""
    from toolkit.privacy.streams import sniff

    kind = sniff(raw)
    text = raw.decode(kind if kind not in ("binary", "gzip", "bzip2", "xz", "zip") else "utf-8", "replace")
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.rstrip("\r") == _SCISSORS:
            lines[index:] = [""] * (len(lines) - index)
            break
        if line.startswith("#"):
            lines[index] = ""
    return "\n".join(lines)


def scan_message(text: str, shown: str) -> list[FileFinding]:
    """Secrets (source context) and provider session ids of a commit message, in line order."""
    from toolkit.privacy.engine import scan_text_with_values
    from toolkit.privacy.files import FileFinding
    from toolkit.privacy.types import Category, Context

    found = [FileFinding(shown, f, v) for f, v in scan_text_with_values(text, Context.SOURCE)]
    taken = {(i.finding.line, i.finding.start) for i in found}
    for f, v in scan_text_with_values(text, Context.GENERIC):
        if f.category is Category.IDENTIFIER and (f.line, f.start) not in taken:
            found.append(FileFinding(shown, f, v))
    found.sort(key=lambda i: (i.finding.line, i.finding.start, i.finding.rule))
    return found


def run(argv: Sequence[str] | None) -> int:
    from .privacy import parse_filenames, report_findings

    names = parse_filenames(argv, PROG, DESCRIPTION)
    if isinstance(names, int):
        return names
    if not names:
        sys.stderr.write(f"usage: {PROG} COMMIT_MSG_FILE\n{PROG}: error: the message file is required\n")
        return 2
    from pathlib import Path

    from toolkit.infra.boundedio import FileRefused, read_regular
    from toolkit.privacy.files import ScanReport

    report = ScanReport()
    for name in names:
        try:
            raw = read_regular(Path(name), limit=MAX_MESSAGE_BYTES, what="the commit message") or b""
        except FileRefused as exc:
            from toolkit.core.display import shown

            sys.stderr.write(
                f"privacy: {shown(exc.message)}; the message was not scanned, so it is not passed\n"
            )
            return 3
        report.files_scanned += 1
        report.findings.extend(scan_message(message_text(raw), "commit message"))
    if not report.findings:
        return 0
    return report_findings(
        report,
        "Reword the message without the value (it is kept in history and shared);\n"
        "your text is kept in .git/COMMIT_EDITMSG. A false positive? Add `workgroup: allow <rule>` on that line.",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """The hook under the stdout guard: a stdout that refuses the findings is exit 3, no traceback."""
    from toolkit.infra.output import guarded

    return guarded(lambda: run(argv))


if __name__ == "__main__":
    raise SystemExit(main())
