"""The closed capsule schema, the reference privacy rules and the portable path rules (stdlib only).

These are the fail-closed checks of the capsule pipeline (reference §4 steps 1-3). They are kept
apart from the pipeline itself so that ``workgroup verify`` can run exactly the same checks on
committed capsules without sealing anything.

The schema's fields and limits are declared once, in ``toolkit.core.capsule_schema``; the checks
and the ``$.field: rule`` messages here are derived from that table. Lengths follow the reference: schema ``minLength``/``maxLength`` count UTF-16 code units (as
JavaScript's ``String.length`` does); the privacy walk's string limit counts UTF-8 bytes.
"""

from __future__ import annotations

import re

from toolkit.core.capsule_schema import (
    CAPSULE,
    PLACEHOLDER_HASH,
    Choice,
    Const,
    Field,
    Nullable,
    Objects,
    Pattern,
    Shape,
    Text,
    TextList,
)
from toolkit.core.jscompat import utf16_len
from toolkit.core.ownership import OwnershipPathError, hidden_character, lexical_segments
from toolkit.runtime.codes import RuntimeOpError

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from typing import TypeGuard

    from toolkit.core.capsule_schema import Rule
    from toolkit.runtime.op_types import ContextCapsule

ARTIFACT_BOUNDARY = "knowzcode/artifacts"
MAX_CAPSULE_STRING_BYTES = 4096

# ---------------------------------------------------------------- schema (reference §1)
# Every check and message below is derived from the one declaration, toolkit.core.capsule_schema.

REQUIRED_KEYS: tuple[str, ...] = CAPSULE.required
OPTIONAL_KEYS: tuple[str, ...] = CAPSULE.optional
FILLED_IN: tuple[str, ...] = tuple(f.name for f in CAPSULE.fields if f.filled_in)  # `capsule seal` sets these
_FIELDS = {field.name: field for field in CAPSULE.fields}
_PATTERNS: dict[str, re.Pattern[str]] = {}


def _is_str(value: object, lo: int, hi: int | None) -> TypeGuard[str]:
    if not isinstance(value, str):
        return False
    size = utf16_len(value)
    return size >= lo and (hi is None or size <= hi)


def _is_text(value: object, rule: Text) -> TypeGuard[str]:
    """A string within the rule's bounds; an identifier (``visible``) also has nothing invisible in it.

    The reference accepts any string as an id; a control, format or separator character (``U+0085``,
    a bidi override) or a lone surrogate would let two ids look the same, so they are refused.
    """
    return _is_str(value, rule.lo, rule.hi) and (not rule.visible or hidden_character(value) is None)


def _str_list(value: object, max_items: int, item: Text, *, unique: bool) -> bool:
    if not isinstance(value, list) or len(value) > max_items:
        return False
    if not all(_is_text(entry, item) for entry in value):
        return False
    return not unique or len(set(value)) == len(value)  # all strings here: equal iff canonically equal


def _closed(obj: object, shape: Shape) -> TypeGuard[Mapping[str, object]]:
    if not isinstance(obj, dict):
        return False
    return all(key in obj for key in shape.required) and all(key in shape.allowed for key in obj)


def _full_match(regex: str, value: str) -> bool:
    pattern = _PATTERNS.get(regex)
    if pattern is None:
        pattern = _PATTERNS[regex] = re.compile(regex)
    return pattern.fullmatch(value) is not None  # fullmatch: a trailing newline never passes "$"


def _shape_ok(obj: object, shape: Shape) -> bool:
    return _closed(obj, shape) and all(
        _holds(field.rule, obj[field.name]) for field in shape.fields if field.name in obj
    )


def _holds(rule: Rule, value: object) -> bool:
    """Whether ``value`` follows ``rule`` (one kind of toolkit.core.capsule_schema)."""
    if isinstance(rule, Text):
        return _is_text(value, rule)
    if isinstance(rule, Const):
        return isinstance(value, str) and value == rule.value
    if isinstance(rule, Choice):
        return isinstance(value, str) and value in rule.values
    if isinstance(rule, Pattern):
        return isinstance(value, str) and _full_match(rule.regex, value)
    if isinstance(rule, Nullable):
        return value is None or _holds(rule.inner, value)
    if isinstance(rule, TextList):
        return _str_list(value, rule.most, rule.item, unique=rule.unique)
    return (
        isinstance(value, list)
        and len(value) <= rule.most
        and all(_shape_ok(item, rule.shape) for item in value)
    )


