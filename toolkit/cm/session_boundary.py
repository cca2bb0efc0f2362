"""The session-boundary step of ``workgroup boundary``: the verdict (``toolkit.cm.boundary``), and at
a single run's end the handoff file (``toolkit.cm.handoff``) in the specs dir or defect archive.
"""

from __future__ import annotations

from pathlib import Path

from toolkit.cm import handoff as ho
from toolkit.cm.boundary import Decision, Facts, Lang, decide, reason_text, render, verdict_texts
from toolkit.core.errors import InvalidInput
from toolkit.infra.git import project_root as git_project_root
from toolkit.infra.resources import template_text
from toolkit.privacy import Context, scan_text

TYPE_CHECKING = False  # type checkers read True
if TYPE_CHECKING:
    from toolkit.cm.shapes import BoundaryReport, HandoffWrite


def _leaks(text: str) -> bool:
    """True when the privacy engine finds anything a handoff must not carry."""
    return bool(scan_text(text, Context.HANDOFF))


def _check_options(specs_dir: Path | None, archive_dir: Path | None, done: list[str]) -> None:
    """Refuse both handoff folders at once, and a ``--done`` item that is not one short line."""
    if specs_dir is not None and archive_dir is not None:
        raise InvalidInput("CONFLICTING_OPTIONS", "give --specs-dir or --archive-dir, not both")
    for item in done:
        if not item.strip() or "\n" in item or "\r" in item or len(item) > ho.MAX_ITEM_CHARS:
            raise InvalidInput("INVALID_TEXT", "--done must be one non-empty line of at most 300 characters")


def _write_handoff(
    facts: Facts,
    decision: Decision,
    texts: dict[str, str],
    where: tuple[Path | None, Path | None, Path],
    done: list[str],
) -> tuple[str, HandoffWrite]:
    """Compose and write the handoff; (the line that says so, the report's ``handoff`` block).
    ``where`` is (the folder to write in, the tasks file or None, the project root). A handoff
    that cannot be written is reported with its reason, not raised."""
    directory, tasks, root = where
    try:
        parsed = ho.read_tasks(tasks, root) if tasks is not None else None
        text = ho.compose(
            template_text("handoff.md"),
            workflow=facts.workflow.value,
            event=facts.event.value,
            verdict=decision.verdict.value if decision.verdict else "none",
            done=done or [],
            tasks=parsed,
            command=decision.command,
            command_known=decision.command_known,
        )
        target = ho.write_handoff(directory, text, root=root, leaks=_leaks)
    except ho.HandoffError as exc:
        line = texts["handoff_failed"].format(reason=texts[exc.key])
        return line, {"written": False, "path": None, "reason": exc.key.removeprefix("fail_")}
    shown = ho.display_path(target, root)
    return texts["handoff_written"].format(path=shown), {"written": True, "path": shown, "reason": None}


def run_boundary(
    facts: Facts,
    *,
    lang: Lang,
    specs_dir: Path | None,
    archive_dir: Path | None,
    tasks: Path | None,
    done: list[str],
    project_root: Path | None,
) -> tuple[list[str], BoundaryReport]:
    """Decide, write the handoff when due; ``(verdict lines, the handoff's line last; the JSON report)``."""

    _check_options(specs_dir, archive_dir, done)
    decision = decide(facts)
    texts = verdict_texts(lang)
    lines = render(decision, facts, texts)
    handoff: HandoffWrite | None = None
    if decision.writes_handoff:
        root = project_root.resolve() if project_root is not None else git_project_root()
        # cm-ai writes under its specs dir, cm-fix under its defect archive; either option names it.
        directory = specs_dir if specs_dir is not None else archive_dir
        line, handoff = _write_handoff(facts, decision, texts, (directory, tasks, root), done)
        lines.append(line)
    report: BoundaryReport = {
        **decision.as_dict(),
        "reason": reason_text(decision, facts, texts),
        "lang": lang.value,
        "lines": lines,
        "handoff": handoff,
    }
    return lines, report
