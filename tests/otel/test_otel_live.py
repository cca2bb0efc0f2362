"""Live mode (``telemetry: otlp``): real ``workgroup``/``cm-log-event`` processes spool, a real detached
flusher sends to a real OTLP/HTTP receiver on loopback; the runtime path imports no OpenTelemetry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.harness import GitRepo, run_workgroup
from support.sync import wait_for_unlock, wait_until

pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra (pip install -e '.[otel]')")
pytest.importorskip("opentelemetry.proto", reason="needs the otel extra (pip install -e '.[otel]')")

from support.otlp_receiver import free_port, receiving  # noqa: E402
from test_otel_export import EVENT  # noqa: E402
from test_otel_optional import CM_USAGE  # noqa: E402

ROUTE = json.dumps({"input": {"independent_reviewer": True}})


@pytest.fixture
def live_repo(git_repo: GitRepo) -> Iterator[Path]:
    git_repo.commit("init", {".workgroup/config.yml": "context_efficiency:\n  telemetry: otlp\n"})
    yield git_repo.path
    wait_for_flusher(git_repo.path / ".git" / "workgroup" / "otel")


def wait_for_flusher(otel_dir: Path, timeout: float = 30.0) -> bool:
    """True once no flusher holds its lock (the flusher is a detached process of its own)."""
    return wait_for_unlock(otel_dir / "flusher.lock", timeout)


def env_for(url: str, **extra: str) -> dict[str, str]:
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": url,
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "1",
        **extra,
    }


def route(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    proc = run_workgroup("runtime", "route", stdin=ROUTE, cwd=root, env=env)
    assert proc.returncode == 0 and proc.stdout.startswith(b'{"ok":true'), proc.stdout
    return proc


def pending_lines(otel_dir: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted(otel_dir.glob("*.jsonl")):
        rows.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return rows


def test_runtime_decisions_are_sent_by_the_flusher(live_repo: Path) -> None:
    with receiving() as rx:
        env = env_for(rx.url)
        for _ in range(3):
            route(live_repo, env)
        batch = run_workgroup(
            "runtime", "--batch", "route", stdin=ROUTE + "\n" + ROUTE + "\n", cwd=live_repo, env=env
        )
        assert batch.returncode == 0
        spans = rx.wait_for_spans(5)
        assert wait_for_flusher(live_repo / ".git" / "workgroup" / "otel")
    assert len(spans) == 5 and len({s["span_id"] for s in spans}) == 5
    assert {s["name"] for s in spans} == {"workgroup.decision route"}
    attrs = spans[0]["attributes"]
    assert attrs["workgroup.mode"] == "fresh-capsule"
    assert set(attrs) == {
        "workgroup.record",
        "workgroup.decision.op",
        "workgroup.mode",
        "workgroup.reason_codes",
    }
    assert len(spans[0]["resource"]["workgroup.repository.id"]) == 32
    assert pending_lines(live_repo / ".git" / "workgroup" / "otel") == []  # sent batches are deleted


def test_live_mode_off_spools_nothing(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {".workgroup/config.yml": "context_efficiency:\n  telemetry: local\n"})
    route(git_repo.path, env_for(f"http://127.0.0.1:{free_port()}"))
    assert not (git_repo.path / ".git" / "workgroup" / "otel").exists()


LEAN_PROBE = """
import io, json, sys
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[2].encode()))
if sys.argv[1] == "runtime":
    from toolkit.entry import main
    code = main(["runtime", "route"])
else:
    from toolkit.cm.events import main
    code = main(json.loads(sys.argv[2]))
