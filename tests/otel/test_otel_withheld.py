"""Everything an export sends passes the telemetry context: CM free text (task, feature, node) and
resource attributes that fail are sent as ``withheld:<8 hex>`` pseudonyms, and the export says
how many values it withheld. A real export to a real OTLP/HTTP receiver on loopback; the payload
bytes are searched for every private value."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.harness import run_workgroup

from toolkit.cm import event_input, event_write

pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra (pip install -e '.[otel]')")
pytest.importorskip("opentelemetry.proto", reason="needs the otel extra (pip install -e '.[otel]')")

from support.otlp_receiver import receiving  # noqa: E402

OWNER = "owner.person@acme-corp.io"
# one value for each shape that must never leave, with the field it is written to
PRIVATE: dict[str, tuple[str, str]] = {
    "email": ("task", "mail jane.doe@corp-mail.net"),
    "tilde path": ("feature", "~/notes/plan.md"),
    "home path": ("node", "/home/jane/src/app.py"),
    "ipv4": ("task", "deploy to 10.20.30.40"),
    "internal url": ("feature", "http://build.corp.internal/job/7"),
    "host:port": ("node", "db.corp.internal:5432"),
    "phone": ("task", "call +1 415 555 0100"),
    "card": ("feature", "card 4111 1111 1111 1111"),
}
BENIGN = {"task": "build parser", "feature": "tokenizer", "node": "ParserCore"}


def _call(call_id: str, root: Path) -> Path:
    """One clean CM model call (claimed, then its usage) for the run; returns the run's log."""
    identity = {
        "call_id": call_id,
        "stage": "build",
        "role": "coder",
        "adapter": "manual",
        "requested_model": "gpt-5",
        "source": "api",
        "purpose": "cm-ai:build",
    }
    common = {
        "workflow": "cm-ai",
        "runtime": "codex",
        "run_id": "run-20260730-aaaa",
        "project_root": str(root),
    }
    for event, phase, data in (
        ("model_call", "claimed", identity),
        (
            "model_usage",
            "complete",
            {
                **identity,
                **BENIGN,
                "usage_state": "observed",
                "outcome": "success",
                "input_tokens": 9,
                "output_tokens": 2,
            },
        ),
    ):
        written = event_write.write_event(
            event_input.EventArgs(
                event=event,
                phase=phase,
                detail="coder model call",
                at="2026-07-30T12:00:05Z",
                data_json=json.dumps(data),
                **common,
            ),
            environ=os.environ,
        ).result
    return Path(written["global_log"])


def _rows(root: Path) -> None:
    """A CM log with a clean model call and one hand-edited call per private value (in one
    free-text field): the CM writer refuses some of these itself, an edited line reaches export."""
    log = _call("call-clean", root)
    row = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
    with open(log, "a", encoding="utf-8") as handle:
        for index, (field, value) in enumerate(PRIVATE.values()):
            edited = {**row, "event_id": f"edited-{index}", "call_id": f"call-x{index}", field: value}
            handle.write(json.dumps(edited) + "\n")


def _pseudonym(root: Path, value: str) -> str:
    key = (root / ".git" / "workgroup" / "otel" / "pseudonym-key").read_bytes().strip()
    mac = hmac.new(key, b"workgroup-toolkit/otel/withheld\0" + value.encode(), hashlib.sha256)
    return "withheld:" + mac.hexdigest()[:8]


def _export(root: Path, *args: str, env: dict[str, str]) -> tuple[int, str, str]:
    proc = run_workgroup("telemetry", "export", "--otlp", *args, cwd=root, env=env, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_private_free_text_and_resource_attributes_are_withheld(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"src/api.py": "a"})
    _rows(git_repo.path)
    env = {"OTEL_RESOURCE_ATTRIBUTES": f"owner={OWNER},team=compilers"}
    with receiving() as rx:
        code, out, err = _export(git_repo.path, rx.url, "--json", env=env)
        assert code == 0, err
        payload = b"".join(rx.received.raw)
        spans = list(rx.received.spans)
    summary = json.loads(out)
    values = [value for _field, value in PRIVATE.values()] + [OWNER]
    for value in values:
        assert value.encode() not in payload, value
        assert _pseudonym(git_repo.path, value).encode() in payload, value
    for needle in (
        "jane.doe",
        "corp-mail",
        "10.20.30.40",
        "corp.internal",
        "415 555",
        "4111 1111",
        "~/notes",
    ):
        assert needle.encode() not in payload, needle
    assert summary["withheld"] == len(values) and summary["exported"] is True
    assert f"withheld {len(values)} values" in err
    # benign free text and the workflow's own ids pass unchanged
    clean = [s for s in spans if s["attributes"].get("workgroup.cm.call_id") == "call-clean"]
    assert len(clean) == 1
    attrs = clean[0]["attributes"]
    assert attrs["workgroup.cm.task"] == "build parser" and attrs["workgroup.cm.feature"] == "tokenizer"
    assert attrs["workgroup.cm.node"] == "ParserCore" and attrs["workgroup.run.id"] == "run-20260730-aaaa"
    assert clean[0]["resource"]["team"] == "compilers"
    assert clean[0]["resource"]["owner"] == _pseudonym(git_repo.path, OWNER)
    # a pseudonym is stable: the same value gets the same one on the next export
    with receiving() as rx:
        code, out, err = _export(git_repo.path, rx.url, env=env)
        assert code == 0 and f"withheld {len(values)} values" in err
        assert _pseudonym(git_repo.path, OWNER).encode() in b"".join(rx.received.raw)


