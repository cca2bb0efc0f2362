"""pre-commit hook entry points, installed as ``toolkit.hooks``: tiny modules with ``main(argv) -> int``."""
