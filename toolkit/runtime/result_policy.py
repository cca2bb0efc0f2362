"""Result persistence policy (``workgroup runtime result-policy``), standard library only.

Decides how a worker's result may persist, with the reference runtime's request and result
shapes: ``{input}`` -> ``{mode, write_prohibited, writes{handoff, artifact, vault, settings,
workgroup}}``. The rules, in the order they apply:

1. ``write_prohibited: true`` wins over everything: mode ``ephemeral`` and every write false
   (a strict read-only task leaves no log, handoff, artifact, setting or vault capture).
2. ``large_raw_output: true`` needs an artifact: mode ``artifact``, whatever was requested.
3. Material, writer, partial, resumable or phase-crossing work (or a requested ``durable``
   mode) keeps a recoverable handoff: a requested ``ephemeral`` is upgraded to ``durable``,
   and the handoff write cannot be requested away.
4. Refusing a needed write is an error, not a silent downgrade:
   ``RESULT_HANDOFF_NOT_AUTHORIZED`` / ``RESULT_ARTIFACT_NOT_AUTHORIZED``.
5. Vault, settings and WorkGroup writes happen only when authorized with an explicit ``true``.

Flags are compared strictly (``true`` only, as the reference's ``=== true``); unknown fields
are ignored (DESIGN.md, Decisions).
"""

from __future__ import annotations

from toolkit.runtime.codes import RuntimeOpError

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.op_types import ResultPolicyDecision, ResultWrites

RESULT_MODES: tuple[str, ...] = ("ephemeral", "durable", "artifact")
WRITE_KINDS: tuple[str, ...] = ("handoff", "artifact", "vault", "settings", "workgroup")
# facts that make a result worth recovering after compaction or by another agent
DURABLE_FACTS: tuple[str, ...] = ("material", "writer", "partial", "resumable", "crosses_phase")


def _is_true(facts: Mapping[str, object], key: str) -> bool:
    return facts.get(key) is True


def _requested_mode(facts: Mapping[str, object]) -> str | None:
    mode = facts.get("requested_mode")
    if mode is None:
        return None
    if not isinstance(mode, str) or mode not in RESULT_MODES:
        raise RuntimeOpError("INVALID_REQUEST")
    return mode


def resolve_result_policy(input: Mapping[str, object]) -> ResultPolicyDecision:  # noqa: A002 - the reference's name
    """Resolve ``{mode, write_prohibited, writes}`` for one result (pure; raises RuntimeOpError)."""
    if not isinstance(input, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    facts = input
    write_prohibited = _is_true(facts, "write_prohibited")
    requested = _requested_mode(facts)
    handoff_required = requested == "durable" or any(_is_true(facts, k) for k in DURABLE_FACTS)
    if write_prohibited:
        nothing: ResultWrites = {
            "handoff": False,
            "artifact": False,
            "vault": False,
            "settings": False,
            "workgroup": False,
        }
        return {"mode": "ephemeral", "write_prohibited": True, "writes": nothing}

    mode = _result_mode(facts, requested, handoff_required)
    _check_needed_writes(facts, mode, handoff_required)
    writes: ResultWrites = {  # WRITE_KINDS, in that order
        "handoff": handoff_required or mode == "durable",
        "artifact": mode == "artifact",
        "vault": _is_true(facts, "authorize_vault_write"),
        "settings": _is_true(facts, "authorize_settings_write"),
        "workgroup": _is_true(facts, "authorize_workgroup_write"),
    }
    return {"mode": mode, "write_prohibited": False, "writes": writes}


def _result_mode(facts: Mapping[str, object], requested: str | None, handoff_required: bool) -> str:
    """Rules 2 and 3: a large raw output is an artifact; work that needs a handoff upgrades an
    absent or ``ephemeral`` request to ``durable``; otherwise the request (default ephemeral)."""
    if _is_true(facts, "large_raw_output"):
        return "artifact"
    if handoff_required and requested in (None, "ephemeral"):
        return "durable"
    return requested or "ephemeral"


def _check_needed_writes(facts: Mapping[str, object], mode: str, handoff_required: bool) -> None:
    """Rule 4: an explicit false on a needed handoff or artifact write is a refusal; anything
    else leaves it authorized."""
    if (handoff_required or mode == "durable") and facts.get("authorize_handoff") is False:
        raise RuntimeOpError("RESULT_HANDOFF_NOT_AUTHORIZED")
    if mode == "artifact" and facts.get("authorize_artifact") is False:
        raise RuntimeOpError("RESULT_ARTIFACT_NOT_AUTHORIZED")


def op_result_policy(request: Mapping[str, object], ctx: RuntimeContext) -> ResultPolicyDecision:
    """``workgroup runtime result-policy``: ``{input}`` -> the decision."""
    facts = request.get("input")
    if not isinstance(facts, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    return resolve_result_policy(facts)
