"""The shipped Grafana dashboard counts each token once: what every panel would sum over a real export.

One repository holds the three records that can carry the same tokens: the Claude Code and Codex
calls of agent logs (``--agent-logs``), the efficiency events ``workgroup usage --emit-events`` made
of the same sessions (recorded with ``workgroup telemetry record``, as docs/usage.md pairs them), and
CM model calls. They are exported to the loopback OTLP receiver; the metric points it decoded become
the series the collector's Prometheus exporter would serve (names and labels as it writes them), and
each panel's PromQL is evaluated over them by a small evaluator of the subset the dashboard uses
(``sum [by (...)] (increase(metric{matchers}[$__range]))`` and the ratio of two such sums). One
cumulative export is the whole window, so ``increase`` over the range is the exported total.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from support.harness import cli, run_workgroup

from toolkit.cm import event_input, event_write

pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra (pip install -e '.[otel]')")
pytest.importorskip("opentelemetry.proto", reason="needs the otel extra (pip install -e '.[otel]')")

from support.otlp_receiver import receiving  # noqa: E402
from support.usage_fixtures import build  # noqa: E402

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "otel" / "grafana-dashboard.json"
TOKEN_METRICS = (
    "workgroup_gen_ai_tokens_total",
    "gen_ai_client_token_usage_sum",
    "gen_ai_client_token_usage_count",
)
CM_CALLS = ((1000, 200, 400, 30), (50, 5, 400, 0))  # input, output, cache read, cache write

Sample = tuple[str, dict[str, str], float]

# -- the series the collector's Prometheus exporter serves ------------------------------------------------


def _label(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def series(points: list[dict[str, Any]]) -> list[Sample]:
    out: list[Sample] = []
    for point in points:
        base = _label(point["name"]) + ("_seconds" if point["unit"] == "s" else "")
        labels = {_label(k): str(v) for k, v in {**point["resource"], **point["attributes"]}.items()}
        if point["kind"] == "histogram":
            out += [(base + "_sum", labels, point["sum"]), (base + "_count", labels, point["count"])]
        else:
            out.append((base + "_total", labels, point["value"]))
    return out


# -- the PromQL subset of the dashboard -------------------------------------------------------------------

_SUM = re.compile(
    r"\s*sum\s*(?:by\s*\(([^)]*)\)\s*)?\(\s*increase\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}"
    r"\[\$__range\]\s*\)\s*\)\s*"
)
_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')


def matchers(text: str) -> list[tuple[str, str, str]]:
    found, at = [], 0
    while at < len(text):
        m = _MATCHER.match(text, at)
        assert m, f"not a matcher list the evaluator knows: {text!r}"
        found.append((m.group(1), m.group(2), m.group(3).encode().decode("unicode_escape")))
        at = m.end()
    return found


def _matches(labels: dict[str, str], wanted: list[tuple[str, str, str]]) -> bool:
    for name, op, value in wanted:
        have = labels.get(name, "")
        ok = {
            "=": have == value,
            "!=": have != value,
            "=~": re.fullmatch(value, have) is not None,  # PromQL regexes are anchored
            "!~": re.fullmatch(value, have) is None,
        }[op]
        if not ok:
            return False
    return True


def _sum(text: str, samples: list[Sample]) -> dict[tuple[str, ...], float]:
    m = _SUM.fullmatch(text)
    assert m, f"not a query the evaluator knows: {text!r}"
    by = [b.strip() for b in m.group(1).split(",")] if m.group(1) else []
    wanted = matchers(m.group(3))
    out: dict[tuple[str, ...], float] = {}
    for name, labels, value in samples:
        if name == m.group(2) and _matches(labels, wanted):
            key = tuple(labels.get(b, "") for b in by)
            out[key] = out.get(key, 0.0) + value
    return out


def evaluate(expr: str, samples: list[Sample], variables: dict[str, str]) -> Any:
    for name, value in variables.items():
        expr = expr.replace("$" + name, value)
    if " / " in expr:
        top, bottom = (_sum(side, samples) for side in expr.split(" / "))
        return top.get((), 0.0) / bottom[()]
    return _sum(expr, samples)


# -- the records ------------------------------------------------------------------------------------------


def _cm_calls(root: Path) -> None:
    for index, (inp, out, read, write) in enumerate(CM_CALLS):
        identity = {
            "call_id": f"call-{index}",
            "stage": "build",
            "role": "coder",
            "adapter": "manual",
            "requested_model": "gpt-5",
            "source": "api",
            "purpose": "cm-ai:build",
        }
        usage = {
            **identity,
            "usage_state": "observed",
            "outcome": "success",
            "duration_ms": 800,
            "input_tokens": inp,
            "output_tokens": out,
            "cache_read_tokens": read,
            "cache_write_tokens": write,
        }
        event_write.write_event(
            event_input.EventArgs(
                workflow="cm-ai",
                event="model_usage",
                phase="complete",
                runtime="codex",
                run_id="run-20260105-aaaa",
                project_root=str(root),
                detail="coder model call success",
                at="2026-01-05T15:00:05Z",
                data_json=json.dumps(usage),
            ),
            environ=os.environ,
        )


def _hand_totals(env: dict[str, str], events_file: Path) -> dict[str, dict[str, int]]:
    """Per source, the tokens by type each panel must show once."""
    code, out, err = cli("usage", "--json", "--timezone", "UTC", env=env)
    assert code == 0, err
    t = json.loads(out)["totals"]
    agent = {
        "input": t["input"] + t["cache_write"] + t["cache_read"],  # GenAI input includes cached input
        "output": t["output"],
        "cache_read": t["cache_read"],
        "cache_creation": t["cache_write"],
    }
    efficiency = dict.fromkeys(agent, 0)
    for line in events_file.read_text().splitlines():
        billed = json.loads(line)["event"]["billed"]
        read, created = (
            billed.get("cache_read_input_tokens") or 0,
            billed.get("cache_creation_input_tokens") or 0,
        )
        efficiency["input"] += (billed.get("uncached_input_tokens") or 0) + read + created
        efficiency["output"] += billed.get("output_tokens") or 0
        efficiency["cache_read"] += read
        efficiency["cache_creation"] += created
    cm = {
        "input": sum(c[0] for c in CM_CALLS),
        "output": sum(c[1] for c in CM_CALLS),
        "cache_read": sum(c[2] for c in CM_CALLS),
        "cache_creation": sum(c[3] for c in CM_CALLS),
    }
    return {"agent": agent, "efficiency": efficiency, "cm": cm}


def test_every_token_panel_counts_one_source_once(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"a.txt": "a"})
    env = build(tmp_path / "agent-logs")
    events_file = tmp_path / "events.jsonl"
    code, _, err = cli("usage", "--timezone", "UTC", "--emit-events", str(events_file), env=env)
    assert code == 0, err
    recorded = 0
    for line in events_file.read_text().splitlines():
        one = tmp_path / "one.json"
        one.write_text(json.dumps({"event": json.loads(line)["event"]}))
        code, _, err = cli("telemetry", "record", str(one))
        assert code == 0, err
        recorded += 1
    _cm_calls(git_repo.path)
    with receiving() as rx:
        proc = run_workgroup(
            "telemetry",
            "export",
            "--otlp",
            rx.url,
            "--json",
            "--agent-logs",
            "--all-agent-projects",
            cwd=git_repo.path,
            env=env,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr.decode()
        points = list(rx.received.points)
    summary = json.loads(proc.stdout)
    hand = _hand_totals(env, events_file)
    assert summary["by_source"]["efficiency"] == recorded and summary["by_source"]["cm"] == len(CM_CALLS)
    # the premise: the efficiency events of --emit-events hold the agent logs' tokens again
    assert hand["efficiency"] == hand["agent"] and hand["agent"]["input"] > 0
    samples = series(points)
    repository = {labels["workgroup_repository_id"] for _, labels, _ in samples}
    assert len(repository) == 1

    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    choice = variables["token_source"]
    assert choice["multi"] is False and choice["includeAll"] is False  # one source at a time, always
    assert [o["value"] for o in choice["options"]] == ["agent", "efficiency", "cm"]
    shown: dict[str, dict[str, Any]] = {}
    for source in ("agent", "efficiency", "cm"):
        for repo in (variables["repository"]["allValue"], next(iter(repository))):
            values = {"token_source": source, "repository": repo}
            for panel in dashboard["panels"]:
                for target in panel["targets"]:
                    expr = target["expr"]
                    if not any(metric + "{" in expr for metric in TOKEN_METRICS):
                        continue
                    # every selector of a token metric names exactly one source
                    for selector in re.findall(r"\{([^}]*)\}", expr):
                        assert ("workgroup_record", "=", "$token_source") in matchers(selector), expr
                    shown.setdefault(source, {})[panel["title"]] = evaluate(expr, samples, values)
    assert len(shown["agent"]) == 3
    for source, panels in shown.items():
        want = hand[source]
        by_type = panels["Tokens by type ($token_source)"]
        assert {k[0]: v for k, v in by_type.items() if v} == {k: v for k, v in want.items() if v}, source
        by_model: dict[str, float] = {}
        for (_model, kind), value in panels["Tokens by model ($token_source)"].items():
            by_model[kind] = by_model.get(kind, 0) + value
        assert by_model == {"input": want["input"], "output": want["output"]}, source
        assert panels["Input reported as cache reads ($token_source)"] == pytest.approx(
            want["cache_read"] / want["input"]
        )
    # the other totals the dashboard sums: CM calls, efficiency events
    everything = {"token_source": "agent", "repository": ".*"}
    by_title = {p["title"]: p["targets"] for p in dashboard["panels"]}
    calls = evaluate(by_title["CM model calls"][0]["expr"], samples, everything)
    assert calls == {(): len(CM_CALLS)}
    kinds = evaluate(by_title["Efficiency events by kind"][0]["expr"], samples, everything)
    assert sum(kinds.values()) == recorded
    # what the dashboard summed before: every record's tokens added up, the agent calls twice over
    before = 'sum by (workgroup_token_type) (increase(workgroup_gen_ai_tokens_total{workgroup_repository_id=~".*"}[$__range]))'
    old = evaluate(before, samples, {})
    assert old[("input",)] == hand["agent"]["input"] * 2 + hand["cm"]["input"]
