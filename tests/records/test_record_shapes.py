"""Issue #25: the answers and rows the records modules build are TypedDicts; these tests hold what
is printed and written to the declared keys, in the declared order."""

from __future__ import annotations

import json

from support.harness import GitRepo, cli


def _keys(kind: type) -> list[str]:
    return list(kind.__annotations__)


def test_rollout_advance_prints_and_writes_the_declared_records(git_repo: GitRepo) -> None:
    from toolkit.records.rollouts import AdvanceResult, HistoryStep

    code, out, _ = cli("rollout", "advance", "--to", "observe", "--family", "routing", "--json")
    assert code == 0
    printed = json.loads(out.splitlines()[-1])
    assert list(printed) == _keys(AdvanceResult)
    assert printed == {
        "from": "off",
        "to": "observe",
        "family": "routing",
        "rollback": False,
        "written": True,
    }
    history = json.loads((git_repo.path / ".workgroup" / "rollout.json").read_text())
    assert [list(step) for step in history["steps"]] == [_keys(HistoryStep)]
    assert history["active_family"] == "routing"
