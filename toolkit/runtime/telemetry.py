"""Efficiency events: ``knowzcode.efficiency-event/v1`` normalization (stdlib only).

The three namespaces stay apart: ``logical`` (context occupancy and sizes), ``billed`` (what
the provider charged, only with an authoritative or provider-reported accounting source) and
``outcome``. The raw event is refused when a field name or a string value anywhere in it (dropped fields
included, as the reference scans the raw event first) is private to the shared privacy engine
in its telemetry context (``PRIVATE_TELEMETRY``), then projected onto the allowlist: unknown keys are dropped, missing
counters become ``null``, reason codes are deduplicated and put in the router's order. Unlike the
reference, the dropped keys are reported (``normalize_event`` returns them; the op returns them
when asked with ``"report_dropped": true``) instead of vanishing silently.
"""

from __future__ import annotations

import math
import re

from toolkit.core.timefmt import is_rfc3339
from toolkit.privacy import Context, scan_text
from toolkit.privacy.keys import key_findings
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.rollout import ANONYMOUS_CORPUS_ID
from toolkit.runtime.vocabulary import MODES, REASON_CODES

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Collection, Mapping
    from typing import Any

    from toolkit.core.jsontypes import JsonObject
    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.op_types import Measure

SCHEMA = "knowzcode.efficiency-event/v1"
EVENTS: tuple[str, ...] = (
    "dispatch_decision",
    "worker_usage",
    "worker_completed",
    "verification_run",
    "vault_operation",
    "budget_transition",
    "gate_outcome",
    "lineage_invalidated",
)
PROVIDERS: tuple[str, ...] = ("claude", "codex", "other")
RUNTIMES: tuple[str, ...] = ("cli", "mcp", "api", "desktop", "plugin", "unknown")
MODEL_LABELS: tuple[str, ...] = (
    "unknown",
    "opus",
    "sonnet",
    "haiku",
    "fable",
    "gpt-5",
    "gpt-5.6-sol",
    "gpt-5.6-terra",
)
PROFILES: tuple[str, ...] = ("quality", "balanced", "economy", "latency")
ACCOUNTING_SOURCES: tuple[str, ...] = ("authoritative", "provider-reported", "estimated", "unknown")
BILLABLE_SOURCES = frozenset({"authoritative", "provider-reported"})

# namespace -> field -> kind ("int", "num", "bool")
LOGICAL: dict[str, str] = {
    "estimated_context_occupancy": "num",
    "compaction_count": "int",
    "repeated_file_reads": "int",
    "prompt_bytes": "int",
    "tool_output_bytes": "int",
    "capsule_bytes": "int",
}
BILLED_COUNTERS: dict[str, str] = {
    "uncached_input_tokens": "int",
    "cache_creation_input_tokens": "int",
    "cache_read_input_tokens": "int",
    "output_tokens": "int",
    "amount": "num",
}
OUTCOME: dict[str, str] = {
    "accepted_workgroup": "bool",
    "verify_passed": "int",
    "verify_total": "int",
    "audit_score": "num",
    "rework_rounds": "int",
    "escaped_high_critical": "int",
    "elapsed_ms": "int",
}
TOP_LEVEL = (
    "schema",
    "event",
    "observed_at",
    "task_corpus_id",
    "provider",
    "runtime",
    "model",
    "profile",
    "mode",
    "reason_codes",
    "logical",
    "billed",
    "outcome",
)
BILLED_KEYS = (*BILLED_COUNTERS, "currency", "units", "accounting_source")

_PRIVATE_KEY = re.compile(
    r"(^|_)(prompt|prompt_body|raw_prompt|source_body|source_code|log|log_body|secret|credential|credentials"
    r"|password|passwd|api_key|access_token|refresh_token|auth_token|platform_handle|provider_handle"
    r"|provider_session_id|session_id|thread_id|agent_id|repository|repository_path|repo|file_path|email"
    r"|account_id|account_email|user_id|org_id|organization_id|tenant_id|subscription_id)($|_)",
    re.IGNORECASE,
)
# JavaScript's \s is Unicode-aware while its \b is ASCII-only; ASCII mode plus this class matches both.
_WS = "[\\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
_NWS = "[^\\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
_PRIVATE_VALUE = re.compile(
    "|".join(
        [
            rf"Bearer{_WS}+[A-Za-z0-9._~+/-]+=*",
            r"\b(?:sk|rk|pk)-(?:live|test)?_?[A-Za-z0-9_-]{8,}",
            r"\bgh[pousr]_[A-Za-z0-9]{12,}",
            r"\bglpat-[A-Za-z0-9_-]{12,}",
            r"\bxox[baprs]-[A-Za-z0-9-]{10,}",
            r"\bAKIA[0-9A-Z]{16}\b",
            r"-----BEGIN [A-Z ]+PRIVATE KEY-----",
            r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b",
            rf"\b(?:password|passwd|api[_-]?key|access[_-]?token|refresh[_-]?token|secret){_WS}*[:=]{_WS}*{_NWS}{{4,}}",
            r"\b(?:thread|session|sess|run)[_-][A-Za-z0-9-]{8,}\b",
            rf"\bhttps?://{_NWS}+",
            rf"""(?:^|{_WS[:-1]}"'(])(?:/Users/|/home/|[A-Za-z]:\\|\.\.?/){_NWS[:-1]}"')]+""",
            r"\b[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,}\b",
            r"\b(?:repo(?:sitory)?|project)[-_][A-Za-z0-9][A-Za-z0-9._-]{2,}\b",
        ]
    ),
    re.IGNORECASE | re.ASCII,
)
_ANON_MODEL = re.compile(r"^anon-model-[a-f0-9]{16,64}\Z")
_CURRENCY = re.compile(r"^[A-Z]{3}\Z")
_REASON_ORDER = {code: index for index, code in enumerate(REASON_CODES)}
_MAX_DEPTH = 64


