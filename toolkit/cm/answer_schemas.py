"""Compact-output schemas per role and the checker for a role's answer.

Each role returns its decision artifact as one JSON object with a closed set of keys, never a
narration. Failures keep the failure rule: exit code, failing case or command, first actionable
error and evidence path. Findings carry fixed messages and JSON paths, never answer content.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

TYPE_CHECKING = False  # type checkers read True
if TYPE_CHECKING:
    from toolkit.core.jsontypes import JsonObject

ROLES: tuple[str, ...] = ("analyst", "planner", "coder", "tester", "reviewer", "browser_qa")
MAX_ANSWER_BYTES = 64 * 1024
MAX_TEXT = 2000

# Top-level keys per role, in the order the role should emit them (reviewer: findings first).
SHAPES: dict[str, dict[str, str]] = {
    "analyst": {
        "deltas": "list of strings",
        "decisions": "list of strings",
        "open_questions": "list of strings",
        "mappings": "list of {ac, task}",
    },
    "coder": {
        "changed_paths": "list of repository-relative paths",
        "verification": "list of {command, exit_code, first_error?, evidence_path?}",
        "blockers": "list of strings",
        "scope_deviation": "string or null",
    },
    "tester": {
        "case_verdicts": "list of {case, verdict: pass|fail|blocked|skipped}",
        "counts": "{passed, failed, blocked, skipped}",
        "failing_ids": "list of case ids",
        "evidence_paths": "list of paths",
        "failures": "list of {exit_code, case|command, first_error, evidence_path}",
    },
    "reviewer": {
        "findings": "list of {severity, blocking, summary, path?}",
        "verdict": "approve|request_changes|blocked",
        "blocking_count": "integer",
        "reviewed_scope": "list of paths or ids",
    },
}
SHAPES["planner"] = SHAPES["analyst"]
SHAPES["browser_qa"] = SHAPES["tester"]
OPTIONAL_KEYS: dict[str, frozenset[str]] = {
    "tester": frozenset({"failures"}),
    "browser_qa": frozenset({"failures"}),
}
FAILURE_RULE = (
    "For every failure keep exit_code, the failing case or command, the first actionable error and the "
    "evidence path; do not truncate away the root error. Do not repeat the prompt, specs, source, diff or "
    "successful command output."
)
VERDICTS = frozenset({"pass", "fail", "blocked", "skipped"})
REVIEW_VERDICTS = frozenset({"approve", "request_changes", "blocked"})


@dataclass(frozen=True)
class Finding:
    """One broken rule of a compact answer: where (JSON path) and which rule."""

    path: str
    rule: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "rule": self.rule, "message": self.message}


def schema_text(role: str) -> str:
    """The output_schema section of the stable prefix for ``role`` (deterministic text)."""
    shape = json.dumps(SHAPES[role], ensure_ascii=False, separators=(", ", ": "))
    order = "findings first, then " if role == "reviewer" else ""
    return (
        f"Answer with one JSON object only ({order}keys in this order), no narration: {shape}. {FAILURE_RULE}"
    )


def expected_output(role: str) -> str:
    """The dynamic packet's expected_output default: the role's compact artifact keys."""
    return "compact JSON object: " + ", ".join(SHAPES[role])


class _Checker:
    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def add(self, path: str, rule: str, message: str) -> None:
        self.findings.append(Finding(path, rule, message))

    def strings(self, value: object, path: str) -> None:
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.add(path, "type", "must be a list of non-empty strings")
            return
        for i, item in enumerate(value):
            self.text(item, f"{path}[{i}]")

    def text(self, value: object, path: str, *, required: bool = True) -> bool:
        if not isinstance(value, str) or (required and not value.strip()):
            self.add(path, "type", "must be a non-empty string")
            return False
        if len(value) > MAX_TEXT:
            self.add(path, "compact", f"longer than {MAX_TEXT} characters: keep durable detail in artifacts")
            return False
        return True

    def int_(self, value: object, path: str) -> bool:
        if not isinstance(value, int) or isinstance(value, bool):
            self.add(path, "type", "must be an integer")
            return False
        return True

    def failure(self, entry: object, path: str, *, exit_required: bool = True) -> None:
        """The failure rule: exit code, failing case/command, first actionable error, evidence path."""
        if not isinstance(entry, dict):
            self.add(path, "type", "must be an object")
            return
        allowed = {"exit_code", "case", "command", "first_error", "evidence_path"}
        if set(entry) - allowed:
            self.add(path, "closed", "has keys outside the failure rule")
        if "exit_code" in entry or exit_required:
            self.int_(entry.get("exit_code"), f"{path}.exit_code")
        if not any(isinstance(entry.get(k), str) and entry[k].strip() for k in ("case", "command")):
            self.add(path, "failure_rule", "names neither the failing case nor the command")
        for key in ("first_error", "evidence_path"):
            if key not in entry:
                self.add(f"{path}.{key}", "failure_rule", "is required for a failure")
            else:
                self.text(entry[key], f"{path}.{key}")


def _plan(c: _Checker, answer: JsonObject) -> None:
    for key in ("deltas", "decisions", "open_questions"):
        c.strings(answer.get(key), key)
    mappings = answer.get("mappings")
    if not isinstance(mappings, list):
        c.add("mappings", "type", "must be a list")
        return
    for i, item in enumerate(mappings):
        if not isinstance(item, dict) or set(item) != {"ac", "task"}:
            c.add(f"mappings[{i}]", "type", "must be an object with exactly ac and task")
        else:
            c.text(item["ac"], f"mappings[{i}].ac")
            c.text(item["task"], f"mappings[{i}].task")


def _coder(c: _Checker, answer: JsonObject) -> None:
    c.strings(answer.get("changed_paths"), "changed_paths")
    c.strings(answer.get("blockers"), "blockers")
    deviation = answer.get("scope_deviation")
    if deviation is not None:
        c.text(deviation, "scope_deviation")
    runs = answer.get("verification")
    if not isinstance(runs, list):
        c.add("verification", "type", "must be a list")
        return
    for i, run in enumerate(runs):
        path = f"verification[{i}]"
        if not isinstance(run, dict) or not c.int_(run.get("exit_code"), f"{path}.exit_code"):
            if not isinstance(run, dict):
                c.add(path, "type", "must be an object")
            continue
        if run["exit_code"] == 0:
            if set(run) - {"command", "exit_code", "evidence_path"}:
                c.add(path, "compact", "a successful command keeps only command, exit_code, evidence_path")
            c.text(run.get("command"), f"{path}.command")
        else:
            c.failure(run, path)


def _tester(c: _Checker, answer: JsonObject) -> None:
    failing_cases = _failing_cases(c, answer.get("case_verdicts"))
    _check_counts(c, answer.get("counts"), failing_cases)
    c.strings(answer.get("evidence_paths"), "evidence_paths")
    failing = answer.get("failing_ids")
    c.strings(failing, "failing_ids")
    if isinstance(failing, list) and set(failing) != failing_cases:
        c.add("failing_ids", "consistency", "differs from the failing case verdicts")
    _check_failure_entries(c, answer.get("failures", []), failing_cases)


def _failing_cases(c: _Checker, cases: object) -> set[str]:
    """The cases ``case_verdicts`` marks ``fail``; each malformed verdict is a finding."""
    failing_cases: set[str] = set()
    if not isinstance(cases, list):
        c.add("case_verdicts", "type", "must be a list")
        return failing_cases
    for i, item in enumerate(cases):
        if not isinstance(item, dict) or set(item) != {"case", "verdict"} or item["verdict"] not in VERDICTS:
            c.add(f"case_verdicts[{i}]", "type", "must be {case, verdict} with a known verdict")
        elif c.text(item["case"], f"case_verdicts[{i}].case") and item["verdict"] == "fail":
            failing_cases.add(item["case"])
    return failing_cases


def _check_counts(c: _Checker, counts: object, failing_cases: set[str]) -> None:
    """``counts`` has exactly the four counts, and ``failed`` matches the failing case verdicts."""
    if not isinstance(counts, dict) or set(counts) != {"passed", "failed", "blocked", "skipped"}:
        c.add("counts", "type", "must have exactly passed, failed, blocked, skipped")
    elif all(c.int_(counts[k], f"counts.{k}") for k in counts) and counts["failed"] != len(failing_cases):
        c.add("counts.failed", "consistency", "differs from the failing case verdicts")


def _check_failure_entries(c: _Checker, failures: object, failing_cases: set[str]) -> None:
    """``failures`` is a list of well-formed failure entries covering every failing case."""
    if not isinstance(failures, list):
        c.add("failures", "type", "must be a list")
        return
    for i, entry in enumerate(failures):
        c.failure(entry, f"failures[{i}]")
    covered = {e.get("case") for e in failures if isinstance(e, dict)}
    if failing_cases - covered:
        c.add("failures", "failure_rule", "a failing case has no failure entry")


def _reviewer(c: _Checker, answer: JsonObject, order: list[str]) -> None:
    if order and order[0] != "findings":
        c.add("findings", "order", "findings must come first")
    blocking = _blocking_findings(c, answer.get("findings"))
    if answer.get("verdict") not in REVIEW_VERDICTS:
        c.add("verdict", "type", "must be approve, request_changes or blocked")
    if c.int_(answer.get("blocking_count"), "blocking_count") and answer["blocking_count"] != blocking:
        c.add("blocking_count", "consistency", "differs from the blocking findings")
    if answer.get("verdict") == "approve" and blocking:
        c.add("verdict", "consistency", "approve with blocking findings")
    c.strings(answer.get("reviewed_scope"), "reviewed_scope")


def _blocking_findings(c: _Checker, findings: object) -> int:
    """How many findings are blocking; each malformed finding is a finding of its own."""
    blocking = 0
    if not isinstance(findings, list):
        c.add("findings", "type", "must be a list")
    else:
        for i, item in enumerate(findings):
            path = f"findings[{i}]"
            if (
                not isinstance(item, dict)
                or not {"severity", "blocking", "summary"} <= set(item)
                or set(item)
                - {
                    "severity",
                    "blocking",
                    "summary",
                    "path",
                }
            ):
                c.add(path, "type", "must be {severity, blocking, summary, path?}")
                continue
            if not isinstance(item["blocking"], bool):
                c.add(f"{path}.blocking", "type", "must be a boolean")
            blocking += item["blocking"] is True
            c.text(item["severity"], f"{path}.severity")
            c.text(item["summary"], f"{path}.summary")
    return blocking


def _check_keys(c: _Checker, role: str, answer: JsonObject) -> None:
    """The answer holds no key outside the role's compact schema and every required one."""
    shape = SHAPES[role]
    optional = OPTIONAL_KEYS.get(role, frozenset())
    if set(answer) - set(shape):
        c.add(
            "$", "closed", "has keys outside the role's compact schema (no narration, prompt, source or diff)"
        )
    for key in shape:
        if key not in answer and key not in optional:
            c.add(key, "missing", "is required")


def check_output(role: str, answer: object, *, key_order: list[str] | None = None) -> list[Finding]:
    """All broken rules of ``answer`` for ``role`` (empty when it is a valid compact answer)."""
    if role not in ROLES:
        raise ValueError("unknown role")
    c = _Checker()
    if not isinstance(answer, dict):
        return [Finding("$", "type", "the answer must be one JSON object")]
    _check_keys(c, role, answer)
    if role in ("analyst", "planner"):
        _plan(c, answer)
    elif role == "coder":
        _coder(c, answer)
    elif role in ("tester", "browser_qa"):
        _tester(c, answer)
    else:
        _reviewer(c, answer, key_order or list(answer))
    return c.findings
