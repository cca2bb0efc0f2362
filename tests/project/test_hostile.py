"""Hostile input and faults (issue 15): no traceback, a coded exit, nothing changed.

Every command that reads a file given on its command line, every state file or log the toolkit
reads, and every runtime op is given the hostile inputs of ``tests/support/hostile.py``: JSON nested
100,000 deep, bad encodings, a file one byte over the (lowered) cap, and things that are not
regular files (FIFO, socket, directory, dangling symlink, symlink to a FIFO or to /dev/zero).
Each case must end with a coded exit and leave the repository and its local state exactly as it
was; a FIFO must never block (a watchdog turns a hang into a failure). The tally of inputs per
entry point is printed in the terminal summary.

Everything runs in-process (every console script through the suite's one CLI helper,
``support.harness.cli``, and the runtime's ``run_single``); the size rule is exercised with ``WORKGROUP_MAX_READ_BYTES`` lowered to 4 KiB.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.harness import GitRepo, cli, console_script
from support.hostile import (
    CONTENTS,
    HOSTILE_NAMES,
    KINDS,
    REQUEST_FRAGMENTS,
    plant,
    remove,
    snapshot,
    tried,
    watchdog,
)
from support.lineage_fixtures import HOT_NOW

CAP = 4096
FILE_KINDS = tuple(KINDS)


@contextmanager
def lowered_cap(hostile: str) -> Iterator[None]:
    """The size rule is tried with the cap lowered to 4 KiB (no megabyte files); the rest at 1 MiB,
    so JSON nested 100,000 deep (200 KB) reaches the depth rule instead of the size rule."""
    if hostile != "huge":
        yield
        return
    os.environ["WORKGROUP_MAX_READ_BYTES"] = str(CAP)
    try:
        yield
    finally:
        del os.environ["WORKGROUP_MAX_READ_BYTES"]


@dataclass
class Outcome:
    code: int
    out: str
    err: str


def run_cli(argv: list[str], script: str = "workgroup") -> Outcome:
    """A console script in-process through the suite's one CLI helper, under the watchdog."""
    with watchdog():
        code, out, err = cli(*argv, script=script)
    return Outcome(code, out, err)


@dataclass
class Entry:
    """One entry point that reads a file: where the hostile thing goes and how it is run.

    ``ok_on``: hostile names for which exit 0 is a right answer (a cache is ignored, a torn or
    too deep log line is skipped); ``changes``: paths that may change (a cache recomputed).
    """

    name: str
    target: Callable[[Path], Path]
    argv: Callable[[Path, Path], list[str]]
    ok_on: frozenset[str] = frozenset()
    changes: Callable[[Path], list[Path]] = field(default=lambda root: [])
    coded: str | tuple[str, ...] = "error["  # what a coded refusal prints (stderr or stdout)
    normal: int = 0  # the exit code of the run without the hostile thing
    kind_marker: str | None = None  # for a non-regular file, the refusal printed with exit ``normal``


def _local(root: Path) -> Path:
    return root / ".git" / "workgroup"


def _arg(name: str) -> Callable[[Path], Path]:
    return lambda root: root.parent / "args" / name


JSONL_CONTENT = frozenset(CONTENTS) | {"huge"}
# valid JSON objects whose only field is unknown (a lone surrogate, 1e999999, a duplicate key)
VALID_OBJECTS = frozenset({"lone-surrogate", "huge-exponent", "duplicate-keys"})
NOT_UTF8 = frozenset(
    {"latin-1", "utf-16-bom", "invalid-utf8", "overlong-utf8", "nul-bytes", "not-json"}
)  # a log tolerates bad lines (skipped and reported)

