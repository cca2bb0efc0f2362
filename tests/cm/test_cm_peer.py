"""The CM project's own out-of-process tests, run against our three console scripts.

Skipped unless ``CM_ANCHOR`` points at a CM tree rebuilt as the cm-peer harness's README says
(third-party code: it lives outside the project). The harness is ``run.sh`` of the shared
cm-peer tool, found through ``CM_PEER_HARNESS`` or beside the checkout at
``../shared/tools/cm-peer/run.sh``. The scripts under test are the ``cm-*`` console scripts next
to this interpreter, or in ``CM_PEER_BIN``. As root the harness runs the CM tests as uid 65534,
which cannot enter a virtual environment built on a root-only interpreter, so then the project is
installed (a regular, non-editable install) into a fresh virtual environment of the system
Python (``PEER_PYTHON``, default ``/usr/bin/python3``) in a temporary folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

SCRIPTS = ("cm-openai-compatible-call", "cm-log-event", "cm-usage-report")
ANCHOR = os.environ.get("CM_ANCHOR")


def _harness() -> Path | None:
    explicit = os.environ.get("CM_PEER_HARNESS")
    candidates = [Path(explicit)] if explicit else []
    repo = Path(__file__).resolve().parents[2]
    candidates += [repo.parent / "shared" / "tools" / "cm-peer" / "run.sh"]
    return next((path for path in candidates if path.is_file()), None)


def _bin(tmp: Path) -> Path:
    if os.environ.get("CM_PEER_BIN"):
        return Path(os.environ["CM_PEER_BIN"])
    if os.geteuid() != 0:
        return Path(sys.executable).parent
    python = os.environ.get("PEER_PYTHON", "/usr/bin/python3")
    venv = tmp / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    repo = Path(__file__).resolve().parents[2]
    pip = [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", str(repo)]
    subprocess.run(pip, check=True, capture_output=True, timeout=1200)
    return venv / "bin"


@pytest.mark.skipif(
    not ANCHOR or _harness() is None or shutil.which("node") is None,
    reason="set CM_ANCHOR to a rebuilt CM tree (and CM_PEER_HARNESS to the cm-peer run.sh if not beside us)",
)
def test_cm_project_tests_pass_against_our_scripts() -> None:
    harness = _harness()
    assert harness is not None and ANCHOR is not None
    with tempfile.TemporaryDirectory(prefix="cm-peer-") as tmp:
        # the harness wipes and refills run/; as root it runs the tests as another user
        os.chmod(tmp, 0o755)
        bin_dir = _bin(Path(tmp))
        missing = [name for name in SCRIPTS if not (bin_dir / name).is_file()]
        assert not missing, f"console scripts not installed in {bin_dir}: {missing}"
        env = {**os.environ, "CM_ANCHOR": ANCHOR, "CM_PEER_RUN": str(Path(tmp) / "run")}
        proc = subprocess.run(
            ["bash", str(harness), str(bin_dir)],
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
    lines = proc.stdout.strip().splitlines()
    assert lines, proc.stderr
    assert lines[-1].startswith("cm-peer: passed 6 of 6"), proc.stdout[-4000:]
    assert proc.returncode == 0
