"""Role packets for ``workgroup packet``: assembly from the command's options, the stable prefix,
the checks of a packet and of a role's compact answer. The command parses options and prints.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolkit.cm import packet as pk
from toolkit.cm.answer_schemas import MAX_ANSWER_BYTES, ROLES, check_output, expected_output
from toolkit.cm.prefix import build_prefix
from toolkit.core.errors import InvalidInput, Refused
from toolkit.infra import confined
from toolkit.infra.boundedio import NOT_UTF8, FileRefused, loads_bounded, read_regular, read_text_bounded
from toolkit.infra.git import project_root

TYPE_CHECKING = False  # type checkers read True
if TYPE_CHECKING:
    from toolkit.cm.answer_schemas import Finding
    from toolkit.cm.shapes import DynamicPacket, PacketCheck, RolePacket
    from toolkit.core.jsontypes import JsonObject

MAX_ITEM_FILE_BYTES = 256 * 1024


@dataclass(frozen=True)
class PacketSpec:
    """What ``workgroup packet build`` was given (repeatable options as tuples)."""

    role: str
    workflow: str
    stage: str
    objective: str = ""
    expected_output: str | None = None
    ids: Sequence[str] = ()
    constraints: Sequence[str] = ()
    refs: Sequence[str] = ()
    items: Sequence[str] = ()
    json_items: Sequence[str] = ()
    file_items: Sequence[str] = ()
    escalate: str | None = None
    escalation_reason: str | None = None
    added_scope: Sequence[str] = ()
    rules: Path | None = None
    prefix_files: Sequence[str] = ()


def _pairs(values: Sequence[str], what: str) -> list[tuple[str, str]]:
    out = []
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key or not key.replace("_", "").isalnum() or not key.isascii():
            raise InvalidInput("INVALID_OPTION", f"{what} takes key=value with a snake_case key")
        out.append((key, rest))
    return out


def _read_text(path: Path, what: str) -> str:

    confined.check_named_file(path, f"the {what} file")  # its text goes into the packet
    try:
        return read_text_bounded(path, limit=MAX_ITEM_FILE_BYTES, what=what) or ""
    except FileRefused as exc:
        raise InvalidInput("INVALID_TEXT" if exc.code == NOT_UTF8 else exc.code, exc.message) from None


def _relative_ref(ref: str, root: Path) -> str:
    """Artifact references are project-relative; an absolute path outside the root is refused."""
    path = Path(ref)
    if not path.is_absolute():
        if ".." in path.parts:
            raise InvalidInput("UNSAFE_PATH", "--ref must stay inside the project")
        return path.as_posix()
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        raise InvalidInput("UNSAFE_PATH", "--ref points outside the project root") from None


def _context(spec: PacketSpec, root: Path) -> JsonObject:

    context: JsonObject = {}
    if spec.refs:
        context["artifact_refs"] = [_relative_ref(r, root) for r in spec.refs]
    for key, value in _pairs(spec.items, "--item"):
        context[key] = value
    for key, value in _pairs(spec.json_items, "--item-json"):
        try:
            context[key] = loads_bounded(value, what=f"--item-json {key}")
        except FileRefused as exc:  # says where the decoder stopped (line, column), not the value
            raise InvalidInput("INVALID_JSON", exc.message) from None
    for key, value in _pairs(spec.file_items, "--item-file"):
        context[key] = _read_text(Path(value), "--item-file")
    if spec.escalate is not None or spec.escalation_reason is not None or spec.added_scope:
        context["escalation"] = {
            "trigger": spec.escalate,
            "reason": spec.escalation_reason,
            "added_scope": list(spec.added_scope),
        }
    return context


def _prefix_sources(prefix_file: Sequence[str], rules: Path | None) -> dict[str, str]:
    sources = {
        key: _read_text(Path(value), "--prefix-file") for key, value in _pairs(prefix_file, "--prefix-file")
    }
    if rules is not None:
        sources["project_rules"] = _read_text(rules, "--rules")
    return sources


def stable_prefix(
    role: str, workflow: str, stage: str, prefix_file: Sequence[str], rules: Path | None
) -> dict[str, str]:
    """The role's stable prefix with ``--prefix-file`` sections and ``--rules`` read in."""

    if role not in pk.ROLE_ITEMS:
        raise InvalidInput("UNKNOWN_ROLE", "ROLE must be one of: " + ", ".join(pk.ROLE_ITEMS))
    try:
        return build_prefix(role, workflow, stage, _prefix_sources(prefix_file, rules))
    except ValueError:
        raise InvalidInput("INVALID_OPTION", "--prefix-file names an unknown section") from None


