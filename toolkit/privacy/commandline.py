"""Credentials on command lines: the flags and idioms the common clients take a secret by.

* long flags whose name ends in a secret word: ``--password X``, ``gpg --passphrase X``,
  ``--some-secret-token X``, ``--oauth2-bearer X``, ``az ... --client-secret X``,
  ``az storage ... --account-key X``, ``gh auth login --with-token <<< X`` (``--passphrase-fd 0``,
  ``--password-file f`` and ``--password-stdin`` name where the secret comes from, not the
  secret, unless a here-string follows);
* single-dash parameters: PowerShell ``-Password 'X'`` / ``-NuGetApiKey X``, keytool
  ``-storepass X``, openssl ``-passin pass:X``, ``docker|podman|helm registry|az login -p X``,
  and ``ConvertTo-SecureString 'X' -AsPlainText``;
* mysql and mariadb ``-p`` (glued ``-pX`` or ``-p'X'``; ``-p X`` with a space is the database
  name to mysql, so only a value shaped like a password counts there), ``sshpass -p X``;
* ``curl -u user:pass`` / ``--user``, ``echo X | ... --password-stdin`` (or ``--with-token``),
  and ``npm config set //registry/:_authToken X``.

Every pattern starts with a literal and reads bounded bodies possessively; what a pattern
cannot say linearly (which client a ``-p`` belongs to, what follows a pipe) is a bounded look
at the same line in Python.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator

from toolkit.privacy import filters as f
from toolkit.privacy.rules import ALNUM, LazyPattern, Rule, Tuning, lazy
from toolkit.privacy.scantext import ScanText
from toolkit.privacy.types import Category

S = Category.SECRET
# the placeholder words documentation puts where a password goes
PW_PLACEHOLDERS = frozenset({"password", "passwd", "pass", "pwd", "secret", "token", "user", "username", "x"})
_VALUE_GROUPS = ("qv", "uv", "sv")


class ValueRule(Rule):
    """A rule whose reported span is its value (``qv`` quoted, ``uv`` unquoted or ``sv`` spaced,
    whichever matched), not the label or flag in front of it."""

    def spans(self, view: ScanText) -> Iterator[tuple[int, int]]:
        text = view.text
        for match in self.matches(view):
            if not self.starts_token(text, match.start()):
                continue
            if self.check is not None and not self.check(match):
                continue
            yield match.span(value_group(match))


def value_group(match: re.Match[str]) -> str:
    """The name of the value group that matched."""
    names = match.re.groupindex
    for name in _VALUE_GROUPS:
        if name in names and match.group(name) is not None:
            return name
    return "uv"


def value_of(match: re.Match[str]) -> str:
    return match.group(value_group(match)) or ""


# documented defaults of the clients themselves (the JDK's keystore password)
_CLIENT_DEFAULTS = frozenset({"changeit"})


def password_ok(value: str) -> bool:
    """A literal password: not a placeholder, an example, a variable or a template."""
    return not (
        value.lower() in _CLIENT_DEFAULTS
        or f.is_placeholder(value)
        or f.is_env_read(value)
        or f.is_example_value(value)
        or value.lower() in PW_PLACEHOLDERS
        or value.startswith(("$", "%", ":", "@", "?", "(", "`"))
    )


def token_ok(value: str, *, min_len: int = 12) -> bool:
    """A token or key: long enough, letters mixed with digits or symbols, not a word or a slug."""
    if len(value) < min_len or not password_ok(value) or f.is_uuid(value) or f.is_password_hash(value):
        return False
    if value.isalpha() or _WORD_SLUG.match(value):
        return False  # a word, or words joined by dashes ("not-a-real-token")
    return f.shannon_entropy(value) >= 3.0


def line_before(text: str, offset: int, reach: int = 160) -> str:
    """The start of the line before ``offset``, at most ``reach`` characters (bounded work)."""
    begin = text.rfind("\n", max(0, offset - reach), offset) + 1
    return text[max(begin, offset - reach) : offset]


def line_after(text: str, offset: int, reach: int = 240) -> str:
    """The rest of the line from ``offset``, at most ``reach`` characters."""
    end = text.find("\n", offset, offset + reach)
    return text[offset : offset + reach if end == -1 else end]


_WORD_SLUG = lazy(r"^[A-Za-z]+(?:[-_][A-Za-z]+)+$")
_PATHLIKE = lazy(r"^[\w.-]{1,80}\.(?:txt|json|pem|key|crt|yaml|yml|env|cfg|conf|ini|gpg|asc|p12|pfx|jks)$")

# --- long flags: --password X, --some-secret-token X ---------------------------------------
# The flag and its separator only; the value is read by a lookahead, so a flag that takes no
# value (``--batch --passphrase X``) does not swallow the next flag and hide it.
_LONG_FLAG = lazy(
    r"--(?P<name>[A-Za-z0-9][A-Za-z0-9_-]{0,62}+)"
    r"(?=(?:=|[ \t]++)(?P<here><<<[ \t]*+)?"
    r"(?:(?P<q>[\"'])(?P<qv>[^\"'\n]{6,200}+)(?P=q)|[\"']?(?P<uv>[^\s\"'`;|&]{6,200}+)))"
)
_SECRET_LAST = frozenset({"password", "passwd", "pwd", "passphrase", "secret", "token", "apikey", "bearer"})
# "--<word>-key" names that hold a key's secret value (``--account-key``, ``--api-key``)
_KEY_PREFIXES = frozenset(
    {"api", "secret", "auth", "access", "account", "master", "encryption", "signing", "client", "private"}
)
_TOKENISH_LAST = frozenset({"token", "apikey", "bearer", "key"})


def flag_name_ok(name: str) -> bool:
    """Whether a flag's name ends in a secret word (``db-password``, ``some-secret-token``)."""
    parts = [p for p in re.split(r"[-_]", name.lower()) if p]
    if not parts:
        return False
    last = parts[-1]
    if last in _SECRET_LAST:
        return True
    return last == "key" and len(parts) > 1 and parts[-2] in _KEY_PREFIXES


