"""The otel extra is optional: without it (or without ``telemetry: otlp``) nothing of OpenTelemetry is
imported, and an export asks for the extra with a coded error instead of a traceback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

# Runs ``workgroup ARGS`` (or cm-log-event) in a fresh interpreter, optionally with OpenTelemetry and
# protobuf made unimportable (as in an install without the extra), and reports what got imported.
PROBE = """
import importlib.abc, io, json, sys
args = json.loads(sys.argv[1])
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("opentelemetry", "google"):
            raise ImportError("not installed: " + name)
        return None
if args["absent"]:
    sys.meta_path.insert(0, Absent())
sys.stdin = io.TextIOWrapper(io.BytesIO(args["stdin"].encode()))
if args["script"] == "cm-log-event":
    from toolkit.cm.events import main as cm_main
    code = cm_main(args["argv"])
else:
    from toolkit.entry import main
    code = main(args["argv"])
loaded = sorted({m.split(".")[0] for m in sys.modules} & {"opentelemetry", "google"})
sys.stderr.write("\\nPROBE " + json.dumps({"code": code, "loaded": loaded}) + "\\n")
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def probe(cwd: Path, argv: list[str], *, absent: bool = False, stdin: str = "", script: str = "workgroup"):  # type: ignore[no-untyped-def]
    payload = json.dumps({"argv": argv, "absent": absent, "stdin": stdin, "script": script})
    # a flusher started here must not find a collector of this machine, and must give up soon
    env = {
        **os.environ,
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{free_port()}",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "1",
        "OTEL_BSP_EXPORT_TIMEOUT": "200",
    }
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, payload],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    err = proc.stderr.decode()
    line = [row for row in err.splitlines() if row.startswith("PROBE ")][-1]
    return json.loads(line[6:]), err


@pytest.fixture
def repo(git_repo, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"a.txt": "a"})
    event = {
        "event": "worker_usage",
        "observed_at": "2026-07-30T12:00:00Z",
        "provider": "claude",
        "billed": {"output_tokens": 3, "accounting_source": "provider-reported"},
    }
    (tmp_path / "event.json").write_text(json.dumps(event), encoding="utf-8")
    return git_repo.path  # type: ignore[no-any-return]


# one completed CM model call, the row both import tests write through cm-log-event
CM_USAGE: dict[str, object] = {
    "call_id": "c-1",
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


def test_nothing_of_opentelemetry_is_imported_when_not_configured(repo: Path, tmp_path: Path) -> None:
    usage = dict(CM_USAGE)
    cases = [
        ("workgroup", ["--help"], ""),
        ("workgroup", ["runtime", "route"], '{"input": {"independent_reviewer": true}}'),
        ("workgroup", ["runtime", "dispatch"], '{"routing": {"input": {}}, "rollout": {"rollout": "off"}}'),
        ("workgroup", ["route", "-", "--record"], '{"input": {}}'),
        ("workgroup", ["telemetry", "record", str(tmp_path / "event.json")], ""),
        ("workgroup", ["telemetry", "export", "--otlp", "--dry-run"], ""),
        (
            "cm-log-event",
            [
                "--workflow",
                "cm-ai",
                "--event",
                "model_usage",
                "--phase",
                "complete",
                "--runtime",
                "codex",
                "--detail",
                "d",
                "--run-id",
                "run-20260730-ffff",
                "--project-root",
                str(repo),
                "--data-json",
                json.dumps(usage),
            ],
            "",
        ),
    ]
    for script, argv, stdin in cases:
        report, err = probe(repo, argv, stdin=stdin, script=script)
        assert report == {"code": 0, "loaded": []}, (argv, err)
    assert not list((repo / ".git" / "workgroup").glob("otel/*.jsonl"))  # nothing spooled


def test_export_without_the_extra_asks_for_it(repo: Path, tmp_path: Path) -> None:
    record, _ = probe(repo, ["telemetry", "record", str(tmp_path / "event.json")], absent=True)
    assert record["code"] == 0
    dry, err = probe(repo, ["telemetry", "export", "--otlp", "--dry-run", "--json"], absent=True)
    assert dry["code"] == 0, err  # mapping and counting need no SDK
    report, err = probe(repo, ["telemetry", "export", "--otlp", "http://127.0.0.1:9"], absent=True)
    assert report["code"] == 3
    assert "OTEL_NOT_INSTALLED" in err and "workgroup-toolkit[otel]" in err and "Traceback" not in err


def test_live_mode_without_the_extra_keeps_the_runtime_answering(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {".workgroup/config.yml": "context_efficiency:\n  telemetry: otlp\n"})
    report, err = probe(
        git_repo.path, ["runtime", "route"], absent=True, stdin='{"input": {"independent_reviewer": true}}'
    )
    assert report == {"code": 0, "loaded": []}, err
    spool = git_repo.path / ".git" / "workgroup" / "otel" / "spool.jsonl"
    batches = list(spool.parent.glob("*.jsonl"))
    assert batches, "the decision was spooled for a flusher"
