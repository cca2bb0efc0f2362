"""Vault delta decisions (``workgroup runtime vault-delta``), standard library only.

``{input: {delta, previous_deltas?, previous_hashes?, explicit_save?, interruption_sensitive?,
severity?}}`` -> ``{action, reason}`` plus ``KnowledgeId`` for ``amend``/``update``. Rules, in
order (the reference runtime's, with its codes):

1. ``severity`` is trimmed and upper-cased; anything outside LOW/MEDIUM/HIGH/CRITICAL is
   ``INVALID_SEVERITY`` (checked before anything else).
2. Text is normalized: NFKC, lower case, every run of characters that are not letters or
   digits becomes one space, trimmed. An empty title and content with no ``supersedes`` is
   ``skip EMPTY_DELTA``.
3. The identity hash over {category, title, content, semantic_key, supersedes} found in
   ``previous_hashes`` or among the prior deltas, or the content hash over {category, title,
   content} equal to a prior delta's, is ``skip SEMANTIC_DUPLICATE``.
4. The same ``semantic_key`` as a prior delta is ``amend SEMANTIC_IDENTITY_CHANGED``; a
   ``supersedes`` equal to a prior record's KnowledgeId, or equal to a prior ``supersedes`` in
   the same category, is ``update SUPERSESSION_CHANGED``. Both need exactly one matching prior
   record carrying exactly one stable identifier (``KnowledgeId``/``knowledgeId``/
   ``knowledge_id``), which is returned; none is ``VAULT_TARGET_REQUIRED``, more than one is
   ``VAULT_TARGET_AMBIGUOUS``.
5. ``flush`` when ``explicit_save`` (EXPLICIT_SAVE), ``interruption_sensitive``
   (INTERRUPTION_SENSITIVE), severity HIGH/CRITICAL (HIGH_RISK), or category correction/
   deprecation (DURABILITY_REQUIRED); otherwise ``batch NORMAL_DELTA``.

Deliberately stricter than the reference: text fields must be strings (or null), flags must be
booleans (or null), and the lists must hold objects / strings; anything else is
``INVALID_REQUEST`` rather than a coercion.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata

from toolkit.runtime.codes import RuntimeOpError

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TypeVar

    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.op_types import SemanticDelta, VaultDeltaDecision

    T = TypeVar("T")

SEVERITIES: tuple[str, ...] = ("LOW", "MEDIUM", "HIGH", "CRITICAL")
ACTIONS: tuple[str, ...] = ("skip", "amend", "update", "flush", "batch")
REASONS: tuple[str, ...] = (
    "EMPTY_DELTA",
    "SEMANTIC_DUPLICATE",
    "SEMANTIC_IDENTITY_CHANGED",
    "SUPERSESSION_CHANGED",
    "EXPLICIT_SAVE",
    "INTERRUPTION_SENSITIVE",
    "HIGH_RISK",
    "DURABILITY_REQUIRED",
    "NORMAL_DELTA",
)
TEXT_FIELDS: tuple[str, ...] = ("category", "title", "content", "semantic_key", "supersedes")
ID_FIELDS: tuple[str, ...] = ("KnowledgeId", "knowledgeId", "knowledge_id")
DURABLE_CATEGORIES: frozenset[str] = frozenset({"correction", "deprecation"})


_ASCII_GAPS = re.compile(r"[^a-z0-9]+")


def normalize_text(value: str | None) -> str:
    """NFKC, lower case, runs of non-letter/non-digit characters -> one space, trimmed."""
    folded = unicodedata.normalize("NFKC", value or "").lower()
    if folded.isascii():
        # the common case, exact for ASCII: letters and digits are [a-z0-9] after lower()
        return _ASCII_GAPS.sub(" ", folded).strip()
    out: list[str] = []
    gap = False
    for char in folded:
        # the reference's [^\p{L}\p{N}]+: keep letters and numbers of every script
        if unicodedata.category(char)[0] in "LN":
            if gap and out:
                out.append(" ")
            out.append(char)
            gap = False
        else:
            gap = True
    return "".join(out)


def _identity(value: str | None) -> str | None:
    # supersedes names a record, so only NFKC and trimming apply (case and punctuation matter)
    if not isinstance(value, str):
        return None
    return unicodedata.normalize("NFKC", value).strip() or None


def _check_delta(delta: object) -> Mapping[str, object]:
    """The delta (an absent one is empty) once its text fields are strings or null."""
    if delta is None:
        return {}
    if not isinstance(delta, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    for key in TEXT_FIELDS:
        if delta.get(key) is not None and not isinstance(delta[key], str):
            raise RuntimeOpError("INVALID_REQUEST")
    return delta


def _text(delta: Mapping[str, object], key: str) -> str | None:
    # the text fields of a delta that _check_delta passed are strings or null
    value = delta.get(key)
    return value if isinstance(value, str) else None


def semantic_delta(delta: Mapping[str, object]) -> SemanticDelta:
    """The normalized semantic view of a delta (the part that identifies its meaning)."""
    return {
        "category": normalize_text(_text(delta, "category")) or None,
        "title": normalize_text(_text(delta, "title")),
        "content": normalize_text(_text(delta, "content")),
        "semantic_key": normalize_text(_text(delta, "semantic_key")) or None,
        "supersedes": _identity(_text(delta, "supersedes")),
    }


def _sha256_hex(value: Mapping[str, object]) -> str:
    # flat {str: str|None}: sorted compact JSON with raw UTF-8 is exactly the reference's bytes
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _identity_hash(semantic: SemanticDelta) -> str:
    return _sha256_hex(semantic)


def _content_view(semantic: SemanticDelta) -> tuple[str | None, ...]:
    return (semantic["category"], semantic["title"], semantic["content"])


def _content_hash(semantic: SemanticDelta) -> str:
    # hashed as sorted JSON: the order written here does not reach the digest
    return _sha256_hex(
        {"category": semantic["category"], "title": semantic["title"], "content": semantic["content"]}
    )


def delta_hash(delta: Mapping[str, object]) -> str:
    """Hex SHA-256 of the canonical semantic identity (what ``previous_hashes`` holds)."""
    return _identity_hash(semantic_delta(delta))


def stable_knowledge_id(record: Mapping[str, object]) -> str | None:
    """The record's one stable identifier; two identifier fields at once are ambiguous."""
    ids = [v.strip() for v in (record.get(k) for k in ID_FIELDS) if isinstance(v, str) and v.strip()]
    if len(ids) > 1:
        raise RuntimeOpError("VAULT_TARGET_AMBIGUOUS")
    return ids[0] if ids else None