def _long_flag_check(match: re.Match[str]) -> bool:
    """A ``--password X``-style flag: the flag names a secret (a here-string to a ``--*stdin``
    flag too) and its value is not the next flag, a path, a URL or a placeholder."""
    name = match.group("name")
    here = match.group("here") is not None  # gh auth login --with-token <<< X, --password-stdin <<< X
    if not (flag_name_ok(name) or (here and name.lower().endswith("stdin"))):
        return False
    value = value_of(match)
    if value.startswith(("-", "/", "~", "./", "<", "[")) or "://" in value or _PATHLIKE.match(value):
        return False  # the next flag, a file, a URL, a placeholder
    return _long_flag_value_ok(name, value, here)


def _long_flag_value_ok(name: str, value: str, here: bool) -> bool:
    """Whether the value given to a secret-named long flag is a secret: not an environment
    read, a placeholder, a literal or a word, and shaped like a token for a token flag or like
    a password otherwise (a here-string must also vary)."""
    if (
        f.is_env_read(value)
        or f.is_placeholder(value)
        or f.is_literal_word(value)
        or f.is_example_value(value)
    ):
        return False
    if value.isalpha() and value.islower():
        return False  # a word: a mode or a name, not a secret
    last = re.split(r"[-_]", name.lower())[-1]
    if here:
        return password_ok(value) and len(set(value)) >= 5
    if last in _TOKENISH_LAST:
        return token_ok(value, min_len=8)
    return password_ok(value)


# --- single-dash parameters: PowerShell, keytool, openssl, and the clients' -p ---------------
_DASH_PARAM = lazy(
    r"-(?:(?P<name>(?i:password|passwd|pass|passin|passout|passphrase|storepass|keypass|srcstorepass|"
    r"deststorepass|srckeypass|destkeypass|nugetapikey|apikey|accesstoken|clientsecret|token|"
    r"plainpassword|secret))(?::|=|[ \t]++)|(?P<p>p)(?P<gap>=?[ \t]*+))"
    r"(?:pass:)?(?:(?P<q>[\"'])(?P<qv>[^\"'\n]{3,200}+)(?P=q)|(?P<uv>[^\s\"'`;|&)]{3,200}+))"
)
_DASH_TOKENISH = frozenset({"nugetapikey", "apikey", "accesstoken", "token"})


def _dash_param_check(match: re.Match[str]) -> bool:
    """A single-dash secret parameter that starts a word: a client's ``-p`` or a named one."""
    start = match.start()
    if start and match.string[start - 1] not in " \t\"'(`":
        return False  # a hyphenated word (re-password), or the second dash of a long flag
    value = value_of(match)
    if match.group("p") is not None:
        return _client_p_check(match, value)
    return _named_param_value_ok(match, value)


