"""Repository-relative owned paths, the pure part: validation, comparison keys, the overlap index,
owned globs. No I/O: resolving symlinks against the file system is ``toolkit.infra.paths``.

Standard library only (the runtime imports it on every delegation); ``pathspec`` is imported
lazily, and only when globs are expanded.

Rules (the reference's canonicalization, with the deliberate changes listed in the README):

* refused with ``INVALID_OWNERSHIP_PATH``: non-strings, empty or padded strings, NUL and other
  control characters, a leading ``/``, a drive (``C:``), a URL scheme (``https:``), any path
  whose ``..`` climbs out of the workspace root, and any path whose real location (symlinks
  resolved through the deepest existing ancestor) is outside the root;
* ``\\`` becomes ``/``; empty and ``.`` segments vanish; ``..`` is resolved physically (after the
  symlinks before it), so ``link/../x`` means what the file system means;
* a ``:`` is allowed anywhere except in the first segment. The reference bans ``:`` everywhere
  and so refuses legal POSIX names such as ``docs/notes:v2.md``; the first segment is where a
  drive or a scheme would sit, so it stays banned there;
* NFKC and case folding are applied only to the comparison key, never to a stored path. The
  escape checks run on the NFKC form too, before anything else: ``．．/x`` (full-width dots) and
  ``‥/x`` (two-dot leader) normalize to ``../x`` and are refused like it; a path whose NFKC form
  has other separators or dot segments than the path as typed is refused;
* refused: invisible and format characters (Unicode ``Cf``: bidi overrides and isolates,
  zero-width joiners, soft hyphens, the BOM), C1 controls (``U+0085`` included), line and
  paragraph separators, Hangul fillers, and lone surrogates: they make two different paths
  look alike in review;
* nothing under ``.git`` is ownable (any segment whose folded form is ``.git``, and any path whose
  real location is inside one, through a symlink for example).

Overlap is equality or ``/``-containment. ``OverlapIndex`` answers it in time linear in the total
path length: a dict of keys plus a dict of every key's ancestors, never all pairs.
"""

from __future__ import annotations

import re

from toolkit.core.errors import InvalidInput

# on every ``workgroup runtime route``: no typing or dataclasses (inspect) at import time
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

INVALID_OWNERSHIP_PATH = "INVALID_OWNERSHIP_PATH"
INVALID_OWNERSHIP_GLOB = "INVALID_OWNERSHIP_GLOB"

