"""The committed schemas/ equal what the models generate; every registry entry has its model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.harness import cli

from toolkit.models.registry import SCHEMA_MODELS
from toolkit.models.schema_export import render_schema
from toolkit.workflow.schema_files import export, schemas_dir

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(SCHEMA_MODELS))
def test_committed_schema_matches_model(name: str) -> None:
    # Fails for a registry entry whose model module does not exist (yet): every format needs a model.
    text = render_schema(SCHEMA_MODELS[name])
    committed = ROOT / "schemas" / name
    assert committed.is_file(), f"schemas/{name} is not committed; run `workgroup schemas export`"
    assert committed.read_text(encoding="utf-8") == text, (
        f"schemas/{name} is stale; run `workgroup schemas export`"
    )


def test_schema_text_shape() -> None:
    text = render_schema(SCHEMA_MODELS["agent-lineage.schema.json"])
    assert text.endswith("}\n") and not text.endswith("\n\n")
    value = json.loads(text)
    assert json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n" == text
    assert value["additionalProperties"] is False and len(value["required"]) == 26


def test_export_writes_then_check_passes(tmp_path: Path) -> None:
    stale, _ = export(tmp_path, check=True)
    assert "agent-lineage.schema.json" in stale and not list(tmp_path.iterdir())  # check writes nothing
    export(tmp_path, check=False)
    assert (tmp_path / "agent-lineage.schema.json").is_file()
    stale, _ = export(tmp_path, check=True)
    assert stale == []
    (tmp_path / "config.schema.json").write_text("{}\n", encoding="utf-8")
    assert export(tmp_path, check=True)[0] == ["config.schema.json"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_cli_check_exit_codes(tmp_path: Path) -> None:
    result = cli("schemas", "export", "--check", "--out", str(tmp_path))
    assert result.exit_code == 1 and "differs: agent-lineage.schema.json" in result.stderr
    cli("schemas", "export", "--out", str(tmp_path))
    result = cli("schemas", "export", "--check", "--out", str(tmp_path))
    missing = [line for line in result.stderr.splitlines() if line.startswith("missing model")]
    assert result.exit_code == (1 if missing else 0)


def test_default_directory_is_the_shipped_one() -> None:
    assert schemas_dir().resolve() == (ROOT / "schemas").resolve()