ENTRIES: list[Entry] = [
    # --- file arguments ---
    Entry("capsule seal FILE", _arg("c.json"), lambda r, f: ["capsule", "seal", str(f)]),
    Entry("lineage record FILE", _arg("l.json"), lambda r, f: ["lineage", "record", str(f)]),
    Entry(
        "lineage check --current FILE",
        _arg("cur.json"),
        lambda r, f: ["lineage", "check", str(f), "--current", str(f), "--now", HOT_NOW],
        coded=("error[", "invalidated: "),  # valid JSON that is no lineage: an invalidation decision
    ),
    # decision inputs ignore fields they do not know (DESIGN): a valid JSON object is a request
    Entry("route FILE", _arg("r.json"), lambda r, f: ["route", str(f)], ok_on=VALID_OBJECTS),
    Entry("dispatch FILE", _arg("d.json"), lambda r, f: ["dispatch", str(f)], ok_on=VALID_OBJECTS),
    Entry("vault add FILE", _arg("v.json"), lambda r, f: ["vault", "add", str(f)]),
    Entry("telemetry record FILE", _arg("t.json"), lambda r, f: ["telemetry", "record", str(f)]),
    Entry(
        "result store --policy FILE",
        _arg("p.json"),
        lambda r, f: [
            "result",
            "store",
            "--policy",
            str(f),
            "--summary",
            str(f),
            "--workgroup",
            "wg",
            "--task",
            "t1",
        ],
    ),
    Entry(
        "promote --pairs FILE",
        _arg("pairs.json"),
        lambda r, f: ["promote", "--pairs", str(f), "--envelope", str(f), "--trusted-keys", str(f.parent)],
    ),
    Entry(
        "measure sign --pairs FILE",
        _arg("pairs.json"),
        lambda r, f: [
            "measure",
            "sign",
            "--pairs",
            str(f),
            "--key",
            str(f),
            "--candidate-version",
            "1",
            "--corpus-version",
            "1",
        ],
    ),
    Entry("packet check FILE", _arg("packet.json"), lambda r, f: ["packet", "check", str(f)]),
    Entry(
        "packet build --item-file",
        _arg("item.txt"),
        lambda r, f: [
            "packet",
            "build",
            "analyst",
            "--workflow",
            "cm-ai",
            "--stage",
            "s",
            "--objective",
            "o",
            "--item-file",
            f"requirement={f}",
        ],
        ok_on=frozenset(CONTENTS) - {"latin-1", "utf-16-bom", "invalid-utf8", "overlong-utf8", "not-json"},
    ),
    Entry("fanout check PLAN", _arg("plan.yml"), lambda r, f: ["fanout", "check", str(f)]),
    Entry(
        "privacy scan FILE",
        lambda root: root / ".workgroup" / "notes.json",
        lambda r, f: ["privacy", "scan", str(f)],
        # text is scanned, a binary file skipped with a notice, a folder walked (here: empty)
        ok_on=frozenset(CONTENTS) | {"huge", "directory"},
        kind_marker="skipped",  # a FIFO, socket, folder or link to nothing: skipped with a notice
    ),
    Entry(
        "boundary --tasks FILE",
        _arg("tasks.md"),
        lambda r, f: [
            "boundary",
            "cm-ai",
            "--at",
            "run_done",
            "--tasks",
            str(f),
            "--specs-dir",
            str(r / "specs"),
            "--next-command",
            "/cm-ai next",
        ],
        ok_on=frozenset(CONTENTS) | {"huge"},  # any text fills the handoff's checkboxes or none
        changes=lambda root: [root / "specs" / ".reviews" / "session-handoff.md"],
        kind_marker="\u672a\u5199\u6210",  # "not written": the verdict's fourth line, exit 0 (DESIGN)
    ),
    Entry(
        "skills lint FILE",
        lambda root: root / "agents" / "x.md",
        lambda r, f: ["skills", "lint", str(f)],
        coded=("FILE_UNLINTABLE", " error"),  # unlintable, or an error finding on odd but valid text
        ok_on=frozenset(CONTENTS) - NOT_UTF8,
    ),
    Entry(
        "eval CORPUS",
        lambda root: root.parent / "corpus" / "scenarios" / "s.json",
        lambda r, f: ["eval", str(f.parent.parent)],
    ),
    # --- state files and logs ---
    Entry(
        "lineage record (pseudonym map)",
        lambda root: _local(root) / "pseudonyms.json",
        lambda r, f: ["lineage", "record", _lineage_with_handle(r)],
        coded="error[PSEUDONYM_MAP_UNREADABLE]",
        # a JSON object is a map, whatever odd entries it holds: the handle is added, the lineage written
        ok_on=VALID_OBJECTS | {"nan"},
        changes=lambda root: [
            root / ".workgroup" / "workgroups" / "wg-auth" / "lineages" / "lin-builder-1.json"
        ],
    ),
    Entry(
        "owners list (registry)",
        lambda root: _local(root) / "owners.json",
        lambda r, f: ["owners", "list"],
        coded="error[OWNERS_REGISTRY_",  # the README's promise: exit 3 for a corrupt registry
    ),
    Entry(
        "owners acquire (registry)",
        lambda root: _local(root) / "owners.json",
        lambda r, f: ["owners", "acquire", "lin-1", "--path", "src/a.py"],
        coded="error[OWNERS_REGISTRY_",
    ),
    Entry(
        "route FILE (registry)",
        lambda root: _local(root) / "owners.json",
        lambda r, f: ["route", str(r.parent / "args" / "good-route.json")],
        coded="error[",
    ),
    Entry(
        "vault add (journal)",
        lambda root: _local(root) / "vault-journal.jsonl",
        lambda r, f: ["vault", "add", str(_good_delta(r))],
        ok_on=JSONL_CONTENT,  # bad lines are skipped and the new entry appended on a fresh line
        changes=lambda root: [_local(root) / "vault-journal.jsonl"],
        coded="error[VAULT_JOURNAL_UNREADABLE]",
    ),
    Entry(
        "vault list (journal)",
        lambda root: _local(root) / "vault-journal.jsonl",
        lambda r, f: ["vault", "list"],
        ok_on=JSONL_CONTENT,
        coded="error[VAULT_JOURNAL_UNREADABLE]",
    ),
    Entry(
        "vault flush (journal)",
        lambda root: _local(root) / "vault-journal.jsonl",
        lambda r, f: ["vault", "flush"],
        ok_on=JSONL_CONTENT,
        coded="error[VAULT_JOURNAL_UNREADABLE]",
    ),
    Entry(
        "rollout status (rollout.json)",
        lambda root: root / ".workgroup" / "rollout.json",
        lambda r, f: ["rollout", "status"],
        # a symlink in the repository file's place is refused by the confined layer
        coded=("error[ROLLOUT_HISTORY_INVALID]", "error[PATH_OUTSIDE_REPOSITORY]"),
    ),
    Entry(
        "rollout advance (rollout.json)",
        lambda root: root / ".workgroup" / "rollout.json",
        lambda r, f: ["rollout", "advance", "--to", "observe", "--family", "routing"],
        # a symlink in the repository file's place is refused by the confined layer
        coded=("error[ROLLOUT_HISTORY_INVALID]", "error[PATH_OUTSIDE_REPOSITORY]"),
    ),
    Entry(
        "route (config.yml)",
        lambda root: root / ".workgroup" / "config.yml",
        lambda r, f: ["route", str(r.parent / "args" / "good-route.json")],
        ok_on=frozenset({"empty", "whitespace"}),  # an empty YAML file is the defaults
    ),
    Entry(
        "verify (.workgroup record)",
        lambda root: root / ".workgroup" / "workgroups" / "wg" / "capsules" / "t1.json",
        lambda r, f: ["verify"],
        coded=("unreadable", ": schema "),  # unreadable, or valid JSON that is no capsule
    ),
    Entry(
        "probe check (cache)",
        lambda root: _local(root) / "probes.json",
        lambda r, f: ["probe", "check", "knowz-mcp", "--phase", "1A"],
        ok_on=frozenset(HOSTILE_NAMES),  # a cache that cannot be read is ignored: probe again
    ),
    Entry(
        "privacy scan (allowlist)",
        lambda root: root / ".workgroup" / "privacy-allowlist.yml",
        lambda r, f: ["privacy", "scan", str(r / "leak.env")],
        ok_on=frozenset({"empty", "whitespace"}),  # an empty allowlist allows nothing: the finding stands
        normal=1,
    ),
    Entry(
        "handoff show (handoff file)",
        lambda root: root / "specs" / ".reviews" / "session-handoff.md",
        lambda r, f: ["handoff", "show", str(r / "specs")],
        ok_on=frozenset(CONTENTS) | {"huge"},  # any text is shown (with replacement), never parsed
    ),
]


