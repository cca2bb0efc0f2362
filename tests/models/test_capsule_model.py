"""The pydantic ContextCapsule (source of schemas/) and the runtime's stdlib validator agree."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from test_capsule_op import SCHEMA_BREAKS
from test_capsule_support import valid_capsule

from toolkit.models.capsule import ContextCapsule
from toolkit.runtime.capsule_rules import schema_problems


def model_accepts(value: Any) -> bool:
    try:
        ContextCapsule.model_validate(value)
    except ValidationError:
        return False
    return True


def test_the_reference_capsule_is_valid_for_both() -> None:
    assert model_accepts(valid_capsule()) and not schema_problems(valid_capsule())
    model = ContextCapsule.model_validate(valid_capsule())
    assert model.model_dump(by_alias=True) == valid_capsule()


@pytest.mark.parametrize("mutate", [m for _, m in SCHEMA_BREAKS], ids=[n for n, _ in SCHEMA_BREAKS])
def test_every_schema_break_is_refused_by_both(mutate: Any) -> None:
    capsule = valid_capsule()
    mutate(capsule)
    assert schema_problems(capsule)
    assert not model_accepts(capsule)


def test_optional_fields_are_optional_for_both() -> None:
    capsule = valid_capsule()
    del capsule["evidence"], capsule["artifact_refs"]
    assert model_accepts(capsule) and not schema_problems(capsule)


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.text(alphabet="ab/.-_ 1", max_size=8),
    st.lists(st.text(alphabet="abc", min_size=0, max_size=3), max_size=3),
    st.lists(
        st.fixed_dictionaries(
            {
                "path": st.text(alphabet="ab", max_size=3),
                "verify_ids": st.lists(st.text(alphabet="x", max_size=2), max_size=2),
            }
        ),
        max_size=2,
    ),
    st.lists(
        st.fixed_dictionaries(
            {"kind": st.sampled_from(["file", "log", "chat"]), "summary": st.text(alphabet="s", max_size=2)}
        ),
        max_size=2,
    ),
)


@settings(max_examples=120, deadline=None)
@given(field=st.sampled_from(sorted(valid_capsule())), value=_values)
def test_model_and_runtime_validator_agree(field: str, value: Any) -> None:
    capsule = valid_capsule()
    capsule[field] = value
    assert model_accepts(capsule) == (not schema_problems(capsule))
