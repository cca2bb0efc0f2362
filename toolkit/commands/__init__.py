"""Typer command modules: each exposes ``register(app)`` and only converts options and calls the core."""
