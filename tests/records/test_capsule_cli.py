"""`workgroup capsule seal`: binding to a commit, storing, and every refusal through the CLI."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from support.harness import GitRepo, cli, run_workgroup
from test_capsule_support import overflow_capsule, tree_snapshot, valid_capsule

from toolkit.core.canonical import canonical_bytes, capsule_digest

CAPSULE_REL = ".workgroup/workgroups/kc-feat-auth-20260730-080000/capsules/task-auth-1.json"


def put(repo: GitRepo, capsule: Any, name: str = "input/capsule.json") -> str:
    repo.write(name, capsule if isinstance(capsule, (str, bytes)) else json.dumps(capsule))
    return name


@pytest.fixture
def committed(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("initial", {"src/app.py": "print('hi')\n"})
    return git_repo


def test_seal_binds_head_and_prints_the_sealed_capsule(committed: GitRepo) -> None:
    head = str(committed.raw.head.target)
    code, out, err = cli("capsule", "seal", put(committed, valid_capsule()))
    assert code == 0, err
    sealed = json.loads(out)
    assert sealed["checkpoint_sha"] == head
    assert sealed["capsule_hash"] == capsule_digest(sealed)
    assert "sealed sha256:" in err
    assert not (committed.path / ".workgroup").exists()  # no --write: nothing stored


def test_seal_checkpoint_option_resolves_any_rev(committed: GitRepo) -> None:
    first = str(committed.raw.head.target)
    committed.commit("second", {"src/b.py": "x = 1\n"})
    code, out, _ = cli("capsule", "seal", put(committed, valid_capsule()), "--checkpoint", "HEAD~1", "--json")
    assert code == 0
    assert json.loads(out)["checkpoint_sha"] == first
    code, out, _ = cli("capsule", "seal", "input/capsule.json", "--checkpoint", first[:10], "--json")
    assert json.loads(out)["capsule"]["checkpoint_sha"] == first  # abbreviations become full SHAs


def test_write_stores_atomically_at_the_capsule_path(committed: GitRepo) -> None:
    code, out, _ = cli("capsule", "seal", put(committed, valid_capsule()), "--write", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["written"] == CAPSULE_REL
    stored = json.loads((committed.path / CAPSULE_REL).read_text())
    assert stored == result["capsule"]
    leftovers = [p.name for p in (committed.path / CAPSULE_REL).parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_write_with_overflow_stores_the_content_addressed_artifact(committed: GitRepo) -> None:
    args = (
        "capsule",
        "seal",
        put(committed, overflow_capsule()),
        "--max-bytes",
        "1450",
        "--artifact-path",
        "knowzcode/artifacts/evidence.json",
        "--write",
        "--json",
    )
    code, out, err = cli(*args)
    assert code == 0, err
    result = json.loads(out)
    ref = result["artifact"]["path"]
    assert ref.startswith("knowzcode/artifacts/sha256-") and result["capsule"]["artifact_refs"] == [ref]
    data = (committed.path / ref).read_bytes()
    assert "sha256:" + ref.rsplit("sha256-", 1)[1][:-5] == result["artifact"]["digest"]
    import hashlib

    assert hashlib.sha256(data).hexdigest() == ref.rsplit("sha256-", 1)[1][:-5]
    assert json.loads(data)["evidence"] == overflow_capsule()["evidence"]
    assert len(canonical_bytes(result["capsule"])) <= 1450


def test_unborn_head_is_a_clear_error(git_repo: GitRepo) -> None:
    code, out, err = cli("capsule", "seal", put(git_repo, valid_capsule()), "--write")
    assert code == 2 and out == ""
    assert "error[UNBORN_HEAD]" in err
    assert not (git_repo.path / ".workgroup").exists()


@pytest.mark.parametrize("rev", ["no-such-branch", "0" * 40, "HEAD~5", "HEAD^{tree}x"])
def test_unknown_rev_is_a_clear_error(committed: GitRepo, rev: str) -> None:
    code, out, err = cli("capsule", "seal", put(committed, valid_capsule()), "--checkpoint", rev, "--write")
    assert code == 2 and out == ""
    assert "error[UNKNOWN_REVISION]" in err and rev not in err
    assert not (committed.path / ".workgroup").exists()


def test_outside_a_repository_is_an_environment_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps(valid_capsule()))
    code, _, err = cli("capsule", "seal", "c.json")
    assert code == 3 and "NOT_A_GIT_REPOSITORY" in err


# ---------------------------------------------------------------- refusals through the CLI

CLI_REFUSALS: list[tuple[str, dict[str, Any], tuple[str, ...], str, int]] = [
    ("schema-unknown-key", {"raw_prompt": "x"}, (), "CAPSULE_SCHEMA_INVALID", 2),
    ("schema-wrong-type", {"phase": 2}, (), "CAPSULE_SCHEMA_INVALID", 2),
    ("private-token", {"objective": "use ghp_FAKEEXAMPLE1234567890"}, (), "CAPSULE_PRIVATE_CONTENT", 1),
    (
        "private-session",
        {"risks": ["Claude session id: claude-session-1a2b3c4d5e6f"]},
        (),
        "CAPSULE_PRIVATE_CONTENT",
        1,
    ),
    ("private-transcript", {"next_action": "attach the raw transcript"}, (), "CAPSULE_PRIVATE_CONTENT", 1),
    ("private-home-path", {"constraints": ["see /Users/alice/x"]}, (), "CAPSULE_PRIVATE_CONTENT", 1),
    ("string-too-long", {"objective": "\u00e9" * 2100}, (), "CAPSULE_STRING_TOO_LONG", 1),
    ("path-absolute", {"owned_files": ["/etc/passwd"]}, (), "CAPSULE_ARTIFACT_REF_INVALID", 2),
    ("path-dotdot", {"read_files": ["../outside.md"]}, (), "CAPSULE_ARTIFACT_REF_INVALID", 2),
    (
        "path-backslash",
        {"specs": [{"path": "a\\b.md", "verify_ids": []}]},
        (),
        "CAPSULE_ARTIFACT_REF_INVALID",
        2,
    ),
    ("artifact-outside", {"artifact_refs": ["logs/x.log"]}, (), "CAPSULE_ARTIFACT_REF_UNAUTHORIZED", 1),
    (
        "artifact-git",
        {"artifact_refs": ["knowzcode/artifacts/.git/x"]},
        (),
        "CAPSULE_ARTIFACT_REF_UNAUTHORIZED",
        1,
    ),
    (
        "mandatory-overflow",
        {"objective": "x" * 4000},
        ("--max-bytes", "500"),
        "CAPSULE_MANDATORY_OVERFLOW",
        1,
    ),
    ("artifact-path-outside", {}, ("--artifact-path", "src/e.json"), "CAPSULE_ARTIFACT_REF_UNAUTHORIZED", 1),
    (
        "artifact-path-invalid",
        {},
        ("--artifact-path", "knowzcode/artifacts/../e"),
        "CAPSULE_ARTIFACT_REF_INVALID",
        2,
    ),
]


@pytest.mark.parametrize(
    ("name", "change", "extra", "code", "exit_code"), CLI_REFUSALS, ids=[row[0] for row in CLI_REFUSALS]
)
def test_pipeline_refusals_are_coded_and_write_nothing(
    committed: GitRepo,
    name: str,
    change: dict[str, Any],
    extra: tuple[str, ...],
    code: str,
    exit_code: int,
) -> None:
    source = put(committed, {**valid_capsule(), **change})
    before = tree_snapshot(committed.path)
    status, out, err = cli("capsule", "seal", source, "--write", *extra)
    assert (status, out) == (exit_code, "")
    assert f"error[{code}]" in err
    assert "ghp_" not in err and "alice" not in err
    assert tree_snapshot(committed.path) == before


def test_overflow_roots_are_explicit_in_the_cli(committed: GitRepo) -> None:
    source = put(committed, overflow_capsule())
    base = ("capsule", "seal", source, "--max-bytes", "1450", "--write")
    status, _, err = cli(*base)  # no --artifact-path: evidence may not leave
    assert status == 1 and "CAPSULE_MANDATORY_OVERFLOW" in err
    path = ("--artifact-path", "knowzcode/artifacts/ev/e.json")
    status, _, err = cli(*base, *path, "--artifact-root", "knowzcode/artifacts/other")
    assert status == 1 and "CAPSULE_ARTIFACT_REF_UNAUTHORIZED" in err
    for root, code in (
        ("knowzcode/artifacts/.git", "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),  # .git never
        ("knowzcode", "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),  # wider than the boundary
        ("src", "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),  # outside the boundary
        ("/knowzcode/artifacts", "CAPSULE_ARTIFACT_REF_INVALID"),  # not portable
    ):
        status, _, err = cli(*base, *path, "--artifact-root", root)
        assert f"error[{code}]" in err, root
    assert not (committed.path / ".workgroup").exists() and not (committed.path / "knowzcode").exists()
    status, _, err = cli(*base, *path, "--artifact-root", "knowzcode/artifacts/ev")
    assert status == 0, err


# ---------------------------------------------------------------- bad input files


def test_truncated_json(committed: GitRepo) -> None:
    text = json.dumps(valid_capsule())[:-20]
    status, _, err = cli("capsule", "seal", put(committed, text), "--write")
    assert status == 2 and "error[INVALID_JSON]" in err
    assert not (committed.path / ".workgroup").exists()


@pytest.mark.parametrize("payload", ["[1, 2]", '"text"', "null", "3", "NaN", b"\xff\xfe{}"])
def test_wrong_top_level_types(committed: GitRepo, payload: str | bytes) -> None:
    status, _, err = cli("capsule", "seal", put(committed, payload), "--write")
    assert status == 2 and ("CAPSULE_SCHEMA_INVALID" in err or "INVALID_JSON" in err)
    assert not (committed.path / ".workgroup").exists()


def test_ten_megabyte_file_is_refused_without_reading_it_all(committed: GitRepo) -> None:
    capsule = valid_capsule()
    capsule["objective"] = "x" * (10 * 1024 * 1024)
    status, _, err = cli("capsule", "seal", put(committed, capsule), "--write")
    assert status == 2 and "error[FILE_TOO_LARGE]" in err
    assert not (committed.path / ".workgroup").exists()


def test_symlink_pointing_outside_the_repository(committed: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(valid_capsule()))
    link = committed.path / "input" / "link.json"
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, link)
    status, _, err = cli("capsule", "seal", "input/link.json", "--write")
    assert status == 2 and "error[PATH_OUTSIDE_REPOSITORY]" in err
    assert str(tmp_path) not in err
    assert not (committed.path / ".workgroup").exists()


def test_symlink_inside_the_repository_is_fine(committed: GitRepo) -> None:
    put(committed, valid_capsule(), "input/real.json")
    os.symlink(committed.path / "input" / "real.json", committed.path / "input" / "alias.json")
    status, _, _ = cli("capsule", "seal", "input/alias.json")
    assert status == 0


def test_missing_file_and_directory(committed: GitRepo) -> None:
    status, _, err = cli("capsule", "seal", "nope.json")
    assert status == 2 and "FILE_NOT_FOUND" in err
    status, _, err = cli("capsule", "seal", "src")
    assert status == 2 and "NOT_A_FILE" in err


@pytest.mark.parametrize("field", ["workgroup_id", "task_id"])
@pytest.mark.parametrize("value", ["../escape", "a/b", "..", "with space"])
def test_unsafe_ids_are_refused_before_writing(committed: GitRepo, field: str, value: str) -> None:
    status, _, err = cli("capsule", "seal", put(committed, {**valid_capsule(), field: value}), "--write")
    assert status == 2 and "UNSAFE_SEGMENT" in err
    assert not (committed.path / ".workgroup").exists()


def test_symlinked_destination_directory_is_refused(committed: GitRepo, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (committed.path / ".workgroup").mkdir()
    os.symlink(elsewhere, committed.path / ".workgroup" / "workgroups")
    status, _, err = cli("capsule", "seal", put(committed, valid_capsule()), "--write")
    assert status == 2 and "error[PATH_OUTSIDE_REPOSITORY]" in err
    assert list(elsewhere.iterdir()) == []


def test_seal_as_a_subprocess(committed: GitRepo) -> None:
    put(committed, valid_capsule())
    proc = run_workgroup("capsule", "seal", "input/capsule.json", "--write", "--json", cwd=committed.path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["written"] == CAPSULE_REL
    proc = run_workgroup("capsule", "seal", "input/capsule.json", "--checkpoint", "nope", cwd=committed.path)
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr and proc.stdout == b""


def test_every_path_and_privacy_refusal_through_the_cli(committed: GitRepo) -> None:
    """The op's full refusal tables, replayed through `capsule seal --write` (nothing written)."""
    from test_capsule_op import BAD_PATHS, PRIVATE_VALUES

    cases: list[tuple[dict[str, Any], str]] = []
    for _name, path in BAD_PATHS:
        code = "CAPSULE_SCHEMA_INVALID" if path == "" else "CAPSULE_ARTIFACT_REF_INVALID"
        cases.append(({"owned_files": [path]}, code))
        cases.append(({"failures": [{"command": "t", "summary": "s", "artifact": path}]}, code))
    for _name, text in PRIVATE_VALUES:
        cases.append(({"next_action": text}, "CAPSULE_PRIVATE_CONTENT"))
    before = tree_snapshot(committed.path)
    for change, code in cases:
        source = put(committed, {**valid_capsule(), **change})
        status, out, err = cli("capsule", "seal", source, "--write")
        assert f"error[{code}]" in err, (change, err)
        assert out == "" and status in (1, 2)
    after = tree_snapshot(committed.path)
    del after["input/capsule.json"]  # the test's own input file
    assert after == before