def _lineage_with_handle(root: Path) -> str:
    """A valid lineage with a real platform handle (so the pseudonym map is read and written)."""
    from test_lineage_cli import lineage

    from toolkit.infra.git import discover
    from toolkit.records.lineages import _pseudonym_key

    repo = discover(str(root))
    _pseudonym_key(repo.layout)  # the key exists before the case: only the map is under test
    path = root.parent / "args" / "lineage-handle.json"
    path.parent.mkdir(exist_ok=True)
    record = lineage(str(repo.raw.head.target), platform_handle="claude-session-1a2b3c4d5e6f7a8b")
    path.write_text(json.dumps(record), encoding="utf-8")
    return str(path)


def _good_delta(root: Path) -> Path:
    path = root.parent / "args" / "delta.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"delta": {"title": "T", "content": "C"}}), encoding="utf-8")
    return path


def _good_route(root: Path) -> None:
    args = root.parent / "args"
    args.mkdir(exist_ok=True)
    (args / "good-route.json").write_text(
        json.dumps({"input": {"role": "builder", "owned_files": ["src/a.py"]}}), encoding="utf-8"
    )


def _check_case(repo: GitRepo, entry: Entry, hostile: str) -> str | None:
    """None when the entry answered ``hostile`` right, else what went wrong."""
    root = repo.path
    target = entry.target(root)
    argv = entry.argv(root, target)  # before the snapshot: it may write its own valid inputs
    plant(target, hostile, CAP)
    watched = (root, root.parent / "args", root.parent / "corpus")
    before = snapshot(*watched)
    tried(entry.name)
    try:
        with lowered_cap(hostile):
            outcome = run_cli(argv)
    except BaseException as exc:  # noqa: BLE001 - the point: nothing may escape
        return f"{hostile}: raised {type(exc).__name__}"
    finally:
        after = snapshot(*watched)
        remove(target)
    # what a successful run may write; a refused run may write nothing at all
    allowed = {target, *(entry.changes(root) if outcome.code == entry.normal else [])}
    changed = sorted(
        k for k in set(before) | set(after) if before.get(k) != after.get(k) and Path(k) not in allowed
    )
    if hostile in KINDS and before.get(str(target)) != after.get(str(target)):
        changed.append(str(target))
    if changed:
        return f"{hostile}: changed {[Path(c).name for c in changed]}"
    if "Traceback" in outcome.err:
        return f"{hostile}: traceback"
    if outcome.code == entry.normal and hostile in entry.ok_on:
        return None
    if entry.kind_marker is not None and hostile in KINDS:
        if outcome.code == entry.normal and entry.kind_marker in outcome.err:
            return None
        return f"{hostile}: exit {outcome.code} without {entry.kind_marker!r}: {outcome.err[-160:]!r}"
    markers = (entry.coded,) if isinstance(entry.coded, str) else entry.coded
    if outcome.code not in (1, 2, 3) or not any(m in outcome.err + outcome.out for m in markers):
        return f"{hostile}: exit {outcome.code}, stderr {outcome.err[-160:]!r}"
    return None


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_every_file_reader_refuses_every_hostile_input(entry: Entry, git_repo: GitRepo) -> None:
    leak = "OPENAI_API_KEY=sk-proj-" + "Ab3dE5gH7jK9mN1pQ3rS5tU7vW9xY1zA3cE5\n"
    git_repo.commit("init", {"README.md": "# project\n", "src/a.py": "x = 1\n", "leak.env": leak})
    _good_route(git_repo.path)
    failures = [problem for hostile in HOSTILE_NAMES if (problem := _check_case(git_repo, entry, hostile))]
    assert not failures, "\n".join(failures)


