"""Issue #25: the answers and rows the records modules build are TypedDicts; these tests hold what
is printed and written to the declared keys, in the declared order."""

from __future__ import annotations

import json

from support.harness import GitRepo, cli, declared_keys


def test_rollout_advance_prints_and_writes_the_declared_records(git_repo: GitRepo) -> None:
    from toolkit.records.rollouts import AdvanceResult, History, HistoryStep

    code, out, _ = cli("rollout", "advance", "--to", "observe", "--family", "routing", "--json")
    assert code == 0
    printed = json.loads(out.splitlines()[-1])
    assert list(printed) == declared_keys(AdvanceResult)
    assert printed == {
        "from": "off",
        "to": "observe",
        "family": "routing",
        "rollback": False,
        "written": True,
    }
    history = json.loads((git_repo.path / ".workgroup" / "rollout.json").read_text())
    assert list(history) == declared_keys(History)  # the empty history it started from, as written
    assert [list(step) for step in history["steps"]] == [declared_keys(HistoryStep)]
    assert history["active_family"] == "routing"


def test_probe_check_prints_the_declared_decision(git_repo: GitRepo) -> None:
    """``probe check --json`` prints a DecisionRow (the keys in the declared order), before and
    after a probe result is recorded."""
    from toolkit.records.probes import DecisionRow

    code, out, _ = cli("probe", "check", "knowz", "--phase", "1A", "--json")
    assert code == 0
    fresh = json.loads(out.splitlines()[0])
    assert list(fresh) == declared_keys(DecisionRow) and fresh["decision"] == "probe"
    assert cli("probe", "record", "knowz", "--phase", "1A", "--healthy")[0] == 0
    code, out, _ = cli("probe", "check", "knowz", "--phase", "1A", "--json")
    assert code == 0
    reused = json.loads(out.splitlines()[0])
    assert list(reused) == declared_keys(DecisionRow) and reused["decision"] == "reuse"
