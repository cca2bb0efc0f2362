"""``should-deep-query``: is a broad vault query justified for this question? (CEO-02)

The reference keeps this library-only (``shouldDeepQuery(question)``): a deep query is
justified only for a real question, at least 12 characters once trimmed and ending in ``?``.
Its argument becomes the request object here: ``{"question": ...}``.

CEO-02 also orders the work: classification and spec reuse resolve *before* broad vault
queries. Callers may state that order explicitly with the optional booleans
``classification_resolved`` and ``spec_reuse_checked``; an explicit ``false`` defers the deep
query. Absent, they do not change the reference's answer, so its callers see the same result.

Result: ``{"should_deep_query": bool, "reason": CODE}``. Standard library only.
"""

from __future__ import annotations

from enum import StrEnum

from toolkit.core.jscompat import js_trim, utf16_len

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.promotion_types import DeepQueryAnswer

MIN_QUESTION_LENGTH = 12


class DeepQueryReason(StrEnum):
    QUESTION_REQUIRED = "QUESTION_REQUIRED"
    CLASSIFICATION_PENDING = "CLASSIFICATION_PENDING"
    SPEC_REUSE_PENDING = "SPEC_REUSE_PENDING"
    QUESTION_TOO_SHORT = "QUESTION_TOO_SHORT"
    NOT_A_QUESTION = "NOT_A_QUESTION"
    DEEP_QUERY_JUSTIFIED = "DEEP_QUERY_JUSTIFIED"


def deep_query_decision(request: Mapping[str, object]) -> tuple[bool, DeepQueryReason]:
    """The decision and the first rule that settled it."""
    question = request.get("question")
    if not isinstance(question, str):
        return False, DeepQueryReason.QUESTION_REQUIRED
    # CEO-02: cheap local resolution comes first; an explicit "not yet" defers the vault query.
    if request.get("classification_resolved") is False:
        return False, DeepQueryReason.CLASSIFICATION_PENDING
    if request.get("spec_reuse_checked") is False:
        return False, DeepQueryReason.SPEC_REUSE_PENDING
    trimmed = js_trim(question)
    if utf16_len(trimmed) < MIN_QUESTION_LENGTH:
        return False, DeepQueryReason.QUESTION_TOO_SHORT
    if not trimmed.endswith("?"):
        return False, DeepQueryReason.NOT_A_QUESTION
    return True, DeepQueryReason.DEEP_QUERY_JUSTIFIED


def should_deep_query(question: object) -> bool:
    """The reference's library function, argument for argument."""
    return deep_query_decision({"question": question})[0]


def op_should_deep_query(request: Mapping[str, object], ctx: RuntimeContext) -> DeepQueryAnswer:
    """``workgroup runtime should-deep-query``: ``{question, ...}`` -> ``{should_deep_query, reason}``."""
    decided, reason = deep_query_decision(request)
    return {"should_deep_query": decided, "reason": reason.value}
