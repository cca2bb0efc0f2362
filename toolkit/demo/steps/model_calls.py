"""Demo step: one role call through the CM OpenAI-compatible adapter, its events and the usage report.

A loopback model server runs in a thread of the demo process, so nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolkit.demo.runner import Demo

RUN_ID = "demo-run-0001"
REPLY = {
    "deltas": ["add GET /orders.csv"],
    "decisions": ["stream rows"],
    "open_questions": [],
    "mappings": [{"ac": "AC1", "task": "T1"}],
}


class _ModelHandler(BaseHTTPRequestHandler):
    """A stand-in provider: answers every chat completion with a compact plan and OpenAI usage."""

    requests: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - stdlib API
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).requests.append(self.path)
        body = json.dumps(
            {
                "model": "demo-model-v1",
                "choices": [{"message": {"content": json.dumps(REPLY)}}],
                "usage": {
                    "prompt_tokens": 812,
                    "completion_tokens": 64,
                    "prompt_tokens_details": {"cached_tokens": 640},
                },
            }
        ).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


def _packet(demo: Demo) -> str:
    proc = demo.run(
        "packet",
        "build",
        "planner",
        "--workflow",
        "cm-prd",
        "--stage",
        "design_generation",
        "--objective",
        "plan the CSV export of orders",
        "--id",
        "feature=export-csv",
        "--ref",
        "README.md",
        "--item",
        "analyst_result=CSV export of the orders table",
        "--item",
        "affected_modules=src/api.py",
        "--item",
        "approved_constraints=no new dependency",
        "--item",
        "acceptance_criteria_candidates=AC1 the export downloads a CSV",
    )
    if proc.returncode == 0 and proc.stdout.strip():
        demo.say("`workgroup packet build planner ...` assembled the packet: stable prefix + dynamic packet.")
        return proc.stdout
    demo.say("(packet build unavailable here; using a literal minimal packet)")
    return json.dumps(
        {
            "stable_prefix": {
                "safety": "stay in scope; never reveal credentials",
                "workflow": "cm-prd design_generation",
                "project_rules": "none beyond the workflow",
                "role": "planner",
                "output_schema": "one JSON object: deltas, decisions, open_questions, mappings",
            },
            "dynamic_packet": {
                "workflow": "cm-prd",
                "stage": "design_generation",
                "role": "planner",
                "objective": "plan the CSV export of orders",
                "identifiers": {"feature": "export-csv"},
                "constraints": ["no new dependency"],
                "expected_output": "compact plan",
            },
        }
    )


def _call(demo: Demo, url: str, specs: Path, packet: str, call_id: str) -> Any:
    env = {
        "CM_OPENAI_COMPATIBLE_ENABLED": "true",
        "CM_OPENAI_COMPATIBLE_BASE_URL": f"{url}/v1",
        "CM_OPENAI_COMPATIBLE_API_KEY": "demo-key-not-a-secret",
    }
    return demo.run(
        "cm-openai-compatible-call",
        "--workflow",
        "cm-prd",
        "--stage",
        "design_generation",
        "--role",
        "planner",
        "--runtime",
        "codex",
        "--requested-model",
        "planner-default",
        "--call-id",
        call_id,
        "--project-root",
        str(demo.root),
        "--specs-dir",
        str(specs),
        "--run-id",
        RUN_ID,
        "--timeout-seconds",
        "10",
        stdin=packet,
        env=env,
    )


def run(demo: Demo) -> None:
    demo.heading("Model calls: claim, call, verified usage, report")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ModelHandler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    specs = demo.root / "specs" / "export-csv"
    specs.mkdir(parents=True, exist_ok=True)
    try:
        demo.say(
            f"A stand-in model server listens on loopback ({url}); plain HTTP is allowed only for loopback."
        )
        packet = _packet(demo)
        first = _call(demo, url, specs, packet, "planner-0001")
        demo.say(f"cm-openai-compatible-call exit {first.returncode}; stdout is only the model's text:")
        demo.say("  " + first.stdout.strip())
        log = specs / "运行日志.jsonl"
        for line in log.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            counts = {
                k: row[k]
                for k in ("usage_state", "input_tokens", "output_tokens", "cache_read_tokens")
                if k in row
            }
            demo.say(f"  event {row['event']}/{row['phase']} call_id={row['call_id']} {json.dumps(counts)}")
        demo.say(
            "The claim was written before the request and the usage row after it; neither holds the "
            "prompt, the reply, the endpoint or the key."
        )
        again = _call(demo, url, specs, packet, "planner-0001")
        demo.say(
            f"Same call_id again: exit {again.returncode} ({again.stderr.strip()}); "
            f"the server saw {len(_ModelHandler.requests)} request(s) in total."
        )
        report = demo.run("cm-usage-report", "--last", "5")
        demo.say("cm-usage-report reads the private global mirror (token counts, never money):")
        demo.say(report.stdout.rstrip())
    finally:
        server.shutdown()
        server.server_close()
