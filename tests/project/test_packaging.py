"""The wheel, as pre-commit and ``pip install`` see it (DESIGN "Files and packaging").

The wheel is built from a copy of the working tree (so the build leaves nothing in the
checkout), its file list is checked against the source tree, and it is installed without
``-e`` into a fresh virtual environment whose dependencies come from the package index, exactly
as pre-commit installs a hook repository. Every console script then runs from that environment,
outside the checkout, so nothing can be picked up from the source tree by accident.

The build and the install happen once per module (a module-scoped fixture) and every check
shares them.
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import pytest
import yaml  # type: ignore[import-untyped,unused-ignore]
from support.entry_samples import CAPSULE_RECORD, HOOK_SAMPLES, ROUTE_REQUEST, capsule_input_text, tamper
from support.harness import GitRepo

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SCRIPTS: dict[str, str] = PYPROJECT["project"]["scripts"]

# Source folder -> where its files live inside the wheel (the package-dir mapping of pyproject.toml).
MAPPED = {
    "toolkit": "toolkit",
    "templates": "toolkit/templates",
    "corpus": "toolkit/corpus",
    "schemas": "toolkit/schemas",
    "hooks": "toolkit/hooks",  # the design card's top-level hooks/ folder
}
DATA_FOLDERS = ("templates", "corpus", "schemas")

pytestmark = pytest.mark.slow


# --- fast guard on the build configuration (no build needed) -----------------------------------


def test_every_source_package_is_configured() -> None:
    # a new sub-package of toolkit/ that is missing from [tool.setuptools] packages would be left
    # out of the wheel (and only the editable install would still work)
    configured = set(PYPROJECT["tool"]["setuptools"]["packages"])
    package_dir: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]
    found = {
        ".".join(p.relative_to(ROOT).parts[:-1])
        for p in (ROOT / "toolkit").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert found <= configured, sorted(found - configured)
    assert {package_dir[f"toolkit.{name}"] for name in DATA_FOLDERS} == set(DATA_FOLDERS)
    assert "hooks" not in configured and "tests" not in " ".join(configured)
    # the card's top-level hooks/ folder is the toolkit.hooks package: no generic `hooks` package
    assert package_dir["toolkit.hooks"] == "hooks" and "toolkit.hooks" in configured
    assert (ROOT / "hooks" / "__init__.py").is_file() and not (ROOT / "toolkit" / "hooks").exists()


def test_the_development_install_imports_the_hooks_from_the_top_level_folder(tmp_path: Path) -> None:
    """The editable install maps toolkit.hooks to hooks/ (outside the repository folder, where
    no `hooks` is importable at all), as the wheel installs it under toolkit/."""
    code = (
        "import importlib.util, json\n"
        "import toolkit.hooks.privacy as p\n"
        "print(json.dumps({'origin': p.__file__, 'top': importlib.util.find_spec('hooks') is not None}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    facts = json.loads(proc.stdout)
    assert Path(facts["origin"]).resolve() == (ROOT / "hooks" / "privacy.py").resolve()
    assert facts["top"] is False


# --- build and install once --------------------------------------------------------------------


def _clean_env(home: Path, bindir: Path | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PRE_COMMIT_HOME")
    }
    env["HOME"] = str(home)
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["CM_WORKFLOW_LOG_HOME"] = str(home / "cm-logs")
    if bindir is not None:
        env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    return env


def _working_tree_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode("utf-8")
    return sorted(rel for rel in out.split("\0") if rel and (ROOT / rel).is_file())


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The working tree (tracked and untracked, not ignored), copied so the build writes nowhere else."""
    dest = tmp_path_factory.mktemp("src") / "workgroup-toolkit"
    for rel in _working_tree_files():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)
    return dest