_MAX_KEPT_CHARS = 4096  # every kept string is an enum, a timestamp or an anonymous id
_KEY_VERDICTS: dict[str, bool] = {}


def _key_is_private(key: str) -> bool:
    verdict = _KEY_VERDICTS.get(key)
    if verdict is None:
        verdict = bool(key_findings(key, Context.TELEMETRY))
        if len(_KEY_VERDICTS) < 4096:
            _KEY_VERDICTS[key] = verdict
    return verdict


def _names_and_strings(value: object) -> tuple[bool, list[str]]:
    """(a private field name occurs, every string value) of the raw event: the whole event,
    dropped fields included, iteratively and depth-bounded."""
    stack: list[tuple[object, int]] = [(value, 0)]
    texts: list[str] = []
    while stack:
        node, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
        if isinstance(node, str):
            texts.append(node)
        elif isinstance(node, dict):
            for key, child in node.items():
                if isinstance(key, str) and _key_is_private(key):
                    return True, texts
                stack.append((child, depth + 1))
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)
    return False, texts


def _kept_strings(event: Mapping[str, object]) -> list[str]:
    """The strings of the fields the projection keeps (top level and the three namespaces)."""
    allowed = {"logical": LOGICAL, "billed": BILLED_KEYS, "outcome": OUTCOME}
    texts: list[str] = []
    for key in TOP_LEVEL:
        value = event.get(key)
        if key in allowed and isinstance(value, dict):
            texts.extend(_namespace_strings(value, allowed[key]))
        elif isinstance(value, str):
            texts.append(value)
        elif isinstance(value, list):
            texts.extend(v for v in value if isinstance(v, str))
    return texts


def _namespace_strings(namespace: Mapping[str, object], kept: Collection[str]) -> list[str]:
    """The string values of the namespace fields the projection keeps."""
    return [v for k, v in namespace.items() if k in kept and isinstance(v, str)]


def assert_private_free(event: Mapping[str, object]) -> None:
    """``PRIVATE_TELEMETRY`` when a field name or a string value anywhere in the raw event is
    private to the shared engine (telemetry context), as the reference scans the raw event
    before its projection drops fields: a private note in a dropped field is refused, not
    silently dropped. The work is bounded by the request limit (1 MB) and the engine's linear
    rules; strings are scanned as one text. Kept values are short by construction
    (``_MAX_KEPT_CHARS`` each)."""
    private_name, texts = _names_and_strings(event)
    if private_name:
        raise RuntimeOpError("PRIVATE_TELEMETRY")
    if any(len(text) > _MAX_KEPT_CHARS for text in _kept_strings(event)):
        raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
    if not texts:
        return
    if scan_text("\n".join(texts), Context.TELEMETRY):
        raise RuntimeOpError("PRIVATE_TELEMETRY")


def _namespace(event: Mapping[str, object], name: str) -> Mapping[str, object]:
    value = event.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
    return value


def _counter(value: object, kind: str) -> Measure:
    """Validate one nullable measure; integral floats become ints, as JSON numbers in JS do."""
    if value is None:
        return None
    if kind == "bool":
        if not isinstance(value, bool):
            raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
        return value
    number = _js_number(value)
    if number < 0 or (kind == "int" and not isinstance(number, int)):
        raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
    return number


