"""``workgroup usage``: counting rules on fixture logs with every pitfall of the agent-logs note."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.harness import GitRepo, cli
from support.usage_fixtures import CANARY, build

from toolkit.usage.fold import By, LocalDays, read_logs, resolve_tz
from toolkit.usage.report import build as build_report
from toolkit.usage.sources import discover, hashed

if TYPE_CHECKING:
    from toolkit.usage.shapes import ReportRow, UsageReport


def _report(env: dict[str, str], by: By = By.SESSION, tz: str = "UTC", source: str = "all") -> UsageReport:
    ledger = read_logs(discover(source, env))
    data, _ = build_report(ledger, by=by, days=LocalDays(resolve_tz(tz)), timezone=tz)
    return data


def _rows(data: UsageReport) -> dict[str, ReportRow]:
    return {row["key"]: row for row in data["rows"]}


# -- Claude ---------------------------------------------------------------------------------------------


def test_claude_dedup_partials_blocks_btw_replay_and_subagents(logs: dict[str, str]) -> None:
    row = _rows(_report(logs, source="claude"))["s-aaaa"]
    # msg_A once with its final output (180, not the streaming partial's 1); msg_C's last block (95);
    # the /btw sidechain copy of msg_A (req_Z) dropped; the subagent file's two calls counted here;
    # null requestId, non-semver version and the torn last line skipped; <synthetic> kept at zero
    assert row["calls"] == 8
    assert row["input"] == 3 + 5 + 2 + 10 + 4 + 0 + 8 + 6
    assert row["output"] == 180 + 95 + 60 + 70 + 30 + 0 + 200 + 120
    assert row["cache_write"] == 1200 + 300 + 100 + 2000 + 50 + 4000 + 500
    assert row["cache_read"] == 15000 + 16200 + 17000 + 9000 + 11500 + 0 + 4000
    assert row["compactions"] == 1
    assert row["subagent_share"] == round(
        (8 + 4000 + 200 + 6 + 500 + 4000 + 120)
        / (row["input"] + row["cache_write"] + row["cache_read"] + row["output"]),
        4,
    )
    assert row["reasoning"] is None  # Claude logs do not report reasoning tokens


def test_carried_history_resets_at_compaction(logs: dict[str, str]) -> None:
    row = _rows(_report(logs, source="claude"))["s-aaaa"]
    # B = 16,203 (msg_A's prompt): msg_D re-reads 17,000 -> 797; after the compaction B = 11,010 and
    # msg_F re-reads 11,500 -> 490; the subagent has its own base (4,208) and re-reads less than it
    assert row["carried_history"] == 797 + 490


def test_resumed_copy_counts_once_and_is_marked(logs: dict[str, str]) -> None:
    row = _rows(_report(logs, source="claude"))["s-bbbb"]
    assert row["calls"] == 2 and row["output"] == 300 + 90
    assert row["carried_history"] == 18600 - (20 + 900 + 17500)
    code, out, _ = cli("usage", "session", "s-bbbb", "--source", "claude", "--timezone", "UTC", "--json")
    view = json.loads(out)
    assert code == 0 and view["resumed_from"] == "s-aaaa"
    assert view["calls"][0]["resume"] is True
    assert [b["kind"] for b in view["boundaries"]] == ["resume"]


def test_gateway_ids_without_request_id_are_per_session(logs: dict[str, str]) -> None:
    rows = _rows(_report(logs, source="claude"))
    # ccusage keys these by message id alone and keeps one; they are two sessions' real calls
    assert rows["s-gw01"]["calls"] == 1 and rows["s-gw02"]["calls"] == 1


def test_days_follow_the_timezone(logs: dict[str, str]) -> None:
    utc = _rows(_report(logs, by=By.DAY, tz="UTC", source="claude"))
    ny = _rows(_report(logs, by=By.DAY, tz="America/New_York", source="claude"))
    assert "2026-01-06" in utc and utc["2026-01-06"]["output"] >= 180
    assert ny["2026-01-05"]["output"] == utc["2026-01-06"]["output"]


# -- Codex ----------------------------------------------------------------------------------------------


def test_codex_reference_example_and_reemit(logs: dict[str, str]) -> None:
    rows = _rows(_report(logs, source="codex"))
    main = rows["0000aaaa"]
    # lines 3-4: 25,000 input (11,800 cached) and 650 output; the re-emit at 15:00:10 adds nothing;
    # after the compaction two calls (8,000/5,000 and 10,000/9,000); the second counter adds 1,000 and
    # 500/400; the subagent thread (folded here) adds 3,000/2,000 and, after its total drops, 900
    assert main["calls"] == 2 + 2 + 2 + 2
    assert main["input"] + main["cache_read"] == 25000 + 8000 + 10000 + 1000 + 500 + 3000 + 900
    assert main["cache_read"] == 11800 + 5000 + 9000 + 400 + 2000
    assert main["output"] == 650 + 150 + 100 + 50 + 20 + 100 + 30
    assert main["compactions"] == 1
    assert main["carried_history"] == 9000 - 8000  # B after the compaction is 8,000


def test_codex_fork_replay_adds_nothing_and_archive_is_ignored(logs: dict[str, str]) -> None:
    rows = _rows(_report(logs, source="codex"))
    fork = rows["0000bbbb"]
    assert fork["calls"] == 1 and fork["input"] + fork["cache_read"] == 14000 and fork["output"] == 150
    orphan = rows["0000dddd"]  # parent file absent: leading same-second replay dropped
    assert orphan["calls"] == 1 and orphan["input"] + orphan["cache_read"] == 3000
    assert "0000eeee" not in rows  # no token counts: not counted, but said


def test_codex_without_usage_is_reported_not_guessed(logs: dict[str, str]) -> None:
    code, out, err = cli("usage", "--source", "codex", "--timezone", "UTC", "--json")
    assert code == 0
    assert json.loads(out)["notes"]["codex_files_without_usage"] == 1
    assert "no token counts" in err


# -- command ----------------------------------------------------------------------------------------------


def test_table_and_json_agree(logs: dict[str, str]) -> None:
    code, out, _ = cli("usage", "--timezone", "UTC", "--by", "model", "--json")
    data = json.loads(out)
    assert code == 0 and data["schema"] == "workgroup.usage-report/v1"
    assert data["totals"]["calls"] == sum(r["calls"] for r in data["rows"])
    code, text, _ = cli("usage", "--timezone", "UTC", "--by", "model")
    assert code == 0 and text.splitlines()[0].split()[:3] == ["model", "calls", "input"]
    assert f"{data['totals']['input']:,}" in text.splitlines()[-1]


def test_filters_since_until_and_project(logs: dict[str, str]) -> None:
    _, out, _ = cli("usage", "--timezone", "UTC", "--since", "2026-01-07", "--until", "20260107", "--json")
    data = json.loads(out)
    assert [r["key"] for r in data["rows"]] == ["2026-01-07"] and data["totals"]["calls"] == 2
    _, out, _ = cli("usage", "--timezone", "UTC", "--project", "/home/dev/gw", "--json")
    assert json.loads(out)["totals"]["calls"] == 0  # the gateway sessions' cwd is the fixture's CWD
    gw = hashed("/home/dev/" + CANARY + "/demo")
    _, out, _ = cli("usage", "--timezone", "UTC", "--project", gw, "--by", "project", "--json")
    assert [r["key"] for r in json.loads(out)["rows"]] == [gw]


@pytest.mark.parametrize(
    ("args", "code", "error"),
    [
        (("--timezone", "Mars/Olympus"), 2, "USAGE_BAD_TIMEZONE"),  # unknown zone
        (("--since", "yesterday"), 2, "USAGE_BAD_DATE"),  # not a date
        (("--by", "hour"), 2, ""),  # not a grouping (click's usage error)
    ],
)
def test_bad_options_are_usage_errors(logs: dict[str, str], args: list[str], code: int, error: str) -> None:
    got, out, err = cli("usage", *args)
    assert got == code and out == "" and "Traceback" not in err and error in err


def test_bad_environment_and_unknown_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "nowhere"))
    code, out, err = cli("usage", "--source", "claude")
    assert code == 2 and "USAGE_NO_LOG_DIR" in err and str(tmp_path) not in err
    build(tmp_path / "logs")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{tmp_path / 'nowhere'},{tmp_path / 'logs' / 'claude'}")
    code, out, err = cli("usage", "session", "s-zzzz", "--source", "claude")
    assert code == 1 and "USAGE_NO_SESSION" in err


def test_empty_home_reports_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    code, out, _ = cli("usage", "--json")
    assert code == 0 and json.loads(out)["totals"]["calls"] == 0


def test_session_view_folds_subagents_and_judges_boundaries(logs: dict[str, str]) -> None:
    code, out, _ = cli("usage", "session", "s-aaaa", "--timezone", "UTC", "--json")
    view = json.loads(out)
    assert code == 0
    main_outputs = [r["output"] for r in view["calls"]]
    assert main_outputs == [180, 95, 60, 70, 30, 0]
    folded = [s for r in view["calls"] for s in r["subagents"]]
    assert len(folded) == 1 and folded[0]["calls"] == 2
    assert view["calls"][2]["subagents"] == folded  # after msg_D (02:32), before the compaction
    (point,) = view["boundaries"]
    assert point["kind"] == "compaction" and point["verdict"] == "fresh" and point["order"] == 3
    assert point["carried_after"] == 490 and point["calls_after"] == 3
    code, text, _ = cli("usage", "session", "s-aa", "--timezone", "UTC")
    assert code == 0 and "subagent 1" in text and "'fresh'" in text


def test_canary_never_reaches_any_output(logs: dict[str, str], tmp_path: Path) -> None:
    outputs = []
    for args in (
        ("usage", "--timezone", "UTC"),
        ("usage", "--timezone", "UTC", "--json", "--by", "project"),
        ("usage", "--timezone", "UTC", "--by", "session", "--cost"),
        ("usage", "session", "s-aaaa", "--timezone", "UTC"),
        ("usage", "session", "0000aaaa", "--json"),
    ):
        code, out, err = cli(*args)
        assert code == 0, err
        outputs += [out, err]
    blob = "\n".join(outputs)
    assert CANARY not in blob and "/home/dev" not in blob and "feature/" not in blob


# -- cost, events, html -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "priced_as"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5"),  # exact
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),  # dated snapshot
        ("gpt-5-2025-08-07", "gpt-5"),  # OpenAI's dated snapshot form
        ("claude-opus-4-5-fast", None),  # fast mode has its own price: never guessed
        ("gpt-5-codex-mini", None),  # a different model that merely starts like a known one
        ("<synthetic>", None),
    ],
)
def test_price_lookup(model: str, priced_as: str | None) -> None:
    from toolkit.usage.cost import PRICE_TABLE, rates_for

    models = PRICE_TABLE["models"]
    assert rates_for(model, models) is (models[priced_as] if priced_as else None)


def test_cost_is_a_labelled_estimate_apart_from_counts(logs: dict[str, str], tmp_path: Path) -> None:
    _, plain, _ = cli("usage", "--timezone", "UTC", "--json")
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps(
            {
                "source": "test sheet",
                "date": "2026-01-01",
                "currency": "EUR",
                "models": {
                    "claude-opus-4-5": {
                        "input": 1000000,
                        "cache_write_5m": 0,
                        "cache_write_1h": 0,
                        "cache_read": 0,
                        "output": 0,
                    }
                },
            }
        )
    )
    code, out, _ = cli("usage", "--timezone", "UTC", "--json", "--prices", str(prices), "--by", "session")
    data = json.loads(out)
    assert code == 0 and data["estimate"]["price_table"] == {
        "source": "test sheet",
        "date": "2026-01-01",
        "currency": "EUR",
    }
    assert "list-price estimate" in data["estimate"]["label"]
    by_key = {r["key"]: r["amount"] for r in data["estimate"]["rows"]}
    assert by_key["s-bbbb"] == 20 + 3  # input tokens of the two opus calls at 1 per token
    assert data["totals"] == json.loads(plain)["totals"]  # money never mixed into the counts
    code, text, _ = cli("usage", "--timezone", "UTC", "--cost")
    assert code == 0 and "dated 2026-12-03" in text and "platform.claude.com" in text
    prices.write_text(json.dumps({"source": "x", "date": "soon", "currency": "EUR", "models": {}}))
    code, out, err = cli("usage", "--prices", str(prices))
    assert code == 2 and out == "" and "USAGE_BAD_PRICES" in err


def test_events_pass_the_telemetry_gate(logs: dict[str, str], git_repo: GitRepo) -> None:
    events = git_repo.path / "events.jsonl"
    code, _, err = cli("usage", "--timezone", "UTC", "--emit-events", str(events))
    assert code == 0 and "wrote 7 efficiency event(s)" in err
    records = [json.loads(line) for line in events.read_text().splitlines()]
    text = events.read_text()
    assert CANARY not in text and "s-aaaa" not in text and "0000aaaa" not in text
    by_provider = {(r["event"]["provider"], r["provenance"]["calls"]): r for r in records}
    claude_main = by_provider[("claude", 8)]["event"]
    assert claude_main["billed"]["output_tokens"] == 755 and claude_main["logical"]["compaction_count"] == 1
    assert (
        claude_main["billed"]["accounting_source"] == "provider-reported"
        and claude_main["billed"]["amount"] is None
    )
    assert all(len(r["provenance"]["log_files"]) >= 1 for r in records)
    single = git_repo.path / "one.json"
    single.write_text(json.dumps({"event": records[0]["event"]}))
    code, out, err = cli("telemetry", "record", str(single), "--json")
    assert code == 0, err
    assert json.loads(out)["event"] == records[0]["event"] and json.loads(out)["dropped_keys"] == []


def test_html_is_self_contained(logs: dict[str, str], tmp_path: Path) -> None:
    import re

    page = tmp_path / "report.html"
    code, _, err = cli("usage", "--timezone", "UTC", "--html", str(page))
    assert code == 0, err
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"<script", text) and not re.search(r"<link[^>]+href=", text)
    for title in ("Tokens per day, by tool", "Tokens per day, by kind", "sessions by carried history"):
        assert title in text
    assert "s-aaaa" in text and CANARY not in text and "/home/dev" not in text


# -- the console script: the one typer front door -----------------------------------------------------


def test_console_script_runs_the_typer_command_with_its_exit_codes(logs: dict[str, str]) -> None:
    import subprocess
    import sys

    code = "import sys; from toolkit.entry import main; raise SystemExit(main(sys.argv[1:]))"
    args = ["usage", "--timezone", "UTC", "--by", "session", "--json"]
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    _, out, _ = cli(*args)
    assert json.loads(proc.stdout) == json.loads(out)
    bad = subprocess.run(
        [sys.executable, "-c", code, "usage", "--by", "hour"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "error[USAGE]" in bad.stderr and "Traceback" not in bad.stderr
    bad = subprocess.run(
        [sys.executable, "-c", code, "usage", "session", "nope-nope"], capture_output=True, text=True
    )
    assert bad.returncode == 1 and "USAGE_NO_SESSION" in bad.stderr
    jobs = subprocess.run(
        [sys.executable, "-c", code, "usage", "--jobs", "65"], capture_output=True, text=True, check=False
    )
    assert jobs.returncode == 2 and "USAGE_BAD_JOBS" in jobs.stderr


def test_codex_key_order_does_not_matter(tmp_path: Path) -> None:
    # the fast path reads the line kind from Codex's own key order; any other order must count the same
    env = build(tmp_path / "a")
    home = Path(env["CODEX_HOME"])
    for path in home.rglob("*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        reordered = [json.dumps(dict(reversed(list(obj.items()))), separators=(",", ":")) for obj in lines]
        path.write_text("\n".join(reordered) + "\n")
    assert _rows(_report(env, source="codex")) == _rows(_report(build(tmp_path / "b"), source="codex"))


def test_demo_step_narrates_real_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.demo.runner import Demo
    from toolkit.demo.steps import STEPS, agent_logs

    assert "agent_logs" in STEPS
    (tmp_path / "repo").mkdir()
    agent_logs.run(Demo(root=tmp_path / "repo"))
    out = capsys.readouterr().out
    # the streaming partial counted once with its final output (420, not 1); the re-emit adds nothing
    assert "demo-session-0001      7" in out and "2,450" in out
    assert "demo-rollout-0001      2  13,200     650" in out
    assert "└ subagent 1" in out and "'fresh'" in out


def test_default_locations_merge_and_overrides_take_comma_lists(tmp_path: Path) -> None:
    from toolkit.usage.sources import claude_roots, codex_roots

    home, xdg = tmp_path / "home", tmp_path / "xdg"
    for folder in (home / ".claude" / "projects", xdg / "claude" / "projects", home / ".codex" / "sessions"):
        folder.mkdir(parents=True)
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}
    assert claude_roots(env) == [xdg / "claude" / "projects", home / ".claude" / "projects"]
    assert codex_roots(env) == [home / ".codex"]
    other = tmp_path / "other"
    (other / "projects").mkdir(parents=True)
    (other / "sessions").mkdir()
    # an override replaces the defaults; entries may name the config folder or its projects/ folder
    env2 = {
        **env,
        "CLAUDE_CONFIG_DIR": f" {other / 'projects'} , {home / '.claude'} ",
        "CODEX_HOME": f"{other},nowhere",
    }
    assert claude_roots(env2) == [other / "projects", home / ".claude" / "projects"]
    assert codex_roots(env2) == [other]


def test_worker_processes_give_the_same_ledger(logs: dict[str, str]) -> None:
    from toolkit.usage.fold import load

    one, two = load("all", logs, 1), load("all", logs, 2)
    assert [(c.session, c.ts, c.tokens, c.carried, c.resume, c.compactions) for c in one.calls] == [
        (c.session, c.ts, c.tokens, c.carried, c.resume, c.compactions) for c in two.calls
    ]
    assert one.resumed_from == two.resumed_from and one.duplicates == two.duplicates
    _, a, _ = cli("usage", "--timezone", "UTC", "--json", "--jobs", "1")
    _, b, _ = cli("usage", "--timezone", "UTC", "--json", "--jobs", "3")
    assert json.loads(a) == json.loads(b)
    code, _, err = cli("usage", "--jobs", "-1")
    assert code == 2 and "USAGE_BAD_JOBS" in err


def test_codex_resume_in_the_same_rollout_is_marked_and_keeps_the_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.usage_fixtures import _meta, _tc, _turn

    day = tmp_path / "codex" / "sessions" / "2026" / "02" / "01"
    day.mkdir(parents=True)
    lines = [
        _meta("2026-02-01T10:00:00.000Z", "0000ffff"),
        _turn("2026-02-01T10:00:01.000Z"),
        _tc("2026-02-01T10:00:05.000Z", (10000, 0, 100, 0), (10000, 0, 100, 0)),
        # resumed the next day: Codex appends to the same rollout, starting with a new session_meta
        _meta("2026-02-02T09:00:00.000Z", "0000ffff"),
        _turn("2026-02-02T09:00:01.000Z"),
        _tc("2026-02-02T09:00:05.000Z", (24000, 12000, 150, 0), (14000, 12000, 50, 0)),
    ]
    (day / "rollout-2026-02-01T10-00-00-0000ffff.jsonl").write_text("\n".join(lines) + "\n")
    env = {"CODEX_HOME": str(tmp_path / "codex"), "HOME": str(tmp_path)}
    ledger = read_logs(discover("codex", env))
    first, second = ledger.calls
    assert (first.resume, second.resume) == (False, True)
    assert second.carried == 12000 - 10000  # the same context: B is still the first call's 10,000
    monkeypatch.setenv("CODEX_HOME", env["CODEX_HOME"])
    code, out, _ = cli("usage", "session", "0000ffff", "--source", "codex", "--timezone", "UTC", "--json")
    assert code == 0 and [b["kind"] for b in json.loads(out)["boundaries"]] == ["resume"]


def test_html_needs_no_optional_package(
    logs: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "plotly", None)  # the page is drawn by the toolkit itself
    monkeypatch.setitem(sys.modules, "plotly.io", None)
    page, events = tmp_path / "report.html", tmp_path / "events.jsonl"
    code, _, err = cli("usage", "--html", str(page), "--emit-events", str(events))
    assert code == 0, err
    assert page.stat().st_size > 0 and events.stat().st_size > 0


def test_an_unwritable_output_fails_before_anything_is_written(logs: dict[str, str], tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    code, out, err = cli("usage", "--emit-events", str(events), "--html", str(tmp_path / "no" / "r.html"))
    assert code == 2 and "USAGE_BAD_OUTPUT" in err and out == "" and not events.exists()


def test_claude_line_of_another_shape_falls_back_to_candidate_lines(tmp_path: Path) -> None:
    # one complete line that does not fit the typed decoder sends the file down the slow path
    # (only the lines holding "usage":{ or compact_boundary, one by one): the counts do not change
    env = build(tmp_path / "a")
    main = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / "-home-dev-demo" / "s-aaaa.jsonl"
    stat = main.stat()
    odd = json.dumps({"type": "queue-operation", "message": f"text {CANARY}", "timestamp": 5})
    main.write_text(odd + "\n" + main.read_text())
    os.utime(main, (stat.st_atime, stat.st_mtime))
    slow, fast = _report(env, source="claude"), _report(build(tmp_path / "b"), source="claude")
    assert _rows(slow) == _rows(fast)
    # the null request id, the bad version and the torn tail, on either path
    assert slow["notes"]["unreadable_lines_skipped"] == fast["notes"]["unreadable_lines_skipped"] == 3


def test_codex_line_of_another_shape_falls_back_to_candidate_lines(tmp_path: Path) -> None:
    env = build(tmp_path / "a")
    for path in Path(env["CODEX_HOME"]).rglob("*.jsonl"):
        odd = {
            "timestamp": "2026-01-05T15:00:00.500Z",
            "type": "event_msg",
            "payload": {"type": "x", "info": CANARY},
        }
        lines = path.read_text().splitlines()
        path.write_text("\n".join([lines[0], json.dumps(odd, separators=(",", ":")), *lines[1:]]) + "\n")
    assert _rows(_report(env, source="codex")) == _rows(_report(build(tmp_path / "b"), source="codex"))


def test_hostile_logs_are_skipped_not_fatal(tmp_path: Path) -> None:
    """A log nested 200,000 deep and a FIFO named like a log: counted or skipped, never a traceback."""
    import os
    import subprocess
    import sys

    folder = tmp_path / "claude" / "projects" / "p"
    folder.mkdir(parents=True)
    deep = "[" * 200_000 + "]" * 200_000
    row = (
        '{"type":"assistant","x":' + deep + ',"message":{"id":"m1","model":"claude-x","usage":'
        '{"input_tokens":1,"output_tokens":2}},"timestamp":"2026-12-01T00:00:00Z","sessionId":"s1"}'
    )
    (folder / "deep.jsonl").write_text(row + "\n", encoding="utf-8")
    os.mkfifo(folder / "pipe.jsonl")
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "CODEX_HOME": str(tmp_path / "none")}
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "usage", "--source", "claude", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-500:]
    assert json.loads(proc.stdout)["totals"]["calls"] == 0


def test_without_fork_workers_asked_for_read_everything_here(
    logs: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolkit.usage.fold import load

    one = load("all", logs, 1)
    monkeypatch.delattr(os, "fork", raising=False)  # a platform without fork (Windows)
    two = load("all", logs, 2)
    assert [(c.session, c.ts, c.tokens, c.carried) for c in two.calls] == [
        (c.session, c.ts, c.tokens, c.carried) for c in one.calls
    ]
