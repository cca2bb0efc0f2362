"""Pure building blocks, no I/O.

Errors, canonical JSON, time, JavaScript value semantics, findings output.
"""

__all__ = [
    "canonical",
    "cm_usage_format",
    "display",
    "errors",
    "findings",
    "globs",
    "identifiers",
    "jscompat",
    "jsontypes",
    "owners_index",
    "ownership",
    "sarif",
    "strictjson",
    "timefmt",
]
