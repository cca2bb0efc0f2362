"""`workgroup verify`: checkpoints in history, hashes, artifacts, privacy, run ids; shallow clones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.harness import GitRepo, cli, run_workgroup
from test_capsule_support import overflow_capsule, valid_capsule

from toolkit.core.canonical import capsule_digest
from toolkit.infra.git import Repo, discover, squash_onto
from toolkit.records.verify import verify
from toolkit.runtime.op_types import ContextCapsule

CAPSULE_REL = ".workgroup/workgroups/kc-feat-auth-20260730-080000/capsules/task-auth-1.json"
GIT_ENV = ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "protocol.file.allow=always"]


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *GIT_ENV, *args], cwd=cwd, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def seal(repo: GitRepo, capsule: dict[str, Any] | None = None, *extra: str) -> ContextCapsule:
    from toolkit.records.capsules import seal_file

    source = repo.write("input/capsule.json", json.dumps(capsule or valid_capsule()))
    args: dict[str, Any] = {}
    if extra:
        args = {"max_bytes": 1450, "artifact_path": "knowzcode/artifacts/e.json"}
    outcome = seal_file(discover(repo.path), source, write=True, **args)
    source.unlink()
    return outcome.capsule


def rules(report: Any) -> list[tuple[str, str]]:
    return [(f.path, f.rule) for f in report.findings]


@pytest.fixture
def sealed_repo(git_repo: GitRepo) -> GitRepo:
    """main: initial -> work (the checkpoint) -> capsule commit."""
    git_repo.commit("initial", {"src/app.py": "a = 1\n"})
    git_repo.commit("work", {"src/app.py": "a = 2\n"})
    seal(git_repo)
    git_repo.commit("record capsule")
    return git_repo


def test_a_sealed_capsule_verifies(sealed_repo: GitRepo) -> None:
    report = verify(discover(sealed_repo.path))
    assert report.ok and report.counts["capsules"] == 1
    assert report.rev == str(sealed_repo.raw.head.target)


def test_history_rewrite_that_drops_the_checkpoint_fails_naming_the_file(sealed_repo: GitRepo) -> None:
    repo = discover(sealed_repo.path)
    squash_onto(repo, "HEAD~2", "squash work and capsule")  # the checkpoint commit leaves the branch
    report = verify(discover(sealed_repo.path))
    assert rules(report) == [(CAPSULE_REL, "checkpoint-not-ancestor")]
    assert "not HEAD or an ancestor" in report.findings[0].message


def test_reset_that_drops_the_checkpoint_fails(sealed_repo: GitRepo) -> None:
    from toolkit.infra.git import reset_hard

    data = (sealed_repo.path / CAPSULE_REL).read_bytes()
    reset_hard(discover(sealed_repo.path), "HEAD~2")  # back to "initial": the capsule file goes too
    assert not (sealed_repo.path / CAPSULE_REL).exists()
    assert verify(discover(sealed_repo.path)).ok  # nothing recorded any more
    sealed_repo.write(CAPSULE_REL, data)  # the capsule is carried over onto the new history
    sealed_repo.commit("re-add capsule")
    assert rules(verify(discover(sealed_repo.path))) == [(CAPSULE_REL, "checkpoint-not-ancestor")]


def test_real_git_rebase_dropping_the_commit_fails(sealed_repo: GitRepo) -> None:
    # `git rebase --onto HEAD~2 HEAD~1` replays only the capsule commit onto initial
    git(sealed_repo.path, "rebase", "-q", "--onto", "HEAD~2", "HEAD~1")
    proc = run_workgroup("verify", "--json", cwd=sealed_repo.path)
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert out["tool"] == "verify" and out["summary"]["findings"] == 1 and out["summary"]["capsules"] == 1
    (finding,) = out["findings"]
    assert (finding["path"], finding["line"], finding["col"], finding["code"]) == (
        CAPSULE_REL,
        0,
        0,
        "checkpoint-not-ancestor",
    )
    # the finding carries the fix: reseal at a commit reachable from the checked rev
    assert "reseal at a commit reachable from HEAD" in finding["fix"] and "--checkpoint" in finding["fix"]
    text = run_workgroup("verify", cwd=sealed_repo.path)
    assert text.stdout.decode().startswith(f"{CAPSULE_REL}:0:0: checkpoint-not-ancestor ")
    assert "\n  fix: " in text.stdout.decode() and b"verify: 1 finding" in text.stderr


def test_rev_option_checks_against_that_commit(sealed_repo: GitRepo) -> None:
    repo = discover(sealed_repo.path)
    assert verify(repo, "HEAD~1").ok  # the checkpoint itself
    assert rules(verify(repo, "HEAD~2")) == [(CAPSULE_REL, "checkpoint-not-ancestor")]


def test_checkpoint_missing_from_the_repository(sealed_repo: GitRepo) -> None:
    path = sealed_repo.path / CAPSULE_REL
    capsule = json.loads(path.read_text())
    capsule["checkpoint_sha"] = "1" * 40
    capsule["capsule_hash"] = capsule_digest(capsule)
    path.write_text(json.dumps(capsule))
    assert rules(verify(discover(sealed_repo.path))) == [(CAPSULE_REL, "checkpoint-missing")]


@pytest.mark.parametrize("value", ["abcdef1234567", None, "A" * 40])
def test_committed_checkpoints_are_full_shas(sealed_repo: GitRepo, value: Any) -> None:
    path = sealed_repo.path / CAPSULE_REL
    capsule = json.loads(path.read_text())
    capsule["checkpoint_sha"] = value
    capsule["capsule_hash"] = capsule_digest(capsule)
    path.write_text(json.dumps(capsule))
    assert rules(verify(discover(sealed_repo.path))) == [(CAPSULE_REL, "checkpoint-format")]


def test_tampered_capsule_fails_the_hash(sealed_repo: GitRepo) -> None:
    path = sealed_repo.path / CAPSULE_REL
    capsule = json.loads(path.read_text())
    capsule["objective"] = "Quietly widened objective."
    path.write_text(json.dumps(capsule, indent=2))
    assert rules(verify(discover(sealed_repo.path))) == [(CAPSULE_REL, "hash-mismatch")]


def test_reformatting_a_capsule_keeps_its_hash(sealed_repo: GitRepo) -> None:
    path = sealed_repo.path / CAPSULE_REL
    capsule = json.loads(path.read_text())
    path.write_text(json.dumps({k: capsule[k] for k in reversed(list(capsule))}))
    assert verify(discover(sealed_repo.path)).ok


def _with_artifact(repo: GitRepo) -> tuple[str, Path]:
    repo.commit("initial", {"src/app.py": "a = 1\n"})
    capsule = overflow_capsule()
    capsule["workgroup_id"], capsule["task_id"] = "kc-feat-auth-20260730-080000", "task-auth-1"
    sealed = seal(repo, capsule, "overflow")
    repo.commit("capsule with artifact")
    ref = sealed["artifact_refs"][0]
    return ref, repo.path / ref


def test_capsule_with_externalized_evidence_verifies(git_repo: GitRepo) -> None:
    ref, _ = _with_artifact(git_repo)
    assert ref.startswith("knowzcode/artifacts/sha256-")
    assert verify(discover(git_repo.path)).ok


def test_swapped_artifact_fails_its_digest(git_repo: GitRepo) -> None:
    ref, path = _with_artifact(git_repo)
    data = json.loads(path.read_bytes())
    data["evidence"][0]["summary"] = "a different story"
    path.write_text(json.dumps(data))
    assert rules(verify(discover(git_repo.path))) == [(CAPSULE_REL, "artifact-digest-mismatch")]


def test_missing_artifact_fails(git_repo: GitRepo) -> None:
    ref, path = _with_artifact(git_repo)
    path.unlink()
    assert rules(verify(discover(git_repo.path))) == [(CAPSULE_REL, "artifact-missing")]


def test_artifact_symlink_leading_outside_does_not_resolve(git_repo: GitRepo, tmp_path: Path) -> None:
    ref, path = _with_artifact(git_repo)
    outside = tmp_path / "copy.json"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(outside)
    assert rules(verify(discover(git_repo.path))) == [(CAPSULE_REL, "artifact-missing")]


def test_the_artifact_root_itself_resolves_as_a_directory(git_repo: GitRepo) -> None:
    git_repo.commit("initial", {"src/app.py": "a = 1\n", "knowzcode/artifacts/run/log.txt": "ok\n"})
    capsule = valid_capsule()
    capsule["workgroup_id"], capsule["task_id"] = "kc-feat-auth-20260730-080000", "task-auth-1"
    capsule["artifact_refs"] = ["knowzcode/artifacts"]
    seal(git_repo, capsule)
    git_repo.commit("capsule naming the artifact root")
    assert verify(discover(git_repo.path)).ok
    # a directory is only the root's form: a reference beneath it must still be a file
    capsule["artifact_refs"] = ["knowzcode/artifacts/run"]
    seal(git_repo, capsule)
    git_repo.commit("capsule naming a directory beneath the root")
    assert rules(verify(discover(git_repo.path))) == [(CAPSULE_REL, "artifact-missing")]


def test_private_content_in_a_hand_sealed_capsule_is_found(sealed_repo: GitRepo) -> None:
    path = sealed_repo.path / CAPSULE_REL
    capsule = json.loads(path.read_text())
    capsule["risks"] = ["Claude session id: claude-session-1a2b3c4d5e6f"]
    capsule["capsule_hash"] = capsule_digest(capsule)  # sealed by hand, bypassing the pipeline
    path.write_text(json.dumps(capsule))
    report = verify(discover(sealed_repo.path))
    assert rules(report) == [(CAPSULE_REL, "private-content")]
    assert "claude-session" not in json.dumps(report.as_json())


def test_capsule_at_the_wrong_path_is_found(sealed_repo: GitRepo) -> None:
    src = sealed_repo.path / CAPSULE_REL
    dst = src.with_name("other-task.json")
    src.rename(dst)
    rel = dst.relative_to(sealed_repo.path).as_posix()
    assert rules(verify(discover(sealed_repo.path))) == [(rel, "location")]


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        ("{not json", "unreadable"),
        ('{"schema": "knowzcode.context-capsule/v1"}', "schema"),
        ("[]", "schema"),
    ],
)
def test_broken_capsule_files_are_findings(sealed_repo: GitRepo, content: str, rule: str) -> None:
    (sealed_repo.path / CAPSULE_REL).write_text(content)
    assert rules(verify(discover(sealed_repo.path))) == [(CAPSULE_REL, rule)]


def test_symlinked_capsule_pointing_outside_is_a_finding(sealed_repo: GitRepo, tmp_path: Path) -> None:
    path = sealed_repo.path / CAPSULE_REL
    outside = tmp_path / "o.json"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(outside)
    report = verify(discover(sealed_repo.path))
    assert rules(report) == [(CAPSULE_REL, "unreadable")]
    assert "PATH_OUTSIDE_REPOSITORY" in report.findings[0].message


def test_capsule_in_a_symlinked_directory_outside_is_a_finding(sealed_repo: GitRepo, tmp_path: Path) -> None:
    capsules = (sealed_repo.path / CAPSULE_REL).parent
    outside = tmp_path / "outside-capsules"
    capsules.rename(outside)
    capsules.symlink_to(outside, target_is_directory=True)
    report = verify(discover(sealed_repo.path))
    assert rules(report) == [(CAPSULE_REL, "unreadable")]


def test_huge_capsule_file_is_a_finding(sealed_repo: GitRepo) -> None:
    (sealed_repo.path / CAPSULE_REL).write_bytes(b"{" + b" " * (10 * 1024 * 1024) + b"}")
    report = verify(discover(sealed_repo.path))
    assert rules(report) == [(CAPSULE_REL, "unreadable")] and "FILE_TOO_LARGE" in report.findings[0].message


# ---------------------------------------------------------------- promotions

RUN = "measurement-" + "ab" * 8


def _promotion(repo: GitRepo, name: str, run_id: str, **extra: Any) -> str:
    rel = f".workgroup/promotions/{name}.json"
    repo.write(rel, json.dumps({"envelope": {"measurement_run_id": run_id}, "promote": False, **extra}))
    return rel


def test_promotion_records_need_consistent_unique_run_ids(sealed_repo: GitRepo) -> None:
    good = _promotion(sealed_repo, RUN, RUN)
    assert verify(discover(sealed_repo.path)).ok
    other = "measurement-" + "cd" * 8
    renamed = _promotion(sealed_repo, other, RUN)  # file name says one run, content another
    report = verify(discover(sealed_repo.path))
    assert set(rules(report)) == {
        (renamed, "location"),
        (good, "run-id-consumed-twice"),
        (renamed, "run-id-consumed-twice"),
    }


def test_promotion_checkpoint_is_checked_too(sealed_repo: GitRepo) -> None:
    rel = _promotion(sealed_repo, RUN, RUN, checkpoint_sha="2" * 40)
    assert rules(verify(discover(sealed_repo.path))) == [(rel, "checkpoint-missing")]
    bad = _promotion(sealed_repo, "measurement-" + "ef" * 8, "not-a-run")
    assert (bad, "run-id") in rules(verify(discover(sealed_repo.path)))


def test_promotion_top_level_run_id_must_match_the_signed_envelope(sealed_repo: GitRepo) -> None:
    other = "measurement-" + "99" * 8
    rel = _promotion(sealed_repo, RUN, other, measurement_run_id=RUN)
    assert rules(verify(discover(sealed_repo.path))) == [(rel, "run-id")]


# ---------------------------------------------------------------- environment


def test_shallow_clone_is_reported_as_shallow_with_the_fix(sealed_repo: GitRepo, tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{sealed_repo.path}", str(clone))
    assert discover(clone).is_shallow
    proc = run_workgroup("verify", "--json", cwd=clone)
    assert proc.returncode == 3
    # --json: the refusal is a JSON error object on stdout as well as the exit code
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "SHALLOW_CLONE" and "fetch-depth: 0" in error["message"]
    err = proc.stderr.decode()
    assert "error[SHALLOW_CLONE]" in err and "fetch-depth: 0" in err
    assert "not an ancestor" not in err and "ancestor of it" not in err
    git(clone, "fetch", "-q", "--unshallow")
    assert run_workgroup("verify", cwd=clone).returncode == 0


def test_shallow_clone_with_every_checkpoint_present_passes(git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.commit("initial", {"src/app.py": "a = 1\n"})
    git_repo.commit("work", {"src/app.py": "a = 2\n"})
    seal(git_repo)
    git_repo.commit("capsule")  # checkpoint = "work", which a depth-2 clone still holds
    clone = tmp_path / "shallow2"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{git_repo.path}", str(clone))
    assert verify(discover(clone)).ok


def test_bad_rev_and_unborn_head(sealed_repo: GitRepo, tmp_path: Path) -> None:
    proc = run_workgroup("verify", "--rev", "no-such-rev", cwd=sealed_repo.path)
    assert proc.returncode == 2 and b"UNKNOWN_REVISION" in proc.stderr and b"Traceback" not in proc.stderr
    fresh = tmp_path / "fresh"
    Repo(__import__("pygit2").init_repository(str(fresh)))
    assert run_workgroup("verify", cwd=fresh).returncode == 0  # nothing recorded, nothing to prove
    (fresh / Path(CAPSULE_REL).parent).mkdir(parents=True)
    (fresh / CAPSULE_REL).write_bytes((sealed_repo.path / CAPSULE_REL).read_bytes())
    proc = run_workgroup("verify", cwd=fresh)
    assert proc.returncode == 2 and b"UNBORN_HEAD" in proc.stderr


def test_empty_repository_state_passes(git_repo: GitRepo) -> None:
    git_repo.commit("initial", {"a.txt": "a\n"})
    report = verify(discover(git_repo.path))
    assert report.ok and report.counts == {"capsules": 0, "lineages": 0, "promotions": 0}


def test_hook_runs_verify_and_ignores_file_names(sealed_repo: GitRepo) -> None:
    def hook(*files: str) -> int:
        return cli(*files, script="workgroup-verify-hook").exit_code

    assert hook() == 0
    assert hook("some/file.py") == 0
    squash_onto(discover(sealed_repo.path), "HEAD~2", "rewrite")
    assert hook() == 1


def test_hook_console_script_and_manifest_entry() -> None:
    import yaml

    root = Path(__file__).resolve().parents[2]
    hooks = {h["id"]: h for h in yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())}
    entry = hooks["workgroup-verify"]
    assert entry["entry"] == "workgroup-verify-hook" and entry["pass_filenames"] is False
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit.hooks.verify", "--help"], capture_output=True, check=False
    )
    assert proc.returncode == 0


def test_ci_template_runs_verify_with_full_history() -> None:
    from toolkit.infra.resources import data_dir

    workflow = (data_dir("templates") / "ci" / "workgroup-verify.yml").read_text()
    import yaml

    parsed = yaml.safe_load(workflow)
    steps = [s for job in parsed["jobs"].values() for s in job["steps"]]
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0
    assert any("workgroup verify" in str(s.get("run", "")) for s in steps)


_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)


@settings(max_examples=150, deadline=None)
@example(objective="lone \ud800 surrogate", risks=["\u2028", '\x7f\x1f"\\'], artifact="\U0001f600")
@given(objective=_text, risks=st.lists(_text, max_size=3), artifact=st.one_of(st.none(), _text))
def test_fast_sealed_digest_equals_canonical(objective: str, risks: list[str], artifact: Any) -> None:
    from toolkit.records.verify import sealed_digest

    capsule = valid_capsule()
    capsule.update(objective=objective, risks=risks)
    capsule["failures"] = [{"command": "c", "summary": "s", "artifact": artifact}]
    assert sealed_digest(capsule) == capsule_digest(capsule)


@pytest.mark.slow
def test_workgroup_verify_hook_through_real_pre_commit(sealed_repo: GitRepo, tmp_path: Path) -> None:
    """The manifest's hook installed by pre-commit itself (pip install of a snapshot of this
    repository): passes on a bound capsule, fails naming the file after a history rewrite."""
    import shutil

    import pygit2
    import yaml

    root = Path(__file__).resolve().parents[2]
    hook_repo = tmp_path / "hook-repo"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    for rel in filter(None, tracked.decode("utf-8").split("\0")):
        if (root / rel).is_file():
            (hook_repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, hook_repo / rel)
    snapshot = GitRepo(hook_repo)
    rev = snapshot.commit("snapshot")
    config = {"repos": [{"repo": str(hook_repo), "rev": rev, "hooks": [{"id": "workgroup-verify"}]}]}
    sealed_repo.write(".pre-commit-config.yaml", yaml.safe_dump(config))
    index = sealed_repo.raw.index
    index.add(".pre-commit-config.yaml")
    index.write()
    env = {
        **__import__("os").environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pc-home"),
        "PRE_COMMIT_COLOR": "never",
    }
    pre_commit = str(Path(sys.executable).parent / "pre-commit")

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [pre_commit, "run", "workgroup-verify"],
            cwd=sealed_repo.path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )

    passed = run()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    squash_onto(discover(sealed_repo.path), "HEAD~2", "rewrite")
    assert isinstance(pygit2.Repository(str(sealed_repo.path)).head.target, pygit2.Oid)
    failed = run()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert CAPSULE_REL in failed.stdout and "checkpoint-not-ancestor" in failed.stdout
