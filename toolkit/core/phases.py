"""The work phases, declared once (standard library, nothing else imported).

Capsules (``toolkit.core.capsule_schema``) and lineages name them; ``toolkit.runtime.vocabulary``
re-exports them with the other closed vocabularies. A module of its own so that the route, which
loads the vocabulary on every call, does not load the capsule schema with it.
"""

from __future__ import annotations

PHASES: tuple[str, ...] = ("1A", "1B", "2A", "2B", "3")
