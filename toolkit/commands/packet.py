"""`workgroup packet build|check|check-output|prefix`: minimal role packets and compact answers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from toolkit.core.errors import ToolkitError

MAX_ITEM_FILE_BYTES = 256 * 1024


def _pairs(values: list[str] | None, what: str) -> list[tuple[str, str]]:
    from toolkit.core.errors import InvalidInput

    out = []
    for value in values or []:
        key, sep, rest = value.partition("=")
        if not sep or not key or not key.replace("_", "").isalnum() or not key.isascii():
            raise InvalidInput("INVALID_OPTION", f"{what} takes key=value with a snake_case key")
        out.append((key, rest))
    return out


def _read_text(path: Path, what: str) -> str:
    from toolkit.core.errors import InvalidInput
    from toolkit.infra.boundedio import NOT_UTF8, FileRefused, read_text_bounded

    try:
        return read_text_bounded(path, limit=MAX_ITEM_FILE_BYTES, what=what) or ""
    except FileRefused as exc:
        raise InvalidInput("INVALID_TEXT" if exc.code == NOT_UTF8 else exc.code, exc.message) from None


def _relative_ref(ref: str, root: Path) -> str:
    """Artifact references are project-relative; an absolute path outside the root is refused."""
    from toolkit.core.errors import InvalidInput

    path = Path(ref)
    if not path.is_absolute():
        if ".." in path.parts:
            raise InvalidInput("UNSAFE_PATH", "--ref must stay inside the project")
        return path.as_posix()
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        raise InvalidInput("UNSAFE_PATH", "--ref points outside the project root") from None


def _root() -> Path:
    try:
        from toolkit.infra.git import discover

        return discover().workdir.resolve()
    except ToolkitError:  # outside a repository the current directory is the project root
        return Path.cwd().resolve()


def _context(args: dict[str, Any], root: Path) -> dict[str, Any]:

    from toolkit.core.errors import InvalidInput

    context: dict[str, Any] = {}
    if args["refs"]:
        context["artifact_refs"] = [_relative_ref(r, root) for r in args["refs"]]
    for key, value in _pairs(args["item"], "--item"):
        context[key] = value
    for key, value in _pairs(args["item_json"], "--item-json"):
        from toolkit.infra.boundedio import FileRefused, loads_bounded

        try:
            context[key] = loads_bounded(value, what="--item-json value")
        except FileRefused:
            raise InvalidInput("INVALID_JSON", "--item-json value is not strict JSON") from None
    for key, value in _pairs(args["item_file"], "--item-file"):
        context[key] = _read_text(Path(value), "--item-file")
    if args["escalate"] is not None or args["escalation_reason"] is not None or args["added_scope"]:
        context["escalation"] = {
            "trigger": args["escalate"],
            "reason": args["escalation_reason"],
            "added_scope": list(args["added_scope"] or []),
        }
    return context


def _reject(_: str) -> Any:
    raise ValueError("non-standard constant")


def _prefix_sources(prefix_file: list[str] | None, rules: Path | None) -> dict[str, str]:
    sources = {
        key: _read_text(Path(value), "--prefix-file") for key, value in _pairs(prefix_file, "--prefix-file")
    }
    if rules is not None:
        sources["project_rules"] = _read_text(rules, "--rules")
    return sources


def build_packet(role: str, args: dict[str, Any]) -> dict[str, Any]:
    """Assemble {stable_prefix, dynamic_packet}; Refused(MISSING_ITEMS) lists anything absent."""
    from toolkit.cm import packet as pk
    from toolkit.cm.compact import expected_output
    from toolkit.cm.prefix import build_prefix
    from toolkit.core.errors import InvalidInput, Refused

    if role not in pk.ROLE_ITEMS:
        raise InvalidInput("UNKNOWN_ROLE", "ROLE must be one of: " + ", ".join(pk.ROLE_ITEMS))
    try:
        prefix = build_prefix(
            role, args["workflow"], args["stage"], _prefix_sources(args["prefix_file"], args["rules"])
        )
    except ValueError:
        raise InvalidInput("INVALID_OPTION", "--prefix-file names an unknown section") from None
    dynamic: dict[str, Any] = {
        "workflow": args["workflow"],
        "stage": args["stage"],
        "role": role,
        "objective": args["objective"],
        "identifiers": dict(_pairs(args["ids"], "--id")),
        "constraints": list(args["constraints"] or []),
        "context": _context(args, _root()),
        "expected_output": args["expected_output"] or expected_output(role),
    }
    missing = [key for key in ("objective",) if not dynamic[key]]
    if not dynamic["identifiers"]:
        missing.append("identifiers")
    missing += pk.missing_items(role, dynamic)
    if missing:
        raise Refused("MISSING_ITEMS", "missing required items: " + ", ".join(missing))
    problems = pk.check_role_context(role, dynamic)
    if problems:
        raise InvalidInput("INVALID_PACKET", "; ".join(problems))
    packet = {"stable_prefix": prefix, "dynamic_packet": dynamic}
    try:
        pk.validate_adapter_input(packet, workflow=args["workflow"], stage=args["stage"], role=role)
    except pk.PacketError as exc:
        raise InvalidInput("INVALID_PACKET", exc.reason) from None
    return packet


def _dump(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def register(app: typer.Typer) -> None:
    group = typer.Typer(
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
        from toolkit.cm.packet import prefix_digest
        from toolkit.commands._common import say

        packet = build_packet(role, dict(locals()))
        _refuse_private(packet)  # nothing is printed or written for a packet that leaks
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
        from toolkit.cm import packet as pk
        from toolkit.commands._common import emit_json, say
        from toolkit.core.errors import InvalidInput, Refused

        raw = sys.stdin.buffer.read(pk.MAX_PACKET_BYTES + 1) if str(file) == "-" else _read_bytes(file)
        try:
            obj = pk.parse_packet_bytes(raw)
            dyn = obj.get("dynamic_packet") if isinstance(obj, dict) else None
            given = dyn if isinstance(dyn, dict) else {}
            ident = {
                k: v if v is not None else given.get(k)
                for k, v in (("workflow", workflow), ("stage", stage), ("role", role))
            }
            stable, dynamic = pk.validate_adapter_input(
                obj, workflow=str(ident["workflow"]), stage=str(ident["stage"]), role=str(ident["role"])
            )
        except pk.PacketError as exc:
            raise InvalidInput("INVALID_PACKET", exc.reason) from None
        _refuse_private(obj)
        known = dynamic["role"] in pk.ROLE_ITEMS
        missing = pk.missing_items(dynamic["role"], dynamic) if known else []
        problems = pk.check_role_context(dynamic["role"], dynamic) if known else []
        digest = pk.prefix_digest(stable)
        if json_out:
            emit_json(
                {
                    "ok": not missing and not problems,
                    "role_known": known,
                    "prefix_digest": digest,
                    "missing": missing,
                    "problems": problems,
                }
            )
        say(f"prefix {digest}")
        if missing or problems:
            refusal = (
                Refused("MISSING_ITEMS", "missing required items: " + ", ".join(missing))
                if missing
                else Refused("INVALID_PACKET", "; ".join(problems))
            )
            refusal.reported = json_out  # the JSON above already says why
            raise refusal
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
        from toolkit.cm.packet import ROLE_ITEMS, prefix_digest, system_message
        from toolkit.cm.prefix import build_prefix
        from toolkit.core.errors import InvalidInput

        if role not in ROLE_ITEMS:
            raise InvalidInput("UNKNOWN_ROLE", "ROLE must be one of: " + ", ".join(ROLE_ITEMS))
        try:
            stable = build_prefix(role, workflow, stage, _prefix_sources(prefix_file, rules))
        except ValueError:
            raise InvalidInput("INVALID_OPTION", "--prefix-file names an unknown section") from None
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

        from toolkit.cm.compact import MAX_ANSWER_BYTES, ROLES, check_output
        from toolkit.commands._common import emit_json, say
        from toolkit.core.errors import InvalidInput, Refused

        if role not in ROLES:
            raise InvalidInput("UNKNOWN_ROLE", "ROLE must be one of: " + ", ".join(ROLES))
        raw = sys.stdin.buffer.read(MAX_ANSWER_BYTES + 1) if str(file) == "-" else _read_bytes(file)
        if len(raw) > MAX_ANSWER_BYTES:
            raise Refused("NOT_COMPACT", f"the answer exceeds {MAX_ANSWER_BYTES} bytes")
        from toolkit.infra.boundedio import FileRefused, loads_bounded

        try:
            answer = loads_bounded(raw, what="the answer")
        except FileRefused:
            raise InvalidInput("INVALID_JSON", "the answer is not strict UTF-8 JSON") from None
        # dicts keep the order the keys were written in, which is what "findings first" is about.
        findings = check_output(role, answer, key_order=list(answer) if isinstance(answer, dict) else [])
        if json_out:
            emit_json({"ok": not findings, "findings": [f.as_dict() for f in findings]})
        for f in findings:
            say(f"{f.path}: {f.rule}: {f.message}")
        if findings:
            refusal = Refused("OUTPUT_FINDINGS", f"{len(findings)} rule(s) broken")
            refusal.reported = json_out  # the JSON above already lists the findings
            raise refusal
        say("answer ok")


def _refuse_private(packet: object) -> None:
    """Refuse (exit 1, ``PACKET_PRIVATE``) a packet the privacy engine finds private content in."""
    from toolkit.cm import packet as pk
    from toolkit.core.errors import InvalidInput, Refused

    try:
        private = pk.private_categories(packet)
    except pk.PacketError as exc:
        raise InvalidInput("INVALID_PACKET", exc.reason) from None
    if private:
        raise Refused(pk.PRIVATE_CODE, "the packet contains private content (" + ", ".join(private) + ")")


def _read_bytes(path: Path) -> bytes:
    from toolkit.core.errors import InvalidInput
    from toolkit.infra.boundedio import FileRefused, read_regular

    try:
        # up to 1 MiB + 1 byte: the caller answers an oversized packet or answer with its own code
        return read_regular(path, limit=1024 * 1024, what="the file", allow_over=True) or b""
    except FileRefused as exc:
        raise InvalidInput(exc.code, exc.message) from None
