"""`result store`, `rollout advance`, the config reader and `capsule seal` against committed symlinks:
every write under the work tree, and every read of `.workgroup/`, goes through ``toolkit.infra.confined``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.harness import GitRepo, cli

CODE = "PATH_OUTSIDE_REPOSITORY"
ARTIFACT = {
    "mode": "artifact",
    "write_prohibited": False,
    "writes": {"handoff": True, "artifact": True, "vault": False, "settings": False, "workgroup": False},
}
SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUtc2VjcmV0\n"


link = GitRepo.link  # link(repo, rel, target): a committed symlink (conftest)


@pytest.fixture
def outside(git_repo: GitRepo) -> Path:
    folder = git_repo.path.parent / "outside"
    folder.mkdir()
    (folder / "id_key").write_text(SECRET)
    return folder


def tree(folder: Path) -> dict[str, Any]:
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


def work_tree(root: Path) -> dict[str, Any]:
    return {k: v for k, v in tree(root).items() if not k.startswith(".git/") and k != ".git"}


# --- workgroup result store ------------------------------------------------------------------


def store(tmp: Path) -> tuple[int, str, str]:
    (tmp / "policy.json").write_text(json.dumps(ARTIFACT))
    (tmp / "summary.md").write_text("2 tests failed\n")
    (tmp / "raw.log").write_text("FAILED test_x\n" * 100)
    return cli(
        "result", "store", "--policy", str(tmp / "policy.json"), "--summary", str(tmp / "summary.md"),
        "--workgroup", "wg1", "--task", "t1", "--raw", str(tmp / "raw.log"),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("rel", "target"),
    [
        ("knowzcode/artifacts", "../../outside"),  # the artifact folder
        ("knowzcode", "../outside"),  # a folder above it
        (".workgroup/workgroups/wg1", "../../../outside"),  # the workgroup folder
        (".workgroup", "../outside"),
        (".workgroup/workgroups/wg1/results/t1.md", "../../../../../outside/id_key"),  # the summary itself
        ("knowzcode/artifacts", "nowhere"),  # dangling
        (".workgroup/workgroups/wg1", "../../nowhere"),
    ],
)
def test_result_store_writes_nothing_through_a_symlink(
    git_repo: GitRepo, outside: Path, tmp_path: Path, rel: str, target: str
) -> None:
    git_repo.commit("init", {"README.md": "x\n"})
    link(git_repo, rel, target)
    before, inside = tree(outside), work_tree(git_repo.path)
    code, _, err = store(tmp_path)
    assert code == 2 and err.startswith(f"error[{CODE}]: "), err
    # every destination is checked before the first write: no artifact without its summary either
    assert tree(outside) == before and work_tree(git_repo.path) == inside


def test_result_store_through_an_inside_symlink_lands_inside(git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.commit("init", {"store/keep": ""})
    link(git_repo, "knowzcode", "store")
    code, _, err = store(tmp_path)
    assert code == 0, err
    assert [p.name.startswith("sha256-") for p in (git_repo.path / "store" / "artifacts").iterdir()] == [True]


# --- workgroup rollout advance and the config reader -----------------------------------------

CONFIG = "context_efficiency:\n  rollout: off\n"


def test_rollout_advance_never_writes_through_a_symlinked_workgroup_folder(
    git_repo: GitRepo, outside: Path
) -> None:
    (outside / "config.yml").write_text(CONFIG)
    link(git_repo, ".workgroup", "../outside")
    before = tree(outside)
    code, _, err = cli("rollout", "advance", "--to", "observe", "--family", "routing")
    assert code == 2 and err.startswith(f"error[{CODE}]: .workgroup/config.yml leads outside"), err
    assert tree(outside) == before  # no config rewritten, no rollout.json created


@pytest.mark.parametrize("target", ["../../outside/rollout.json", "rollout-real.json", "nowhere.json"])
def test_rollout_refuses_a_symlinked_history(git_repo: GitRepo, outside: Path, target: str) -> None:
    history = json.dumps({"schema": "workgroup.rollout-history/v1", "active_family": None, "steps": []})
    (outside / "rollout.json").write_text(history)
    git_repo.commit("init", {".workgroup/config.yml": CONFIG, ".workgroup/rollout-real.json": history})
    link(git_repo, ".workgroup/rollout.json", target)
    config_before = (git_repo.path / ".workgroup/config.yml").read_bytes()
    code, _, err = cli("rollout", "advance", "--to", "observe", "--family", "routing")
    assert code == 2 and f"error[{CODE}]" in err, err
    # the config is not changed either: both paths are checked before the first write
    assert (git_repo.path / ".workgroup/config.yml").read_bytes() == config_before
    assert (outside / "rollout.json").read_text() == history


@pytest.mark.parametrize("target", ["../../outside/id_key", "../outside-config.yml", "nowhere.yml"])
def test_config_read_refuses_a_symlinked_config(git_repo: GitRepo, outside: Path, target: str) -> None:
    (outside / "config.yml").write_text(CONFIG)
    link(git_repo, ".workgroup/config.yml", target)
    from toolkit.core.errors import ToolkitError
    from toolkit.infra.config import load_config

    with pytest.raises(ToolkitError) as caught:
        load_config(git_repo.path)
    assert caught.value.code == CODE and "PRIVATE" not in caught.value.message


def test_config_read_follows_an_inside_workgroup_folder(git_repo: GitRepo) -> None:
    git_repo.commit("init", {"shared/wg/config.yml": "context_efficiency:\n  rollout: shadow\n"})
    link(git_repo, ".workgroup", "shared/wg")
    from toolkit.infra.config import load_config

    assert load_config(git_repo.path)["context_efficiency"]["rollout"] == "shadow"


# --- capsule seal and lineage record: the same layer, the same code --------------------------


def test_capsule_destination_refusal_is_the_one_code(
    git_repo: GitRepo, outside: Path, tmp_path: Path
) -> None:
    from test_capsule_cli import valid_capsule

    git_repo.commit("init", {"src/a.py": "x\n"})
    link(git_repo, ".workgroup", "../outside")
    source = tmp_path / "capsule.json"
    source.write_text(json.dumps(valid_capsule()))
    before = tree(outside)
    code, _, err = cli("capsule", "seal", str(source), "--write")
    assert code == 2 and err.startswith(f"error[{CODE}]: "), err
    assert tree(outside) == before


@pytest.mark.parametrize(
    ("rel", "target"), [(".workgroup", "../outside"), (".workgroup/config.yml", "../otlp.yml")]
)
def test_live_mode_never_reads_a_config_through_a_symlink(
    git_repo: GitRepo, outside: Path, rel: str, target: str
) -> None:
    """The runtime path's own config read (``infra.livespool``): a symlinked config never turns live mode on."""
    from toolkit.infra import livespool as live

    otlp = "context_efficiency:\n  telemetry: otlp\n"
    (outside / "config.yml").write_text(otlp)
    git_repo.commit("init", {".workgroup/otlp.yml": otlp} if rel != ".workgroup" else {"README.md": "x\n"})
    link(git_repo, rel, target)
    live.forget_targets()
    assert live.otel_target(str(git_repo.path)) is None
    os.unlink(git_repo.path / rel)
    git_repo.write(".workgroup/config.yml", otlp)  # the same text as a regular file: live mode on
    live.forget_targets()
    assert live.otel_target(str(git_repo.path)) is not None
    live.forget_targets()


def test_lineage_check_never_reads_a_record_through_a_folder_leading_outside(
    git_repo: GitRepo, outside: Path, tmp_path: Path
) -> None:
    (outside / "workgroups" / "wg1" / "lineages").mkdir(parents=True)
    (outside / "workgroups" / "wg1" / "lineages" / "l1.json").write_text(SECRET)
    link(git_repo, ".workgroup", "../outside")
    current = tmp_path / "current.json"
    current.write_text("{}")
    code, out, err = cli("lineage", "check", "l1", "--current", str(current))
    assert code == 2 and err.startswith(f"error[{CODE}]: the lineage file"), err
    assert "PRIVATE" not in out + err
