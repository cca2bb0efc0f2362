"""Skill hygiene lint: each rule with passing and failing files (VERIFY CEO-08)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.harness import cli, run_workgroup

from toolkit.workflow.skills import LintConfig, lint


def skills_hook(*files: str) -> int:
    """``workgroup-skills-hook FILES`` in-process (the suite's one CLI helper): its exit code."""
    return cli(*files, script="workgroup-skills-hook").exit_code


GOOD_SKILL = """---
name: deploy
description: Use when the user asks to ship a release to staging or production.
---
# Deploy

Run the checklist in references/checklist.md, then follow references/rollback.md if a step fails.
"""
CHECKLIST = "# Checklist\n\nSmoke tests pass on staging.\n"
ROLLBACK = "# Rollback\n\nRevert the release tag.\n"
NORMATIVE = (
    "Every writer must own at least one repository-relative path, and no two active writers may own "
    "overlapping files; a conflict serializes the second writer until the first one yields its scope."
)


def rules(findings: list[Any]) -> list[str]:
    return sorted({f.rule for f in findings})


def test_good_skill_passes() -> None:
    files = {
        "s/deploy/SKILL.md": GOOD_SKILL,
        "s/deploy/references/checklist.md": CHECKLIST,
        "s/deploy/references/rollback.md": ROLLBACK,
    }
    assert lint(files) == []


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("# no frontmatter\n", "FRONTMATTER_MISSING"),
        ("---\nname: [unclosed\n---\nbody\n", "FRONTMATTER_INVALID"),  # YAML error
        ("---\nname: x\n", "FRONTMATTER_INVALID"),  # never closed
        ("---\n- a list\n---\nbody\n", "FRONTMATTER_INVALID"),  # not a mapping
        ("---\ndescription: Use when the user asks for a deploy.\n---\nbody\n", "NAME_MISSING"),
        (
            "---\nname: Deploy Skill\ndescription: Use when the user asks for a deploy.\n---\nbody\n",
            "NAME_INVALID",
        ),
        ("---\nname: deploy\ndescription: Deploys things.\n---\nbody\n", "TRIGGERS_MISSING"),  # no 'use when'
        ("---\nname: deploy\n---\nbody\n", "TRIGGERS_MISSING"),
    ],
)
def test_frontmatter_rules(text: str, rule: str) -> None:
    assert rule in rules(lint({"skills/x/SKILL.md": text}))


def test_triggers_list_is_enough() -> None:
    text = (
        "---\nname: deploy\ndescription: Deploys.\ntriggers: [ship a release, deploy to staging]\n---\nbody\n"
    )
    assert lint({"skills/x/SKILL.md": text}) == []


def test_body_size_bound_is_configurable() -> None:
    body = "".join(f"step {i}\n" for i in range(30))
    text = GOOD_SKILL.split("# Deploy")[0] + body
    assert lint({"a/SKILL.md": text}, config=LintConfig(max_body_lines=40)) == []
    found = lint({"a/SKILL.md": text}, config=LintConfig(max_body_lines=20))
    assert rules(found) == ["BODY_TOO_LARGE"]
    assert found[0].line == 4 + 20 + 1  # first line past the bound (frontmatter is 4 lines)
    assert rules(lint({"a/SKILL.md": text}, config=LintConfig(max_body_bytes=50))) == ["BODY_TOO_LARGE"]


def test_inlined_reference_is_reported() -> None:
    long_block = (
        "Always run the smoke tests against staging before promoting a build and keep the log as an artifact."
    )
    files = {
        "s/SKILL.md": GOOD_SKILL + "\n" + long_block + "\n",
        "s/references/checklist.md": "# Checklist\n\n" + long_block + "\n",
        "s/references/rollback.md": ROLLBACK,
    }
    found = lint(files)
    assert rules(found) == ["REFERENCE_INLINED"]
    assert found[0].path == "s/SKILL.md"


def test_unlinked_and_missing_references() -> None:
    files = {
        "s/SKILL.md": GOOD_SKILL,
        "s/references/checklist.md": CHECKLIST,
        "s/references/orphan.md": "# Orphan\n",
    }
    found = lint(files)
    assert ("REFERENCE_UNLINKED", "warning") in {(f.rule, f.severity) for f in found}
    assert "REFERENCE_MISSING" in rules(found)  # rollback.md is pointed to but absent


