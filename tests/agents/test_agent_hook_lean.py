"""The pre-write check runs before every tool call: it loads only what its answer needs.

No typer, pydantic, pygit2, msgspec or YAML on that path; the runtime's router (the ownership
check) only when the repository has a writer registry at all. Speed itself is measured by the
benchmark (tests/bench/), never by a timed unit test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.agent_hooks import payload
from support.harness import GitRepo, run_workgroup

PROBE = """\
import json, sys
from toolkit.entry import main
code = main(["agent-hook", "pre-tool-use"])
sys.stdout.flush()
sys.stderr.write("\\n@@" + json.dumps(sorted(sys.modules)) + "\\n")
raise SystemExit(code)
"""
HEAVY = {"typer", "click", "pydantic", "pydantic_core", "pygit2", "msgspec", "yaml"}


def _loaded(root: Path, data: dict[str, object]) -> tuple[int, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        input=json.dumps(data).encode(),
        capture_output=True,
        cwd=root,
        timeout=120,
        check=False,
    )
    marker = next(line for line in proc.stderr.decode().splitlines() if line.startswith("@@"))
    return proc.returncode, set(json.loads(marker[2:]))


@pytest.mark.usefixtures("without_coverage")
def test_a_pre_write_check_loads_nothing_heavy(git_repo: GitRepo) -> None:
    git_repo.commit("base", {"src/api.py": "x = 1\n"})
    data = payload("claude", "pre-tool-use.write", git_repo.path)
    code, loaded = _loaded(git_repo.path, data)
    assert code == 0
    assert sorted(loaded & HEAVY) == []
    assert "toolkit.runtime.router" not in loaded  # no registry: no lease to look up
    assert not [m for m in loaded if m.startswith(("toolkit.commands", "toolkit.usage", "toolkit.cm"))]
    # with a registry the router answers, still without anything heavy
    assert (
        run_workgroup("owners", "acquire", "other", "--path", "docs/x.md", cwd=git_repo.path).returncode == 0
    )
    code, loaded = _loaded(git_repo.path, data)
    assert code == 0 and "toolkit.runtime.router" in loaded
    assert sorted(loaded & HEAVY) == []


BROKEN = """\
import sys
from toolkit.entry import main

class Broken:
    def find_spec(self, name, path=None, target=None):
        if name == "toolkit.agents.main":
            raise ImportError("simulated broken install")
        return None

sys.meta_path.insert(0, Broken())
raise SystemExit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    ("event", "code"), [("pre-tool-use", 2), ("PreToolUse", 2), ("user-prompt-submit", 2), ("stop", 1)]
)
def test_a_hook_that_cannot_load_blocks_tool_calls_only(event: str, code: int, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BROKEN, "agent-hook", event],
        input=b"{}",
        capture_output=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == code
    assert proc.stderr.decode().startswith("error[HOOK_UNAVAILABLE]")