# --- the cm scripts: .cm-run.json, the project log, the mirror's run files ---


def _event_argv(specs: Path) -> list[str]:
    return [
        "--workflow",
        "cm-prd",
        "--event",
        "note",
        "--runtime",
        "codex",
        "--detail",
        "a note",
        "--specs-dir",
        str(specs),
        "--project-root",
        str(specs.parent),
    ]


@pytest.mark.parametrize("which", [".cm-run.json", "运行日志.jsonl"])
def test_cm_log_event_never_blocks_or_tracebacks_on_hostile_state(which: str, tmp_path: Path) -> None:
    specs = tmp_path / "proj" / "specs"
    specs.mkdir(parents=True)
    failures = []
    for hostile in HOSTILE_NAMES:
        target = specs / which
        plant(target, hostile, CAP)
        before = snapshot(specs).get(str(target))
        tried(f"cm-log-event ({which})")
        try:
            with lowered_cap(hostile):
                outcome = run_cli(_event_argv(specs), "cm-log-event")
        except BaseException as exc:  # noqa: BLE001
            failures.append(f"{hostile}: raised {type(exc).__name__}")
            remove(target)
            continue
        after = snapshot(specs).get(str(target))
        remove(target)
        for extra in (specs / ".cm-run.json", specs / "运行日志.jsonl"):
            if extra != target:
                remove(extra)
        if "Traceback" in outcome.err:
            failures.append(f"{hostile}: traceback")
        elif hostile in KINDS and which.endswith(".jsonl"):
            # a log that is not a regular file: refused (LOG_UNREADABLE, exit 1), never written
            if outcome.code != 1 or after != before:
                failures.append(f"{hostile}: exit {outcome.code}, changed {after != before}")
        elif hostile in KINDS and after != before and hostile != "directory":
            # a pointer that is not a regular file is ignored (a new run), never read through
            if after is not None and after[0] == "special":
                failures.append(f"{hostile}: special file rewritten")
        elif outcome.code not in (0, 1, 2):
            failures.append(f"{hostile}: exit {outcome.code}")
    assert not failures, "\n".join(failures)


