"""Benchmark the agent hooks and the status line as the agents run them (run on purpose).

    .venv/bin/python tests/bench/bench_agent_hooks.py [--repeat 30] [--turns 600] [--write-kb 100]
        [--bin DIR ...] [--hooks-only] [--breakdown]

In a temporary directory it builds a real git repository (a few hundred tracked files in one
commit) and a Claude Code transcript of ``--turns`` turns (a tool result of ~8 kB and an
assistant call with usage each: ~6.5 MB for 600 turns), then times, as subprocesses of the
installed ``workgroup`` console script with the agent's JSON payload on stdin (wall clock, p50 and
p95 of ``--repeat`` runs, and the CPU time of the child, which the machine's load changes less).
``--bin DIR`` names the scripts folder of the environment to time (default: this interpreter's,
``.venv/bin``, an editable install); give it more than once to time several, e.g. the development
install and a regular, non-editable ``pip install .`` as users have it, one table each.
``--hooks-only`` leaves out the status line's cases; ``--breakdown`` also times the pre-write in
parts inside fresh processes of the environment's ``python`` (the hook's entry, the privacy engine's
import, the gate's own modules, the hook's work, the first scan; the rest is the interpreter).

* ``pre-write``: ``workgroup agent-hook pre-tool-use --agent claude`` on a ``Write`` of
  ``--write-kb`` kB of ordinary source text into the repository (target p95 <= 50 ms);
* ``session start``: ``agent-hook session-start`` (source ``startup``), ``stop``: ``agent-hook stop``
  (``stop_hook_active`` false, the transcript above) (targets p95 <= 500 ms);
* ``statusline``: ``workgroup statusline`` on the same transcript: ``cached`` (nothing changed since
  the last refresh), ``refresh`` (one turn appended before each run: the appended tail is read),
  ``refresh, no call`` (a tool result appended: no model call, the line is kept) and ``cold``
  (``--no-cache``: the whole transcript read) (target p95 <= 50 ms);
* ``baseline``: ``agent-hook post-tool-use``, an event the toolkit lets go on without loading any
  event's code: the interpreter's, the console script's and the hook entry's own start-up (the
  floor of every hook call; ``workgroup --version`` goes through the typer app).

Exit status 1 when a hook answered an unexpected exit code (a gate that denies an ordinary write,
a crash); the targets are reported, not enforced (figures depend on the machine and its load).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
SESSION = "5f0c2d1e-7a4b-4c1e-9d3a-2b6f8e0a1c44"


def env_for(home: Path) -> dict[str, str]:
    return {
        **{
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "workgroup_LINEAGE_ID")
        },
        # children run as from a regular install: bytecode cached (in a temporary prefix, not the tree)
        "PYTHONPYCACHEPREFIX": os.path.join(tempfile.gettempdir(), "bench-agent-hooks-pycache"),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }


def build_repo(root: Path, env: dict[str, str], files: int = 300) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=env)
    for i in range(files):
        path = root / "src" / f"pkg{i % 10}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'"""Module {i}."""\n\n\ndef value() -> int:\n    return {i}\n')
    (root / "README.md").write_text("# bench\n")
    subprocess.run(["git", "add", "."], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True, env=env)


def turn(i: int, cwd: str) -> str:
    """One turn as Claude Code logs it: a tool result, then an assistant call with its usage."""
    base = {"sessionId": SESSION, "cwd": cwd, "version": "2.1.0", "gitBranch": "main", "isSidechain": False}
    ts = f"2026-01-06T{2 + i // 3600:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
    user = {
        "type": "user",
        "uuid": f"u{i}",
        "parentUuid": f"a{i - 1}",
        **base,
        "timestamp": ts,
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x = 1\n" * 1300}],
        },
    }
    usage = {
        "input_tokens": 4,
        "cache_creation_input_tokens": 900,
        "cache_read_input_tokens": 20000 + i * 150,
        "cache_creation": {"ephemeral_5m_input_tokens": 900, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 350,
    }
    assistant = {
        "type": "assistant",
        "uuid": f"a{i}",
        "parentUuid": f"u{i}",
        **base,
        "timestamp": ts,
        "requestId": f"req_{i}",
        "message": {
            "id": f"msg_{i}",
            "model": "claude-sonnet-4-5",
            "stop_reason": "tool_use",
            "content": [{"type": "text", "text": "Let me read that file. " * 30}],
            "usage": usage,
        },
    }
    return (
        json.dumps(user, separators=(",", ":")) + "\n" + json.dumps(assistant, separators=(",", ":")) + "\n"
    )


def write_content(kilobytes: int) -> str:
    """Ordinary source text of about ``kilobytes`` kB (no secret: the gate lets it through)."""
    lines, size, n = [], 0, 0
    while size < kilobytes * 1024:
        line = f"def handler_{n}(request, retries=3):\n    return process(request.body, timeout={n % 60})\n\n"
        lines.append(line)
        size += len(line)
        n += 1
    return "".join(lines)


def payload(event: str, repo: Path, transcript: Path, **extra: object) -> bytes:
    doc = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(repo),
        "permission_mode": "default",
        "hook_event_name": event,
        **extra,
    }
    return json.dumps(doc).encode()


def timed(
    command: list[str], stdin: bytes, cwd: Path, env: dict[str, str]
) -> tuple[float, float, int, bytes]:
    """(wall ms, CPU ms of the child and its children, exit code, stdout) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        command, input=stdin, cwd=cwd, env=env, capture_output=True, check=False, timeout=120
    )
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu, proc.returncode, proc.stdout


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--turns", type=int, default=600)
    parser.add_argument("--write-kb", type=int, default=100)
    parser.add_argument(
        "--bin",
        type=Path,
        action="append",
        help="scripts folder of an environment to time (repeatable; default: this interpreter's)",
    )
    parser.add_argument("--hooks-only", action="store_true", help="leave out the status line's cases")
    parser.add_argument(
        "--breakdown", action="store_true", help="also split the pre-write's CPU time into its parts"
    )
    args = parser.parse_args(argv)
    failed = False
    for bindir in args.bin or [BIN]:
        failed |= not bench(str(bindir.absolute() / "workgroup"), args)
    return 1 if failed else 0


