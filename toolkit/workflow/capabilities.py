"""Provider capabilities: which semantic adapter operations each provider/runtime really exposes.

The table is versioned and conservative: an operation is ``native`` only where the provider has
a real primitive for it; anything else is ``unsupported`` (or ``experimental``, which routing
treats as unsupported). Routing facts filled from it never claim more than the table says, so an
unsupported mode degrades to ``fresh-capsule`` with ``CAPABILITY_FALLBACK`` and nothing is
fabricated: no fake team, mailbox, fork or peer messaging.
"""

from __future__ import annotations

import copy
from typing import Literal, TypedDict

from toolkit.core.errors import InvalidInput
from toolkit.core.jsontypes import JsonObject

TABLE_VERSION = "2026-12-01"
OPERATIONS: tuple[str, ...] = (
    "spawn",
    "resume",
    "sendFollowup",
    "wait",
    "interrupt",
    "release",
    "formTeam",
    "bounded_inheritance",
    "conversation_fork",
)
NATIVE, EXPERIMENTAL, UNSUPPORTED = "native", "experimental", "unsupported"


class ProviderCapabilities(TypedDict):
    """One provider's row: the versions it covers and, per operation, (status, the primitive used)."""

    versions: str
    operations: dict[str, tuple[str, str]]


class OperationRow(TypedDict):
    status: str
    via: str


class ProviderRow(TypedDict):
    versions: str
    operations: dict[str, OperationRow]


class CapabilityTable(TypedDict):
    """What ``table`` returns (``capabilities --json``)."""

    schema: str
    version: str
    providers: dict[str, ProviderRow]


class InheritanceFacts(TypedDict):
    full_supported: bool
    recent_supported: bool


class TeamFacts(TypedDict):
    provider_supported: bool


class RouteFacts(TypedDict):
    """The router's ``*_supported`` facts for one provider, from the table."""

    inheritance: InheritanceFacts
    team: TeamFacts
    resume_supported: bool


_INHERITANCE_KEYS: tuple[Literal["full_supported"], Literal["recent_supported"]] = (
    "full_supported",
    "recent_supported",
)

# Version-qualified compatibility section: concrete primitives are named only here.
PROVIDERS: dict[str, ProviderCapabilities] = {
    "claude-code": {
        "versions": "Claude Code 2.x",
        "operations": {
            "spawn": (NATIVE, "subagent started through the Task/Agent tool"),
            "resume": (NATIVE, "subagent resumed by its agent id"),
            "sendFollowup": (NATIVE, "follow-up prompt to a resumed subagent"),
            "wait": (NATIVE, "the coordinator waits for the subagent result"),
            "interrupt": (EXPERIMENTAL, "stopping a background task; not uniform across versions"),
            "release": (NATIVE, "a subagent ends when it returns its result"),
            "formTeam": (EXPERIMENTAL, "agent teams behind an experimental setting"),
            "bounded_inheritance": (UNSUPPORTED, "no bounded-window inheritance for subagents"),
            "conversation_fork": (UNSUPPORTED, "session forks exist for whole sessions, not for workers"),
        },
    },
    "codex": {
        "versions": "Codex CLI (exec mode)",
        "operations": {
            "spawn": (NATIVE, "a new non-interactive exec session"),
            "resume": (NATIVE, "exec resume of a recorded session"),
            "sendFollowup": (NATIVE, "a new prompt to a resumed session"),
            "wait": (NATIVE, "waiting for the exec process"),
            "interrupt": (NATIVE, "signal to the exec process"),
            "release": (NATIVE, "the exec process exits"),
            "formTeam": (UNSUPPORTED, "no team runtime"),
            "bounded_inheritance": (UNSUPPORTED, "no bounded inheritance"),
            "conversation_fork": (UNSUPPORTED, "no worker fork primitive"),
        },
    },
    "api": {
        "versions": "OpenAI-compatible chat completions (stateless)",
        "operations": {
            "spawn": (NATIVE, "one stateless call with a capsule"),
            "resume": (UNSUPPORTED, "stateless: no server-side session to resume"),
            "sendFollowup": (UNSUPPORTED, "stateless"),
            "wait": (NATIVE, "the call is synchronous"),
            "interrupt": (UNSUPPORTED, "no cancellation primitive"),
            "release": (NATIVE, "nothing is held after the call"),
            "formTeam": (UNSUPPORTED, "no team runtime"),
            "bounded_inheritance": (UNSUPPORTED, "no inheritance"),
            "conversation_fork": (UNSUPPORTED, "no fork"),
        },
    },
    "other": {
        "versions": "any provider without a verified adapter",
        "operations": {op: (UNSUPPORTED, "not verified") for op in OPERATIONS}
        | {
            "spawn": (NATIVE, "a new worker with a capsule"),
            "wait": (NATIVE, "waiting for the worker"),
        },
    },
}

