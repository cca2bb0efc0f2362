"""``workgroup privacy scan --history``: real repositories with real commits (git CLI), each
commit's added lines scanned once, the allowlist honoured, SARIF validated with the SARIF
multitool, GitHub annotations. Fake secrets are built at run time: no literal sits here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.harness import cli

from toolkit.privacy.providers import base62_crc32

STRIPE = "sk_" + "live_" + "a1B2c3D4e5F6g7H8i9J0kLmN"
BODY = "Zq8Xw2Lm4Np6Rt0Vy3Bd5Fh7Jk9Mc1"
GITHUB = "gh" + "p_" + BODY + base62_crc32(BODY)


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "r"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return path


def commit(repo: Path, files: dict[str, str | bytes], message: str = "c") -> str:
    for rel, text in files.items():
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def scan(repo: Path, *args: str, env: dict[str, str | None] | None = None) -> tuple[int, str, str]:
    code, out, err = cli("privacy", "scan", "--history", *args, cwd=repo, env=env)
    return code, out, err


def test_secret_added_then_removed_is_found_at_the_commit_that_added_it(repo: Path) -> None:
    commit(repo, {"app.py": "x = 1\n"})
    second = commit(repo, {"app.py": f"x = 1\nkey = '{STRIPE}'\n"})
    commit(repo, {"app.py": "x = 1\n"})
    code, out, err = scan(repo)
    assert code == 1
    assert out.splitlines() == [f"{second[:12]}:app.py:2:8: stripe-secret-key secret: sk_l********"]
    assert STRIPE not in out + err
    assert "in 3 commits" in err
    # the working tree is clean now: a file scan finds nothing
    assert cli("privacy", "scan", cwd=repo).exit_code == 0


def test_each_commit_once_over_branches_and_merges(repo: Path) -> None:
    commit(repo, {"a.txt": "base\n"})
    git(repo, "checkout", "-q", "-b", "side")
    side = commit(repo, {"side.py": f"token = '{GITHUB}'\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, {"b.txt": "other\n"})
    git(repo, "merge", "-q", "--no-ff", "-m", "merge", "side")
    code, out, _ = scan(repo, "--format", "json")
    assert code == 1
    doc = json.loads(out)
    commits = [f["extra"]["commit"] for f in doc["findings"]]
    assert commits == [side]  # found once, in the side commit, not again in the merge
    assert doc["summary"]["commits"] == 4
    # --all and an explicit range list the same commits once
    assert json.loads(scan(repo, "--all", "--format", "json")[1])["summary"]["commits"] == 4
    code, out, _ = scan(repo, "side~1..main", "--format", "json")
    assert [f["extra"]["commit"] for f in json.loads(out)["findings"]] == [side]


def test_a_merge_reports_only_lines_in_no_parent(repo: Path) -> None:
    commit(repo, {"conf.py": "a = 1\n"})
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, {"conf.py": "a = 2\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, {"conf.py": "a = 3\n"})
    subprocess.run(["git", "merge", "-q", "side"], cwd=repo, capture_output=True, check=False)
    (repo / "conf.py").write_text(f"a = 4\nkey = '{STRIPE}'\n", encoding="utf-8")
    git(repo, "add", "conf.py")
    git(repo, "commit", "-q", "-m", "resolve")
    merge = git(repo, "rev-parse", "HEAD")
    code, out, _ = scan(repo)
    assert code == 1
    assert out.splitlines() == [f"{merge[:12]}:conf.py:2:8: stripe-secret-key secret: sk_l********"]


def test_allowlist_honoured_by_rule_path_and_fingerprint(repo: Path) -> None:
    commit(repo, {"docs/example.md": f"use `{STRIPE}` in the sample\n"})
    assert scan(repo)[0] == 1
    code, out, err = cli(
        "privacy", "allow", "docs/example.md", "--line", "1", "--rule", "stripe-secret-key",
        "--reason", "documented sample", cwd=repo,
    )  # fmt: skip
    assert code == 0, err
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "allow")
    assert scan(repo)[0] == 0
    # the same value in another path is not allowed
    commit(repo, {"src/real.py": f"k = '{STRIPE}'\n"})
    code, out, _ = scan(repo)
    assert code == 1 and ":src/real.py:1:" in out and "docs/example.md" not in out


def test_bad_range_is_a_coded_usage_error(repo: Path) -> None:
    commit(repo, {"a.txt": "a\n"})
    for bad in ("no-such-branch", "HEAD..nope", "--output=/tmp/x"):
        code, out, err = scan(repo, "--", bad) if bad.startswith("-") else scan(repo, bad)
        assert code == 2, (bad, err)
        assert "BAD_REVISION" in err and "Traceback" not in err
    code, out, _ = scan(repo, "nope", "--format", "json")
    assert json.loads(out)["error"]["code"] == "BAD_REVISION"
    code, out, err = scan(repo, "nope", "--format", "sarif")
    assert (code, out) == (2, "") and "BAD_REVISION" in err  # no log rather than a broken one


def test_outside_a_repository_is_an_environment_error(tmp_path: Path) -> None:
    code, _, err = cli("privacy", "scan", "--history", cwd=tmp_path)
    assert code == 3 and "NOT_A_REPOSITORY" in err


def _b64(seed: bytes) -> str:
    import base64
    import hashlib

    return base64.b64encode(hashlib.sha512(seed).digest()[:48]).decode()


def test_binary_blob_scanned(repo: Path) -> None:
    blob = b"\x00\x01\x02header\x00" + f"aws={GITHUB}".encode() + b"\x00\xff" * 20
    added = commit(repo, {"data.bin": blob})
    commit(repo, {"other.bin": blob})  # the same blob under another name: read once, found once
    code, out, _ = scan(repo)
    assert code == 1
    assert out.splitlines() == [f"{added[:12]}:data.bin:1:15: github-token secret: ghp_********"]


def test_certificate_body_changed_alone_is_cleared_by_the_whole_file(repo: Path) -> None:
    from toolkit.privacy.engine import scan_text
    from toolkit.privacy.types import Context

    one, two, three = _b64(b"one"), _b64(b"two"), _b64(b"three")
    assert scan_text(three + "\n", Context.SOURCE)  # alone, the line looks like a secret
    cert = "-----BEGIN CERTIFICATE-----\n{}\n{}\n-----END CERTIFICATE-----\n"
    commit(repo, {"ca.pem": cert.format(one, two)})
    commit(repo, {"ca.pem": cert.format(one, three)})  # adds only a body line
    assert scan(repo) == (0, "", "privacy: 0 findings in 2 commits\n")
    # the same line in a private key block stays a finding
    key = "-----BEGIN RSA PRIVATE KEY-----\n{}\n{}\n-----END RSA PRIVATE KEY-----\n"
    added = commit(repo, {"k.pem": key.format(one, two)})
    rotated = commit(repo, {"k.pem": key.format(three, _b64(b"four"))})  # both body lines new
    code, out, _ = scan(repo)
    assert code == 1
    assert out.splitlines() == [
        f"{added[:12]}:k.pem:1:1: private-key secret: ----********",
        f"{rotated[:12]}:k.pem:2:1: private-key secret: {three[:4]}********",  # once per block
    ]


def test_progress_on_request(repo: Path) -> None:
    # 600 real commits in one go (git fast-import), each changing a file
    stream = []
    for i in range(600):
        data = f"{i}\n"
        stream += [
            "commit refs/heads/main",
            f"committer T <t@example.invalid> {1700000000 + i} +0000",
            "data 1",
            "c",
            "M 100644 inline n.txt",
            f"data {len(data)}",
            data,
        ]
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=repo, input="\n".join(stream) + "\n", text=True, check=True
    )
    code, out, err = scan(repo, "--progress")
    assert code == 0 and out == ""
    assert "privacy: 250/600 commits\n" in err and "privacy: 500/600 commits\n" in err
    assert "privacy: 0 findings in 600 commits" in err
    assert "/600 commits" not in scan(repo)[2]  # not on a pipe unless asked


def test_annotations_in_github_actions(repo: Path) -> None:
    commit(repo, {"a,b:c.py": f"k = '{STRIPE}'\n"})
    code, out, _ = scan(repo, env={"GITHUB_ACTIONS": "true"})
    lines = out.splitlines()
    assert code == 1 and len(lines) == 2
    assert lines[1] == "::error file=a%2Cb%3Ac.py,line=1,col=6,title=stripe-secret-key::secret: sk_l********"
    assert "::" not in scan(repo)[1]  # only inside a GitHub Actions job


def test_annotation_escaping() -> None:
    from toolkit.core.findings import Finding
    from toolkit.core.sarif import annotation

    f = Finding("p%a\nth,x:y", 3, 0, "r:1,2", "50% done\r\nnext")
    assert annotation(f) == "::error file=p%25a%0Ath%2Cx%3Ay,line=3,title=r%3A1%2C2::50%25 done%0D%0Anext"
    assert annotation(Finding("f", 0, 0, "c", "m", severity="warning")) == "::warning file=f,title=c::m"


def _multitool() -> list[str] | None:
    npx = shutil.which("npx")
    if npx is None:
        return None
    probe = subprocess.run(
        [npx, "-y", "@microsoft/sarif-multitool", "--version"], capture_output=True, text=True, timeout=300
    )
    return [npx, "-y", "@microsoft/sarif-multitool"] if probe.returncode == 0 else None


def validate_sarif(path: Path, tmp_path: Path) -> list[str]:
    """The errors and warnings the SARIF multitool's ``validate`` reports for ``path``."""
    tool = _multitool()
    if tool is None:
        pytest.skip("the SARIF multitool (npm @microsoft/sarif-multitool) cannot be fetched here")
    result = tmp_path / f"{path.stem}.validation.sarif"
    done = subprocess.run(
        [*tool, "validate", str(path), "-o", str(result), "-q"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(result.read_text(encoding="utf-8"))
    return [
        f"{r['ruleId']} {r.get('level')} {r['message'].get('arguments')}"
        for r in doc["runs"][0].get("results", [])
        if r.get("level") in ("error", "warning")
    ]


def test_validator_rejects_a_broken_log(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sarif"
    bad.write_text('{"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}', encoding="utf-8")
    assert validate_sarif(bad, tmp_path)  # the check below can fail


def test_history_and_file_scan_sarif_validate(repo: Path, tmp_path: Path) -> None:
    commit(repo, {"src/app.py": "x = 1\n"})
    added = commit(
        repo, {"src/app.py": f"x = 1\nkey = '{STRIPE}'\n", "dir with space/é.py": f"t='{GITHUB}'\n"}
    )
    code, out, _ = scan(repo, "--format", "sarif")
    assert code == 1 and STRIPE not in out and GITHUB not in out
    doc = json.loads(out)
    run = doc["runs"][0]
    assert doc["version"] == "2.1.0" and run["tool"]["driver"]["name"] == "workgroup privacy"
    ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in run["results"]} == ids
    first = next(r for r in run["results"] if r["ruleId"] == "stripe-secret-key")
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "src/app.py"
    assert loc["region"] == {"startLine": 2, "startColumn": 8}
    assert first["properties"]["commit"] == added
    assert first["partialFingerprints"]["privacy/v1"].startswith("sha256:")
    history = tmp_path / "history.sarif"
    history.write_text(out, encoding="utf-8")
    code, files_out, _ = cli("privacy", "scan", "--format", "sarif", cwd=repo)
    assert code == 1
    files = tmp_path / "files.sarif"
    files.write_text(files_out, encoding="utf-8")
    clean = tmp_path / "clean.sarif"
    commit(repo, {"src/app.py": "x = 1\n", "dir with space/é.py": "t = 2\n"})
    clean.write_text(cli("privacy", "scan", "--format", "sarif", cwd=repo).stdout, encoding="utf-8")
    for log in (history, files, clean):
        assert validate_sarif(log, tmp_path) == [], log.name


def test_verify_sarif_validates_and_matches_the_findings(repo: Path, tmp_path: Path) -> None:
    commit(repo, {".workgroup/workgroups/wg/capsules/c1.json": "{not json"})
    code, out, err = cli("verify", "--format", "sarif", cwd=repo)
    assert code == 1, err
    run = json.loads(out)["runs"][0]
    assert run["tool"]["driver"]["name"] == "workgroup verify"
    result = run["results"][0]
    assert result["ruleId"] == "unreadable"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        ".workgroup/workgroups/wg/capsules/c1.json"
    )
    assert "region" not in result["locations"][0]["physicalLocation"]  # a whole-file finding
    assert run["tool"]["driver"]["rules"][0]["help"]["text"].startswith("make the file")
    # the typer command (what --help documents) writes the same log
    code, typer_out, _ = cli("verify", "--format", "sarif", "--help", cwd=repo)
    assert "sarif" in typer_out
    log = tmp_path / "verify.sarif"
    log.write_text(out, encoding="utf-8")
    assert validate_sarif(log, tmp_path) == []
    # text output in a GitHub Actions job: the finding line, then its annotation
    code, out, _ = cli("verify", cwd=repo, env={"GITHUB_ACTIONS": "true"})
    assert out.splitlines()[-1].startswith(
        "::error file=.workgroup/workgroups/wg/capsules/c1.json,title=unreadable::"
    )


def test_a_shallow_clone_says_what_it_cannot_scan(repo: Path, tmp_path: Path) -> None:
    first = commit(repo, {"a.py": f"k = '{STRIPE}'\n"})
    for i in range(3):
        commit(repo, {"n.txt": f"{i}\n"})
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{repo}", str(shallow))
    code, out, err = scan(shallow)
    assert "shallow clone" in err and "in 2 commits" in err
    # the boundary commit is read whole: the secret still in its tree is found there
    boundary = git(shallow, "rev-parse", "HEAD~1")
    assert code == 1 and out.startswith(f"{boundary[:12]}:a.py:1:") and first[:12] not in out
    assert "shallow" not in scan(repo)[2]


def test_file_scan_sarif_uris_are_relative_to_the_repository_root(repo: Path) -> None:
    commit(repo, {"pkg/sub/app.py": f"k = '{STRIPE}'\n"})
    code, out, _ = cli("privacy", "scan", "--format", "sarif", ".", cwd=repo / "pkg")
    assert code == 1
    [result] = json.loads(out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/sub/app.py"
    assert cli("privacy", "scan", ".", cwd=repo / "pkg").stdout.startswith("sub/app.py:1:")


def test_odd_paths_and_header_like_content_are_parsed_right(repo: Path) -> None:
    odd = 'dir with space/qu"ote\tand é.py'
    # added lines that look like diff headers must stay content
    tricky = "++ b/not-a-header\n-- a/nor-this\n@@ -1 +1 @@\ndiff --git a/x b/x\n"
    added = commit(repo, {odd: f"{tricky}k = '{STRIPE}'\n", "plain.txt": "x\n"})
    code, out, _ = scan(repo, "--format", "json")
    [finding] = json.loads(out)["findings"]
    assert (finding["extra"]["file"], finding["line"], finding["extra"]["commit"]) == (odd, 5, added)
    # a rename that also adds a line: only the new line, under the new name
    git(repo, "mv", "plain.txt", "renamed.txt")
    (repo / "renamed.txt").write_text(f"x\nt = '{GITHUB}'\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "rename")
    code, out, _ = scan(repo, "HEAD~1..HEAD")
    assert code == 1 and out.splitlines()[0].split(":", 1)[1].startswith("renamed.txt:2:")
    # a name with a space (git ends its +++ line with a tab) is the allowlist's path as it is
    spaced = commit(repo, {"my file.py": f"k = '{STRIPE}'\n"})
    code, out, _ = scan(repo, "HEAD~1..HEAD")
    assert out.splitlines() == [f"{spaced[:12]}:my file.py:1:6: stripe-secret-key secret: sk_l********"]


def test_a_long_line_and_a_large_file_are_read_in_bounded_pieces(repo: Path) -> None:
    from toolkit.privacy.history import PART_CHARS, PIECE_BYTES

    long_line = "x" * (PIECE_BYTES * 2 + 100) + f" k='{STRIPE}'\n"
    many = "".join(f"line {i} of filler text\n" for i in range(PART_CHARS // 20)) + f"t = '{GITHUB}'\n"
    added = commit(repo, {"long.txt": long_line, "big.txt": many})
    code, out, _ = scan(repo, "--format", "json")
    found = {(f["extra"]["file"], f["line"], f["col"], f["code"]) for f in json.loads(out)["findings"]}
    assert found == {
        ("long.txt", 1, PIECE_BYTES * 2 + 100 + 5, "stripe-secret-key"),
        ("big.txt", many.count("\n"), 6, "github-token"),
    }, found
    assert code == 1 and added


@pytest.mark.parametrize(
    ("argv", "fmt"),
    [
        (["--json", "--format", "text"], "json"),  # --json is --format json, in either order
        (["--format", "text", "--json"], "json"),
        (["--format", "sarif"], "sarif"),
        ([], "text"),
    ],
)
def test_format_options(argv: list[str], fmt: str, repo: Path) -> None:
    commit(repo, {"a.txt": "nothing private\n"})
    code, out, _ = cli("privacy", "scan", "a.txt", *argv, cwd=repo)
    assert code == 0
    if fmt == "text":
        assert out == ""  # no finding: nothing on stdout, the summary is on stderr
    else:
        doc = json.loads(out)
        assert ("runs" in doc) is (fmt == "sarif") and ("findings" in doc) is (fmt == "json")


@pytest.mark.parametrize(
    "argv",
    [
        ["--all"],  # --all belongs to --history
        ["--history", "--all-files"],
        ["--format", "xml"],
    ],
)
def test_bad_option_combinations_are_usage_errors(argv: list[str], repo: Path) -> None:
    code, out, err = cli("privacy", "scan", *argv, cwd=repo)
    assert code == 2 and out == "" and "error[USAGE]" in err
