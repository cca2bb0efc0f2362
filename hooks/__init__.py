"""pre-commit hook entry points, installed as ``toolkit.hooks``: tiny modules with ``main(argv) -> int``."""

__all__ = [
    "docs_claims",
    "privacy",
    "privacy_all",
    "privacy_msg",
    "skills",
    "verify",
]
