"""`workgroup lineage record` and `workgroup lineage check` (real repositories, real commits)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.harness import GitRepo, cli, run_workgroup

from toolkit.infra.git import discover
from toolkit.records.verify import verify

CURRENT_KEYS = (
    "platform",
    "workgroup_id",
    "role",
    "phase",
    "fix_loop_id",
    "spec_hash",
    "scope_hash",
    "checkpoint_sha",
    "model",
    "effort",
    "runtime_prefix_hash",
    "baseline_hash",
    "capsule_hash",
    "tools_hash",
    "permissions_hash",
    "sensitivity",
)
LINEAGE_REL = ".workgroup/workgroups/wg-auth/lineages/lin-builder-1.json"


def lineage(sha: str, **changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "schema": "knowzcode.agent-lineage/v1",
        "lineage_id": "lin-builder-1",
        "workgroup_id": "wg-auth",
        "platform": "claude",
        "platform_handle": None,
        "parent_lineage_id": None,
        "role": "builder",
        "scope": "src/auth",
        "phase": "2A",
        "fix_loop_id": None,
        "mode": "resume",
        "model": "opus",
        "effort": "high",
        "runtime_prefix_hash": "sha256:" + "a" * 64,
        "baseline_hash": None,
        "tools_hash": "sha256:tools",
        "permissions_hash": "sha256:perms",
        "spec_hash": "sha256:spec",
        "scope_hash": "sha256:scope",
        "checkpoint_sha": sha,
        "capsule_hash": None,
        "sensitivity": "normal",
        "created_at": "2026-12-01T10:00:00Z",
        "last_used_at": "2026-12-01T10:00:00Z",
        "resumable": True,
        "lease_expires_at": "2026-12-01T10:20:00Z",
    }
    record.update(changes)
    return record


@pytest.fixture
def head(git_repo: GitRepo) -> str:
    return git_repo.commit("initial", {"src/auth/token.py": "TTL = 60\n"})


def put(repo: GitRepo, value: Any, name: str = "input/lineage.json") -> str:
    repo.write(name, value if isinstance(value, str) else json.dumps(value))
    return name


def test_record_validates_binds_and_stores(git_repo: GitRepo, head: str) -> None:
    code, out, err = cli("lineage", "record", put(git_repo, lineage(head)), "--json")
    assert code == 0, err
    assert json.loads(out)["written"] == LINEAGE_REL
    assert json.loads((git_repo.path / LINEAGE_REL).read_text()) == lineage(head)
    assert verify(discover(git_repo.path)).ok


def test_real_handle_is_replaced_by_a_keyed_pseudonym(git_repo: GitRepo, head: str) -> None:
    handle = "claude-session-1a2b3c4d5e6f7a8b"
    code, out, err = cli("lineage", "record", put(git_repo, lineage(head, platform_handle=handle)), "--json")
    assert code == 0, err
    stored_text = (git_repo.path / LINEAGE_REL).read_text()
    stored = json.loads(stored_text)
    assert handle not in stored_text and handle not in out and handle not in err
    pseudonym = stored["platform_handle"]
    assert pseudonym.startswith("anon-") and len(pseudonym) == 37
    layout = discover(git_repo.path).layout
    local = json.loads(layout.pseudonyms.read_text())
    assert local[pseudonym] == {"platform": "claude", "platform_handle": handle}
    assert layout.pseudonyms.stat().st_mode & 0o077 == 0
    assert str(layout.pseudonyms).startswith(str(git_repo.path / ".git"))  # local state, never committed
    # the same handle maps to the same pseudonym (a stable key in local state)
    cli("lineage", "record", put(git_repo, lineage(head, platform_handle=handle, lineage_id="lin-2")))
    again = json.loads((git_repo.path / ".workgroup/workgroups/wg-auth/lineages/lin-2.json").read_text())
    assert again["platform_handle"] == pseudonym
    assert verify(discover(git_repo.path)).ok


def test_pseudonyms_differ_between_repositories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from support.harness import GitRepo as Repo

    from toolkit.records.lineages import record_lineage

    seen = []
    for name in ("one", "two"):
        path = tmp_path / name
        path.mkdir()
        repo = Repo(path)
        sha = repo.commit("initial", {"a.txt": "a\n"})
        monkeypatch.chdir(path)
        source = repo.write("l.json", json.dumps(lineage(sha, platform_handle="codex-thread-abcdef123456")))
        seen.append(record_lineage(discover(path), source).lineage["platform_handle"])
    assert seen[0] != seen[1]


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"checkpoint_sha": "abcdef1"}, "CHECKPOINT_NOT_A_COMMIT"),  # abbreviated
        ({"checkpoint_sha": "3" * 40}, "CHECKPOINT_NOT_A_COMMIT"),  # not in this repository
        ({"checkpoint_sha": None}, "LINEAGE_SCHEMA_INVALID"),  # never null in a lineage
        ({"platform": "gemini"}, "LINEAGE_SCHEMA_INVALID"),
        ({"raw_transcript": "x"}, "LINEAGE_SCHEMA_INVALID"),  # closed schema
        ({"created_at": "2026-02-31T10:00:00Z"}, "LINEAGE_SCHEMA_INVALID"),  # strict RFC 3339
        ({"resumable": "yes"}, "LINEAGE_SCHEMA_INVALID"),
        ({"lineage_id": "../escape"}, "UNSAFE_SEGMENT"),
        ({"workgroup_id": "a/b"}, "UNSAFE_SEGMENT"),
    ],
)
def test_record_refusals_write_nothing(
    git_repo: GitRepo, head: str, change: dict[str, Any], code: str
) -> None:
    status, out, err = cli("lineage", "record", put(git_repo, lineage(head, **change)))
    assert status == 2 and out == "" and f"error[{code}]" in err
    assert not (git_repo.path / ".workgroup").exists()


def test_private_values_are_refused(git_repo: GitRepo, head: str) -> None:
    status, _, err = cli(
        "lineage", "record", put(git_repo, lineage(head, scope="token ghp_FAKEEXAMPLE1234567890"))
    )
    assert status == 1 and "LINEAGE_PRIVATE_CONTENT" in err and "ghp_" not in err
    assert not (git_repo.path / ".workgroup").exists()


@pytest.mark.parametrize("payload", ["{truncated", "[]", '"x"'])
def test_bad_lineage_files(git_repo: GitRepo, head: str, payload: str) -> None:
    status, _, err = cli("lineage", "record", put(git_repo, payload))
    assert status == 2 and ("INVALID_JSON" in err or "LINEAGE_SCHEMA_INVALID" in err)


def test_record_unborn_repository_has_no_commit_to_bind(git_repo: GitRepo) -> None:
    status, _, err = cli("lineage", "record", put(git_repo, lineage("4" * 40)))
    assert status == 2 and "CHECKPOINT_NOT_A_COMMIT" in err


# ---------------------------------------------------------------- check


def current_for(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    facts = {key: record[key] for key in CURRENT_KEYS}
    facts.update(changes)
    return facts


@pytest.fixture
def recorded(git_repo: GitRepo, head: str) -> dict[str, Any]:
    record = lineage(head)
    assert cli("lineage", "record", put(git_repo, record))[0] == 0
    return record


def test_check_hot_and_cold(git_repo: GitRepo, recorded: dict[str, Any]) -> None:
    cur = put(git_repo, current_for(recorded), "input/current.json")
    code, out, _ = cli("lineage", "check", "lin-builder-1", "--current", cur, "--now", "2026-12-01T10:05:00Z")
    assert (code, out.strip()) == (0, "HOT")
    code, out, _ = cli(
        "lineage", "check", LINEAGE_REL, "--current", cur, "--now", "2026-12-01T11:00:00Z", "--json"
    )
    assert code == 0 and json.loads(out) == {
        "state": "COLD_VALID",
        "invalidations": [],
        "lease_released": None,
    }


def test_check_reconcile_is_exit_1(git_repo: GitRepo, recorded: dict[str, Any]) -> None:
    cur = put(git_repo, current_for(recorded, capsule_hash="sha256:" + "f" * 64), "input/current.json")
    code, out, _ = cli(
        "lineage",
        "check",
        "lin-builder-1",
        "--current",
        cur,
        "--now",
        "2026-12-01T10:05:00Z",
        "--json",
    )
    assert code == 1 and json.loads(out)["state"] == "RECONCILE_REQUIRED"


def test_invalidating_check_releases_the_holders_lease(git_repo: GitRepo, recorded: dict[str, Any]) -> None:
    from toolkit.infra.clock import now_utc
    from toolkit.records import owners

    layout = discover(git_repo.path).layout
    owners.acquire(layout, "lin-builder-1", ["src/auth/token.py"], now=now_utc())
    assert [lease.lineage_id for lease in owners.list_leases(layout, now=now_utc())] == ["lin-builder-1"]
    cur = put(
        git_repo, current_for(recorded, role="reviewer", independent_reviewer=True), "input/current.json"
    )
    code, out, err = cli(
        "lineage",
        "check",
        "lin-builder-1",
        "--current",
        cur,
        "--now",
        "2026-12-01T10:05:00Z",
        "--json",
    )
    result = json.loads(out)
    assert code == 1 and result["state"] == "INVALID"
    assert result["invalidations"] == ["REVIEW_LINEAGE_CONTAMINATION", "ROLE_MISMATCH"]
    assert result["lease_released"] is True and "lease was released" in err
    assert owners.list_leases(layout, now=now_utc()) == []


def test_check_bad_inputs(git_repo: GitRepo, recorded: dict[str, Any]) -> None:
    cur = put(git_repo, current_for(recorded), "input/current.json")
    status, _, err = cli(
        "lineage", "check", "lin-builder-1", "--current", cur, "--now", "2026-02-31T00:00:00Z"
    )
    assert status == 2 and "INVALID_DATE_TIME" in err
    status, _, err = cli("lineage", "check", "no-such-lineage", "--current", cur)
    assert status == 2 and "LINEAGE_NOT_FOUND" in err
    status, _, err = cli(
        "lineage", "check", "lin-builder-1", "--current", put(git_repo, "[1]", "input/c2.json")
    )
    assert status == 2 and "INVALID_REQUEST" in err
    missing = current_for(recorded)
    del missing["capsule_hash"]  # 16 keys are required: unknown provenance
    cur = put(git_repo, missing, "input/c3.json")
    code, out, _ = cli("lineage", "check", "lin-builder-1", "--current", cur, "--json")
    assert code == 1 and json.loads(out)["invalidations"] == ["UNKNOWN_PROVENANCE"]


def test_lineage_verify_rules(git_repo: GitRepo, recorded: dict[str, Any]) -> None:
    path = git_repo.path / LINEAGE_REL
    data = json.loads(path.read_text())
    data["platform_handle"] = "claude-real-handle-value"
    data["parent_lineage_id"] = "lin-missing"
    path.write_text(json.dumps(data))
    found = {(f.path, f.rule) for f in verify(discover(git_repo.path)).findings}
    assert found == {(LINEAGE_REL, "platform-handle"), (LINEAGE_REL, "reference-missing")}


def test_lineage_commands_as_a_subprocess(git_repo: GitRepo, head: str) -> None:
    put(git_repo, lineage(head, platform_handle="codex-thread-0123456789ab"))
    proc = run_workgroup("lineage", "record", "input/lineage.json", cwd=git_repo.path)
    assert proc.returncode == 0, proc.stderr
    assert b"codex-thread" not in proc.stdout + proc.stderr


def test_racing_recorders_share_one_key_and_lose_no_pseudonym(git_repo: GitRepo, head: str) -> None:
    """Real processes record lineages at once: one key is created, every real handle is kept."""
    import subprocess
    import sys

    procs = []
    for i in range(4):
        rel = put(
            git_repo,
            lineage(head, lineage_id=f"lin-{i}", platform_handle=f"codex-thread-{i}abcdef123456"),
            f"input/l{i}.json",
        )
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "toolkit", "lineage", "record", rel],
                cwd=git_repo.path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        )
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0, 0]
    layout = discover(git_repo.path).layout
    table = json.loads(layout.pseudonyms.read_text())
    assert sorted(v["platform_handle"] for v in table.values()) == [
        f"codex-thread-{i}abcdef123456" for i in range(4)
    ]
    from toolkit.records.lineages import PSEUDONYM_KEY_FILE, pseudonym_for

    key = (layout.local / PSEUDONYM_KEY_FILE).read_bytes().strip()
    for i in range(4):
        stored = json.loads(
            (git_repo.path / f".workgroup/workgroups/wg-auth/lineages/lin-{i}.json").read_text()
        )
        assert stored["platform_handle"] == pseudonym_for(key, "claude", f"codex-thread-{i}abcdef123456")


@pytest.mark.parametrize(
    ("change", "line"),
    [
        ({"platform": "gemini"}, "$.platform: must be"),  # the rule: the allowed platforms
        ({"raw_transcript": "x"}, "$.raw_transcript: not a field of the record (the schema is closed)"),
        ({"resumable": "yes"}, "$.resumable: "),
        (
            {"ZZ_sk_live_4eC39HqLyjWD4rjtT1zd": 1},
            "$.<a field>: not a field of the record",
        ),  # a name shown only if plain
    ],
)
def test_schema_errors_name_the_json_path_and_rule(
    git_repo: GitRepo, head: str, change: dict[str, Any], line: str
) -> None:
    status, _, err = cli("lineage", "record", put(git_repo, lineage(head, **change)))
    assert status == 2 and "error[LINEAGE_SCHEMA_INVALID]" in err and line in err, err
    assert "gemini" not in err and "4eC39" not in err and "yes" not in err.split(":", 1)[1]  # no values


def test_record_and_check_print_the_declared_answers(git_repo: GitRepo, head: str) -> None:
    """``lineage record --json`` prints a RecordedAnswer and ``lineage check --json`` a CheckedAnswer:
    the declared keys in the declared order; the handle is pseudonymized in what is printed."""
    from toolkit.records.lineages import CheckedAnswer, RecordedAnswer

    handle = "codex-thread-abcdef123456"
    record = lineage(head, platform_handle=handle)
    code, out, err = cli("lineage", "record", put(git_repo, record), "--json")
    assert code == 0, err
    printed = json.loads(out)
    assert list(printed) == list(RecordedAnswer.__annotations__)
    assert printed["pseudonymized"] is True and printed["lineage"]["platform_handle"].startswith("anon-")
    assert list(printed["lineage"]) == list(record)
    cur = put(git_repo, current_for(record), "input/current.json")
    code, out, _ = cli("lineage", "check", "lin-builder-1", "--current", cur, "--json")
    assert list(json.loads(out)) == list(CheckedAnswer.__annotations__)
