"""``workgroup capabilities``."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command(
        "capabilities", help="Which semantic adapter operations each provider really exposes (versioned)."
    )
    def capabilities(
        provider: str = typer.Option(None, "--provider", help="claude-code, codex, api or other."),
        route_facts: bool = typer.Option(
            False, "--route-facts", help="Print the router's *_supported facts."
        ),
        json_out: bool = typer.Option(False, "--json", help="Print the table as JSON on stdout."),
    ) -> None:
        from toolkit.commands._common import echo, emit_json
        from toolkit.core.errors import InvalidInput
        from toolkit.workflow import capabilities as caps

        try:
            if route_facts:
                if not provider:
                    raise InvalidInput("PROVIDER_REQUIRED", "--route-facts needs --provider")
                emit_json(caps.route_facts(provider))
                return
            data = caps.table(provider)
        except caps.UnknownProvider as exc:
            raise InvalidInput("UNKNOWN_PROVIDER", exc.message) from None
        if json_out:
            emit_json(data)
            return
        echo(f"provider capabilities (table {data['version']}); only 'native' is routed to")
        for name, entry in data["providers"].items():
            echo("")
            echo(f"{name}  ({entry['versions']})")
            for op, info in entry["operations"].items():
                echo(f"  {op:<20} {info['status']:<13} {info['via']}")