def test_cm_usage_report_skips_hostile_run_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "runs").mkdir(parents=True)
    failures = []
    for hostile in HOSTILE_NAMES:
        run_file = home / "runs" / "run-a.jsonl"
        index = home / "index.jsonl"
        index.write_text(
            json.dumps(
                {
                    "at": "2026-08-06T10:00:00+00:00",
                    "run_id": "run-a",
                    "status": "done",
                    "log_file": "runs/run-a.jsonl",
                }
            )
            + "\n",
            encoding="utf-8",
        )
        plant(run_file, hostile, CAP)
        tried("cm-usage-report (run file)")
        try:
            with lowered_cap(hostile):
                outcome = run_cli(["--log-home", str(home), "--json"], "cm-usage-report")
        except BaseException as exc:  # noqa: BLE001
            failures.append(f"{hostile}: raised {type(exc).__name__}")
        else:
            if "Traceback" in outcome.err or outcome.code not in (0, 1):
                failures.append(f"{hostile}: exit {outcome.code}")
            elif outcome.code == 0:
                json.loads(outcome.out)  # still one JSON report
        plant(index, hostile, CAP)  # and the index itself
        tried("cm-usage-report (index)")
        try:
            with lowered_cap(hostile):
                outcome = run_cli(["--log-home", str(home), "--json"], "cm-usage-report")
        except BaseException as exc:  # noqa: BLE001
            failures.append(f"index {hostile}: raised {type(exc).__name__}")
        else:
            if "Traceback" in outcome.err or outcome.code not in (0, 1):
                failures.append(f"index {hostile}: exit {outcome.code}")
        remove(run_file)
        remove(index)
    assert not failures, "\n".join(failures)


