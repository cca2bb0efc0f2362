"""cm package."""
