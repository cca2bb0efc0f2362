"""Records named after the runtime noun they store: capsules, lineages, owners, promotions ..."""
