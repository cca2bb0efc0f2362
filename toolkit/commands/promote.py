"""``workgroup promote``: the promotion decision with every gate, its value and threshold."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def render_gates(result: Mapping[str, Any]) -> list[str]:
    """A fixed-width table of the gates, then provenance reasons and the report-only section (lines,
    each printed by ``echo``: stratum names come from the pairs file)."""
    lines = [f"{'gate':<18}{'result':<8}{'value':>12}  {'':2}{'threshold':>10}"]
    for row in result["gate_details"]:
        lines.append(
            f"{row['gate']:<18}{'pass' if row['passed'] else 'FAIL':<8}{_fmt(row['value']):>12}  "
            f"{row['comparison']:<2}{_fmt(row['threshold']):>10}"
        )
    if result["provenance_failures"]:
        lines.append("provenance: " + ", ".join(result["provenance_failures"]))
    boot = result["report"]["bootstrap"]
    for name, ci in boot.items():
        lines.append(
            f"report only: {name} {_fmt(ci['estimate'])} "
            f"(95% bootstrap CI {_fmt(ci['low'])} .. {_fmt(ci['high'])}, {ci['samples']} resamples)"
        )
    lines.append(f"{'stratum':<24}{'n':>4}{'cost cut':>10}{'time cut':>10}{'quality drop':>14}")
    for row in result["report"]["strata"]:
        lines.append(
            f"{row['stratum']:<24}{row['n']:>4}{_fmt(row.get('median_cost_reduction')):>10}"
            f"{_fmt(row.get('median_wall_time_reduction')):>10}{_fmt(row.get('quality_drop_points')):>14}"
        )
    lines.append("decision: " + ("PROMOTE" if result["promote"] else "REFUSED"))
    if result.get("recorded"):
        lines.append(f"recorded: {result['recorded']}")
    return lines


def register(app: typer.Typer) -> None:
    @app.command("promote")
    def promote(
        pairs: Annotated[Path, typer.Option("--pairs", help="Paired results (JSON).")],
        envelope: Annotated[Path, typer.Option("--envelope", help="Signed measurement envelope v2 (JSON).")],
        trusted_keys: Annotated[
            Path, typer.Option("--trusted-keys", help="Directory of <signer_key_id>.pem public keys.")
        ],
        expected_candidate_version: Annotated[
            str | None, typer.Option("--expected-candidate-version", help="Required to promote.")
        ] = None,
        expected_corpus_version: Annotated[
            str | None, typer.Option("--expected-corpus-version", help="Required to promote.")
        ] = None,
        runtime_digest: Annotated[
            str | None, typer.Option("--runtime-digest", help="Default: the digest of the installed runtime.")
        ] = None,
        thresholds: Annotated[
            Path | None, typer.Option("--thresholds", help="JSON object of stricter thresholds.")
        ] = None,
        now: Annotated[
            str | None, typer.Option("--now", help="Evaluation time (RFC 3339); default: now.")
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
    ) -> int:
        """Decide a promotion from signed paired results; exit 0 promote, 1 refused."""
        from toolkit.commands._common import echo, emit_json, moment_or_now, read_json_file, repository, say
        from toolkit.records.promotions import decide, load_trusted_keys, read_pairs_file
        from toolkit.records.promotions import runtime_digest as installed_digest

        pair_list, synthetic = read_pairs_file(pairs)
        env = read_json_file(envelope, what="envelope file")
        keys = load_trusted_keys(trusted_keys)
        when = moment_or_now(now)
        limits = None if thresholds is None else read_json_file(thresholds, what="thresholds file")
        # Without an explicit expectation nothing matches: a missing version never passes silently.
        repo = repository()
        result = decide(
            repo.layout,
            pairs=pair_list,
            synthetic=synthetic,
            envelope=env,
            trusted_keys=keys,
            now=when,
            expected_candidate_version=expected_candidate_version or "",
            expected_corpus_version=expected_corpus_version or "",
            expected_runtime_digest=runtime_digest or installed_digest(),
            thresholds=limits,
            checkpoint_sha=None if repo.head_is_unborn else repo.resolve_commit("HEAD"),
        )
        if as_json:
            emit_json(result)
        else:
            for line in render_gates(result):
                echo(line)
        if synthetic:
            say("the pairs are marked synthetic: they validate the evaluator and can never promote")
        return 0 if result["promote"] else 1