def bench(workgroup: str, args: argparse.Namespace) -> bool:
    """Time every case with the console script ``workgroup``; False when a case answered an
    unexpected exit code."""
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = env_for(home)
        repo = Path(tmp) / "repo"
        build_repo(repo, env)
        projects = home / ".claude" / "projects" / "-bench-repo"
        projects.mkdir(parents=True)
        transcript = projects / f"{SESSION}.jsonl"
        with transcript.open("w") as log:
            for i in range(args.turns):
                log.write(turn(i, str(repo)))
        size_mb = transcript.stat().st_size / 1_048_576
        content = write_content(args.write_kb)
        write = payload(
            "PreToolUse",
            repo,
            transcript,
            tool_name="Write",
            tool_use_id="toolu_bench",
            tool_input={"file_path": str(repo / "src" / "generated.py"), "content": content},
        )
        start = payload("SessionStart", repo, transcript, source="startup")
        stop = payload("Stop", repo, transcript, stop_hook_active=False)
        status = json.dumps(
            {
                "hook_event_name": "Status",
                "session_id": SESSION,
                "transcript_path": str(transcript),
                "cwd": str(repo),
                "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
                "workspace": {"current_dir": str(repo), "project_dir": str(repo)},
                "cost": {"total_cost_usd": 1.0},
            }
        ).encode()
        hook = [workgroup, "agent-hook"]
        cases: list[tuple[str, list[str], bytes, set[int], float, int]] = [
            (
                "baseline: agent-hook post-tool-use",
                [*hook, "post-tool-use", "--agent", "claude"],
                payload("PostToolUse", repo, transcript, tool_name="Read", tool_input={}),
                {0},
                float("nan"),
                args.repeat,
            ),
            (
                f"pre-write: Write of {len(content) // 1024} kB",
                [*hook, "pre-tool-use", "--agent", "claude"],
                write,
                {0},
                50,
                args.repeat,
            ),
            (
                "session start (startup)",
                [*hook, "session-start", "--agent", "claude"],
                start,
                {0},
                500,
                max(5, args.repeat // 3),
            ),
            ("stop", [*hook, "stop", "--agent", "claude"], stop, {0}, 500, max(5, args.repeat // 3)),
            ("statusline: cached", [workgroup, "statusline"], status, {0}, 50, args.repeat),
            ("statusline: refresh (tail)", [workgroup, "statusline"], status, {0}, 50, args.repeat),
            ("statusline: refresh, no call", [workgroup, "statusline"], status, {0}, 50, args.repeat),
            (
                "statusline: cold (--no-cache)",
                [workgroup, "statusline", "--no-cache"],
                status,
                {0},
                float("nan"),
                args.repeat,
            ),
        ]
        if args.hooks_only:
            cases = [case for case in cases if not case[0].startswith("statusline")]
        print(
            f"agent hooks as subprocesses of {workgroup} (wall ms; transcript {args.turns} turns, {size_mb:.1f} MB; "
            f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
        )
        print(
            f"{'what':<34} {'runs':>5} {'p50':>8} {'p95':>8} {'cpu p50':>8} {'cpu p95':>8} {'target':>7}  result"
        )
        appended = args.turns
        for name, command, stdin, codes, target, runs in cases:
            timed(command, stdin, repo, env)  # one run first: bytecode written, cache built
            times, cpus, seen, line = [], [], set(), b""
            for _ in range(runs):
                if name.startswith("statusline: refresh"):
                    with transcript.open("a") as log:
                        whole = turn(appended, str(repo))
                        # "no call": the tool result alone (the first of the turn's two lines)
                        log.write(whole if name.endswith("(tail)") else whole.split("\n", 1)[0] + "\n")
                    appended += 1
                ms, cpu, code, out = timed(command, stdin, repo, env)
                times.append(ms)
                cpus.append(cpu)
                seen.add(code)
                line = out
            ok = seen <= codes
            failed |= not ok
            p50, p95 = percentile(times, 0.5), percentile(times, 0.95)
            verdict = "exit " + ",".join(map(str, sorted(seen)))
            if target == target:  # not NaN
                verdict += "; within target" if p95 <= target else "; OVER target"
            goal = f"{target:.0f}" if target == target else "-"
            c50, c95 = percentile(cpus, 0.5), percentile(cpus, 0.95)
            print(
                f"{name:<34} {runs:>5} {p50:>8.1f} {p95:>8.1f} {c50:>8.1f} {c95:>8.1f} {goal:>7}  {verdict}"
            )
            if name.startswith("statusline: cold"):
                print(f"  last status line: {line.decode('utf-8', 'replace').strip()}")
        if args.breakdown:
            failed |= not breakdown(Path(workgroup).parent / "python", write, repo, env, args.repeat)
    return not failed


# One pre-write in a fresh process, timed in parts (CPU ms): the hook's entry (payload, answers), the
# privacy engine and the privacy modules the gate uses, the gate's own modules (destination, writes,
# ownership registry), then the answer, of which the scan is timed apart. What the process costs
# beyond these parts is the interpreter's start-up and exit.
PARTS = """\
import gc, json, re, sys, time  # re: the console script imports it too
clock = time.process_time
marks = [clock()]
import toolkit.agents.main as main
marks.append(clock())
gc.disable()  # as main.main() does around the answer
import toolkit.privacy, toolkit.privacy.artifacts, toolkit.privacy.files, toolkit.privacy.gate
marks.append(clock())
import toolkit.agents.prewrite as prewrite
marks.append(clock())
scanning = [0.0]
scan = prewrite.scan_text_with_values
def timed_scan(*args):
    began = clock()
    try:
        return scan(*args)
    finally:
        scanning[0] += clock() - began
prewrite.scan_text_with_values = timed_scan
answer = main.answer(["pre-tool-use"], sys.stdin.buffer)
marks.append(clock())
gc.freeze()
parts = [b - a for a, b in zip(marks, marks[1:])]
parts[-1] -= scanning[0]
print(json.dumps([answer.code, *(1000 * p for p in [*parts, scanning[0]])]))
"""
PART_NAMES = (
    "hook entry (payload, answers)",
    "privacy engine + gate modules",
    "gate's own modules",
    "hook work (parse, place, globs)",
    "scan (first in the process)",
)


def breakdown(python: Path, write: bytes, repo: Path, env: dict[str, str], runs: int) -> bool:
    """Print the pre-write's CPU time by part (p50 / p95 of ``runs`` fresh processes)."""
    rows: list[list[float]] = []
    for _ in range(runs + 1):  # the first run writes the bytecode
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(
            [str(python), "-c", PARTS], input=write, cwd=repo, env=env, capture_output=True, check=False
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            print(f"  breakdown failed: {proc.stderr.decode('utf-8', 'replace')[-300:]}")
            return False
        code, *parts = json.loads(proc.stdout)
        if code != 0:
            print(f"  breakdown: the pre-write answered exit {code}")
            return False
        total = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
        rows.append([*parts, total - sum(parts), total])
    rows = rows[1:]
    print(f"pre-write CPU by part (ms, {runs} fresh processes of {python})")
    for index, name in enumerate([*PART_NAMES, "interpreter start-up and exit", "the whole process"]):
        values = [row[index] for row in rows]
        print(f"  {name:<34} p50 {percentile(values, 0.5):6.1f}  p95 {percentile(values, 0.95):6.1f}")
    return True


if __name__ == "__main__":
    raise SystemExit(main())
