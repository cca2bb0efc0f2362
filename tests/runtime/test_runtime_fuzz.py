"""Hypothesis fuzzing of every runtime op in-process: never a traceback, always a known coded frame."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.lineage_fixtures import HOT_NOW, hot_current, hot_lineage

from toolkit.runtime.codes import MESSAGES, RuntimeOpError
from toolkit.runtime.protocol import OPERATIONS, RuntimeContext, execute, render_frame

CAPSULE = {
    "schema": "knowzcode.context-capsule/v1",
    "task_id": "t1",
    "workgroup_id": "wg",
    "phase": "2A",
    "objective": "Fix the handler",
    "node_ids": ["n1"],
    "owned_files": ["src/api.py"],
    "read_files": ["README.md"],
    "specs": [{"path": "specs/a.md", "verify_ids": ["V1"]}],
    "approved_decisions": [],
    "checkpoint_sha": None,
    "failures": [],
    "risks": [],
    "constraints": [],
    "next_action": "run tests",
}

# one valid request per op: the seeds that mutations start from
SEEDS: dict[str, dict[str, Any]] = {
    "route": {
        "input": {
            "role": "builder",
            "owned_files": ["src/a.py"],
            "coupling": "moderate",
            "inheritance": {"affinity": "high", "safe": True, "within_budget": True, "full_supported": True},
        }
    },
    "lineage": {"lineage": hot_lineage(), "current": hot_current(), "now": HOT_NOW},
    "capsule": {"capsule": CAPSULE, "max_bytes": 12288},
    "telemetry": {
        "event": {
            "event": "dispatch_decision",
            "observed_at": HOT_NOW,
            "provider": "claude",
            "mode": "local",
            "reason_codes": ["LOCAL_CHEAPER"],
        }
    },
    "rollout": {
        "input": {
            "rollout": "canary",
            "canary_percent": 25,
            "task_corpus_id": "anon-0123456789abcdef",
            "actual_mode": "local",
            "recommended_mode": "resume",
        }
    },
    "result-policy": {"input": {"material": True}},
    "vault-delta": {
        "input": {"delta": {"category": "decision", "title": "T", "content": "C"}, "severity": "low"}
    },
    "dispatch": {
        "routing": {"input": {"role": "builder", "owned_files": ["src/a.py"]}},
        "lineage": {"lineage": hot_lineage(), "current": hot_current(), "now": HOT_NOW},
        "rollout": {"input": {"rollout": "shadow"}},
        "result_policy": {"input": {"writer": True}},
    },
    "budget": {"used": 5, "limit": 10},
    "verification-plan": {"tier": "gate3"},
    "promotion": {"pairs": []},
    "should-deep-query": {"question": "Which spec covers the token refresh?"},
}

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(
        [
            "",
            "2026-07-30T08:20:00Z",
            "2026-02-31T00:00:00Z",
            "src/a.py",
            "../x",
            "/abs",
            "C:/x",
            "builder",
            "reviewer",
            "HOT",
            "on",
            "canary",
            "restricted",
            "sha256:" + "a" * 64,
            "\u2028",
            "\ud800",
        ]
    ),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    return found


@st.composite
def mutated(draw: st.DrawFn, seed: dict[str, Any]) -> dict[str, Any]:
    value = copy.deepcopy(seed)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = [p for p in _paths(value) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent: Any = value
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(json_values)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=10))] = draw(json_values)
    return value


def check_frame(op: str, frame: dict[str, Any]) -> None:
    line = render_frame(frame)
    assert line.endswith("\n") and line.count("\n") == 1
    decoded = json.loads(line)
    if decoded["ok"]:
        assert decoded["operation"] == op and isinstance(decoded["result"], dict)
    else:
        assert decoded["code"] in MESSAGES and decoded["message"] == MESSAGES[decoded["code"]]
        assert set(decoded) == {"ok", "code", "message"}


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RuntimeContext:
    monkeypatch.chdir(tmp_path)  # no repository, no registry: nothing to read or write
    return RuntimeContext(cwd=str(tmp_path))


FUZZ = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_seed_requests_are_answered(op: str, ctx: RuntimeContext) -> None:
    check_frame(op, execute(op, copy.deepcopy(SEEDS[op]), ctx))


REQUEST_KEYS = sorted({key for seed in SEEDS.values() for key in seed} | {"x"})


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_fuzz_random_and_mutated_requests(op: str, ctx: RuntimeContext) -> None:
    @FUZZ
    @given(
        st.one_of(mutated(SEEDS[op]), st.dictionaries(st.sampled_from(REQUEST_KEYS), json_values, max_size=5))
    )
    def run(request: dict[str, Any]) -> None:
        check_frame(op, execute(op, request, ctx))

    run()


@pytest.mark.parametrize(
    "op,func",
    [
        ("lineage", "toolkit.runtime.lineage:op_lineage"),
        ("dispatch", "toolkit.runtime.dispatch:op_dispatch"),
        ("should-deep-query", "toolkit.runtime.deep_query:op_should_deep_query"),
    ],
)
def test_own_ops_raise_only_coded_errors(op: str, func: str, ctx: RuntimeContext) -> None:
    # stricter than the protocol's catch-all: these ops never fail by accident (KeyError, TypeError ...)
    import importlib

    module_name, _, name = func.partition(":")
    target = getattr(importlib.import_module(module_name), name)

    @FUZZ
    @given(st.one_of(mutated(SEEDS[op]), st.dictionaries(st.text(max_size=10), json_values, max_size=4)))
    def run(request: dict[str, Any]) -> None:
        try:
            result = target(request, ctx)
        except RuntimeOpError as exc:
            assert exc.code in MESSAGES
        else:
            assert isinstance(result, dict)
            json.dumps(result, allow_nan=False)

    run()


REFERENCE = os.environ.get("KNOWZCODE_RUNTIME")
NODE_BATCH = r"""
const { executeRuntimeOperation } = await import(process.argv[1]);
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const items = JSON.parse(Buffer.concat(chunks).toString('utf8'));
process.stdout.write(JSON.stringify(items.map(([op, req]) => {
  try { return { ok: true, result: executeRuntimeOperation(op, req) }; }
  catch (e) {
    const coded = typeof e?.code === 'string' && /^[A-Z0-9_]{3,64}$/.test(e.code);
    return { ok: false, code: coded ? e.code : 'INVALID_REQUEST' };
  }
})));
"""


def _deliberate_deviation(request: dict[str, Any]) -> bool:
    """DESIGN.md, Decisions: a lineage's checkpoint_sha is never null (the reference allows null)."""
    holder = request.get("lineage")
    holder = holder if isinstance(holder, dict) else {}
    records = [holder, holder.get("lineage")]  # the lineage op, and dispatch's lineage request
    return any(isinstance(r, dict) and "checkpoint_sha" in r and r["checkpoint_sha"] is None for r in records)


