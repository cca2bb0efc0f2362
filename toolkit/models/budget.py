"""Request models of the ``budget`` and ``verification-plan`` runtime operations.

They document (and export to ``schemas/``) the reference library functions' arguments, which
are these operations' request objects: ``evaluateBudget(used, limit)`` and
``verificationPlan({tier, production_changed_after_full_green})``. The runtime itself validates
with the standard library (``toolkit.runtime.budget`` / ``toolkit.runtime.verification``);
these models must accept exactly what those functions accept.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class BudgetRequest(BaseModel):
    """``{used, limit, kind?}``: the ratio used/limit picks NORMAL/SOFT/CHECKPOINT/HARD."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    used: float | None = Field(
        default=None, ge=0, allow_inf_nan=False, description="Consumption so far; required when limit is set."
    )
    limit: float | None = Field(
        default=None, gt=0, allow_inf_nan=False, description="The budget; null or absent means UNBOUNDED."
    )
    kind: Literal["efficiency", "safety", "authentication"] | None = Field(
        default=None,
        description="efficiency (default) checkpoints and falls back; safety/authentication pause when hit.",
    )


class VerificationPlanRequest(BaseModel):
    """``{tier, production_changed_after_full_green?}``: which checks run at this point."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tier: Literal["tdd", "microtask", "gate3", "audit-fix"]
    production_changed_after_full_green: bool | None = Field(
        default=None, description="audit-fix only: production code changed after the last full green run."
    )
