"""The SARIF log sarif.document builds has the keys its sarif_shapes TypedDicts declare, in their
order, and importing sarif loads neither typing's shapes module nor jsontypes at run time (#25)."""

from __future__ import annotations

import subprocess
import sys

from toolkit.core import sarif, sarif_shapes
from toolkit.core.findings import Finding


def test_log_keys_follow_the_declared_shapes() -> None:
    findings = [
        Finding(code="private-key", message="m", path="a.txt", line=3, col=2, severity="error"),
        Finding(code="other", message="n", path="b.txt", line=0, col=0, severity="info"),
    ]
    doc = sarif.document(
        "privacy",
        findings,
        fingerprints=["f", None],
        commits=["c", None],
        repository_uri="https://example.invalid/r",
    )
    assert list(doc) == list(sarif_shapes.Log.__annotations__)
    run = doc["runs"][0]
    assert list(run) == list(sarif_shapes.Run.__annotations__)
    assert list(run["tool"]["driver"]["rules"][0]) == list(sarif_shapes.DriverRule.__annotations__)
    full, bare = run["results"]
    assert list(full) == list(sarif_shapes.Result.__annotations__)
    assert list(bare) == list(sarif_shapes.Result.__annotations__)[:5]  # without fingerprint and commit
    assert list(full["locations"][0]["physicalLocation"]) == list(
        sarif_shapes.PhysicalLocation.__annotations__
    )
    assert list(bare["locations"][0]["physicalLocation"]) == ["artifactLocation"]


def test_sarif_loads_no_shapes_at_run_time() -> None:
    code = "import sys, toolkit.core.sarif as s; print(sorted(m for m in ('toolkit.core.sarif_shapes', 'toolkit.core.jsontypes') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
