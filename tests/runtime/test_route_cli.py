"""`workgroup route` and `workgroup owners`: in-process through the shared helper (the console script's entry),
plus end-to-end subprocesses for the paths users and skills take."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from support.harness import CliResult, run_workgroup
from support.harness import cli as workgroup


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., CliResult]:
    """Run ``workgroup ARGS`` in-process in the current directory: (exit, stdout, stderr)."""

    def call(*args: str, request: object = None) -> CliResult:
        argv = list(args)
        if request is not None:  # the request goes in as a file named after the verb
            req = tmp_path / "request.json"
            req.write_text(json.dumps(request), encoding="utf-8")
            argv.insert(1, str(req))
        return workgroup(*argv)

    return call


def _repo(git_repo) -> Path:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"src/api.py": "a", "src/ui.tsx": "b"})
    return git_repo.path  # type: ignore[no-any-return]


def _route(cwd: Path, request: object, *extra: str) -> tuple[int, str, str]:
    proc = run_workgroup("route", "-", "--json", *extra, stdin=json.dumps(request), cwd=cwd)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_route_matches_the_runtime_and_uses_the_registry(git_repo, cli) -> None:  # type: ignore[no-untyped-def]
    root = _repo(git_repo)
    acquired = run_workgroup("owners", "acquire", "holder", "--path", "src/api.py", "--json", cwd=root)
    assert acquired.returncode == 0, acquired.stderr
    lease = json.loads(acquired.stdout)
    assert lease["acquired"] is True and lease["owned_files"] == ["src/api.py"]
    code, out, _ = _route(root, {"input": {"is_writer": True, "owned_files": ["./src/api.py"]}})
    assert code == 0
    assert json.loads(out) == {"mode": "local", "reason_codes": ["WRITER_OWNERSHIP_CONFLICT"]}
    _, listed, _ = cli("owners", "list", "--json")
    assert [w["lineage_id"] for w in json.loads(listed)["writers"]] == ["holder"]
    refused = run_workgroup("owners", "acquire", "other", "--path", "SRC", "--json", cwd=root)
    assert refused.returncode == 1
    assert json.loads(refused.stdout) == {
        "acquired": False,
        "code": "WRITER_OWNERSHIP_CONFLICT",
        "holder": "holder",
        "path": "src/api.py",
    }
    assert "holder" in refused.stderr.decode() and "Traceback" not in refused.stderr.decode()
    _, released, _ = cli("owners", "release", "holder", "--json")
    assert json.loads(released) == {"lineage_id": "holder", "released": True}
    code, out, _ = cli(
        "route", "--json", request={"input": {"is_writer": True, "owned_files": ["./src/api.py"]}}
    )
    assert json.loads(out)["mode"] == "fresh-capsule"


def test_config_fills_absent_facts_and_request_wins(git_repo, cli) -> None:  # type: ignore[no-untyped-def]
    _repo(git_repo)
    git_repo.write(".workgroup/config.yml", "context_efficiency:\n  max_nesting_depth: 1\n")
    _, out, _ = cli("route", "--json", request={"input": {"nesting_depth": 1}})
    assert json.loads(out) == {
        "mode": "local",
        "reason_codes": ["NESTING_LIMIT"],
    }  # config filled the maximum
    _, out, _ = cli("route", "--json", request={"input": {"nesting_depth": 1, "max_nesting_depth": 3}})
    assert json.loads(out)["mode"] == "fresh-capsule"  # the request's value wins


def test_disabled_answers_local_fallback_and_writes_nothing(git_repo, cli) -> None:  # type: ignore[no-untyped-def]
    root = _repo(git_repo)
    git_repo.write(".workgroup/config.yml", "context_efficiency:\n  enabled: false\n")
    code, out, _ = cli("route", "--json", "--record", request={"input": {"independent_reviewer": True}})
    assert code == 0
    assert json.loads(out) == {"mode": "local", "reason_codes": ["CAPABILITY_FALLBACK"]}
    assert not (root / ".git" / "workgroup" / "telemetry.jsonl").exists()


def test_record_appends_routing_evidence(git_repo, cli) -> None:  # type: ignore[no-untyped-def]
    root = _repo(git_repo)
    facts = {
        "task_id": "t-1",
        "phase": "2A",
        "role": "builder",
        "owned_files": ["src/api.py"],
        "coupling": "moderate",
        "sensitivity": "normal",
        "capsule_bytes": 900,
        "lineage": {"lineage_id": "lin-1", "state": "HOT"},
    }
    code, out, err = cli("route", "--json", "--record", request={"input": facts})
    assert code == 0, err
    rows = (root / ".git" / "workgroup" / "telemetry.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 1
    evidence = json.loads(rows[0])
    assert evidence["schema"] == "workgroup.routing-evidence/v1"
    assert (evidence["task_id"], evidence["phase"], evidence["role"]) == ("t-1", "2A", "builder")
    assert evidence["owned_files"] == ["src/api.py"]
    assert evidence["sizes"]["capsule_bytes"] == 900
    assert evidence["lineage_candidate"] == "lin-1"
    assert evidence["invalidation_result"]["state"] == "HOT"
    assert (evidence["mode"], evidence["reason_codes"]) == (
        json.loads(out)["mode"],
        json.loads(out)["reason_codes"],
    )


def test_record_refuses_private_content_and_writes_nothing(git_repo, cli) -> None:  # type: ignore[no-untyped-def]
    root = _repo(git_repo)
    private = {"input": {"task_id": "/home/alice/secret-notes"}}  # workgroup: allow home-path
    code, out, err = cli("route", "--json", "--record", request=private)
    assert code == 1
    assert "PRIVATE_CONTENT" in err and "alice" not in err
    assert not (root / ".git" / "workgroup" / "telemetry.jsonl").exists()


def test_bad_requests_are_coded_usage_errors(git_repo, cli) -> None:  # type: ignore[no-untyped-def]
    root = _repo(git_repo)
    for request, code_name in (
        ({"input": {"owned_files": ["/etc/passwd"]}}, "INVALID_OWNERSHIP_PATH"),
        ({"input": {"nesting_depth": "2"}}, "INVALID_REQUEST"),
        ({"input": []}, "INVALID_REQUEST"),
    ):
        code, out, err = cli("route", "--json", request=request)
        assert code == 2 and json.loads(out)["error"]["code"] == code_name  # --json: the error object
        assert f"error[{code_name}]" in err and "passwd" not in err and "Traceback" not in err
    (root / "bad.json").write_text("{nope", encoding="utf-8")
    code, _, err = cli("route", str(root / "bad.json"))
    assert code == 2 and "INVALID_JSON" in err


def test_owners_cli_refuses_bad_input_with_exit_2(git_repo, cli) -> None:  # type: ignore[no-untyped-def]
    root = _repo(git_repo)
    code, _, err = cli("owners", "acquire", "L1", "--path", "../outside")
    assert code == 2 and "INVALID_OWNERSHIP_PATH" in err
    code, _, err = cli("owners", "acquire", "L1", "--glob", "!src/*.py")
    assert code == 2 and "INVALID_OWNERSHIP_GLOB" in err
    code, _, err = cli("owners", "acquire", "L1", "--minutes", "0", "--path", "src")
    assert code == 2 and "INVALID_LEASE_MINUTES" in err
    code, out, _ = cli("owners", "acquire", "L1", "--glob", "src/*.py", "--json")
    assert code == 0 and json.loads(out)["resolved_owned_files"] == ["src/api.py"]
    code, out, _ = cli("owners", "list")
    assert code == 0 and out.startswith("L1\tuntil ")
    code, out, _ = cli("owners", "release", "nobody")
    assert code == 0 and "held no lease" in out
    assert not list((root / ".git" / "workgroup").glob("*.tmp"))


def test_owners_outside_a_repository_is_an_environment_error(
    tmp_path: Path,
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("owners", "list")
    assert code == 3 and "NOT_A_GIT_REPOSITORY" in err


def test_cli_decision_equals_the_runtime_decision(git_repo, cli) -> None:  # type: ignore[no-untyped-def]
    from test_router import ROWS

    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.router import route_task

    _repo(git_repo)
    for facts, mode, reasons in ROWS[::9]:  # a spread over every rule
        code, out, err = cli("route", "--json", request={"input": facts})
        assert code == 0, err
        assert (
            json.loads(out)
            == route_task(facts, workspace_root=str(git_repo.path), ctx=RuntimeContext())
            == {
                "mode": mode,
                "reason_codes": reasons,
            }
        )
