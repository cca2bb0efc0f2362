"""`workgroup runtime capsule`: every rule of the reference pipeline (reference §4, §10 tests 10-16)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_capsule_support import REFERENCE_VALID_HASH, in_process, overflow_capsule, valid_capsule

from toolkit.core.canonical import canonical_bytes, capsule_digest
from toolkit.runtime.capsule import evidence_artifact_bytes, prepare_capsule
from toolkit.runtime.capsule_rules import schema_problems
from toolkit.runtime.codes import MESSAGES

ROOTS = ["knowzcode/artifacts"]
ART = "knowzcode/artifacts/capsule-evidence.json"


def code_of(request: dict[str, Any]) -> str:
    frame = in_process("capsule", request)
    assert frame["ok"] is False, frame
    assert frame["message"] == MESSAGES[frame["code"]]
    return str(frame["code"])


def result_of(request: dict[str, Any]) -> dict[str, Any]:
    frame = in_process("capsule", request)
    assert frame["ok"] is True, frame
    assert frame["operation"] == "capsule"
    result: dict[str, Any] = frame["result"]
    return result


# ---------------------------------------------------------------- hash (test 10)


def test_hash_reproduces_the_reference_value() -> None:
    sealed = result_of({"capsule": valid_capsule()})
    assert sealed["capsule_hash"] == REFERENCE_VALID_HASH
    assert capsule_digest(valid_capsule()) == REFERENCE_VALID_HASH


def test_hash_ignores_key_order_at_every_depth() -> None:
    capsule = valid_capsule()
    reordered = {k: capsule[k] for k in reversed(list(capsule))}
    reordered["specs"] = [{"verify_ids": s["verify_ids"], "path": s["path"]} for s in capsule["specs"]]
    assert result_of({"capsule": reordered})["capsule_hash"] == REFERENCE_VALID_HASH


def test_a_stale_input_hash_is_replaced_and_a_missing_one_added() -> None:
    capsule = valid_capsule()
    capsule["capsule_hash"] = "sha256:" + "0" * 64
    assert result_of({"capsule": capsule})["capsule_hash"] == REFERENCE_VALID_HASH
    capsule.pop("capsule_hash")
    assert result_of({"capsule": capsule})["capsule_hash"] == REFERENCE_VALID_HASH


def test_hash_is_over_the_input_as_given_without_defaults() -> None:
    capsule = valid_capsule()
    del capsule["evidence"], capsule["artifact_refs"]
    sealed = result_of({"capsule": capsule})
    assert "evidence" not in sealed and "artifact_refs" not in sealed
    assert (
        sealed["capsule_hash"] != REFERENCE_VALID_HASH
    )  # absent and [] hash differently, as in the reference


# ---------------------------------------------------------------- overflow (tests 11, 12)


def test_overflow_moves_only_evidence_to_a_content_addressed_artifact() -> None:
    source = overflow_capsule()
    sealed = result_of({"capsule": source, "max_bytes": 1450, "artifact_path": ART, "artifact_roots": ROOTS})
    assert len(canonical_bytes(sealed)) <= 1450
    for key in ("objective", "specs", "next_action", "owned_files", "read_files", "risks", "constraints"):
        assert sealed[key] == source[key]  # mandatory content never truncated
    assert sealed["evidence"] == []
    data = evidence_artifact_bytes({**source, "capsule_hash": "x"})
    digest = hashlib.sha256(data).hexdigest()
    assert sealed["artifact_refs"] == [f"knowzcode/artifacts/sha256-{digest}.json"]
    assert sealed["capsule_hash"] == capsule_digest(sealed)
    assert json.loads(data)["evidence"] == source["evidence"]  # the artifact keeps every evidence entry
    assert not schema_problems(sealed)


def test_overflow_artifact_digest_is_returned_by_the_library_call() -> None:
    prepared = prepare_capsule(overflow_capsule(), max_bytes=1450, artifact_path=ART, artifact_roots=ROOTS)
    assert prepared.artifact_ref is not None and prepared.artifact_bytes is not None
    hexdigest = hashlib.sha256(prepared.artifact_bytes).hexdigest()
    assert prepared.artifact_digest == "sha256:" + hexdigest
    assert prepared.artifact_ref.endswith(f"sha256-{hexdigest}.json")


def test_overflow_keeps_existing_refs_and_deduplicates() -> None:
    source = overflow_capsule()
    source["artifact_refs"] = ["knowzcode/artifacts/earlier.json"]
    sealed = result_of({"capsule": source, "max_bytes": 1450, "artifact_path": ART, "artifact_roots": ROOTS})
    assert sealed["artifact_refs"][0] == "knowzcode/artifacts/earlier.json"
    assert len(sealed["artifact_refs"]) == 2


def test_default_limit_is_12288_bytes() -> None:
    source = overflow_capsule()
    assert len(canonical_bytes(source)) < 12288
    assert result_of({"capsule": source})["evidence"] == source["evidence"]  # fits: nothing moves
    source["evidence"] = source["evidence"] * 3  # about 15 KB
    assert code_of({"capsule": source}) == "CAPSULE_MANDATORY_OVERFLOW"
    assert result_of({"capsule": source, "artifact_path": ART, "artifact_roots": ROOTS})["evidence"] == []


def test_mandatory_overflow_never_truncates() -> None:
    capsule = valid_capsule()
    capsule["objective"] = "x" * 4000
    assert code_of({"capsule": capsule, "max_bytes": 500}) == "CAPSULE_MANDATORY_OVERFLOW"
    # evidence moved out is not enough when the mandatory part alone is too big
    big = overflow_capsule()
    big["objective"] = "x" * 4000
    request = {"capsule": big, "max_bytes": 1450, "artifact_path": ART, "artifact_roots": ROOTS}
    assert code_of(request) == "CAPSULE_MANDATORY_OVERFLOW"


def test_overflow_without_artifact_path_is_mandatory_overflow() -> None:
    assert code_of({"capsule": overflow_capsule(), "max_bytes": 1450}) == "CAPSULE_MANDATORY_OVERFLOW"


@pytest.mark.parametrize("value", [0, -1, 1.5, "100", True, None, [], {}])
def test_max_bytes_must_be_a_positive_integer(value: Any) -> None:
    assert code_of({"capsule": valid_capsule(), "max_bytes": value}) == "INVALID_REQUEST"


def test_integral_float_limit_is_an_integer_as_in_json() -> None:
    assert (
        result_of({"capsule": valid_capsule(), "max_bytes": 12288.0})["capsule_hash"] == REFERENCE_VALID_HASH
    )


# ---------------------------------------------------------------- roots (test 15)


@pytest.mark.parametrize(
    ("roots", "code"),
    [
        (None, "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),  # roots must be explicit: default []
        ([], "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),
        (["knowzcode/artifacts/other"], "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),  # path not under this root
        (["knowzcode"], "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),  # root wider than the boundary
        (["src"], "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),  # root outside the boundary
        (["knowzcode/artifacts/.git"], "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),  # .git never
        (["knowzcode/artifacts/.GIT"], "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),  # not even case-folded
        (["/abs/knowzcode/artifacts"], "CAPSULE_ARTIFACT_REF_INVALID"),  # roots are portable paths too
        (["knowzcode/artifacts/../x"], "CAPSULE_ARTIFACT_REF_INVALID"),
        ([7], "CAPSULE_ARTIFACT_REF_INVALID"),
        ("knowzcode/artifacts", "INVALID_REQUEST"),  # a list, not a string
    ],
)
def test_externalization_needs_an_explicit_authorized_root(roots: Any, code: str) -> None:
    request: dict[str, Any] = {"capsule": overflow_capsule(), "max_bytes": 1450, "artifact_path": ART}
    if roots is not None:
        request["artifact_roots"] = roots
    assert code_of(request) == code


def test_root_equal_to_the_boundary_or_inside_it_authorizes() -> None:
    for roots, path in (
        (ROOTS, ART),
        (["knowzcode/artifacts/capsules"], "knowzcode/artifacts/capsules/e.json"),
    ):
        request = {
            "capsule": overflow_capsule(),
            "max_bytes": 1450,
            "artifact_path": path,
            "artifact_roots": roots,
        }
        assert result_of(request)["artifact_refs"][0].startswith(path.rsplit("/", 1)[0] + "/sha256-")


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("src/evidence.json", "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),
        ("knowzcode", "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),  # wider than the boundary
        ("knowzcode/artifactsX/e.json", "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),  # no string-prefix tricks
        ("knowzcode/artifactsX", "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),
        ("knowzcode/artifacts/.git/config", "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"),
        ("knowzcode/artifacts/../../etc/passwd", "CAPSULE_ARTIFACT_REF_INVALID"),
        ("/knowzcode/artifacts/e.json", "CAPSULE_ARTIFACT_REF_INVALID"),
        ("knowzcode\\artifacts\\e.json", "CAPSULE_ARTIFACT_REF_INVALID"),
    ],
)
def test_artifact_path_must_be_portable_and_inside_the_boundary(path: str, code: str) -> None:
    request = {"capsule": valid_capsule(), "artifact_path": path, "artifact_roots": ROOTS}
    assert code_of(request) == code


@pytest.mark.parametrize("value", [7, ["a"], {"p": 1}])
def test_artifact_path_of_the_wrong_type_is_an_invalid_request(value: Any) -> None:
    assert code_of({"capsule": valid_capsule(), "artifact_path": value}) == "INVALID_REQUEST"


# ---------------------------------------------------------------- paths (tests 14, 16)

BAD_PATHS = [
    ("empty", ""),
    ("padded", " src/a.js"),
    ("padded-end", "src/a.js "),
    ("backslash", "src\\a.js"),
    ("nul", "src/a\x00.js"),
    ("colon", "C:/src/a.js"),
    ("control", "src/a\x07.js"),
    ("del", "src/a\x7f.js"),
    ("leading-slash", "/etc/passwd"),
    ("scheme", "file://host/a"),
    ("empty-segment", "src//a.js"),
    ("trailing-slash", "src/"),
    ("dot-segment", "src/./a.js"),
    ("dotdot-segment", "src/../../a.js"),
    ("dot", "."),
]


def _set_path(where: str, value: str) -> Callable[[dict[str, Any]], None]:
    def mutate(capsule: dict[str, Any]) -> None:
        if where == "owned_files":
            capsule["owned_files"] = [value]
        elif where == "read_files":
            capsule["read_files"] = [value]
        elif where == "specs":
            capsule["specs"] = [{"path": value, "verify_ids": ["X-1"]}]
        elif where == "failures":
            capsule["failures"] = [{"command": "pytest", "summary": "one failure", "artifact": value}]
        elif where == "evidence":
            capsule["evidence"] = [{"kind": "file", "summary": "a note", "artifact": value}]
        else:
            capsule["artifact_refs"] = [value]

    return mutate


PATH_FIELDS = ("owned_files", "read_files", "specs", "failures", "evidence", "artifact_refs")


@pytest.mark.parametrize(("name", "path"), BAD_PATHS, ids=[name for name, _ in BAD_PATHS])
def test_every_capsule_path_is_portable(name: str, path: str) -> None:
    # an empty string breaks minLength first (schema), as in the reference
    expected = "CAPSULE_SCHEMA_INVALID" if path == "" else "CAPSULE_ARTIFACT_REF_INVALID"
    for where in PATH_FIELDS:  # every place a path can appear
        capsule = valid_capsule()
        _set_path(where, path)(capsule)
        assert code_of({"capsule": capsule}) == expected, where


@pytest.mark.parametrize("where", ["failures", "evidence", "artifact_refs"])
def test_artifact_refs_stay_inside_the_boundary(where: str) -> None:
    capsule = valid_capsule()
    _set_path(where, "build/logs/test.log")(capsule)
    assert code_of({"capsule": capsule}) == "CAPSULE_ARTIFACT_REF_UNAUTHORIZED"
    _set_path(where, "knowzcode/artifacts/test.log")(capsule)
    assert result_of({"capsule": capsule})["capsule_hash"].startswith("sha256:")


@pytest.mark.parametrize("where", ["failures", "evidence", "artifact_refs"])
def test_the_artifact_root_itself_is_a_valid_reference(where: str) -> None:
    # the reference accepts a reference equal to the root (``value === root``), not only beneath it
    capsule = valid_capsule()
    _set_path(where, "knowzcode/artifacts")(capsule)
    sealed = result_of({"capsule": capsule})
    assert sealed["capsule_hash"] == capsule_digest({k: v for k, v in sealed.items() if k != "capsule_hash"})
    for wider in ("knowzcode", "knowzcode/artifacts/.git", "knowzcode/artifactsX"):
        _set_path(where, wider)(capsule)
        assert code_of({"capsule": capsule}) == "CAPSULE_ARTIFACT_REF_UNAUTHORIZED", wider


def test_artifact_path_equal_to_its_root_is_accepted() -> None:
    # below the limit the path is only checked; on overflow the content-addressed file goes inside it
    assert result_of({"capsule": valid_capsule(), "artifact_path": "knowzcode/artifacts"})
    request = {
        "capsule": overflow_capsule(),
        "max_bytes": 1450,
        "artifact_path": "knowzcode/artifacts",
        "artifact_roots": ROOTS,
    }
    sealed = result_of(request)
    digest = hashlib.sha256(evidence_artifact_bytes(overflow_capsule())).hexdigest()
    assert sealed["evidence"] == [] and sealed["artifact_refs"] == [
        f"knowzcode/artifacts/sha256-{digest}.json"
    ]
    nested = {
        **request,
        "artifact_path": "knowzcode/artifacts/ev",
        "artifact_roots": ["knowzcode/artifacts/ev"],
    }
    assert result_of(nested)["artifact_refs"] == [f"knowzcode/artifacts/ev/sha256-{digest}.json"]


def test_file_paths_need_not_be_under_the_boundary() -> None:
    capsule = valid_capsule()
    capsule["owned_files"] = ["src/deep/nested/file.py", "README.md"]
    assert result_of({"capsule": capsule})["owned_files"] == capsule["owned_files"]


# ---------------------------------------------------------------- schema and privacy (test 13)


SCHEMA_BREAKS: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("unknown-key", lambda c: c.update(raw_prompt="private")),
    ("unknown-harmless-key", lambda c: c.update(notes="fine words")),
    ("missing-next-action", lambda c: c.pop("next_action")),
    ("wrong-schema", lambda c: c.update(schema="knowzcode.context-capsule/v2")),
    ("phase-number", lambda c: c.update(phase=3)),
    ("phase-unknown", lambda c: c.update(phase="4")),
    ("objective-empty", lambda c: c.update(objective="")),
    ("objective-4097", lambda c: c.update(objective="x" * 4097)),
    ("node-ids-dup", lambda c: c.update(node_ids=["A", "A"])),
    ("owned-65", lambda c: c.update(owned_files=[f"f{i}" for i in range(65)])),
    ("checkpoint-short", lambda c: c.update(checkpoint_sha="abc")),
    ("checkpoint-number", lambda c: c.update(checkpoint_sha=1234567)),
    (
        "failure-extra-key",
        lambda c: c.update(failures=[{"command": "a", "summary": "b", "artifact": None, "x": 1}]),
    ),
    ("failure-missing-artifact", lambda c: c.update(failures=[{"command": "a", "summary": "b"}])),
    ("evidence-kind", lambda c: c.update(evidence=[{"kind": "chat", "summary": "b"}])),
    ("spec-verify-ids-type", lambda c: c.update(specs=[{"path": "a.md", "verify_ids": "X"}])),
    ("risks-not-list", lambda c: c.update(risks="r")),
    ("bad-hash", lambda c: c.update(capsule_hash="sha256:XYZ")),
    ("bool-as-string", lambda c: c.update(task_id=True)),
    ("null-list", lambda c: c.update(node_ids=None)),
]


@pytest.mark.parametrize("mutate", [m for _, m in SCHEMA_BREAKS], ids=[n for n, _ in SCHEMA_BREAKS])
def test_schema_is_closed_and_typed(mutate: Callable[[dict[str, Any]], Any]) -> None:
    capsule = valid_capsule()
    mutate(capsule)
    assert code_of({"capsule": capsule}) == "CAPSULE_SCHEMA_INVALID"


def test_non_object_capsules_are_refused() -> None:
    assert code_of({"capsule": [1, 2]}) == "CAPSULE_SCHEMA_INVALID"
    assert code_of({"capsule": "text"}) == "INVALID_REQUEST"
    assert code_of({}) == "INVALID_REQUEST"


PRIVATE_VALUES = [
    ("reference-private-fixture", "Continue from raw transcript with ghp_FAKEEXAMPLE1234567890"),
    ("raw-prompt-marker", "RAW PROMPT: hidden system policy"),
    ("verbatim-log-marker", "verbatim log output follows"),
    ("claude-session-id", "Claude session id: claude-session-1a2b3c4d5e6f"),
    ("codex-thread-id", "Codex thread id: thread_123456789abcdef"),
    ("provider-agent-id", "provider agent id: provider-agent-123456789"),
    ("bearer", "call with Bearer abcdefghijklmnop"),
    ("authorization-basic", "Authorization: Basic dXNlcjpwYXNz"),
    ("npm", "npm_abcdefghijklmnopqrstuv"),
    ("url-credentials", "clone https://user:hunter22@example.invalid/repo"),
    ("jdbc", "jdbc:postgresql://db/x?user=a&password=s3cr3tpw"),
    ("sk-key", "use sk-live_abcdefghijkl"),
    ("glpat", "glpat-abcdefghijklmnop"),
    ("slack", "xoxb-1234567890-abcdef"),
    ("aws", "AKIAABCDEFGHIJKLMNOP"),
    ("pem", "-----BEGIN RSA PRIVATE KEY-----"),
    ("jwt", "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2Q"),
    ("password-assignment", "password = hunter22"),
    ("full-chat", "paste the full chat here"),
    ("session-label", "session: abcdef123456"),
    ("prefixed-run", "run_abcdef123456"),
    ("engine-email", "ask jane.doe@corp-mail.net"),  # the shared engine: emails are refused too
    ("engine-home-path", "see /home/alice/notes.txt"),
    ("engine-stripe", "sk_live_" + "a1B2c3D4e5F6g7H8i9J0k1L2"),  # missed by the reference rules (§11)
    ("engine-google", "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),  # missed by the reference rules (§11)
]


@pytest.mark.parametrize("text", [t for _, t in PRIVATE_VALUES], ids=[n for n, _ in PRIVATE_VALUES])
def test_private_values_are_refused_in_every_string_field(text: str) -> None:
    for field in ("objective", "approved_decisions", "risks", "constraints", "next_action"):
        capsule = valid_capsule()
        capsule[field] = [text] if isinstance(capsule[field], list) else text
        assert code_of({"capsule": capsule}) == "CAPSULE_PRIVATE_CONTENT", field
    capsule = valid_capsule()
    capsule["failures"] = [{"command": "pytest -x", "summary": text, "artifact": None}]
    assert code_of({"capsule": capsule}) == "CAPSULE_PRIVATE_CONTENT", "failures"


def test_private_values_inside_evidence_are_refused_before_externalization() -> None:
    source = overflow_capsule()
    source["evidence"][5]["summary"] = "Claude session id: claude-session-1a2b3c4d5e6f"
    request = {"capsule": source, "max_bytes": 1450, "artifact_path": ART, "artifact_roots": ROOTS}
    assert code_of(request) == "CAPSULE_PRIVATE_CONTENT"


def test_strings_over_4096_utf8_bytes_are_refused() -> None:
    capsule = valid_capsule()
    capsule["objective"] = "\u00e9" * 2049  # 2,049 UTF-16 units: schema ok; 4,098 UTF-8 bytes: too long
    assert code_of({"capsule": capsule}) == "CAPSULE_STRING_TOO_LONG"
    capsule["objective"] = "\u00e9" * 2048  # exactly 4,096 bytes is allowed
    assert result_of({"capsule": capsule})["objective"] == capsule["objective"]


def test_private_keys_are_refused_by_the_walk() -> None:
    from toolkit.runtime.capsule_rules import forbidden_key

    for key in ("raw_prompt", "session_id", "Thread_ID", "api_key", "tool_output", "x_logs", "credentials"):
        assert forbidden_key(key), key
    for key in ("objective", "catalog", "dialogue", "verify_ids", "summary", "artifact_refs"):
        assert not forbidden_key(key), key


def test_ordinary_words_pass() -> None:
    capsule = valid_capsule()
    capsule["risks"] = [
        "Keep the run book current.",
        "Session handling must not regress.",
        "thread-safe queue",
    ]
    assert result_of({"capsule": capsule})["risks"] == capsule["risks"]


def test_the_transformed_capsule_is_checked_again_before_sealing() -> None:
    # 128 refs already: adding the externalized ref breaks maxItems, so the final check refuses it
    source = overflow_capsule()
    source["artifact_refs"] = [f"knowzcode/artifacts/r{i}.json" for i in range(128)]
    request = {"capsule": source, "max_bytes": 7000, "artifact_path": ART, "artifact_roots": ROOTS}
    assert code_of(request) == "CAPSULE_SCHEMA_INVALID"


# ---------------------------------------------------------------- through the real process


def test_runtime_capsule_subprocess_round_trip() -> None:
    from support.harness import runtime_call

    status, frame = runtime_call("capsule", {"capsule": valid_capsule()})
    assert status == 0 and frame["result"]["capsule_hash"] == REFERENCE_VALID_HASH
    status, frame = runtime_call("capsule", {"capsule": {**valid_capsule(), "raw_prompt": "x"}})
    assert status == 1 and frame == {
        "ok": False,
        "code": "CAPSULE_SCHEMA_INVALID",
        "message": MESSAGES["CAPSULE_SCHEMA_INVALID"],
    }


def test_refusals_never_echo_the_input() -> None:
    capsule = valid_capsule()
    capsule["objective"] = "token ghp_FAKEEXAMPLE1234567890"
    frame = in_process("capsule", {"capsule": capsule})
    assert "ghp_" not in json.dumps(frame)


# ---------------------------------------------------------------- hypothesis

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
_fields = st.sampled_from(sorted(valid_capsule()))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=_fields, value=_json, max_bytes=st.one_of(st.none(), st.integers(-5, 20000)))
def test_fuzzed_fields_give_a_result_or_a_coded_refusal(
    field: str, value: Any, max_bytes: int | None
) -> None:
    capsule = valid_capsule()
    capsule[field] = value
    request: dict[str, Any] = {"capsule": capsule}
    if max_bytes is not None:
        request["max_bytes"] = max_bytes
    frame = in_process("capsule", request)
    if frame["ok"]:
        sealed = frame["result"]
        assert sealed["capsule_hash"] == capsule_digest(sealed)
        assert not schema_problems(sealed)
        assert len(canonical_bytes(sealed)) <= (max_bytes or 12288)
    else:
        assert frame["code"] in MESSAGES and frame["message"] == MESSAGES[frame["code"]]


@settings(max_examples=100, deadline=None)
@given(st.permutations(sorted(valid_capsule())))
def test_fuzzed_key_orders_hash_identically(order: list[str]) -> None:
    capsule = valid_capsule()
    assert result_of({"capsule": {k: capsule[k] for k in order}})["capsule_hash"] == REFERENCE_VALID_HASH


def test_the_capsule_op_imports_no_heavy_dependency() -> None:
    import subprocess
    import sys

    code = (
        "import sys, json\n"
        "from toolkit.runtime.capsule import op_capsule\n"
        f"op_capsule({{'capsule': {valid_capsule()!r}}}, None)\n"
        "heavy = [m for m in ('pydantic', 'typer', 'pygit2', 'yaml') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_engine_detectors_catch_what_the_reference_rules_miss() -> None:
    from toolkit.runtime.capsule_privacy import engine_findings
    from toolkit.runtime.capsule_rules import private_value

    for name, text in PRIVATE_VALUES:
        if name.startswith("engine-"):
            assert not private_value(text), name  # the reference's value rules let it through...
            assert engine_findings({"objective": text}), name  # ...the shared engine does not


REFERENCE = os.environ.get("KNOWZCODE_RUNTIME")


@pytest.mark.skipif(
    not REFERENCE or shutil.which("node") is None,
    reason="set KNOWZCODE_RUNTIME to a copy of the reference context_efficiency_runtime.mjs",
)
@pytest.mark.parametrize("where", ["failures", "evidence", "artifact_refs"])
@pytest.mark.parametrize(
    "path", ["knowzcode/artifacts", "knowzcode/artifacts/a.log", "knowzcode", "src/a.log"]
)
def test_artifact_reference_answers_as_the_reference_does(where: str, path: str, tmp_path: Path) -> None:
    capsule = valid_capsule()
    _set_path(where, path)(capsule)
    stdin = json.dumps({"capsule": capsule}).encode()
    theirs = subprocess.run(
        ["node", str(REFERENCE), "capsule"], input=stdin, capture_output=True, cwd=tmp_path, check=False
    )
    assert in_process("capsule", {"capsule": capsule}) == json.loads(theirs.stdout)


REFERENCE_FALSE_POSITIVES = [
    "Run the full test suite and attach the log",  # reference: raw|full near log
    "thread-safe-queue",  # reference: thread- + 8 characters
    "run-integration-tests",  # reference: run- + 8 characters
    "the Codex agent handles retries",  # reference: provider + agent
]


@pytest.mark.parametrize("text", REFERENCE_FALSE_POSITIVES)
def test_the_reference_false_positives_are_accepted(text: str) -> None:
    from toolkit.runtime.capsule_rules import private_value

    assert private_value(text)  # the reference's own patterns refuse it ...
    for field in ("objective", "next_action"):
        capsule = valid_capsule()
        capsule[field] = text
        assert result_of({"capsule": capsule})[field] == text  # ... the engine alone accepts it
    capsule = valid_capsule()
    capsule["risks"] = [text]
    assert result_of({"capsule": capsule})["risks"] == [text]