def schema_problems(capsule: object) -> list[str]:
    """Names of the capsule fields that break the closed ``knowzcode.context-capsule/v1`` schema.

    ``capsule_hash`` is required in a sealed capsule; callers checking an unsealed input add a
    placeholder first, as the reference does.
    """
    if not isinstance(capsule, dict):
        return ["$"]
    problems = [f"unknown:{key}" for key in capsule if key not in _FIELDS]
    problems += [f"missing:{key}" for key in REQUIRED_KEYS if key not in capsule]
    problems += [
        f"invalid:{field.name}"
        for field in CAPSULE.fields
        if field.name in capsule and not _holds(field.rule, capsule[field.name])
    ]
    return problems


_SAFE_KEY = re.compile(r"^[a-z][a-z_]{0,39}\Z")  # letters only: a name, never a credential


def _str_rule(lo: int, hi: int | None) -> str:
    return f"must be a string of {lo}..{hi} characters" if hi else f"must be a string of at least {lo}"


def _shape_word(rule: Rule) -> str:
    """How a field of an object reads in ``must be an object {...}``."""
    if isinstance(rule, Nullable):
        return _shape_word(rule.inner) + " or null"
    if isinstance(rule, TextList):
        return "[string, ...]"
    if isinstance(rule, Choice):
        return "one of " + ", ".join(rule.values)
    return "string"


def _object_rule(shape: Shape) -> str:
    parts = [f'"{f.name}"{"?" if f.optional else ""}: {_shape_word(f.rule)}' for f in shape.fields]
    return "must be an object {" + ", ".join(parts) + "}"


def _rule_text(field: Field) -> str:
    """What the field's rule says, for a ``$.field: rule`` message."""
    rule = field.rule
    if field.filled_in:
        return f"filled in by sealing (leave it out), else {field.otherwise}"
    if isinstance(rule, Const):
        return f'must be "{rule.value}"'
    if isinstance(rule, Choice):
        return "must be one of " + ", ".join(rule.values)
    if isinstance(rule, Text):
        return _str_rule(rule.lo, rule.hi)
    return "invalid"


def _list_problem(
    path: str, value: object, max_items: int, item_ok: Callable[[object], bool], item_rule: str, unique: bool
) -> str:
    if not isinstance(value, list):
        return f"{path}: must be a list (of {item_rule.removeprefix('must be ')})"
    if len(value) > max_items:
        return f"{path}: must have at most {max_items} items"
    for index, item in enumerate(value):
        if not item_ok(item):
            return f"{path}[{index}]: {item_rule}"
        if unique and isinstance(item, str) and item in value[:index]:
            return f"{path}[{index}]: must not repeat an earlier item"
    return f"{path}: invalid"


def _field_problem(key: str, value: object) -> str | None:
    """The rule ``value`` breaks as the capsule's field ``key``, as ``$.key: rule``; None if it holds.

    A string field is judged on its length here; an identifier with an invisible character is
    reported by ``explain_schema``'s closing check ("does not match the schema").
    """
    field = _FIELDS.get(key)
    if field is None:
        return None
    rule = field.rule
    if isinstance(rule, Text):
        return None if _is_str(value, rule.lo, rule.hi) else f"$.{key}: {_str_rule(rule.lo, rule.hi)}"
    if isinstance(rule, TextList):
        if _holds(rule, value):
            return None
        item = rule.item
        return _list_problem(
            f"$.{key}",
            value,
            rule.most,
            lambda v: _is_text(v, item),
            _str_rule(item.lo, item.hi),
            rule.unique,
        )
    if isinstance(rule, Objects):
        shape = rule.shape
        if _holds(rule, value):
            return None
        return _list_problem(
            f"$.{key}", value, rule.most, lambda v: _shape_ok(v, shape), _object_rule(shape), False
        )
    return None if _holds(rule, value) else f"$.{key}: {_rule_text(field)}"


def _unknown_field(key: object) -> str:
    name = f"$.{key}" if isinstance(key, str) and _SAFE_KEY.match(key) else "$.<a field>"
    return f"{name}: not a capsule field (the schema is closed; see `workgroup capsule seal --help`)"


