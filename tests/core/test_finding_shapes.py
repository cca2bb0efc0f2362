"""Issue #25: the ``--json`` findings document, its rows and summary are the TypedDicts of
toolkit/core/finding_shapes.py; these tests hold what is printed to the declared keys, in the
declared order, for the shared emitter and for each tool that fills a finding's ``extra``."""

from __future__ import annotations

import io
import json
from pathlib import Path

from support.harness import GitRepo, cli, declared_keys

from toolkit.core.finding_shapes import FindingExtra, FindingRow, FindingsDocument, SummaryCounts
from toolkit.core.findings import Finding, emit

KEY = "sk_" + "live_" + "4eC39HqLyjWD4rjtT1zdp7dcFAKE"  # synthetic, non-working


def _in_declared_order(extra: dict[str, object]) -> bool:
    """The row's extra keys are FindingExtra keys, in the order FindingExtra declares them."""
    return list(extra) == [key for key in declared_keys(FindingExtra) if key in extra]


def test_the_document_row_and_summary_follow_the_declared_order() -> None:
    out = io.StringIO()
    finding = Finding("a.md", 2, 3, "X1", "m", fix="do y", extra={"rule": "r", "start": 0, "end": 1})
    emit(
        "tool",
        [finding],
        as_json=True,
        stdout=out,
        stderr=io.StringIO(),
        checked=4,
        summary_extra={"rev": "v"},
    )
    doc = json.loads(out.getvalue())
    assert list(doc) == declared_keys(FindingsDocument)
    assert [list(row) for row in doc["findings"]] == [declared_keys(FindingRow)]
    # the counts, then the number checked, then the caller's own fields
    assert list(doc["summary"]) == [*declared_keys(SummaryCounts), "checked", "rev"]


def test_each_tools_extra_follows_the_declared_order(git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.write("notes/a.md", f"key {KEY}\n")
    code, out, _ = cli("privacy", "scan", "--json", "notes")
    scanned = json.loads(out)["findings"]
    assert code == 1 and scanned and all(_in_declared_order(row["extra"]) for row in scanned)
    assert list(scanned[0]["extra"]) == ["category", "rule", "start", "end"]

    git_repo.commit("add a key")
    code, out, _ = cli("privacy", "scan", "--history", "--json")
    history = json.loads(out)["findings"]
    assert code == 1 and history and all(_in_declared_order(row["extra"]) for row in history)
    assert list(history[0]["extra"]) == ["commit", "file", "category", "rule", "start", "end"]

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"stage": "0", "indexed": True, "workers": [{"role": "analyst"}] * 2}))
    code, out, _ = cli("fanout", "check", str(plan), "--json")
    planned = json.loads(out)["findings"]
    assert code == 1 and planned and all(_in_declared_order(row["extra"]) for row in planned)
