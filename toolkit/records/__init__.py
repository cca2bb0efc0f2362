"""Records named after the runtime noun they store: capsules, lineages, owners, promotions ..."""

__all__ = [
    "capsules",
    "lineages",
    "owners",
    "probes",
    "promotions",
    "results",
    "rollouts",
    "vault",
    "verify",
    "verify_cache",
]
