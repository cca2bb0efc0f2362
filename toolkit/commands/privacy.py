"""`workgroup privacy scan|allow`: the privacy gate on files, and reviewed suppressions."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from toolkit.commands._common import say


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


class ContextChoice(StrEnum):
    auto = "auto"
    generic = "generic"
    capsule = "capsule"
    telemetry = "telemetry"
    event_log = "event_log"
    handoff = "handoff"


def _root() -> Path:
    """The repository work tree when inside one (symlinks may not leave it), else the cwd."""
    from toolkit.privacy.allowlist import git_common_dir

    cwd = Path.cwd().resolve()
    if git_common_dir(cwd) is None:
        return cwd
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return cwd


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="privacy",
        help="Privacy gate: secrets, provider ids, transcripts, home paths, emails.",
        no_args_is_help=True,
    )

    @group.command("scan")
    def scan(
        paths: Annotated[
            list[Path], typer.Argument(help="Files or directories (walked, symlinks not followed).")
        ],
        output: Annotated[OutputFormat, typer.Option("--format", help="text or json.")] = OutputFormat.text,
        as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
        context: Annotated[
            ContextChoice,
            typer.Option(
                "--context",
                help="Rules to apply; auto picks by path (capsules, handoffs, event logs, else generic).",
            ),
        ] = ContextChoice.auto,
    ) -> None:
        """Scan files; exit 1 when anything is found. Findings show masked values only."""
        from toolkit.core.errors import InvalidInput
        from toolkit.privacy.gate import SUPPRESS_HINT, render_json, render_text, run_gate
        from toolkit.privacy.types import Context

        missing = [p for p in paths if not p.exists() and not p.is_symlink()]
        if missing:
            raise InvalidInput("PATH_NOT_FOUND", f"{len(missing)} path(s) do not exist")
        root = _root()
        ctx = None if context is ContextChoice.auto else Context(context.value)
        report = run_gate(paths, root, ctx)
        for notice in report.notices:
            say(f"notice: {notice}")
        if as_json or output is OutputFormat.json:
            typer.echo(render_json(report))
        elif report.findings:
            typer.echo(render_text(report))
        say(f"{report.files_scanned} file(s) scanned, {len(report.findings)} finding(s)")
        if report.findings:
            if not (as_json or output is OutputFormat.json):
                say(SUPPRESS_HINT)
            raise typer.Exit(1)

    @group.command("allow")
    def allow(
        path: Annotated[Path, typer.Argument(help="The file holding the reviewed false positive.")],
        line: Annotated[int, typer.Option("--line", min=1, help="1-based line of the finding.")],
        rule: Annotated[str, typer.Option("--rule", help="Rule id of the finding.")],
        reason: Annotated[str, typer.Option("--reason", help="Why it is not private (for reviewers).")] = "",
    ) -> None:
        """Record a reviewed finding in .workgroup/privacy-allowlist.yml (salted fingerprint only)."""
        from toolkit.core.errors import EnvironmentFailure, InvalidInput
        from toolkit.infra.store import atomic_write
        from toolkit.privacy.allowlist import (
            ALLOWLIST_REL,
            AllowEntry,
            entry_text,
            fingerprint,
            load_allowlist,
            load_salt,
        )
        from toolkit.privacy.files import scan_file

        root = _root()
        if not path.is_file():
            raise InvalidInput("PATH_NOT_FOUND", "the file does not exist")
        found, notice = scan_file(path, root)
        if notice:
            raise InvalidInput("FILE_SKIPPED", "the file is binary, too large or unreadable")
        hits = [f for f in found if f.finding.line == line and f.finding.rule == rule]
        if not hits:
            raise InvalidInput("NO_SUCH_FINDING", "no finding of that rule on that line")
        salt = load_salt(root, create=True)
        if salt is None:
            raise EnvironmentFailure("NO_REPOSITORY", "the allowlist needs a git repository (for its salt)")
        existing = load_allowlist(root)
        known = {(e.rule, e.path, e.fingerprint) for e in existing}
        target = root / ALLOWLIST_REL
        text = (
            target.read_text(encoding="utf-8")
            if target.exists()
            else (
                "# Reviewed privacy findings (workgroup privacy allow). Fingerprint = salted SHA-256 of\n"
                "# (rule, path, value); the value itself is never stored here.\nallow:\n"
            )
        )
        if existing == [] and "allow:" not in text:
            text += "allow:\n"
        added = 0
        for hit in hits:
            entry = AllowEntry(
                rule, hit.path, fingerprint(salt, rule, hit.path, hit.fingerprint_value), reason
            )
            if (entry.rule, entry.path, entry.fingerprint) in known:
                continue
            text += entry_text(entry)
            known.add((entry.rule, entry.path, entry.fingerprint))
            added += 1
        if added:
            atomic_write(target, text)
        say(
            f"{added} entr{'y' if added == 1 else 'ies'} added to {ALLOWLIST_REL}"
            if added
            else "already allowed"
        )

    app.add_typer(group)
