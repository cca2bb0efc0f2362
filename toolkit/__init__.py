"""workgroup toolkit: git-integrated decision runtime, privacy gate and CM workflow tools."""

__version__ = "0.4.0"

__all__ = ["__version__"]
