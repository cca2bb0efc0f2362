"""The refusal of a CM event write (``cm-log-event`` and the adapter's writes)."""

from __future__ import annotations

from toolkit.core.errors import ToolkitError


class EventError(ToolkitError):
    """A refused write. ``exit_code`` is 2 (input) or 1 (lock / authoritative write)."""

    def __init__(self, message: str, exit_code: int = 2, code: str = "INVALID_EVENT") -> None:
        super().__init__(code, message, exit_code=exit_code)