# Linux's PATH_MAX; also bounds the per-directory caches a hostile request could grow.
MAX_PATH_CHARS = 4096

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# What JavaScript's ``trim`` removes (the reference's padding test), plus Python's other spaces.
PAD = (
    " \t\n\v\f\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# A drive (``C:``) or a URL scheme (``https:``) in the first segment.
_FIRST_SEGMENT_COLON = re.compile(r"^[^/]*:")


class OwnershipPathError(InvalidInput):
    """A path that cannot be a canonical repository-relative owned path (exit 2 in the CLI)."""

    def __init__(self, reason: str, code: str = INVALID_OWNERSHIP_PATH) -> None:
        super().__init__(code, reason)


_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u180e")


def hidden_character(text: str) -> str | None:
    """Why ``text`` holds a character that must not be in a path or an id, or None.

    Controls (C0 and C1), format characters (bidi overrides, zero-width), separators, fillers
    and lone surrogates: each can make two different strings look the same.
    """
    if text.isascii():
        return "a control character" if _CONTROL.search(text) else None
    import unicodedata  # only non-ASCII text pays for it (every route loads this module)

    for char in text:
        category = unicodedata.category(char)
        if category == "Cs":
            return "a lone surrogate"
        if category in _INVISIBLE_CATEGORIES or char in _FILLERS:
            return "an invisible, format or control character"
    return None


def git_segment(segments: Iterable[str]) -> bool:
    return any(fold(seg) == ".git" for seg in segments if seg[:1] == "." or not seg.isascii())


def fold(text: str) -> str:
    """The comparison form: NFKC, case-folded, NFKC again (so folding is idempotent)."""
    if text.isascii():  # NFKC is the identity on ASCII, and casefold is lower
        return text.lower()

    return _nfkc(_nfkc(text).casefold())


def _nfkc(text: str) -> str:
    """NFKC of non-ASCII text (the identity on ASCII, which never comes here)."""
    import unicodedata  # only non-ASCII paths pay for it (every route loads this module)

    return unicodedata.normalize("NFKC", text)


# Already-canonical relative paths (no control chars, ``\``, empty, ``.``-leading segments, or a
# colon in the first segment) skip the general validation: this is the common case.
SIMPLE_PATH = re.compile(
    r"[^/\x00-\x1f\x7f\\:.][^/\x00-\x1f\x7f\\:]*(?:/[^/\x00-\x1f\x7f\\.][^/\x00-\x1f\x7f\\]*)*"
)


def lexical_segments(value: object) -> list[str]:
    """Validate ``value`` and return its segments (``\\`` -> ``/``, empty and ``.`` dropped).

    ``..`` segments are kept: they are resolved against the real file system later.
    """
    if (
        isinstance(value, str)
        and len(value) <= MAX_PATH_CHARS
        and value.isascii()
        and SIMPLE_PATH.fullmatch(value)
        and value.strip(PAD) == value
    ):
        return value.split("/")
    text = _path_text(value)
    if not text.isascii():
        _check_normal_form(text)
    segments = _lexical_checks(text)
    if git_segment(segments):
        raise OwnershipPathError("nothing under .git can be owned")
    return segments


def _path_text(value: object) -> str:
    """``value`` when it is a non-empty, unpadded string of bounded length without control or
    hidden characters; otherwise the refusal, checked in that order."""
    if not isinstance(value, str) or not value or value.strip(PAD) != value:
        raise OwnershipPathError("an owned path must be a non-empty, unpadded string")
    if len(value) > MAX_PATH_CHARS:
        raise OwnershipPathError(f"an owned path must be at most {MAX_PATH_CHARS} characters")
    if _CONTROL.search(value):
        raise OwnershipPathError("an owned path must not contain NUL or control characters")
    hidden = hidden_character(value)
    if hidden is not None:
        raise OwnershipPathError(f"an owned path must not contain {hidden}")
    return value


def _check_normal_form(value: str) -> None:
    """A non-ASCII path's NFKC form must keep its separators and dot segments and pass the
    lexical checks too: the escape checks must see what NFKC-folded keys will see."""
    normal = _nfkc(value)
    if normal == value:
        return
    literal = _segments(value)
    normal_segments = _segments(normal)
    if len(normal_segments) != len(literal) or any(
        norm in (".", "..") and norm != seg for norm, seg in zip(normal_segments, literal, strict=True)
    ):
        raise OwnershipPathError(
            "an owned path must not normalize (NFKC) to other separators or dot segments"
        )
    _lexical_checks(normal)


def _segments(value: str) -> list[str]:
    return [seg for seg in value.replace("\\", "/").split("/") if seg]


def _lexical_checks(value: str) -> list[str]:
    """Absolute, drive/scheme and climbing checks; the segments without empty and ``.`` ones."""
    if _CONTROL.search(value):
        raise OwnershipPathError("an owned path must not contain NUL or control characters")
    portable = value.replace("\\", "/")
    if portable.startswith("/"):
        raise OwnershipPathError("an owned path must be repository-relative, not absolute")
    if _FIRST_SEGMENT_COLON.match(portable):
        raise OwnershipPathError("an owned path must not start with a drive or a URL scheme")
    segments = [seg for seg in portable.split("/") if seg and seg != "."]
    _check_no_climb(segments)
    return segments


def _check_no_climb(segments: list[str]) -> None:
    """Refuse a drive or scheme reached at the root (behind ``./`` or ``a/..``) and any ``..``
    that climbs above the workspace root."""
    depth = 0
    for seg in segments:
        if depth == 0 and ":" in seg:  # a drive or scheme hidden behind ``./`` or ``a/..``
            raise OwnershipPathError("an owned path must not start with a drive or a URL scheme")
        depth = depth - 1 if seg == ".." else depth + 1
        if depth < 0:
            raise OwnershipPathError("an owned path must not climb out of the workspace root")


class CanonicalPath:
    """``rel``: the real path relative to the workspace root ("" is the root itself);
    ``key``: the absolute comparison key (folded), shared by every alias of the same file.

    A small value class rather than a dataclass: dataclasses imports inspect, a large part of
    the start-up of every ``workgroup runtime route``.
    """

    __slots__ = ("key", "rel")

    def __init__(self, rel: str, key: str) -> None:
        self.rel = rel
        self.key = key

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CanonicalPath):
            return NotImplemented
        return (self.rel, self.key) == (other.rel, other.key)

    def __hash__(self) -> int:
        return hash((self.rel, self.key))

    def __repr__(self) -> str:
        return f"CanonicalPath(rel={self.rel!r}, key={self.key!r})"


def overlaps(left: str, right: str) -> bool:
    """Equality or ``/``-containment of two comparison keys."""
    return left == right or left.startswith(right + "/") or right.startswith(left + "/")


