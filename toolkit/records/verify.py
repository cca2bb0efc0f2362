"""``workgroup verify``: every committed capsule, lineage and promotion record still holds.

For each record under ``.workgroup/`` (the checked-out files, which in a pre-commit run are the
staged ones): its checkpoint is a full SHA of a commit that is REV or one of its ancestors, its
hash recomputes, its artifact references resolve (content-addressed ones to the same bytes), it
sits at the path its ids name, nothing private is inside, and no measurement run id is used twice.

Cost: one ``git rev-list REV`` streams the history for all records and stops once every
checkpoint is seen, so the work grows with history + records, never history x records, and
memory is git's walk (no per-commit Python object). A shallow clone cannot prove ancestry: when
a checkpoint is not in the (cut) history the run stops with exit 3 and the fix, never with
"not an ancestor".

The pre-commit hook (``workgroup-verify-hook``) keeps a cache of records it proved
(``toolkit/records/verify_cache.py``): an unchanged record is not re-checked and its checkpoint
not re-walked while the HEAD it was proven for stays an ancestor of the current one, so a
commit costs what it changes. ``workgroup verify`` (CI) never reads that cache.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from toolkit.core import sarif
from toolkit.core.canonical import capsule_digest, sha256_digest
from toolkit.core.errors import EnvironmentFailure, InvalidInput, ToolkitError
from toolkit.core.findings import Finding as Shared
from toolkit.core.findings import emit
from toolkit.core.identifiers import FULL_SHA, MEASUREMENT_RUN_ID, PSEUDONYM
from toolkit.infra import gitcli
from toolkit.infra.boundedio import FileRefused, open_regular
from toolkit.infra.ci import github_actions
from toolkit.infra.confined import PathOutsideRepository
from toolkit.infra.gitcli import CliRepo
from toolkit.infra.gitlocation import WORKGROUP_DIR
from toolkit.records import verify_cache
from toolkit.records.capsules import inside, read_record
from toolkit.runtime.capsule_rules import (
    ARTIFACT_BOUNDARY,
    MAX_CAPSULE_STRING_BYTES,
    artifact_paths,
    assert_paths,
    explain_schema,
    private_value,
    schema_problems,
    strings_of,
)
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.lineage import lineage_schema_errors

if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.core.jsontypes import JsonObject


class Repo(Protocol):
    """What verify needs of a repository: ``toolkit.infra.git.Repo`` or ``gitcli.CliRepo``."""

    @property
    def workdir(self) -> Path: ...

    @property
    def common_dir(self) -> Path: ...


CONTENT_ADDRESSED = re.compile(r"^sha256-([0-9a-f]{64})\.json\Z")
SHALLOW_FIX = (
    "this clone is shallow, so checkpoint ancestry cannot be proven: fetch full history "
    "(git fetch --unshallow, or fetch-depth: 0 in actions/checkout) and run verify again"
)


RESEAL = "workgroup capsule seal FILE --checkpoint REV --write"
ALL_KINDS = ("capsule", "lineage", "promotion")


@dataclass(frozen=True)
class VerifyRule:
    """One rule of ``workgroup verify``: its id (a finding's code), the record kinds it checks, what
    it means (the docs table) and what to do about a finding (its ``fix:``; REV is the --rev)."""

    id: str
    applies_to: tuple[str, ...]
    meaning: str
    fix: str


CHECKPOINT_FORMAT = VerifyRule(
    "checkpoint-format",
    ALL_KINDS,
    "the record's `checkpoint_sha` is not a full 40-hex SHA",
    f"checkpoint_sha is filled in by sealing: reseal ({RESEAL})",
)
CHECKPOINT_MISSING = VerifyRule(
    "checkpoint-missing",
    ALL_KINDS,
    "no such commit in the repository",
    f"fetch the commit if it lives on another branch or remote; otherwise reseal at a commit that exists ({RESEAL})",
)
CHECKPOINT_NOT_ANCESTOR = VerifyRule(
    "checkpoint-not-ancestor",
    ALL_KINDS,
    "the commit is not REV (default HEAD) or one of its ancestors: history was rewritten",
    "the history was rewritten after sealing: reseal at a commit reachable from {rev} "
    f"({RESEAL}), or restore the rewritten commits",
)
HASH_MISMATCH = VerifyRule(
    "hash-mismatch",
    ("capsule",),
    "`capsule_hash` does not recompute: the capsule was edited after sealing",
    f"the record was edited after sealing: revert the edit or reseal ({RESEAL})",
)
SCHEMA = VerifyRule(
    "schema",
    ALL_KINDS,
    "not a valid record of its format (sealed capsule, lineage, promotion object)",
    "fix the named fields (docs/capsules-verify.md has a complete example), then reseal",
)
LOCATION = VerifyRule(
    "location",
    ALL_KINDS,
    "the file is not at the path its ids name",
    "move the file to .workgroup/workgroups/<workgroup_id>/<kind>/<id>.json (as sealed)",
)
PATH = VerifyRule(
    "path",
    ("capsule",),
    "a file, spec or artifact reference is not portable or leaves the artifact boundary",
    "use repository-relative paths under the artifact boundary (knowzcode/artifacts/)",
)
ARTIFACT_MISSING = VerifyRule(
    "artifact-missing",
    ("capsule",),
    "an artifact reference does not resolve to a regular file in the repository",
    "commit the referenced artifact, or reseal without it",
)
ARTIFACT_DIGEST_MISMATCH = VerifyRule(
    "artifact-digest-mismatch",
    ("capsule",),
    "a content-addressed artifact's bytes differ from the digest in its name",
    "restore the artifact's original content, or reseal with the new evidence",
)
PRIVATE_CONTENT = VerifyRule(
    "private-content",
    ALL_KINDS,
    "a secret, identifier, path, transcript or overlong string inside",
    "remove the private value (see `workgroup privacy scan FILE`), then reseal",
)
PLATFORM_HANDLE = VerifyRule(
    "platform-handle",
    ("lineage",),
    "a lineage's `platform_handle` is neither null nor a keyed pseudonym",
    "record the lineage again: committed lineages carry null or a keyed pseudonym",
)
REFERENCE_MISSING = VerifyRule(
    "reference-missing",
    ("lineage",),
    "a lineage's `parent_lineage_id` names no recorded lineage",
    "commit the parent lineage, or record this lineage without parent_lineage_id",
)
RUN_ID = VerifyRule(
    "run-id",
    ("promotion",),
    "a promotion record's measurement run id is missing, invalid or differs from its signed envelope's",
    "a measurement run id can be used once: record the promotion with a new measured run",
)
RUN_ID_CONSUMED_TWICE = VerifyRule(
    "run-id-consumed-twice",
    ("promotion",),
    "one measurement run is recorded by more than one promotion record",
    "a measurement run can be consumed once: keep the first promotion record of the run and "
    "measure again for the others",
)
UNREADABLE = VerifyRule(
    "unreadable",
    ALL_KINDS,
    "not a UTF-8 JSON object under 1 MiB, or a symlink leading outside the repository",
    "make the file a UTF-8 JSON object under 1 MiB",
)

RULES: tuple[VerifyRule, ...] = (
    CHECKPOINT_FORMAT,
    CHECKPOINT_MISSING,
    CHECKPOINT_NOT_ANCESTOR,
    HASH_MISMATCH,
    SCHEMA,
    LOCATION,
    PATH,
    ARTIFACT_MISSING,
    ARTIFACT_DIGEST_MISMATCH,
    PRIVATE_CONTENT,
    PLATFORM_HANDLE,
    REFERENCE_MISSING,
    RUN_ID,
    RUN_ID_CONSUMED_TWICE,
    UNREADABLE,
)
FIXES: dict[str, str] = {rule.id: rule.fix for rule in RULES}  # the fix of each rule id (SARIF, docs)


def rules_table() -> str:
    """The rules table of docs/capsules-verify.md (Markdown), generated from ``RULES``."""
    rows = ["| rule | records | meaning |", "|---|---|---|"]
    for rule in RULES:
        kinds = "all" if rule.applies_to == ALL_KINDS else ", ".join(rule.applies_to)
        rows.append(f"| `{rule.id}` | {kinds} | {rule.meaning} |")
    return "\n".join(rows) + "\n"


@dataclass(frozen=True)
class Finding:
    """One broken rule in one file (``path`` is repository-relative), with what to do about it."""

    path: str
    rule: str
    message: str
    fix: str | None = None

    def shared(self) -> Shared:
        """The shared finding (toolkit/core/findings.py): the whole file, so line and col are 0."""

        return Shared(self.path, 0, 0, self.rule, self.message, fix=self.fix)


@dataclass
class Report:
    """What ``verify`` checked and what it found; ``ok`` is true only with no findings."""

    rev: str | None
    counts: dict[str, int] = field(default_factory=lambda: {"capsules": 0, "lineages": 0, "promotions": 0})
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def as_json(self) -> JsonObject:
        """The ``--json`` document (the shared findings shape)."""
        out = io.StringIO()
        self.emit(as_json=True, stdout=out, stderr=io.StringIO())
        doc: JsonObject = json.loads(out.getvalue())
        return doc

    def emit(self, *, as_json: bool, stdout: IO[str], stderr: IO[str]) -> None:
        """Findings in the shared convention: lines on stdout (or one JSON object), summary on stderr."""

        emit(
            "verify",
            [f.shared() for f in self.findings],
            as_json=as_json,
            stdout=stdout,
            stderr=stderr,
            checked=sum(self.counts.values()),
            unit="record",
            summary_extra={"rev": self.rev, **self.counts},
            annotate=github_actions(),
        )

    def emit_sarif(self, *, stdout: IO[str], stderr: IO[str]) -> None:
        """The findings as a SARIF 2.1.0 log on stdout (toolkit/core/sarif.py), the summary on stderr."""
        rows = [f.shared() for f in self.findings]
        rules = {
            f.rule: (f"verify: {f.rule.replace('-', ' ')}", f.fix or "See `workgroup verify --help`.")
            for f in self.findings
        }
        sarif.write(stdout, sarif.document("verify", rows, rules=rules))
        self.emit(as_json=True, stdout=io.StringIO(), stderr=stderr)


@dataclass(frozen=True)
class _Record:
    kind: str  # capsule | lineage | promotion
    path: Path
    rel: str
    data: Any  # the record file as parsed; each kind's rules read fields after the schema check passed
    trusted: bool = False  # the cache vouches for every rule that depends on this record alone


def _engine_findings_in(keys: list[str], texts: list[str], context: str) -> int:
    """The shared privacy engine's findings, loaded on the first record to scan: the engine costs
    tens of milliseconds of start-up, and the verify hook's cached path (every record vouched for)
    and a repository without records never scan (tests/records/test_verify_lean.py)."""
    from toolkit.runtime.capsule_privacy import engine_findings_in

    return engine_findings_in(keys, texts, context)


def sealed_digest(capsule: Mapping[str, object]) -> str:
    """``capsule_digest`` of a schema-valid capsule, computed by the C JSON encoder.

    A schema-valid capsule has only the schema's ASCII, non-numeric keys, and strings, lists,
    objects and null as values; for such values the reference's canonical bytes are exactly
    ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)``. A lone surrogate
    (which UTF-8 cannot encode) falls back to the general canonical writer.
    """
    body = {key: value for key, value in capsule.items() if key != "capsule_hash"}
    try:
        data = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return capsule_digest(capsule)
    return sha256_digest(data)


def record_files(workdir: Path) -> dict[str, list[Path]]:
    """Capsule, lineage and promotion files of the work tree, sorted for stable output."""
    base = workdir / WORKGROUP_DIR
    return {
        "capsule": sorted(base.glob("workgroups/*/capsules/*.json")),
        "lineage": sorted(base.glob("workgroups/*/lineages/*.json")),
        "promotion": sorted((base / "promotions").glob("*.json")),
    }


class _Verifier:
    def __init__(self, repo: Repo, report: Report) -> None:
        self.repo = repo
        self.rev = "REV"  # named in the fixes once history() knows it
        self.workdir = repo.workdir
        self.report = report
        self._checkpoints: list[tuple[str, str]] = []  # (rel path, sha) to check against history

    def add(self, rel: str, rule: VerifyRule, message: str) -> None:
        self.report.findings.append(Finding(rel, rule.id, message, rule.fix.format(rev=self.rev)))

    # -- shared rules --------------------------------------------------------------------
    def checkpoint(self, rec: _Record, sha: object) -> None:
        if not isinstance(sha, str) or not FULL_SHA.match(sha):
            self.add(rec.rel, CHECKPOINT_FORMAT, "checkpoint_sha is not a full 40-hex commit SHA")
            return
        self._checkpoints.append((rec.rel, sha))

    def privacy(self, rec: _Record, value: object, *, keys: bool) -> None:
        """The privacy rules over one pass of the record. Capsules (``keys``) get exactly what the
        runtime's capsule op applies, the shared engine alone; lineages and promotions keep the
        reference's value patterns before the engine."""

        names, texts = strings_of(value)
        if any(
            len(text) > MAX_CAPSULE_STRING_BYTES // 4
            and len(text.encode("utf-8", "surrogatepass")) > MAX_CAPSULE_STRING_BYTES
            for text in texts
        ):
            self.add(rec.rel, PRIVATE_CONTENT, "a string longer than 4096 UTF-8 bytes")
        elif not keys and private_value("\n".join(texts)):  # one search per record
            self.add(rec.rel, PRIVATE_CONTENT, "a secret-like or private value")
        # lineage and promotion field names are fixed by their formats: only their values can leak
        elif _engine_findings_in(names if keys else [], texts, "capsule" if keys else "generic"):
            self.add(rec.rel, PRIVATE_CONTENT, "the privacy engine found private content")

    def location(self, rec: _Record, workgroup_id: object, stem: object) -> None:
        parts = Path(rec.rel).parts  # .workgroup/workgroups/<wg>/<kind>s/<id>.json
        if len(parts) != 5 or parts[2] != workgroup_id or Path(parts[4]).stem != stem:
            self.add(rec.rel, LOCATION, "the file's path does not match its workgroup_id and id")

    # -- per kind ------------------------------------------------------------------------
    def capsule(self, rec: _Record) -> None:

        cap = rec.data
        if rec.trusted:  # schema, location, hash, paths and privacy held for these exact bytes
            self.checkpoint(rec, cap["checkpoint_sha"])
            for ref in dict.fromkeys(artifact_paths(cap)):
                self.artifact(rec, ref)
            return
        if schema_problems(cap):
            problems = explain_schema(cap, sealed=True)
            self.add(
                rec.rel,
                SCHEMA,
                "not a sealed knowzcode.context-capsule/v1: " + "; ".join(problems[:5]),
            )
            return
        self.location(rec, cap["workgroup_id"], cap["task_id"])
        self.checkpoint(rec, cap["checkpoint_sha"])
        if sealed_digest(cap) != cap["capsule_hash"]:
            self.add(rec.rel, HASH_MISMATCH, "capsule_hash does not recompute (edited after sealing)")
        try:
            assert_paths(cap)
        except RuntimeOpError as exc:
            self.add(rec.rel, PATH, f"{exc.code}: a path is not portable or outside the artifact boundary")
        else:
            for ref in dict.fromkeys(artifact_paths(cap)):
                self.artifact(rec, ref)
        self.privacy(rec, cap, keys=True)

    def artifact(self, rec: _Record, ref: str) -> None:

        target = self.workdir / ref
        # the artifact root itself is a valid reference (as in the reference runtime): a directory
        present = target.is_dir() if ref == ARTIFACT_BOUNDARY else target.is_file()
        if not present or not inside(self.workdir, target.resolve()):
            self.add(
                rec.rel, ARTIFACT_MISSING, f"artifact {ref} does not resolve to a file in the repository"
            )
            return
        match = CONTENT_ADDRESSED.match(target.name)
        if match is None:
            return

        digest = hashlib.sha256()
        try:
            handle = open_regular(target, what=f"artifact {ref}")
        except FileRefused:
            self.add(rec.rel, ARTIFACT_MISSING, f"artifact {ref} is not a regular file in the repository")
            return
        assert handle is not None  # missing_ok is off
        with handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        if digest.hexdigest() != match.group(1):
            self.add(
                rec.rel, ARTIFACT_DIGEST_MISMATCH, f"artifact {ref} does not match the digest in its name"
            )

    def lineage(self, rec: _Record, lineage_ids: set[str]) -> None:

        lin = rec.data
        if rec.trusted:
            self.checkpoint(rec, lin["checkpoint_sha"])
            if lin["parent_lineage_id"] is not None and lin["parent_lineage_id"] not in lineage_ids:
                self.add(rec.rel, REFERENCE_MISSING, "parent_lineage_id names no recorded lineage")
            return
        problems = lineage_schema_errors(lin)
        if problems:
            self.add(rec.rel, SCHEMA, "not a valid knowzcode.agent-lineage/v1 record")
            return
        self.location(rec, lin["workgroup_id"], lin["lineage_id"])
        self.checkpoint(rec, lin["checkpoint_sha"])
        handle = lin["platform_handle"]
        if handle is not None and not (isinstance(handle, str) and PSEUDONYM.match(handle)):
            self.add(
                rec.rel, PLATFORM_HANDLE, "platform_handle must be null or a keyed pseudonym (anon-<hex>)"
            )
        parent = lin["parent_lineage_id"]
        if parent is not None and parent not in lineage_ids:
            self.add(rec.rel, REFERENCE_MISSING, "parent_lineage_id names no recorded lineage")
        # keys are fixed by the schema (platform_handle is one of them); values are what can leak
        self.privacy(rec, lin, keys=False)

    def promotion(self, rec: _Record, run_ids: dict[str, list[str]]) -> None:
        data = rec.data
        if not isinstance(data, dict):
            self.add(rec.rel, SCHEMA, "a promotion record must be a JSON object")
            return
        self.promotion_run_id(rec, data, run_ids)
        if "checkpoint_sha" in data:
            self.checkpoint(rec, data["checkpoint_sha"])
        if not rec.trusted:
            self.privacy(rec, data, keys=False)

    def promotion_run_id(self, rec: _Record, data: JsonObject, run_ids: dict[str, list[str]]) -> None:
        """A promotion record's measurement run id: its own or its signed envelope's (the two must
        agree), well formed, and naming the file; valid ids are noted in ``run_ids``."""
        envelope = data.get("envelope")
        run_id = data.get("measurement_run_id")
        signed = envelope.get("measurement_run_id") if isinstance(envelope, dict) else None
        if run_id is None:
            run_id = signed
        if signed is not None and signed != run_id:
            self.add(rec.rel, RUN_ID, "the record's measurement_run_id differs from its signed envelope's")
        if not isinstance(run_id, str) or not MEASUREMENT_RUN_ID.match(run_id):
            self.add(rec.rel, RUN_ID, "the record carries no valid measurement_run_id")
            return
        run_ids.setdefault(run_id, []).append(rec.rel)
        if rec.path.stem != run_id:
            self.add(rec.rel, LOCATION, "the file name does not match the record's measurement_run_id")

    def check_all(self, records: list[_Record]) -> None:
        """Every rule that reads the records themselves (history() then proves the checkpoints)."""
        lineage_ids = {
            r.data.get("lineage_id") for r in records if r.kind == "lineage" and isinstance(r.data, dict)
        }
        lineage_ids.discard(None)
        run_ids: dict[str, list[str]] = {}
        for rec in records:
            if rec.kind == "capsule":
                self.capsule(rec)
            elif rec.kind == "lineage":
                self.lineage(rec, lineage_ids)  # type: ignore[arg-type]
            else:
                self.promotion(rec, run_ids)
        self.promotion_runs(run_ids)

    def promotion_runs(self, run_ids: dict[str, list[str]]) -> None:
        """Each measurement run is consumed by one promotion record."""
        for run_id, holders in run_ids.items():
            if len(holders) > 1:
                for rel in holders:
                    self.add(
                        rel, RUN_ID_CONSUMED_TWICE, f"measurement run {run_id} is recorded more than once"
                    )

    # -- history ---------------------------------------------------------------------------
    def history(self, rev: str, proven: set[str] | None = None) -> None:
        """One walk of REV's history, shared by every record's checkpoint; ``proven`` are the
        checkpoints the cache already knows to be ancestors of REV (not walked again)."""

        self.rev = rev
        workdir = self.workdir
        if not self._checkpoints and rev == "HEAD" and gitcli.head_is_unborn(workdir):
            return  # a first commit with nothing recorded yet: nothing to prove
        head = self.report.rev or gitcli.resolve_commit(workdir, rev)
        self.report.rev = head
        if not self._checkpoints:
            return
        unproven = self.unreached_checkpoints(head, proven or set())
        if unproven and gitcli.is_shallow(workdir):
            raise EnvironmentFailure("SHALLOW_CLONE", SHALLOW_FIX)
        self.unproven_checkpoints(rev, unproven)

    def unreached_checkpoints(self, head: str, proven: set[str]) -> list[tuple[str, str]]:
        """(record, checkpoint) pairs whose checkpoint is neither proven already nor reachable
        from ``head`` (one history walk for all of them)."""
        wanted = {sha for _rel, sha in self._checkpoints} - proven
        missing = gitcli.unreachable(self.workdir, wanted, head)
        return [(rel, sha) for rel, sha in self._checkpoints if sha in missing]

    def unproven_checkpoints(self, rev: str, unproven: list[tuple[str, str]]) -> None:
        """A finding per checkpoint not reached from REV: rewritten history when the commit
        exists, a missing commit otherwise."""
        workdir = self.workdir
        for rel, sha in unproven:
            if gitcli.commit_exists(workdir, sha):
                self.add(
                    rel,
                    CHECKPOINT_NOT_ANCESTOR,
                    f"checkpoint {sha[:12]} is not {rev} or an ancestor of it (history was rewritten?)",
                )
            else:
                self.add(rel, CHECKPOINT_MISSING, f"checkpoint {sha[:12]} is not a commit in this repository")


