"""Stage 0 and workflow tools: profiles, capabilities, fan-out, inventory, skills, init, eval."""

__all__ = [
    "capabilities",
    "capability_routing",
    "ci",
    "delegation",
    "evaluate",
    "fanout",
    "hook_source",
    "indexing",
    "init",
    "inventory",
    "profile_config",
    "profiles",
    "schema_files",
    "skills",
    "skills_files",
]
