"""Credentials in the configuration files tools read them from: Kubernetes ``Secret`` manifests,
``.npmrc``, ``.pypirc``, ``.netrc`` / ``_netrc`` and Docker's ``config.json`` ``auths``.

Each family is recognised by the shape of its file, not by the file's name, so the same lines
quoted in a README, a CI script or a heredoc are caught too: a ``kind: Secret`` document's
``data:`` (base64, decoded and judged) and ``stringData:`` values, never a ConfigMap's; an
``.npmrc`` ``_authToken=`` / ``_auth=`` (base64 ``user:password``) / ``_password=`` (base64) at
the start of a line or after a registry's ``//host/:``; a ``password =`` line of a ``.pypirc``
section (``[pypi]``, ``[testpypi]`` or a server section with a ``repository``); a ``.netrc``
``machine`` (or ``default``) entry with a ``login`` and a ``password``, on one line or several;
a Docker ``"auth"`` (base64 ``user:password``) or ``"identitytoken"`` under ``"auths"``.

Values go through the same look-alike filters as the other rules (placeholders, environment
reads, example values, templates). Every pattern is linear: possessive bodies, bounded
repeats; what a check needs from around a match (the document, the section, the ``auths``
block) is found from positions gathered once per text, never by a search back per match.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator

from toolkit.privacy import filters as f
from toolkit.privacy.rules import WORD, Rule, Tuning, lazy
from toolkit.privacy.scantext import ScanText
from toolkit.privacy.secrets import BATCH_SEPARATOR
from toolkit.privacy.types import Category

S = Category.SECRET
_PRIORITY = 74  # above the generic assignment (60) and entropy (10) rules, below provider formats

# Words that stand for a value rather than being one, in any of these files.
_STAND_INS = frozenset({"password", "passwd", "pass", "pwd", "secret", "token", "user", "username", "x"})


def plain_value_ok(value: str, *, min_len: int = 4) -> bool:
    """A literal credential value: long enough, not a placeholder, a template, an environment
    read, an example or the label word itself."""
    value = value.strip().strip("\"'")
    if len(value) < min_len or value.lower() in _STAND_INS:
        return False
    if value.startswith(("$", "%", "{", "<", "(")) or f.is_format_placeholder(value):
        return False
    return not (
        f.is_placeholder(value)
        or f.is_env_read(value)
        or f.is_example_value(value)
        or f.is_literal_word(value)
        or f.is_failed_checksum(value)
    )


def _b64(value: str) -> bytes | None:
    """``value`` decoded as standard or URL-safe base64, or None."""
    value = value.strip().strip("\"'")
    if not value or len(value) % 4 == 1:
        return None
    padded = value + "=" * (-len(value) % 4)
    if "-" in value or "_" in value:
        return f.b64decode(padded, urlsafe=True)
    return f.b64decode(padded, validate=True)


def _b64_text(value: str) -> str | None:
    """``value`` decoded from base64 to printable UTF-8 text, or None."""
    raw = _b64(value)
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text and text.isprintable() else None


def user_password_ok(decoded: str | None) -> bool:
    """Decoded ``user:password`` (Docker and npm ``auth``) with a real password."""
    if decoded is None or ":" not in decoded:
        return False
    user, _, password = decoded.partition(":")
    return bool(user) and password != user and plain_value_ok(password, min_len=3)


class _Positions:
    """Offsets of one needle in the last text asked about (computed once per text, then a bisect
    per question), and of the batch separators that bound a file inside a joined batch."""

    __slots__ = ("needle", "_text", "_hits", "_seps")

    def __init__(self, needle: str) -> None:
        self.needle = needle
        self._text: str | None = None
        self._hits: list[int] = []
        self._seps: list[int] = []

    def _load(self, text: str) -> None:
        if self._text is not text:
            self._hits = _all(text, self.needle)
            self._seps = _all(text, BATCH_SEPARATOR)
            self._text = text

    def before(self, text: str, offset: int) -> bool:
        """Whether the needle occurs before ``offset`` in the same file of a batch."""
        self._load(text)
        index = bisect_right(self._hits, offset) - 1
        if index < 0:
            return False
        sep = bisect_right(self._seps, offset) - 1
        return sep < 0 or self._seps[sep] < self._hits[index]


def _all(text: str, needle: str) -> list[int]:
    found: list[int] = []
    at = text.find(needle)
    while at != -1:
        found.append(at)
        at = text.find(needle, at + len(needle))
    return found


# --- .npmrc -----------------------------------------------------------------------------------

_NPMRC = lazy(r"(_authToken|_auth|_password)[ \t]*+=[ \t]*+([\"']?)([^\s\"']{4,1024}+)\2")


def _npmrc_check(match: re.Match[str]) -> bool:
    text, start = match.string, match.start()
    if start >= 2 and text[start - 1] == ":" and text[start - 2] == "/":
        pass  # //registry.npmjs.org/:_authToken=
    elif text[text.rfind("\n", 0, start) + 1 : start].strip(" \t"):
        return False  # only at the start of a line (self._auth = ... is code)
    key, value = match.group(1), match.group(3)
    if key == "_auth":
        return user_password_ok(_b64_text(value))
    if key == "_password":
        decoded = _b64_text(value)
        return decoded is not None and plain_value_ok(decoded, min_len=3)
    if not plain_value_ok(value, min_len=8) or _CONSTANT.match(value):
        return False
    return not f.is_reference(value) or f.looks_random(value, min_len=8, min_entropy=3.0)


_CONSTANT = lazy(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")

# --- .netrc -----------------------------------------------------------------------------------

_NETRC = lazy(
    r"(?:machine[ \t\r\n]++[^\s]{1,253}+|default)"
    r"((?:[ \t\r\n]++(?:login|account|port)[ \t\r\n]++[^\s]{1,256}+){0,3})"
    r"[ \t\r\n]++password[ \t\r\n]++([^\s\\\"']{1,256}+)"
    r"([ \t\r\n]++login[ \t\r\n]++[^\s])?"
)


def _netrc_check(match: re.Match[str]) -> bool:
    """A netrc entry names who logs in: without ``login`` it is prose (``the default password``)."""
    if "login" not in match.group(1) and match.group(3) is None:
        return False
    return plain_value_ok(match.group(2))


# --- .pypirc ----------------------------------------------------------------------------------

_PYPIRC = lazy(r"password[ \t]*+[=:][ \t]*+([^\s]{1,256}+)[ \t]*+(?=\r?\n|\Z)")
_SECTION = lazy(r"\[([^\]\n]{1,64}+)\][ \t]*+(?=\r?\n|\Z)")
_REPOSITORY_KEY = lazy(r"(?m)^[ \t]*+repository[ \t]*+[=:]")


class _Sections:
    """The INI section headers of the last text asked about: (offset, counts as a package
    index's credentials) each, with the batch separators as boundaries no section crosses."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._starts: list[int] = []
        self._index: list[bool] = []

    def _load(self, text: str) -> None:
        if self._text is text:
            return
        bounds = []
        at = 0 if text.startswith("[") else text.find("\n[")
        while at != -1:
            head = at if text.startswith("[", at) else at + 1
            header = _SECTION.compiled.match(text, head)
            if header is not None:
                bounds.append((head, header.group(1).strip().lower()))
            at = text.find("\n[", head + 1)
        bounds += [(at, "") for at in _all(text, BATCH_SEPARATOR)]
        bounds.sort()
        self._starts = [at for at, _ in bounds]
        self._index = []
        for k, (at, name) in enumerate(bounds):
            end = bounds[k + 1][0] if k + 1 < len(bounds) else len(text)
            body_has_repo = bool(name) and _REPOSITORY_KEY.compiled.search(text, at, end) is not None
            self._index.append(
                name in ("pypi", "testpypi") or (name not in ("", "distutils") and body_has_repo)
            )
        self._text = text

    def index_section(self, text: str, offset: int) -> bool:
        self._load(text)
        k = bisect_right(self._starts, offset) - 1
        return k >= 0 and self._index[k]


_sections = _Sections()


def _pypirc_check(match: re.Match[str]) -> bool:
    text, start = match.string, match.start()
    if start and text[start - 1] in WORD:
        return False
    if text[text.rfind("\n", 0, start) + 1 : start].strip(" \t"):
        return False  # a key at the start of its line, as in an INI file
    return plain_value_ok(match.group(1)) and _sections.index_section(text, start)


# --- Docker config.json -------------------------------------------------------------------------

_DOCKER = lazy(
    r"(auth|identitytoken|registrytoken)\\?\"[ \t]*+:[ \t]*+\\?\"([A-Za-z0-9+/=._~-]{8,4096}+)\\?\""
)
_auths = _Positions("auths")


def _docker_check(match: re.Match[str]) -> bool:
    text, start = match.string, match.start()
    if not text.endswith('"', 0, start):
        return False  # a JSON key: "auth" (or \"auth\" inside a string), not a word ending in auth
    if not _auths.before(text, start):
        return False  # an "auth" field of anything but a Docker credentials file
    if match.group(1) == "auth":
        return user_password_ok(_b64_text(match.group(2)))
    return plain_value_ok(match.group(2), min_len=8)


# --- Kubernetes Secret --------------------------------------------------------------------------

_KIND_SECRET = lazy(
    r"""^[ \t]*+(?:-[ \t]++)?["']?kind["']?[ \t]*+:[ \t]*+["']?Secret["']?[ \t]*+,?[ \t]*+\r?$"""
)
_KIND_SECRET_JSON = lazy(r"""["']kind["'][ \t]*+:[ \t]*+["']Secret["']""")
_YAML_DATA = lazy(r"(?m)^([ \t]*+)(data|stringData)[ \t]*+:[ \t]*+\r?$")
_YAML_ITEM = lazy(r"([ \t]*+)([\"']?[A-Za-z0-9._-]{1,253}+[\"']?)[ \t]*+:[ \t]*+([^\r\n]{0,8192}+)\r?")
_JSON_DATA = lazy(r"\"(data|stringData)\"[ \t]*+:[ \t]*+\{")
_JSON_ITEM = lazy(r"[ \t\r\n,]*+\"([A-Za-z0-9._-]{1,253}+)\"[ \t\r\n]*+:[ \t\r\n]*+\"([^\"\\\n]{0,8192}+)\"")
# keys of a Secret that name where or who, not the secret
_NOT_SECRET_KEYS = frozenset(
    {
        "username",
        "user",
        "login",
        "host",
        "hostname",
        "port",
        "database",
        "db",
        "namespace",
        "region",
        "email",
    }
)
_DOC_SEPARATOR = "\n---"


def secret_entry_ok(key: str, value: str, encoded: bool) -> bool:
    """One ``data``/``stringData`` entry of a Secret: a credential unless its key names a place or
    a person, or its (decoded) value is a placeholder, a template or a public certificate."""
    if key.strip("\"'").lower() in _NOT_SECRET_KEYS:
        return False
    value = value.strip()
    if value[:1] in ("'", '"') and value[-1:] == value[:1]:
        value = value[1:-1]
    if not encoded:
        return plain_value_ok(value)
    raw = _b64(value)
    if raw is None or len(raw) < 4:
        return False
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return len(raw) >= 16  # binary: a keystore or a key, not text that could be a stand-in
    if decoded.lstrip().startswith(("-----BEGIN CERTIFICATE", "-----BEGIN PUBLIC KEY", "ssh-")):
        return False
    return plain_value_ok(decoded.strip())


class _KubernetesSecretRule(Rule):
    """``kind: Secret`` documents: each entry under ``data:`` (base64) and ``stringData:``."""

    def spans(self, view: ScanText) -> Iterator[tuple[int, int]]:
        text = view.text
        done: set[int] = set()
        at = view.find("Secret")
        while at != -1:
            head = text.rfind("\n", 0, at) + 1
            tail = text.find("\n", at)
            tail = len(text) if tail == -1 else tail
            line = text[head:tail]
            if _KIND_SECRET.compiled.match(line) or _KIND_SECRET_JSON.compiled.search(line):
                begin, end = _bounds.document(text, head, tail)
                if begin not in done:
                    done.add(begin)  # a YAML block (data:) and a JSON object ("data": {) never both match
                    yield from _yaml_entries(text, begin, end)
                    yield from _json_entries(text, begin, end)
            at = view.find("Secret", tail)  # each line once: a long line of "Secret" stays linear


class _Bounds:
    """The document separators (``---`` lines) and batch separators of the last text asked
    about, found once per text: each document is then found with a bisect, not a search."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._at: list[int] = []

    def document(self, text: str, head: int, tail: int) -> tuple[int, int]:
        """(start, end) of the YAML document holding the line ``text[head:tail]``."""
        if self._text is not text:
            self._at = sorted(_all(text, _DOC_SEPARATOR) + _all(text, BATCH_SEPARATOR))
            self._text = text
        index = bisect_right(self._at, head - 1) - 1
        begin = self._at[index] + 1 if index >= 0 else 0
        later = bisect_right(self._at, tail - 1)
        return begin, self._at[later] if later < len(self._at) else len(text)


_bounds = _Bounds()


def _yaml_entries(text: str, begin: int, end: int) -> Iterator[tuple[int, int]]:
    for block in _YAML_DATA.compiled.finditer(text, begin, end):
        yield from _yaml_block_entries(text, block, end)


def _yaml_block_entries(text: str, block: re.Match[str], end: int) -> Iterator[tuple[int, int]]:
    """The secret values of one ``data:``/``stringData:`` block: its direct children (the
    first item's indent), skipping blank lines, comments and the lines of block values; the
    block ends at the first line indented no deeper than its key or shallower than its items."""
    indent, encoded = len(block.group(1)), block.group(2) == "data"
    at = block.end() + 1
    child = -1
    while at < end:
        stop = text.find("\n", at, end)
        stop = end if stop == -1 else stop
        item = _YAML_ITEM.compiled.fullmatch(text, at, stop) if stop > at else None
        if item is None:
            line = text[at:stop]
            stripped = line.lstrip()
            if not stripped.strip() or stripped.startswith("#") or (0 <= child < len(line) - len(stripped)):
                at = stop + 1  # a blank line, or a line of a block value (key: |)
                continue
            break
        depth = len(item.group(1))
        if depth <= indent or depth < child:
            break
        child = depth if child < 0 else child
        if depth == child:
            value = item.group(3).rstrip()
            if value and value[0] not in "|>&*#" and secret_entry_ok(item.group(2), value, encoded):
                yield item.start(3), item.start(3) + len(value)
        at = stop + 1


def _json_entries(text: str, begin: int, end: int) -> Iterator[tuple[int, int]]:
    for block in _JSON_DATA.compiled.finditer(text, begin, end):
        encoded = block.group(1) == "data"
        at = block.end()
        while True:
            item = _JSON_ITEM.compiled.match(text, at, end)
            if item is None:
                break
            if secret_entry_ok(item.group(1), item.group(2), encoded):
                yield item.span(2)
            at = item.end()


CONFIG_RULES: tuple[Rule, ...] = (
    # Each rule is gated by literals of its file's shape (one combined prefilter for every rule,
    # toolkit/privacy/needles.py) rather than by keywords (one more pass over the text each).
    _KubernetesSecretRule(
        id="kubernetes-secret",
        category=S,
        pattern=_KIND_SECRET,
        priority=_PRIORITY,
        tuning=Tuning(literals=("Secret",)),
    ),
    Rule(
        id="npmrc-auth",
        category=S,
        pattern=_NPMRC,
        group=3,
        check=_npmrc_check,
        priority=_PRIORITY,
        tuning=Tuning(literals=("_auth", "_password")),
    ),
    Rule(
        id="pypirc-password",
        category=S,
        pattern=_PYPIRC,
        group=1,
        check=_pypirc_check,
        priority=_PRIORITY,
        tuning=Tuning(literals=("[pypi]", "[testpypi]", "[distutils]")),
    ),
    Rule(
        id="netrc-credentials",
        category=S,
        pattern=_NETRC,
        group=2,
        check=_netrc_check,
        priority=_PRIORITY,
        boundary=WORD,
        tuning=Tuning(
            literals=("machine", "default login", "default password"),
            seeds=("machine", "default login", "default password"),  # where an entry can start
        ),
    ),
    Rule(
        id="docker-config-auth",
        category=S,
        pattern=_DOCKER,
        group=2,
        check=_docker_check,
        priority=_PRIORITY,
        tuning=Tuning(literals=("auths",)),
    ),
)
