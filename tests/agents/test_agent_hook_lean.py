"""Each hook event loads only what its answer needs.

The pre-write check runs before every tool call: no typer, pydantic, pygit2, msgspec or YAML on that
path, and none of the other events' code (session start, capsules, stop, usage, CM); the runtime's
router (the ownership check) only when the repository has a writer registry at all. The dispatcher
imports the one module the event names, so session start and stop do not load each other's code or
the pre-write gate either. Speed itself is measured by the benchmark (tests/bench/), never by a
timed unit test.
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
code = main(["agent-hook", *sys.argv[1:]])
sys.stdout.flush()
sys.stderr.write("\\n@@" + json.dumps(sorted(sys.modules)) + "\\n")
raise SystemExit(code)
"""
HEAVY = {"typer", "click", "pydantic", "pydantic_core", "pygit2", "msgspec", "yaml"}
# the modules of each event's own code (toolkit.agents.*) and the machinery only they need
EVENT_CODE = {
    "pre-tool-use": ("toolkit.agents.prewrite", "toolkit.agents.writes"),
    "user-prompt-submit": ("toolkit.agents.prompt",),
    "session-start": ("toolkit.agents.session_start", "toolkit.runtime.lineage"),
    "pre-compact": ("toolkit.agents.pre_compact", "toolkit.records.capsules"),
    "stop": ("toolkit.agents.stop", "toolkit.usage", "toolkit.cm.session_boundary"),
}
SESSION_STATE = ("toolkit.agents.state", "toolkit.runtime.capsule")
# the shapes the hooks' code names for annotations only (imported under TYPE_CHECKING)
ANNOTATIONS_ONLY = {
    "toolkit.agents.shapes",
    "toolkit.core.jsontypes",
    "toolkit.core.finding_shapes",
    "toolkit.infra.config_shapes",
    "toolkit.otel.shapes",
    "toolkit.runtime.op_types",
    "toolkit.runtime.route_types",
    "toolkit.usage.shapes",
}


def _loaded(root: Path, data: dict[str, object], event: str = "pre-tool-use") -> tuple[int, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, event],
        input=json.dumps(data).encode(),
        capture_output=True,
        cwd=root,
        timeout=120,
        check=False,
    )
    marker = next(line for line in proc.stderr.decode().splitlines() if line.startswith("@@"))
    return proc.returncode, set(json.loads(marker[2:]))


def _others(event: str, loaded: set[str]) -> list[str]:
    """The loaded modules that belong to events other than ``event``."""
    foreign = [prefix for name, prefixes in EVENT_CODE.items() if name != event for prefix in prefixes]
    return sorted(m for m in loaded if m.startswith(tuple(foreign)) and not m.startswith(EVENT_CODE[event]))


@pytest.mark.usefixtures("without_coverage")
def test_a_pre_write_check_loads_nothing_heavy(git_repo: GitRepo) -> None:
    git_repo.commit("base", {"src/api.py": "x = 1\n"})
    data = payload("claude", "pre-tool-use.write", git_repo.path)
    code, loaded = _loaded(git_repo.path, data)
    assert code == 0
    assert sorted(loaded & HEAVY) == []
    assert "toolkit.runtime.router" not in loaded  # no registry: no lease to look up
    assert "toolkit.agents.ownership" not in loaded
    assert not [m for m in loaded if m.startswith(("toolkit.commands", "toolkit.usage", "toolkit.cm"))]
    # none of the other events' code, nor the session state and capsules they share
    assert _others("pre-tool-use", loaded) == []
    assert not [m for m in loaded if m.startswith(SESSION_STATE)]
    # with a registry the router answers, still without anything heavy
    assert (
        run_workgroup("owners", "acquire", "other", "--path", "docs/x.md", cwd=git_repo.path).returncode == 0
    )
    code, loaded = _loaded(git_repo.path, data)
    assert code == 0 and {"toolkit.runtime.router", "toolkit.agents.ownership"} <= loaded
    assert sorted(loaded & HEAVY) == []
    assert sorted(loaded & ANNOTATIONS_ONLY) == []
    assert _others("pre-tool-use", loaded) == []