@pytest.fixture(scope="module")
def wheel(source_copy: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    home = tmp_path_factory.mktemp("build-home")
    # the same build pip runs for `pip install .` (isolated, backend from [build-system])
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out), "."],
        cwd=source_copy,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=_clean_env(home),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels = list(out.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


@pytest.fixture(scope="module")
def venv_bin(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment with the wheel installed (not editable) and its dependencies."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    home = tmp_path_factory.mktemp("install-home")
    env = _clean_env(home)
    # without its own pip (ensurepip is slow); the test runner's pip installs into it
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300, env=env
    )
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(bindir / "python"),
            "install",
            "--no-compile",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    yield bindir


@pytest.fixture
def run_env(tmp_path: Path, venv_bin: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return _clean_env(home, venv_bin)


def venv_python(venv_bin: Path, code: str, cwd: Path, env: dict[str, str]) -> str:
    """Run ``code`` with the venv's interpreter; return its stdout."""
    proc = subprocess.run(
        [str(venv_bin / "python"), "-c", code],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def run_script(
    venv_bin: Path,
    script: str,
    *args: str,
    cwd: Path,
    env: dict[str, str],
    stdin: str | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run an installed console script of the venv (its generated launcher, not ``python -m``)."""
    return subprocess.run(
        [str(venv_bin / script), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )


# --- the wheel's contents ----------------------------------------------------------------------


def test_only_top_level_package_is_toolkit(wheel: Path, wheel_names: list[str]) -> None:
    top = {name.split("/")[0] for name in wheel_names}
    dist_info = {t for t in top if t.endswith(".dist-info")}
    assert len(dist_info) == 1
    assert top - dist_info == {"toolkit"}
    for stray in ("hooks", "tests", "templates", "corpus", "schemas"):
        assert not any(name.startswith(f"{stray}/") for name in wheel_names), stray
    assert not any(part == "tests" for name in wheel_names for part in name.split("/"))
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in wheel_names)
    top_level = f"{dist_info.pop()}/top_level.txt"
    if top_level in wheel_names:  # older setuptools write it; when present it must agree
        with zipfile.ZipFile(wheel) as zf:
            assert zf.read(top_level).decode("utf-8").split() == ["toolkit"]


def test_wheel_carries_every_module_hook_and_data_file(source_copy: Path, wheel_names: list[str]) -> None:
    names = set(wheel_names)
    expected: set[str] = set()
    for folder, inside in MAPPED.items():
        for path in (source_copy / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                expected.add(str(PurePosixPath(inside, *path.relative_to(source_copy / folder).parts)))
    assert expected - names == set()
    # the named pieces the commands need at run time
    for must in (
        "toolkit/hooks/privacy.py",
        "toolkit/hooks/verify.py",
        "toolkit/templates/handoff.md",
        "toolkit/templates/config.yml",
        "toolkit/corpus/manifest.json",
    ):
        assert must in names, must
    for prefix in ("toolkit/hooks/", "toolkit/templates/", "toolkit/corpus/", "toolkit/schemas/"):
        assert any(n.startswith(prefix) for n in names), prefix
    assert sum(n.startswith("toolkit/corpus/scenarios/") for n in names) >= 40
    assert any(n.startswith("toolkit/schemas/") and n.endswith(".schema.json") for n in names)


def test_console_scripts_match_pyproject_and_hook_manifest(wheel: Path, wheel_names: list[str]) -> None:
    entry_points = next(n for n in wheel_names if n.endswith(".dist-info/entry_points.txt"))
    parser = configparser.ConfigParser()
    with zipfile.ZipFile(wheel) as zf:
        parser.read_string(zf.read(entry_points).decode("utf-8"))
    assert dict(parser["console_scripts"]) == SCRIPTS
    manifest = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert {hook["entry"] for hook in manifest} <= set(SCRIPTS)


# --- the installed package, run from the fresh environment -------------------------------------


def test_installed_package_is_the_wheel_not_the_checkout(
    venv_bin: Path, run_env: dict[str, str], tmp_path: Path
) -> None:
    code = (
        "import importlib.util, json, toolkit\n"
        "from toolkit.infra.resources import data_dir\n"
        "print(json.dumps({'toolkit': toolkit.__file__,\n"
        " 'hooks': importlib.util.find_spec('hooks') is not None,\n"
        " 'tk_hooks': importlib.util.find_spec('toolkit.hooks.privacy').origin,\n"
        " 'data': {n: str(data_dir(n)) for n in ('templates', 'corpus', 'schemas')}}))\n"
    )
    facts = json.loads(venv_python(venv_bin, code, tmp_path, run_env))
    site = venv_bin.parent.resolve()
    assert Path(facts["toolkit"]).resolve().is_relative_to(site)
    assert Path(facts["tk_hooks"]).resolve().is_relative_to(site)
    assert facts["hooks"] is False  # never a top-level `hooks` import
    for name, where in facts["data"].items():
        folder = Path(where).resolve()
        assert folder.is_relative_to(site) and folder.name == name and any(folder.iterdir()), name


def test_workgroup_help(venv_bin: Path, run_env: dict[str, str], tmp_path: Path) -> None:
    proc = run_script(venv_bin, "workgroup", "--help", cwd=tmp_path, env=run_env)
    assert proc.returncode == 0, proc.stderr
    for command in ("runtime", "demo", "verify", "privacy", "capsule", "boundary"):
        assert command in proc.stdout, command


def test_workgroup_demo(venv_bin: Path, run_env: dict[str, str], tmp_path: Path) -> None:
    code = "import json; from toolkit.demo.steps import STEPS; print(json.dumps(STEPS))"
    steps = json.loads(venv_python(venv_bin, code, tmp_path, run_env))
    assert len(steps) >= 9
    proc = run_script(venv_bin, "workgroup", "demo", cwd=tmp_path, env=run_env, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    headings = [line for line in proc.stdout.splitlines() if line.startswith("== ")]
    # one numbered heading per step, in order: each step ran and named itself
    assert [h.split(".")[0] for h in headings] == [f"== {i}" for i in range(1, len(steps) + 1)]
    assert all(len(h.split(". ", 1)[1]) > 5 for h in headings)
    assert "!! step" not in proc.stdout
    assert proc.stdout.rstrip().endswith("every step behaved as narrated")
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("hook", [h for h, (_, _, bad) in HOOK_SAMPLES.items() if bad is not None])
def test_file_hook_from_installed_wheel(
    hook: str, venv_bin: Path, run_env: dict[str, str], tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    rel, clean, failing = HOOK_SAMPLES[hook]
    assert failing is not None
    repo.write(rel, clean)
    proc = run_script(venv_bin, hook, rel, cwd=repo.path, env=run_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    repo.write(rel, failing)
    proc = run_script(venv_bin, hook, rel, cwd=repo.path, env=run_env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_verify_hook_from_installed_wheel(venv_bin: Path, run_env: dict[str, str], tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("init", {"src/api.py": "def handler():\n    return 'ok'\n"})
    repo.write("tmp/capsule.json", capsule_input_text())
    proc = run_script(
        venv_bin, "workgroup", "capsule", "seal", "tmp/capsule.json", "--write", cwd=repo.path, env=run_env
    )
    assert proc.returncode == 0, proc.stderr
    (repo.path / "tmp" / "capsule.json").unlink()
    repo.commit("capsule")
    proc = run_script(venv_bin, "workgroup-verify-hook", cwd=repo.path, env=run_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = repo.path / CAPSULE_RECORD
    record.write_text(tamper(record.read_text(encoding="utf-8")), encoding="utf-8")
    proc = run_script(venv_bin, "workgroup-verify-hook", cwd=repo.path, env=run_env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert CAPSULE_RECORD in proc.stdout + proc.stderr


def test_cm_usage_report_on_empty_log_home(venv_bin: Path, run_env: dict[str, str], tmp_path: Path) -> None:
    proc = run_script(venv_bin, "cm-usage-report", "--json", cwd=tmp_path, env=run_env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["summary"]["runs"] == 0 and report["groups"] == []


def test_runtime_route_from_installed_wheel(venv_bin: Path, run_env: dict[str, str], tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("init", {"src/api.py": "x = 1\n"})
    proc = run_script(
        venv_bin, "workgroup", "runtime", "route", cwd=repo.path, env=run_env, stdin=json.dumps(ROUTE_REQUEST)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1
    frame = json.loads(lines[0])
    assert frame["ok"] is True and frame["operation"] == "route"
    assert isinstance(frame["result"]["mode"], str) and frame["result"]["reason_codes"]
