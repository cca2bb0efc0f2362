"""Pure building blocks, no I/O.

Errors, canonical JSON, time, JavaScript value semantics, findings output.
"""

__all__ = [
    "canonical",
    "display",
    "errors",
    "findings",
    "globs",
    "identifiers",
    "jscompat",
    "owners_index",
    "ownership",
    "sarif",
    "strictjson",
    "timefmt",
]
