"""Private field names: a capsule, event or handoff must not carry a ``session_id``, a
``raw_prompt`` or an ``api_key`` field at all, whatever its value (the reference's rule).

Field names are normalized (camelCase to snake_case, lower case) before matching. Counters and
digests of private things (``prompt_bytes``, ``tool_output_bytes``, ``*_hash``) are fine.
Which names apply depends on the context: ``run_id`` is refused in capsules only, because the
toolkit's and CM's event logs and handoffs use their own run ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolkit.privacy.rules import LazyPattern, lazy
from toolkit.privacy.types import Category, Context

C, TL, EV, HO = Context.CAPSULE, Context.TELEMETRY, Context.EVENT_LOG, Context.HANDOFF


@dataclass(frozen=True)
class KeyRule:
    id: str
    category: Category
    pattern: LazyPattern
    contexts: frozenset[Context]
    counters_exempt: bool = True  # ``prompt_bytes``-style counters and digests are fine


_EXEMPT_SUFFIX = lazy(r"_(?:bytes|count|tokens|hash|digest|sha|length|len|size|chars|ms|bucket)$")

KEY_RULES: tuple[KeyRule, ...] = (
    KeyRule(
        "private-field-credential",
        Category.SECRET,
        lazy(
            r"(?:^|_)(?:credentials?|password|passwd|passphrase|api_?key|access_?token|refresh_?token|auth_?token|"
            r"secret|secret_?key|client_?secret|private_?key|bearer)(?:$|_)"
        ),
        frozenset({C, TL, EV, HO}),
    ),
    KeyRule(
        "private-field-transcript",
        Category.TRANSCRIPT,
        lazy(
            r"(?:^|_)(?:raw_?)?(?:transcript|prompt|chat|conversation|messages|tool_output|ambient_output|logs?|"
            r"source_body|source_code)(?:$|_)"
        ),
        frozenset({C, TL, EV, HO}),
    ),
    KeyRule(
        "private-field-session",
        Category.IDENTIFIER,
        lazy(
            r"(?:^|_)(?:session(?:_id)?|thread_id|agent_id|conversation_id|platform_handle|provider_handle|"
            r"provider_session_id)(?:$|_)"
        ),
        frozenset({C, TL, EV, HO}),
    ),
    KeyRule("private-field-session", Category.IDENTIFIER, lazy(r"(?:^|_)run_id(?:$|_)"), frozenset({C})),
    KeyRule(
        "private-field-path",
        Category.PATH,
        lazy(r"^(?:repository(?:_path)?|repo|file_path|cwd|working_directory|home_dir)$"),
        frozenset({TL}),
    ),
    KeyRule(
        "private-field-email", Category.EMAIL, lazy(r"^(?:email|account_email|user_email)$"), frozenset({TL})
    ),
    KeyRule(
        "private-field-account",
        Category.IDENTIFIER,
        lazy(r"^(?:account_id|user_id|org_id|organization_id|tenant_id|subscription_id)$"),
        frozenset({TL}),
    ),
    # The reference's telemetry field rule, whole: any ``_``-separated part of the name, counters
    # and digests included (``prompt_tokens``, ``session_id_hash``, ``repo_name``, ``owner_email``
    # are refused); only the event's own ``prompt_bytes`` and ``tool_output_bytes`` are allowed.
    KeyRule(
        "private-field-telemetry",
        Category.IDENTIFIER,
        lazy(
            r"(?:^|_)(?:prompt|source_body|source_code|log|secret|credentials?|password|passwd|api_key"
            r"|access_token|refresh_token|auth_token|platform_handle|provider_handle|session_id|thread_id"
            r"|agent_id|repository|repo|file_path|email|account_id|user_id|org_id|organization_id"
            r"|tenant_id|subscription_id)(?:$|_)"
        ),
        frozenset({TL}),
        counters_exempt=False,
    ),
)
TELEMETRY_COUNTERS = frozenset({"prompt_bytes", "tool_output_bytes"})  # the event's own fields

_CAMEL = lazy(r"(?<=[a-z0-9])(?=[A-Z])")


def normalize_key(key: str) -> str:
    """``rawPrompt`` -> ``raw_prompt``; ``Session-ID`` -> ``session_id``."""
    return re.sub(r"[^a-z0-9]+", "_", _CAMEL.sub("_", key).lower()).strip("_")


def key_findings(key: str, context: Context) -> list[KeyRule]:
    """The rules a field name breaks in ``context`` (at most one per category)."""
    name = normalize_key(key)
    if not name or (context is TL and name in TELEMETRY_COUNTERS):
        return []
    counter = _EXEMPT_SUFFIX.search(name) is not None
    hits: list[KeyRule] = []
    seen: set[Category] = set()
    for rule in KEY_RULES:
        if (counter and rule.counters_exempt) or (hits and not rule.counters_exempt):
            continue  # the reference's whole telemetry rule (last) adds to no other finding
        if context in rule.contexts and rule.category not in seen and rule.pattern.search(name):
            hits.append(rule)
            seen.add(rule.category)
    return hits
