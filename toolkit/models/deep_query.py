"""Request of ``workgroup runtime should-deep-query`` (the reference's ``shouldDeepQuery`` argument)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ShouldDeepQueryRequest(BaseModel):
    """``question`` is the reference's argument; the two booleans state CEO-02's order explicitly."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)

    question: str
    classification_resolved: bool | None = None
    spec_reuse_checked: bool | None = None
