"""Steps of ``workgroup demo``. Each module exposes ``run(demo: Demo) -> None`` and narrates itself."""

__all__ = ["STEPS"]

# Order in which the demo runs its steps.
STEPS: tuple[str, ...] = (
    "routing",
    "lineage",
    "capsules",
    "privacy",
    "boundary",
    "model_calls",
    "results",
    "promotion",
    "skills",
    "agent_logs",
)
