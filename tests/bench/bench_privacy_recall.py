"""Recall of planted secrets, ours side by side with detect-secrets and secretlint (run on purpose).

    .venv/bin/python tests/bench/bench_privacy_recall.py [--seed N] [--extra N] [--keep DIR] [--list FAMILY]

Fake secrets of every family (tests/bench/_recall_fakes.py: real formats, valid checksums, drawn
from ``--seed`` at run time, never stored) are planted into copies of real files of public
repositories, in the places people leak them: config files (YAML, TOML, INI, JSON), ``.env``,
shell scripts, CI workflows, notebooks, Markdown docs, Python tests, and the credential files
(``.npmrc``, ``.pypirc``, ``.netrc``, docker ``config.json``, a Kubernetes Secret). Each plant is
one line (a PEM block its lines); a finding on that line of that file is a hit.

The three scanners run on the same trees in the same run: ``workgroup privacy scan --all-files
--json`` (every file, as the all-files hook sees them), ``detect-secrets scan --all-files`` and
``secretlint --format json "**/*"`` with its recommended preset. False alarms are each tool's
findings on the clean copy (the same files, nothing planted), and their findings on look-alikes
planted alongside the secrets (environment references, placeholders, format placeholders, public
keys, a JWT header alone, base64 JSON, identifiers, hashes, UUIDs, cache busters, tokens with a
wrong checksum, AWS's documentation key, command lines and headers without a secret, connection
strings without a password). MB/CPU-s is our in-process scan of the planted tree, one process,
the best of three after a warm-up.

``--source DIR`` scans with the toolkit of another checkout (e.g. ``git archive`` of an older commit),
for a before/after table; the default is this checkout.

Environment (nothing is looked for elsewhere; a missing one skips, saying why, exit 0):
    WORKGROUP_BENCH_REPOS  folders of git clones, separated by the path separator (``:``),
                           at least three (e.g. requests, httpx, fastapi)
    DETECT_SECRETS_BIN     the detect-secrets 1.5.0 executable
    SECRETLINT_BIN         the secretlint executable of an npm install that also has
                           @secretlint/secretlint-rule-preset-recommend
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import _recall_fakes as fk  # noqa: E402
import _recall_plant as rp  # noqa: E402

TOOLS = ("ours", "detect-secrets", "secretlint")
# ``workgroup`` from the source tree given first (sys.path[0] wins over the installed package)
BOOT = "import sys; sys.path.insert(0, sys.argv.pop(1)); from toolkit.entry import main; raise SystemExit(main())"


def _skip(why: str) -> int:
    print(f"skipped: {why}")
    return 0


def run_ours(source: Path, tree: Path) -> set[tuple[str, int]]:
    argv = [sys.executable, "-c", BOOT, str(source), "privacy", "scan", "--all-files", "--json", "."]
    done = subprocess.run(argv, cwd=tree, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"workgroup privacy scan exited {done.returncode}: {done.stderr[-500:]}")
    return {(row["path"], int(row["line"])) for row in json.loads(done.stdout)["findings"]}


def run_detect_secrets(exe: str, tree: Path) -> set[tuple[str, int]]:
    done = subprocess.run([exe, "scan", "--all-files"], cwd=tree, capture_output=True, text=True, check=True)
    results = json.loads(done.stdout)["results"]
    return {(path, int(item["line_number"])) for path, items in results.items() for item in items}


def run_secretlint(exe: str, tree: Path, config: Path) -> set[tuple[str, int]]:
    report = config.with_name(f"secretlint-{tree.name}.json")  # a file: node cuts a long piped stdout short
    done = subprocess.run(
        [exe, "--secretlintrc", str(config), "--format", "json", "--output", str(report), "**/*"],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(f"secretlint exited {done.returncode}: {done.stderr[-500:]}")
    hits = set()
    for result in json.loads(report.read_text(encoding="utf-8") or "[]"):
        rel = os.path.relpath(result["filePath"], tree)
        for message in result.get("messages", []):
            hits.add((rel, int(message["loc"]["start"]["line"])))
    return hits


THROUGHPUT = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from toolkit.privacy.selection import scan_targets, select
tree = Path(sys.argv[2])
targets = select(["."], tree, tree, all_files=True, notices=[])
scan_targets(targets, tree, jobs=1)
best = float("inf")
for _ in range(3):
    cpu = time.process_time()
    scan_targets(targets, tree, jobs=1)
    best = min(best, time.process_time() - cpu)
print(sum(t.size for t in targets) / 1e6, best)
"""


