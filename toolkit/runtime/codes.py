"""Runtime error codes and their fixed messages. A message never echoes any part of the input."""

from __future__ import annotations

from toolkit.core.errors import ExitCode, ToolkitError

MESSAGES: dict[str, str] = {
    "INVALID_REQUEST": "Request must be one valid JSON object for the selected operation.",
    "REQUEST_TOO_LARGE": "Request exceeds the one-megabyte stdin limit.",
    "UNSUPPORTED_OPERATION": "Unsupported context-efficiency operation.",
    "ENVIRONMENT_ERROR": "The runtime environment could not be used.",
    "INVALID_DATE_TIME": "A date-time value is not strict RFC 3339.",
    # routing and ownership
    "INVALID_OWNERSHIP_PATH": "An owned path is not a canonical repository-relative path.",
    "WRITER_SCOPE_REQUIRED": "A writer must own at least one path.",
    "INVALID_OWNERSHIP_GLOB": "An owned glob is not a repository-relative pattern without negation.",
    "DISPATCH_FACT_MISMATCH": "Routing facts conflict with the lineage facts.",
    # capsule
    "CAPSULE_SCHEMA_INVALID": "The capsule does not match the capsule schema.",
    "CAPSULE_PRIVATE_CONTENT": "The capsule contains private content.",
    "CAPSULE_STRING_TOO_LONG": "A capsule string exceeds the maximum length.",
    "CAPSULE_ARTIFACT_REF_INVALID": "A capsule path is not a portable repository-relative path.",
    "CAPSULE_ARTIFACT_REF_UNAUTHORIZED": (
        "A capsule artifact reference is outside the authorized artifact root."
    ),
    "CAPSULE_MANDATORY_OVERFLOW": "The capsule exceeds the size limit without optional evidence.",
    # telemetry, rollout, promotion
    "PRIVATE_TELEMETRY": "The telemetry event contains private content.",
    "ACCOUNTING_SOURCE_REQUIRED": "Billed values require an authoritative accounting source.",
    "EFFICIENCY_EVENT_INVALID": "The efficiency event is invalid.",
    "ROLLOUT_RECOMMENDATION_REQUIRED": "An executing rollout stage requires a recommendation.",
    "PROMOTION_INPUT_INVALID": "The promotion input is invalid.",
    # results, vault
    "RESULT_HANDOFF_NOT_AUTHORIZED": "The result requires a handoff that is not authorized.",
    "RESULT_ARTIFACT_NOT_AUTHORIZED": "The result requires an artifact that is not authorized.",
    "INVALID_SEVERITY": "The severity is not in the closed vocabulary.",
    "VAULT_TARGET_REQUIRED": "The vault mutation requires exactly one prior record with a stable identifier.",
    "VAULT_TARGET_AMBIGUOUS": "The vault mutation matches more than one prior record.",
}


class RuntimeOpError(ToolkitError):
    """Raised by a decision function; the protocol prints ``{"ok":false,"code","message"}``.

    A refused decision is a finding (exit 1), as the reference runtime answers it.
    """

    exit_code = ExitCode.FINDINGS

    def __init__(self, code: str) -> None:
        if code not in MESSAGES:
            code = "INVALID_REQUEST"
        super().__init__(code, MESSAGES[code])