roots = ("opentelemetry", "google", "pydantic", "typer", "yaml")
heavy = sorted(m for m in sys.modules if m.split(".")[0] in roots)
sys.stderr.write(json.dumps({"code": code, "heavy": heavy}) + "\\n")
"""


def test_runtime_path_never_imports_opentelemetry(live_repo: Path) -> None:
    env = {**os.environ, **env_for(f"http://127.0.0.1:{free_port()}"), "OTEL_BSP_EXPORT_TIMEOUT": "500"}
    usage = dict(CM_USAGE)
    cm_args = [
        "--workflow",
        "cm-ai",
        "--event",
        "model_usage",
        "--phase",
        "complete",
        "--runtime",
        "codex",
        "--detail",
        "done",
        "--run-id",
        "run-20260730-cccc",
        "--project-root",
        str(live_repo),
        "--data-json",
        json.dumps(usage),
    ]
    for kind, payload in (("runtime", ROUTE), ("cm", json.dumps(cm_args))):
        proc = subprocess.run(
            [sys.executable, "-c", LEAN_PROBE, kind, payload],
            cwd=live_repo,
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        report = json.loads(proc.stderr.decode().strip().splitlines()[-1])
        assert report == {"code": 0, "heavy": []}, (kind, proc.stderr)
    kinds = [row["kind"] for row in pending_lines(live_repo / ".git" / "workgroup" / "otel")]
    assert sorted(kinds) == ["cm", "decision"]  # both calls really took the live path


def test_live_ids_equal_the_ids_of_a_later_export(live_repo: Path, tmp_path: Path) -> None:
    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(EVENT), encoding="utf-8")
    identity = {
        "call_id": "c-7",
        "stage": "build",
        "role": "coder",
        "adapter": "openai-compatible",
        "requested_model": "gpt-5",
        "source": "api",
        "purpose": "cm-ai:build",
    }
    usage = {
        **identity,
        "usage_state": "observed",
        "outcome": "success",
        "input_tokens": 10,
        "output_tokens": 2,
    }
    with receiving() as rx:
        env = env_for(rx.url)
        assert run_workgroup("telemetry", "record", str(event_file), cwd=live_repo, env=env).returncode == 0
        for event, phase, data in (("model_call", "claimed", identity), ("model_usage", "complete", usage)):
            proc = subprocess.run(
                [
                    Path(sys.executable).parent / "cm-log-event",
                    "--workflow",
                    "cm-ai",
                    "--event",
                    event,
                    "--phase",
                    phase,
                    "--runtime",
                    "codex",
                    "--detail",
                    "coder call",
                    "--run-id",
                    "run-20260730-dddd",
                    "--project-root",
                    str(live_repo),
                    "--data-json",
                    json.dumps(data),
                ],
                cwd=live_repo,
                env={**os.environ, **env},
                capture_output=True,
                timeout=60,
                check=False,
            )
            assert proc.returncode == 0, proc.stderr
        live = rx.wait_for_spans(2)
        assert wait_for_flusher(live_repo / ".git" / "workgroup" / "otel")
        exported = run_workgroup("telemetry", "export", "--otlp", rx.url, cwd=live_repo, env=env)
        assert exported.returncode == 0, exported.stderr
        later = rx.received.spans[len(live) :]
    assert sorted(s["name"] for s in live) == ["chat gpt-5", "workgroup.efficiency worker_usage"]
    assert {(s["trace_id"], s["span_id"]) for s in live} == {(s["trace_id"], s["span_id"]) for s in later}


def test_collector_down_loses_nothing(live_repo: Path) -> None:
    port = free_port()
    otel_dir = live_repo / ".git" / "workgroup" / "otel"
    env = env_for(f"http://127.0.0.1:{port}", OTEL_BSP_EXPORT_TIMEOUT="300")
    for _ in range(4):
        route(live_repo, env)
    assert wait_for_flusher(otel_dir)  # it gave up after OTEL_BSP_EXPORT_TIMEOUT of failures
    assert len(pending_lines(otel_dir)) == 4  # everything is still on disk
    status = json.loads((otel_dir / "status.json").read_text(encoding="utf-8"))
    assert status["ok"] is False and status["error"] == "COLLECTOR_UNAVAILABLE"
    with receiving(port) as rx:
        route(live_repo, env)  # the next call starts a new flusher, which sends the backlog first
        spans = rx.wait_for_spans(5)
        assert wait_for_flusher(otel_dir)
    assert len(spans) == 5 and len({s["span_id"] for s in spans}) == 5
    assert pending_lines(otel_dir) == []
    # the new flusher delivered everything: status.json says so (it used to keep the old failure)
    status = json.loads((otel_dir / "status.json").read_text(encoding="utf-8"))
    assert status["ok"] is True and status["pending"] == 0 and "error" not in status, status


def test_slow_collector_never_blocks_the_runtime_path(live_repo: Path) -> None:
    with receiving() as rx:
        rx.delay = 2.5
        env = env_for(rx.url, OTEL_EXPORTER_OTLP_TIMEOUT="10")
        started = time.monotonic()
        for _ in range(3):
            route(live_repo, env)
        elapsed = time.monotonic() - started
        spans = rx.wait_for_spans(3, timeout=40)
        assert wait_for_flusher(live_repo / ".git" / "workgroup" / "otel", timeout=40)
    # three calls finished before the collector answered even once: nobody waited on the network
    assert elapsed < rx.delay and len({s["span_id"] for s in spans}) == 3


def test_spool_holds_no_content(live_repo: Path) -> None:
    env = {**os.environ, **env_for(f"http://127.0.0.1:{free_port()}", OTEL_BSP_EXPORT_TIMEOUT="200")}
    usage = {
        "call_id": "c-9",
        "stage": "build",
        "role": "coder",
        "adapter": "manual",
        "requested_model": "gpt-5",
        "source": "api",
        "purpose": "cm-ai:build",
        "usage_state": "observed",
        "outcome": "success",
        "input_tokens": 3,
        "output_tokens": 4,
    }
    proc = subprocess.run(
        [
            Path(sys.executable).parent / "cm-log-event",
            "--workflow",
            "cm-ai",
            "--event",
            "model_usage",
            "--phase",
            "complete",
            "--runtime",
            "codex",
            "--detail",
            "CANARY-DETAIL said hello",
            "--project",
            "CANARY-PROJECT",
            "--run-id",
            "run-20260730-eeee",
            "--project-root",
            str(live_repo),
            "--data-json",
            json.dumps(usage),
        ],
        cwd=live_repo,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    otel_dir = live_repo / ".git" / "workgroup" / "otel"
    assert wait_for_flusher(otel_dir)
    spooled = b"".join(path.read_bytes() for path in otel_dir.glob("*.jsonl"))
    assert b'"call_id":"c-9"' in spooled
    assert b"CANARY" not in spooled and str(live_repo).encode() not in spooled


def test_a_flusher_that_cannot_send_keeps_the_spool_and_its_lock(live_repo: Path) -> None:
    otel_dir = live_repo / ".git" / "workgroup" / "otel"
    env = env_for("ftp://not-otlp", OTEL_BSP_EXPORT_TIMEOUT="3000")  # a broken endpoint variable
    route(live_repo, env)
    assert wait_until((otel_dir / "status.json").exists, timeout=20)  # the flusher has tried and failed
    status = json.loads((otel_dir / "status.json").read_text(encoding="utf-8"))
    assert status["ok"] is False and status["error"] == "OTLP_ENDPOINT_INVALID"
    holder = (otel_dir / "flusher.lock").read_text(encoding="utf-8")
    route(live_repo, env)  # while the failed flusher holds its lock, no second one starts
    assert (otel_dir / "flusher.lock").read_text(encoding="utf-8") == holder
    assert wait_for_flusher(otel_dir)
    assert len(pending_lines(otel_dir)) == 2  # both decisions wait on disk for a working endpoint
