"""``workgroup measure sign|keygen|digest``: signed measurement envelopes v2 and their keys.

Private keys are read from files, never taken from arguments or the environment.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from toolkit.cli import command_group


def register(app: typer.Typer) -> None:
    group = command_group(
        help="Sign measured paired results (measurement envelope v2).", no_args_is_help=True
    )

    @group.command("sign")
    def sign(
        pairs: Annotated[Path, typer.Option("--pairs", help="Paired results (JSON).")],
        key: Annotated[Path, typer.Option("--key", help="Ed25519 private key file (PKCS8 PEM).")],
        candidate_version: Annotated[str, typer.Option("--candidate-version", help="Version measured.")],
        corpus_version: Annotated[str, typer.Option("--corpus-version", help="Corpus version measured.")],
        run_id: Annotated[
            str | None, typer.Option("--run-id", help="measurement-<hex16..64>; default: a fresh random id.")
        ] = None,
        key_id: Annotated[
            str | None, typer.Option("--key-id", help="Signer key id; default: the key file's name.")
        ] = None,
        runtime_digest: Annotated[
            str | None, typer.Option("--runtime-digest", help="Default: the digest of the installed runtime.")
        ] = None,
        measured_at: Annotated[
            str | None, typer.Option("--measured-at", help="RFC 3339; default: now.")
        ] = None,
        out: Annotated[
            Path | None, typer.Option("--out", help="Write here (atomically) instead of stdout.")
        ] = None,
    ) -> None:
        """Write a signed knowzcode.measurement-envelope/v2 for PAIRS."""
        from toolkit.commands._common import moment_or_now, say
        from toolkit.infra.store import atomic_write
        from toolkit.records.promotions import new_run_id, read_pairs_file, read_private_key, sign_pairs
        from toolkit.records.promotions import runtime_digest as installed_digest

        pair_list, synthetic = read_pairs_file(pairs)
        key_bytes, exposed = read_private_key(key)
        if exposed:
            say("warning: the private key file is readable by other users (chmod 600 it)")
        when = moment_or_now(measured_at, "--measured-at")
        envelope = sign_pairs(
            pairs=pair_list,
            synthetic=synthetic,
            private_key_pem=key_bytes,
            signer_key_id=key_id or key.stem,
            run_id=run_id or new_run_id(),
            candidate_version=candidate_version,
            corpus_version=corpus_version,
            runtime_digest_value=runtime_digest or installed_digest(),
            measured_at=when,
        )
        text = json.dumps(envelope, indent=2) + "\n"
        if out is None:
            typer.echo(text, nl=False)
        else:
            atomic_write(out, text)
            say(f"wrote {out}")
        if not envelope["promotion_authorized"]:
            say("signed with promotion_authorized false: the pairs are synthetic or not all measured")

    @group.command("keygen")
    def keygen(
        directory: Annotated[Path, typer.Argument(help="Directory for <key id>.key and <key id>.pem.")],
        key_id: Annotated[
            str, typer.Option("--key-id", help="measurement-key-[a-z0-9._-]{1,64}")
        ] = "measurement-key-local",
    ) -> None:
        """Create an Ed25519 key pair (private key mode 0600); never overwrites."""
        from toolkit.commands._common import say
        from toolkit.records.promotions import generate_keypair

        private, public = generate_keypair(directory, key_id)
        say(f"private key: {private}")
        say(f"public key:  {public} (copy it into the trusted keys directory)")

    @group.command("digest")
    def digest(
        pairs: Annotated[
            Path | None, typer.Option("--pairs", help="Also print the corpus digest of a file.")
        ] = None,
    ) -> None:
        """Print the installed runtime digest (and the corpus digest of PAIRS)."""
        from toolkit.records.promotions import read_pairs_file, runtime_digest
        from toolkit.runtime.envelope import corpus_digest

        typer.echo(f"runtime_digest {runtime_digest()}")
        if pairs is not None:
            pair_list, _ = read_pairs_file(pairs)
            typer.echo(f"corpus_digest {corpus_digest(pair_list)}")

    app.add_typer(group, name="measure")
