"""One stdout guard at every entry point (toolkit.infra.output.guarded).

Each command runs as a real process with stdout on ``/dev/full``, closed (``cmd >&-``) and on a
pipe whose reader has exited: exit 3, ``error[OUTPUT_UNWRITABLE]`` on stderr, no traceback and no
"Exception ignored" from the interpreter's last flush. The adapter's case (the usage row is logged
before the print) is in tests/cm/test_cm_adapter.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.harness import GitRepo

LEAK = 'aws_secret = "AKIAIOSFODNN7EXAMPLX"\n'  # one finding, so the scan has data for stdout
RUN_ID = "run-20260301-guarded"


def script(module: str, *args: str) -> list[str]:
    return [sys.executable, "-c", f"import sys; from {module} import main; sys.exit(main())", *args]


COMMANDS: dict[str, list[str]] = {
    "privacy scan --json": [sys.executable, "-m", "toolkit", "privacy", "scan", "--json", "leak.md"],
    "privacy scan (findings)": [sys.executable, "-m", "toolkit", "privacy", "scan", "leak.md"],
    "cm-usage-report": script("toolkit.cm.report"),
    "cm-usage-report --json": script("toolkit.cm.report", "--json"),
    "cm-log-event": script(
        "toolkit.cm.events",
        *("--workflow", "cm-prd", "--event", "note", "--runtime", "codex", "--run-id", RUN_ID),
        *("--detail", "guarded note"),
    ),
    "telemetry export --json (error path)": [
        sys.executable,
        "-m",
        "toolkit",
        "telemetry",
        "export",
        "--json",
    ],
    "workgroup --version": [sys.executable, "-m", "toolkit", "--version"],
    "usage --json": [sys.executable, "-m", "toolkit", "usage", "--json"],
    "verify --json": [sys.executable, "-m", "toolkit", "verify", "--json"],
    "privacy hook": script("toolkit.hooks.privacy", "leak.md"),
    "privacy-all hook": script("toolkit.hooks.privacy_all", "leak.md"),
}


def run(argv: list[str], how: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    options = {"cwd": cwd, "stderr": subprocess.PIPE, "timeout": 120, "check": False}
    if how == "full":
        with open("/dev/full", "wb") as full:
            return subprocess.run(argv, stdout=full, **options)  # type: ignore[call-overload, no-any-return]
    if how == "closed":
        return subprocess.run(["/bin/sh", "-c", 'exec "$@" >&-', "sh", *argv], **options)  # type: ignore[call-overload, no-any-return]
    reader, writer = os.pipe()
    os.close(reader)  # the reader has exited before the first byte
    try:
        return subprocess.run(argv, stdout=writer, **options)  # type: ignore[call-overload, no-any-return]
    finally:
        os.close(writer)


@pytest.mark.parametrize("how", ["full", "closed", "gone reader"])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_unwritable_stdout_is_exit_3_with_the_coded_line(name: str, how: str, git_repo: GitRepo) -> None:
    if how == "full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    git_repo.commit("init", {"leak.md": LEAK})
    proc = run(COMMANDS[name], how, git_repo.path)
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert proc.returncode == 3, (proc.returncode, err)
    assert "error[OUTPUT_UNWRITABLE]: stdout cannot be written" in err, err
    if name == "cm-log-event":  # the event was written before the answer could not be printed
        (log,) = (Path(os.environ["CM_WORKFLOW_LOG_HOME"]) / "runs").glob(f"*/{RUN_ID}.jsonl")
        assert [json.loads(line)["detail"] for line in log.read_text().splitlines()] == ["guarded note"]


def test_a_swallowed_stdout_failure_still_ends_as_exit_3(tmp_path: Path) -> None:
    # a handler along the way catches the error and answers 0: the guard still says 3
    code = (
        "import sys\n"
        "from toolkit.infra.output import guarded\n"
        "def body():\n"
        "    try:\n"
        "        print('data', flush=True)\n"
        "    except Exception:\n"
        "        pass\n"
        "    return 0\n"
        "sys.exit(guarded(body))\n"
    )
    proc = run([sys.executable, "-c", code], "gone reader", tmp_path)
    assert proc.returncode == 3 and b"error[OUTPUT_UNWRITABLE]" in proc.stderr
    assert b"Traceback" not in proc.stderr and b"Exception ignored" not in proc.stderr


def test_a_writable_stdout_is_untouched(git_repo: GitRepo) -> None:
    git_repo.commit("init", {"leak.md": LEAK})
    proc = subprocess.run(
        COMMANDS["privacy scan --json"], cwd=git_repo.path, capture_output=True, timeout=120, check=False
    )
    assert proc.returncode == 1 and len(json.loads(proc.stdout)["findings"]) == 1