def build_packet(spec: PacketSpec) -> RolePacket:
    """Assemble {stable_prefix, dynamic_packet}; Refused(MISSING_ITEMS) lists anything absent."""

    role = spec.role
    prefix = stable_prefix(role, spec.workflow, spec.stage, spec.prefix_files, spec.rules)
    dynamic: DynamicPacket = {
        "workflow": spec.workflow,
        "stage": spec.stage,
        "role": role,
        "objective": spec.objective,
        "identifiers": dict(_pairs(spec.ids, "--id")),
        "constraints": list(spec.constraints),
        "context": _context(spec, project_root()),
        "expected_output": spec.expected_output or expected_output(role),
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
    packet: RolePacket = {"stable_prefix": prefix, "dynamic_packet": dynamic}
    try:
        pk.validate_adapter_input(packet, workflow=spec.workflow, stage=spec.stage, role=role)
    except pk.PacketError as exc:
        raise InvalidInput("INVALID_PACKET", exc.reason) from None
    return packet


def refuse_private(packet: object) -> None:
    """Refuse (exit 1, ``PACKET_PRIVATE``) a packet the privacy engine finds private content in."""
    try:
        private = pk.private_categories(packet)
    except pk.PacketError as exc:
        raise InvalidInput("INVALID_PACKET", exc.reason) from None
    if private:
        raise Refused(pk.PRIVATE_CODE, "the packet contains private content (" + ", ".join(private) + ")")


def read_bytes(path: Path) -> bytes:

    confined.check_named_file(path, "the file")
    try:
        # up to 1 MiB + 1 byte: the caller answers an oversized packet or answer with its own code
        return read_regular(path, limit=1024 * 1024, what="the file", allow_over=True) or b""
    except FileRefused as exc:
        raise InvalidInput(exc.code, exc.message) from None


def read_input(file: Path, limit: int) -> bytes:
    """The bytes of ``file`` (``-``: stdin), at most ``limit`` + 1 so the caller can tell oversize."""
    if str(file) == "-":
        return sys.stdin.buffer.read(limit + 1)
    return read_bytes(file)


def check_packet(file: Path, *, workflow: str | None, stage: str | None, role: str | None) -> PacketCheck:
    """``workgroup packet check``: the adapter's validation (expected workflow, stage and role
    default to the packet's own), the privacy gate, then the role's required items.

    ``{ok, role_known, prefix_digest, missing, problems}``; a packet the adapter refuses is
    ``INVALID_PACKET`` (exit 2), a private one ``PACKET_PRIVATE`` (exit 1).
    """
    raw = read_input(file, pk.MAX_PACKET_BYTES)
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
    refuse_private(obj)
    known = dynamic["role"] in pk.ROLE_ITEMS
    missing = pk.missing_items(dynamic["role"], dynamic) if known else []
    problems = pk.check_role_context(dynamic["role"], dynamic) if known else []
    return {
        "ok": not missing and not problems,
        "role_known": known,
        "prefix_digest": pk.prefix_digest(stable),
        "missing": missing,
        "problems": problems,
    }


def check_answer(role: str, file: Path) -> list[Finding]:
    """``workgroup packet check-output``: the findings of a role's answer against its compact
    schema and the failure rule (``UNKNOWN_ROLE``, ``NOT_COMPACT``, ``INVALID_JSON`` before that)."""

    if role not in ROLES:
        raise InvalidInput("UNKNOWN_ROLE", "ROLE must be one of: " + ", ".join(ROLES))
    raw = read_input(file, MAX_ANSWER_BYTES)
    if len(raw) > MAX_ANSWER_BYTES:
        raise Refused("NOT_COMPACT", f"the answer exceeds {MAX_ANSWER_BYTES} bytes")
    try:
        answer = loads_bounded(raw, what="the answer")
    except FileRefused:
        raise InvalidInput("INVALID_JSON", "the answer is not strict UTF-8 JSON") from None
    # dicts keep the order the keys were written in, which is what "findings first" is about.
    findings: list[Finding] = check_output(
        role, answer, key_order=list(answer) if isinstance(answer, dict) else []
    )
    return findings
