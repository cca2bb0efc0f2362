"""Pure decision functions of the KnowzCode-compatible runtime and its stdin/stdout protocol.

Everything under ``toolkit.runtime`` must stay standard-library only: ``workgroup runtime``
runs on every delegation and must not pay for typer, pydantic or pygit2 at start-up.
"""
