"""What the hot core modules load: every route loads ownership and owners_index, every hook display."""

from __future__ import annotations

import subprocess
import sys

import pytest

from toolkit.core.display import shown
from toolkit.core.ownership import fold, hidden_character

# what a child process imports is the subject: coverage must not add its own modules to it
pytestmark = pytest.mark.usefixtures("without_coverage")


def _loaded(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return out.split()


@pytest.mark.parametrize(
    "module", ["toolkit.core.ownership", "toolkit.core.display", "toolkit.core.owners_index"]
)
def test_ascii_paths_do_not_load_unicodedata_or_datetime(module: str) -> None:
    code = (
        f"import sys, {module}; from toolkit.core.ownership import fold; fold('src/App.py'); "
        "from toolkit.core.display import shown; shown('plain'); "
        "print('unicodedata' in sys.modules, 'datetime' in sys.modules)"
    )
    assert _loaded(code) == ["False", "False"]


def test_non_ascii_text_is_still_judged() -> None:
    # the check above can fail: non-ASCII text does load unicodedata, and the rules still hold
    assert _loaded(
        "import sys; from toolkit.core.ownership import fold; fold('Ｓrc'); print('unicodedata' in sys.modules)"
    ) == ["True"]
    assert fold("ＳＲＣ/Ａ") == "src/a"
    assert hidden_character("a\u202eb") is not None and hidden_character("héllo") is None
    assert shown("a\u2028b") == "a\\u2028b"