def throughput(source: Path, tree: Path) -> tuple[float, float]:
    """(MB, CPU seconds) of our scan of ``tree`` in one process: the best of three after a warm-up."""
    argv = [sys.executable, "-c", THROUGHPUT, str(source), str(tree)]
    done = subprocess.run(argv, cwd=tree, capture_output=True, text=True, check=True)
    megabytes, cpu = done.stdout.split()
    return float(megabytes), float(cpu)


def hit(plant: rp.Plant, found: set[tuple[str, int]]) -> bool:
    return any((plant.path, line) in found for line in range(plant.first, plant.last + 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument(
        "--extra", type=int, default=150, help="unplanted files copied per repository (0: all)"
    )
    parser.add_argument(
        "--keep", type=Path, help="build the trees here and keep them (default: a temp folder)"
    )
    parser.add_argument("--list", default="", help="print each plant of FAMILY (masked) and who found it")
    parser.add_argument("--misses", action="store_true", help="print each secret we missed (masked)")
    parser.add_argument("--source", type=Path, default=ROOT, help="the toolkit checkout to scan with")
    args = parser.parse_args(argv)

    repos = [Path(p) for p in os.environ.get("WORKGROUP_BENCH_REPOS", "").split(os.pathsep) if p]
    if len(repos) < 3:
        return _skip("WORKGROUP_BENCH_REPOS must name at least three repository clones")
    missing = [str(p) for p in repos if not (p / ".git").exists()]
    if missing:
        return _skip("not a git clone: " + ", ".join(missing))
    ds, sl = os.environ.get("DETECT_SECRETS_BIN", ""), os.environ.get("SECRETLINT_BIN", "")
    if not (args.source / "toolkit" / "entry.py").is_file():
        return _skip(f"--source {args.source} holds no toolkit/entry.py")
    for label, exe in (("DETECT_SECRETS_BIN", ds), ("SECRETLINT_BIN", sl)):
        if not exe or not os.access(exe, os.X_OK):
            return _skip(f"{label} is not set to an executable")

    with tempfile.TemporaryDirectory(prefix="recall-") as scratch:
        out = args.keep or Path(scratch)
        config = Path(scratch) / "secretlintrc.json"
        config.write_text(json.dumps({"rules": [{"id": "@secretlint/secretlint-rule-preset-recommend"}]}))
        named = {p.resolve().name: p.resolve() for p in repos}
        plants = rp.build(named, out, args.seed, args.extra)
        broken = rp.check_syntax(out / "planted", plants)
        commits = {
            name: subprocess.run(
                ["git", "rev-parse", "--short=12", "HEAD"], cwd=p, capture_output=True, text=True
            ).stdout.strip()
            for name, p in named.items()
        }
        found: dict[str, dict[str, set[tuple[str, int]]]] = {}
        seconds: dict[str, float] = {}
        for tool in TOOLS:
            found[tool] = {}
            start = time.perf_counter()
            for tree in ("planted", "clean"):
                if tool == "ours":
                    found[tool][tree] = run_ours(args.source.resolve(), out / tree)
                elif tool == "detect-secrets":
                    found[tool][tree] = run_detect_secrets(ds, out / tree)
                else:
                    found[tool][tree] = run_secretlint(sl, out / tree, config.resolve())
            seconds[tool] = time.perf_counter() - start
        megabytes, cpu = throughput(args.source.resolve(), out / "planted")
        files = sum(1 for _ in (out / "planted").rglob("*") if _.is_file())
        report(plants, found, args)
        if args.misses:
            misses(out / "planted", plants, found["ours"]["planted"])
        print()
        print(f"seed {args.seed}; repositories: " + ", ".join(f"{n}@{c}" for n, c in sorted(commits.items())))
        print(
            f"planted tree: {files} files, {rp.tree_bytes(out / 'planted') / 1e6:.1f} MB, {len(plants)} plants"
        )
        print("files whose syntax the planting broke: " + (", ".join(broken) if broken else "none"))
        print(
            f"our throughput: {megabytes:.2f} MB in {cpu:.2f} CPU s = {megabytes / max(cpu, 1e-9):.1f} MB/CPU-s"
        )
        print("wall seconds (both trees): " + ", ".join(f"{t} {s:.1f}" for t, s in seconds.items()))
    return 0


def report(
    plants: list[rp.Plant], found: dict[str, dict[str, set[tuple[str, int]]]], args: argparse.Namespace
) -> None:
    per: dict[str, Counter[str]] = {}
    for plant in plants:
        row = per.setdefault(plant.fake.family, Counter())
        row["planted"] += 1
        for tool in TOOLS:
            row[tool] += hit(plant, found[tool]["planted"])
        if args.list and plant.fake.family == args.list:
            who = ",".join(t for t in TOOLS if hit(plant, found[t]["planted"])) or "-"
            print(
                f"  {plant.path}:{plant.first}-{plant.last} [{plant.context}] {plant.fake.secret[:4]}... {who}"
            )
    print(f"{'family':26} {'planted':>7} {'ours':>5} {'d-s':>5} {'slint':>5}  note")
    short = []
    for family in fk.FAMILIES:
        row = per[family]
        best_peer = max(row["detect-secrets"], row["secretlint"])
        notes = []
        if row["ours"] < 0.95 * row["planted"]:
            notes.append("below 0.95")
        if row["ours"] < best_peer:
            notes.append("behind a peer")
        if notes:
            short.append(family)
        print(
            f"{family:26} {row['planted']:>7} {row['ours']:>5} {row['detect-secrets']:>5} {row['secretlint']:>5}  {'; '.join(notes)}"
        )
    secrets = [p for p in plants if not p.lookalike]
    total = len(secrets)
    print()
    print(f"{'total':26} {total:>7} " + " ".join(f"{sum(per[f][t] for f in fk.FAMILIES):>5}" for t in TOOLS))
    print("recall: " + ", ".join(f"{t} {sum(per[f][t] for f in fk.FAMILIES) / total:.3f}" for t in TOOLS))
    print("families short of the target: " + (", ".join(short) if short else "none"))
    print()
    by_context: dict[str, Counter[str]] = {}
    for plant in secrets:
        row = by_context.setdefault(plant.context, Counter())
        row["planted"] += 1
        for tool in TOOLS:
            row[tool] += hit(plant, found[tool]["planted"])
    print(f"{'context':26} {'planted':>7} {'ours':>5} {'d-s':>5} {'slint':>5}")
    for context, row in sorted(by_context.items()):
        print(f"{context:26} {row['planted']:>7} " + " ".join(f"{row[t]:>5}" for t in TOOLS))
    print()
    print(
        f"{'look-alike (a finding is a false alarm)':40} {'planted':>7} {'ours':>5} {'d-s':>5} {'slint':>5}"
    )
    for family in fk.LOOKALIKES:
        row = per[family]
        print(
            f"{family:40} {row['planted']:>7} {row['ours']:>5} {row['detect-secrets']:>5} {row['secretlint']:>5}"
        )
    print(
        f"{'total':40} {len(plants) - total:>7} "
        + " ".join(f"{sum(per[f][t] for f in fk.LOOKALIKES):>5}" for t in TOOLS)
    )
    print()
    planted_lines = {(p.path, line) for p in plants for line in range(p.first, p.last + 1)}
    print("false alarms on the clean copy: " + ", ".join(f"{t} {len(found[t]['clean'])}" for t in TOOLS))
    print(
        "findings off the planted lines (planted copy): "
        + ", ".join(f"{t} {len(found[t]['planted'] - planted_lines)}" for t in TOOLS)
    )


def misses(tree: Path, plants: list[rp.Plant], found: set[tuple[str, int]]) -> None:
    """Each planted secret our scan did not report: where, in what context, the line masked."""
    print()
    for plant in plants:
        if plant.lookalike or hit(plant, found):
            continue
        line = (tree / plant.path).read_text(encoding="utf-8").splitlines()[plant.first - 1].strip()
        for needle in rp.needles(plant.fake):
            line = line.replace(needle, needle[:4] + "***")
        print(f"missed {plant.fake.family} [{plant.context}] {plant.path}:{plant.first}: {line[:140]}")


if __name__ == "__main__":
    raise SystemExit(main())
