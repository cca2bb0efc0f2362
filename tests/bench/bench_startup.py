"""Start-up cost of the hot entry points: import totals (``python -X importtime``) and wall time.

Run on purpose (not collected by pytest):

    .venv/bin/python tests/bench/bench_startup.py [--runs 10] [--bin DIR] [--help-only]

For each case it prints the median and min wall-clock time of the console script over ``--runs``
runs (the generated launcher, as a user or a hook manager runs it), the median CPU time (user +
sys) of that process, which is steadier than wall time on a shared machine, the summed cumulative import
time of the top-level imports of one ``-X importtime`` run, the number of modules loaded, and
which heavy libraries (typer, pydantic, pygit2, yaml, cryptography) were loaded. ``--bin`` points
at another environment's scripts folder (e.g. a fresh venv with the wheel installed); by default
the scripts beside the running interpreter are measured. A bare interpreter start is the baseline.
The cases include ``workgroup --help`` and the ``--help`` of every command and sub-command (read
from the CLI's own table; ``--help-only`` times only those). Every ``--help`` case is judged against
``--budget-ms`` (200): PASS (median wall within it), CPU-PASS (only the CPU time is: the machine was
busy) or FAIL, and two summary lines give the slowest case and the verdict over all of them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests/ folder
from support.entry_samples import CAPSULE_INPUT  # noqa: E402  (shared with tests/cli/test_startup.py)

HEAVY = ("typer", "click", "pydantic", "pydantic_core", "pygit2", "yaml", "cryptography")

# Calls an entry point as its launcher does, then reports the loaded modules on stderr's last line.
_SHIM = """\
import importlib, json, sys
target = sys.argv[1]
sys.argv = sys.argv[2:]
module, _, func = target.partition(":")
try:
    code = getattr(importlib.import_module(module), func)()
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
sys.stderr.write("\\n@@modules " + json.dumps(sorted(sys.modules)) + "\\n")
raise SystemExit(code)
"""

NOTE = ".workgroup/notes/note.md"
ROUTE = json.dumps({"input": {"task_id": "t1", "role": "builder", "owned_files": ["src/api.py"]}}) + "\n"


@dataclass
class Case:
    label: str
    script: str
    args: tuple[str, ...]
    stdin: str | None = None


def _entry_points(root: Path) -> dict[str, str]:
    import tomllib

    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    scripts: dict[str, str] = data["project"]["scripts"]
    return scripts


def _cases() -> list[Case]:
    return [
        Case("workgroup runtime route", "workgroup", ("runtime", "route"), ROUTE),
        Case(
            "workgroup runtime --batch route (10 lines)",
            "workgroup",
            ("runtime", "--batch", "route"),
            ROUTE * 10,
        ),
        Case("workgroup --version", "workgroup", ("--version",)),
        Case("workgroup-privacy-hook note.md", "workgroup-privacy-hook", (NOTE,)),
        Case("workgroup-privacy-all-hook note.md", "workgroup-privacy-all-hook", (NOTE,)),
        Case("workgroup privacy scan note.md", "workgroup", ("privacy", "scan", NOTE)),
        Case("workgroup-docs-claims-hook README.md", "workgroup-docs-claims-hook", ("README.md",)),
        Case("workgroup-skills-hook SKILL.md", "workgroup-skills-hook", ("skills/deploy/SKILL.md",)),
        Case("workgroup-verify-hook (1 capsule)", "workgroup-verify-hook", ()),
        Case("cm-usage-report --json (1 event)", "cm-usage-report", ("--json",)),
    ]


def _help_cases() -> list[Case]:
    """``workgroup --help`` and the ``--help`` of every command and sub-command, read from the CLI's
    own table."""
    from toolkit.cli import COMMAND_MODULES, load_command

    cases = [Case("workgroup --help", "workgroup", ("--help",))]
    for module in COMMAND_MODULES:
        name, command = load_command(module)
        cases.append(Case(f"workgroup {name} --help", "workgroup", (name, "--help")))
        for sub in getattr(command, "commands", {}):
            cases.append(Case(f"workgroup {name} {sub} --help", "workgroup", (name, sub, "--help")))
    return cases


def _make_repo(root: Path, bindir: Path, env: dict[str, str]) -> None:
    """A small real repository: a few files, one sealed capsule, everything committed."""
    files = {
        "src/api.py": "def handler():\n    return 'ok'\n",
        "README.md": "# demo\n\nA stable prefix lowers billed cost and rediscovery.\n",
        NOTE: "# Timeout work\n\nAdd a request timeout to the API handler.\n",
        "skills/deploy/SKILL.md": (
            "---\nname: deploy\ndescription: Use when the user asks to ship a release.\n---\nShip it.\n"
        ),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True, env=env)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run([*git, "commit", "-q", "-m", "init"], cwd=root, check=True, env=env)
    capsule = CAPSULE_INPUT
    source = Path(env["HOME"]) / "capsule.json"
    source.write_text(json.dumps(capsule), encoding="utf-8")
    subprocess.run(
        [str(bindir / "workgroup"), "capsule", "seal", str(source), "--write"],
        cwd=root,
        check=True,
        env=env,
        capture_output=True,
    )
    subprocess.run([*git, "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run([*git, "commit", "-q", "-m", "capsule"], cwd=root, check=True, env=env)
    event = ["--workflow", "cm-ai", "--event", "run_started", "--runtime", "codex", "--detail", "bench"]
    subprocess.run(
        [str(bindir / "cm-log-event"), *event, "--project-root", str(root)],
        cwd=root,
        check=True,
        env=env,
        capture_output=True,
    )


@dataclass
class Timing:
    median: float  # wall seconds
    low: float
    cpu: float  # median user+sys seconds of the child: steadier than wall on a shared machine
    code: int


def _wall(cmd: list[str], stdin: str | None, cwd: Path, env: dict[str, str], runs: int) -> Timing:
    times: list[float] = []
    cpu: list[float] = []
    code = 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=cwd, env=env, check=False)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the one child reaped since `before`
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        code = proc.returncode
    return Timing(statistics.median(times), min(times), statistics.median(cpu), code)


def _top_level(stderr: str) -> dict[str, int]:
    """Top-level rows of ``-X importtime``: name -> cumulative microseconds (covers nested imports)."""
    rows: dict[str, int] = {}
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            _, cumulative, name = line.split("|")
            if name.strip() and not name[1:].startswith(" ") and cumulative.strip().isdigit():
                rows[name.strip()] = int(cumulative)
    return rows


def interpreter_modules(python: Path, cwd: Path, env: dict[str, str]) -> set[str]:
    """What a bare interpreter imports before running anything (site, encodings, ...)."""
    proc = subprocess.run(
        [str(python), "-X", "importtime", "-c", "pass"],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
    )
    return set(_top_level(proc.stderr))


def _imports(
    python: Path, target: str, case: Case, cwd: Path, env: dict[str, str], baseline: set[str]
) -> tuple[float, int, list[str]]:
    proc = subprocess.run(
        [str(python), "-X", "importtime", "-c", _SHIM, target, case.script, *case.args],
        input=case.stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
    )
    rows = _top_level(proc.stderr)
    total_us = sum(us for name, us in rows.items() if name not in baseline)
    marker = "@@modules "
    modules: list[str] = next(
        (json.loads(line[len(marker) :]) for line in proc.stderr.splitlines() if line.startswith(marker)), []
    )
    heavy = sorted({m.split(".")[0] for m in modules} & set(HEAVY))
    return total_us / 1000, len(modules), heavy


def _verdict(timing: Timing, budget_ms: float) -> str:
    """PASS when the median wall time is within the budget; CPU-PASS when only the CPU time is
    (the wall time then includes waiting for a busy machine's cores, see the load average)."""
    if timing.median * 1000 <= budget_ms:
        return "PASS"
    return "CPU-PASS" if timing.cpu * 1000 <= budget_ms else "FAIL"


def _help_summary(helps: list[tuple[str, Timing]], budget_ms: float) -> None:
    walls = [t.median for _, t in helps]
    cpus = [t.cpu for _, t in helps]
    slowest_wall = max(helps, key=lambda item: item[1].median)
    slowest_cpu = max(helps, key=lambda item: item[1].cpu)
    print(
        f"--help cases: {len(helps)}, median of medians {statistics.median(walls) * 1000:.0f} ms wall "
        f"({statistics.median(cpus) * 1000:.0f} ms cpu), slowest {slowest_wall[1].median * 1000:.0f} ms wall "
        f"({slowest_wall[0]}), slowest cpu {slowest_cpu[1].cpu * 1000:.0f} ms ({slowest_cpu[0]})"
    )
    over_wall = [label for label, t in helps if t.median * 1000 > budget_ms]
    over_cpu = [label for label, t in helps if t.cpu * 1000 > budget_ms]
    print(
        f"--help budget {budget_ms:.0f} ms per case: wall {'PASS' if not over_wall else 'FAIL'} "
        f"({len(helps) - len(over_wall)}/{len(helps)} within, max {max(walls) * 1000:.0f} ms), "
        f"cpu {'PASS' if not over_cpu else 'FAIL'} ({len(helps) - len(over_cpu)}/{len(helps)} within, "
        f"max {max(cpus) * 1000:.0f} ms)"
    )
    for label in over_wall:
        print(f"  over budget (wall): {label}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--help-only", action="store_true", help="time only the --help cases")
    parser.add_argument(
        "--budget-ms", type=float, default=200.0, help="per-case --help budget for the PASS/FAIL lines"
    )
    parser.add_argument(
        "--bin",
        type=Path,
        default=Path(sys.executable).parent,
        help="scripts folder of the environment to measure",
    )
    args = parser.parse_args(argv)
    bindir: Path = args.bin.absolute()
    python = bindir / "python"
    scripts = _entry_points(Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", CM_WORKFLOW_LOG_HOME=str(home / "cm-logs"))
        repo = Path(tmp) / "repo"
        repo.mkdir()
        _make_repo(repo, bindir, env)
        print(
            f"python {sys.version.split()[0]} | {args.runs} runs per case | cores: {os.cpu_count()} | "
            f"load average: {os.getloadavg()[0]:.2f}"
        )
        print("imports ms: summed cumulative -X importtime of the top-level imports, less what a bare")
        print("interpreter loads (site, encodings); one run, so read it with the load average in mind")
        baseline = interpreter_modules(python, repo, env)
        header = (
            f"{'case':44} {'median ms':>9} {'min ms':>7} {'cpu ms':>6} {'imports ms':>10} {'modules':>7}  "
            f"exit  heavy"
        )
        print(header)
        print("-" * len(header))
        base = _wall([str(python), "-c", "pass"], None, repo, env, args.runs)
        print(
            f"{'python -c pass (baseline)':44} {base.median * 1000:9.0f} {base.low * 1000:7.0f} {base.cpu * 1000:6.0f}"
        )
        helps: list[tuple[str, Timing]] = []
        for case in ([] if args.help_only else _cases()) + _help_cases():
            timing = _wall([str(bindir / case.script), *case.args], case.stdin, repo, env, args.runs)
            import_ms, count, heavy = _imports(python, scripts[case.script], case, repo, env, baseline)
            verdict = ""
            if case.args[-1:] == ("--help",):
                helps.append((case.label, timing))
                verdict = "  " + _verdict(timing, args.budget_ms)
            print(
                f"{case.label:44} {timing.median * 1000:9.0f} {timing.low * 1000:7.0f} {timing.cpu * 1000:6.0f} "
                f"{import_ms:10.0f} {count:7d}  {timing.code:4d}  {','.join(heavy) or '-'}{verdict}"
            )
        if helps:
            _help_summary(helps, args.budget_ms)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
