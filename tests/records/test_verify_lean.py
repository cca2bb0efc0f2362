"""verify loads the privacy engine only when it has a record to scan.

The engine costs tens of milliseconds of start-up; the verify hook's cached path (every record
vouched for by the cache) and a repository without records never scan, so importing verify and
the capsule rules it uses must not load it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "toolkit.records.verify",
        "toolkit.records.capsules",
        "toolkit.runtime.capsule",
        "toolkit.runtime.capsule_rules",
    ],
)
def test_importing_does_not_load_the_privacy_engine(module: str) -> None:
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith('toolkit.privacy')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_capsule_privacy_module_does_load_it() -> None:
    # the check above can fail: the module that scans imports the engine at its top
    code = "import sys, toolkit.runtime.capsule_privacy; print('toolkit.privacy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"
