"""Differential test: ``workgroup usage`` against ccusage (npm ``ccusage``) on the pitfall fixtures.

Runs when ccusage is installed (``CCUSAGE_BIN`` or ``ccusage`` on PATH), skipped otherwise; also on
ccusage's own test fixtures when ``CCUSAGE_FIXTURES`` names them. Totals must be equal wherever
ccusage's rules are right; the one difference found (ccusage's *session* report counts a ``/btw``
sidechain replay its daily report drops) is asserted exactly, so a change on either side shows up.
docs/usage.md lists it with the grouping differences.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.usage_fixtures import build

from toolkit.usage.fold import By, LocalDays, read_logs, resolve_tz
from toolkit.usage.report import build as build_report
from toolkit.usage.sources import discover

if TYPE_CHECKING:
    from toolkit.usage.shapes import ReportRow

CCUSAGE = os.environ.get("CCUSAGE_BIN") or shutil.which("ccusage")
pytestmark = pytest.mark.skipif(not CCUSAGE, reason="ccusage is not installed (set CCUSAGE_BIN)")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("ccusage")
    env = build(root / "logs")
    env["HOME"] = str(root / "home")
    (root / "home").mkdir()
    return env


def ccusage(env: dict[str, str], *args: str) -> Any:
    assert CCUSAGE
    run_env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    proc = subprocess.run(
        [CCUSAGE, *args, "--json", "--offline"],
        env={**run_env, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def ours(env: dict[str, str], source: str, by: By, tz: str = "UTC") -> dict[str, ReportRow]:
    ledger = read_logs(discover(source, env))
    data, _ = build_report(ledger, by=by, days=LocalDays(resolve_tz(tz)), timezone=tz)
    return {row["key"]: row for row in data["rows"]}


CLAUDE_FIELDS = (
    ("input", "inputTokens"),
    ("output", "outputTokens"),
    ("cache_write", "cacheCreationTokens"),
    ("cache_read", "cacheReadTokens"),
)
CODEX_FIELDS = (
    ("input", "inputTokens"),
    ("output", "outputTokens"),
    ("cache_read", "cacheReadTokens"),
    ("reasoning", "reasoningOutputTokens"),
)


def _pick(row: Mapping[str, Any], fields: tuple[tuple[str, str], ...], side: int) -> tuple[int, ...]:
    return tuple(int(row[f[side]] or 0) for f in fields)


@pytest.mark.parametrize("tz", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_claude_daily_equals_ccusage(logs: dict[str, str], tz: str) -> None:
    theirs = ccusage(logs, "claude", "daily", "--timezone", tz)["daily"]
    mine = ours(logs, "claude", By.DAY, tz)
    assert {r["date"]: _pick(r, CLAUDE_FIELDS, 1) for r in theirs} == {
        k: _pick(r, CLAUDE_FIELDS, 0) for k, r in mine.items()
    }


@pytest.mark.parametrize("tz", ["UTC", "America/New_York"])
def test_codex_daily_equals_ccusage(logs: dict[str, str], tz: str) -> None:
    theirs = ccusage(logs, "codex", "daily", "--timezone", tz)["daily"]
    mine = ours(logs, "codex", By.DAY, tz)
    assert {r["date"]: _pick(r, CODEX_FIELDS, 1) for r in theirs} == {
        k: _pick(r, CODEX_FIELDS, 0) for k, r in mine.items()
    }


def test_claude_sessions_differ_only_by_the_btw_replay(logs: dict[str, str]) -> None:
    rows = ccusage(logs, "claude", "session")["sessions"]
    theirs = {r["sessionId"]: _pick(r, CLAUDE_FIELDS, 1) for r in rows}
    mine = {k: _pick(r, CLAUDE_FIELDS, 0) for k, r in ours(logs, "claude", By.SESSION).items()}
    replay = (3, 180, 1200, 15000)  # msg_A's usage, replayed by the /btw sidechain line (req_Z)
    assert theirs.pop("s-aaaa") == tuple(a + b for a, b in zip(mine.pop("s-aaaa"), replay, strict=True))
    assert theirs == mine


def test_codex_sessions_equal_after_folding_subagents(logs: dict[str, str]) -> None:
    rows = ccusage(logs, "codex", "session")["sessions"]
    # ccusage lists the archived copy as a session of its own (its daily report drops it) and the
    # spawned subagent thread apart from its parent; we fold the thread under the parent
    live = [r for r in rows if r["directory"]]
    theirs: dict[str, tuple[int, ...]] = {}
    for row in live:
        sid = row["sessionFile"].rsplit("-", 1)[-1]
        sid = "0000aaaa" if sid == "0000cccc" else sid
        prev = theirs.get(sid, (0, 0, 0, 0))
        theirs[sid] = tuple(a + b for a, b in zip(prev, _pick(row, CODEX_FIELDS, 1), strict=True))
    mine = {k: _pick(r, CODEX_FIELDS, 0) for k, r in ours(logs, "codex", By.SESSION).items()}
    assert theirs == mine
    archived = [r for r in rows if not r["directory"]]
    assert len(archived) == 1


CCUSAGE_FIXTURES = os.environ.get("CCUSAGE_FIXTURES")  # a ccusage checkout's apps/ccusage/test/fixtures


@pytest.mark.skipif(not CCUSAGE_FIXTURES, reason="set CCUSAGE_FIXTURES to ccusage's own test fixtures")
@pytest.mark.parametrize(("agent", "fields"), [("claude", CLAUDE_FIELDS), ("codex", CODEX_FIELDS[:3])])
def test_ccusage_own_fixtures_give_the_same_days(
    tmp_path_factory: pytest.TempPathFactory, agent: str, fields: tuple[tuple[str, str], ...]
) -> None:
    assert CCUSAGE_FIXTURES
    root = Path(CCUSAGE_FIXTURES)
    home = tmp_path_factory.mktemp("home")
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(root / "claude"), "CODEX_HOME": str(root / "codex")}
    theirs = ccusage(env, agent, "daily", "--timezone", "UTC")["daily"]
    mine = ours(env, agent, By.DAY)
    assert theirs and {r["date"]: _pick(r, fields, 1) for r in theirs} == {
        k: _pick(r, fields, 0) for k, r in mine.items()
    }
