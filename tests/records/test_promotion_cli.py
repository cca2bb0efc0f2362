"""`workgroup measure` and `workgroup promote` end to end: keys in files, the replay ledger, races."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.harness import GitRepo, declared_keys, run_workgroup
from support.harness import cli as workgroup
from support.promotion_data import NOW, pairs

from toolkit.core.timefmt import format_utc
from toolkit.infra.resources import data_dir
from toolkit.records.promotions import runtime_digest

NOW_TEXT = format_utc(NOW)
EXPECT_ARGS = ["--expected-candidate-version", "candidate-v1", "--expected-corpus-version", "corpus-v1"]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """``workgroup ARGS`` in-process (the machine is shared: subprocesses only where they matter),
    answered in the shape of :func:`run_workgroup`, which the end-to-end tests here use."""
    code, out, err = workgroup(*args, cwd=cwd)
    return subprocess.CompletedProcess(list(args), code, out.encode(), err.encode())


def _ok(proc: subprocess.CompletedProcess[bytes], code: int = 0) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout.decode("utf-8")


@pytest.fixture
def signed_run(git_repo: GitRepo) -> dict[str, Path]:
    """A repository with a key pair, trusted keys dir, measured pairs and their signed envelope."""
    root = git_repo.path
    _ok(cli("measure", "keygen", "keys", "--key-id", "measurement-key-ci", cwd=root))
    trusted = root / "trusted"
    trusted.mkdir()
    (trusted / "measurement-key-ci.pem").write_bytes((root / "keys" / "measurement-key-ci.pem").read_bytes())
    (root / "pairs.json").write_text(json.dumps({"pairs": pairs()}), encoding="utf-8")
    _ok(
        cli(
            "measure",
            "sign",
            "--pairs",
            "pairs.json",
            "--key",
            "keys/measurement-key-ci.key",
            "--candidate-version",
            "candidate-v1",
            "--corpus-version",
            "corpus-v1",
            "--run-id",
            "measurement-00000000000000aa",
            "--measured-at",
            "2026-07-30T12:00:00Z",
            "--out",
            "envelope.json",
            cwd=root,
        )
    )
    return {
        "root": root,
        "trusted": trusted,
        "envelope": root / "envelope.json",
        "pairs": root / "pairs.json",
    }


def _promote(
    run: dict[str, Path],
    *extra: str,
    envelope: Path | None = None,
    pairs_file: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    return cli(
        "promote",
        "--pairs",
        str(pairs_file or run["pairs"]),
        "--envelope",
        str(envelope or run["envelope"]),
        "--trusted-keys",
        str(run["trusted"]),
        *EXPECT_ARGS,
        "--now",
        NOW_TEXT,
        "--json",
        *extra,
        cwd=run["root"],
    )


def _json(proc: subprocess.CompletedProcess[bytes]) -> Any:
    return json.loads(proc.stdout.decode("utf-8"))


def test_keygen_private_key_is_owner_only(signed_run: dict[str, Path]) -> None:
    key = signed_run["root"] / "keys" / "measurement-key-ci.key"
    assert (key.stat().st_mode & 0o777) == 0o600
    assert b"PRIVATE KEY" in key.read_bytes()
    again = cli("measure", "keygen", "keys", "--key-id", "measurement-key-ci", cwd=signed_run["root"])
    assert again.returncode == 1 and b"KEY_EXISTS" in again.stderr


def test_envelope_is_flat_v2_and_signed_with_installed_runtime_digest(signed_run: dict[str, Path]) -> None:
    envelope = json.loads(signed_run["envelope"].read_text(encoding="utf-8"))
    assert sorted(envelope) == sorted(
        [
            "accounting_source",
            "candidate_version",
            "corpus_digest",
            "corpus_version",
            "measured_at",
            "measurement_run_id",
            "pair_count",
            "promotion_authorized",
            "runtime_digest",
            "schema",
            "signature",
            "signer_key_id",
        ]
    )
    assert envelope["runtime_digest"] == runtime_digest()
    assert envelope["signer_key_id"] == "measurement-key-ci" and envelope["promotion_authorized"] is True


def test_promote_records_decision_and_refuses_replay(signed_run: dict[str, Path]) -> None:
    first = _promote(signed_run)
    result = _json(first)
    assert first.returncode == 0 and result["promote"] is True
    record = signed_run["root"] / ".workgroup" / "promotions" / "measurement-00000000000000aa.json"
    assert result["recorded"] == ".workgroup/promotions/measurement-00000000000000aa.json"
    stored = json.loads(record.read_text(encoding="utf-8"))
    assert (
        stored["promote"] is True
        and stored["envelope"]["measurement_run_id"] == "measurement-00000000000000aa"
    )
    # the caller forgot to pass consumed ids: the ledger refuses the replay anyway
    second = _promote(signed_run)
    assert second.returncode == 1
    assert _json(second)["provenance_failures"] == ["RUN_ID_REPLAYED"]


def test_replay_refused_by_committed_record_without_local_ledger(signed_run: dict[str, Path]) -> None:
    _ok(_promote(signed_run))
    ledger = signed_run["root"] / ".git" / "workgroup" / "replay-ledger.jsonl"
    assert ledger.is_file()
    ledger.unlink()  # e.g. a fresh clone: only the committed record remains
    assert _json(_promote(signed_run))["provenance_failures"] == ["RUN_ID_REPLAYED"]


def test_replay_refused_by_local_ledger_without_committed_record(signed_run: dict[str, Path]) -> None:
    _ok(_promote(signed_run))
    record = signed_run["root"] / ".workgroup" / "promotions" / "measurement-00000000000000aa.json"
    record.unlink()  # an uncommitted decision was discarded: the local ledger still guards it
    proc = _promote(signed_run)
    assert proc.returncode == 1 and _json(proc)["provenance_failures"] == ["RUN_ID_REPLAYED"]
    assert not record.exists()


def test_replay_race_across_processes(signed_run: dict[str, Path]) -> None:
    """Four processes race one envelope: exactly one records a promotion."""
    args = [
        sys.executable,
        "-m",
        "toolkit",
        "promote",
        "--pairs",
        str(signed_run["pairs"]),
        "--envelope",
        str(signed_run["envelope"]),
        "--trusted-keys",
        str(signed_run["trusted"]),
        *EXPECT_ARGS,
        "--now",
        NOW_TEXT,
        "--json",
    ]
    procs = [
        subprocess.Popen(
            args, cwd=signed_run["root"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ)
        )
        for _ in range(4)
    ]
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        outcomes.append((proc.returncode, json.loads(out)))
    assert sorted(code for code, _ in outcomes) == [0] + [1] * 3, outcomes
    losers = [result for code, result in outcomes if code == 1]
    assert all(result["provenance_failures"] == ["RUN_ID_REPLAYED"] for result in losers)
    ledger = (signed_run["root"] / ".git" / "workgroup" / "replay-ledger.jsonl").read_text(encoding="utf-8")
    assert len(ledger.splitlines()) == 1


def test_untrusted_envelope_consumes_nothing(signed_run: dict[str, Path]) -> None:
    envelope = json.loads(signed_run["envelope"].read_text(encoding="utf-8"))
    envelope["signature"] = "AA=="
    bad = signed_run["root"] / "bad.json"
    bad.write_text(json.dumps(envelope), encoding="utf-8")
    proc = _promote(signed_run, envelope=bad)
    assert proc.returncode == 1 and _json(proc)["provenance_failures"] == ["SIGNATURE_INVALID"]
    assert not (signed_run["root"] / ".workgroup" / "promotions").exists()
    _ok(_promote(signed_run))  # the genuine envelope is still usable


def test_tampered_pairs_file(signed_run: dict[str, Path]) -> None:
    data = json.loads(signed_run["pairs"].read_text(encoding="utf-8"))
    data["pairs"][0]["candidate"]["billed_cost"] = 1
    tampered = signed_run["root"] / "tampered.json"
    tampered.write_text(json.dumps(data), encoding="utf-8")
    proc = _promote(signed_run, pairs_file=tampered)
    assert proc.returncode == 1 and _json(proc)["provenance_failures"] == ["CORPUS_DIGEST_MISMATCH"]


def test_runtime_digest_mismatch_and_missing_expectations(signed_run: dict[str, Path]) -> None:
    proc = _promote(signed_run, "--runtime-digest", "sha256:" + "2" * 64)
    assert _json(proc)["provenance_failures"] == ["RUNTIME_DIGEST_MISMATCH"]
    proc = cli(
        "promote",
        "--pairs",
        str(signed_run["pairs"]),
        "--envelope",
        str(signed_run["envelope"]),
        "--trusted-keys",
        str(signed_run["trusted"]),
        "--now",
        NOW_TEXT,
        "--json",
        cwd=signed_run["root"],
    )
    failures = _json(proc)["provenance_failures"]
    assert "EXPECTED_CANDIDATE_VERSION_INVALID" in failures and "EXPECTED_CORPUS_VERSION_INVALID" in failures


def test_unknown_key_id_in_trusted_dir(signed_run: dict[str, Path]) -> None:
    (signed_run["trusted"] / "measurement-key-ci.pem").unlink()
    proc = _promote(signed_run)
    assert proc.returncode == 1 and _json(proc)["provenance_failures"] == ["UNTRUSTED_SIGNER_KEY"]


def test_shipped_synthetic_pairs_are_refused(signed_run: dict[str, Path]) -> None:
    root = signed_run["root"]
    synthetic = data_dir("corpus") / "paired-results.json"
    _ok(
        cli(
            "measure",
            "sign",
            "--pairs",
            str(synthetic),
            "--key",
            "keys/measurement-key-ci.key",
            "--candidate-version",
            "candidate-v1",
            "--corpus-version",
            "corpus-v1",
            "--measured-at",
            "2026-07-30T12:00:00Z",
            "--out",
            "synthetic-envelope.json",
            cwd=root,
        )
    )
    envelope = json.loads((root / "synthetic-envelope.json").read_text(encoding="utf-8"))
    assert envelope["promotion_authorized"] is False
    proc = _promote(signed_run, envelope=root / "synthetic-envelope.json", pairs_file=synthetic)
    result = _json(proc)
    assert proc.returncode == 1 and result["promote"] is False and result["gates"]["provenance"] is False
    assert result["provenance_failures"][0] == "SYNTHETIC_DATA"
    assert not (root / ".workgroup" / "promotions").exists()


def test_human_table_lists_every_gate(signed_run: dict[str, Path]) -> None:
    proc = run_workgroup(  # end to end, as a user runs it
        "promote",
        "--pairs",
        str(signed_run["pairs"]),
        "--envelope",
        str(signed_run["envelope"]),
        "--trusted-keys",
        str(signed_run["trusted"]),
        *EXPECT_ARGS,
        "--now",
        NOW_TEXT,
        cwd=signed_run["root"],
    )
    text = _ok(proc)
    for gate in (
        "provenance",
        "sample_size",
        "strata",
        "median_cost",
        "p75_cost",
        "p95_cost",
        "median_wall_time",
        "quality",
        "rework",
        "security",
        "reconciliation",
    ):
        assert gate in text
    assert "decision: PROMOTE" in text and "bootstrap CI" in text


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--pairs", "missing.json"], "FILE_NOT_FOUND"),
        (["--trusted-keys", "nowhere"], "TRUSTED_KEYS_DIR_INVALID"),
        (["--now", "2026-02-30T00:00:00Z"], "INVALID_DATE_TIME"),
    ],
)
def test_bad_input_exit_2(signed_run: dict[str, Path], args: list[str], code: str) -> None:
    base = {
        "--pairs": str(signed_run["pairs"]),
        "--envelope": str(signed_run["envelope"]),
        "--trusted-keys": str(signed_run["trusted"]),
        "--now": NOW_TEXT,
    }
    base[args[0]] = args[1]
    flat = [item for pair in base.items() for item in pair]
    proc = cli("promote", *flat, *EXPECT_ARGS, cwd=signed_run["root"])
    assert proc.returncode == 2 and code.encode() in proc.stderr and b"Traceback" not in proc.stderr


def test_out_of_bounds_pairs_are_exit_2(signed_run: dict[str, Path]) -> None:
    data = pairs()
    data[0]["candidate"]["quality_score"] = 101
    bad = signed_run["root"] / "bounds.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    proc = _promote(signed_run, pairs_file=bad)
    assert proc.returncode == 2 and b"PROMOTION_INPUT_INVALID" in proc.stderr


def test_sign_refuses_bad_fields_and_never_takes_keys_from_arguments(signed_run: dict[str, Path]) -> None:
    root = signed_run["root"]
    proc = cli(
        "measure",
        "sign",
        "--pairs",
        "pairs.json",
        "--key",
        "keys/measurement-key-ci.key",
        "--candidate-version",
        "candidate-v1",
        "--corpus-version",
        "corpus-v1",
        "--run-id",
        "run-1",
        cwd=root,
    )
    assert proc.returncode == 2 and b"MEASUREMENT_FIELD_INVALID" in proc.stderr
    (root / "not-a-key.pem").write_text("hello", encoding="utf-8")
    proc = cli(
        "measure",
        "sign",
        "--pairs",
        "pairs.json",
        "--key",
        "not-a-key.pem",
        "--key-id",
        "measurement-key-ci",
        "--candidate-version",
        "c",
        "--corpus-version",
        "k",
        cwd=root,
    )
    assert proc.returncode == 2 and b"SIGNING_KEY_INVALID" in proc.stderr
    assert b"hello" not in proc.stderr


def test_committed_record_passes_verify_and_restores_the_envelope(
    signed_run: dict[str, Path], git_repo: GitRepo
) -> None:
    from toolkit.records.promotions import envelope_from_record

    head = git_repo.commit("base", files={"README.md": "demo\n"})
    result = _json(_promote(signed_run))
    record = json.loads((signed_run["root"] / result["recorded"]).read_text(encoding="utf-8"))
    assert record["checkpoint_sha"] == head  # the decision is bound to the commit it was made at
    assert envelope_from_record(record) == json.loads(signed_run["envelope"].read_text(encoding="utf-8"))
    git_repo.commit("record the promotion decision")
    code, out, err = (lambda p: (p.returncode, p.stdout, p.stderr))(cli("verify", cwd=signed_run["root"]))
    assert code == 0, (out, err)


def test_a_signed_envelope_is_what_a_trusted_envelope_declares(signed_run: dict[str, Path]) -> None:
    """Issue #25: ``decide`` reads a trusted envelope as a TrustedEnvelope: its keys are exactly the
    ones the runtime's check admits, in the order ``measure sign`` writes them."""
    from toolkit.records.promotions import TrustedEnvelope
    from toolkit.runtime.envelope import ENVELOPE_KEYS

    envelope = json.loads(signed_run["envelope"].read_text(encoding="utf-8"))
    assert list(envelope) == declared_keys(TrustedEnvelope)
    assert sorted(declared_keys(TrustedEnvelope)) == list(ENVELOPE_KEYS)


