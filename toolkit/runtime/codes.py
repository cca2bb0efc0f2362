"""Runtime error codes and their fixed messages. A message never echoes any part of the input.

The frame ``{"ok":false,"code","message"}`` is compared by callers across runtimes, so every code
the reference runtime also emits carries the reference's message word for word (tests keep the
two tables identical). ``OWN_CODES`` are ours alone: the reference never emits them.
"""

from __future__ import annotations

from toolkit.core.errors import ExitCode, ToolkitError

MESSAGES: dict[str, str] = {
    "INVALID_REQUEST": "Request must be one valid JSON object for the selected operation.",
    "REQUEST_TOO_LARGE": "Request exceeds the one-megabyte stdin limit.",
    "UNSUPPORTED_OPERATION": "Unsupported context-efficiency operation.",
    "ENVIRONMENT_ERROR": "The runtime environment could not be used.",
    "INVALID_DATE_TIME": "Date-time must use strict RFC 3339 syntax.",
    # routing and ownership
    "INVALID_OWNERSHIP_PATH": "Writer ownership paths are malformed.",
    "WRITER_SCOPE_REQUIRED": "Writer routing requires an explicit owned path.",
    "INVALID_OWNERSHIP_GLOB": "An owned glob is not a repository-relative pattern without negation.",
    "DISPATCH_FACT_MISMATCH": "Dispatch routing facts conflict with evaluated lineage facts.",
    # capsule
    "CAPSULE_SCHEMA_INVALID": "Capsule does not satisfy its schema.",
    "CAPSULE_PRIVATE_CONTENT": "Capsule rejected private or unbounded content.",
    "CAPSULE_STRING_TOO_LONG": "Capsule contains an overlong string.",
    "CAPSULE_ARTIFACT_REF_INVALID": "Capsule rejected an unsafe file reference.",
    "CAPSULE_ARTIFACT_REF_UNAUTHORIZED": "Capsule artifact path is not authorized.",
    "CAPSULE_MANDATORY_OVERFLOW": "Mandatory capsule content exceeds the configured limit.",
    # telemetry, rollout, promotion
    "PRIVATE_TELEMETRY": "Efficiency event rejected private or repository-identifying content.",
    "ACCOUNTING_SOURCE_REQUIRED": "Billed telemetry requires an accounting source.",
    "EFFICIENCY_EVENT_INVALID": "Efficiency event does not satisfy its schema or allowlists.",
    "ROLLOUT_RECOMMENDATION_REQUIRED": "Executable rollout requires a recommendation.",
    "PROMOTION_INPUT_INVALID": "The promotion input is invalid.",
    # results, vault
    "RESULT_HANDOFF_NOT_AUTHORIZED": "Durable result handoff is not authorized.",
    "RESULT_ARTIFACT_NOT_AUTHORIZED": "Artifact result persistence is not authorized.",
    "INVALID_SEVERITY": "Severity must use an allowed level.",
    "VAULT_TARGET_REQUIRED": "Vault mutation requires a stable KnowledgeId.",
    "VAULT_TARGET_AMBIGUOUS": "Vault mutation target is ambiguous.",
}

# codes the reference has no counterpart for (it would answer any unknown code with a generic text)
OWN_CODES = frozenset({"ENVIRONMENT_ERROR", "INVALID_OWNERSHIP_GLOB", "PROMOTION_INPUT_INVALID"})


class RuntimeOpError(ToolkitError):
    """Raised by a decision function; the protocol prints ``{"ok":false,"code","message"}``.

    A refused decision is a finding (exit 1), as the reference runtime answers it.
    """

    exit_code = ExitCode.FINDINGS

    def __init__(self, code: str) -> None:
        if code not in MESSAGES:
            code = "INVALID_REQUEST"
        super().__init__(code, MESSAGES[code])
