"""The runtime's operations, declared once: one ``Op`` entry per verb of ``workgroup runtime OP``.

Everything that lists the operations derives from ``OPS``: the protocol's dispatch table and usage
line (``toolkit.runtime.protocol``), the decisions live mode emits, the request schemas exported to
``schemas/``, the operations table in docs/runtime.md (``ops_table``; a test compares it) and the
parametrized protocol and fuzz tests. The function is named by ``"module:function"`` and imported
on first use only, so listing the operations costs nothing at start-up (the runtime path stays
standard-library only). docs/contributing.md has the recipe for a new operation.
"""

from __future__ import annotations

# What the protocol itself answers, whatever the operation: a malformed or oversized request, an
# unknown verb, an environment that cannot be used (an OSError, a repository that cannot be read).
PROTOCOL_CODES: tuple[str, ...] = (
    "INVALID_REQUEST",
    "REQUEST_TOO_LARGE",
    "UNSUPPORTED_OPERATION",
    "ENVIRONMENT_ERROR",
)


class Op:
    """One operation of the decision runtime (a plain class: dataclasses would cost the runtime
    path 5 ms of imports at every start)."""

    __slots__ = ("name", "function", "summary", "codes", "request_schema", "live")

    def __init__(
        self,
        *,
        name: str,  # the verb: ``workgroup runtime NAME``
        function: str,  # ``"module:function"``; called as ``function(request, ctx)``, returns the result
        summary: str,  # one line: what the operation decides
        codes: tuple[str, ...] = (),  # codes it may answer beyond PROTOCOL_CODES (all in codes.MESSAGES)
        request_schema: str | None = None,  # its request's schema file (toolkit.models.registry), if any
        live: bool = False,  # a decision that live mode (``telemetry: otlp``) emits as a span
    ) -> None:
        self.name = name
        self.function = function
        self.summary = summary
        self.codes = codes
        self.request_schema = request_schema
        self.live = live

    @property
    def module(self) -> str:
        return self.function.partition(":")[0]

    def __repr__(self) -> str:
        return f"Op(name={self.name!r}, function={self.function!r})"


OPS: tuple[Op, ...] = (
    Op(
        name="route",
        function="toolkit.runtime.router:op_route",
        summary="the dispatch mode and reason code of one delegated microtask",
        codes=("INVALID_OWNERSHIP_GLOB", "INVALID_OWNERSHIP_PATH", "WRITER_SCOPE_REQUIRED"),
        request_schema="route-request.schema.json",
        live=True,
    ),
    Op(
        name="lineage",
        function="toolkit.runtime.lineage:op_lineage",
        summary="whether a lineage may be resumed or inherited: HOT, COLD_VALID, RECONCILE_REQUIRED, INVALID",
        codes=("INVALID_DATE_TIME",),
    ),
    Op(
        name="capsule",
        function="toolkit.runtime.capsule:op_capsule",
        summary="a context capsule validated, privacy-checked, bounded and hashed (the fail-closed pipeline)",
        codes=(
            "CAPSULE_ARTIFACT_REF_INVALID",
            "CAPSULE_ARTIFACT_REF_UNAUTHORIZED",
            "CAPSULE_MANDATORY_OVERFLOW",
            "CAPSULE_PRIVATE_CONTENT",
            "CAPSULE_SCHEMA_INVALID",
            "CAPSULE_STRING_TOO_LONG",
            "INVALID_OWNERSHIP_PATH",
        ),
    ),
    Op(
        name="telemetry",
        function="toolkit.runtime.telemetry:op_telemetry",
        summary="an efficiency event checked: logical, billed and outcome measures apart, nothing private",
        codes=(
            "ACCOUNTING_SOURCE_REQUIRED",
            "EFFICIENCY_EVENT_INVALID",
            "PRIVATE_TELEMETRY",
            "ROLLOUT_RECOMMENDATION_REQUIRED",
        ),
    ),
    Op(
        name="rollout",
        function="toolkit.runtime.rollout:op_rollout",
        summary="the rollout stage of a task (off, shadow, canary, on) and whether its recommendation executes",
        codes=("ROLLOUT_RECOMMENDATION_REQUIRED",),
    ),
    Op(
        name="result-policy",
        function="toolkit.runtime.result_policy:op_result_policy",
        summary="where a result goes: bounded summary, recoverable handoff, authorized artifact, or nothing",
        codes=("RESULT_ARTIFACT_NOT_AUTHORIZED", "RESULT_HANDOFF_NOT_AUTHORIZED"),
    ),
    Op(
        name="vault-delta",
        function="toolkit.runtime.vault_delta:op_vault_delta",
        summary="a vault capture as a delta: skip, create or amend under one stable identity",
        codes=("INVALID_SEVERITY", "VAULT_TARGET_AMBIGUOUS", "VAULT_TARGET_REQUIRED"),
    ),
    Op(
        name="dispatch",
        function="toolkit.runtime.dispatch:op_dispatch",
        summary="lineage, then routing, rollout and result policy combined into one decision",
        codes=(
            "DISPATCH_FACT_MISMATCH",
            "INVALID_DATE_TIME",
            "INVALID_OWNERSHIP_GLOB",
            "INVALID_OWNERSHIP_PATH",
            "RESULT_ARTIFACT_NOT_AUTHORIZED",
            "RESULT_HANDOFF_NOT_AUTHORIZED",
            "ROLLOUT_RECOMMENDATION_REQUIRED",
            "WRITER_SCOPE_REQUIRED",
        ),
        live=True,
    ),
    Op(
        name="budget",
        function="toolkit.runtime.budget:op_budget",
        summary="the budget tier of used against limit (NORMAL, SOFT, CHECKPOINT, HARD) and its actions",
        request_schema="budget-request.schema.json",
    ),
    Op(
        name="verification-plan",
        function="toolkit.runtime.verification:op_verification_plan",
        summary="which checks run now: targeted inside fix loops, consolidated before Gate 3",
        request_schema="verification-plan-request.schema.json",
    ),
    Op(
        name="promotion",
        function="toolkit.runtime.promotion:op_promotion",
        summary="whether signed, replay-checked paired results promote a candidate",
        codes=("INVALID_DATE_TIME", "PROMOTION_INPUT_INVALID", "ROLLOUT_RECOMMENDATION_REQUIRED"),
        request_schema="promotion-request.schema.json",
    ),
    Op(
        name="should-deep-query",
        function="toolkit.runtime.deep_query:op_should_deep_query",
        summary="whether a broad vault query is justified yet",
        request_schema="should-deep-query-request.schema.json",
    ),
)

BY_NAME: dict[str, Op] = {op.name: op for op in OPS}


def ops_table() -> str:
    """The operations table of docs/runtime.md (Markdown), generated from ``OPS``."""
    rows = ["| operation | decides | codes beyond the protocol's | request schema |", "|---|---|---|---|"]
    for op in OPS:
        codes = ", ".join(f"`{c}`" for c in op.codes) or "none"
        schema = f"`schemas/{op.request_schema}`" if op.request_schema else "none"
        rows.append(f"| `{op.name}` | {op.summary} | {codes} | {schema} |")
    return "\n".join(rows) + "\n"
