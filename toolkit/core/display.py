"""One display helper for every human-readable line (issue 24): ``shown(text)``.

File names, delta titles, model names and ids come from the repository or from input. Printed
raw, ``ESC ] 0 ; x BEL`` retitles the terminal, ``ESC [ 31 m`` recolours it, a newline forges a
line of output (a fake finding) and a bidi override reorders what the reader sees. ``shown``
makes each of them visible instead:

* C0 controls, DEL and C1 controls (U+0080-U+009F): ``\\n``, ``\\r``, ``\\t`` or ``\\xNN``;
* Unicode format characters (category Cf: bidi overrides and isolates, zero-width characters,
  the byte-order mark...), line and paragraph separators, lone surrogates: ``\\uNNNN``;
* a backslash: ``\\\\``, so an escape in the output is never ambiguous with the same text typed.

Other text, non-ASCII letters included, is kept. Plain printable ASCII (the common case, printed
per finding by the hooks) returns unchanged after one regular-expression test. JSON output does
not use this: ``json.dumps`` escapes on its own. Standard library only (hooks import it).
"""

from __future__ import annotations

import re

_PLAIN = re.compile(r"[ -\[\]-~]*")  # printable ASCII without the backslash
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return f"\\x{code:02x}"
    if code < 0x7F:
        return char
    import unicodedata  # only non-ASCII text pays for it: every hook loads this module

    if unicodedata.category(char) in _ESCAPED_CATEGORIES:
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return char


def shown(text: object) -> str:
    """``text`` as one safe line: no control, format or separator character reaches the terminal."""
    value = text if isinstance(text, str) else str(text)
    if _PLAIN.fullmatch(value):
        return value
    return "".join(map(_escape, value))


def shown_lines(text: str) -> str:
    """Multi-line text (a handoff, a result summary): each line through ``shown``, line breaks and
    tabs kept (they move the cursor, they cannot rewrite the screen)."""
    if _PLAIN.fullmatch(text.replace("\n", " ").replace("\t", " ")):
        return text
    return "\n".join("\t".join(map(shown, line.split("\t"))) for line in text.split("\n"))


def option_name(arg: str) -> str:
    """An unknown command-line option as an error names it: the part before ``=`` (a value given
    inline is never echoed back, it may be a secret), at most 40 characters. Raw: print it through
    ``shown`` (a ``ToolkitError`` line already is)."""
    name = arg.partition("=")[0]
    return name[:40] + ("..." if len(name) > 40 else "")
