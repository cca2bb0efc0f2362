"""Benchmark: ``cm-usage-report`` over 1,000,000 usage events, run on purpose (not collected by pytest).

    .venv/bin/python tests/bench/bench_usage_report.py [--events N] [--shapes 1000x1000,100x10000,10x100000]

For each shape (runs x usage events per run, same total) it writes a fresh private log home
(index + one JSONL file per run; 1 in 10 calls goes through the managed adapter and has its
claim first, 1 in 50 claims stays unresolved, 1 in 100 usage rows is malformed), then runs the
report with ``--json --last <runs>`` in a fresh child process and prints the wall time and that
child's CPU time and peak RSS (``resource.getrusage``, the report process and its ``--jobs``
workers together for CPU, the largest of them for RSS; CPU time is quoted beside
wall time because a shared machine stretches wall time), next to the CPU time a bare
``json.loads`` of every line takes (the floor for any report that reads the JSONL). The report streams run by
run, so the peak should follow the largest run, not the total.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_USAGE = (
    '{{"schema_version":1,"run_id":"{run}","at":"2026-08-06T10:00:00+00:00","workflow":"cm-ai",'
    '"event":"model_usage","runtime":"codex","project":"bench","detail":"coder model call success",'
    '"phase":"complete","call_id":"call-{n}","stage":"task_execution","role":"{role}","adapter":"{adapter}",'
    '"requested_model":"coder-default","source":"api","purpose":"cm-ai:task_execution",'
    '"usage_state":"observed","duration_ms":{dur},"outcome":"success","effective_model":"model-{m}",'
    '"input_tokens":{inp},"output_tokens":{out},"cache_read_tokens":{cr},"event_id":"u-{run}-{n}"}}\n'
)
_CLAIM = (
    '{{"schema_version":1,"run_id":"{run}","at":"2026-08-06T10:00:00+00:00","workflow":"cm-ai",'
    '"event":"model_call","runtime":"codex","project":"bench","detail":"coder model call claimed",'
    '"phase":"claimed","call_id":"call-{n}","stage":"task_execution","role":"{role}",'
    '"adapter":"openai-compatible","requested_model":"coder-default","source":"api",'
    '"purpose":"cm-ai:task_execution","event_id":"c-{run}-{n}"}}\n'
)
_OTHER = (
    '{{"schema_version":1,"run_id":"{run}","at":"2026-08-06T10:00:00+00:00","workflow":"cm-ai",'
    '"event":"task_done","runtime":"codex","project":"bench","detail":"task finished",'
    '"event_id":"t-{run}-{n}"}}\n'
)
_ROLES = ("coder", "tester", "reviewer", "planner")


def write_home(home: Path, runs: int, per_run: int) -> int:
    """Write the log home; returns the number of bytes written."""
    month = home / "runs" / "2026-08"
    month.mkdir(parents=True)
    index: list[str] = []
    total = 0
    for r in range(runs):
        run = f"bench-run-{r:06d}"
        parts: list[str] = []
        for n in range(per_run):
            role = _ROLES[n % 4]
            managed = n % 10 == 0
            if managed:
                parts.append(_CLAIM.format(run=run, n=n, role=role))
            if managed and n % 500 == 0:
                continue  # an unresolved claim: no usage row (counted below as a usage event anyway)
            adapter = "openai-compatible" if managed else "company-api"
            inp = -1 if n % 100 == 7 else 1000 + n % 97
            parts.append(
                _USAGE.format(
                    run=run,
                    n=n,
                    role=role,
                    adapter=adapter,
                    dur=n % 3000,
                    m=n % 3,
                    inp=inp,
                    out=100 + n % 13,
                    cr=n % 700,
                )
            )
            if n % 250 == 0:
                parts.append(_OTHER.format(run=run, n=n))
        data = "".join(parts).encode("utf-8")
        (month / f"{run}.jsonl").write_bytes(data)
        total += len(data)
        index.append(
            json.dumps(
                {
                    "schema_version": 1,
                    "at": f"2026-08-06T10:{r // 60 % 60:02d}:{r % 60:02d}+00:00",
                    "run_id": run,
                    "status": "done",
                    "workflow": "cm-ai",
                    "runtime": "codex",
                    "project": "bench",
                    "log_file": f"runs/2026-08/{run}.jsonl",
                }
            )
            + "\n"
        )
    (home / "index.jsonl").write_text("".join(index), encoding="utf-8")
    return total


_CHILD = (
    "import resource, sys, time, io, contextlib\n"
    "from toolkit.cm.report import main\n"
    "t = time.perf_counter()\n"
    "with open('/dev/null', 'w') as sink, contextlib.redirect_stdout(sink), \\\n"
    "        contextlib.redirect_stderr(sink):\n"
    "    code = main(sys.argv[1:])\n"
    "u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "w = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "cpu = u.ru_utime + u.ru_stime + w.ru_utime + w.ru_stime\n"
    "print(code, time.perf_counter() - t, cpu, max(u.ru_maxrss, w.ru_maxrss))\n"
)


_FLOOR = (
    "import json, resource, sys, pathlib\n"
    "for path in sorted(pathlib.Path(sys.argv[1]).glob('runs/*/*.jsonl')):\n"
    "    with open(path, 'rb') as handle:\n"
    "        for line in handle:\n"
    "            json.loads(line)\n"
    "u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(u.ru_utime + u.ru_stime)\n"
)


def parse_floor(home: Path) -> float:
    """CPU seconds to merely json.loads every line: the floor any JSONL report pays."""
    proc = subprocess.run(
        [sys.executable, "-c", _FLOOR, str(home)], capture_output=True, text=True, check=True
    )
    return float(proc.stdout)


def measure(home: Path, runs: int, jobs: str) -> tuple[int, float, float, int, dict[str, int]]:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _CHILD,
            "--log-home",
            str(home),
            "--last",
            str(runs),
            "--json",
            "--jobs",
            jobs,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    code, seconds, cpu, rss_kib = proc.stdout.split()
    summary = json.loads(
        subprocess.run(
            [
                sys.executable,
                "-m",
                "toolkit.cm.report",
                "--log-home",
                str(home),
                "--last",
                str(runs),
                "--json",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        ).stdout
    )["summary"]
    return int(code), float(seconds), float(cpu), int(rss_kib), summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--shapes", default="1000x1000,100x10000,10x100000")
    parser.add_argument("--jobs", default="0", help="passed to the report (0: automatic)")
    parser.add_argument("--generate", nargs=3, metavar=("HOME", "RUNS", "PER_RUN"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        print(write_home(Path(args.generate[0]), int(args.generate[1]), int(args.generate[2])))
        return 0
    baseline = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource, toolkit.cm.report; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    print(f"interpreter + report module alone: peak RSS {int(baseline.stdout) / 1024:.1f} MiB")
    print(
        f"{'runs x per run':>18} {'log MiB':>8} {'gen s':>6} {'report wall s':>13} {'report CPU s':>12} "
        f"{'peak RSS MiB':>13} {'json.loads CPU s':>16}  summary"
    )
    for shape in args.shapes.split(","):
        runs = int(shape.split("x")[0])
        per_run = args.events // runs
        tmp = Path(tempfile.mkdtemp(prefix="bench-usage-"))
        try:
            started = time.perf_counter()
            # generated in a child: a forked measuring child would otherwise report this process's
            # generation memory as its own peak RSS (ru_maxrss survives fork and exec)
            size = int(
                subprocess.run(
                    [sys.executable, __file__, "--generate", str(tmp / "logs"), str(runs), str(per_run)],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            generated = time.perf_counter() - started
            code, seconds, cpu, rss_kib, s = measure(tmp / "logs", runs, args.jobs)
            assert code == 0
            floor = parse_floor(tmp / "logs")
            print(
                f"{runs:>7} x {per_run:<8} {size / 2**20:>8.0f} {generated:>6.1f} {seconds:>13.2f} "
                f"{cpu:>12.2f} {rss_kib / 1024:>13.1f} {floor:>16.2f}  observed {s['observed_calls']}, "
                f"invalid {s['invalid_calls']}, unresolved {s['unresolved_claims']}",
                flush=True,
            )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