def _named_param_value_ok(match: re.Match[str], value: str) -> bool:
    """Whether the value of a named single-dash parameter (``-Password X``, ``-storepass X``) is
    a secret: not the next parameter or a password source, token-shaped for a token parameter,
    and otherwise a password that is not a variable or property reference."""
    if value.startswith(("-", "env:", "file:", "fd:", "stdin")) or value.lower() in {
        "stdin",
        "true",
        "false",
    }:
        return False  # the next parameter, or openssl naming where the password comes from
    if match.group("name").lower() in _DASH_TOKENISH:
        return token_ok(value, min_len=8)
    quoted = match.group("qv") is not None
    if not quoted and (f.is_reference(value) and not any(c.isdigit() for c in value)):
        return False  # -Password $cred.Password, -Password SecureStringVar
    return password_ok(value) and len(set(value)) >= 4


# The clients that take a password by -p: mysql and mariadb (glued, quoted, or spaced when the
# value is password-shaped: after a space mysql reads a database name and prompts), the
# registry logins and sshpass (any form).
_MYSQL_CLIENT = lazy(
    r"(?i:\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb|mariadb-dump)\b)"
)
_LOGIN_CLIENT = lazy(
    r"(?i:\b(?:(?:docker|podman|buildah|nerdctl|skopeo|oras|helm[ \t]++registry|az)[ \t]++login|sshpass)\b)"
)


def _client_p_check(match: re.Match[str], value: str) -> bool:
    text, start = match.string, match.start()
    if value.startswith(("-", "/")):
        return False  # mkdir -p -v, -p /path
    line = line_before(text, start).lower()
    if ("mysql" in line or "mariadb" in line) and _named_before(_mysql_names, _MYSQL_CLIENT, text, start):
        if match.group("gap") and match.group("qv") is None and not _password_shaped(value):
            return False  # "mysql -u root -p shop": a database name
        return password_ok(value)
    if ("login" in line or "sshpass" in line) and _named_before(_login_names, _LOGIN_CLIENT, text, start):
        return password_ok(value) and len(set(value)) >= 4
    return False


class _Names:
    """Where the names of one pattern occur in the last text asked about (found in one pass,
    the first time a ``-p`` of that text needs them): a line of ``mysql -p`` repeated costs a
    bisect per repeat, not a search of its line."""

    __slots__ = ("text", "ends", "starts")

    def __init__(self) -> None:
        self.text: str | None = None
        self.ends: list[int] = []
        self.starts: list[int] = []


_mysql_names, _login_names = _Names(), _Names()


def _named_before(names: _Names, pattern: LazyPattern, text: str, offset: int, reach: int = 160) -> bool:
    """Whether a name of ``pattern`` lies wholly on the line before ``offset``, at most
    ``reach`` characters back."""
    if names.text is not text:
        found = [(m.end(), m.start()) for m in pattern.compiled.finditer(text)]
        names.ends, names.starts, names.text = [e for e, _ in found], [b for _, b in found], text
    last = bisect_right(names.ends, offset) - 1  # names never overlap: the last to end starts last
    if last < 0:
        return False
    floor = max(text.rfind("\n", max(0, offset - reach), offset) + 1, offset - reach)
    return names.starts[last] >= floor


def _password_shaped(value: str) -> bool:
    """Shaped like a password rather than a database or file name: long enough, and mixing
    both cases with digits, or holding a symbol names do not use."""
    if len(value) < 8:
        return False
    lower, upper, digit = f.char_classes(value)
    return (lower and upper and digit) or any(c in "!#%^&*+=?~@" for c in value)


_SECURE_STRING = lazy(
    r"(?i:convertto-securestring)[ \t]++(?:-(?i:string)[ \t]++)?"
    r"(?:(?P<q>[\"'])(?P<qv>[^\"'\n]{3,200}+)(?P=q)|(?P<uv>[^\s\"'`;|)]{3,200}+))"
)


def _secure_string_check(match: re.Match[str]) -> bool:
    if "-asplaintext" not in line_after(match.string, match.end()).lower():
        return False  # without -AsPlainText the argument is an encrypted string, not the password
    value = value_of(match)
    return not value.startswith("-") and password_ok(value) and len(set(value)) >= 4


