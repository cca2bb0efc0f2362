"""The adapter's stdin: one validator for `workgroup packet check` and `cm-openai-compatible-call`.

Standard library only: the adapter imports this on its lean start-up path. The rules follow the
CM contract (exactly ``stable_prefix`` and ``dynamic_packet``; five prefix sections in a fixed
order; seven required dynamic fields plus an optional ``context`` object; the identity must
equal the CLI's). Error reasons are short fixed texts that never echo the input.
"""

from __future__ import annotations

import json
import math
from typing import cast

from toolkit.core.canonical import sha256_digest
from toolkit.core.errors import InvalidInput
from toolkit.core.strictjson import json_depth_exceeds, json_error_at, loads_strict
from toolkit.privacy.engine import scan_value
from toolkit.privacy.types import Context

TYPE_CHECKING = False  # type checkers read True
if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.cm.shapes import DynamicPacket
    from toolkit.core.jsontypes import JsonObject

STABLE_PREFIX_KEYS: tuple[str, ...] = ("safety", "workflow", "project_rules", "role", "output_schema")
DYNAMIC_REQUIRED: tuple[str, ...] = (
    "workflow",
    "stage",
    "role",
    "objective",
    "identifiers",
    "constraints",
    "expected_output",
)
DYNAMIC_OPTIONAL: tuple[str, ...] = ("context",)
MAX_PACKET_BYTES = 1024 * 1024
# Deeper trees than this are refused before anything walks them recursively.
MAX_JSON_DEPTH = 128
_TEXT_FIELDS = ("workflow", "stage", "role", "objective", "expected_output")


class PacketError(InvalidInput, ValueError):
    """A refused packet. ``reason`` is a short fixed text; it never contains packet content."""

    def __init__(self, reason: str) -> None:
        super().__init__("PACKET_INVALID", reason)
        self.reason = reason