def test_duplicate_without_owner_names_both_places() -> None:
    files = {"a/SKILL.md": GOOD_SKILL + "\n" + NORMATIVE + "\n", "agents/b.md": "# B\n\n" + NORMATIVE + "\n"}
    found = [f for f in lint(files) if f.rule == "DUPLICATE_BLOCK"]
    assert {f.path for f in found} == {"a/SKILL.md", "agents/b.md"}
    assert "agents/b.md:3" in next(f.message for f in found if f.path == "a/SKILL.md")


def test_duplicate_with_canonical_owner_is_reported_on_consumers_only() -> None:
    owner = "# Rules\n\n<!-- canonical: writer-ownership -->\n" + NORMATIVE + "\n"
    consumer = "# B\n\n" + NORMATIVE + "\n"
    generated = "# C\n\n<!-- generated-from: writer-ownership -->\n" + NORMATIVE + "\n"
    found = lint({"docs/rules.md": owner, "agents/b.md": consumer, "agents/c.md": generated})
    dup = [f for f in found if f.rule == "DUPLICATE_BLOCK"]
    assert [f.path for f in dup] == ["agents/b.md"]
    assert "writer-ownership" in dup[0].message and "docs/rules.md" in dup[0].message


def test_prompt_copying_a_framework_document_is_refused() -> None:
    framework = "# Loop\n\n" + "".join(f"Rule {i}: do the step number {i} carefully.\n" for i in range(25))
    copy = "---\nname: builder\ndescription: Use when building a microtask.\n---\n" + framework
    found = lint({"docs/loop.md": framework, "agents/builder.md": copy})
    assert "FRAMEWORK_DUPLICATE" in rules(found)
    partial = (
        "---\nname: builder\ndescription: Use when building a microtask.\n---\nSee docs/loop.md.\n"
        + "".join(f"Rule {i}: do the step number {i} carefully.\n" for i in range(3))
    )
    assert "FRAMEWORK_DUPLICATE" not in rules(lint({"docs/loop.md": framework, "agents/builder.md": partial}))


def test_targets_limit_reported_files() -> None:
    files = {"a/SKILL.md": GOOD_SKILL + "\n" + NORMATIVE + "\n", "agents/b.md": "# B\n\n" + NORMATIVE + "\n"}
    found = lint(files, targets={"agents/b.md"})
    assert {f.path for f in found} == {"agents/b.md"}