class OverlapIndex:
    """Keys of held scopes, answering "does this key overlap a held one, and whose?".

    ``exact`` maps a key to its holder; ``below`` maps every proper ancestor of a held key to
    (holder, held key) of something under it. A query looks its key up in both maps and walks
    its own ancestors through ``exact``: O(depth) per query, O(total length) to build.
    Keys are absolute (they start with ``/``).
    """

    def __init__(self) -> None:
        self.exact: dict[str, str] = {}
        self.below: dict[str, tuple[str, str]] = {}
        # directory -> held ancestor-or-self (or None): many queried keys share a directory
        self._memo: dict[str, tuple[str, str] | None] = {}

    def add_all(self, keys: Iterable[str], holder: str) -> None:
        """``add`` for many keys of one holder."""
        self._memo.clear()
        exact = self.exact
        below = self.below
        for key in keys:
            if key not in exact:
                exact[key] = holder
            cut = key.rfind("/")
            while cut > 0:
                key_up = key[:cut]
                if key_up in below:
                    break
                below[key_up] = (holder, key)
                cut = key_up.rfind("/")

    def add(self, key: str, holder: str) -> None:
        self._memo.clear()
        exact = self.exact
        if key not in exact:
            exact[key] = holder
        below = self.below
        cut = key.rfind("/")
        while cut > 0:
            key_up = key[:cut]
            if key_up in below:
                break  # its ancestors are already recorded
            below[key_up] = (holder, key)
            cut = key_up.rfind("/")

    def first_overlap(self, keys: Iterable[str]) -> tuple[str, str] | None:
        """``find`` over many keys; the first hit or None (the hot loop of the router)."""
        exact_get = self.exact.get
        below_get = self.below.get
        memo = self._memo
        for key in keys:
            holder = exact_get(key)
            if holder is not None:
                return holder, key
            under = below_get(key)
            if under is not None:
                return under
            directory = key[: key.rfind("/")]
            hit = memo[directory] if directory in memo else self.find(key)
            if hit is not None:
                return hit
        return None

    def directory_hit(self, prefix: str) -> tuple[str, str] | None:
        """(holder, held key) of a held key equal to or containing the directory ``prefix``
        (a key ending in ``/``), memoized per directory."""
        directory = prefix[:-1]
        memo = self._memo
        if directory in memo:
            return memo[directory]
        found = None
        exact = self.exact
        probe = directory
        while probe:
            holder = exact.get(probe)
            if holder is not None:
                found = (holder, probe)
                break
            cut = probe.rfind("/")
            if cut <= 0:
                break
            probe = probe[:cut]
        memo[directory] = found
        return found

    def find(self, key: str) -> tuple[str, str] | None:
        """(holder, held key) of one held key overlapping ``key``, or None."""
        holder = self.exact.get(key)
        if holder is not None:
            return holder, key
        under = self.below.get(key)
        if under is not None:
            return under
        if key == "/" and self.exact:  # the file-system root contains everything
            first = next(iter(self.exact.items()))
            return first[1], first[0]
        cut = key.rfind("/")
        if cut <= 0:
            return None
        return self.directory_hit(key[: cut + 1])  # an ancestor directory held: same memoized walk


def check_globs(globs: object) -> list[str]:
    """Validate owned globs: a list of non-empty strings, no ``!`` negation, no absolute/escape."""
    if not isinstance(globs, list):
        raise OwnershipPathError("owned_globs must be a list of strings", INVALID_OWNERSHIP_GLOB)
    return [_checked_glob(glob) for glob in globs]


def _checked_glob(glob: object) -> str:
    """One owned glob with ``/`` separators: a non-empty, unpadded string without control or
    hidden characters, not negated, and (in its NFKC form too) repository-relative and not
    under .git; otherwise the refusal, checked in that order."""
    if not isinstance(glob, str) or not glob or glob.strip(PAD) != glob or _CONTROL.search(glob):
        raise OwnershipPathError("an owned glob must be a non-empty, unpadded string", INVALID_OWNERSHIP_GLOB)
    if glob.startswith("!"):
        raise OwnershipPathError("negated owned globs ('!') are refused", INVALID_OWNERSHIP_GLOB)
    hidden = hidden_character(glob)
    if hidden is not None:
        raise OwnershipPathError(f"an owned glob must not contain {hidden}", INVALID_OWNERSHIP_GLOB)
    portable = glob.replace("\\", "/")
    _check_glob_forms(portable)
    return portable


