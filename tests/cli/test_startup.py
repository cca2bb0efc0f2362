"""Start-up budgets (DESIGN "Speed"): the hot entry points do not load the heavy libraries.

Every check runs the real console-script target in a fresh interpreter through a tiny wrapper
that calls the entry point exactly as its console script would, then writes ``sorted(sys.modules)``
to a side file, whatever the exit code. The entry points are read from ``[project.scripts]``, so a
new script without a budget here fails ``test_every_script_has_a_budget``.

What may be loaded where:
- ``workgroup runtime OP`` (and ``--batch``) runs on every delegation: standard library only, so
  no typer/click/rich, no pydantic, no pygit2 and no yaml.
- Hook entry points: no typer/click/rich and no pydantic ("the same holds for the hook entry
  points"). pygit2 is refused too for the hooks that judge file content alone (privacy, docs
  claims) and for ``workgroup-verify-hook``, which asks the git command for history facts
  (toolkit/infra/gitcli.py). ``workgroup-skills-hook`` needs git facts by its nature and may load
  pygit2: it reads the tracked file set to find blocks duplicated across the repository's skill files.
- ``cm-*`` scripts: no typer/click/rich, no pydantic, no pygit2 (they never need a repository).
- ``workgroup --help`` loads typer by design, but no pydantic or pygit2: every command module keeps
  its heavy imports inside its functions.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.entry_modules import ROOT, SCRIPTS, entry_modules
from support.entry_samples import (
    CAPSULE_RECORD,
    HOOK_SAMPLES,
    ROUTE_REQUEST,
    capsule_input_text,
)
from support.harness import GitRepo, run_workgroup

# what a process imports is the subject here: coverage must not add its own modules to the child
pytestmark = pytest.mark.usefixtures("without_coverage")


CLI_AND_MODELS = frozenset({"typer", "click", "rich", "pydantic", "pydantic_core"})
RUNTIME_FORBIDDEN = CLI_AND_MODELS | {"pygit2", "yaml"}
NO_GIT = CLI_AND_MODELS | {"pygit2"}
HOOK_FORBIDDEN: dict[str, frozenset[str]] = {
    "workgroup-privacy-hook": NO_GIT,
    "workgroup-privacy-all-hook": NO_GIT,
    "workgroup-privacy-commit-msg-hook": NO_GIT,
    "workgroup-docs-claims-hook": NO_GIT,
    "workgroup-skills-hook": CLI_AND_MODELS,  # pygit2 allowed: the tracked file set (see module docstring)
    "workgroup-verify-hook": NO_GIT,  # history is asked of the git command, not pygit2
}
CM_FORBIDDEN = NO_GIT
HELP_FORBIDDEN = frozenset({"pydantic", "pydantic_core", "pygit2"})


def run_entry(
    tmp_path: Path,
    script: str,
    *args: str,
    stdin: str | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run console script ``script`` through the wrapper; return the process and top-level modules."""
    proc, modules = entry_modules(tmp_path, script, *args, stdin=stdin, cwd=cwd, env=env)
    return proc, {name.split(".")[0] for name in modules}


def test_every_script_has_a_budget() -> None:
    hooks = {name for name in SCRIPTS if name.endswith("-hook")}
    cm = {name for name in SCRIPTS if name.startswith("cm-")}
    assert hooks == set(HOOK_FORBIDDEN) == set(HOOK_SAMPLES)
    assert cm == {"cm-openai-compatible-call", "cm-log-event", "cm-usage-report"}
    assert set(SCRIPTS) == hooks | cm | {"workgroup"}


