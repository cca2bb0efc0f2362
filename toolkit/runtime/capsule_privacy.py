"""The capsule privacy check of the pipeline (reference §4 step 2): the 4,096-byte string limit,
then the shared privacy engine over field names and values.

Apart from ``toolkit.runtime.capsule_rules`` (the schema and path rules, which the agent hooks and
``verify`` read without scanning) because it loads the privacy engine: whoever imports this module
is about to scan.
"""

from __future__ import annotations

from toolkit.privacy import Context, scan_text, scan_value
from toolkit.runtime.capsule_rules import MAX_CAPSULE_STRING_BYTES, strings_of
from toolkit.runtime.codes import RuntimeOpError

_KEY_VERDICTS: dict[tuple[str, str], bool] = {}


def _key_is_private(key: str, context: str) -> bool:
    # field names repeat across records (and a closed schema has few of them): decide each once
    verdict = _KEY_VERDICTS.get((key, context))
    if verdict is None:
        verdict = bool(scan_value({key: ""}, Context(context)))
        if len(_KEY_VERDICTS) < 4096:
            _KEY_VERDICTS[(key, context)] = verdict
    return verdict


def engine_findings(value: object, context: str = "capsule") -> int:
    """Number of findings of the shared privacy engine in ``context`` (capsule by default).

    The strings are scanned as one text, one per line, instead of one engine call per string:
    the engine's per-call work (rule prefilters) then runs once per record, which is what lets
    ``verify`` check a thousand capsules quickly. A joined text can only find more, never less.
    """
    keys, texts = strings_of(value)
    return engine_findings_in(keys, texts, context)


def engine_findings_in(keys: list[str], texts: list[str], context: str = "capsule") -> int:
    """``engine_findings`` over field names and strings already collected by one walk."""
    if any(_key_is_private(key, context) for key in keys):
        return 1
    joined = "\n".join(keys + texts)
    return len(scan_text(joined, Context(context))) if joined else 0


def assert_private_content_free(value: object) -> None:
    """The 4,096-byte string limit, then the shared privacy engine alone (capsule context: field
    names and values). The reference's own patterns (``forbidden_key``, ``private_value``) are
    no longer consulted here: in a capsule the engine refuses everything they refuse, without
    their false positives ("Run the full test suite and attach the log", "thread-safe-queue",
    "run-integration-tests", "the Codex agent handles retries")."""
    keys, texts = strings_of(value)
    for item in texts:
        if len(item) * 4 > MAX_CAPSULE_STRING_BYTES and (
            len(item.encode("utf-8", "surrogatepass")) > MAX_CAPSULE_STRING_BYTES
        ):
            raise RuntimeOpError("CAPSULE_STRING_TOO_LONG")
    if engine_findings_in(keys, texts):
        raise RuntimeOpError("CAPSULE_PRIVATE_CONTENT")
