"""Where `workgroup init` takes the hook repository and rev from by default: the git URL and
commit pip recorded when it installed the toolkit (PEP 610 ``direct_url.json``), never a path of
this machine unless given, else the package metadata's URL at the release tag; and a refusal that
says what to do when none can be verified.

The repositories are real: a tagged copy of this toolkit served over loopback HTTP (git's dumb
HTTP protocol, static files), installed with a real ``pip install git+...`` into a throwaway venv.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support.harness import GitRepo
from support.source import source_copy

from toolkit.core.errors import EnvironmentFailure, InvalidInput, Refused
from toolkit.workflow import init as init_mod
from toolkit.workflow.hook_source import InstallOrigin, parse_direct_url, release_tag
from toolkit.workflow.init import ADVICE, hook_form

COMMIT = "0123456789abcdef0123456789abcdef01234567"


# --- parse_direct_url: PEP 610 documents as pip writes them ---------------------------------------


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        # pip install git+https://host/t.git@v1: the URL without "git+", the resolved commit
        (
            {
                "url": "https://h.example/t.git",
                "vcs_info": {"vcs": "git", "commit_id": COMMIT, "requested_revision": "v1"},
            },
            InstallOrigin("git", "https://h.example/t.git", COMMIT, "v1"),
        ),
        # no requested revision (the default branch was installed)
        (
            {"url": "ssh://git@h.example/t.git", "vcs_info": {"vcs": "git", "commit_id": COMMIT}},
            InstallOrigin("git", "ssh://git@h.example/t.git", COMMIT, None),
        ),
        # another VCS: nothing pre-commit could use as a git repo
        ({"url": "https://h.example/t", "vcs_info": {"vcs": "hg", "commit_id": COMMIT}}, None),
        # a commit id that is not a full git object name
        ({"url": "https://h.example/t.git", "vcs_info": {"vcs": "git", "commit_id": "v1"}}, None),
        # pip install . / pip install -e .: a directory of this machine
        (
            {"url": "file:///home/me/toolkit", "dir_info": {"editable": True}},
            InstallOrigin("directory", "file:///home/me/toolkit"),
        ),
        # a wheel or sdist URL
        (
            {"url": "https://h.example/t.whl", "archive_info": {}},
            InstallOrigin("archive", "https://h.example/t.whl"),
        ),
        ({"vcs_info": {"vcs": "git", "commit_id": COMMIT}}, None),  # no url
        ([], None),  # not an object
    ],
)
def test_parse_direct_url(document: object, expected: InstallOrigin | None) -> None:
    assert parse_direct_url(json.dumps(document)) == expected


def test_parse_direct_url_without_a_document() -> None:
    assert parse_direct_url(None) is None and parse_direct_url("") is None and parse_direct_url("{") is None


@pytest.mark.parametrize(
    ("url", "shareable"),
    [
        ("https://h.example/t.git", True),
        ("ssh://git@h.example/t.git", True),  # a user name is how ssh URLs look, not a secret
        ("file:///home/me/toolkit", False),  # a path on one machine
        ("FILE:///home/me/toolkit", False),
        ("https://me:s3cret@h.example/t.git", False),  # a password never goes into a shared file
        ("https://${TOKEN}@h.example/t.git", False),  # pip keeps env placeholders: not resolvable by others
    ],
)
def test_only_urls_every_clone_can_use_are_shareable(url: str, shareable: bool) -> None:
    assert InstallOrigin("git", url, COMMIT).shareable is shareable


# --- a real hook repository over loopback HTTP ------------------------------------------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base signature)
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    """(http URL, tagged commit, work clone) of a copy of this toolkit, tag ``release_tag()``."""
    base = tmp_path_factory.mktemp("hook-repo")
    work = base / "work"
    source_copy(work)  # the working tree as it is, uncommitted edits too
    repo = GitRepo(work)
    repo.commit("release")
    commit = str(repo.raw.head.target)
    repo.raw.references.create(f"refs/tags/{release_tag()}", repo.raw.head.target)
    root = base / "www"
    root.mkdir()
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(root / "toolkit.git")], check=True)
    subprocess.run(["git", "update-server-info"], cwd=root / "toolkit.git", check=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/toolkit.git", commit, work
    finally:
        server.shutdown()
        server.server_close()


def _closed_port_url() -> str:
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/toolkit.git"


def test_a_git_install_gives_its_url_and_commit(served: tuple[str, str, Path]) -> None:
    url, commit, _ = served
    origin = InstallOrigin("git", url, commit, release_tag())
    form = hook_form(local=False, hook_repo=None, hook_rev=None, origin_of=lambda: origin)
    assert (form.kind, form.repo, form.rev) == ("remote", url, commit)
    assert "installed from" in form.source
    # --hook-rev keeps the installed URL and is checked there
    tagged = hook_form(local=False, hook_repo=None, hook_rev=release_tag(), origin_of=lambda: origin)
    assert (tagged.repo, tagged.rev) == (url, release_tag())
    with pytest.raises(Refused) as missing:
        hook_form(local=False, hook_repo=None, hook_rev="v0.0.0-missing", origin_of=lambda: origin)
    assert missing.value.code == "HOOK_REV_NOT_FOUND"
    # --local: the install hint names the same URL and commit
    local = hook_form(local=True, hook_repo=None, hook_rev=None, origin_of=lambda: origin)
    hint = local.entry(["workgroup-privacy"])["hooks"][0]["entry"]
    assert isinstance(hint, str)
    assert f"pip install git+{url}@{commit}" in hint


def test_an_installed_commit_the_repository_no_longer_has_is_refused(served: tuple[str, str, Path]) -> None:
    url, _, _ = served
    origin = InstallOrigin("git", url, "1" * 40)
    with pytest.raises(Refused) as refused:
        hook_form(local=False, hook_repo=None, hook_rev=None, origin_of=lambda: origin)
    assert refused.value.code == "HOOK_REV_NOT_FOUND"


def test_an_unreachable_install_url_is_written_unchecked() -> None:
    # pip cloned that commit from that URL: it exists, the repository is only out of reach now
    url = _closed_port_url()
    form = hook_form(
        local=False, hook_repo=None, hook_rev=None, origin_of=lambda: InstallOrigin("git", url, COMMIT)
    )
    assert (form.repo, form.rev) == (url, COMMIT) and "not reachable now" in form.source
    # a rev the user chose there is not known to exist: refused as before
    with pytest.raises(EnvironmentFailure) as exc:
        hook_form(
            local=False, hook_repo=None, hook_rev="v9", origin_of=lambda: InstallOrigin("git", url, COMMIT)
        )
    assert exc.value.code == "HOOK_REPO_UNREACHABLE"


def test_hook_repo_wins_over_the_install_url(served: tuple[str, str, Path]) -> None:
    url, commit, work = served
    origin = InstallOrigin("git", _closed_port_url(), COMMIT)
    form = hook_form(local=False, hook_repo=str(work), hook_rev=None, origin_of=lambda: origin)
    assert (form.repo, form.rev, form.source) == (str(work), release_tag(), "")


@pytest.mark.parametrize(
    "origin",
    [
        InstallOrigin("directory", "file:///home/me/toolkit"),
        InstallOrigin("git", "file:///home/me/toolkit-clone", COMMIT),
        InstallOrigin("git", "https://me:s3cret@h.example/t.git", COMMIT),
        None,  # installed from a package index
    ],
    ids=["local-directory", "local-clone", "password-url", "index"],
)
def test_without_a_shareable_git_install_the_default_is_the_metadata_url(
    origin: InstallOrigin | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the metadata URL (here a loopback port nobody listens on) cannot be verified: the refusal
    # says what to do, names a local install path as such, and never echoes a password
    monkeypatch.setattr(init_mod, "repository_url", _closed_port_url)
    with pytest.raises(EnvironmentFailure) as exc:
        hook_form(local=False, hook_repo=None, hook_rev=None, origin_of=lambda: origin)
    message = exc.value.message
    assert exc.value.code == "HOOK_REPO_UNREACHABLE" and message.endswith(ADVICE)
    for step in ("pip install git+URL@TAG", "--hook-repo URL --hook-rev TAG_OR_COMMIT", "--local"):
        assert step in message
    assert "s3cret" not in message
    if origin is not None and origin.url.startswith("file:"):
        assert f"installed from {origin.url}, a path on this machine only, which goes into" in message
    # --local still works without any network
    local = hook_form(local=True, hook_repo=None, hook_rev=None, origin_of=lambda: origin)
    assert local.kind == "local"


def test_no_metadata_url_is_refused_with_the_same_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(init_mod, "repository_url", lambda: None)
    with pytest.raises(InvalidInput) as exc:
        hook_form(local=False, hook_repo=None, hook_rev=None, origin_of=lambda: None)
    assert exc.value.code == "HOOK_REPO_UNKNOWN" and exc.value.message.endswith(ADVICE)


def test_a_missing_release_tag_at_the_metadata_url_is_refused_with_the_advice(
    served: tuple[str, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _, _ = served
    monkeypatch.setattr(init_mod, "repository_url", lambda: url)
    monkeypatch.setattr(init_mod, "release_revs", lambda: ("0" * 40, "v0.0.0-never"))
    with pytest.raises(Refused) as exc:
        hook_form(local=False, hook_repo=None, hook_rev=None, origin_of=lambda: None)
    assert exc.value.code == "HOOK_REV_NOT_FOUND" and exc.value.message.endswith(ADVICE)
    assert "v0.0.0-never" in exc.value.message


# --- end to end: a real pip install from git URLs into a throwaway venv -----------------------------


def _throwaway_venv(where: Path) -> Path:
    """A venv whose own site-packages takes the toolkit; its dependencies come from this one's."""
    venv.EnvBuilder(with_pip=False).create(where)
    site = next(where.glob("lib/python*/site-packages"))
    deps = next(p for p in map(Path, sys.path) if p.name == "site-packages" and (p / "typer").is_dir())
    (site / "zz-deps.pth").write_text(f"{deps}\n", encoding="utf-8")  # after the venv's own entries
    return where / "bin"


