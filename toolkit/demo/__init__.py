"""`workgroup demo`: the runner and its narrated steps."""

__all__ = [
    "runner",
    "steps",
]