def _mutation(action: str, reason: str, matches: list[Mapping[str, object]]) -> VaultDeltaDecision:
    identities = {i for i in (stable_knowledge_id(m) for m in matches) if i}
    if not identities:
        raise RuntimeOpError("VAULT_TARGET_REQUIRED")
    if len(identities) != 1 or len(matches) != 1:
        raise RuntimeOpError("VAULT_TARGET_AMBIGUOUS")
    return {"action": action, "reason": reason, "KnowledgeId": identities.pop()}


def parse_severity(value: object) -> str | None:
    """A vault severity (one of SEVERITIES, any case, surrounding blanks ignored) or None;
    INVALID_SEVERITY otherwise. The one severity parser: the journal stores what it returns."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise RuntimeOpError("INVALID_SEVERITY")
    severity = value.strip().upper()
    if severity not in SEVERITIES:
        raise RuntimeOpError("INVALID_SEVERITY")
    return severity


def _flag(facts: Mapping[str, object], key: str) -> bool:
    value = facts.get(key)
    if value is not None and not isinstance(value, bool):
        raise RuntimeOpError("INVALID_REQUEST")
    return value is True


def _list_of(facts: Mapping[str, object], key: str, kind: type[T]) -> list[T]:
    value = facts.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise RuntimeOpError("INVALID_REQUEST")
    items = [v for v in value if isinstance(v, kind)]
    if len(items) != len(value):
        raise RuntimeOpError("INVALID_REQUEST")
    return items


def evaluate_vault_delta(input: Mapping[str, object]) -> VaultDeltaDecision:  # noqa: A002 - the reference's name
    """Decide what to do with one knowledge delta (pure; raises RuntimeOpError)."""
    if not isinstance(input, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    severity = parse_severity(input.get("severity"))
    explicit_save = _flag(input, "explicit_save")
    interruption_sensitive = _flag(input, "interruption_sensitive")
    delta = _check_delta(input.get("delta"))
    prior = [_check_delta(d) for d in _list_of(input, "previous_deltas", dict)]
    previous_hashes = set(_list_of(input, "previous_hashes", str))

    semantic = semantic_delta(delta)
    if not semantic["title"] and not semantic["content"] and semantic["supersedes"] is None:
        return {"action": "skip", "reason": "EMPTY_DELTA"}
    against_prior = _against_prior(semantic, prior, previous_hashes)
    if against_prior is not None:
        return against_prior
    reason = _flush_reason(explicit_save, interruption_sensitive, severity, semantic["category"])
    if reason is not None:
        return {"action": "flush", "reason": reason}
    return {"action": "batch", "reason": "NORMAL_DELTA"}


def _flush_reason(
    explicit_save: bool, interruption_sensitive: bool, severity: str | None, category: str | None
) -> str | None:
    """Why new knowledge must be flushed now rather than batched (the first rule that applies:
    an explicit save, interruption sensitivity, a high risk, a durable category), or None."""
    if explicit_save:
        return "EXPLICIT_SAVE"
    if interruption_sensitive:
        return "INTERRUPTION_SENSITIVE"
    if severity in ("HIGH", "CRITICAL"):
        return "HIGH_RISK"
    if category in DURABLE_CATEGORIES:
        return "DURABILITY_REQUIRED"
    return None


def _against_prior(
    semantic: SemanticDelta, prior: list[Mapping[str, object]], previous_hashes: set[str]
) -> VaultDeltaDecision | None:
    """Skip a duplicate, amend the record of the same semantic key, update a superseded one;
    None when the delta is new knowledge."""
    # each prior record is normalized once; every rule below reads these views
    views = [semantic_delta(p) for p in prior]
    if _is_duplicate(semantic, views, previous_hashes):
        return {"action": "skip", "reason": "SEMANTIC_DUPLICATE"}
    key = semantic["semantic_key"]
    same_key = [p for p, v in zip(prior, views, strict=True) if key and v["semantic_key"] == key]
    if same_key:
        return _mutation("amend", "SEMANTIC_IDENTITY_CHANGED", same_key)
    return _supersession_update(semantic, prior, views)


def _supersession_update(
    semantic: SemanticDelta, prior: list[Mapping[str, object]], views: list[SemanticDelta]
) -> VaultDeltaDecision | None:
    """An update of the prior records a superseding delta replaces; None when the delta
    supersedes nothing or no prior record matches."""
    if not semantic["supersedes"]:
        return None
    superseded = [p for p, v in zip(prior, views, strict=True) if _supersession_match(semantic, p, v)]
    return _mutation("update", "SUPERSESSION_CHANGED", superseded) if superseded else None


def _is_duplicate(semantic: SemanticDelta, views: list[SemanticDelta], previous_hashes: set[str]) -> bool:
    """The delta's identity hash is one the caller passed, or its content equals a prior record's."""
    # equal normalized views have equal hashes, so prior records are compared by value and only
    # caller-supplied hashes need the digest (same decisions, no hashing per prior record)
    if previous_hashes and _identity_hash(semantic) in previous_hashes:
        return True
    content = _content_view(semantic)
    return any(_content_view(v) == content for v in views)  # an identity match is a content match too


def _supersession_match(
    semantic: SemanticDelta, record: Mapping[str, object], previous: SemanticDelta
) -> bool:
    if semantic["supersedes"] == stable_knowledge_id(record):
        return True
    return semantic["supersedes"] == previous["supersedes"] and semantic["category"] == previous["category"]


def op_vault_delta(request: Mapping[str, object], ctx: RuntimeContext) -> VaultDeltaDecision:
    """``workgroup runtime vault-delta``: ``{input}`` -> ``{action, reason, KnowledgeId?}``."""
    facts = request.get("input")
    if not isinstance(facts, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    return evaluate_vault_delta(facts)