@pytest.mark.skipif(
    not REFERENCE or shutil.which("node") is None,
    reason="set KNOWZCODE_RUNTIME to a copy of the reference context_efficiency_runtime.mjs",
)
def test_same_answers_as_the_reference_runtime(ctx: RuntimeContext) -> None:
    # Differential check: lineage and dispatch answer exactly like the reference on random requests.
    samples: list[tuple[str, Any]] = []

    def collect_for(op: str) -> None:
        @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
        @given(
            st.one_of(
                mutated(SEEDS[op]), st.dictionaries(st.sampled_from(REQUEST_KEYS), json_values, max_size=4)
            )
        )
        def collect(request: dict[str, Any]) -> None:
            if not _deliberate_deviation(request):
                samples.append((op, request))

        collect()

    collect_for("lineage")
    collect_for("dispatch")
    reference_url = Path(str(REFERENCE)).resolve().as_uri()
    proc = subprocess.run(
        ["node", "--input-type=module", "-e", NODE_BATCH, reference_url],
        input=json.dumps(samples, ensure_ascii=True).encode(),
        capture_output=True,
        timeout=120,
        check=True,
        cwd=ctx.cwd,
    )
    for (op, request), theirs in zip(samples, json.loads(proc.stdout), strict=True):
        frame = execute(op, json.loads(json.dumps(request)), ctx)
        ours = (
            {"ok": True, "result": frame["result"]} if frame["ok"] else {"ok": False, "code": frame["code"]}
        )
        assert ours == theirs, (op, request)