def explain_schema(capsule: object, *, sealed: bool) -> list[str]:
    """Each schema problem as ``$.field: rule`` (JSON path and the rule it breaks).

    Values are never quoted back (they may be secrets); a field name is shown only when it is a
    plain identifier. Unsealed input may leave out the fields that sealing fills in.
    """
    if not isinstance(capsule, dict):
        return ["$: must be a JSON object (a capsule)"]
    out = [_unknown_field(key) for key in capsule if key not in _FIELDS]
    out += _missing_fields(capsule, sealed)
    out += [problem for key, value in capsule.items() if (problem := _field_problem(key, value))]
    if not out:  # never less precise than the closed schema itself
        candidate = {"checkpoint_sha": None, "capsule_hash": PLACEHOLDER_HASH, **capsule}
        out = [f"$.{p.partition(':')[2]}: does not match the schema" for p in schema_problems(candidate)]
    return out


def _missing_fields(capsule: Mapping[str, object], sealed: bool) -> list[str]:
    """``$.field: required`` for each required field left out (unsealed input may leave out
    the fields sealing fills in)."""
    return [
        f"$.{key}: required"
        for key in REQUIRED_KEYS
        if key not in capsule and (sealed or key not in FILLED_IN)
    ]


def is_capsule(value: object) -> TypeGuard[ContextCapsule]:
    """True when ``value`` matches the closed schema (sealed: ``capsule_hash`` included)."""
    return not schema_problems(value)


def checked_capsule(capsule: object, *, sealed: bool) -> ContextCapsule:
    """The capsule as the closed schema's record; ``CAPSULE_SCHEMA_INVALID`` unless it matches.

    An unsealed capsule without a ``capsule_hash`` is checked (and returned) as a copy with the
    placeholder seal, as the reference checks it; its other fields are the capsule's own.
    """
    candidate = capsule
    if not sealed and isinstance(capsule, dict) and "capsule_hash" not in capsule:
        candidate = {**capsule, "capsule_hash": PLACEHOLDER_HASH}
    if not is_capsule(candidate):
        raise RuntimeOpError("CAPSULE_SCHEMA_INVALID")
    return candidate


# ---------------------------------------------------------------- privacy (reference §4 step 2)

_FORBIDDEN_KEY = re.compile(
    r"(?:^|_)(?:raw_?)?(?:transcript|prompt|chat|conversation|logs?|tool_output|ambient_output"
    r"|session(?:_id)?|thread_id|agent_id|run_id|platform_handle|provider_handle|credentials?"
    r"|password|passwd|api_key|access_token|refresh_token|auth_token)(?:$|_)",
    re.IGNORECASE,
)

