"""Issue #25: the shapes the demo writes and reads back are TypedDicts; these tests hold what is
written (Codex token usage in the sample logs) and read back (the runtime's answer frame) to the
declared keys, in the declared order."""

from __future__ import annotations

import json
from pathlib import Path

from support.harness import declared_keys

from toolkit.demo.runner import Demo, RuntimeFrame
from toolkit.demo.steps.agent_logs import CodexTokenUsage, write_samples


def test_the_sample_codex_usage_has_the_declared_keys_in_order(tmp_path: Path) -> None:
    env = write_samples(tmp_path)
    (rollout,) = Path(env["CODEX_HOME"]).rglob("rollout-*.jsonl")
    counts = [json.loads(line)["payload"] for line in rollout.read_text().splitlines()]
    infos = [payload["info"] for payload in counts if payload.get("type") == "token_count"]
    assert len(infos) == 3
    for info in infos:
        assert list(info) == ["total_token_usage", "last_token_usage"]
        assert [list(info[part]) for part in info] == [declared_keys(CodexTokenUsage)] * 2


def test_a_runtime_frame_read_back_has_the_declared_keys_in_order(tmp_path: Path) -> None:
    """A real ``workgroup runtime`` answer: ``ok``, ``operation``, ``result``, or ``ok``, ``code``,
    ``message``."""
    demo = Demo(root=tmp_path)
    request = {
        "input": {
            "rollout": "canary",
            "canary_percent": 10,
            "task_corpus_id": "anon-0123456789abcdef",
            "actual_mode": "local",
            "recommended_mode": "fresh-capsule",
        }
    }
    answered = demo.runtime("rollout", request)
    refused = demo.runtime("rollout", {"input": "not an object"})
    declared = declared_keys(RuntimeFrame)
    assert list(answered) == [key for key in declared if key not in ("code", "message")]
    assert list(refused) == [key for key in declared if key not in ("operation", "result")]
    assert answered["ok"] is True and isinstance(answered["result"], dict)
    assert refused["ok"] is False and refused["code"] == "INVALID_REQUEST"