# --- curl -u user:password, --user ----------------------------------------------------------
_CURL_USER = lazy(
    r"(?<![^ \t\n])(?:-u|--user)(?:=|[ \t]++)[\"']?([^\s:\"']{0,64}+):(?P<uv>[^\s@\"']{3,128}+)"
)


def _curl_check(match: re.Match[str]) -> bool:
    password = match.group("uv")
    return (
        password.lower() not in PW_PLACEHOLDERS
        and not password.startswith("/")  # "-u http://host": a URL, not user:password
        and not (password.startswith("[") and password.endswith("]"))  # [PASSWORD]
        and not f.is_placeholder(password)
        and not f.is_env_read(password)
        and not f.is_example_value(password)
    )


# --- secrets fed to --password-stdin / --with-token ------------------------------------------
_PIPED = lazy(
    r"(?i:echo|printf)[ \t]++(?:-[neE]{1,3}+[ \t]++)?"
    r"(?:(?P<q>[\"'])(?P<qv>[^\"'\n]{6,300}+)(?P=q)|(?P<uv>[^\s\"'`;|&]{6,300}+))[ \t]*+\|"
)


def _stdin_value_ok(value: str) -> bool:
    return password_ok(value) and not value.startswith("-") and len(set(value)) >= 5


def _piped_check(match: re.Match[str]) -> bool:
    rest = line_after(match.string, match.end())
    if "--password-stdin" not in rest and "--with-token" not in rest:
        return False  # echo "x" | grep ...: not a login
    return _stdin_value_ok(value_of(match))


# --- npm config set //registry/:_authToken X -------------------------------------------------
_NPM_SET = lazy(
    r"(?i:npm|yarn|pnpm)[ \t]++config[ \t]++set[ \t]++(?P<key>[^\s=]{1,300}+)(?:=|[ \t]++)"
    r"(?P<sq>[\"']?)(?P<sv>[^\s\"'`]{6,300}+)(?P=sq)"
)
_NPM_KEYS = ("_authtoken", "npmauthtoken")


def _npm_set_check(match: re.Match[str]) -> bool:
    if not match.group("key").lower().endswith(_NPM_KEYS):
        return False
    return token_ok(match.group("sv"), min_len=8)


COMMAND_LINE_RULES: tuple[Rule, ...] = (
    ValueRule(
        id="command-line-password",
        category=S,
        pattern=_DASH_PARAM,
        check=_dash_param_check,
        priority=72,
        heuristic=True,
        tuning=Tuning(
            # every "-p" (the clients' -p, glued or not, and the names that start with p), the rest
            # with their separator
            anchor=lazy(
                r"-(?:p|(?:storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass|nugetapikey|"
                r"apikey|accesstoken|clientsecret|token|secret)(?::|=|[ \t]))"
            ),
        ),
    ),
    ValueRule(
        id="command-line-password",
        category=S,
        pattern=_SECURE_STRING,
        check=_secure_string_check,
        priority=72,
        heuristic=True,
        tuning=Tuning(literals=("ConvertTo-SecureString",)),
    ),
    ValueRule(
        id="command-line-password",
        category=S,
        pattern=_PIPED,
        check=_piped_check,
        priority=72,
        heuristic=True,
        tuning=Tuning(anchor=lazy(r"(?:echo|printf)[ \t]"), literals=("--password-stdin", "--with-token")),
    ),
    ValueRule(
        id="command-line-password",
        category=S,
        pattern=_NPM_SET,
        check=_npm_set_check,
        priority=72,
        heuristic=True,
        tuning=Tuning(
            anchor=lazy(r"(?:npm|yarn|pnpm)[ \t]+config[ \t]"), literals=("_authToken", "npmAuthToken")
        ),
    ),
    ValueRule(
        id="basic-auth-credentials",
        category=S,
        pattern=_CURL_USER,
        check=_curl_check,
        priority=70,
        heuristic=True,
        tuning=Tuning(keywords=("-u", "--user"), anchor=lazy("-u|--user"), seeds=("-u",), near=(0, 1)),
    ),
)

# the long-flag rule keeps the id it had (password-assignment): allowlist entries name it
LONG_FLAG_RULE = ValueRule(
    id="password-assignment",
    category=S,
    pattern=_LONG_FLAG,
    check=_long_flag_check,
    priority=60,
    boundary=ALNUM | {"-"},
    heuristic=True,
    tuning=Tuning(keywords=("--",)),
)