def _pip_install(bindir: Path, spec: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(bindir / "python"), "install", "-q", "--no-deps", spec],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def _init(bindir: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(bindir / "workgroup"), "init", "--no-install", "--json", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )


def _ours(project: Path) -> dict[str, object]:
    data = yaml.safe_load((project / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    return next(r for r in data["repos"] if any(h["id"] == "workgroup-privacy-all" for h in r["hooks"]))


LEAK = '{"note": "' + "sk_" + "live_" + '4eC39HqLyjWD4rjtT1zdp7dcFAKE"}\n'  # synthetic, non-working key


@pytest.mark.slow
def test_pip_install_from_a_git_url_then_init_then_pre_commit(
    served: tuple[str, str, Path], git_repo: GitRepo, tmp_path: Path
) -> None:
    url, commit, _ = served
    bindir = _throwaway_venv(tmp_path / "venv")
    _pip_install(bindir, f"git+{url}@{release_tag()}")
    recorded = subprocess.run(
        [
            str(bindir / "python"),
            "-c",
            "from toolkit.workflow.hook_source import install_origin as o; print(o())",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert url in recorded and commit in recorded
    proc = _init(bindir, git_repo.path)
    assert proc.returncode == 0, proc.stderr
    ours = _ours(git_repo.path)
    assert (ours["repo"], ours["rev"]) == (url, commit)
    assert "from the git URL the toolkit was installed from, its commit" in proc.stderr
    # real pre-commit, with only git and python on PATH: it clones that URL at that commit and
    # installs the toolkit from it; the privacy hook catches the leak
    git_repo.write(".workgroup/notes/leak.json", LEAK)
    git_repo.write("README.md", "# project\n")
    git_repo.commit("project")
    bare = [p for p in ("/usr/bin", "/bin") if Path(p).is_dir()]
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")},
        "PATH": os.pathsep.join([*bare, str(Path(sys.base_prefix) / "bin")]),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "PRE_COMMIT_COLOR": "never",
    }
    run = subprocess.run(
        [str(Path(sys.executable).parent / "pre-commit"), "run", "--all-files"],
        cwd=git_repo.path,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
        env=env,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "workgroup privacy (all files)" in out and "Failed" in out, out
    assert ".workgroup/notes/leak.json" in out and "4eC39HqLyjWD" not in out


@pytest.mark.slow
def test_pip_install_from_a_local_clone_is_not_written_unless_given(
    served: tuple[str, str, Path], git_repo: GitRepo, tmp_path: Path
) -> None:
    _, commit, work = served
    bindir = _throwaway_venv(tmp_path / "venv")
    file_url = work.as_uri()
    _pip_install(bindir, f"git+{file_url}@{release_tag()}")
    proc = _init(bindir, git_repo.path)
    # the default falls back to the package metadata URL, which cannot be verified here either way
    assert proc.returncode in (1, 3), proc.stdout + proc.stderr
    assert f"installed from {file_url}, a path on this machine only" in proc.stderr
    assert ADVICE in proc.stderr and json.loads(proc.stdout)["error"]["code"].startswith("HOOK_")
    assert not (git_repo.path / ".pre-commit-config.yaml").exists()
    # given explicitly, the local clone is written (and its commit checked there)
    given = _init(bindir, git_repo.path, "--hook-repo", str(work), "--hook-rev", commit)
    assert given.returncode == 0, given.stderr
    assert (_ours(git_repo.path)["repo"], _ours(git_repo.path)["rev"]) == (str(work), commit)