@pytest.mark.usefixtures("without_coverage")
@pytest.mark.parametrize(
    ("event", "name"),
    [
        ("user-prompt-submit", "user-prompt-submit"),
        ("session-start", "session-start.startup"),
        ("pre-compact", "pre-compact"),
        ("stop", "stop"),
    ],
)
def test_each_event_loads_its_own_code_only(event: str, name: str, git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.commit("base", {"src/api.py": "x = 1\n"})
    data = payload("claude", name, git_repo.path, tmp_path / "none.jsonl")
    code, loaded = _loaded(git_repo.path, data, event)
    assert code == 0
    assert EVENT_CODE[event][0] in loaded  # the probe ran the event's own code
    assert _others(event, loaded) == []
    assert sorted(loaded & ANNOTATIONS_ONLY) == []


GC_PROBE = """\
import gc, json, sys
from toolkit.entry import main
code = main(["agent-hook", "pre-tool-use"])
sys.stdout.flush()
sys.stderr.write("\\n@@" + json.dumps([gc.isenabled(), gc.get_freeze_count()]) + "\\n")
raise SystemExit(code)
"""


@pytest.mark.usefixtures("without_coverage")
def test_a_hook_call_leaves_what_it_loaded_out_of_the_exit_collection(git_repo: GitRepo) -> None:
    """What a call loaded is frozen before the exit (the shutdown does not traverse it again) and
    the collector is left as it was found."""
    git_repo.commit("base", {"src/api.py": "x = 1\n"})
    proc = subprocess.run(
        [sys.executable, "-c", GC_PROBE],
        input=json.dumps(payload("claude", "pre-tool-use.write", git_repo.path)).encode(),
        capture_output=True,
        cwd=git_repo.path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0
    marker = next(line for line in proc.stderr.decode().splitlines() if line.startswith("@@"))
    enabled, frozen = json.loads(marker[2:])
    assert enabled is True
    assert frozen > 10_000  # the engine's modules and tables, not a handful of objects


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


BROKEN_EVENT = """\
import sys
from toolkit.entry import main

class Broken:
    def find_spec(self, name, path=None, target=None):
        if name == sys.argv[1]:
            raise ImportError("simulated broken module")
        return None

sys.meta_path.insert(0, Broken())
raise SystemExit(main(["agent-hook", *sys.argv[2:]]))
"""


@pytest.mark.parametrize(
    ("module", "event", "code"),
    [
        ("toolkit.agents.prewrite", "pre-tool-use", 2),
        ("toolkit.agents.writes", "pre-tool-use", 2),
        ("toolkit.privacy.engine", "pre-tool-use", 2),
        ("toolkit.agents.prompt", "user-prompt-submit", 2),
        ("toolkit.agents.stop", "stop", 1),
    ],
)
def test_an_event_module_that_cannot_load_fails_closed_before_a_tool_call(
    module: str, event: str, code: int, git_repo: GitRepo
) -> None:
    """The event's code is imported inside the answer: a broken install there denies the write
    (exit 2 and a deny), as an error inside the check does; at stop it only tells the user."""
    git_repo.commit("base", {"src/api.py": "x = 1\n"})
    name = {"pre-tool-use": "pre-tool-use.write", "user-prompt-submit": "user-prompt-submit", "stop": "stop"}
    proc = subprocess.run(
        [sys.executable, "-c", BROKEN_EVENT, module, event],
        input=json.dumps(payload("claude", name[event], git_repo.path)).encode(),
        capture_output=True,
        cwd=git_repo.path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == code
    assert "error[INTERNAL_ERROR]: ImportError inside the hook" in proc.stderr.decode()
    if event == "pre-tool-use":
        decision = json.loads(proc.stdout)["hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny"
