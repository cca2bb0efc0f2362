"""Locate shipped data (templates/, corpus/, schemas/).

In a wheel they are package data inside ``toolkit`` (mapped in pyproject.toml); in a source
checkout (editable install) they sit beside the package at the repository root.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent  # the toolkit package (this file is toolkit/infra/)


def data_dir(name: str) -> Path:
    installed = _PKG / name
    if installed.is_dir():
        return installed
    return _PKG.parent / name


def template_text(name: str) -> str:
    return (data_dir("templates") / name).read_text(encoding="utf-8")