def _nonempty_text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _check_tree(value: object, label: str = "packet") -> None:
    """Strict JSON values only: bounded depth, finite numbers, encodable strings, string keys."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise PacketError(f"{label} exceeds the maximum JSON nesting depth")
        if isinstance(current, dict):
            for key, child in current.items():
                if not isinstance(key, str):
                    raise PacketError("packet object keys must be strings")
                _check_unicode(key)
                stack.append((child, depth + 1))
        elif isinstance(current, list):
            stack.extend((child, depth + 1) for child in current)
        else:
            _check_scalar(current)


def _check_scalar(value: object) -> None:
    """A JSON scalar: an encodable string, a boolean, null, an integer or a finite float."""
    if isinstance(value, str):
        _check_unicode(value)
    elif isinstance(value, bool) or value is None or isinstance(value, int):
        return
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise PacketError("packet must contain strict JSON numbers")
    else:
        raise PacketError("packet must contain only JSON values")


def _check_unicode(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise PacketError("packet must contain valid Unicode") from None


def _check_prefix(stable: object) -> dict[str, str]:
    if not isinstance(stable, dict) or set(stable) != set(STABLE_PREFIX_KEYS):
        raise PacketError("stable_prefix requires exactly: " + ", ".join(STABLE_PREFIX_KEYS))
    for key in STABLE_PREFIX_KEYS:
        if not _nonempty_text(stable[key]):
            raise PacketError(f"stable_prefix.{key} must be a non-empty string")
    return {key: stable[key] for key in STABLE_PREFIX_KEYS}


def _check_dynamic(dynamic: object, identity: dict[str, str]) -> DynamicPacket:
    if not isinstance(dynamic, dict):
        raise PacketError("dynamic_packet must be a JSON object")
    _check_dynamic_keys(dynamic)
    for field in _TEXT_FIELDS:
        if not _nonempty_text(dynamic[field]):
            raise PacketError(f"dynamic_packet.{field} must be a non-empty string")
    for field in ("workflow", "stage", "role"):
        if dynamic[field] != identity[field]:
            raise PacketError(f"dynamic_packet.{field} must match --{field}")
    _check_dynamic_structures(dynamic)
    return cast("DynamicPacket", dict(dynamic))  # its keys, texts and structures checked above


def _check_dynamic_keys(dynamic: JsonObject) -> None:
    """Every required key present (the missing ones named), no key outside the schema."""
    missing = [key for key in DYNAMIC_REQUIRED if key not in dynamic]
    if missing:
        raise PacketError("dynamic_packet requires: " + ", ".join(missing))
    allowed = set(DYNAMIC_REQUIRED) | set(DYNAMIC_OPTIONAL)
    if any(key not in allowed for key in dynamic):
        # Unknown key names are packet content; they are not echoed.
        raise PacketError("dynamic_packet contains unsupported fields")


def _check_dynamic_structures(dynamic: JsonObject) -> None:
    """``identifiers`` (and ``context`` when present) are objects; ``constraints`` non-empty strings."""
    if not isinstance(dynamic["identifiers"], dict):
        raise PacketError("dynamic_packet.identifiers must be a JSON object")
    constraints = dynamic["constraints"]
    if not isinstance(constraints, list) or not all(_nonempty_text(item) for item in constraints):
        raise PacketError("dynamic_packet.constraints must be a list of strings, each non-empty")
    if "context" in dynamic and not isinstance(dynamic["context"], dict):
        raise PacketError("dynamic_packet.context must be a JSON object")


def validate_adapter_input(
    obj: object, *, workflow: str, stage: str, role: str, label: str = "packet"
) -> tuple[dict[str, str], DynamicPacket]:
    """Validate a parsed packet; return (stable_prefix in fixed key order, dynamic_packet).

    Raises ``PacketError`` for anything the adapter would refuse before a claim or HTTP call.
    ``label`` names the input in the nesting-depth refusal (the adapter says ``stdin``).
    """
    _check_tree(obj, label)
    if not isinstance(obj, dict) or set(obj) != {"stable_prefix", "dynamic_packet"}:
        raise PacketError("role packet requires exactly stable_prefix and dynamic_packet")
    stable = _check_prefix(obj["stable_prefix"])
    dynamic = _check_dynamic(obj["dynamic_packet"], {"workflow": workflow, "stage": stage, "role": role})
    return stable, dynamic


def parse_packet_bytes(raw: bytes, label: str = "packet") -> object:
    """Strict UTF-8 JSON with the adapter's 1 MiB cap; NaN/Infinity and deep trees refused.

    The nesting depth is measured on the bytes before parsing, so a hostile tree never reaches
    the recursive decoder.
    """
    if len(raw) > MAX_PACKET_BYTES:
        raise PacketError("role packet exceeds 1 MiB")
    if json_depth_exceeds(raw, MAX_JSON_DEPTH):
        raise PacketError(f"{label} exceeds the maximum JSON nesting depth")
    try:
        return loads_strict(raw)
    except json.JSONDecodeError as exc:
        raise PacketError(f"role packet is not valid strict JSON: {json_error_at(exc)}") from None
    except ValueError:
        raise PacketError("role packet is not valid strict UTF-8 JSON") from None


def system_message(stable_prefix: dict[str, str]) -> str:
    """The five ``[key]`` sections in the fixed order, separated by one blank line."""
    return "\n\n".join(f"[{key}]\n{stable_prefix[key]}" for key in STABLE_PREFIX_KEYS)


def user_message(dynamic_packet: DynamicPacket) -> str:
    """The dynamic packet as compact, key-sorted JSON (UTF-8 text kept as is)."""
    return json.dumps(
        dynamic_packet, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
    )


def prefix_digest(stable_prefix: dict[str, str]) -> str:
    """``sha256:`` + hex digest of the exact system message the adapter sends."""
    return sha256_digest(system_message(stable_prefix).encode("utf-8"))


# --- Minimal role packets: role-specific items live in dynamic_packet.context under fixed keys. ---

ROLE_ITEMS: dict[str, tuple[str, ...]] = {
    "analyst": ("current_requirement", "business_map_slice", "known_constraints", "unresolved_questions"),
    "planner": (
        "analyst_result",
        "affected_modules",
        "approved_constraints",
        "acceptance_criteria_candidates",
    ),
    "coder": (
        "task",
        "mapped_acs",
        "design_contracts",
        "allowed_files",
        "verification_commands",
        "current_attempt",
    ),
    "tester": ("test_cases", "declared_commands", "environment_facts"),
    "reviewer": (
        "task_handoff",
        "task_diff",
        "mapped_acs_and_rules",
        "verification_summary",
        "dirty_exclusions",
    ),
    "browser_qa": ("browser_cases", "target_environment", "setup_cleanup_facts", "expected_results"),
}
# Required only when the packet is a retry (identifiers.attempt > 1).
RETRY_ITEMS: dict[str, tuple[str, ...]] = {"tester": ("failure_evidence",)}
COMMON_CONTEXT = ("artifact_refs",)
ESCALATION_TRIGGERS: tuple[str, ...] = ("dependency", "ambiguity", "shared_contract_change", "review_finding")


def role_item_keys(role: str) -> tuple[str, ...]:
    """Every context key a packet of ``role`` may carry (required, retry-only, common, escalation)."""
    return COMMON_CONTEXT + ROLE_ITEMS[role] + RETRY_ITEMS.get(role, ()) + ("escalation",)


def is_retry(identifiers: Mapping[str, object]) -> bool:
    attempt = identifiers.get("attempt")
    if isinstance(attempt, str) and attempt.isdigit():
        attempt = int(attempt)
    return isinstance(attempt, int) and not isinstance(attempt, bool) and attempt > 1


def missing_items(role: str, dynamic_packet: DynamicPacket) -> list[str]:
    """Required role items absent from ``context``, in table order. Absent means absent: an
    explicitly empty value counts as stated, and nothing is ever filled in."""
    context = dynamic_packet.get("context")
    context = context if isinstance(context, dict) else {}
    needed = COMMON_CONTEXT + ROLE_ITEMS[role]
    if is_retry(dynamic_packet.get("identifiers") or {}):
        needed += RETRY_ITEMS.get(role, ())
    return [key for key in needed if key not in context]


def check_role_context(role: str, dynamic_packet: DynamicPacket) -> list[str]:
    """Problems with the role context beyond missing items: unknown keys, a malformed escalation."""
    context = dynamic_packet.get("context")
    if not isinstance(context, dict):
        return []
    problems = []
    if set(context) - set(role_item_keys(role)):
        problems.append("context has keys outside the role's items")
    refs = context.get("artifact_refs")
    if refs is not None and (not isinstance(refs, list) or not all(_nonempty_text(r) for r in refs)):
        problems.append("artifact_refs must be a list of paths")
    if "escalation" in context:
        problems.extend(_check_escalation(context["escalation"]))
    return problems


def _check_escalation(value: object) -> list[str]:
    if not isinstance(value, dict) or set(value) != {"trigger", "reason", "added_scope"}:
        return ["escalation must be {trigger, reason, added_scope}"]
    problems = []
    if value["trigger"] not in ESCALATION_TRIGGERS:
        problems.append("escalation.trigger must be one of: " + ", ".join(ESCALATION_TRIGGERS))
    if not _nonempty_text(value["reason"]):
        problems.append("escalation.reason must be a non-empty string")
    scope = value["added_scope"]
    if not isinstance(scope, list) or not scope or not all(_nonempty_text(s) for s in scope):
        problems.append("escalation.added_scope must list the newly added scope")
    return problems


PRIVATE_CODE = "PACKET_PRIVATE"


def private_categories(packet: object) -> list[str]:
    """Categories of private content in a packet, through the shared privacy engine.

    The packet is a workflow artifact on its way to a model endpoint: it is checked in the
    engine's handoff (workflow-artifact) context, so secrets and credentials, provider session
    ids, home paths, emails and transcript text are all findings, field names included. Only the
    categories are returned, never a value. Imported lazily: a refused packet pays nothing.
    """

    try:
        findings = scan_value(packet, Context.HANDOFF)
    except ValueError:
        raise PacketError("role packet is nested too deeply to check") from None
    return sorted({f.category.value for f in findings})