def _js_number(value: object) -> int | float:
    """A finite JSON number (never a boolean), integral floats below 2**53 as ints."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
    return value


def _choice(value: object, allowed: tuple[str, ...]) -> str | None:
    """One of ``allowed`` or null."""
    return None if value is None else _one_of(value, allowed)


def _one_of(value: object, allowed: tuple[str, ...]) -> str:
    """One of ``allowed`` (null is not)."""
    if not isinstance(value, str) or value not in allowed:
        raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
    return value


def _model(value: object) -> str | None:
    if value is None or (isinstance(value, str) and (value in MODEL_LABELS or _ANON_MODEL.match(value))):
        return value
    raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")


def _reasons(value: object) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(
        isinstance(code, str) and code in _REASON_ORDER for code in value
    ):
        raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
    return sorted(set(value), key=_REASON_ORDER.__getitem__)


def _check_accounting(billed: Mapping[str, object]) -> None:
    values = [billed.get(key) for key in (*BILLED_COUNTERS, "units")]
    if any(value is not None for value in values) and billed.get("accounting_source") not in BILLABLE_SOURCES:
        raise RuntimeOpError("ACCOUNTING_SOURCE_REQUIRED")


def _dropped(event: Mapping[str, object], namespaces: Mapping[str, Mapping[str, object]]) -> list[str]:
    dropped = [key for key in event if key not in TOP_LEVEL]
    allowed = {"logical": LOGICAL, "billed": BILLED_KEYS, "outcome": OUTCOME}
    for name, data in namespaces.items():
        dropped.extend(f"{name}.{key}" for key in data if key not in allowed[name])
    return sorted(dropped)


def normalize_event(event: object) -> tuple[dict[str, Any], list[str]]:
    """Project a raw event onto ``knowzcode.efficiency-event/v1``; returns (event, dropped key paths).

    Raises ``RuntimeOpError`` with ``PRIVATE_TELEMETRY``, ``ACCOUNTING_SOURCE_REQUIRED`` or
    ``EFFICIENCY_EVENT_INVALID`` (``INVALID_REQUEST`` when the event is not an object).
    """
    if not isinstance(event, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    assert_private_free(event)
    spaces = {name: _namespace(event, name) for name in ("logical", "billed", "outcome")}
    billed_in = spaces["billed"]
    _check_accounting(billed_in)
    observed_at, task_id, currency = _checked_formats(event, billed_in)
    name = _one_of(event.get("event"), EVENTS)
    provider = _one_of(event.get("provider"), PROVIDERS)
    runtime = _choice(event.get("runtime"), RUNTIMES)
    model = _model(event.get("model"))
    profile = _choice(event.get("profile"), PROFILES)
    mode = _choice(event.get("mode"), MODES)
    reasons = _reasons(event.get("reason_codes"))
    logical = {key: _counter(spaces["logical"].get(key), kind) for key, kind in LOGICAL.items()}
    billed = _normalized_billed(billed_in, currency)
    outcome = {key: _counter(spaces["outcome"].get(key), kind) for key, kind in OUTCOME.items()}
    _check_event_rules(name, mode, reasons, outcome)
    # the event leaves as JSON (the answer, the telemetry log, spans), in the schema's key order
    normalized: dict[str, Any] = {
        "schema": SCHEMA,
        "event": name,
        "observed_at": observed_at,
        "task_corpus_id": task_id,
        "provider": provider,
        "runtime": runtime,
        "model": model,
        "profile": profile,
        "mode": mode,
        "reason_codes": reasons,
        "logical": logical,
        "billed": billed,
        "outcome": outcome,
    }
    return normalized, _dropped(event, spaces)


def _checked_formats(
    event: Mapping[str, object], billed: Mapping[str, object]
) -> tuple[str, str | None, str | None]:
    """(observed_at, task_corpus_id, currency) once each has its format: an RFC 3339 time, an
    anonymous corpus id or null, a currency code or null."""
    observed_at = event.get("observed_at")
    if not isinstance(observed_at, str) or not is_rfc3339(observed_at):
        raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
    task_id = event.get("task_corpus_id")
    if task_id is not None and not (isinstance(task_id, str) and ANONYMOUS_CORPUS_ID.match(task_id)):
        raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
    currency = billed.get("currency")
    if currency is not None and not (isinstance(currency, str) and _CURRENCY.match(currency)):
        raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
    return observed_at, task_id, currency


def _normalized_billed(billed: Mapping[str, object], currency: str | None) -> dict[str, Measure | str]:
    """The billed namespace: its counters, the checked currency, the units and the accounting
    source (``unknown`` when absent)."""
    source = billed.get("accounting_source")
    return {
        **{key: _counter(billed.get(key), kind) for key, kind in BILLED_COUNTERS.items()},
        "currency": currency,
        "units": _counter(billed.get("units"), "num"),
        "accounting_source": "unknown" if source is None else _one_of(source, ACCOUNTING_SOURCES),
    }


def _check_event_rules(
    name: str, mode: str | None, reasons: list[str], outcome: Mapping[str, Measure]
) -> None:
    """The rules across fields: a dispatch decision names its mode and reasons; no more checks
    passed than run; an audit score of at most 100."""
    if name == "dispatch_decision" and (mode is None or not reasons):
        raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
    passed, total = outcome["verify_passed"], outcome["verify_total"]
    if passed is not None and total is not None and passed > total:
        raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")
    score = outcome["audit_score"]
    if score is not None and score > 100:
        raise RuntimeOpError("EFFICIENCY_EVENT_INVALID")


def op_telemetry(request: Mapping[str, object], ctx: RuntimeContext) -> JsonObject:
    """``workgroup runtime telemetry``: ``{"event": {...}}`` -> the normalized event.

    With ``"report_dropped": true`` the result is ``{"event": ..., "dropped_keys": [...]}``.
    """
    event, dropped = normalize_event(request.get("event"))
    if request.get("report_dropped") is True:
        return {"event": event, "dropped_keys": dropped}
    return event
