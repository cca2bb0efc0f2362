"""An unquoted password holding "&" is one value (issue 26): YAML, .env and INI, as quoted values
already were; a query string's next field, shell "&&" and templates stay out."""

from __future__ import annotations

import pytest

from toolkit.privacy.engine import scan_text
from toolkit.privacy.types import Context

VALUE = "Qm7x&Lp2vR9zK4w"


@pytest.mark.parametrize(
    "text",
    [
        f"database:\n  password: {VALUE}\n",  # YAML
        f"DB_PASSWORD={VALUE}\n",  # .env
        f"[database]\npassword = {VALUE}\n",  # INI
        f"password: '{VALUE}'\n",  # quoted, caught before too
    ],
    ids=["yaml", "env", "ini", "quoted"],
)
@pytest.mark.parametrize("context", [Context.SOURCE, Context.GENERIC])
def test_an_unquoted_password_with_an_ampersand_is_found_whole(text: str, context: Context) -> None:
    found = [f for f in scan_text(text, context) if f.rule == "password-assignment"]
    assert len(found) == 1, found
    line = text.splitlines()[found[0].line - 1]
    assert line[found[0].start : found[0].end] == VALUE
    assert VALUE not in found[0].masked


def test_a_query_string_keeps_its_next_field_out_of_the_value() -> None:
    text = "https://example.org/login?user=bob&password=Zx9qTr4mWk&next=/home\n"
    (found,) = [f for f in scan_text(text, Context.SOURCE) if f.rule == "password-assignment"]
    assert text[found.start : found.end] == "Zx9qTr4mWk"


@pytest.mark.parametrize(
    "text",
    [
        "password=$PASS && echo ok\n",  # shell: a variable, then "&&"
        "password=a&&b\n",
        "password: ${PASS}&x\n",  # a template
        "url = '/login?password=&next=1'\n",  # an empty field
        "password=&quot;x&quot;\n",  # an HTML entity, no value
        '[ -n "$password" ] && run\n',
        "password: Ab&\n",  # too short once the "&" is dropped
    ],
)
def test_look_alikes_are_not_passwords(text: str) -> None:
    assert [f for f in scan_text(text, Context.SOURCE) if f.rule == "password-assignment"] == []
