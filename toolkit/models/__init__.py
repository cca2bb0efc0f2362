"""pydantic v2 models: the single home of every file format and of ``schemas/``.

Each module is listed in ``toolkit.models.registry``; ``workgroup schemas export`` writes one JSON
Schema per entry. Nothing on the runtime path imports this package.
"""

__all__ = [
    "budget",
    "capsule",
    "cm_event",
    "config",
    "corpus",
    "deep_query",
    "lineage",
    "packet",
    "promotion",
    "registry",
    "route",
    "schema_export",
    "telemetry",
]
