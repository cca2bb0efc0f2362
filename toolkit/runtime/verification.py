"""Verification tiers (``workgroup runtime verification-plan``), standard library only.

The request is the reference library function's argument, ``verificationPlan(input)``:
``{tier, production_changed_after_full_green?}`` -> ``{checks, consolidated_required,
artifact_logs}``.

* ``tdd``: inside a red-green loop, only the narrowest ``targeted`` check.
* ``microtask``: at microtask completion, the ``affected-surface`` checks.
* ``gate3``: before Gate 3, the consolidated set: full tests, static analysis, build, package,
  install smoke.
* ``audit-fix``: targeted checks, plus the consolidated set only when production code changed
  after the last full green run.

``artifact_logs`` is always true: full logs go to artifacts and follow-up workers get summaries.
An unknown tier, or a non-boolean ``production_changed_after_full_green``, is ``INVALID_REQUEST``.
"""

from __future__ import annotations

from toolkit.runtime.codes import RuntimeOpError

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.promotion_types import VerificationPlan

TIERS: tuple[str, ...] = ("tdd", "microtask", "gate3", "audit-fix")
CONSOLIDATED_CHECKS: tuple[str, ...] = ("full-tests", "static-analysis", "build", "package", "install-smoke")


def verification_plan(tier: object, production_changed_after_full_green: object = None) -> VerificationPlan:
    """The checks to run at one point of the workflow (pure; raises RuntimeOpError)."""
    if production_changed_after_full_green is not None and not isinstance(
        production_changed_after_full_green, bool
    ):
        raise RuntimeOpError("INVALID_REQUEST")
    consolidated = False
    if tier == "tdd":
        checks = ["targeted"]
    elif tier == "microtask":
        checks = ["affected-surface"]
    elif tier == "gate3":
        checks, consolidated = list(CONSOLIDATED_CHECKS), True
    elif tier == "audit-fix":
        consolidated = production_changed_after_full_green is True
        checks = ["targeted", *CONSOLIDATED_CHECKS] if consolidated else ["targeted"]
    else:
        raise RuntimeOpError("INVALID_REQUEST")
    return {"checks": checks, "consolidated_required": consolidated, "artifact_logs": True}


def op_verification_plan(request: Mapping[str, object], ctx: RuntimeContext) -> VerificationPlan:
    """``workgroup runtime verification-plan``: ``{tier, production_changed_after_full_green?}``."""
    return verification_plan(request.get("tier"), request.get("production_changed_after_full_green"))
