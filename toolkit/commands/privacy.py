"""`workgroup privacy scan|allow|baseline`: the privacy gate on files, and reviewed suppressions."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from toolkit.cli import command_group
from toolkit.commands._common import say


class OutputFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"


class ContextChoice(StrEnum):
    auto = "auto"
    source = "source"
    generic = "generic"
    capsule = "capsule"
    telemetry = "telemetry"
    event_log = "event_log"
    handoff = "handoff"


def _root() -> Path:
    """The repository work tree when inside one (symlinks may not leave it), else the cwd."""
    from toolkit.commands._privacy_scan import repository_root

    return repository_root(Path.cwd().resolve())


def register(app: typer.Typer) -> None:
    group = command_group(
        name="privacy",
        help="Privacy gate: secrets, provider ids, transcripts, home paths, emails.",
        no_args_is_help=True,
    )

    @group.command("scan")
    def scan(
        paths: Annotated[
            list[str] | None,
            typer.Argument(
                help="TARGETS: files or directories (default: the current folder). In a git repository only what "
                "git would commit is read: tracked plus untracked files that are not ignored. With "
                "--history: git revision ranges (`git rev-list` syntax; default: HEAD's history).",
                metavar="TARGETS",
            ),
        ] = None,
        output: Annotated[
            OutputFormat,
            typer.Option("--format", help="text, json or sarif (SARIF 2.1.0, for code scanning)."),
        ] = OutputFormat.text,
        as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
        context: Annotated[
            ContextChoice,
            typer.Option(
                "--context",
                help="Rules to apply; auto picks by path: workflow artifacts (capsules, handoffs, event "
                "logs, .workgroup/, .reviews/, knowzcode/, logs) get every rule, source and docs only "
                "secrets and credentials.",
            ),
        ] = ContextChoice.auto,
        all_files: Annotated[
            bool, typer.Option("--all-files", help="Every file under PATH, ignored and untracked ones too.")
        ] = False,
        jobs: Annotated[int, typer.Option("--jobs", help="Processes for large scans (0: one per core).")] = 0,
        history: Annotated[
            bool,
            typer.Option(
                "--history",
                help="Scan the lines each commit of REVS added, every commit once (merges: only "
                "lines in no parent), as commit:path:line:col; the allowlist applies.",
            ),
        ] = False,
        every_ref: Annotated[
            bool, typer.Option("--all", help="With --history: the commits of every branch and tag.")
        ] = False,
        progress: Annotated[
            bool,
            typer.Option("--progress", help="With --history: commits done on stderr (always on a terminal)."),
        ] = False,
    ) -> int:
        """Scan files, or with --history the commits of a range; exit 1 when anything is found, 2 on
        bad input. Findings show masked values only; progress appears on stderr when a scan on a
        terminal runs over ~2 s. In a GitHub Actions job text output adds workflow annotations."""
        from toolkit.commands._privacy_scan import UsageError, history_command, scan_command

        fmt = "json" if as_json and output is OutputFormat.text else output.value  # --json, in either order
        if jobs < 0:
            raise UsageError("--jobs must be a whole number")
        if history:
            if all_files:
                raise UsageError("--all-files does not go with --history")
            return history_command(
                list(paths or []),
                fmt=fmt,
                context=context.value,
                every_ref=every_ref,
                progress=progress,
            )
        if every_ref:
            raise UsageError("--all goes with --history (every branch and tag)")
        return scan_command(
            list(paths or ["."]),
            as_json=fmt == "json",
            fmt=fmt,
            context=context.value,
            all_files=all_files,
            jobs=jobs,
        )

    @group.command("allow")
    def allow(
        path: Annotated[Path, typer.Argument(help="The file holding the reviewed false positive.")],
        line: Annotated[int, typer.Option("--line", min=1, help="1-based line of the finding.")],
        rule: Annotated[
            str,
            typer.Option("--rule", help="Rule id (stripe-secret-key) or category (secret) of the finding."),
        ],
        reason: Annotated[
            str, typer.Option("--reason", help="Why it is not private (required, for reviewers).")
        ],
    ) -> None:
        """Record a reviewed finding in .workgroup/privacy-allowlist.yml (a fingerprint, never the value).

        The entry works in every clone: its fingerprint depends only on the rule, the path and the
        value that the committed file already holds.
        """
        from toolkit.commands._privacy_scan import use_team_artifacts
        from toolkit.core.errors import InvalidInput
        from toolkit.privacy.allowlist import ALLOWLIST_REL, AllowEntry, append_entries, fingerprint
        from toolkit.privacy.files import relative_to_root, scan_file

        root = _root()
        if not reason.strip():
            raise InvalidInput("REASON_REQUIRED", "--reason must say why the finding is not private")
        if not path.is_file():
            raise InvalidInput("PATH_NOT_FOUND", f"no such file: {path}")
        use_team_artifacts(root)  # the rules the hooks apply to that path
        found, notice = scan_file(path, root)
        if notice:
            raise InvalidInput("FILE_SKIPPED", "the file is binary, too large or unreadable")
        hits = [
            f for f in found if f.finding.line == line and rule in (f.finding.rule, f.finding.category.value)
        ]
        if not hits:
            raise InvalidInput("NO_SUCH_FINDING", "no finding of that rule or category on that line")
        rel = relative_to_root(path, root)
        entries = [
            AllowEntry(
                h.finding.rule, rel, fingerprint(h.finding.rule, rel, h.fingerprint_value), reason.strip()
            )
            for h in hits
        ]
        added = append_entries(root, entries)
        say(
            f"{added} entr{'y' if added == 1 else 'ies'} added to {ALLOWLIST_REL}"
            if added
            else "already allowed"
        )
        _commit_line(root)

    @group.command("baseline")
    def baseline(
        paths: Annotated[
            list[Path] | None,
            typer.Argument(
                help="Files or folders to take in (default: the whole repository).", metavar="PATH"
            ),
        ] = None,
        reason: Annotated[
            str | None,
            typer.Option("--reason", help="Reason recorded on each entry [default: baseline YYYY-MM-DD]."),
        ] = None,
    ) -> None:
        """Record every current finding in .workgroup/privacy-allowlist.yml (fingerprints, never the
        values), so a repository with existing findings adopts the hooks in one step.

        What git would commit is scanned (tracked files and untracked ones not ignored), with the
        rules the hooks apply. Running it again adds nothing for findings already recorded. New
        findings after the baseline are still refused. Review the entries, then commit the file:
        the hooks and CI read the committed allowlist. Exit 0 recorded (or nothing to record),
        2 invalid input, 3 environment.
        """
        import time

        from toolkit.commands._privacy_scan import use_team_artifacts
        from toolkit.core.errors import InvalidInput
        from toolkit.privacy.allowlist import ALLOWLIST_REL, AllowEntry, append_entries, fingerprint
        from toolkit.privacy.selection import scan_targets, select

        root = _root()
        here = Path.cwd().resolve()
        why = (
            reason if reason is not None else f"baseline {time.strftime('%Y-%m-%d', time.gmtime())}"
        ).strip()
        if not why:
            raise InvalidInput("REASON_REQUIRED", "--reason must say why the findings are accepted")
        named = [str(p) for p in paths] if paths else [str(root)]
        missing = [p for p in named if not (here / p).exists()]
        if missing:
            raise InvalidInput("PATH_NOT_FOUND", "no such file or directory: " + ", ".join(missing[:5]))
        use_team_artifacts(root)
        notices: list[str] = []
        report = scan_targets(select(named, here, root, all_files=False, notices=notices), here)
        entries: list[AllowEntry] = []
        unread = 0
        for item in report.findings:
            if not item.fingerprint_value:
                unread += 1  # a file the gate could not read: nothing to fingerprint, it stays refused
                continue
            rel = item.repo_path
            entries.append(
                AllowEntry(
                    item.finding.rule, rel, fingerprint(item.finding.rule, rel, item.fingerprint_value), why
                )
            )
        added = append_entries(root, entries)
        distinct = len({(e.rule, e.path, e.fingerprint) for e in entries})
        say(
            f"{len(entries)} finding{'s' if len(entries) != 1 else ''} in {report.files_scanned} files: "
            f"{added} new entr{'y' if added == 1 else 'ies'} in {ALLOWLIST_REL}, "
            f"{distinct - added} already there (values never stored, only fingerprints)"
        )
        if unread:
            say(
                f"{unread} finding{'s' if unread != 1 else ''} on unreadable files not recorded: they stay refused"
            )
        _commit_line(root)

    def _commit_line(root: Path) -> None:
        from toolkit.privacy.allowlist import commit_hint

        hint = commit_hint(root)
        if hint:
            say(hint)

    app.add_typer(group)
