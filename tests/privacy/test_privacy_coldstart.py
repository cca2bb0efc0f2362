"""A hook's first scan in a fresh process compiles only what the text needs: a seeded rule whose
seeds occur but whose anchor never matches compiles no pattern of its own, and the combined
prefilter works out no needle's companions until that needle is hit (each was worked out for
every needle when the passes were built: half of what building them cost)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

_CHILD = """
import json, sys
from toolkit.privacy import needles
from toolkit.privacy.engine import RULES, scan_text
from toolkit.privacy.types import Context

text = sys.stdin.read()
found = scan_text(text, Context.SOURCE)
seeded = [r for r in RULES if r.tuning.seeds and r.tuning.anchor is not None]
finder = needles._FINDER[0]
print(json.dumps({
    "found": [f.rule for f in found],
    "compiled": sorted(r.id for r in seeded if r.pattern._compiled is not None),
    "anchors": sorted(r.id for r in seeded if r.tuning.anchor._bytes is not None),
    "passes": finder._passes is not None,
    "companions": sum(c is not None for p in finder._passes or [] for c in p.companions),
}))
"""


def _first_scan(text: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], input=text, capture_output=True, text=True, check=True, timeout=60
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_a_seeded_rule_without_a_candidate_compiles_nothing_of_its_own() -> None:
    # "password" and "secret" occur (the seeds), never as a label assigned a value (the anchors)
    prose = "the password field and the secret store are described below; see the token docs.\n"
    result = _first_scan(prose * 1500)  # ~120 kB: the prefilter's passes are built
    assert result["found"] == []
    assert "password-assignment" in result["anchors"]  # the anchor ran where the seeds are
    assert result["compiled"] == []
    assert result["passes"] is True
    assert result["companions"] == 0  # no literal hit: no companions worked out


def test_a_candidate_compiles_its_rule_and_finds_it() -> None:
    prose = "the password field is described below.\n" * 2000
    result = _first_scan(prose + 'password = "Xy7kq9Lm2Pz4Qa"\nprefix = "ghp_"\n')
    assert "password-assignment" in result["compiled"]
    assert result["found"] == ["password-assignment"]
    assert result["companions"] == 1  # the one literal hit ("ghp_"): its companions only
