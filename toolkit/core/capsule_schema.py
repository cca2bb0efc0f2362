"""``knowzcode.context-capsule/v1`` declared once: every field, its kind and its limits (stdlib only).

Everything else is derived from this table: the runtime's checks and their messages
(``toolkit.runtime.capsule_rules``), the pydantic model (``toolkit.models.capsule``) and through it
``schemas/context-capsule.schema.json``. Change a limit here and all three follow;
``tests/core/test_capsule_schema.py`` fails when a derived form disagrees with this table.

Plain classes with ``__slots__``, not dataclasses: the runtime reads this on capsule calls, and
dataclasses would import ``inspect`` at start-up. Lengths count UTF-16 code units, as JavaScript's
``String.length`` (and JSON Schema's ``minLength``/``maxLength`` in the reference) do.
"""

from __future__ import annotations

from toolkit.core.phases import PHASES

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from typing import TypeAlias

CAPSULE_SCHEMA_ID = "knowzcode.context-capsule/v1"
EVIDENCE_KINDS: tuple[str, ...] = ("file", "test", "log", "vault", "user")


class Text:
    """A string of ``lo``..``hi`` UTF-16 code units (``hi`` None: no upper bound). ``visible``: no
    control, format or separator character and no lone surrogate (identifiers, which must not look alike)."""

    __slots__ = ("hi", "lo", "visible")

    def __init__(self, lo: int, hi: int | None, *, visible: bool = False) -> None:
        self.lo, self.hi, self.visible = lo, hi, visible


class Pattern:
    """A string matching ``regex`` in full (written as JSON Schema writes it, ``^...$``)."""

    __slots__ = ("regex",)

    def __init__(self, regex: str) -> None:
        self.regex = regex


class Const:
    """Exactly this string."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value


class Choice:
    """One of these strings."""

    __slots__ = ("values",)

    def __init__(self, values: tuple[str, ...]) -> None:
        self.values = values


class Nullable:
    """``null`` or the inner rule."""

    __slots__ = ("inner",)

    def __init__(self, inner: Text) -> None:
        self.inner = inner


class TextList:
    """A list of at most ``most`` strings, each following ``item``; ``unique``: no item twice."""

    __slots__ = ("item", "most", "unique")

    def __init__(self, most: int, item: Text, *, unique: bool) -> None:
        self.most, self.item, self.unique = most, item, unique


class Objects:
    """A list of at most ``most`` closed objects of one ``shape``."""

    __slots__ = ("most", "shape")

    def __init__(self, most: int, shape: Shape) -> None:
        self.most, self.shape = most, shape


if TYPE_CHECKING:
    Rule: TypeAlias = Text | Pattern | Const | Choice | Nullable | TextList | Objects


class Field:
    """One field of a closed object. ``optional``: may be left out (a list then defaults to empty, a
    nullable value to null). ``filled_in``: set by ``workgroup capsule seal`` (what it holds), so an
    unsealed input may leave it out. ``otherwise``: how the rule reads in an error message after
    "filled in by sealing (leave it out), else"."""

    __slots__ = ("filled_in", "name", "optional", "otherwise", "rule")

    def __init__(
        self,
        name: str,
        rule: Rule,
        *,
        optional: bool = False,
        filled_in: str | None = None,
        otherwise: str | None = None,
    ) -> None:
        self.name, self.rule, self.optional = name, rule, optional
        self.filled_in, self.otherwise = filled_in, otherwise


class Shape:
    """A closed JSON object: these fields, in this order, and no other key."""

    __slots__ = ("allowed", "doc", "fields", "name", "optional", "required")

    def __init__(self, name: str, doc: str, fields: tuple[Field, ...]) -> None:
        self.name, self.doc, self.fields = name, doc, fields
        self.required = tuple(field.name for field in fields if not field.optional)
        self.optional = tuple(field.name for field in fields if field.optional)
        self.allowed = frozenset(field.name for field in fields)


# an unsealed input is checked with this in place of its seal (the reference does the same)
PLACEHOLDER_HASH = "sha256:" + "0" * 64

ID = Text(1, 128, visible=True)  # task, workgroup: nothing invisible may make two look alike
PATH = Text(1, 512)
TEXT = Text(1, 2048)

SPEC_REF = Shape(
    "SpecRef",
    "A spec the task must satisfy, with the verification ids that prove it.",
    (Field("path", PATH), Field("verify_ids", TextList(128, Text(1, 128), unique=True))),
)
FAILURE = Shape(
    "Failure",
    "A failed command with a bounded summary and, optionally, an artifact reference.",
    (Field("command", Text(1, 1024)), Field("summary", TEXT), Field("artifact", Nullable(PATH))),
)
EVIDENCE = Shape(
    "Evidence",
    "Optional evidence; the only part of a capsule that overflow may move into an artifact.",
    (
        Field("kind", Choice(EVIDENCE_KINDS)),
        Field("summary", TEXT),
        Field("artifact", Nullable(PATH), optional=True),
    ),
)
CAPSULE = Shape(
    "ContextCapsule",
    "A short, deterministic context capsule bound to a checkpoint and sealed by ``capsule_hash``.",
    (
        Field("schema", Const(CAPSULE_SCHEMA_ID)),
        Field("task_id", ID),
        Field("workgroup_id", ID),
        Field("phase", Choice(PHASES)),
        Field("objective", Text(1, 4096)),
        Field("node_ids", TextList(64, Text(1, 128), unique=True)),
        Field("owned_files", TextList(64, PATH, unique=True)),
        Field("read_files", TextList(128, PATH, unique=True)),
        Field("specs", Objects(64, SPEC_REF)),
        Field("approved_decisions", TextList(128, TEXT, unique=False)),
        Field(
            "checkpoint_sha",
            Nullable(Text(7, None)),
            filled_in="the commit the capsule is bound to (--checkpoint, default HEAD)",
            otherwise="a commit SHA",
        ),
        Field("failures", Objects(64, FAILURE)),
        Field("risks", TextList(128, TEXT, unique=False)),
        Field("constraints", TextList(128, TEXT, unique=False)),
        Field("next_action", TEXT),
        Field("evidence", Objects(128, EVIDENCE), optional=True),
        Field("artifact_refs", TextList(128, PATH, unique=True), optional=True),
        Field(
            "capsule_hash",
            Pattern(r"^sha256:[a-f0-9]{64}$"),
            filled_in="the seal over the capsule's canonical bytes",
            otherwise='"sha256:" + 64 hex digits',
        ),
    ),
)