def _check_glob_forms(portable: str) -> None:
    """A glob and its NFKC form (full-width dots and slashes) must be repository-relative (no
    leading ``/``, drive, scheme or ``..``) and name nothing under .git."""
    forms = {portable}
    if not portable.isascii():
        forms.add(_nfkc(portable).replace("\\", "/"))
    for form in forms:
        parts = form.split("/")
        if form.startswith("/") or _FIRST_SEGMENT_COLON.match(form) or ".." in parts:
            raise OwnershipPathError("an owned glob must be repository-relative", INVALID_OWNERSHIP_GLOB)
        if git_segment(parts):
            raise OwnershipPathError("nothing under .git can be owned", INVALID_OWNERSHIP_GLOB)


def glob_spec(globs: Sequence[str]) -> object:
    """A pathspec ``PathSpec`` (gitignore style) for validated globs."""
    import pathspec  # lazy: only glob users pay for it

    return pathspec.PathSpec.from_lines("gitignore", globs)


# letters, digits, ``.``, ``_``, ``-`` and ``*`` in non-empty segments, one trailing ``/`` allowed
_PLAIN_GLOB = re.compile(r"[A-Za-z0-9._*-]+(?:/[A-Za-z0-9._*-]+)*/?\Z")


def _plain_glob_regex(glob: str) -> str | None:
    """The gitignore meaning of a glob in the plain subset, as an anchored regex; None otherwise.

    The subset: ASCII letters, digits, ``. _ -``, ``/`` between non-empty segments (one trailing
    ``/`` allowed) and ``*``, where a segment is either exactly ``**`` or holds no ``**``. In it,
    gitignore's rules are few: ``*`` is any run of characters but ``/``; a glob with no ``/``
    (besides a trailing one) matches at any depth; ``**`` as a leading or middle segment is any
    number of directories, as the last segment everything inside; a trailing ``/`` matches
    directories only; a matched directory matches every path under it (except after a last
    segment ``*`` in a glob with a slash, left to pathspec). Anything else (``?``,
    classes, escapes, spaces, non-ASCII, ``#``) is left to pathspec. A test holds this equal to
    pathspec on generated globs and paths.
    """
    if not _PLAIN_GLOB.match(glob):
        return None
    dir_only = glob.endswith("/")
    parts = (glob[:-1] if dir_only else glob).split("/")
    if not _plain_segments(parts, dir_only):
        return None
    return _plain_regex(parts, dir_only)


def _plain_regex(parts: list[str], dir_only: bool) -> str:
    """The anchored regex of a glob's checked plain segments: at any depth without an inner
    slash, ``**`` as any directories (everything inside when last), ``*`` within one segment,
    and every path under a match (under a directory only, with a trailing ``/``)."""
    out = [] if len(parts) > 1 else ["(?:.*/)?"]  # no inner slash: at any depth
    for i, seg in enumerate(parts):
        last = i == len(parts) - 1
        if seg == "**":
            out.append(".*" if last else "(?:.*/)?")
            continue
        out.append("[^/]*".join(re.escape(piece) for piece in seg.split("*")))
        if not last:
            out.append("/")
    out.append("/.*" if dir_only else "(?:/.*)?")
    return "".join(out)


def _plain_segments(parts: list[str], dir_only: bool) -> bool:
    """Whether a plain glob's segments keep to the subset's ``**`` and ``*`` rules: ``**`` only as
    a whole segment (and not the last of a directory-only glob), and no ``dir/*`` (pathspec
    matches one level only there, not the paths under a match)."""
    if any("**" in seg and seg != "**" for seg in parts) or (dir_only and parts[-1] == "**"):
        return False
    return not (len(parts) > 1 and parts[-1] == "*" and not dir_only)


def glob_matcher(globs: Sequence[str]) -> Callable[[str], bool]:
    """``match(path)`` for validated globs: one regex when every glob is in the plain subset
    (no pathspec import: the runtime's hot path), else pathspec's ``match_file``."""
    regexes = [_plain_glob_regex(glob) for glob in globs]
    if regexes and all(regex is not None for regex in regexes):
        compiled = re.compile("(?:" + "|".join(r for r in regexes if r is not None) + r")\Z")
        return lambda path: compiled.match(path) is not None
    spec = glob_spec(globs)
    return lambda path: bool(spec.match_file(path))  # type: ignore[attr-defined]


def expand_globs(globs: Sequence[str], tracked_files: Iterable[str]) -> list[str]:
    """Tracked files matched by ``globs`` (validated first), sorted."""
    valid = check_globs(list(globs))
    if not valid:
        return []
    match = glob_matcher(valid)
    return sorted(path for path in tracked_files if match(path))


def glob_literal_prefix(glob: str) -> str:
    """The directory part of ``glob`` before its first wildcard (``src/api`` for ``src/api/**``)."""
    parts: list[str] = []
    for seg in glob.replace("\\", "/").strip("/").split("/"):
        if any(ch in seg for ch in "*?["):
            break
        parts.append(seg)
    return "/".join(parts)
