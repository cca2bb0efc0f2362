"""`workgroup privacy scan|allow` and the privacy hooks in-process: output shapes, exit codes,
masked values only, unsafe files skipped with a notice, git file selection, contexts by path,
the allowlist that works in every clone."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pygit2
import pytest
from support.harness import GitRepo, cli

from toolkit.core.errors import InvalidInput
from toolkit.privacy.allowlist import fingerprint, parse_allowlist

KEY = "sk_" + "live_" + "4eC39HqLyjWD4rjtT1zdp7dcFAKE"  # synthetic, non-working
CAPSULE = ".workgroup/workgroups/wg/capsules/t1.json"


def _rows(out: str) -> list[dict[str, object]]:
    return [
        {
            "path": r["path"],
            "line": r["line"],
            **{k: r["extra"][k] for k in ("category", "rule", "start", "end")},
        }
        for r in json.loads(out)["findings"]
    ]


def test_scan_json_shape_exit_codes_and_masking(git_repo: GitRepo) -> None:
    git_repo.write("notes/a.md", f"# notes\n\nkey {KEY}\nmail alice.smith@fake-corp.io\n")
    git_repo.write(".reviews/r.md", "mail alice.smith@fake-corp.io\n")
    git_repo.write("notes/clean.md", "nothing to see\n")
    code, out, err = cli("privacy", "scan", "--format", "json", "notes", ".reviews")
    assert code == 1
    doc = json.loads(out)
    assert doc["tool"] == "privacy" and doc["summary"]["findings"] == 2 and doc["summary"]["checked"] == 3
    # in docs only the secret is a finding; in a workflow artifact the email is one too
    assert _rows(out) == [
        {
            "path": ".reviews/r.md",
            "line": 1,
            "category": "email",
            "rule": "email-address",
            "start": 5,
            "end": 29,
        },
        {
            "path": "notes/a.md",
            "line": 3,
            "category": "secret",
            "rule": "stripe-secret-key",
            "start": 4,
            "end": 4 + len(KEY),
        },
    ]
    assert doc["findings"][1]["code"] == "stripe-secret-key" and doc["findings"][1]["col"] == 5
    assert KEY not in out + err and "alice.smith" not in out + err
    code, out, err = cli("privacy", "scan", "--json", "notes/clean.md")
    assert code == 0 and json.loads(out)["findings"] == [] and err == ""
    code, out, err = cli("privacy", "scan", "notes/a.md")
    assert code == 1 and out == "notes/a.md:3:5: stripe-secret-key secret: sk_l********\n"
    assert "privacy: 1 finding (1 error, 0 warnings) in 1 file" in err and KEY not in out


def test_scan_missing_path_is_usage_error(git_repo: GitRepo) -> None:
    code, _, err = cli("privacy", "scan", "nope.txt")
    assert code == 2 and "Traceback" not in err and "PATH_NOT_FOUND" in err and "nope.txt" in err
    code, out, _ = cli("privacy", "scan", "--json", "nope.txt")
    assert code == 2 and json.loads(out)["error"]["code"] == "PATH_NOT_FOUND"


def test_binary_and_huge_are_scanned_outside_symlinks_skipped_with_notice(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    git_repo.write("bin.dat", b"\x00\x01" + KEY.encode())
    git_repo.write("big.txt", "x" * (4 * 1024 * 1024 + 1) + "\n" + KEY)
    outside = tmp_path / "outside.txt"
    outside.write_text(KEY, encoding="utf-8")
    (git_repo.path / "link.txt").symlink_to(outside)
    (git_repo.path / "linkdir").symlink_to(tmp_path, target_is_directory=True)
    git_repo.write("inside.txt", KEY)
    (git_repo.path / "inner-link.txt").symlink_to(git_repo.path / "inside.txt")
    code, out, err = cli("privacy", "scan", "--json", "--all-files", ".")
    assert code == 1
    paths = sorted({row["path"] for row in json.loads(out)["findings"]})
    # binary and huge files are read whole (the gate never passes what it did not read); the
    # in-repo link is scanned, never followed out
    assert paths == ["big.txt", "bin.dat", "inner-link.txt", "inside.txt"]
    assert "skipped (binary)" not in err and "larger than" not in err
    assert "link.txt: skipped (symlink to outside the repository)" in err
    code, _, err = cli("privacy", "scan", "link.txt")
    assert code == 0 and "symlink to outside" in err


def test_context_is_chosen_by_path(git_repo: GitRepo) -> None:
    record = '{"run_id": "cm-ai-20260806-0001", "session_id": "x"}\n'
    git_repo.write(CAPSULE, record)
    git_repo.write("logs/events.jsonl", '{"run_id": "cm-ai-20260806-0001", "call_id": "c-1"}\n')
    git_repo.write("notes/plain.json", record)
    data = _rows(cli("privacy", "scan", "--json", ".")[1])
    found = {(r["path"], r["rule"]) for r in data}
    assert found == {(CAPSULE, "private-field-session")}  # run_id and session_id in the capsule
    assert sum(1 for r in data if r["path"] == CAPSULE) == 2
    forced = _rows(cli("privacy", "scan", "--json", "--context", "capsule", "notes/plain.json")[1])
    assert len(forced) == 2


def test_hooks_main_report_file_line_rule(git_repo: GitRepo) -> None:
    git_repo.write(CAPSULE, '{\n  "objective": "x",\n  "next_action": "' + KEY + '"\n}\n')
    git_repo.write("ok.json", '{"objective": "x"}\n')
    code, out, _ = cli(CAPSULE, script="workgroup-privacy-hook")
    assert code == 1
    assert f"{CAPSULE}:3:" in out and "stripe-secret-key" in out and KEY not in out
    assert cli("ok.json", script="workgroup-privacy-hook").exit_code == 0
    assert cli("ok.json", CAPSULE, script="workgroup-privacy-all-hook").exit_code == 1
    assert cli(script="workgroup-privacy-hook").exit_code == 0


def test_allow_command_writes_a_fingerprint_that_works_in_every_clone(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    git_repo.write("docs/vector.md", f"test vector: {KEY}\n")
    allow = ("privacy", "allow", "docs/vector.md", "--line", "1")
    # --reason is required, and must say something
    assert cli(*allow, "--rule", "stripe-secret-key")[0] == 2
    assert cli(*allow, "--rule", "stripe-secret-key", "--reason", "  ")[0] == 2
    assert not (git_repo.path / ".workgroup/privacy-allowlist.yml").exists()
    # --rule takes the category as well as the rule id
    code, _, err = cli(*allow, "--rule", "secret", "--reason", "published vector")
    assert code == 0, err
    text = (git_repo.path / ".workgroup/privacy-allowlist.yml").read_text(encoding="utf-8")
    assert KEY not in text and KEY[8:20] not in text and "rule: stripe-secret-key" in text
    assert 'reason: "published vector"' in text
    assert fingerprint("stripe-secret-key", "docs/vector.md", KEY) in text
    assert not (git_repo.path / ".git/workgroup/privacy-salt").exists()  # nothing per clone
    assert cli("privacy", "scan", "docs/vector.md")[0] == 0
    assert cli(*allow, "--rule", "stripe-secret-key", "--reason", "again")[0] == 0
    assert (git_repo.path / ".workgroup/privacy-allowlist.yml").read_text(
        encoding="utf-8"
    ) == text  # idempotent
    # the same value elsewhere (another path) is not allowed
    git_repo.write("docs/other.md", f"{KEY}\n")
    assert cli("privacy", "scan", "docs/other.md")[0] == 1
    # no such finding: usage error, nothing written
    assert cli(*allow, "--rule", "email-address", "--reason", "x")[0] == 2
    # a fresh clone of the committed files honours the entry (no local state needed)
    git_repo.commit(
        "allow", {"docs/vector.md": f"test vector: {KEY}\n", ".workgroup/privacy-allowlist.yml": text}
    )
    clone = tmp_path / "clone"
    pygit2.clone_repository(str(git_repo.path), str(clone))
    old = Path.cwd()
    os.chdir(clone)
    try:
        assert cli("privacy", "scan", "docs/vector.md")[0] == 0
    finally:
        os.chdir(old)


def test_scan_reads_what_git_would_commit_and_reports_paths_as_given(git_repo: GitRepo) -> None:
    git_repo.write(".gitignore", "build/\n")
    git_repo.write("build/out.py", f"K = '{KEY}'\n")  # ignored: not what git would commit
    git_repo.write("src/new.py", f"K = '{KEY}'\n")  # untracked, not ignored: scanned
    git_repo.commit("init", {"src/old.py": f"K = '{KEY}'\n", ".gitignore": "build/\n"})
    paths = {r["path"] for r in _rows(cli("privacy", "scan", "--json", ".")[1])}
    assert paths == {"src/new.py", "src/old.py"}
    everything = {r["path"] for r in _rows(cli("privacy", "scan", "--json", "--all-files", ".")[1])}
    assert everything == {"src/new.py", "src/old.py", "build/out.py"}
    old = Path.cwd()
    os.chdir(git_repo.path / "src")
    try:
        # relative to the current folder, as git shows them
        code, out, _ = cli("privacy", "scan", "..")
        assert code == 1 and out.startswith("new.py:1:") and "\nold.py:1:" in out
        git_repo.write("docs/d.py", f"K = '{KEY}'\n")
        assert "../docs/d.py:1:" in cli("privacy", "scan", "../docs")[1]
        assert cli("privacy", "scan", "old.py")[1].startswith("old.py:1:")
    finally:
        os.chdir(old)


@pytest.mark.parametrize(
    "data",
    [
        [1, 2],  # not a mapping
        {"allow": "x"},  # not a list
        {"allow": [{"rule": "r", "path": "p", "fingerprint": "sha1:abc"}]},  # bad fingerprint
        {
            "allow": [{"rule": "r", "path": "p", "fingerprint": "sha256:" + "0" * 64, "value": "s"}]
        },  # extra key
        {"deny": []},  # unknown top-level key
    ],
)
def test_malformed_allowlist_is_refused(data: object) -> None:
    with pytest.raises(InvalidInput):
        parse_allowlist(data)


def test_malformed_allowlist_file_exit_2(git_repo: GitRepo) -> None:
    git_repo.write("a.txt", KEY)
    git_repo.write(".workgroup/privacy-allowlist.yml", "allow: [\n")
    code, _, err = cli("privacy", "scan", "a.txt")
    assert code == 2 and "ALLOWLIST_INVALID" in err and "Traceback" not in err


def test_scan_through_the_cli_loads_no_git_library_or_yaml(git_repo: GitRepo) -> None:
    # `workgroup privacy scan` is the typer command (the one front door); the scan itself still
    # needs neither pygit2 nor yaml (the pre-commit hooks, their own entry points, load no typer)
    import subprocess
    import sys

    git_repo.write("a.py", f"K = '{KEY}'\n")
    code = (
        "import sys; from toolkit.entry import main; rc = main(['privacy', 'scan', 'a.py']);"
        "heavy = {'pygit2', 'yaml'} & set(sys.modules);"
        "sys.stderr.write(f'RC={rc} HEAVY={sorted(heavy)}')"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=git_repo.path, capture_output=True, text=True)
    assert "RC=1 HEAVY=[]" in done.stderr, done.stderr
    assert done.stdout.startswith("a.py:1:6: stripe-secret-key secret:") and KEY not in done.stdout


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_only_after_the_delay(
    git_repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolkit.commands import _privacy_scan as command

    git_repo.write("a.py", "x = 1\n")
    out = io.StringIO()
    for stream, delay, shown in (
        (_Terminal(), 0.0, True),
        (io.StringIO(), 0.0, False),
        (_Terminal(), 60.0, False),
    ):
        monkeypatch.setattr(command, "PROGRESS_AFTER_S", delay)
        assert command.scan_command(["."], as_json=False, cwd=git_repo.path, stdout=out, stderr=stream) == 0
        assert ("privacy: scanned" in stream.getvalue()) is shown
    assert out.getvalue() == ""  # progress never reaches stdout


def test_a_file_named_explicitly_is_scanned_even_when_ignored(git_repo: GitRepo) -> None:
    git_repo.write(".gitignore", "secrets.env\n")
    git_repo.write("secrets.env", f"STRIPE={KEY}\n")
    assert cli("privacy", "scan", ".")[0] == 0  # the folder: what git would commit
    code, out, _ = cli("privacy", "scan", "secrets.env")  # the file itself: asked for by name
    assert code == 1 and out.startswith("secrets.env:1:8: stripe-secret-key")
