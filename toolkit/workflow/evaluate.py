"""The evaluation corpus runner: every scenario through the runtime, checked against its oracle.

A corpus directory holds ``manifest.json`` (``knowzcode.context-efficiency-corpus/v2``, listing the
scenario files) or, without a manifest, ``scenarios/*.json``. Each scenario carries a small virtual
repository; the runner writes it into a temporary directory and runs the operation with that
directory as the working directory, in-process through ``protocol.execute`` (the same code path as
``workgroup runtime``). An oracle is ``{"status":"success","match":<subset>}`` or
``{"status":"error","code":CODE}``. Structural checks of the corpus itself (size, strata balance,
unique ids and inputs, distinct recovery cases) are reported beside the scenario results.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NotRequired, TypedDict

from toolkit.core.errors import InvalidInput
from toolkit.core.jsontypes import JsonObject
from toolkit.infra.boundedio import (
    NOT_A_FILE,
    NOT_FOUND,
    UNREADABLE,
    FileRefused,
    loads_bounded,
    read_regular,
)
from toolkit.models.corpus import Scenario
from toolkit.runtime.adapter import RuntimeContext
from toolkit.runtime.protocol import execute
from toolkit.runtime.vocabulary import STRATA

MIN_SCENARIOS = 40
MIN_PER_STRATUM = 8
MAX_SCENARIO_BYTES = 262_144


class ScenarioFile(TypedDict):
    path: str
    content: str


class ScenarioRepository(TypedDict):
    schema: str
    files: list[ScenarioFile]


class ScenarioSpec(TypedDict):
    verify_id: str
    rule: str


class ScenarioProvenance(TypedDict):
    kind: str
    empirical: bool
    promotion_authorized: bool


class ScenarioOracle(TypedDict):
    """``{status: success, match}`` or ``{status: error, code}``."""

    status: str
    code: NotRequired[str]
    match: NotRequired[JsonObject]


class ScenarioRow(TypedDict):
    """A scenario file the ``Scenario`` model (``toolkit.models.corpus``) accepted, field for field."""

    schema: str
    id: str
    stratum: str
    category: str
    description: str
    operation: str
    repository: ScenarioRepository
    spec: ScenarioSpec
    owned_files: list[str]
    input: JsonObject
    oracle: ScenarioOracle
    provenance: ScenarioProvenance


class EvalAnswer(TypedDict):
    """What ``EvalReport.as_json`` returns (``eval --json``)."""

    ok: bool
    total: int
    passed: int
    misses: list[str]
    corpus_problems: list[str]
    results: list[JsonObject]


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario's outcome."""

    id: str
    stratum: str
    operation: str
    expected: str
    observed: str
    passed: bool
    detail: str = ""


@dataclass
class EvalReport:
    """All results plus the corpus-level checks that failed."""

    results: list[ScenarioResult] = field(default_factory=list)
    corpus_problems: list[str] = field(default_factory=list)

    @property
    def misses(self) -> list[ScenarioResult]:
        return [r for r in self.results if not r.passed]

    @property
    def ok(self) -> bool:
        return not self.misses and not self.corpus_problems

    def as_json(self) -> EvalAnswer:
        return {
            "ok": self.ok,
            "total": len(self.results),
            "passed": len(self.results) - len(self.misses),
            "misses": [r.id for r in self.misses],
            "corpus_problems": self.corpus_problems,
            "results": [r.__dict__ for r in self.results],
        }


