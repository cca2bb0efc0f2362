"""pydantic v2 models: the single home of every file format and of ``schemas/``.

Each module is listed in ``toolkit.models.registry``; ``workgroup schemas export`` writes one JSON
Schema per entry. Nothing on the runtime path imports this package.
"""