_NOT_EOL = r"[^\n\r\u2028\u2029]"  # JavaScript's '.' stops at every line terminator
_RAW = r"\b(?:raw|full|verbatim)\b"
_BULK = r"\b(?:transcript|chat|conversation|prompt|logs?|tool[-_\s]?output|ambient[-_\s]?output)\b"
_ID_TAIL = r"[A-Za-z0-9][A-Za-z0-9._:-]{5,}\b"
_VALUE_RULES: tuple[tuple[str, str], ...] = (
    ("bearer-token", r"Bearer\s+[A-Za-z0-9._~+/-]+=*"),
    ("authorization-header", r"Authorization\s*:\s*(?:Basic|Token|ApiKey)\s+\S+"),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{20,}"),
    ("url-credentials", r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]+:[^\s/@]+@"),
    ("jdbc-password", r"\bjdbc:[^\s]*password=[^\s;&]+"),
    ("api-key-prefix", r"\b(?:sk|rk|pk)-(?:live|test)?_?[A-Za-z0-9_-]{8,}"),
    ("github-token", r"\bgh[pousr]_[A-Za-z0-9]{12,}"),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{12,}"),
    ("slack-token", r"\bxox[baprs]-[A-Za-z0-9-]{10,}"),
    ("aws-access-key", r"\bAKIA[0-9A-Z]{16}\b"),
    ("private-key", r"-----BEGIN [A-Z ]+PRIVATE KEY-----"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"),
    (
        "secret-assignment",
        r"\b(?:password|passwd|api[_-]?key|access[_-]?token|refresh[_-]?token|secret)\s*[:=]\s*\S{4,}",
    ),
    ("raw-bulk-content", _RAW + _NOT_EOL + "{0,48}" + _BULK),
    ("raw-bulk-content", _BULK + _NOT_EOL + "{0,48}" + _RAW),
    (
        "provider-identifier",
        r"\b(?:claude|codex|provider)[-_\s:/]*(?:session|thread|agent|run)(?:[-_\s]*id)?\s*[:=#-]?\s*"
        + _ID_TAIL,
    ),
    ("labelled-identifier", r"\b(?:session|thread|agent|run)(?:[-_\s]*id)?\s*[:=#]\s*" + _ID_TAIL),
    ("prefixed-identifier", r"\b(?:sess|thread|agent|run)[_-][A-Za-z0-9][A-Za-z0-9._:-]{7,}\b"),
)
# ASCII word boundaries and case folding, as a JavaScript regex without the ``u`` flag
_VALUE_PATTERN = re.compile("|".join(f"(?:{rule})" for _, rule in _VALUE_RULES), re.IGNORECASE | re.ASCII)


def forbidden_key(key: str) -> bool:
    return _FORBIDDEN_KEY.search(key) is not None


def private_value(text: str) -> bool:
    return _VALUE_PATTERN.search(text) is not None


def walk(value: object, path: str = "$") -> Iterator[tuple[str, str, str]]:
    """Yield ``(kind, path, item)`` for every key (``kind='key'``) and string (``'str'``) in order
    (a JSON object's keys are strings)."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield "key", f"{path}.{key}", key
            yield from walk(child, f"{path}.{key}")
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from walk(child, f"{path}[{index}]")
    elif isinstance(value, str):
        yield "str", path, value


def strings_of(value: object) -> tuple[list[str], list[str]]:
    """``(keys, strings)`` of a JSON value, iteratively (no paths: the fast path for ``verify``)."""
    keys: list[str] = []
    texts: list[str] = []
    stack: list[object] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            texts.append(node)
        elif isinstance(node, dict):
            keys.extend(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return keys, texts


# ---------------------------------------------------------------- paths (reference §4 step 3)

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def portable_path(path: object) -> TypeGuard[str]:
    """A portable repository-relative path: the reference's rules, nothing rewritten."""
    if not isinstance(path, str) or not path or path != path.strip():
        return False
    if "\\" in path or ":" in path or _CONTROL.search(path) or path.startswith("/"):
        return False
    return all(segment not in ("", ".", "..") for segment in path.split("/"))


def has_git_segment(path: str) -> bool:
    # case-folded: a case-insensitive file system would resolve ``.GIT`` to the git dir
    return any(segment.lower() == ".git" for segment in path.split("/"))


def beneath(path: str, root: str) -> bool:
    """True when ``path`` is strictly inside ``root`` (segment-wise, no string-prefix tricks)."""
    return path.startswith(root.rstrip("/") + "/")


def inside_or_equal(path: str, root: str) -> bool:
    return path == root or beneath(path, root)


def file_paths(capsule: ContextCapsule) -> list[str]:
    paths = list(capsule.get("owned_files", [])) + list(capsule.get("read_files", []))
    return paths + [spec["path"] for spec in capsule.get("specs", [])]


def artifact_paths(capsule: ContextCapsule) -> list[str]:
    refs = [ref for item in capsule.get("failures", []) if (ref := item.get("artifact")) is not None]
    refs += [ref for item in capsule.get("evidence", []) if (ref := item.get("artifact")) is not None]
    return refs + list(capsule.get("artifact_refs", []))


def assert_artifact_path(path: object) -> None:
    """Portable and inside the boundary; the boundary itself is a valid reference, as in the reference."""
    if not portable_path(path):
        raise RuntimeOpError("CAPSULE_ARTIFACT_REF_INVALID")
    if not inside_or_equal(path, ARTIFACT_BOUNDARY) or has_git_segment(path):
        raise RuntimeOpError("CAPSULE_ARTIFACT_REF_UNAUTHORIZED")


def assert_owned_path(path: str) -> None:
    """The rules ``workgroup owners`` applies (``toolkit.core.ownership``), as ``INVALID_OWNERSHIP_PATH``.

    On top of the reference's portable rules: full-width or leader dots that normalize (NFKC) to
    ``..``, format characters (bidi overrides, zero-width), C1 controls, separators and anything
    under ``.git`` (case-folded) are refused, as the writer registry refuses them.
    """
    try:
        lexical_segments(path)
    except OwnershipPathError:
        raise RuntimeOpError("INVALID_OWNERSHIP_PATH") from None


def assert_paths(capsule: ContextCapsule) -> None:
    """Every file/spec path portable; every artifact path portable and inside the boundary; then
    every one of them through the owners' path rules (``assert_owned_path``)."""
    files = file_paths(capsule)
    for path in files:
        if not portable_path(path):
            raise RuntimeOpError("CAPSULE_ARTIFACT_REF_INVALID")
    artifacts = artifact_paths(capsule)
    for path in artifacts:
        assert_artifact_path(path)
    for path in files + artifacts:
        assert_owned_path(path)