def subset_mismatch(actual: object, expected: object, path: str = "$") -> str | None:
    """First place where ``expected`` is not a subset of ``actual`` (objects recursively, else equal)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object"
        for key, value in expected.items():
            if key not in actual:
                return f"{path}.{key}: missing"
            problem = subset_mismatch(actual[key], value, f"{path}.{key}")
            if problem:
                return problem
        return None
    if not _strict_equal(actual, expected):
        return f"{path}: expected {json.dumps(expected)}, got {json.dumps(actual)}"
    return None


def _strict_equal(left: object, right: object) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, list) and isinstance(right, list):
        return _lists_equal(left, right)
    if isinstance(left, dict) and isinstance(right, dict):
        return _objects_equal(left, right)
    return bool(left == right) and (left is None) == (right is None)


def _lists_equal(left: list[object], right: list[object]) -> bool:
    """Same length and strictly equal item by item."""
    return len(left) == len(right) and all(_strict_equal(a, b) for a, b in zip(left, right, strict=True))


def _objects_equal(left: Mapping[object, object], right: Mapping[object, object]) -> bool:
    """Same keys and strictly equal values."""
    return left.keys() == right.keys() and all(_strict_equal(left[k], right[k]) for k in left)


def _load_json(path: Path) -> Any:  # the parsed file: each caller checks it

    try:
        raw = read_regular(path, limit=MAX_SCENARIO_BYTES, what="a corpus file", allow_over=True) or b""
    except FileRefused as exc:
        code = "CORPUS_UNREADABLE" if exc.code in (NOT_FOUND, NOT_A_FILE, UNREADABLE) else "CORPUS_INVALID"
        raise InvalidInput(code, "a corpus file cannot be read") from None
    if len(raw) > MAX_SCENARIO_BYTES:
        raise InvalidInput("CORPUS_INVALID", f"corpus file {path.name} is too large")
    try:
        return loads_bounded(raw, what=f"corpus file {path.name}", strict=False)
    except FileRefused as exc:  # the message says where the decoder stopped (line and column)
        raise InvalidInput("CORPUS_INVALID", exc.message) from None


def scenario_files(directory: Path) -> list[Path]:
    """The scenario files named by the manifest, or every ``scenarios/*.json``."""
    if not directory.is_dir():
        raise InvalidInput("CORPUS_NOT_FOUND", "the corpus directory does not exist")
    manifest = directory / "manifest.json"
    if manifest.is_file():
        data = _load_json(manifest)
        names = data.get("scenarios") if isinstance(data, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise InvalidInput("CORPUS_INVALID", "manifest.json must list its scenario files")
        files = []
        for name in names:
            rel = PurePosixPath(name)
            if rel.is_absolute() or ".." in rel.parts:
                raise InvalidInput("CORPUS_INVALID", "a manifest entry leaves the corpus directory")
            files.append(directory / rel)
        return files
    return sorted((directory / "scenarios").glob("*.json"))


def load_scenarios(directory: Path) -> list[ScenarioRow]:
    """Every scenario, validated against the ``Scenario`` model (exit 2 naming the bad file)."""
    from pydantic import ValidationError

    scenarios: list[ScenarioRow] = []
    for path in scenario_files(directory):
        data = _load_json(path)
        try:
            Scenario.model_validate(data)
        except ValidationError:
            raise InvalidInput(
                "CORPUS_INVALID", f"scenario file {path.name} does not match the scenario schema"
            ) from None
        scenario: ScenarioRow = data  # the model accepted it just above
        scenarios.append(scenario)
    return scenarios


def corpus_problems(scenarios: list[ScenarioRow]) -> list[str]:
    """The contract's structural rules for the corpus (CEO-13)."""
    problems = _size_problems(scenarios)
    ids = [s["id"] for s in scenarios]
    if len(set(ids)) != len(ids):
        problems.append("scenario ids are not unique")
    inputs = [json.dumps(s["input"], sort_keys=True) for s in scenarios]
    if len(set(inputs)) != len(inputs):
        problems.append("two scenarios share the same input")
    if not _recovery_apart(scenarios):
        problems.append("recovery/invalidation cases must be their own category")
    return problems


def _size_problems(scenarios: list[ScenarioRow]) -> list[str]:
    """Too few scenarios in all, then each stratum with too few."""
    problems = []
    if len(scenarios) < MIN_SCENARIOS:
        problems.append(f"only {len(scenarios)} scenarios (at least {MIN_SCENARIOS})")
    for stratum in STRATA:
        count = sum(1 for s in scenarios if s["stratum"] == stratum)
        if count < MIN_PER_STRATUM:
            problems.append(f"stratum {stratum} has {count} scenarios (at least {MIN_PER_STRATUM})")
    return problems


def _recovery_apart(scenarios: list[ScenarioRow]) -> bool:
    """True when the recovery-invalidation stratum holds exactly the ``recovery`` category."""
    recovery = [s for s in scenarios if s["stratum"] == "recovery-invalidation"]
    return not (
        any(s["category"] != "recovery" for s in recovery)
        or any(s["category"] == "recovery" for s in scenarios if s["stratum"] != "recovery-invalidation")
    )


def _materialize(root: Path, repository: ScenarioRepository) -> None:
    for item in repository["files"]:
        rel = PurePosixPath(item["path"])
        target = root.joinpath(*rel.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(item["content"], encoding="utf-8")


def _expected(oracle: ScenarioOracle) -> str:
    return "success" if oracle["status"] == "success" else f"error {oracle['code']}"


def run_scenario(scenario: ScenarioRow) -> ScenarioResult:
    """Run one scenario in its own virtual repository and compare with its oracle."""

    with tempfile.TemporaryDirectory(prefix="wg-eval-") as tmp:
        _materialize(Path(tmp), scenario["repository"])
        frame = execute(scenario["operation"], scenario["input"], RuntimeContext(cwd=tmp, environ={}))
    oracle = scenario["oracle"]
    observed = "success" if frame["ok"] else f"error {frame['code']}"
    detail = ""
    if oracle["status"] == "success":
        passed = bool(frame["ok"])
        if passed:
            problem = subset_mismatch(frame["result"], oracle["match"])
            passed, detail = problem is None, problem or ""
    else:
        passed = not frame["ok"] and frame["code"] == oracle["code"]
    return ScenarioResult(
        scenario["id"],
        scenario["stratum"],
        scenario["operation"],
        _expected(oracle),
        observed,
        passed,
        detail,
    )


def evaluate_corpus(
    scenarios: Iterable[ScenarioRow], progress: Callable[[int, int, ScenarioResult], None] | None = None
) -> EvalReport:
    """Run every scenario; ``progress(done, total, result)`` after each."""
    items = list(scenarios)
    report = EvalReport(corpus_problems=corpus_problems(items))
    for index, scenario in enumerate(items, start=1):
        result = run_scenario(scenario)
        report.results.append(result)
        if progress is not None:
            progress(index, len(items), result)
    return report
