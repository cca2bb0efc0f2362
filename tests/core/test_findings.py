"""The shared findings output convention (toolkit/core/findings.py)."""

from __future__ import annotations

import io
import json

from toolkit.core.findings import Finding, emit, error_object, summary_line


def _run(findings: list[Finding], as_json: bool) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    emit("verify", findings, as_json=as_json, stdout=out, stderr=err, checked=3)
    return out.getvalue(), err.getvalue()


def test_text_lines_on_stdout_summary_on_stderr() -> None:
    f = [
        Finding("a.md", 3, 7, "WG101", "bad thing", fix="do the other thing"),
        Finding("b.md", 0, 0, "WG102", "whole file", severity="warning"),
    ]
    out, err = _run(f, False)
    assert out.splitlines() == [
        "a.md:3:7: WG101 bad thing",
        "  fix: do the other thing",
        "b.md:0:0: WG102 whole file",
    ]
    assert err == "verify: 2 findings (1 error, 1 warning) in 3 files\n"


def test_json_is_one_object_with_the_shared_shape() -> None:
    out, err = _run([Finding("a.md", 1, 1, "X1", "m", extra={"rule": "r"})], True)
    doc = json.loads(out)
    assert doc["tool"] == "verify"
    assert doc["findings"] == [
        {
            "path": "a.md",
            "line": 1,
            "col": 1,
            "code": "X1",
            "severity": "error",
            "message": "m",
            "extra": {"rule": "r"},
        }
    ]
    assert doc["summary"] == {"findings": 1, "errors": 1, "warnings": 0, "checked": 3}
    assert "1 finding" in err


def test_clean_json_run_is_quiet_on_stderr_and_text_run_says_zero() -> None:
    out, err = _run([], True)
    assert json.loads(out)["findings"] == [] and err == ""
    out, err = _run([], False)
    assert out == "" and err == "verify: 0 findings in 3 files\n"
    assert summary_line("x", [], 1) == "x: 0 findings in 1 file"


def test_error_object_shape() -> None:
    assert error_object("E_SCHEMA", "$.phase: must be one of 1A..3", "c.json") == {
        "error": {"code": "E_SCHEMA", "message": "$.phase: must be one of 1A..3", "path": "c.json"}
    }
    assert error_object("E", "m") == {"error": {"code": "E", "message": "m"}}
