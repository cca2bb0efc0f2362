"""The evaluation corpus and `workgroup eval` (CEO-13)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.harness import cli
from support.promotion_data import NOW

from toolkit.infra.resources import data_dir
from toolkit.models.promotion import PairedResults
from toolkit.runtime.promotion import evaluate_promotion
from toolkit.workflow.evaluate import corpus_problems, evaluate_corpus, load_scenarios, subset_mismatch

CORPUS = data_dir("corpus")
SCENARIOS = load_scenarios(CORPUS)
PAIRED = json.loads((CORPUS / "paired-results.json").read_text(encoding="utf-8"))


def test_size_and_strata_mix() -> None:
    assert len(SCENARIOS) >= 40
    mix = Counter((s["stratum"], s["operation"]) for s in SCENARIOS)
    # the reference's mix per stratum (reference/knowzcode-runtime.md section 12)
    assert mix[("small-tier2", "route")] == 8
    assert mix[("backend-refactor", "route")] == 4 and mix[("backend-refactor", "lineage")] == 4
    assert mix[("ui-integration", "route")] == 4 and mix[("ui-integration", "rollout")] == 4
    assert mix[("security-compliance", "capsule")] == 4 and mix[("security-compliance", "telemetry")] == 4
    recovery_ops = {s["operation"] for s in SCENARIOS if s["stratum"] == "recovery-invalidation"}
    assert {"lineage", "route", "capsule", "result-policy", "dispatch"} <= recovery_ops
    for stratum in (
        "small-tier2",
        "backend-refactor",
        "ui-integration",
        "security-compliance",
        "recovery-invalidation",
    ):
        assert sum(s["stratum"] == stratum for s in SCENARIOS) >= 8


def test_recovery_cases_are_distinct() -> None:
    recovery = [s for s in SCENARIOS if s["category"] == "recovery"]
    assert len(recovery) == 8 and all(s["stratum"] == "recovery-invalidation" for s in recovery)
    assert any(
        s["input"].get("max_bytes") for s in recovery if s["operation"] == "capsule"
    )  # capsule overflow


def test_scenarios_are_self_contained_and_unique() -> None:
    assert len({s["id"] for s in SCENARIOS}) == len(SCENARIOS)
    assert len({json.dumps(s["input"], sort_keys=True) for s in SCENARIOS}) == len(SCENARIOS)
    for s in SCENARIOS:
        files = s["repository"]["files"]
        assert all(s["id"] in f["path"] and s["id"] in f["content"] for f in files), s["id"]
        assert s["owned_files"] == [f["path"] for f in files], s["id"]
        assert s["spec"]["verify_id"] in s["spec"]["rule"], s["id"]
        assert s["provenance"] == {"kind": "fixture-only", "empirical": False, "promotion_authorized": False}
    assert {s["oracle"]["status"] for s in SCENARIOS} == {"success", "error"}


def test_every_scenario_matches_its_oracle() -> None:
    report = evaluate_corpus(SCENARIOS)
    misses = {r.id: (r.expected, r.observed, r.detail) for r in report.misses}
    assert misses == {}, misses
    assert report.corpus_problems == []


def test_paired_results_fixture_is_marked_synthetic() -> None:
    assert PAIRED["synthetic"] is True and PAIRED["empirical"] is False
    PairedResults.model_validate(PAIRED)
    assert {p["id"] for p in PAIRED["pairs"]} == {s["id"] for s in SCENARIOS}
    assert len({json.dumps(p, sort_keys=True) for p in PAIRED["pairs"]}) == len(PAIRED["pairs"])


def test_synthetic_pairs_never_promote_even_with_passing_numbers() -> None:
    result = evaluate_promotion(PAIRED["pairs"], now=NOW)
    assert result["gates"]["provenance"] is False and result["promote"] is False
    perfect = json.loads(json.dumps(PAIRED["pairs"]))
    for pair in perfect:
        pair["baseline"].update(billed_cost=100, wall_time_ms=1000, quality_score=95, rework_rounds=1)
        pair["candidate"].update(
            billed_cost=60,
            wall_time_ms=700,
            quality_score=95,
            rework_rounds=1,
            provider_reported_total=1000,
            event_accounted_total=1000,
        )
    result = evaluate_promotion(perfect, now=NOW, synthetic=True)
    assert result["promote"] is False and "SYNTHETIC_DATA" in result["provenance_failures"]
    # every other gate passes, so provenance is the only thing standing in the way
    assert [g for g, ok in result["gates"].items() if not ok] == ["provenance"]


@pytest.mark.parametrize(
    ("actual", "expected", "ok"),
    [
        ({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": 2}}, True),  # objects compare as subsets
        ({"a": [1, 2]}, {"a": [1]}, False),  # arrays compare exactly
        ({"a": 1}, {"a": True}, False),  # a boolean is not a number
        ({"a": None}, {"a": None}, True),
        ({"a": 0}, {"a": None}, False),
        ({}, {"a": 1}, False),
    ],
)
def test_subset_matching(actual: Any, expected: Any, ok: bool) -> None:
    assert (subset_mismatch(actual, expected) is None) is ok


def test_corpus_problems_detect_imbalance() -> None:
    small = [s for s in SCENARIOS if s["stratum"] != "ui-integration"]
    problems = corpus_problems(small)
    assert any("only 32" in p for p in problems) and any("ui-integration" in p for p in problems)
    duplicate = [*SCENARIOS, SCENARIOS[0]]
    assert "scenario ids are not unique" in corpus_problems(duplicate)


def test_eval_command_passes_on_shipped_corpus() -> None:
    code, out, err = cli("eval", "--json")
    data = json.loads(out)
    assert code == 0 and data["ok"] is True and data["total"] == len(SCENARIOS)
    assert "40/40" in err or f"{len(SCENARIOS)}/{len(SCENARIOS)}" in err  # progress on stderr


def test_eval_command_exits_1_on_a_miss(tmp_path: Path) -> None:
    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS, copy)
    target = copy / "scenarios" / "small-tier2-01.json"
    scenario = json.loads(target.read_text(encoding="utf-8"))
    scenario["oracle"] = {"status": "success", "match": {"mode": "resume"}}
    target.write_text(json.dumps(scenario), encoding="utf-8")
    code, out, _ = cli("eval", str(copy))
    assert code == 1
    assert "small-tier2-01" in out and "MISS" in out and "39/40" in out


def test_eval_command_refuses_invalid_scenarios(tmp_path: Path) -> None:
    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS, copy)
    (copy / "scenarios" / "small-tier2-02.json").write_text('{"id": "x"}', encoding="utf-8")
    code, _, err = cli("eval", str(copy))
    assert code == 2 and "CORPUS_INVALID" in err
    code, _, err = cli("eval", str(tmp_path / "missing"))
    assert code == 2 and "CORPUS_NOT_FOUND" in err
