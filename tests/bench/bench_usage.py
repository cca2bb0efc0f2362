"""Benchmark: ``workgroup usage`` over generated Claude Code and Codex logs, beside ccusage when present.

    .venv/bin/python tests/bench/bench_usage.py [--mb 1024] [--dir DIR] [--keep] [--ccusage PATH] [--repeat 3]
        [--session-kb N] [--baseline SOURCE_TREE]

Writes about ``--mb`` megabytes of logs (half Claude Code sessions with subagents, streaming partials,
tool results and compactions, every third one resumed from the one before with its history copied; `--session-kb N` makes every session about N kB, for a history of many small sessions; half Codex rollouts with instructions, response items and token
counts), then runs ``workgroup usage --json`` in a fresh child process and prints wall time, CPU
time, MB/s per CPU second and peak RSS (``resource.getrusage`` of the child), next to the size of
the largest session file (the memory bound). With ccusage (``--ccusage``, ``CCUSAGE_BIN`` or on PATH)
it runs ``ccusage daily`` (all agents) on the same files, once with its default parallel loading and
once with ``--single-thread``, beside ``workgroup usage`` as it runs by default (above 64 MB of
logs: one worker process per CPU up to 4, or, when both tools have a fair share of the bytes and
the files average under 1 MB or there are two CPUs, the Codex rollouts in one worker while the
Claude sessions are read in the main process) and with ``--jobs 1`` (one core), interleaved ``--repeat`` times, and checks
that the per-day totals agree. CPU time is the child's ``getrusage`` with its workers.
CPU time is quoted beside wall time because a shared machine stretches wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = 3  # 2: every third Claude session is resumed from the one before (a copied history);
# 3: a resumed session's own lines are dated the day after its copied history (as time runs)
WORDS = (
    "alpha beta gamma delta build test refactor module function parser reader token cache "
    "context session commit branch review patch error value index schema field record"
).split()


def _text(rng: random.Random, size: int) -> str:
    out, n = [], 0
    while n < size:
        w = rng.choice(WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)


def _claude_session(
    path: Path, rng: random.Random, sid: str, target: int, day: int, history: str = ""
) -> int:
    """A session of about ``target`` bytes of its own, after ``history`` (a resumed session's copy)."""
    cwd = f"/home/dev/project-{rng.randrange(20)}"
    common = f'"sessionId":"{sid}","cwd":"{cwd}","version":"2.1.3","gitBranch":"main","userType":"external"'
    lines: list[str] = []
    size, call, read = 0, 0, 12000
    hour = 0
    while size < target:
        call += 1
        ts = f"2026-03-{day:02d}T{(hour // 60) % 24:02d}:{hour % 60:02d}:{call % 60:02d}.000Z"
        hour += 1
        prompt = json.dumps(_text(rng, rng.randrange(200, 1500)))
        lines.append(
            f'{{"type":"user","uuid":"u{call}","parentUuid":"a{call - 1}","isSidechain":false,{common},'
            f'"timestamp":"{ts}","message":{{"role":"user","content":{prompt}}}}}'
        )
        write, inp = rng.randrange(0, 3000), rng.randrange(1, 20)
        read += rng.randrange(500, 4000)
        usage = (
            '{{"input_tokens":{i},"cache_creation_input_tokens":{w},"cache_read_input_tokens":{r},'
            '"cache_creation":{{"ephemeral_5m_input_tokens":{w},"ephemeral_1h_input_tokens":0}},'
            '"output_tokens":{o},"service_tier":"standard"}}'
        )
        blocks = rng.randrange(1, 4)
        for block in range(blocks + 1):
            out = 1 if block == 0 else rng.randrange(50, 900)
            body = json.dumps(_text(rng, rng.randrange(300, 2500)))
            stop = '"tool_use"' if block == blocks else "null"
            lines.append(
                f'{{"type":"assistant","uuid":"a{call}-{block}","parentUuid":"u{call}","isSidechain":false,'
                f'{common},"requestId":"req_{sid}_{call}","timestamp":"{ts}",'
                f'"message":{{"id":"msg_{sid}_{call}",'
                f'"type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text",'
                f'"text":{body}}}],"stop_reason":{stop},'
                f'"usage":{usage.format(i=inp, w=write, r=read, o=out)}}}}}'
            )
        result = json.dumps(_text(rng, rng.randrange(1000, 9000)))
        lines.append(
            f'{{"type":"user","uuid":"t{call}","parentUuid":"a{call}","isSidechain":false,{common},'
            f'"timestamp":"{ts}","message":{{"role":"user","content":[{{"type":"tool_result",'
            f'"tool_use_id":"toolu_{call}","content":{result}}}]}},"toolUseResult":{{"stdout":{result}}}}}'
        )
        if call % 200 == 0:
            lines.append(
                f'{{"type":"system","subtype":"compact_boundary","parentUuid":null,{common},'
                f'"timestamp":"{ts}","compactMetadata":{{"trigger":"auto","preTokens":{read}}}}}'
            )
            read = 12000
        size = sum(len(x) + 1 for x in lines[-8:]) + size
    text = history + "\n".join(lines) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return len(text)


def _codex_session(path: Path, rng: random.Random, sid: str, target: int, day: int) -> int:
    cwd = f"/home/dev/project-{rng.randrange(20)}"
    instructions = json.dumps(_text(rng, 12000))
    lines = [
        f'{{"timestamp":"2026-03-{day:02d}T08:00:00.000Z","type":"session_meta","payload":{{"id":"{sid}",'
        f'"cwd":"{cwd}","originator":"codex_cli_rs","cli_version":"0.60.0","source":"cli",'
        f'"model_provider":"openai","base_instructions":{{"text":{instructions}}}}}}}'
    ]
    total = [0, 0, 0, 0]
    size, call = len(lines[0]), 0
    while size < target:
        call += 1
        ts = f"2026-03-{day:02d}T{8 + (call // 3600) % 14:02d}:{(call // 60) % 60:02d}:{call % 60:02d}.000Z"
        chunk = [
            f'{{"timestamp":"{ts}","type":"turn_context","payload":{{"cwd":"{cwd}","model":"gpt-5-codex",'
            f'"approval_policy":"on-request","effort":"medium",'
            f'"user_instructions":{json.dumps(_text(rng, 800))}}}}}'
        ]
        for _ in range(rng.randrange(1, 4)):
            chunk.append(
                f'{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"function_call_output",'
                f'"call_id":"c{call}","output":{json.dumps(_text(rng, rng.randrange(800, 6000)))}}}}}'
            )
        inp = rng.randrange(8000, 60000)
        cached = inp - rng.randrange(500, 5000)
        out = rng.randrange(50, 1500)
        reason = out // 3
        last = [inp, cached, out, reason]
        total = [a + b for a, b in zip(total, last, strict=True)]

        def counts(v: list[int]) -> str:
            return (
                f'{{"input_tokens":{v[0]},"cached_input_tokens":{v[1]},"output_tokens":{v[2]},'
                f'"reasoning_output_tokens":{v[3]},"total_tokens":{v[0] + v[2]}}}'
            )

        tc = (
            f'{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"token_count","info":{{'
            f'"total_token_usage":{counts(total)},"last_token_usage":{counts(last)},'
            f'"model_context_window":272000}},"rate_limits":{{"primary":{{"used_percent":4.0}}}}}}}}'
        )
        chunk.append(tc)
        if call % 7 == 0:
            chunk.append(tc)  # a re-emitted total
        lines.extend(chunk)
        size += sum(len(x) + 1 for x in chunk)
    text = "\n".join(lines) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return len(text)


def generate(root: Path, megabytes: int, seed: int = 7, session_kb: int = 0) -> tuple[int, int]:
    """Write about ``megabytes`` MB of mixed logs; returns (bytes written, largest file)."""
    rng = random.Random(seed)
    goal = megabytes * 1_000_000
    written = largest = 0
    n = 0
    previous: Path | None = None  # the last Claude session's file: every third one is resumed from it
    while written < goal:
        n += 1
        size_target = session_kb * 1000 or rng.choice((200_000, 800_000, 2_000_000, 6_000_000))
        day = 1 + n % 28
        if n % 2:
            sid = f"{n:08x}-aaaa-4bbb-8ccc-{n:012x}"
            proj = root / "claude" / "projects" / f"-home-dev-project-{n % 20}"
            history = ""
            if n % 6 == 5 and previous is not None:  # --resume: the history copied with its ids
                old_sid = previous.stem
                history = previous.read_text().replace(f'"sessionId":"{old_sid}"', f'"sessionId":"{sid}"')
                size_target = max(min(200_000, size_target), size_target - len(history))
                day = 1 + (n - 2) % 28 + 1  # resumed the day after the session it copies
            previous = proj / f"{sid}.jsonl"
            size = _claude_session(previous, rng, sid, size_target, day, history)
            if n % 5 == 1:
                size += _claude_session(
                    proj / sid / "subagents" / f"agent-{n}.jsonl", rng, sid, size_target // 4, day
                )
        else:
            sid = f"019a{n:04x}-0000-7000-8000-{n:012x}"
            path = (
                root
                / "codex"
                / "sessions"
                / "2026"
                / "03"
                / f"{day:02d}"
                / f"rollout-2026-03-{day:02d}T08-00-00-{sid}.jsonl"
            )
            size = _codex_session(path, rng, sid, size_target, day)
        written += size
        largest = max(largest, size)
    return written, largest


_CHILD = (
    "import resource, subprocess, sys, time, json\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
    "wall = time.perf_counter() - t\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps({'rc': p.returncode, 'wall': wall, 'cpu': u.ru_utime + u.ru_stime,"
    " 'rss_kb': u.ru_maxrss, 'out': p.stdout.decode('utf-8', 'replace')[-200000:],"
    " 'err': p.stderr.decode('utf-8', 'replace')[-2000:]}))\n"
)


def _load() -> str:
    """The machine's load average (1, 5, 15 minutes): a shared machine stretches every figure."""
    try:
        return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "load average unknown"


def measure(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *cmd], capture_output=True, text=True, env=env, check=True, cwd=cwd
    )
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def _memory_note(run: dict[str, object], mb: float) -> None:
    """What memory is made of: the largest session, plus a fixed digest pair per kept Claude call.

    The digests are measured by building the same index (``dedup.Seen``) here, for as many calls.
    """
    import tracemalloc

    from toolkit.usage.dedup import Seen, digest

    report = json.loads(str(run["out"]))
    calls = report["totals"]["calls"]
    seen = Seen()
    tracemalloc.start()
    for n in range(calls):
        seen.keys[digest(f"msg_{n}\x00req_{n}")] = 0
        seen.ids.add(digest(f"msg_{n}") & ~1)
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    print(
        f"memory: {calls:,} kept calls in {mb:,.0f} MB; the cross-session dedup digests of that many "
        f"Claude calls take {size / 1e6:,.1f} MB ({size / max(calls, 1):,.0f} bytes per call, an upper "
        f"bound: Codex calls keep none); peak RSS {int(str(run['rss_kb'])) / 1024:,.0f} MB"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mb", type=int, default=1024, help="size of the generated logs in MB (default 1024)"
    )
    parser.add_argument("--dir", type=Path, help="where to write them (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the generated logs")
    parser.add_argument("--ccusage", default=os.environ.get("CCUSAGE_BIN") or shutil.which("ccusage"))
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per tool; medians are printed (default 3)"
    )
    parser.add_argument(
        "--session-kb",
        type=int,
        default=0,
        help="every session about this many kB (default: a mix of 0.2, 0.8, 2 and 6 MB)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another source tree of this project (e.g. `git archive <commit> toolkit | tar -x -C DIR`): "
        "its `workgroup usage` runs beside this one, interleaved",
    )
    args = parser.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="bench-usage-"))
    try:
        marker = root / "generated.json"
        shape = {"mb": args.mb, "generator": GENERATOR, "session_kb": args.session_kb}
        if marker.exists() and {"session_kb": 0} | json.loads(marker.read_text()) | {
            "bytes": 0,
            "largest": 0,
        } == {
            **shape,
            "bytes": 0,
            "largest": 0,
        }:
            meta = json.loads(marker.read_text())
            written, largest = meta["bytes"], meta["largest"]
        else:
            for stale in ("claude", "codex"):  # an older generator's files
                shutil.rmtree(root / stale, ignore_errors=True)
            written, largest = generate(root, args.mb, session_kb=args.session_kb)
            marker.write_text(json.dumps({**shape, "bytes": written, "largest": largest}))
        home = root / "home"
        home.mkdir(exist_ok=True)
        env = {
            **os.environ,
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(root / "claude"),
            "CODEX_HOME": str(root / "codex"),
            "PYTHONPATH": str(ROOT),
        }
        mb = written / 1e6
        print(f"logs: {mb:,.0f} MB, largest file {largest / 1e6:,.1f} MB; {_load()}")
        runs: dict[str, list[dict[str, object]]] = {}
        ours = [sys.executable, "-m", "toolkit", "usage", "--json", "--timezone", "UTC"]
        commands = {"workgroup usage": ours, "workgroup usage --jobs 1": [*ours, "--jobs", "1"]}
        envs = {label: env for label in commands}
        if args.baseline:
            commands["workgroup usage (baseline)"] = ours
            envs["workgroup usage (baseline)"] = {**env, "PYTHONPATH": str(args.baseline.resolve())}
        if args.ccusage:
            base = [args.ccusage, "daily", "--json", "--offline", "--timezone", "UTC"]
            commands["ccusage daily (parallel, its default)"] = base
            commands["ccusage daily --single-thread"] = [*base, "--single-thread"]
        envs = {label: envs.get(label, env) for label in commands}
        # as installed: compiled bytecode (pip writes it at install; a PYTHONDONTWRITEBYTECODE set in
        # this shell would make every run compile the sources), and one unmeasured run of each tool
        # (bytecode written, files in the page cache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # run from the logs' folder: `-m` puts the working folder first on sys.path, which would
        # shadow --baseline when run from the project
        for label, cmd in commands.items():
            assert measure(cmd, envs[label], root)["rc"] == 0
        for _ in range(args.repeat):  # interleaved, so load on a shared machine hits every tool alike
            for label, cmd in commands.items():
                got = measure(cmd, envs[label], root)
                assert got["rc"] == 0, got["err"]
                runs.setdefault(label, []).append(got)
        days: dict[str, dict[str, tuple[int, int, int]]] = {}
        for label, got_runs in runs.items():
            walls = sorted(float(r["wall"]) for r in got_runs)  # type: ignore[arg-type]
            cpus = sorted(float(r["cpu"]) for r in got_runs)  # type: ignore[arg-type]
            rss = max(int(r["rss_kb"]) for r in got_runs)  # type: ignore[call-overload]
            wall, cpu = walls[len(walls) // 2], cpus[len(cpus) // 2]
            print(
                f"{label}: median of {len(got_runs)}: wall {wall:.2f} s, cpu {cpu:.2f} s "
                f"(min {cpus[0]:.2f}), {mb / cpu:,.0f} MB/s per cpu-second, peak RSS {rss / 1024:,.0f} MB"
            )
            out = json.loads(str(got_runs[0]["out"]))
            if label.startswith("workgroup usage"):
                days[label] = {r["key"]: (r["input"], r["output"], r["cache_read"]) for r in out["rows"]}
            else:
                days[label] = {
                    r["period"]: (r["inputTokens"], r["outputTokens"], r["cacheReadTokens"])
                    for r in out["daily"]
                }
        print(f"after the runs: {_load()}")
        _memory_note(runs["workgroup usage --jobs 1"][0], mb)
        if args.ccusage:
            same = all(d == days["workgroup usage"] for d in days.values())
            print(f"per-day totals (input, output, cache read) equal across the tools: {same}")
        else:
            print("ccusage not found (set CCUSAGE_BIN): no side-by-side figures")
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
