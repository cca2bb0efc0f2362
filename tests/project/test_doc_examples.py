"""Every shell example of README.md and docs/*.md runs as written (issue 26, item 8).

Each ```bash, ```sh or ```console block is run in a scratch git repository of its own, with the
installed ``workgroup`` and the CM scripts on PATH, a throwaway HOME and CM log home. ``console``
blocks run their ``$ `` lines (output lines are what the reader sees, not commands). Every command
must exit 0 unless the table below names it with the code the example demonstrates (a privacy scan
that finds the planted secret exits 1), and nothing may print a traceback.

A block that cannot run here carries a marker on the line right before its fence, one of
``MARKERS``: it needs a network peer (a package index, a git host, a model endpoint), or it runs in a
clone of this repository (the project's own scripts). The marker is the whole exemption: there is
no list of skipped examples in this file, and a block without a marker runs.

``SETUP`` gives an example the files it reads (a capsule, a lineage, a tasks file), keyed by the
document and the first line of the block, so an edited example falls back to a bare repository
and fails loudly instead of silently running against stale files.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.harness import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKERS = (
    "<!-- example: illustrative, needs a network peer -->",
    "<!-- example: illustrative, runs in a clone of this repository -->",
)
_FENCE = re.compile(r"^```(bash|sh|shell|console)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
# the secret planted for the privacy examples, assembled so that this file itself holds none
_PLANTED = "ghp_" + "Zq7Rt2Lm9Xw4Kp8Vn3Hs6Jd1Fb5Gc0Ya2Ue7Io4"


@dataclass(frozen=True)
class Example:
    doc: str
    line: int
    kind: str
    body: str
    marker: str | None

    @property
    def first(self) -> str:
        return next(line.strip() for line in self.body.splitlines() if line.strip())

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def examples() -> list[Example]:
    found: list[Example] = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
            line = text.count("\n", 0, match.start()) + 1
            marker = before if before.startswith("<!-- example:") else None
            rel = path.relative_to(ROOT).as_posix()
            found.append(Example(rel, line, match.group(1), match.group(2), marker))
    return found


def script_of(example: Example) -> str:
    """The commands of a block: a bash block as it stands; a console block's ``$`` lines with their
    backslash continuations."""
    if example.kind != "console":
        return example.body
    commands: list[str] = []
    going = False
    for line in example.body.splitlines():
        if line.startswith("$ ") or going:
            commands.append(line[2:] if line.startswith("$ ") and not going else line)
            going = line.rstrip().endswith("\\")
    return "\n".join(commands) + "\n"


# --- the files an example reads ---------------------------------------------------------------


def _write(repo: Path, rel: str, text: str) -> None:
    target = repo / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def _doc_capsule() -> str:
    """The complete first capsule docs/capsules-verify.md shows (its ```json block)."""
    text = (ROOT / "docs" / "capsules-verify.md").read_text(encoding="utf-8")
    block = re.search(r"^```json\n(.*?)^```", text, re.M | re.S)
    assert block is not None
    json.loads(block.group(1))  # the documented example is itself valid JSON
    return block.group(1)


def capsules(repo: Path) -> None:
    _write(repo, "capsule.json", _doc_capsule())
    _write(repo, "knowzcode/artifacts/evidence.json", '{"probe": "slow path answered after 31 s"}\n')
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "capsule inputs")
    _git(repo, "tag", "v1.2")
    # the runtime's request: the capsule with the commit it is bound to (the runtime reads no git)
    request = {"capsule": {**json.loads(_doc_capsule()), "checkpoint_sha": _git(repo, "rev-parse", "HEAD")}}
    _write(repo, "request.json", json.dumps(request))


def lineage(repo: Path) -> None:
    from toolkit.core.canonical import sha256_digest
    from toolkit.runtime.lineage import CURRENT_KEYS

    record = {
        "schema": "knowzcode.agent-lineage/v1",
        "lineage_id": "builder-1",
        "workgroup_id": "wg1",
        "platform": "claude",
        "platform_handle": None,
        "parent_lineage_id": None,
        "role": "builder",
        "scope": "src/api.py handler",
        "phase": "2A",
        "fix_loop_id": None,
        "mode": "fresh-capsule",
        "model": "sonnet",
        "effort": "medium",
        "runtime_prefix_hash": sha256_digest(b"runtime prefix"),
        "baseline_hash": None,
        "tools_hash": "tools-v1",
        "permissions_hash": "permissions-v1",
        "spec_hash": "spec-v1",
        "scope_hash": "scope-v1",
        "checkpoint_sha": _git(repo, "rev-parse", "HEAD"),
        "capsule_hash": sha256_digest(b"capsule v1"),
        "sensitivity": "normal",
        "created_at": "2026-03-01T09:55:00.000Z",
        "last_used_at": "2026-03-01T09:58:00.000Z",
        "resumable": True,
        "lease_expires_at": "2099-03-01T10:20:00.000Z",
    }
    _write(repo, "lineage.json", json.dumps(record, indent=2))
    _write(repo, "facts.json", json.dumps({key: record[key] for key in CURRENT_KEYS}, indent=2))


def specs(repo: Path) -> None:
    _write(repo, "specs/feature/spec.md", "# Health route\n\nGET /health answers 200.\n")
    _write(repo, "specs/tasks.md", "# Tasks\n\n- [x] T1 handler returns ok\n- [ ] T2 add the health route\n")


def privacy(repo: Path) -> None:
    _write(repo, "src/app.py", "def main() -> int:\n    return 0\n")
    _write(repo, "docs/guide.md", "# Guide\n\nRun `main`.\n")
    _write(repo, "notes/handoff.md", f"# Handoff\n\ntoken: {_PLANTED}\n")


@dataclass(frozen=True)
class Setup:
    prepare: Callable[[Path], None]
    # the commands (as written, comments aside) that exit non-zero on purpose, with their code
    exits: dict[str, int] = field(default_factory=dict)


SETUP: dict[tuple[str, str], Setup] = {
    (
        "README.md",
        "workgroup capsule seal capsule.json --write   # fills capsule_hash and checkpoint_sha, binds it to HEAD",
    ): Setup(capsules),
    (
        "docs/capsules-verify.md",
        "workgroup capsule seal capsule.json --write            # bind to HEAD, seal, store",
    ): Setup(capsules),
    (
        "docs/capsules-verify.md",
        "workgroup lineage record lineage.json                  # validated, bound, stored",
    ): Setup(lineage),
    (
        "README.md",
        'workgroup packet build planner --workflow cm-prd --stage design_generation --objective "Add a health route" \\',
    ): Setup(specs),
    (
        "README.md",
        'workgroup boundary cm-ai --at run_done --specs-dir specs --next-command "/cm-ai run --task T2"  # the verdict',
    ): Setup(specs),
    (
        "docs/cm-calls.md",
        "cm-log-event --workflow cm-prd --event model_usage --phase complete --runtime codex \\",
    ): Setup(specs),
    (
        "docs/cm-session.md",
        "$ workgroup boundary cm-ai --at run_done --specs-dir specs --tasks specs/tasks.md \\",
    ): Setup(specs),
    (
        "docs/privacy.md",
        "workgroup privacy scan                      # what git would commit under the current folder",
    ): Setup(
        privacy,
        exits={
            "workgroup privacy scan": 1,  # the planted secret in notes/handoff.md
            "workgroup privacy scan --json .": 1,
            "workgroup privacy scan notes/handoff.md": 1,
        },
    ),
}


# --- running ----------------------------------------------------------------------------------

_TRAP = 'set -o pipefail\ntrap \'printf "%s\\t%s\\n" "$?" "$BASH_COMMAND" >> "$EXAMPLE_STATUS"\' ERR\n'


def _scratch(tmp: Path) -> tuple[Path, dict[str, str]]:
    repo, home = tmp / "repo", tmp / "home"
    repo.mkdir()
    home.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CM_OPENAI_COMPATIBLE_", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GIT_"))
    }
    env.update(
        PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
        HOME=str(home),
        CM_WORKFLOW_LOG_HOME=str(home / ".cm-workflow" / "logs"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Example Author",
        GIT_AUTHOR_EMAIL="author@example.invalid",
        GIT_COMMITTER_NAME="Example Author",
        GIT_COMMITTER_EMAIL="author@example.invalid",
        EXAMPLE_STATUS=str(tmp / "status.tsv"),
        COLUMNS="100",
    )
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    _write(repo, "README.md", "# Scratch\n")
    _write(repo, "src/api.py", "def handler() -> str:\n    return 'ok'\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "first"], cwd=repo, check=True, env=env)
    return repo, env


def run_example(example: Example, tmp: Path) -> tuple[dict[str, int], str]:
    """(failed command -> exit code, stderr) of one example in a fresh scratch repository."""
    repo, env = _scratch(tmp)
    setup = SETUP.get((example.doc, example.first))
    if setup is not None:
        old = {key: os.environ.get(key) for key in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME")}
        os.environ.update({k: env[k] for k in env if k.startswith("GIT_")})
        try:
            setup.prepare(repo)
        finally:
            for key, value in old.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            for key in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
                os.environ.pop(key, None)
    proc = subprocess.run(
        ["bash", "-c", _TRAP + script_of(example)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    status = tmp / "status.tsv"
    failed: dict[str, int] = {}
    if status.exists():
        for row in status.read_text(encoding="utf-8").splitlines():
            code, _, command = row.partition("\t")
            failed[command.strip()] = int(code)
    return failed, proc.stdout + proc.stderr


EXAMPLES = examples()
RUNNABLE = [e for e in EXAMPLES if e.marker is None]


def test_the_docs_have_examples_and_most_of_them_run() -> None:
    assert len(EXAMPLES) >= 15
    assert len(RUNNABLE) >= 10
    assert {e.doc for e in RUNNABLE} >= {"README.md", "docs/privacy.md", "docs/capsules-verify.md"}


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.marker], ids=lambda e: e.id)
def test_a_marked_example_says_why_it_cannot_run_here(example: Example) -> None:
    assert example.marker in MARKERS, f"{example.id}: unknown marker {example.marker}"


def test_every_setup_entry_belongs_to_an_example() -> None:
    keys = {(e.doc, e.first) for e in RUNNABLE}
    assert set(SETUP) <= keys, set(SETUP) - keys  # an edited example: update its entry here


@pytest.mark.parametrize("example", RUNNABLE, ids=lambda e: e.id)
def test_the_example_runs_as_written(example: Example, tmp_path: Path) -> None:
    failed, output = run_example(example, tmp_path)
    setup = SETUP.get((example.doc, example.first))
    expected = setup.exits if setup else {}
    assert failed == expected, f"{example.id}: commands that failed (code): {failed}\n{output}"
    assert "Traceback" not in output, output


def test_a_broken_example_is_caught(tmp_path: Path) -> None:
    """The runner itself: the README's old boundary example (no --next-command) exits 2."""
    broken = Example("README.md", 0, "bash", "workgroup boundary cm-ai --at run_done   # the verdict\n", None)
    failed, output = run_example(broken, tmp_path)
    assert failed == {"workgroup boundary cm-ai --at run_done": 2}, output


def test_console_blocks_run_their_dollar_lines_only() -> None:
    block = "$ echo one \\\n    two\noutput line\n$ echo three\nmore output\n"
    assert script_of(Example("x.md", 1, "console", block, None)) == "echo one \\\n    two\necho three\n"