# --- refusals that say what is wrong (issue 16) ------------------------------------------------

DOC_EXAMPLE = re.compile(r"```json\n(\{.*?\})\n```", re.S)


def _help_example() -> dict[str, Any]:
    out = cli("capsule", "seal", "--help").stdout
    block = out[out.index('{"schema"') : out.index("}", out.index('"next_action"')) + 1]
    return json.loads(block)  # type: ignore[no-any-return]


def test_the_examples_in_the_help_and_the_docs_seal(committed: GitRepo) -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "capsules-verify.md").read_text("utf-8")
    examples = [_help_example(), json.loads(DOC_EXAMPLE.search(docs).group(1))]  # type: ignore[union-attr]
    assert examples[0] == examples[1]
    code, out, err = cli("capsule", "seal", put(committed, examples[0]))
    assert code == 0, err
    assert json.loads(out)["checkpoint_sha"] == str(committed.raw.head.target)


def test_a_natural_first_capsule_is_refused_with_the_fields_and_rules(committed: GitRepo) -> None:
    secret = "sk_" + "live_" + "4eC39HqLyjWD4rjtT1zdp7dcFAKE"
    capsule = {**_help_example(), "phase": "build", "owned_files": ["a.py", "a.py"], "notes": secret}
    del capsule["node_ids"]
    capsule["specs"] = [{"path": "specs/a.md"}]
    capsule["ZZ" + secret] = 1  # an unknown field whose name looks like a credential
    code, out, err = cli("capsule", "seal", put(committed, capsule), "--write")
    assert code == 2 and out == ""
    assert "error[CAPSULE_SCHEMA_INVALID]" in err
    for line in (
        "$.phase: must be one of 1A, 1B, 2A, 2B, 3",
        "$.node_ids: required",
        "$.owned_files[1]: must not repeat an earlier item",
        '$.specs[0]: must be an object {"path": string, "verify_ids": [string, ...]}',
        "$.notes: not a capsule field",
        "$.<a field>: not a capsule field",
    ):
        assert line in err, line
    assert secret not in err and "build" not in err  # values are never echoed
    assert "checkpoint_sha" not in err and "capsule_hash" not in err  # filled in by sealing
    assert not (committed.path / ".workgroup").exists()
    code, out, err = cli("capsule", "seal", "input/capsule.json", "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["code"] == "CAPSULE_SCHEMA_INVALID" and error["path"] == "input/capsule.json"
    assert "$.phase: must be one of" in error["message"] and secret not in out


def test_every_schema_break_is_explained() -> None:
    # explain_schema names a problem exactly when the closed schema refuses the capsule
    from toolkit.runtime.capsule_rules import explain_schema, schema_problems

    base = {**_help_example(), "checkpoint_sha": None}
    bad_values: list[Any] = [None, 7, "", [], ["x", "x"], [{}], {"a": 1}, "x" * 5000, [""], [7]]
    for key in base:
        for value in bad_values:
            capsule = {**base, key: value}
            broken = bool(schema_problems({**capsule, "capsule_hash": "sha256:" + "0" * 64}))
            explained = explain_schema(capsule, sealed=False)
            assert bool(explained) == broken, (key, value, explained)
            assert all(line.startswith("$") and ": " in line for line in explained)
        missing = {k: v for k, v in base.items() if k != key}
        assert explain_schema(missing, sealed=False) == (
            [] if key == "checkpoint_sha" else [f"$.{key}: required"]
        )


def test_the_schema_marks_the_filled_in_fields() -> None:
    root = Path(__file__).resolve().parents[2]
    schema = json.loads((root / "schemas" / "context-capsule.schema.json").read_text(encoding="utf-8"))
    for field in ("checkpoint_sha", "capsule_hash"):
        prop = schema["properties"][field]
        assert prop["readOnly"] is True and "Filled in by `workgroup capsule seal`" in prop["description"]
    others = [k for k, v in schema["properties"].items() if v.get("readOnly")]
    assert sorted(others) == ["capsule_hash", "checkpoint_sha"]


def test_seal_json_prints_the_declared_answer(committed: GitRepo) -> None:
    """``capsule seal --json`` prints a SealAnswer (its artifact part an ArtifactAnswer): the
    declared keys in the declared order, with and without evidence moved out."""
    from toolkit.records.capsules import ArtifactAnswer, SealAnswer

    code, out, _ = cli("capsule", "seal", put(committed, valid_capsule()), "--json")
    assert code == 0
    plain = json.loads(out)
    assert list(plain) == list(SealAnswer.__annotations__) and plain["artifact"] is None
    args = ("--max-bytes", "1450", "--artifact-path", "knowzcode/artifacts/evidence.json", "--json")
    code, out, _ = cli("capsule", "seal", put(committed, overflow_capsule()), *args)
    assert code == 0
    moved = json.loads(out)
    assert list(moved) == list(SealAnswer.__annotations__)
    assert list(moved["artifact"]) == list(ArtifactAnswer.__annotations__)
    assert moved["artifact"]["written"] is False  # without --write nothing is stored
