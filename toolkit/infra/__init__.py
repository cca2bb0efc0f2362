"""The only readers of disk, git and the environment.

git, store, local state, config, shipped resources, repository-relative paths.
"""

__all__ = [
    "appendlog",
    "argparser",
    "boundedio",
    "ci",
    "clock",
    "config",
    "confined",
    "confinedwrite",
    "forkmap",
    "git",
    "gitcli",
    "gitlocation",
    "ledger",
    "livespool",
    "output",
    "paths",
    "resources",
    "store",
    "telemetrylog",
]