# --- the runtime: every op, hostile request bodies (hypothesis), hostile registry and ledger ---


def _seeds() -> dict[str, dict[str, Any]]:
    from test_runtime_fuzz import SEEDS

    return SEEDS


def _leaf_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _leaf_paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _leaf_paths(child, (*prefix, index))
    return found


MARK = "\u0000HOSTILE\u0000"


def splice(seed: dict[str, Any], path: tuple[Any, ...], fragment: bytes) -> bytes:
    """The seed as JSON with the value at ``path`` replaced by the raw ``fragment``."""
    import copy

    value = copy.deepcopy(seed)
    if not path:
        return fragment
    parent: Any = value
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = MARK
    text = json.dumps(value).encode()
    return text.replace(json.dumps(MARK).encode(), fragment, 1)


def check_frame(op: str, body: bytes, cwd: str) -> None:
    from toolkit.runtime.codes import MESSAGES
    from toolkit.runtime.protocol import RuntimeContext, run_single

    out = io.StringIO()
    with watchdog():
        code = run_single(op, io.BytesIO(body), out, RuntimeContext(cwd=cwd))
    lines = out.getvalue().splitlines()
    assert len(lines) == 1, lines
    frame = json.loads(lines[0])
    assert code == (0 if frame["ok"] else 1)
    if not frame["ok"]:
        assert frame["code"] in MESSAGES and frame["message"] == MESSAGES[frame["code"]]


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_every_runtime_op_answers_hostile_bodies_with_one_coded_frame(
    data: st.DataObject, tmp_path: Path
) -> None:
    seeds = _seeds()
    op = data.draw(st.sampled_from(sorted(seeds)))
    seed = seeds[op]
    path = data.draw(st.sampled_from(_leaf_paths(seed)))
    name = data.draw(st.sampled_from(sorted(REQUEST_FRAGMENTS)))
    tried(f"runtime {op}")
    check_frame(op, splice(seed, path, REQUEST_FRAGMENTS[name]), str(tmp_path))


@pytest.mark.parametrize("name", sorted(CONTENTS))
def test_every_runtime_op_answers_hostile_whole_bodies(name: str, tmp_path: Path) -> None:
    for op in sorted(_seeds()):
        tried(f"runtime {op}")
        check_frame(op, CONTENTS[name], str(tmp_path))


@pytest.mark.parametrize(
    ("op", "state"),
    [("route", "owners.json"), ("dispatch", "owners.json"), ("promotion", "replay-ledger.jsonl")],
)
def test_runtime_state_files_never_block_or_traceback(op: str, state: str, git_repo: GitRepo) -> None:
    from toolkit.runtime.protocol import RuntimeContext, run_single

    git_repo.commit("init", {"src/a.py": "x\n"})
    seed = _seeds()[op]
    if op == "promotion":  # the ledger is read when the caller passes its consumed ids
        seed = {"pairs": [], "options": {"consumed_measurement_run_ids": [], "now": HOT_NOW}}
    target = git_repo.path / ".git" / "workgroup" / state
    for hostile in HOSTILE_NAMES:
        plant(target, hostile, CAP)
        before = snapshot(git_repo.path)
        tried(f"runtime {op} ({state})")
        out = io.StringIO()
        with watchdog(), lowered_cap(hostile):
            run_single(op, io.BytesIO(json.dumps(seed).encode()), out, RuntimeContext(cwd=str(git_repo.path)))
        frame = json.loads(out.getvalue())
        assert snapshot(git_repo.path) == before, hostile  # the runtime never writes
        if hostile in KINDS and hostile != "dangling-symlink":
            # a registry or ledger that cannot be read is an environment error, never "empty"
            assert frame == {"ok": False, "code": "ENVIRONMENT_ERROR", "message": frame["message"]}, (
                hostile,
                frame,
            )
        remove(target)