def test_thresholds_file_only_tightens(signed_run: dict[str, Path]) -> None:
    strict = signed_run["root"] / "strict.json"
    strict.write_text(json.dumps({"median_cost_reduction": 0.5}), encoding="utf-8")
    proc = _promote(signed_run, "--thresholds", str(strict))
    result = _json(proc)
    assert proc.returncode == 1 and result["gates"]["median_cost"] is False
    assert result["thresholds"]["median_cost_reduction"] == 0.5


def test_sign_warns_about_a_readable_private_key(signed_run: dict[str, Path]) -> None:
    key = signed_run["root"] / "keys" / "measurement-key-ci.key"
    key.chmod(0o644)
    proc = cli(
        "measure",
        "sign",
        "--pairs",
        "pairs.json",
        "--key",
        str(key),
        "--candidate-version",
        "c",
        "--corpus-version",
        "k",
        "--out",
        "e2.json",
        cwd=signed_run["root"],
    )
    assert proc.returncode == 0 and b"readable by other users" in proc.stderr


def test_promote_never_records_through_a_symlinked_promotions_folder(
    git_repo: GitRepo, signed_run: dict[str, Path]
) -> None:
    """A committed ``.workgroup/promotions -> outside``: refused by the confined layer
    (PATH_OUTSIDE_REPOSITORY), nothing written outside, the run id not consumed."""
    outside = git_repo.path.parent / "outside"
    outside.mkdir()
    (git_repo.path / ".workgroup").mkdir()
    os.symlink("../../outside", git_repo.path / ".workgroup" / "promotions")
    git_repo.commit("link")
    refused = _promote(signed_run)
    assert refused.returncode == 2
    assert refused.stderr.decode().startswith("error[PATH_OUTSIDE_REPOSITORY]: the promotion record")
    assert list(outside.iterdir()) == []
    os.unlink(git_repo.path / ".workgroup" / "promotions")
    assert _promote(signed_run).returncode == 0  # nothing was consumed by the refused run


