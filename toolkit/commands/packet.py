"""`workgroup packet build|check|check-output|prefix`: minimal role packets and compact answers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from toolkit.cli import command_group


def _dump(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def register(app: typer.Typer) -> None:
    group = command_group(
        help="Minimal role packets, the stable prefix and compact answers.", no_args_is_help=True
    )
    app.add_typer(group, name="packet")

    @group.command("build")
    def build(
        role: Annotated[str, typer.Argument(help="analyst, planner, coder, tester, reviewer or browser_qa.")],
        workflow: Annotated[str, typer.Option("--workflow", help="cm-ai, cm-prd or cm-fix.")],
        stage: Annotated[str, typer.Option("--stage", help="The workflow stage of this call.")],
        objective: Annotated[str, typer.Option("--objective", help="The current objective.")] = "",
        expected_output: Annotated[
            str | None, typer.Option("--expected-output", help="Default: the role's compact schema keys.")
        ] = None,
        ids: Annotated[list[str] | None, typer.Option("--id", help="key=value current identifier.")] = None,
        constraints: Annotated[list[str] | None, typer.Option("--constraint", help="A constraint.")] = None,
        refs: Annotated[list[str] | None, typer.Option("--ref", help="A stable artifact reference.")] = None,
        item: Annotated[list[str] | None, typer.Option("--item", help="key=text role item.")] = None,
        item_json: Annotated[
            list[str] | None, typer.Option("--item-json", help="key=JSON role item.")
        ] = None,
        item_file: Annotated[
            list[str] | None, typer.Option("--item-file", help="key=PATH role item.")
        ] = None,
        escalate: Annotated[
            str | None,
            typer.Option("--escalate", help="dependency|ambiguity|shared_contract_change|review_finding"),
        ] = None,
        escalation_reason: Annotated[str | None, typer.Option("--escalation-reason", help="Why.")] = None,
        added_scope: Annotated[
            list[str] | None, typer.Option("--added-scope", help="Newly added scope (repeatable).")
        ] = None,
        rules: Annotated[
            Path | None, typer.Option("--rules", help="Project rules file (prefix section 3).")
        ] = None,
        prefix_file: Annotated[
            list[str] | None, typer.Option("--prefix-file", help="section=PATH overriding a prefix section.")
        ] = None,
        out: Annotated[
            Path | None, typer.Option("--out", help="Write the packet here instead of stdout.")
        ] = None,
    ) -> None:
        """Print exactly the adapter's stdin; the prefix digest goes to stderr."""
        from toolkit.cm.assemble import PacketSpec, build_packet, refuse_private
        from toolkit.cm.packet import prefix_digest
        from toolkit.commands._common import say

        packet = build_packet(
            PacketSpec(
                role=role,
                workflow=workflow,
                stage=stage,
                objective=objective,
                expected_output=expected_output,
                ids=tuple(ids or ()),
                constraints=tuple(constraints or ()),
                refs=tuple(refs or ()),
                items=tuple(item or ()),
                json_items=tuple(item_json or ()),
                file_items=tuple(item_file or ()),
                escalate=escalate,
                escalation_reason=escalation_reason,
                added_scope=tuple(added_scope or ()),
                rules=rules,
                prefix_files=tuple(prefix_file or ()),
            )
        )
        refuse_private(packet)  # nothing is printed or written for a packet that leaks
        text = _dump(packet) + "\n"
        if out is not None:
            from toolkit.infra.store import atomic_write

            atomic_write(out, text)
        else:
            sys.stdout.write(text)
        say(f"prefix {prefix_digest(packet['stable_prefix'])}")

    @group.command("check")
    def check(
        file: Annotated[Path, typer.Argument(help="A packet file ('-' for stdin).")],
        workflow: Annotated[str | None, typer.Option("--workflow", help="Expected workflow.")] = None,
        stage: Annotated[str | None, typer.Option("--stage", help="Expected stage.")] = None,
        role: Annotated[str | None, typer.Option("--role", help="Expected role.")] = None,
        json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    ) -> None:
        """Validate a packet with the adapter's validator plus the role's required items."""
        from toolkit.cm.assemble import check_packet
        from toolkit.commands._common import emit_json, say
        from toolkit.core.errors import Refused

        report = check_packet(file, workflow=workflow, stage=stage, role=role)
        if json_out:
            emit_json(report)
        say(f"prefix {report['prefix_digest']}")
        if report["missing"]:
            raise Refused("MISSING_ITEMS", "missing required items: " + ", ".join(report["missing"]))
        if report["problems"]:
            raise Refused("INVALID_PACKET", "; ".join(report["problems"]))
        known = report["role_known"]
        say("packet ok" if known else "packet ok for the adapter (role has no item table)")

    @group.command("prefix")
    def prefix(
        role: Annotated[str, typer.Argument(help="The role.")],
        workflow: Annotated[str, typer.Option("--workflow", help="cm-ai, cm-prd or cm-fix.")],
        stage: Annotated[str, typer.Option("--stage", help="The workflow stage.")],
        rules: Annotated[Path | None, typer.Option("--rules", help="Project rules file.")] = None,
        prefix_file: Annotated[list[str] | None, typer.Option("--prefix-file", help="section=PATH.")] = None,
        show: Annotated[
            bool, typer.Option("--show", help="Also print the system message on stdout.")
        ] = False,
    ) -> None:
        """Print the stable prefix digest (sha256 of the exact system message)."""
        from toolkit.cm.assemble import stable_prefix
        from toolkit.cm.packet import prefix_digest, system_message

        stable = stable_prefix(role, workflow, stage, prefix_file or (), rules)
        if show:
            sys.stdout.write(system_message(stable) + "\n")
        typer.echo(prefix_digest(stable), err=show)

    @group.command("check-output")
    def check_output_cmd(
        role: Annotated[str, typer.Argument(help="The role whose answer this is.")],
        file: Annotated[Path, typer.Argument(help="The role's JSON answer ('-' for stdin).")],
        json_out: Annotated[bool, typer.Option("--json", help="Print findings as JSON.")] = False,
    ) -> None:
        """Check a role's answer against its compact-output schema and the failure rule."""

        from toolkit.cm.assemble import check_answer
        from toolkit.commands._common import emit_json, say
        from toolkit.core.errors import Refused

        findings = check_answer(role, file)
        if json_out:
            emit_json({"ok": not findings, "findings": [f.as_dict() for f in findings]})
        for f in findings:
            say(f"{f.path}: {f.rule}: {f.message}")
        if findings:
            raise Refused("OUTPUT_FINDINGS", f"{len(findings)} rule(s) broken")
        say("answer ok")