# --- hypothesis over state-file bytes: whatever a state file holds, a coded answer ---

STATE_COMMANDS: list[tuple[str, Callable[[Path], Path], list[str]]] = [
    ("owners list (registry)", lambda r: _local(r) / "owners.json", ["owners", "list"]),
    ("vault list (journal)", lambda r: _local(r) / "vault-journal.jsonl", ["vault", "list"]),
    ("rollout status (rollout.json)", lambda r: r / ".workgroup" / "rollout.json", ["rollout", "status"]),
    ("probe check (cache)", lambda r: _local(r) / "probes.json", ["probe", "check", "x", "--phase", "1A"]),
]

hostile_bytes = st.one_of(
    st.binary(max_size=256),
    st.sampled_from(list(CONTENTS.values())),
    st.builds(
        lambda depth, opener: opener * depth,
        st.integers(min_value=200, max_value=5000),
        st.sampled_from([b"[", b'{"a":', b'{"schema":"workgroup.owners/v1","writers":[']),
    ),
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=hostile_bytes, which=st.integers(min_value=0, max_value=len(STATE_COMMANDS) - 1))
def test_state_file_bytes_never_traceback(raw: bytes, which: int, git_repo: GitRepo) -> None:
    name, target_of, argv = STATE_COMMANDS[which]
    target = target_of(git_repo.path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(raw)
    tried(name)
    outcome = run_cli(argv)
    assert "Traceback" not in outcome.err
    assert outcome.code in (0, 1, 2, 3)
    if outcome.code:
        assert "error[" in outcome.err
    assert target.read_bytes() == raw or name.startswith("probe")  # only a cache may be replaced


def test_the_tally_counts_inputs() -> None:
    from support.hostile import HOSTILE_COUNTS

    before = HOSTILE_COUNTS["self-check"]
    tried("self-check", 3)
    assert HOSTILE_COUNTS["self-check"] == before + 3
    del HOSTILE_COUNTS["self-check"]


def test_deep_json_in_a_string_is_not_nesting() -> None:
    from support.hostile import deep_in_string

    from toolkit.infra.boundedio import json_depth_exceeds, loads_bounded

    assert not json_depth_exceeds(deep_in_string())
    assert loads_bounded(deep_in_string())["text"].startswith("[[[")
    assert json_depth_exceeds(b"[" * 300 + b"]" * 300)
    assert not json_depth_exceeds(b"[" * 256 + b"]" * 256)


def test_lowered_cap_never_raises_a_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolkit.infra.boundedio import effective_limit

    monkeypatch.setenv("WORKGROUP_MAX_READ_BYTES", "999999999")
    assert effective_limit(100) == 100
    monkeypatch.setenv("WORKGROUP_MAX_READ_BYTES", "-5")
    assert effective_limit(100) == 100
    monkeypatch.setenv("WORKGROUP_MAX_READ_BYTES", "10")
    assert effective_limit(100) == 10
    assert os.environ["WORKGROUP_MAX_READ_BYTES"] == "10"


# --- the pre-commit hooks: a hostile staged path never hangs or crashes a commit ---

HOOKS: list[tuple[str, str, Callable[[Path], Path], frozenset[int]]] = [
    # (hook, module, where the hostile file sits, exit codes that are right answers)
    (
        "workgroup-privacy-hook",
        "toolkit.hooks.privacy",
        lambda r: r / ".workgroup" / "x.json",
        frozenset({0, 1}),
    ),
    ("workgroup-privacy-all-hook", "toolkit.hooks.privacy_all", lambda r: r / "notes.txt", frozenset({0, 1})),
    (
        "workgroup-docs-claims-hook",
        "toolkit.hooks.docs_claims",
        lambda r: r / "docs" / "x.md",
        frozenset({0, 1}),
    ),
    ("workgroup-skills-hook", "toolkit.hooks.skills", lambda r: r / "agents" / "x.md", frozenset({0, 1})),
    (
        "workgroup-verify-hook",
        "toolkit.hooks.verify",
        lambda r: r / ".workgroup" / "workgroups" / "wg" / "capsules" / "t1.json",
        frozenset({1}),  # a record that cannot be read or is no capsule is a finding
    ),
]


@pytest.mark.parametrize(("hook", "module", "where", "codes"), HOOKS, ids=[h[0] for h in HOOKS])
def test_hooks_never_hang_or_crash_on_hostile_files(
    hook: str,
    module: str,
    where: Callable[[Path], Path],
    codes: frozenset[int],
    git_repo: GitRepo,
) -> None:
    import importlib

    git_repo.commit("init", {"README.md": "# p\n"})
    assert console_script(hook) is importlib.import_module(module).main  # the table names the script's code
    target = where(git_repo.path)
    rel = str(target.relative_to(git_repo.path))
    failures = []
    for hostile in HOSTILE_NAMES:
        plant(target, hostile, CAP)
        before = snapshot(git_repo.path)
        before.pop(str(git_repo.path / ".git" / "workgroup" / "verify-cache.json"), None)
        tried(hook)
        try:
            with lowered_cap(hostile):
                outcome = run_cli([rel], hook)
        except BaseException as exc:  # noqa: BLE001
            failures.append(f"{hostile}: raised {type(exc).__name__}")
            remove(target)
            continue
        after = snapshot(git_repo.path)
        # the verify hook's own cache under .git/workgroup/ is its documented write
        after.pop(str(git_repo.path / ".git" / "workgroup" / "verify-cache.json"), None)
        if after != before:
            failures.append(f"{hostile}: changed the work tree")
        if outcome.code not in codes or "Traceback" in outcome.err:
            failures.append(f"{hostile}: exit {outcome.code}: {outcome.err[-120:]!r}")
        walked = hostile == "directory" and "privacy" in hook  # the privacy gate walks a folder
        if hostile in KINDS and not walked and outcome.code == 0 and "skipped" not in outcome.err:
            failures.append(f"{hostile}: passed without saying the file was skipped")
        remove(target)
    assert not failures, "\n".join(failures)


# --- a few end-to-end cases as users and hooks run them (a real process, real stdin) ---


@pytest.mark.parametrize(
    ("argv", "body"),
    [
        (["runtime", "route"], REQUEST_FRAGMENTS["deep-array"]),
        (["runtime", "capsule"], b'{"capsule": ' + REQUEST_FRAGMENTS["deep-object"] + b"}"),
        (
            ["runtime", "--batch", "lineage"],
            REQUEST_FRAGMENTS["deep-array"] + b"\n" + CONTENTS["latin-1"] + b"\n",
        ),
    ],
    ids=["route-deep", "capsule-deep", "batch-lineage"],
)
def test_runtime_process_answers_hostile_bodies(argv: list[str], body: bytes, git_repo: GitRepo) -> None:
    from support.harness import run_workgroup

    from toolkit.runtime.codes import MESSAGES

    before = snapshot(git_repo.path)
    tried(f"runtime process ({argv[-1]})")
    proc = run_workgroup(*argv, stdin=body, cwd=git_repo.path, timeout=60)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    frames = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    assert frames and all(f["ok"] is False and f["message"] == MESSAGES[f["code"]] for f in frames)
    assert len(frames) == (2 if "--batch" in argv else 1)
    assert snapshot(git_repo.path) == before


def test_runtime_process_with_a_fifo_registry_answers_at_once(git_repo: GitRepo) -> None:
    from support.harness import run_workgroup

    git_repo.commit("init", {"src/a.py": "x\n"})
    registry = git_repo.path / ".git" / "workgroup" / "owners.json"
    plant(registry, "fifo")
    tried("runtime process (route, FIFO registry)")
    request = json.dumps({"input": {"role": "builder", "owned_files": ["src/a.py"]}})
    proc = run_workgroup("runtime", "route", stdin=request, cwd=git_repo.path, timeout=30)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["code"] == "ENVIRONMENT_ERROR"