def test_committed_record_and_ledger_row_are_the_declared_records(
    signed_run: dict[str, Path], git_repo: GitRepo
) -> None:
    """The decision record is written with PromotionRecord's keys in order (checkpoint_sha last,
    present on a born HEAD) and the replay ledger gains one ReplayRow."""
    from toolkit.infra.git import discover
    from toolkit.records.promotions import PromotionRecord, ReplayRow

    git_repo.commit("base", files={"README.md": "demo\n"})
    result = _json(_promote(signed_run))
    record = json.loads((signed_run["root"] / result["recorded"]).read_text(encoding="utf-8"))
    assert list(record) == list(PromotionRecord.__annotations__)
    ledger = discover(str(signed_run["root"])).layout.replay_ledger
    rows = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    assert [list(row) for row in rows] == [list(ReplayRow.__annotations__)]
    assert rows[0]["measurement_run_id"] == record["measurement_run_id"]


@pytest.mark.parametrize("value", [2**53, 10**30])
def test_pairs_rfc8785_cannot_digest_are_refused_by_signer_and_checker(
    signed_run: dict[str, Path], value: int
) -> None:
    # the digest the checker computes is the signer's (RFC 8785): neither can take such a number,
    # so both refuse it as invalid input, and nothing is written or recorded
    root = signed_run["root"]
    data = pairs()
    data[0]["baseline"]["provider_reported_total"] = value
    bad = root / "huge.json"
    bad.write_text(json.dumps({"pairs": data}), encoding="utf-8")
    proc = cli(
        "measure",
        "sign",
        "--pairs",
        "huge.json",
        "--key",
        "keys/measurement-key-ci.key",
        "--candidate-version",
        "candidate-v1",
        "--corpus-version",
        "corpus-v1",
        "--out",
        "huge-envelope.json",
        cwd=root,
    )
    assert proc.returncode == 2 and b"PROMOTION_INPUT_INVALID" in proc.stderr, proc.stderr
    assert b"Traceback" not in proc.stderr and not (root / "huge-envelope.json").exists()
    proc = cli("measure", "digest", "--pairs", "huge.json", cwd=root)
    assert proc.returncode == 2 and b"NOT_CANONICAL_JSON" in proc.stderr, proc.stderr
    assert b"corpus_digest" not in proc.stdout and b"Traceback" not in proc.stderr
    proc = _promote(signed_run, pairs_file=bad)
    assert proc.returncode == 2 and b"PROMOTION_INPUT_INVALID" in proc.stderr, proc.stderr
    assert not (root / ".workgroup" / "promotions").exists() or not list(
        (root / ".workgroup" / "promotions").iterdir()
    )
