"""Read and switch the profile in ``.workgroup/config.yml`` (one line edited, comments kept)."""

from __future__ import annotations

import re

from toolkit.core.errors import InvalidInput
from toolkit.core.jsontypes import JsonObject
from toolkit.core.timefmt import format_utc
from toolkit.infra import confinedwrite
from toolkit.infra.clock import now_utc
from toolkit.infra.config import parse_config_yaml, read_config_text
from toolkit.infra.git import Repo, discover
from toolkit.infra.store import append_jsonl, file_lock
from toolkit.workflow.profiles import (
    DEFAULT_PROFILE,
    PROFILE_NAMES,
    ProfileChange,
    ProfileError,
    change_record,
    effective_settings,
)

_PROFILE_LINE = re.compile(r"^(?P<indent>[ \t]+)profile:[ \t]*(?P<value>[^#\s]*)(?P<rest>.*)$", re.MULTILINE)


def _repo() -> Repo:

    return discover()


def current_block(*, required: bool) -> JsonObject:
    """The ``context_efficiency`` block of the config (empty when absent and not required)."""

    repo = _repo()
    text = read_config_text(repo.layout.config)
    if text is None:
        if required:
            raise InvalidInput("CONFIG_MISSING", "no .workgroup/config.yml: run `workgroup init` first")
        return {}
    loaded = parse_config_yaml(text)
    if loaded is not None and not isinstance(loaded, dict):  # a list or a scalar is no config
        raise InvalidInput("CONFIG_INVALID", ".workgroup/config.yml is not a mapping")
    block = loaded.get("context_efficiency") if loaded else None
    if block is not None and not isinstance(block, dict):  # present but unreadable: not the default
        raise InvalidInput("CONFIG_INVALID", ".workgroup/config.yml: context_efficiency is not a mapping")
    if block is None:
        if required:
            raise InvalidInput("CONFIG_INVALID", ".workgroup/config.yml has no context_efficiency block")
        return {}
    return block


def set_profile(name: str, *, reason: str | None) -> ProfileChange:
    if name not in PROFILE_NAMES:
        raise InvalidInput(
            "INVALID_PROFILE", "unknown profile (choose quality, balanced, economy or latency)"
        )
    if reason is not None and (len(reason) > 200 or "\n" in reason):
        raise InvalidInput("INVALID_REASON", "the reason is one line of at most 200 characters")
    repo = _repo()
    layout = repo.layout
    with file_lock(layout.lock("config")):
        block = current_block(required=True)
        given = block.get("profile", DEFAULT_PROFILE)
        old = given if isinstance(given, str) and given in PROFILE_NAMES else DEFAULT_PROFILE
        try:
            effective_settings({**block, "profile": name})
        except ProfileError as exc:
            raise InvalidInput("INVALID_PROFILE", exc.message) from None

        text = read_config_text(layout.config) or ""
        match = _PROFILE_LINE.search(text)
        if match:
            text = text[: match.start("value")] + name + text[match.end("value") :]
        else:
            text = re.sub(
                r"^context_efficiency:[ \t]*\n",
                lambda m: m.group(0) + f"  profile: {name}\n",
                text,
                count=1,
                flags=re.MULTILINE,
            )
        record = change_record(old, name, at=format_utc(now_utc()), reason=reason)
        if old != name:
            confinedwrite.atomic_write(layout.workdir, layout.config, text, what=".workgroup/config.yml")
            with file_lock(layout.lock("profile-changes")):
                append_jsonl(layout.local / "profile-changes.jsonl", record)
    return record
