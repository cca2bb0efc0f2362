"""`workgroup result store` (VERIFY CEO-09, CEO-18): write what the decision allows, nothing else."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.harness import GitRepo, cli

from toolkit.core.errors import ToolkitError
from toolkit.records.results import ResultDecision, Writes, decision_from_policy


def snapshot(root: Path) -> dict[str, Any]:
    """Every file and directory under root, .git and the local state included, with bytes and mode."""
    tree: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            path = Path(dirpath) / name
            tree[str(path.relative_to(root)) + "/"] = path.stat().st_mode
        for name in filenames:
            path = Path(dirpath) / name
            tree[str(path.relative_to(root))] = (path.stat().st_mode, path.read_bytes())
    return tree


def files(
    tmp: Path, policy: Any, summary: str = "2 tests failed; first error: E1\n", raw: bytes | None = None
) -> tuple[Path, Path, Path | None]:
    pol = tmp / "policy.json"
    pol.write_text(json.dumps(policy), encoding="utf-8")
    summ = tmp / "summary.txt"
    summ.write_text(summary, encoding="utf-8")
    raw_path = None
    if raw is not None:
        raw_path = tmp / "pytest-output.LOG"
        raw_path.write_bytes(raw)
    return pol, summ, raw_path


def store(
    policy: Path, summary: Path, raw: Path | None, *extra: str, stdin: bytes = b""
) -> tuple[int, Any, str]:
    args = [
        "result",
        "store",
        "--policy",
        str(policy),
        "--summary",
        str(summary),
        "--workgroup",
        "wg-1",
        "--task",
        "task-7",
        "--json",
        *extra,
    ]
    if raw is not None:
        args += ["--raw", str(raw)]
    code, out, err = cli(*args, stdin=stdin)
    return code, (json.loads(out) if out.strip() else None), err


WRITES = ("handoff", "artifact", "vault", "settings", "workgroup")
RAW = b"FAILED tests/test_x.py::test_y - AssertionError\n" * 5000


@pytest.mark.parametrize(
    "policy",
    [
        {
            "input": {
                "write_prohibited": True,
                "material": True,
                "large_raw_output": True,
                "authorize_vault_write": True,
                "authorize_workgroup_write": True,
            }
        },
        {
            "mode": "ephemeral",
            "write_prohibited": True,
            "writes": {
                "handoff": False,
                "artifact": False,
                "vault": False,
                "settings": False,
                "workgroup": False,
            },
        },
    ],
)
def test_write_prohibited_leaves_tree_byte_identical(git_repo: GitRepo, tmp_path: Path, policy: Any) -> None:
    git_repo.commit("init", {"src/app.py": "print('hi')\n"})
    # local state already exists (so "nothing written" covers the state dir, locks included)
    from toolkit.infra.clock import now_utc
    from toolkit.infra.git import discover
    from toolkit.records.probes import record

    record(discover(str(git_repo.path)).layout, "knowz", healthy=True, phase="1A", now=now_utc())
    outside = tmp_path / "inputs"
    outside.mkdir()
    pol, summ, raw = files(outside, policy, raw=RAW)
    before = snapshot(git_repo.path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolkit",
            "result",
            "store",
            "--policy",
            str(pol),
            "--summary",
            str(summ),
            "--raw",
            str(raw),
            "--workgroup",
            "wg-1",
            "--task",
            "task-7",
            "--json",
        ],
        cwd=git_repo.path,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert snapshot(git_repo.path) == before
    out = json.loads(proc.stdout)
    assert out["write_prohibited"] is True and out["written"] == [] and out["raw_persisted"] is False
    assert out["summary"] == "2 tests failed; first error: E1\n"  # the bounded result goes back to the caller


def test_large_raw_output_is_an_artifact_with_bounded_summary(git_repo: GitRepo, tmp_path: Path) -> None:
    pol, summ, raw = files(tmp_path, {"input": {"large_raw_output": True, "material": True}}, raw=RAW)
    code, out, err = store(pol, summ, raw)
    assert code == 0
    digest = hashlib.sha256(RAW).hexdigest()
    artifact = f"knowzcode/artifacts/sha256-{digest}.log"
    assert out["artifact_path"] == artifact and (git_repo.path / artifact).read_bytes() == RAW
    summary_file = git_repo.path / ".workgroup/workgroups/wg-1/results/task-7.md"
    assert out["summary_path"] == ".workgroup/workgroups/wg-1/results/task-7.md"
    text = summary_file.read_text("utf-8")
    assert text.startswith("2 tests failed") and artifact in text and len(text.encode()) < 1000
    assert out["written"] == [artifact, out["summary_path"]] and "wrote" in err
    # storing the same raw output again is a no-op on the artifact (content-addressed)
    code, again, _ = store(pol, summ, raw)
    assert again["artifact_path"] == artifact
    assert len(list((git_repo.path / "knowzcode/artifacts").iterdir())) == 1


def test_artifact_only_returns_summary(git_repo: GitRepo, tmp_path: Path) -> None:
    pol, summ, raw = files(tmp_path, {"input": {"large_raw_output": True}}, raw=b"x" * 10)
    code, out, _ = store(pol, summ, raw)
    assert code == 0 and out["summary_path"] is None and out["summary"].startswith("2 tests")
    assert not (git_repo.path / ".workgroup").exists()
    assert (git_repo.path / out["artifact_path"]).read_bytes() == b"x" * 10


def test_durable_result_writes_only_the_handoff(git_repo: GitRepo, tmp_path: Path) -> None:
    pol, summ, raw = files(tmp_path, {"input": {"writer": True, "requested_mode": "ephemeral"}}, raw=b"log")
    code, out, err = store(pol, summ, raw)
    assert (
        code == 0
        and out["mode"] == "durable"
        and out["artifact_path"] is None
        and out["raw_persisted"] is False
    )
    assert not (git_repo.path / "knowzcode").exists()
    assert "raw output not persisted" in err
    assert (git_repo.path / out["summary_path"]).is_file()


def test_runtime_frame_is_accepted(git_repo: GitRepo, tmp_path: Path) -> None:
    frame = {
        "ok": True,
        "operation": "result-policy",
        "result": {
            "mode": "durable",
            "write_prohibited": False,
            "writes": {
                "handoff": True,
                "artifact": False,
                "vault": False,
                "settings": False,
                "workgroup": False,
            },
        },
    }
    pol, summ, _ = files(tmp_path, frame)
    assert store(pol, summ, None)[0] == 0


def test_always_threshold_from_config(git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.write(".workgroup/config.yml", "context_efficiency:\n  disk_handoff_threshold: always\n")
    pol, summ, _ = files(tmp_path, {"input": {}})
    code, out, _ = store(pol, summ, None)
    assert code == 0 and out["summary_path"] is not None
    # write-prohibited still wins over the config
    pol, summ, _ = files(tmp_path, {"input": {"write_prohibited": True}})
    assert store(pol, summ, None)[1]["written"] == []


@pytest.mark.parametrize(
    ("policy", "summary", "raw", "exit_code", "code"),
    [
        (
            {"input": {"material": True, "authorize_handoff": False}},
            "s",
            None,
            1,
            "RESULT_HANDOFF_NOT_AUTHORIZED",
        ),
        (
            {"input": {"large_raw_output": True, "authorize_artifact": False}},
            "s",
            b"r",
            1,
            "RESULT_ARTIFACT_NOT_AUTHORIZED",
        ),
        ({"input": {"large_raw_output": True}}, "s", None, 2, "RAW_REQUIRED"),
        ({"input": {"material": True}}, "x" * 9000, None, 2, "SUMMARY_TOO_LARGE"),
        ({"input": {"requested_mode": "disk"}}, "s", None, 2, "POLICY_INVALID"),
        (
            {
                "mode": "ephemeral",
                "write_prohibited": True,
                "writes": {
                    "handoff": True,
                    "artifact": False,
                    "vault": False,
                    "settings": False,
                    "workgroup": False,
                },
            },
            "s",
            None,
            2,
            "POLICY_INVALID",
        ),  # an inconsistent hand-edited decision
        (
            {"mode": "durable", "write_prohibited": False, "writes": {"handoff": True}},
            "s",
            None,
            2,
            "POLICY_INVALID",
        ),
        ([1, 2], "s", None, 2, "POLICY_INVALID"),
        # decisions the policy can never produce
        (
            {"mode": "artifact", "write_prohibited": False, "writes": dict.fromkeys(WRITES, False)},
            "s",
            None,
            2,
            "POLICY_INVALID",
        ),
        (
            {"mode": "durable", "write_prohibited": False, "writes": dict.fromkeys(WRITES, False)},
            "s",
            None,
            2,
            "POLICY_INVALID",
        ),
    ],
)
def test_refusals_write_nothing(
    git_repo: GitRepo,
    tmp_path: Path,
    policy: Any,
    summary: str,
    raw: bytes | None,
    exit_code: int,
    code: str,
) -> None:
    pol, summ, raw_path = files(tmp_path, policy, summary, raw)
    before = snapshot(git_repo.path)
    got, out, err = store(pol, summ, raw_path)
    # --json: the refusal is also the JSON error object on stdout (docs/output.md)
    assert got == exit_code and out["error"]["code"] == code and list(out) == ["error"]
    assert err.startswith(f"error[{code}]")
    assert snapshot(git_repo.path) == before


@pytest.mark.parametrize(
    "args",
    [
        ("--workgroup", "../up"),
        ("--task", "a/b"),
    ],
)
def test_unsafe_ids_refused(git_repo: GitRepo, tmp_path: Path, args: tuple[str, str]) -> None:
    pol, summ, _ = files(tmp_path, {"input": {"material": True}})
    base = [
        "result",
        "store",
        "--policy",
        str(pol),
        "--summary",
        str(summ),
        "--workgroup",
        "wg",
        "--task",
        "t",
    ]
    index = base.index(args[0])
    base[index + 1] = args[1]
    assert cli(*base).exit_code == 2
    assert not (git_repo.path / ".workgroup").exists()


def test_missing_raw_file_writes_nothing(git_repo: GitRepo, tmp_path: Path) -> None:
    pol, summ, _ = files(tmp_path, {"input": {"large_raw_output": True, "material": True}})
    code, _, err = store(pol, summ, tmp_path / "absent.log")
    assert code == 2 and "FILE_NOT_FOUND" in err
    assert not (git_repo.path / "knowzcode").exists() and not (git_repo.path / ".workgroup").exists()


_VALUES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=6)
    | st.sampled_from(["ephemeral", "durable", "artifact"])
)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.fixed_dictionaries(
            {
                "input": st.dictionaries(
                    st.sampled_from(
                        [
                            "write_prohibited",
                            "material",
                            "large_raw_output",
                            "requested_mode",
                            "authorize_handoff",
                            "authorize_artifact",
                        ]
                    ),
                    _VALUES,
                )
            }
        ),
        st.fixed_dictionaries(
            {
                "mode": _VALUES,
                "write_prohibited": _VALUES,
                "writes": st.dictionaries(
                    st.sampled_from(["handoff", "artifact", "vault", "settings", "workgroup"]), _VALUES
                ),
            }
        ),
        st.recursive(
            _VALUES,
            lambda inner: (
                st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
            ),
            max_leaves=6,
        ),
    )
)
def test_fuzz_policy_parsing(policy: Any) -> None:
    try:
        decision = decision_from_policy(policy)
    except ToolkitError as exc:
        assert exc.exit_code in (1, 2)
        return
    assert decision.mode in ("ephemeral", "durable", "artifact")
    if decision.write_prohibited:
        assert not decision.writes.any()
    if decision.writes.artifact:
        assert decision.mode == "artifact"


def test_every_policy_form_parses_into_one_typed_decision() -> None:
    """Facts, a runtime frame and a bare decision all become the same ResultDecision record."""
    expected = ResultDecision(
        "artifact", False, Writes(handoff=False, artifact=True, vault=False, settings=False, workgroup=False)
    )
    bare = {
        "mode": "artifact",
        "write_prohibited": False,
        "writes": {**dict.fromkeys(WRITES, False), "artifact": True},
    }
    framed = {"ok": True, "operation": "result-policy", "result": bare}
    assert decision_from_policy({"input": {"large_raw_output": True}}) == expected
    assert decision_from_policy(framed) == expected
    assert decision_from_policy(bare) == expected


def test_summary_from_stdin(git_repo: GitRepo, tmp_path: Path) -> None:
    pol, _, _ = files(tmp_path, {"input": {"material": True}})
    code, out, _ = store(pol, Path("-"), None, stdin="résumé: 1 failure\n".encode())
    assert code == 0
    assert (git_repo.path / out["summary_path"]).read_text("utf-8") == "résumé: 1 failure\n"


@pytest.mark.parametrize("data", [b"\xff\xfe bad", b"  \n", b"a\x00b"])
def test_summary_must_be_utf8_text(git_repo: GitRepo, tmp_path: Path, data: bytes) -> None:
    pol, summ, _ = files(tmp_path, {"input": {"material": True}})
    summ.write_bytes(data)
    code, _, err = store(pol, summ, None)
    assert code == 2 and err.startswith("error[SUMMARY_INVALID]")
    assert not (git_repo.path / ".workgroup").exists()


def test_private_summary_is_refused_before_any_write(git_repo: GitRepo, tmp_path: Path) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O50Zb5Hm"  # checksum-valid (synthetic)
    pol, summ, raw = files(
        tmp_path,
        {"input": {"material": True, "large_raw_output": True}},
        summary=f"deploy failed with token {secret}\n",
        raw=b"log",
    )
    code, out, err = store(pol, summ, raw)
    assert code == 1 and out == {"error": {"code": "PRIVATE_CONTENT", "message": out["error"]["message"]}}
    assert err.startswith("error[PRIVATE_CONTENT]")
    assert secret not in err
    assert not (git_repo.path / ".workgroup").exists() and not (git_repo.path / "knowzcode").exists()
    # an ephemeral result is returned to the caller only, so it is not blocked
    pol, summ, _ = files(tmp_path, {"input": {"write_prohibited": True}}, summary="token ok\n")
    assert store(pol, summ, None)[0] == 0


def test_summary_bound_is_exact() -> None:
    from toolkit.records.results import MAX_SUMMARY_BYTES, check_summary

    assert check_summary(b"x" * MAX_SUMMARY_BYTES) == "x" * MAX_SUMMARY_BYTES
    with pytest.raises(ToolkitError) as info:
        check_summary(b"x" * (MAX_SUMMARY_BYTES + 1))
    assert info.value.code == "SUMMARY_TOO_LARGE"
    assert check_summary("é".encode() * 4, limit=8) == "éééé"  # the bound is in bytes, not characters
    with pytest.raises(ToolkitError):
        check_summary("é".encode() * 5, limit=8)


def test_store_answers_the_declared_record(git_repo: GitRepo, tmp_path: Path) -> None:
    """``result store --json`` prints a StoreAnswer: its keys in the declared order, ``summary`` (the
    one optional key) last and only when no handoff was written."""
    from toolkit.records.results import StoreAnswer

    declared = list(StoreAnswer.__annotations__)
    pol, summ, raw = files(tmp_path, {"input": {"large_raw_output": True, "material": True}}, raw=RAW)
    code, out, _ = store(pol, summ, raw)
    assert code == 0 and list(out) == [k for k in declared if k != "summary"]
    pol, summ, raw = files(tmp_path, {"input": {"large_raw_output": True}}, raw=b"x" * 10)
    code, out, _ = store(pol, summ, raw)
    assert code == 0 and list(out) == declared
