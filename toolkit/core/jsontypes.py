"""Type names for JSON that has entered but has not been checked yet (for annotations only)."""

JsonObject = dict[str, object]
"""A parsed JSON object whose fields have not been narrowed: read each one with a check."""

__all__ = ["JsonObject"]
