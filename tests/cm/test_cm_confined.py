"""CM commands against committed symlinks (``toolkit.infra.confined``): `handoff show`, `boundary`'s
handoff write and `cm-log-event`'s project log, run lock and pointer never reach outside the work tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.harness import CliResult, GitRepo, cli

SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUtc2VjcmV0\n"
CODE = "PATH_OUTSIDE_REPOSITORY"


link = GitRepo.link  # link(repo, rel, target): a committed symlink (conftest)


@pytest.fixture
def outside(git_repo: GitRepo) -> Path:
    folder = git_repo.path.parent / "outside"
    folder.mkdir()
    (folder / "id_key").write_text(SECRET)
    return folder


def tree(folder: Path) -> dict[str, str | None]:
    return {
        str(p.relative_to(folder)): (p.read_text() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


# --- workgroup handoff show ------------------------------------------------------------------


def test_handoff_show_never_prints_a_symlinked_key(git_repo: GitRepo, outside: Path) -> None:
    """The reproduction: drivers run this at every run start, so the key would reach the agent."""
    (git_repo.path / "specs").mkdir()
    link(git_repo, "specs/.reviews/session-handoff.md", "../../../outside/id_key")
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "handoff", "show", "specs", "--mode", "create"],
        cwd=git_repo.path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error[{CODE}]: the handoff file is a symlink")
    assert "PRIVATE KEY" not in proc.stdout + proc.stderr and "b3BlbnNz" not in proc.stdout + proc.stderr
    assert "outside" not in proc.stderr  # the link's target is not echoed either


@pytest.mark.parametrize("mode", [[], ["--mode", "create"], ["--json"]])
def test_handoff_show_refuses_a_reviews_folder_leading_outside(
    git_repo: GitRepo, outside: Path, mode: list[str]
) -> None:
    (outside / "session-handoff.md").write_text("handoff from somewhere else: " + SECRET)
    (git_repo.path / "specs").mkdir()
    link(git_repo, "specs/.reviews", "../../outside")
    code, out, err = cli("handoff", "show", "specs", *mode)
    assert code == 2 and f"error[{CODE}]" in err
    assert "PRIVATE KEY" not in out + err


def test_handoff_show_refuses_a_dangling_handoff(git_repo: GitRepo) -> None:
    (git_repo.path / "specs").mkdir()
    link(git_repo, "specs/.reviews/session-handoff.md", "nowhere.md")
    code, _, err = cli("handoff", "show", "specs", "--mode", "create")
    assert code == 2 and f"error[{CODE}]" in err  # not "no session handoff yet"


def test_handoff_show_follows_a_specs_folder_that_stays_inside(git_repo: GitRepo) -> None:
    git_repo.commit("docs", {"docs/specs/.reviews/session-handoff.md": "# handoff\nnext: T2\n"})
    link(git_repo, "specs", "docs/specs")
    code, out, _ = cli("handoff", "show", "specs", "--mode", "create")
    assert code == 0 and out == "# handoff\nnext: T2\n"


# --- workgroup boundary ----------------------------------------------------------------------

BOUNDARY = ["boundary", "cm-ai", "--at", "run_done", "--specs-dir", "specs", "--next-command", "/cm-ai run"]


def test_boundary_never_writes_through_a_reviews_folder_leading_outside(
    git_repo: GitRepo, outside: Path
) -> None:
    git_repo.commit("specs", {"specs/tasks.md": "- [x] T1\n"})
    link(git_repo, "specs/.reviews", "../../outside")
    before = tree(outside)
    code, out, err = cli(*BOUNDARY, "--lang", "en", "--json")
    # the contract: a failed handoff write is the verdict's last line, exit 0 (DESIGN.md, Exit codes)
    assert code == 0
    assert err.splitlines()[-1] == "Handoff summary: not written (the path is outside the project root)"
    assert json.loads(out)["handoff"] == {"written": False, "path": None, "reason": "outside_root"}
    assert tree(outside) == before


def test_boundary_never_writes_through_a_dangling_reviews_folder(git_repo: GitRepo, outside: Path) -> None:
    (git_repo.path / "specs").mkdir()
    link(git_repo, "specs/.reviews", "../../outside/not-yet")
    code, _, err = cli(*BOUNDARY, "--lang", "en")
    assert code == 0 and err.splitlines()[-1].endswith("(the path is outside the project root)")
    assert not (outside / "not-yet").exists()


def test_boundary_never_replaces_a_symlinked_handoff(git_repo: GitRepo, outside: Path) -> None:
    (git_repo.path / "specs").mkdir()
    handoff = link(git_repo, "specs/.reviews/session-handoff.md", "../../../outside/id_key")
    code, _, err = cli(*BOUNDARY)
    assert code == 0 and err.splitlines()[-1] == "交接摘要：未写成（路径在项目根目录之外）"
    assert handoff.is_symlink() and (outside / "id_key").read_text() == SECRET


def test_boundary_never_copies_a_symlinked_tasks_file_into_the_handoff(
    git_repo: GitRepo, outside: Path
) -> None:
    (outside / "tasks.md").write_text("- [ ] steal this line\n")
    (git_repo.path / "specs").mkdir()
    link(git_repo, "specs/tasks.md", "../../outside/tasks.md")
    code, _, err = cli(*BOUNDARY, "--tasks", "specs/tasks.md", "--lang", "en")
    assert code == 0 and err.splitlines()[-1].endswith("(the path is outside the project root)")
    assert not (git_repo.path / "specs" / ".reviews").exists()


def test_boundary_writes_through_a_specs_folder_that_stays_inside(git_repo: GitRepo) -> None:
    git_repo.commit("docs", {"docs/specs/tasks.md": "- [ ] T2\n"})
    link(git_repo, "specs", "docs/specs")
    code, _, err = cli(*BOUNDARY, "--lang", "en")
    assert code == 0 and err.splitlines()[-1] == "Handoff summary: docs/specs/.reviews/session-handoff.md"
    assert (git_repo.path / "docs/specs/.reviews/session-handoff.md").is_file()


# --- cm-log-event ----------------------------------------------------------------------------


def log_event(*extra: str) -> CliResult:
    argv = ["--workflow", "cm-ai", "--event", "start", "--runtime", "claude", "--detail", "hi", *extra]
    return cli(*argv, script="cm-log-event")


def test_log_event_never_appends_to_a_symlinked_project_log(git_repo: GitRepo, outside: Path) -> None:
    (outside / "log").write_text("ORIGINAL\n")
    (git_repo.path / "specs").mkdir()
    link(git_repo, "specs/运行日志.jsonl", "../../outside/log")
    code, out, err = log_event("--specs-dir", "specs")
    assert code == 1 and out == ""
    assert (
        err == f"cm-log-event: the project log is a symlink, which is never followed here; "
        f"nothing was read or written there ({CODE})\n"
    )
    assert (outside / "log").read_text() == "ORIGINAL\n"
    assert not (git_repo.path / "specs" / ".cm-run.json").exists()


def test_log_event_never_creates_the_target_of_a_symlinked_run_lock(git_repo: GitRepo, outside: Path) -> None:
    (git_repo.path / "specs").mkdir()
    link(git_repo, "specs/.cm-run.lock", "../../outside/created.lock")
    code, _, err = log_event("--specs-dir", "specs")
    assert code == 1 and f"({CODE})" in err and "run lock" in err
    assert not (outside / "created.lock").exists()
    assert not (git_repo.path / "specs" / "运行日志.jsonl").exists()


@pytest.mark.parametrize("target", ["../../outside/pointer.json", "nowhere.json"])
def test_log_event_refuses_a_symlinked_run_pointer(git_repo: GitRepo, outside: Path, target: str) -> None:
    (outside / "pointer.json").write_text('{"run_id": "x"}\n')
    (git_repo.path / "specs").mkdir()
    link(git_repo, "specs/.cm-run.json", target)
    code, _, err = log_event("--specs-dir", "specs")
    assert code == 1 and f"({CODE})" in err
    assert (outside / "pointer.json").read_text() == '{"run_id": "x"}\n'


def test_log_event_refuses_a_specs_folder_leading_outside(git_repo: GitRepo, outside: Path) -> None:
    link(git_repo, "specs", "../outside")
    before = tree(outside)
    code, _, err = log_event("--specs-dir", "specs", "--project-root", ".")
    assert code == 1 and f"({CODE})" in err
    assert tree(outside) == before
    home = Path(os.environ["CM_WORKFLOW_LOG_HOME"])
    assert not (home / "runs").exists()  # refused before anything, the global mirror included


def test_log_event_writes_through_a_specs_folder_that_stays_inside(git_repo: GitRepo) -> None:
    git_repo.commit("docs", {"docs/specs/keep": ""})
    link(git_repo, "specs", "docs/specs")
    code, out, _ = log_event("--specs-dir", "specs")
    assert code == 0 and json.loads(out)["deduplicated"] is False
    rows = (git_repo.path / "docs/specs/运行日志.jsonl").read_text().splitlines()
    assert len(rows) == 1 and json.loads(rows[0])["event"] == "start"


# --- workgroup packet build / check: files named on the command line, in the work tree ------


def packet_args(*extra: str) -> list[str]:
    from test_cm_packet import ROLE_ITEMS

    items = [arg for key in ROLE_ITEMS["coder"] for arg in ("--item", f"{key}=value of {key}")]
    base = ["packet", "build", "coder", "--workflow", "cm-ai", "--stage", "s1", "--objective", "o"]
    return [*base, "--id", "task=T1", "--ref", "specs/tasks.md", *items, *extra]


@pytest.mark.parametrize(
    ("rel", "target", "arg"),
    [
        ("CLAUDE.md", "../outside/id_key", "CLAUDE.md"),  # a rules file that is a symlink out
        ("docs", "../outside", "docs/id_key"),  # a folder on the way that leads out
    ],
)
def test_packet_build_never_reads_a_rules_file_outside(
    git_repo: GitRepo, outside: Path, rel: str, target: str, arg: str
) -> None:
    link(git_repo, rel, target)
    code, out, err = cli(*packet_args("--rules", arg))
    assert code == 2 and f"error[{CODE}]: the --rules file" in err, err
    assert "PRIVATE KEY" not in out + err and "b3BlbnNz" not in out + err


def test_packet_build_follows_a_rules_symlink_that_stays_inside(git_repo: GitRepo) -> None:
    git_repo.commit("rules", {"docs/rules.md": "Keep functions small.\n"})
    link(git_repo, "CLAUDE.md", "docs/rules.md")
    code, out, err = cli(*packet_args("--rules", "CLAUDE.md"))
    assert code == 0, err
    assert "Keep functions small." in out


def test_packet_build_reads_a_file_outside_every_work_tree(git_repo: GitRepo, outside: Path) -> None:
    (outside / "rules.md").write_text("Rules from elsewhere.\n")  # named by the user: their business
    code, out, err = cli(*packet_args("--rules", str(outside / "rules.md")))
    assert code == 0 and "Rules from elsewhere." in out, err


def test_the_log_append_itself_never_follows_a_symlink(tmp_path: Path) -> None:
    """Behind the path check (a link swapped in after it): the append opens with O_NOFOLLOW."""
    from toolkit.cm import run_logs

    target = tmp_path / "elsewhere.jsonl"
    target.write_text("ORIGINAL\n")
    (tmp_path / "specs").mkdir()
    os.symlink(target, tmp_path / "specs" / "运行日志.jsonl")
    with pytest.raises(OSError):
        run_logs.append_line(tmp_path / "specs" / "运行日志.jsonl", {"event": "x"}, private=False)
    assert target.read_text() == "ORIGINAL\n"