def verify(repo: Repo, rev: str = "HEAD", *, cache: bool = False) -> Report:
    """Check every record; returns a report (findings), raises only for environment problems.

    ``cache`` (the pre-commit hook only): trust and refresh ``verify_cache`` (see its docstring).
    """
    report = Report(rev=None)
    rules, trusted = _load_cache(repo, rev, report) if cache else ("", {})
    verifier = _Verifier(repo, report)
    keys: dict[str, str] = {}  # rel -> record key, what the cache is keyed by (only with ``cache``)
    verifier.check_all(_read_records(verifier, trusted, keys if cache else None))
    proven = {sha for rel, sha in verifier._checkpoints if rel in trusted and trusted[rel] == keys.get(rel)}
    verifier.history(rev, proven)
    report.findings.sort(key=lambda f: (f.path, f.rule))
    if cache and report.rev is not None:
        _save_clean_records(repo, rules, report, keys)
    return report


def _save_clean_records(repo: Repo, rules: str, report: Report, keys: dict[str, str]) -> None:
    """Remember in the cache the keys of the records no finding names, proven for ``report.rev``."""
    assert report.rev is not None  # the caller saves only for a resolved commit
    flagged = {f.path for f in report.findings}
    clean = {rel: key for rel, key in keys.items() if rel not in flagged}
    verify_cache.save(repo.common_dir, repo.workdir, rules, report.rev, clean)


