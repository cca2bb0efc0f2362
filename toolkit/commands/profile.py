"""``workgroup profile list|show|set``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from toolkit.cli import command_group

if TYPE_CHECKING:
    from toolkit.workflow.profiles import EffectiveSettings


def register(app: typer.Typer) -> None:
    profile = command_group(
        help="Execution profiles (quality, balanced, economy, latency).", no_args_is_help=True
    )

    @profile.command("list", help="Print the documented table of profiles and the settings they tune.")
    def list_cmd(json_out: bool = typer.Option(False, "--json", help="Print it as JSON on stdout.")) -> None:
        from toolkit.commands._common import echo, emit_json
        from toolkit.workflow.profiles import PROFILES, SETTING_DOCS, render_table

        if json_out:
            emit_json({"profiles": PROFILES, "settings": SETTING_DOCS})
        else:
            for line in render_table().split("\n"):  # shipped text, one line at a time
                echo(line)

    @profile.command("show", help="The effective settings: request > config > profile > defaults.")
    def show_cmd(
        name: str = typer.Argument(
            None, metavar="PROFILE", help="A profile to show instead of the configured one."
        ),
        json_out: bool = typer.Option(False, "--json", help="Print it as JSON on stdout."),
    ) -> None:
        from toolkit.commands._common import echo, emit_json
        from toolkit.workflow.profile_config import current_block
        from toolkit.workflow.profiles import effective_settings

        block = current_block(required=False)
        if name:
            block = {**block, "profile": name}
        settings = _checked(lambda: effective_settings(block))
        if json_out:
            emit_json(settings)
        else:
            for key, value in settings.items():
                echo(f"{key}: {value}")  # values come from .workgroup/config.yml

    @profile.command("set", help="Switch the profile in .workgroup/config.yml and record the change.")
    def set_cmd(
        name: str = typer.Argument(..., metavar="PROFILE", help="quality, balanced, economy or latency."),
        reason: str = typer.Option(None, "--reason", metavar="TEXT", help="Why, recorded with the change."),
        json_out: bool = typer.Option(False, "--json", help="Print it as JSON on stdout."),
    ) -> None:
        from toolkit.commands._common import emit_json, say
        from toolkit.workflow.profile_config import set_profile

        record = set_profile(name, reason=reason)
        if json_out:
            emit_json(record)
        else:
            changed = (
                ", ".join(f"{k} {v[0]} -> {v[1]}" for k, v in record["changed_settings"].items())
                or "no settings"
            )
            say(f"profile {record['from_profile']} -> {record['to_profile']}: {changed}")

    app.add_typer(profile, name="profile")


def _checked(fn: Callable[[], EffectiveSettings]) -> EffectiveSettings:
    from toolkit.core.errors import InvalidInput
    from toolkit.workflow.profiles import ProfileError

    try:
        return fn()
    except ProfileError as exc:
        raise InvalidInput("INVALID_PROFILE", exc.message) from None
