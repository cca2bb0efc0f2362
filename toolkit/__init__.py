"""workgroup toolkit: git-integrated decision runtime, privacy gate and CM workflow tools."""

__version__ = "0.3.1"

__all__ = ["__version__"]