def test_cli_json_and_exit_codes(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.write("skills/deploy/SKILL.md", GOOD_SKILL)
    git_repo.write("skills/deploy/references/checklist.md", CHECKLIST)
    git_repo.write("skills/deploy/references/rollback.md", ROLLBACK)
    git_repo.commit("skills")
    ok = run_workgroup("skills", "lint", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["findings"] == []
    git_repo.write("agents/bad.md", "---\nname: Bad\n---\nbody\n")
    git_repo.commit("bad agent")
    bad = run_workgroup("skills", "lint", "--json")
    assert bad.returncode == 1
    found = json.loads(bad.stdout)["findings"]
    assert {(f["path"], f["code"]) for f in found} == {
        ("agents/bad.md", "NAME_INVALID"),
        ("agents/bad.md", "TRIGGERS_MISSING"),
    }
    text = run_workgroup("skills", "lint")
    # the shared convention: findings on stdout, the summary on stderr
    assert b"agents/bad.md:2:0: NAME_INVALID " in text.stdout and b"skills: 2 findings" in text.stderr


def test_hook_main_lints_given_files(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.write("agents/bad.md", "---\nname: bad\n---\nbody\n")
    git_repo.write("agents/good.md", "---\nname: good\ndescription: Use when reviewing a diff.\n---\nbody\n")
    git_repo.commit("agents")
    assert skills_hook("agents/good.md") == 0
    assert skills_hook("agents/bad.md") == 1
    assert skills_hook() == 0


# --- every file argument that cannot be linted is reported (issue 15) ---


def _make_bad(kind: str, repo) -> str:  # type: ignore[no-untyped-def]
    import os
    import socket

    agents = repo.path / "agents"
    agents.mkdir(exist_ok=True)
    target = agents / f"{kind}.md"
    if kind == "missing":
        pass
    elif kind == "empty-folder":
        target.mkdir()
    elif kind == "binary":
        target.write_bytes(b"---\nname: x\n---\n\x00\x01\x02")
    elif kind == "latin1":
        target.write_bytes("---\nname: caf\u00e9\n---\n".encode("latin-1"))
    elif kind == "huge":
        target.write_bytes(b"a" * (1_048_576 + 1))
    elif kind == "unreadable":
        target.write_text("---\nname: x\n---\n", encoding="utf-8")
        target.chmod(0)
    elif kind == "dangling":
        target.symlink_to(agents / "nowhere.md")
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(target))
        sock.close()
    elif kind == "not-markdown":
        target = agents / "notes.txt"
        target.write_text("text\n", encoding="utf-8")
    return str(target.relative_to(repo.path))


UNLINTABLE_KINDS = [
    "missing",
    "empty-folder",
    "binary",
    "latin1",
    "huge",
    "unreadable",
    "dangling",
    "fifo",
    "socket",
    "not-markdown",
]


@pytest.mark.parametrize("kind", UNLINTABLE_KINDS)
def test_unlintable_argument_is_an_error_finding(git_repo, kind: str) -> None:  # type: ignore[no-untyped-def]
    import os

    from toolkit.workflow.skills_files import UNLINTABLE, lint_paths

    if kind == "unreadable" and os.geteuid() == 0:
        pytest.skip("root reads a mode-000 file")
    rel = _make_bad(kind, git_repo)
    findings = lint_paths([rel], LintConfig())
    assert [(f.path, f.rule, f.severity) for f in findings] == [(rel, UNLINTABLE, "error")]
    assert skills_hook(rel) == 1  # the pre-commit hook fails instead of passing in silence


def test_unlintable_argument_via_cli_exits_1_and_lints_the_rest(git_repo) -> None:  # type: ignore[no-untyped-def]
    import os

    git_repo.write("agents/good.md", "---\nname: good\ndescription: Use when reviewing a diff.\n---\nbody\n")
    fifo = git_repo.path / "agents" / "pipe.md"
    os.mkfifo(fifo)
    proc = run_workgroup(
        "skills", "lint", "--json", "agents/good.md", "agents/pipe.md", "agents/absent.md", timeout=60
    )
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)["findings"]
    assert {(f["path"], f["code"]) for f in found} == {
        ("agents/pipe.md", "FILE_UNLINTABLE"),
        ("agents/absent.md", "FILE_UNLINTABLE"),
    }
    assert b"Traceback" not in proc.stderr


def test_lint_reads_the_files_git_would_commit(git_repo) -> None:  # type: ignore[no-untyped-def]
    # tracked plus untracked-not-ignored: a new skill is linted before it is added, its untracked
    # reference is not "missing", and an ignored file is left alone
    git_repo.write(".gitignore", "scratch/\n")
    git_repo.write("README.md", "# r\n")
    git_repo.commit("base")
    git_repo.write("skills/deploy/SKILL.md", GOOD_SKILL)  # untracked, refers to references/*.md
    git_repo.write("skills/deploy/references/checklist.md", CHECKLIST)
    git_repo.write("skills/deploy/references/rollback.md", ROLLBACK)
    git_repo.write("agents/new.md", "---\nname: New\n---\nbody\n")  # untracked and broken
    git_repo.write("scratch/agents/ignored.md", "---\nname: Ignored\n---\nbody\n")
    every = run_workgroup("skills", "lint", "--json")
    found = {(f["path"], f["code"]) for f in json.loads(every.stdout)["findings"]}
    assert ("agents/new.md", "NAME_INVALID") in found
    assert not [p for p, _ in found if p.startswith(("scratch/", "skills/"))]
    one = run_workgroup("skills", "lint", "--json", "skills/deploy/SKILL.md")
    assert one.returncode == 0 and json.loads(one.stdout)["findings"] == [], one.stdout


def test_duplicate_threshold_is_an_option(git_repo) -> None:  # type: ignore[no-untyped-def]
    para = "Always run the full test suite before you hand the change to a reviewer, every time."  # 84 chars
    for name in ("a", "b"):
        git_repo.write(
            f"agents/{name}.md",
            f"---\nname: {name}\ndescription: Use when reviewing a diff.\n---\n{para}\n",
        )
    git_repo.commit("agents")
    default = run_workgroup("skills", "lint", "--json")
    assert "DUPLICATE_BLOCK" not in {f["code"] for f in json.loads(default.stdout)["findings"]}
    lower = run_workgroup("skills", "lint", "--json", "--min-duplicate-chars", "80")
    assert "DUPLICATE_BLOCK" in {f["code"] for f in json.loads(lower.stdout)["findings"]}