def test_nothing_private_nothing_withheld(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"src/api.py": "a"})
    _call("call-clean", git_repo.path)
    code, out, err = _export(git_repo.path, "--dry-run", "--json", env={"OTEL_SERVICE_NAME": "billing-api"})
    assert code == 0 and json.loads(out)["withheld"] == 0 and "withheld 0 values" in err
    assert not (git_repo.path / ".git" / "workgroup" / "otel" / "pseudonym-key").exists()  # dry run: no key


def test_service_name_and_resource_keys_pass_the_telemetry_context(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"src/api.py": "a"})
    _call("call-clean", git_repo.path)
    env = {
        "OTEL_SERVICE_NAME": "svc for ops@acme-corp.io",
        # a documentation-domain address is still an address when it leaves the machine
        "OTEL_RESOURCE_ATTRIBUTES": "/home/jane/x=1,contact=jane@example.com",
    }
    with receiving() as rx:
        code, out, err = _export(git_repo.path, rx.url, "--json", env=env)
        assert code == 0, err
        payload = b"".join(rx.received.raw)
    assert json.loads(out)["withheld"] == 3
    for value in (b"ops@acme-corp.io", b"/home/jane", b"jane@example.com"):
        assert value not in payload, value


def test_the_withholder_replaces_each_shape_and_keeps_look_alikes() -> None:
    from toolkit.otel.spans import Skipped, cm_span
    from toolkit.otel.withhold import Withholder

    row: dict[str, Any] = {
        "schema_version": 1,
        "event": "model_usage",
        "phase": "complete",
        "event_id": "e-1",
        "run_id": "run-20260730-aaaa",
        "at": "2026-07-30T12:00:05Z",
        "workflow": "cm-ai",
        "runtime": "codex",
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
    withholder = Withholder(b"k" * 32)
    for field, value in [*PRIVATE.values(), ("task", "ghp_R8x2Kq9Lm4Tz7Vb1Nc6Wd3Yf5Hg0Js8Pa2Qe")]:
        span = cm_span({**row, field: value}, Skipped())
        assert span is not None  # not refused: withheld when sent
        sent = withholder.span(span)
        assert sent.attributes[f"workgroup.cm.{field}"] == withholder.pseudonym(value)
        assert value not in json.dumps(sent.attributes) + sent.name
    assert withholder.count == len(PRIVATE) + 1
    look_alikes = ["build parser", "v1.2.3", "12:30:00", "parser.py:120", "4111 1111 1111 1112", "2026-07-30"]
    for value in look_alikes:
        span = cm_span({**row, "task": value}, Skipped())
        assert span is not None and withholder.span(span).attributes["workgroup.cm.task"] == value, value
    assert withholder.count == len(PRIVATE) + 1


def test_live_mode_withholds_and_reports_the_count(git_repo) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    from test_otel_live import env_for, wait_for_flusher

    git_repo.commit("init", {".workgroup/config.yml": "context_efficiency:\n  telemetry: otlp\n"})
    otel_dir = git_repo.path / ".git" / "workgroup" / "otel"
    private = "deploy to 10.20.30.40"  # the CM writer takes it; telemetry must not send it
    identity = {"call_id": "c-live", "stage": "build", "role": "coder", "adapter": "manual",
                "requested_model": "gpt-5", "source": "api", "purpose": "cm-ai:build"}  # fmt: skip
    usage = {**identity, "task": private, "usage_state": "observed", "outcome": "success",
             "input_tokens": 10, "output_tokens": 2}  # fmt: skip
    with receiving() as rx:
        env = env_for(rx.url, OTEL_RESOURCE_ATTRIBUTES=f"owner={OWNER}")
        for event, phase, data in (("model_call", "claimed", identity), ("model_usage", "complete", usage)):
            proc = subprocess.run(
                [Path(sys.executable).parent / "cm-log-event", "--workflow", "cm-ai", "--event", event,
                 "--phase", phase, "--runtime", "codex", "--detail", "coder call", "--run-id",
                 "run-20260730-dddd", "--project-root", str(git_repo.path), "--data-json", json.dumps(data)],
                cwd=git_repo.path, env={**os.environ, **env}, capture_output=True, timeout=60, check=False,
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
        spans = rx.wait_for_spans(1)
        assert wait_for_flusher(otel_dir)
        payload = b"".join(rx.received.raw)
    assert private.encode() not in payload and OWNER.encode() not in payload
    assert spans[0]["attributes"]["workgroup.cm.task"] == _pseudonym(git_repo.path, private)
    assert spans[0]["resource"]["owner"] == _pseudonym(git_repo.path, OWNER)
    status = json.loads((otel_dir / "status.json").read_text(encoding="utf-8"))
    assert status["ok"] is True and status["withheld"] == 2
