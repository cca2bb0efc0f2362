"""`workgroup privacy scan|allow` and the privacy hooks in-process: output shapes, exit codes,
masked values only, unsafe files skipped with a notice, the salted allowlist."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import GitRepo

from toolkit.cli import run
from toolkit.core.errors import InvalidInput
from toolkit.hooks import privacy as privacy_hook
from toolkit.hooks import privacy_all as privacy_all_hook
from toolkit.privacy.allowlist import fingerprint, load_salt, parse_allowlist

KEY = "sk_" + "live_" + "4eC39HqLyjWD4rjtT1zdp7dcFAKE"  # synthetic, non-working
CAPSULE = ".workgroup/workgroups/wg/capsules/t1.json"


@pytest.fixture
def wg(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run the CLI in-process through ``cli.run`` (the real exit-code map), capturing output."""

    def invoke(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = run(list(args))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return invoke


def test_scan_json_shape_exit_codes_and_masking(git_repo: GitRepo, wg) -> None:  # type: ignore[no-untyped-def]
    git_repo.write("notes/a.md", f"# notes\n\nkey {KEY}\nmail alice.smith@fake-corp.io\n")
    git_repo.write("notes/clean.md", "nothing to see\n")
    code, out, err = wg("privacy", "scan", "--format", "json", "notes")
    assert code == 1
    data = json.loads(out)
    assert data == {
        "findings": [
            {
                "path": "notes/a.md",
                "line": 3,
                "category": "secret",
                "rule": "stripe-secret-key",
                "start": 4,
                "end": 4 + len(KEY),
            },
            {
                "path": "notes/a.md",
                "line": 4,
                "category": "email",
                "rule": "email-address",
                "start": 5,
                "end": 29,
            },
        ]
    }
    assert KEY not in out + err and "alice.smith" not in out + err
    assert wg("privacy", "scan", "--json", "notes/clean.md")[:2] == (0, '{"findings":[]}\n')
    code, out, _ = wg("privacy", "scan", "notes/a.md")
    assert code == 1 and "notes/a.md:3:5: secret/stripe-secret-key: sk_l********" in out
    assert KEY not in out


def test_scan_missing_path_is_usage_error(git_repo: GitRepo, wg) -> None:  # type: ignore[no-untyped-def]
    code, _, err = wg("privacy", "scan", "nope.txt")
    assert code == 2 and "Traceback" not in err and "PATH_NOT_FOUND" in err


def test_binary_huge_and_outside_symlinks_are_skipped_with_notice(
    git_repo: GitRepo, tmp_path: Path, wg
) -> None:  # type: ignore[no-untyped-def]
    git_repo.write("bin.dat", b"\x00\x01" + KEY.encode())
    git_repo.write("big.txt", "x" * (4 * 1024 * 1024 + 1) + KEY)
    outside = tmp_path / "outside.txt"
    outside.write_text(KEY, encoding="utf-8")
    (git_repo.path / "link.txt").symlink_to(outside)
    (git_repo.path / "linkdir").symlink_to(tmp_path, target_is_directory=True)
    git_repo.write("inside.txt", KEY)
    (git_repo.path / "inner-link.txt").symlink_to(git_repo.path / "inside.txt")
    code, out, err = wg("privacy", "scan", "--json", ".")
    assert code == 1
    paths = sorted({row["path"] for row in json.loads(out)["findings"]})
    assert paths == ["inner-link.txt", "inside.txt"]  # the in-repo link is scanned, never followed out
    assert "bin.dat: skipped (binary)" in err and "big.txt: skipped (larger than" in err
    assert "link.txt: skipped (symlink to outside the repository)" in err
    code, _, err = wg("privacy", "scan", "link.txt")
    assert code == 0 and "symlink to outside" in err


def test_context_is_chosen_by_path(git_repo: GitRepo, wg) -> None:  # type: ignore[no-untyped-def]
    record = '{"run_id": "cm-ai-20260806-0001", "session_id": "x"}\n'
    git_repo.write(CAPSULE, record)
    git_repo.write("logs/events.jsonl", '{"run_id": "cm-ai-20260806-0001", "call_id": "c-1"}\n')
    git_repo.write("notes/plain.json", record)
    data = json.loads(wg("privacy", "scan", "--json", ".")[1])
    found = {(r["path"], r["rule"]) for r in data["findings"]}
    assert found == {(CAPSULE, "private-field-session")}  # run_id and session_id in the capsule
    assert sum(1 for r in data["findings"] if r["path"] == CAPSULE) == 2
    forced = json.loads(wg("privacy", "scan", "--json", "--context", "capsule", "notes/plain.json")[1])
    assert len(forced["findings"]) == 2


def test_hooks_main_report_file_line_rule(git_repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    git_repo.write(CAPSULE, '{\n  "objective": "x",\n  "next_action": "' + KEY + '"\n}\n')
    git_repo.write("ok.json", '{"objective": "x"}\n')
    assert privacy_hook.main([CAPSULE]) == 1
    out = capsys.readouterr().out
    assert f"{CAPSULE}:3:" in out and "stripe-secret-key" in out and KEY not in out
    assert privacy_hook.main(["ok.json"]) == 0
    assert privacy_all_hook.main(["ok.json", CAPSULE]) == 1
    assert privacy_hook.main([]) == 0


def test_allow_command_writes_salted_fingerprint(
    git_repo: GitRepo, monkeypatch: pytest.MonkeyPatch, wg
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("WORKGROUP_PRIVACY_SALT", raising=False)
    git_repo.write("docs/vector.md", f"test vector: {KEY}\n")
    code, _, err = wg(
        "privacy",
        "allow",
        "docs/vector.md",
        "--line",
        "1",
        "--rule",
        "stripe-secret-key",
        "--reason",
        "published vector",
    )
    assert code == 0, err
    text = (git_repo.path / ".workgroup/privacy-allowlist.yml").read_text(encoding="utf-8")
    assert KEY not in text and KEY[8:20] not in text
    salt = load_salt(git_repo.path)
    assert salt is not None and (git_repo.path / ".git/workgroup/privacy-salt").is_file()
    assert fingerprint(salt, "stripe-secret-key", "docs/vector.md", KEY) in text
    assert fingerprint(b"other", "stripe-secret-key", "docs/vector.md", KEY) not in text
    assert wg("privacy", "scan", "docs/vector.md")[0] == 0
    assert wg("privacy", "allow", "docs/vector.md", "--line", "1", "--rule", "stripe-secret-key")[0] == 0
    assert (git_repo.path / ".workgroup/privacy-allowlist.yml").read_text(
        encoding="utf-8"
    ) == text  # idempotent
    # the same value elsewhere (another path) is not allowed
    git_repo.write("docs/other.md", f"{KEY}\n")
    assert wg("privacy", "scan", "docs/other.md")[0] == 1
    # no such finding: usage error, nothing written
    assert wg("privacy", "allow", "docs/vector.md", "--line", "1", "--rule", "email-address")[0] == 2


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


def test_malformed_allowlist_file_exit_2(git_repo: GitRepo, wg) -> None:  # type: ignore[no-untyped-def]
    git_repo.write("a.txt", KEY)
    git_repo.write(".workgroup/privacy-allowlist.yml", "allow: [\n")
    code, _, err = wg("privacy", "scan", "a.txt")
    assert code == 2 and "ALLOWLIST_INVALID" in err and "Traceback" not in err


def test_salt_from_environment_wins(git_repo: GitRepo) -> None:
    assert load_salt(git_repo.path, environ={"WORKGROUP_PRIVACY_SALT": "team"}) == b"team"
    assert load_salt(git_repo.path, environ={}) is None
    assert load_salt(git_repo.path, create=True, environ={}) == load_salt(git_repo.path, environ={})


def test_worktree_shares_the_salt(git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.commit("init", {"a.txt": "a\n"})
    salt = load_salt(git_repo.path, create=True, environ={})
    wt = tmp_path / "wt"
    git_repo.raw.add_worktree("wt", str(wt))
    assert load_salt(wt, environ={}) == salt
    assert os.path.isfile(git_repo.path / ".git" / "workgroup" / "privacy-salt")