def test_wrapper_sees_what_an_entry_point_loads(tmp_path: Path) -> None:
    # the check itself can fail: the full CLI really does load typer, and the wrapper reports it
    proc, loaded = run_entry(tmp_path, "workgroup", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "typer" in loaded and "toolkit" in loaded


# --- the runtime path --------------------------------------------------------------------------


@pytest.mark.parametrize("batch", [False, True], ids=["single", "batch"])
def test_runtime_route_is_standard_library_only(batch: bool, git_repo: GitRepo, tmp_path: Path) -> None:
    # inside a real repository whose writer registry holds a lease on the requested file, so the
    # registry lookup really runs (and decides) on the lean path
    git_repo.commit("init", {"src/api.py": "x = 1\n"})
    lease = run_workgroup("owners", "acquire", "builder-a", "--path", "src/api.py", cwd=git_repo.path)
    assert lease.returncode == 0, lease.stderr
    args = ("runtime", "--batch", "route") if batch else ("runtime", "route")
    stdin = (json.dumps(ROUTE_REQUEST) + "\n") * (2 if batch else 1)
    proc, loaded = run_entry(tmp_path, "workgroup", *args, stdin=stdin, cwd=git_repo.path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    frames = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(frames) == (2 if batch else 1) and all(f["ok"] and f["operation"] == "route" for f in frames)
    assert all("WRITER_OWNERSHIP_CONFLICT" in f["result"]["reason_codes"] for f in frames)
    assert sorted(loaded & RUNTIME_FORBIDDEN) == []


# The standard library's heavier modules that the route path keeps out of start-up (issue 12):
# one process per delegation, so every import is paid on every call. ``re`` and ``enum`` are not
# listed: the console-script launcher pip writes imports ``re`` itself, and ``json`` needs it.
RUNTIME_AVOIDED = frozenset({"pathlib", "dataclasses", "inspect", "typing", "urllib", "datetime"})

# Like support.entry_modules.WRAPPER, but importing nothing itself (not even json) and recording only the modules
# loaded after interpreter start-up (``site`` may load more: an editable install's path finder
# imports pathlib), so the record is the entry point's own. It calls ``toolkit.entry:main`` as
# the ``workgroup`` launcher does.
LEAN_WRAPPER = """\
import sys
before = set(sys.modules)
side = sys.argv[1]
sys.argv = sys.argv[2:]
from toolkit.entry import main
try:
    code = main()
finally:
    with open(side, "w", encoding="utf-8") as fh:
        fh.write("\\n".join(sorted(set(sys.modules) - before)))
raise SystemExit(code)
"""

ROUTE_REQUESTS: dict[str, dict[str, Any]] = {
    "trivial": {"input": {"trivial": True}},
    "writer-conflict": {
        "input": {
            "role": "builder",
            "owned_files": ["src/api.py"],
            "active_writers": [{"lineage_id": "other", "owned_files": ["src"]}],
        }
    },
    "inherit": {
        "input": {
            "role": "analyst",
            "inheritance": {"affinity": "high", "safe": True, "within_budget": True, "full_supported": True},
        }
    },
    "registry-writer": ROUTE_REQUEST,  # reads the (absent) writer registry of the repository
}


def lean_entry(
    tmp_path: Path, *args: str, stdin: str, cwd: Path, full: bool = False
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """The process and the modules it loaded after start-up (top-level names; ``full``: dotted)."""
    wrapper = tmp_path / "lean_wrapper.py"
    wrapper.write_text(LEAN_WRAPPER, encoding="utf-8")
    side = tmp_path / "lean-modules.txt"
    side.unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, str(wrapper), str(side), "workgroup", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    assert side.is_file(), proc.stderr[-2000:]
    names = side.read_text(encoding="utf-8").split("\n")
    return proc, set(names) if full else {name.split(".")[0] for name in names}


@pytest.mark.parametrize("where", ["repository", "plain-directory"])
@pytest.mark.parametrize("batch", [False, True], ids=["single", "batch"])
@pytest.mark.parametrize("name", sorted(ROUTE_REQUESTS))
def test_runtime_route_keeps_heavier_standard_modules_out(
    name: str, batch: bool, where: str, git_repo: GitRepo, tmp_path: Path
) -> None:
    if where == "repository":
        git_repo.commit("init", {"src/api.py": "x = 1\n"})
        cwd = git_repo.path
    else:
        cwd = tmp_path / "plain"
        cwd.mkdir()
    args = ("runtime", "--batch", "route") if batch else ("runtime", "route")
    proc, loaded = lean_entry(tmp_path, *args, stdin=json.dumps(ROUTE_REQUESTS[name]) + "\n", cwd=cwd)
    frame = json.loads(proc.stdout)
    assert proc.returncode == 0 and frame["ok"], proc.stdout + proc.stderr
    assert "toolkit" in loaded and "json" in loaded  # the record is real
    assert sorted(loaded & (RUNTIME_AVOIDED | RUNTIME_FORBIDDEN)) == []


def test_lean_wrapper_sees_what_the_route_path_loads(git_repo: GitRepo, tmp_path: Path) -> None:
    # the check itself can fail: a lease on a glob is one the registry's index cannot answer for,
    # so route reads the registry in full and compares each lease to the clock, which imports
    # datetime inside the function that needs it, and the wrapper reports it
    git_repo.commit("init", {"src/api.py": "x = 1\n"})
    lease = run_workgroup("owners", "acquire", "builder-a", "--glob", "src/*.py", cwd=git_repo.path)
    assert lease.returncode == 0, lease.stderr
    proc, loaded = lean_entry(
        tmp_path, "runtime", "route", stdin=json.dumps(ROUTE_REQUEST), cwd=git_repo.path
    )
    assert "WRITER_OWNERSHIP_CONFLICT" in proc.stdout
    assert "datetime" in loaded and not loaded & RUNTIME_FORBIDDEN


def test_route_by_the_registry_index_and_with_globs_stays_lean(git_repo: GitRepo, tmp_path: Path) -> None:
    # a path lease is answered by the registry's index: its clock is read as an integer, no
    # datetime; owned globs ask git for the index through os.posix_spawn, not subprocess (whose
    # threading, selectors and signal cost the call more than git itself)
    git_repo.commit("init", {"src/api.py": "x = 1\n", "src/db.py": "y = 1\n"})
    lease = run_workgroup("owners", "acquire", "builder-a", "--path", "src/api.py", cwd=git_repo.path)
    assert lease.returncode == 0, lease.stderr
    request = {"input": {"role": "builder", "owned_globs": ["src/**"]}}
    for sample in (ROUTE_REQUEST, request):
        proc, loaded = lean_entry(tmp_path, "runtime", "route", stdin=json.dumps(sample), cwd=git_repo.path)
        assert json.loads(proc.stdout)["result"]["reason_codes"] == ["WRITER_OWNERSHIP_CONFLICT"]
        heavier = {"datetime", "subprocess", "threading", "selectors", "signal"}
        assert sorted(loaded & (heavier | RUNTIME_AVOIDED | RUNTIME_FORBIDDEN)) == []


@pytest.mark.parametrize("where", ["repository", "plain-directory"])
def test_route_loads_no_module_of_another_operation(where: str, git_repo: GitRepo, tmp_path: Path) -> None:
    # each operation's module is imported by name when it is dispatched (toolkit/runtime/ops.py),
    # and the adapter's readers when an operation asks for them: route loads route's alone
    from toolkit.runtime.ops import OPS

    if where == "repository":
        git_repo.commit("init", {"src/api.py": "x = 1\n"})
        lease = run_workgroup("owners", "acquire", "builder-a", "--path", "src/api.py", cwd=git_repo.path)
        assert lease.returncode == 0, lease.stderr
        cwd = git_repo.path
    else:
        cwd = tmp_path / "plain"
        cwd.mkdir()
    proc, loaded = lean_entry(
        tmp_path, "runtime", "route", stdin=json.dumps(ROUTE_REQUEST), cwd=cwd, full=True
    )
    assert json.loads(proc.stdout)["ok"], proc.stdout + proc.stderr
    others = {op.module for op in OPS if op.name != "route"} | {"toolkit.runtime.ledger_io"}
    assert {"toolkit.runtime.router", "toolkit.runtime.registry_io"} <= loaded  # the record is real
    assert sorted(loaded & others) == []
    # the check can fail: dispatch routes through the router, so it loads route's module and its own
    proc, loaded = lean_entry(
        tmp_path,
        "runtime",
        "dispatch",
        stdin=json.dumps({"routing": ROUTE_REQUEST, "rollout": {}}),
        cwd=cwd,
        full=True,
    )
    assert {"toolkit.runtime.dispatch", "toolkit.runtime.router"} <= loaded, proc.stdout


def test_package_init_imports_nothing() -> None:
    # ``toolkit/__init__.py`` runs before every entry point: it may define names, never import
    import ast

    tree = ast.parse((ROOT / "toolkit" / "__init__.py").read_text(encoding="utf-8"))
    assert [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))] == []


# Imports every module of toolkit/runtime/ (and every op target of the protocol table), then
# reports the heavy top-level modules loaded; all of it runs on a delegation's path.
RUNTIME_PACKAGE = """\
import importlib, json, pkgutil, sys
import toolkit.runtime
from toolkit.runtime.protocol import OPERATIONS
names = ["toolkit.runtime." + m.name for m in pkgutil.iter_modules(toolkit.runtime.__path__)]
names += [target.partition(":")[0] for target in OPERATIONS.values()]
for name in names:
    importlib.import_module(name)
print(json.dumps({"ops": sorted(OPERATIONS), "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def test_every_runtime_module_is_standard_library_only() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", RUNTIME_PACKAGE],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert {"route", "dispatch", "lineage", "capsule", "promotion"} <= set(report["ops"])
    assert sorted(set(report["modules"]) & RUNTIME_FORBIDDEN) == []


# --- hook entry points -------------------------------------------------------------------------


@pytest.mark.parametrize("hook", [h for h, (_, _, bad) in HOOK_SAMPLES.items() if bad is not None])
@pytest.mark.parametrize("outcome", ["clean", "failing"])
def test_file_hooks_stay_lean(hook: str, outcome: str, git_repo: GitRepo, tmp_path: Path) -> None:
    rel, clean, failing = HOOK_SAMPLES[hook]
    assert failing is not None
    git_repo.write(rel, clean if outcome == "clean" else failing)
    proc, loaded = run_entry(tmp_path, hook, rel, cwd=git_repo.path)
    assert proc.returncode == (0 if outcome == "clean" else 1), proc.stdout + proc.stderr
    assert sorted(loaded & HOOK_FORBIDDEN[hook]) == []


def _sealed_repo(git_repo: GitRepo) -> None:
    git_repo.commit("init", {"src/api.py": "def handler():\n    return 'ok'\n"})
    git_repo.write("tmp/capsule.json", capsule_input_text())
    proc = run_workgroup("capsule", "seal", "tmp/capsule.json", "--write", cwd=git_repo.path)
    assert proc.returncode == 0, proc.stderr
    (git_repo.path / "tmp" / "capsule.json").unlink()
    git_repo.commit("capsule")


@pytest.mark.parametrize("outcome", ["clean", "failing"])
def test_verify_hook_loads_no_pygit2_cli_or_models(outcome: str, git_repo: GitRepo, tmp_path: Path) -> None:
    from support.entry_samples import tamper

    _sealed_repo(git_repo)
    if outcome == "failing":
        record = git_repo.path / CAPSULE_RECORD
        record.write_text(tamper(record.read_text(encoding="utf-8")), encoding="utf-8")
    proc, loaded = run_entry(tmp_path, "workgroup-verify-hook", cwd=git_repo.path)
    assert proc.returncode == (0 if outcome == "clean" else 1), proc.stdout + proc.stderr
    assert "pygit2" not in loaded  # history is asked of the git command (toolkit/infra/gitcli.py)
    assert sorted(loaded & HOOK_FORBIDDEN["workgroup-verify-hook"]) == []


# --- cm-* scripts ------------------------------------------------------------------------------


def test_cm_scripts_stay_lean(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = {"CM_WORKFLOW_LOG_HOME": str(tmp_path / "logs")}
    cases: list[tuple[str, tuple[str, ...]]] = [
        (
            "cm-log-event",
            (
                "--workflow",
                "cm-ai",
                "--event",
                "run_started",
                "--runtime",
                "codex",
                "--detail",
                "started",
                "--project-root",
                str(project),
            ),
        ),
        ("cm-usage-report", ("--json",)),  # after the event above, so it parses a real log
        ("cm-openai-compatible-call", ("--help",)),
    ]
    outputs: dict[str, str] = {}
    for script, args in cases:
        proc, loaded = run_entry(tmp_path, script, *args, env=env)
        assert proc.returncode == 0, (script, proc.stdout, proc.stderr)
        assert sorted(loaded & CM_FORBIDDEN) == [], script
        outputs[script] = proc.stdout
    report: dict[str, Any] = json.loads(outputs["cm-usage-report"])
    assert report["summary"]["runs"] == 1


# --- workgroup --help --------------------------------------------------------------------------

# Imports each command module in the order the CLI does and records which heavy top-level modules
# each one pulls in first, so a failure names the module to fix.
ATTRIBUTION = """\
import importlib, json, sys
heavy = set(json.loads(sys.argv[1]))
import toolkit.cli
seen = {m.split(".")[0] for m in sys.modules}
blame = {}
if seen & heavy:
    blame["toolkit.cli"] = sorted(seen & heavy)
for name in toolkit.cli.COMMAND_MODULES:
    importlib.import_module("toolkit.commands." + name)
    now = {m.split(".")[0] for m in sys.modules}
    if (now - seen) & heavy:
        blame["toolkit.commands." + name] = sorted((now - seen) & heavy)
    seen = now
print(json.dumps(blame))
"""


def test_command_modules_keep_heavy_imports_inside_functions() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", ATTRIBUTION, json.dumps(sorted(HELP_FORBIDDEN))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {}, "these modules import heavy libraries at module level"


def test_workgroup_help_loads_no_models_or_git(tmp_path: Path) -> None:
    proc, loaded = run_entry(tmp_path, "workgroup", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "runtime" in proc.stdout
    assert sorted(loaded & HELP_FORBIDDEN) == []
