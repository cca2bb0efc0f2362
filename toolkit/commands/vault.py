"""`workgroup vault add|flush|list`: the local knowledge delta journal."""

from __future__ import annotations

from typing import Annotated

import typer

from toolkit.cli import command_group
from toolkit.commands._common import emit_json, moment_or_now, read_json_request, repository, say, write_out

NOW_OPT = typer.Option("--now", help="Decision time, strict RFC 3339 (default: the clock).")


def register(app: typer.Typer) -> None:
    group = command_group(
        name="vault", help="Local delta journal for knowledge (vault) captures.", no_args_is_help=True
    )

    @group.command("add")
    def add(
        source: Annotated[
            str,
            typer.Argument(
                help="JSON file ({delta, severity?, explicit_save?, "
                "interruption_sensitive?, previous_deltas?}) or - for stdin."
            ),
        ],
        now: Annotated[str | None, NOW_OPT] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print a JSON result object.")] = False,
    ) -> None:
        """Decide a delta against the journal; a kept delta is appended as pending, a skip appends nothing."""
        from toolkit.records.vault import add_delta

        request = read_json_request(source, what="vault delta file", stdin_what="the vault delta input")
        moment = moment_or_now(now)
        outcome = add_delta(repository().layout, request, now=moment)
        if as_json:
            emit_json(outcome)
        target = f" {outcome['KnowledgeId']}" if outcome.get("KnowledgeId") else ""
        if outcome["journaled"]:
            say(
                f"{outcome['action']}{target} ({outcome['reason']}): "
                f"journaled as pending entry {outcome['seq']}"
            )
        else:
            say(f"skip ({outcome['reason']}): nothing written")
        if outcome["flush_due"]:
            say("flush due now: run `workgroup vault flush` and send the batch")

    @group.command("flush")
    def flush_cmd(
        now: Annotated[str | None, NOW_OPT] = None,
        hold: Annotated[
            bool,
            typer.Option("--hold", help="Print the batch but count it delivered only after --ack BATCH_ID."),
        ] = False,
        ack: Annotated[
            str | None,
            typer.Option("--ack", metavar="BATCH_ID", help="Acknowledge a batch printed with --hold."),
        ] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="Accepted for symmetry: the batch is always JSON.")
        ] = False,
    ) -> None:
        """Print every undelivered entry as a JSON batch; entries count as delivered only once it was written.

        At least once: if the batch cannot be written out, nothing is marked and the next flush
        offers it again. With --hold the batch stays undelivered until `--ack BATCH_ID`.
        """
        from toolkit.core.errors import InvalidInput
        from toolkit.infra.store import safe_segment
        from toolkit.records.vault import ack as ack_batch
        from toolkit.records.vault import flush

        if ack is not None:
            if hold:
                raise InvalidInput("USAGE", "--ack and --hold cannot be combined")
            outcome = ack_batch(repository().layout, safe_segment(ack, "BATCH_ID"), now=moment_or_now(now))
            write_out(outcome)
            count = len(outcome["acknowledged"])
            say(
                f"acknowledged {count} entr{'y' if count == 1 else 'ies'}"
                + (" (already)" if outcome["already"] else "")
            )
            return
        batch = flush(repository().layout, now=moment_or_now(now), deliver=write_out, hold=hold)
        verb = "offered" if hold else "flushed"
        say(
            f"{verb} {len(batch['entries'])} entr{'y' if len(batch['entries']) == 1 else 'ies'}"
            + (f" as {batch['batch_id']}" if batch["batch_id"] else " (nothing pending)")
            + (
                f"; acknowledge with `workgroup vault flush --ack {batch['batch_id']}`"
                if hold and batch["batch_id"]
                else ""
            )
        )

    @group.command("list")
    def list_cmd(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
        """Show journaled entries with their state (pending or flushed in a batch)."""
        from toolkit.records.vault import list_entries

        listing = list_entries(repository().layout)
        if as_json:
            emit_json(listing)
            return
        from toolkit.core.display import shown

        for row in listing["entries"]:
            # a row written by hand or another version is shown as written: a delta that is not an
            # object has no title, a missing action or reason is blank
            delta = row.get("delta")
            title = shown(str((delta.get("title") if isinstance(delta, dict) else None) or "")[:60])
            where = shown(row["batch_id"] or "pending")
            action, reason = shown(row.get("action", "")), shown(row.get("reason", ""))
            typer.echo(f"{row['seq']:>4}  {action:<6} {reason:<26} {where:<22} {title}")
        say(
            f"{len(listing['entries'])} entries, {listing['pending']} pending"
            + (
                f", {listing['unreadable_lines']} unreadable line(s) skipped"
                if listing["unreadable_lines"]
                else ""
            )
        )

    app.add_typer(group)