MODEL_TIERS: dict[str, dict[str, str]] = {
    "claude-code": {"deep": "opus", "standard": "sonnet", "fast": "haiku"},
    "codex": {"deep": "gpt-5", "standard": "gpt-5", "fast": "gpt-5"},
    "api": {"deep": "unknown", "standard": "unknown", "fast": "unknown"},
    "other": {"deep": "unknown", "standard": "unknown", "fast": "unknown"},
}


class UnknownProvider(InvalidInput, ValueError):
    def __init__(self, message: str) -> None:
        super().__init__("UNKNOWN_PROVIDER", message)


def supports(provider: str, operation: str) -> bool:
    """Only ``native`` counts: experimental and unsupported operations are never routed to."""
    if provider not in PROVIDERS:
        raise UnknownProvider("unknown provider (choose claude-code, codex, api or other)")
    return bool(PROVIDERS[provider]["operations"][operation][0] == NATIVE)


def table(provider: str | None = None) -> CapabilityTable:
    names = [provider] if provider else list(PROVIDERS)
    if provider and provider not in PROVIDERS:
        raise UnknownProvider("unknown provider (choose claude-code, codex, api or other)")
    return {
        "schema": "workgroup.capabilities/v1",
        "version": TABLE_VERSION,
        "providers": {
            name: {
                "versions": PROVIDERS[name]["versions"],
                "operations": {
                    op: {"status": s, "via": via} for op, (s, via) in PROVIDERS[name]["operations"].items()
                },
            }
            for name in names
        },
    }


def route_facts(provider: str) -> RouteFacts:
    """The router's ``*_supported`` facts for ``provider``."""
    return {
        "inheritance": {
            "full_supported": supports(provider, "conversation_fork"),
            "recent_supported": supports(provider, "bounded_inheritance"),
        },
        "team": {"provider_supported": supports(provider, "formTeam")},
        "resume_supported": supports(provider, "resume"),
    }


def fill_route_input(route_input: JsonObject, provider: str) -> tuple[JsonObject, list[str]]:
    """Fill the router's capability facts from the table.

    Absent facts are filled; a fact that claims support the provider lacks is forced to false
    (the table wins: never fabricate). Returns the new input and the operations that were
    wanted but are unsupported.
    """
    facts = route_facts(provider)
    out = copy.deepcopy(route_input)
    lacking: list[str] = []
    inheritance = out.get("inheritance")
    if isinstance(inheritance, dict):
        lacking += _fill_inheritance(inheritance, facts["inheritance"])
    team = out.get("team")
    if isinstance(team, dict) and team.get("provider_supported") is not False:
        if team.get("coordination_required") is True and not facts["team"]["provider_supported"]:
            lacking.append("formTeam")
        team["provider_supported"] = facts["team"]["provider_supported"]
    lineage = out.get("lineage")
    if isinstance(lineage, dict) and not facts["resume_supported"]:
        lacking += _unset_resumable(lineage)
    return out, sorted(set(lacking))


def _fill_inheritance(inheritance: JsonObject, facts: InheritanceFacts) -> list[str]:
    """Set the two inheritance facts from the table unless the input says false; the wanted but
    unsupported operations (a claimed fork or bounded inheritance, high affinity with neither)."""
    lacking: list[str] = []
    for key in _INHERITANCE_KEYS:
        if inheritance.get(key) is not False:
            if inheritance.get(key) is True and not facts[key]:
                lacking.append("conversation_fork" if key == "full_supported" else "bounded_inheritance")
            inheritance[key] = facts[key]
    if inheritance.get("affinity") == "high" and not (facts["full_supported"] or facts["recent_supported"]):
        lacking.append("inheritance")
    return lacking


def _unset_resumable(lineage: JsonObject) -> list[str]:
    """For a provider without resume: a lineage marked resumable is not; ``resume`` is lacking when
    the lineage was also compatible."""
    if lineage.get("resumable") is not True:
        return []
    lineage["resumable"] = False
    return ["resume"] if lineage.get("compatible") is True else []
