"""The session handoff: overwrite, failure line, privacy, relative paths, concurrency, `handoff show`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.harness import GitRepo, cli

from toolkit.cm.handoff import HandoffError, compose, parse_tasks, relativize

TASKS = "# Tasks\n\n- [x] T1 login form\n- [ ] T2 logout\n* [X] T3 docs\n1. [ ] T4 audit\nnot a task [ ]\n"


@pytest.fixture
def project(git_repo: GitRepo) -> Path:
    (git_repo.path / "specs").mkdir()
    git_repo.write("specs/tasks.md", TASKS)
    git_repo.commit("specs")
    return git_repo.path


def handoff_file(root: Path, sub: str = "specs") -> Path:
    return root / sub / ".reviews" / "session-handoff.md"


def test_parse_tasks_checkboxes() -> None:
    tasks = parse_tasks(TASKS)
    assert tasks.done == ("T1 login form", "T3 docs")
    assert tasks.open == ("T2 logout", "T4 audit")


def test_cm_ai_run_done_writes_the_handoff_and_the_fourth_line(project: Path) -> None:
    code, _, err = cli(
        "boundary",
        "cm-ai",
        "--at",
        "run_done",
        "--specs-dir",
        "specs",
        "--tasks",
        "specs/tasks.md",
        "--next-command",
        "/cm-ai run --task T2",
        "--done",
        "T1 shipped",
    )
    lines = err.splitlines()
    assert code == 0 and len(lines) == 4
    assert lines[0] == "会话边界：换新会话。" and lines[1] == "新会话里运行：/cm-ai run --task T2"
    assert lines[3] == "交接摘要：specs/.reviews/session-handoff.md"
    text = handoff_file(project).read_text(encoding="utf-8")
    assert "- T1 shipped\n- T1 login form\n- T3 docs" in text
    assert "- T2 logout\n- T4 audit" in text
    assert "`/cm-ai run --task T2`" in text
    # reference data only: no session identity, no authorization
    assert "Reference only" in text and "session_id" not in text
    assert str(project) not in text


def test_cm_fix_writes_under_the_archive_and_overwrites(project: Path) -> None:
    (project / "defects" / "D-7").mkdir(parents=True)
    base = ["boundary", "cm-fix", "--at", "run_done", "--archive-dir", "defects/D-7"]
    assert cli(*base, "--next-command", "/cm-fix D-8")[0] == 0
    first = handoff_file(project, "defects/D-7").read_text(encoding="utf-8")
    code, _, err = cli(*base, "--lang", "en", "--declined", "--done", "second run")
    assert code == 0
    assert err.splitlines() == [
        "Session boundary: stay in this session (the user declined a fresh session).",
        "Handoff summary: defects/D-7/.reviews/session-handoff.md",
    ]
    second = handoff_file(project, "defects/D-7").read_text(encoding="utf-8")
    assert second != first and "second run" in second and "/cm-fix D-8" not in second
    # the atomic overwrite leaves no temp files behind
    assert os.listdir(project / "defects/D-7/.reviews") == ["session-handoff.md"]


@pytest.mark.parametrize(
    ("workflow", "event", "extra"),
    [
        ("cm-ai", "batch_done", []),  # batches write no handoff
        ("cm-ai", "run_done", ["--in-batch"]),  # nor does a task inside a batch
        ("cm-prd", "review_stop", []),  # cm-prd never writes one
        ("cm-ai", "mid_run", []),
    ],
)
def test_no_handoff_outside_a_single_runs_end(
    project: Path, workflow: str, event: str, extra: list[str]
) -> None:
    code, _, err = cli(
        "boundary", workflow, "--at", event, "--specs-dir", "specs", "--next-command", "/next", *extra
    )
    assert code == 0 and "交接摘要" not in err
    assert not (project / "specs" / ".reviews").exists()


def test_reviews_is_a_file_gives_the_failure_line_and_exit_0(project: Path) -> None:
    # Root ignores permission bits, so the target is made unwritable by a regular file in the way.
    (project / "specs" / ".reviews").write_text("not a directory", encoding="utf-8")
    code, _, err = cli(
        "boundary",
        "cm-ai",
        "--at",
        "run_done",
        "--specs-dir",
        "specs",
        "--next-command",
        "/cm-ai run --task T2",
    )
    lines = err.splitlines()
    assert code == 0 and lines[:3][0] == "会话边界：换新会话。"
    assert lines[3] == "交接摘要：未写成（目录不可写）"
    assert (project / "specs" / ".reviews").read_text(encoding="utf-8") == "not a directory"
    code, out, err = cli(
        "boundary",
        "cm-ai",
        "--at",
        "run_done",
        "--specs-dir",
        "specs",
        "--next-command",
        "/x",
        "--lang",
        "en",
        "--json",
    )
    assert err.splitlines()[-1] == "Handoff summary: not written (the directory is not writable)"
    assert json.loads(out)["handoff"] == {"written": False, "path": None, "reason": "unwritable"}


@pytest.mark.parametrize(
    ("args", "line"),
    [
        ([], "交接摘要：未写成（没有给出目录）"),
        (["--specs-dir", "missing"], "交接摘要：未写成（目录不存在）"),
        (["--specs-dir", "specs", "--tasks", "specs/none.md"], "交接摘要：未写成（tasks.md 无法读取）"),
        (["--specs-dir", "specs", "--done", "ping bob@corp.com"], "交接摘要：未写成（内容含不可提交的信息）"),
        (
            ["--specs-dir", "specs", "--done", "see /opt/other/place/x.log"],
            "交接摘要：未写成（路径在项目根目录之外）",
        ),
    ],
)
def test_failed_writes_print_their_reason_and_write_nothing(
    project: Path, args: list[str], line: str
) -> None:
    code, _, err = cli("boundary", "cm-ai", "--at", "run_done", "--next-command", "/n", *args)
    assert code == 0 and err.splitlines()[-1] == line
    assert len(err.splitlines()) == 4
    assert not handoff_file(project).exists()


def test_a_leak_never_replaces_a_good_handoff(project: Path) -> None:
    base = ["boundary", "cm-ai", "--at", "run_done", "--specs-dir", "specs", "--next-command", "/n"]
    assert cli(*base)[0] == 0
    good = handoff_file(project).read_bytes()
    cli(*base, "--done", "key sk-proj-Zk3pQ9rT5vW8yB2dF6hJ1mN4sX7cL0aE")
    assert handoff_file(project).read_bytes() == good


def test_absolute_paths_inside_the_root_become_relative(project: Path) -> None:
    code, _, _ = cli(
        "boundary",
        "cm-ai",
        "--at",
        "run_done",
        "--specs-dir",
        str(project / "specs"),
        "--next-command",
        f"/cm-ai run --specs {project}/specs",
        "--done",
        f"edited {project}/src/a.py.",
    )
    text = handoff_file(project).read_text(encoding="utf-8")
    assert code == 0 and str(project) not in text
    assert "`/cm-ai run --specs specs`" in text and "edited src/a.py." in text


def test_relativize_rules(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    assert relativize(f"at {root}/a/b.py, and {root}.", root) == "at a/b.py, and .."
    assert relativize("/cm-ai run --task T2", root) == "/cm-ai run --task T2"  # a slash command, not a path
    for bad in (f"{root}/../etc/passwd", "/etc/hosts", r"C:\\Users\\x"):
        with pytest.raises(HandoffError):
            relativize(bad, root)


def test_compose_marks_an_unknown_entry() -> None:
    text = compose(
        "{workflow}|{event}|{verdict}|{done}|{open}|{command}",
        workflow="cm-fix",
        event="run_done",
        verdict="fresh",
        done=[],
        tasks=None,
        command="/cm-fix",
        command_known=False,
    )
    assert "original command" in text and "no tasks.md given" in text and "not stated" in text


def many(label: str) -> list[str]:
    """Forty --done lines: a handoff large enough that a torn write would show."""
    return [part for i in range(40) for part in ("--done", f"{label} {i} " + label * 50)]


def test_two_concurrent_boundaries_leave_one_whole_file(project: Path) -> None:
    """Real processes race to overwrite; the result is always exactly one writer's whole file."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    texts = {}
    for label in ("alpha", "beta"):
        assert (
            cli(
                "boundary",
                "cm-ai",
                "--at",
                "run_done",
                "--specs-dir",
                "specs",
                "--next-command",
                f"/cm-ai run --task {label}",
                *many(label),
            ).exit_code
            == 0
        )
        texts[label] = handoff_file(project).read_bytes()
    assert texts["alpha"] != texts["beta"]
    for _ in range(2):
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "toolkit",
                    "boundary",
                    "cm-ai",
                    "--at",
                    "run_done",
                    "--specs-dir",
                    "specs",
                    "--next-command",
                    f"/cm-ai run --task {label}",
                    *many(label),
                ],
                cwd=project,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for label in ("alpha", "beta")
        ]
        errs = [p.communicate(timeout=60)[1] for p in procs]
        assert all(p.returncode == 0 for p in procs)
        assert all(e.decode().splitlines()[-1] == "交接摘要：specs/.reviews/session-handoff.md" for e in errs)
        assert handoff_file(project).read_bytes() in texts.values()
        assert os.listdir(project / "specs" / ".reviews") == ["session-handoff.md"]