def _load_cache(repo: Repo, rev: str, report: Report) -> tuple[str, dict[str, str]]:
    """(the rules' fingerprint, {rel: record key} the cache vouches for); resolves ``report.rev``.

    The cache counts only while the HEAD it was proven for is an ancestor of REV's commit."""

    rules = verify_cache.rules_fingerprint()
    try:
        report.rev = gitcli.resolve_commit(repo.workdir, rev)
    except InvalidInput:  # an unborn HEAD (or a bad REV): history() says which, no cache
        return rules, {}
    loaded = verify_cache.load(repo.common_dir, repo.workdir, rules)
    if loaded is None or not gitcli.is_ancestor_or_equal(repo.workdir, loaded[0], report.rev):
        return rules, {}
    return rules, loaded[1]


def _read_records(verifier: _Verifier, trusted: dict[str, str], keys: dict[str, str] | None) -> list[_Record]:
    """Every record file, read through the confined layer; an unreadable one is a finding. With
    ``keys`` (the cache in use), each record's key is noted and a record the cache vouches for
    is marked trusted."""

    workdir = verifier.workdir
    root = str(workdir.resolve())
    inside: dict[Path, bool] = {}  # realpath once per directory, not once per record
    records: list[_Record] = []
    for kind, paths in record_files(workdir).items():
        for path in paths:
            rel = path.relative_to(workdir).as_posix()
            verifier.report.counts[kind + "s"] += 1
            if path.parent not in inside:
                real = os.path.realpath(path.parent)
                inside[path.parent] = real == root or real.startswith(root + os.sep)
            try:
                if not inside[path.parent]:
                    raise PathOutsideRepository(f"the {kind} record's directory")
                data = read_record(path, workdir, what=f"{kind} record")  # refuses a file symlink leading out
            except ToolkitError as exc:
                verifier.add(rel, UNREADABLE, f"{exc.code}: {exc.message}")
                continue
            key = ""
            if keys is not None:
                key = keys[rel] = verify_cache.record_key(data)
            records.append(_Record(kind, path, rel, data, trusted.get(rel) == key and rel in trusted))
    return records


HOOK_PROG = "workgroup-verify-hook"


def verify_and_print(rev: str = "HEAD", fmt: str = "text", *, cache: bool = False) -> int:
    """Verify the records against ``rev`` and print the report as ``fmt`` (text, json or sarif) on
    stdout, the summary on stderr; the exit code: 0 ok, 1 findings. A refusal (bad revision, shallow
    clone, no repository) is raised as its ``ToolkitError`` for the caller to report: the CLI's one
    error handler (``workgroup verify``) or the hook's own (``workgroup-verify-hook``). Only the hook
    passes ``cache``. The repository is asked of ``git`` (``gitcli``), so pygit2 is not imported.
    """
    import sys

    report = verify(CliRepo.discover(), rev, cache=cache)
    # a stdout that refuses the report: the caller's guard ends it with OUTPUT_UNWRITABLE (exit 3)
    if fmt == "sarif":
        report.emit_sarif(stdout=sys.stdout, stderr=sys.stderr)
    else:
        report.emit(as_json=fmt == "json", stdout=sys.stdout, stderr=sys.stderr)
    return 0 if report.ok else 1
