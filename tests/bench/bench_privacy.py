"""Privacy gate benchmarks (run on purpose: ``.venv/bin/python tests/bench/bench_privacy.py``).

1. Precision / recall / F1 on the labelled corpus (tests/privacy_corpus/cases.jsonl), one file
   per case, side by side with detect-secrets (Yelp, default plugins and filters) installed in
   this benchmark's own virtual environment under /tmp (created on first run). A case counts as
   detected when its file has at least one finding. Scored on all cases, and on the secret
   cases plus their look-alikes alone (what detect-secrets targets).
2. Speed on the same files: both tools as command-line processes (best of N), and on a larger
   set (the corpus cases concatenated, copied to ``--copies`` files).
3. Cold start of the privacy hook on one small file: ``.venv/bin/workgroup-privacy-hook FILE``,
   beside ``python -c pass`` on the same machine for scale.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "privacy_corpus" / "cases.jsonl"
HELDOUT = ROOT / "tests" / "privacy_corpus" / "heldout.jsonl"  # written after the detectors, never tuned on
BIN = Path(sys.executable).parent
DS_VENV = Path(tempfile.gettempdir()) / "workgroup-bench-detect-secrets"
DS_VERSION = "1.5.0"
# Installed packages carry compiled bytecode (pip compiles on install). This checkout may run with
# PYTHONDONTWRITEBYTECODE=1, which would make every timed run recompile our sources; so the timed
# runs write and reuse bytecode under a private prefix instead (after one warm-up run).
PYC_PREFIX = Path(tempfile.gettempdir()) / "workgroup-bench-pycache"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {
    "PYTHONPYCACHEPREFIX": str(PYC_PREFIX)
}


def ensure_detect_secrets() -> Path:
    exe = DS_VENV / "bin" / "detect-secrets"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(DS_VENV)], check=True)
        subprocess.run(
            [str(DS_VENV / "bin" / "pip"), "install", "-q", f"detect-secrets=={DS_VERSION}"], check=True
        )
    return exe


def load_cases(path: Path = CORPUS) -> list[dict[str, str | None]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def materialize(cases: list[dict[str, str | None]], folder: Path) -> list[Path]:
    paths = []
    for index, case in enumerate(cases):
        path = folder / f"case_{index:04d}.txt"
        path.write_text(str(case["text"]) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def run_ours(folder: Path) -> tuple[set[str], dict[str, set[str]]]:
    proc = subprocess.run(
        [str(BIN / "workgroup"), "privacy", "scan", "--json", str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    data = json.loads(proc.stdout)
    rules: dict[str, set[str]] = {}
    for row in data["findings"]:
        rules.setdefault(Path(row["path"]).name, set()).add(row["rule"])
    return set(rules), rules


def run_detect_secrets(exe: Path, folder: Path) -> set[str]:
    proc = subprocess.run(
        [str(exe), "scan", "--all-files", "."], cwd=folder, capture_output=True, text=True, check=False
    )
    data = json.loads(proc.stdout)
    return {Path(name).name for name, hits in data["results"].items() if hits}


def score(
    cases: list[dict[str, str | None]], paths: list[Path], flagged: set[str], keep: set[int] | None = None
) -> dict[str, float]:
    tp = fp = fn = tn = 0
    for index, (case, path) in enumerate(zip(cases, paths, strict=True)):
        if keep is not None and index not in keep:
            continue
        hit = path.name in flagged
        if case["expect"]:
            tp, fn = tp + hit, fn + (not hit)
        else:
            fp, tn = fp + hit, tn + (not hit)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": precision, "recall": recall, "f1": f1}


def best_of(command: list[str], cwd: Path, repeat: int) -> float:
    subprocess.run(command, cwd=cwd, capture_output=True, check=False, env=ENV)  # warm-up: bytecode
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, capture_output=True, check=False, env=ENV)
        times.append(time.perf_counter() - start)
    return min(times)


def timings(command: list[str], cwd: Path, repeat: int) -> tuple[float, float, float]:
    """(min wall, median wall, median CPU user+sys of the child): CPU time is the steadier
    figure on a shared, loaded machine."""
    import resource

    subprocess.run(command, cwd=cwd, capture_output=True, check=False, env=ENV)  # warm-up: bytecode
    times, cpu = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, capture_output=True, check=False, env=ENV)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(times), statistics.median(times), statistics.median(cpu)


def row(name: str, s: dict[str, float]) -> str:
    return (
        f"| {name} | {s['tp']} | {s['fp']} | {s['fn']} | {s['tn']} | {s['precision']:.3f} | "
        f"{s['recall']:.3f} | {s['f1']:.3f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--copies", type=int, default=20)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from toolkit.privacy.engine import LINE_RULES, RULES

    category = {r.id: r.category.value for r in RULES} | {r.id: r.category.value for r in LINE_RULES}
    secret_rules = {rid for rid, cat in category.items() if cat == "secret"}
    ds = ensure_detect_secrets()
    cases = load_cases()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "cases"
        folder.mkdir()
        paths = materialize(cases, folder)
        ours, our_rules = run_ours(folder)
        theirs = run_detect_secrets(ds, folder)
        secret_idx = {
            i
            for i, c in enumerate(cases)
            if (c["expect"] in secret_rules) or (not c["expect"] and c.get("near") in secret_rules)
        }
        right_category = sum(
            1
            for c, p in zip(cases, paths, strict=True)
            if c["expect"]
            and any(category.get(r) == category[str(c["expect"])] for r in our_rules.get(p.name, ()))
        )
        positives = sum(1 for c in cases if c["expect"])
        print(
            f"corpus: {positives} positive cases, {len(cases) - positives} look-alikes "
            f"({len(secret_idx)} in the secret subset); detect-secrets {DS_VERSION}, default settings\n"
        )
        print("| scanner / cases | TP | FP | FN | TN | precision | recall | F1 |")
        print("|---|---|---|---|---|---|---|---|")
        print(row("workgroup, all cases", score(cases, paths, ours)))
        print(row("detect-secrets, all cases", score(cases, paths, theirs)))
        print(row("workgroup, secret subset", score(cases, paths, ours, secret_idx)))
        print(row("detect-secrets, secret subset", score(cases, paths, theirs, secret_idx)))
        print(f"\nworkgroup findings in the expected category: {right_category}/{positives}")

        held = load_cases(HELDOUT)
        held_dir = Path(tmp) / "heldout"
        held_dir.mkdir()
        held_paths = materialize(held, held_dir)
        held_ours, _ = run_ours(held_dir)
        held_theirs = run_detect_secrets(ds, held_dir)
        held_pos = sum(1 for c in held if c["expect"])
        held_secret = {i for i, c in enumerate(held) if c["expect"] in ("secret", None)}
        print(
            f"\nheld-out set (written after the detectors, not tuned on): {held_pos} positive, "
            f"{len(held) - held_pos} look-alikes"
        )
        print("| scanner / cases | TP | FP | FN | TN | precision | recall | F1 |")
        print("|---|---|---|---|---|---|---|---|")
        print(row("workgroup, held-out", score(held, held_paths, held_ours)))
        print(row("detect-secrets, held-out", score(held, held_paths, held_theirs)))
        print(
            row(
                "workgroup, held-out secrets + all look-alikes",
                score(held, held_paths, held_ours, held_secret),
            )
        )
        print(
            row(
                "detect-secrets, held-out secrets + all look-alikes",
                score(held, held_paths, held_theirs, held_secret),
            )
        )

        ours_cmd = [str(BIN / "workgroup-privacy-all-hook"), *[p.name for p in paths]]
        cli_cmd = [str(BIN / "workgroup"), "privacy", "scan", "--json", "."]
        ds_cmd = [str(ds), "scan", "--all-files", "."]
        t_hook = best_of(ours_cmd, folder, args.repeat)
        t_cli = best_of(cli_cmd, folder, args.repeat)
        t_ds = best_of(ds_cmd, folder, args.repeat)
        print(f"\nspeed, {len(paths)} corpus files (best of {args.repeat}):")
        print(f"  workgroup-privacy-all-hook FILES   {t_hook * 1000:8.0f} ms   ({t_ds / t_hook:.1f}x faster)")
        print(f"  workgroup privacy scan --json .    {t_cli * 1000:8.0f} ms   ({t_ds / t_cli:.1f}x faster)")
        print(f"  detect-secrets scan --all-files .  {t_ds * 1000:8.0f} ms")

        big = Path(tmp) / "big"
        big.mkdir()
        blob = "\n".join(str(c["text"]) for c in cases) + "\n"
        for index in range(args.copies):
            (big / f"chunk_{index:03d}.txt").write_text(blob, encoding="utf-8")
        size = len(blob.encode("utf-8")) * args.copies
        t_big_ours = best_of(
            [str(BIN / "workgroup-privacy-all-hook"), *sorted(os.listdir(big))], big, args.repeat
        )
        t_big_ds = best_of(ds_cmd, big, max(1, args.repeat // 2))
        print(f"\nspeed, {args.copies} files of the concatenated corpus ({size / 1024:.0f} KiB):")
        print(
            f"  workgroup-privacy-all-hook FILES   {t_big_ours * 1000:8.0f} ms   "
            f"({t_big_ds / t_big_ours:.1f}x faster)"
        )
        print(f"  detect-secrets scan --all-files .  {t_big_ds * 1000:8.0f} ms")

        small = Path(tmp) / "small.json"
        small.write_text(
            '{"objective": "ship the login fix", "next_action": "run tests"}\n', encoding="utf-8"
        )
        hook = timings([str(BIN / "workgroup-privacy-hook"), str(small)], Path(tmp), args.repeat * 4)
        bare = timings([sys.executable, "-c", "pass"], Path(tmp), args.repeat * 4)
        print(
            f"\ncold start, workgroup-privacy-hook on one small file ({args.repeat * 4} runs): "
            f"wall min {hook[0] * 1000:.0f} ms, median {hook[1] * 1000:.0f} ms; "
            f"CPU median {hook[2] * 1000:.0f} ms"
        )
        print(
            f"  for scale, python -c pass on this machine: wall min {bare[0] * 1000:.0f} ms, "
            f"median {bare[1] * 1000:.0f} ms; CPU median {bare[2] * 1000:.0f} ms"
        )
        print(f"  load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    shutil.rmtree(DS_VENV / "__pycache__", ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