def test_handoff_show(project: Path) -> None:
    assert cli("handoff", "show", "specs")[0] == 1  # nothing yet: an error without --mode
    code, out, err = cli("handoff", "show", "specs", "--mode", "create")
    assert (code, out) == (0, "") and "no session handoff yet" in err
    cli("boundary", "cm-ai", "--at", "run_done", "--specs-dir", "specs", "--next-command", "/cm-ai T2")
    written = handoff_file(project).read_text(encoding="utf-8")
    code, out, _ = cli("handoff", "show", "specs", "--mode", "create")
    assert code == 0 and out == written
    code, out, _ = cli("handoff", "show", "specs")
    assert code == 0 and out == written
    # a resumed run continues from its own records; the handoff is not shown
    code, out, _ = cli("handoff", "show", "specs", "--mode", "resume")
    assert (code, out) == (0, "")
    code, out, _ = cli("handoff", "show", "specs", "--json")
    data = json.loads(out)
    assert (
        data["shown"] is True
        and data["text"] == written
        and data["path"] == "specs/.reviews/session-handoff.md"
    )
    assert cli("handoff", "show", "specs", "--mode", "later")[0] == 2


@settings(max_examples=200, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(["/proj/root", "/proj/root/", "src/a.py", "/etc/x/y", " ", "/cm-ai", ".", "/", "、"])
        | st.text(max_size=4),
        max_size=12,
    ).map("".join)
)
def test_fuzz_relativize_never_leaves_an_absolute_path(text: str) -> None:
    root = Path("/proj/root")
    try:
        out = relativize(text, root)
    except HandoffError as exc:
        assert exc.key == "fail_outside_root"
        return
    # no word of the result starts with the root any more: every such path was rewritten or refused
    assert not any(word.startswith("/proj/root") for word in out.split())
