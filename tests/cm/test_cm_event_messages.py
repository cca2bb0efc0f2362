"""cm-log-event refusals of --data-json field names say which field, which signal and which rule.

An unknown field of a model event is named with the list of accepted fields (and the closest
accepted name); "sensitive" is said only of a name that holds a credential word; a name that only
counts tokens is never called a credential inside model_usage; a name that could itself be a
secret is not echoed.
"""

from __future__ import annotations

import pytest
from test_cm_events import CLAIM, SECRET_VALUE, USAGE, home, write

from toolkit.core.cm_usage_format import FIELDS_OF


def _refused(data: object, **kwargs: object) -> str:
    code, out, err = write(data, **kwargs)  # type: ignore[arg-type]
    assert code == 2 and out is None, err
    assert not (home() / "runs").exists()  # nothing written
    return err


def test_an_unknown_token_count_is_named_with_the_accepted_fields() -> None:
    err = _refused({**USAGE, "cache_read_input_tokens": 3})
    assert "sensitive" not in err and "forbidden" not in err
    assert "model_usage contains unsupported fields: 'cache_read_input_tokens'" in err
    assert "the accepted fields are " + ", ".join(sorted(FIELDS_OF["model_usage"])) in err
    assert "did you mean 'cache_read_tokens' for 'cache_read_input_tokens'?" in err


def test_a_claim_names_its_unknown_fields_too() -> None:
    err = _refused({**CLAIM, "usage_state": "observed", "zeta": 1}, event="model_call", phase="claimed")
    assert "model_call contains unsupported fields: 'usage_state', 'zeta'" in err
    assert "the accepted fields are adapter, call_id, purpose, requested_model, role, source, stage" in err


@pytest.mark.parametrize(
    ("key", "word"),
    [
        ("access_token", "token"),
        ("api_key", "api_key"),
        ("Authorization", "authorization"),
        ("db_password", "password"),
    ],
)
def test_sensitive_is_said_of_credential_names_with_the_word(key: str, word: str) -> None:
    err = _refused({**USAGE, key: SECRET_VALUE})
    assert f"sensitive log field {key!r} is refused: its name contains {word!r}" in err
    assert "credentials are never logged" in err and SECRET_VALUE not in err


def test_outside_model_usage_a_token_count_name_is_refused_with_its_rule() -> None:
    err = _refused({"input_tokens": 5}, event="note", phase=None)
    assert "field 'input_tokens' is refused: outside model_usage a name containing 'token'" in err
    assert "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens" in err
    nested = _refused({"outer": [{"Authorization": SECRET_VALUE}]}, event="note", phase=None)
    assert "sensitive log field 'Authorization' is refused: its name contains 'authorization'" in nested


def test_a_field_name_that_is_itself_private_is_not_echoed() -> None:
    secret_key = "ghp_R8x2Kq9Lm4Tz7Vb1Nc6Wd3Yf5Hg0Js8Pa2Qe"  # a token the privacy engine knows
    err = _refused({**USAGE, secret_key: 1})
    assert secret_key not in err and "(a field whose name is withheld)" in err
    spaced = _refused({**USAGE, "my field\twith tab": 1})
    assert "with tab" not in spaced and "(a field whose name is withheld)" in spaced
