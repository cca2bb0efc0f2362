"""Config: seed defaults, YAML on/off words, coded refusal without echo, the shipped template."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from toolkit.core.errors import InvalidInput
from toolkit.infra.config import default_config, fill_absent, load_config, rollout_defaults, routing_defaults
from toolkit.infra.resources import template_text
from toolkit.infra.store import Layout

SEED_DEFAULTS = {
    "enabled": True,
    "rollout": "off",
    "profile": "balanced",
    "max_active_inherited": 2,
    "max_nesting_depth": 2,
    "warm_lease_minutes": 20,
    "mcp_health_ttl_minutes": 15,
    "disk_handoff_threshold": "material",
    "telemetry": "local",
    "canary_percent": 10,
}


def write(root: Path, text: str | bytes) -> Path:
    path = root / ".workgroup" / "config.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return root


def test_missing_file_gives_seed_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config["context_efficiency"] == SEED_DEFAULTS
    assert config["workgroup"] == {"artifact_boundary": "knowzcode/artifacts"}


def test_template_is_valid_and_equals_the_defaults(tmp_path: Path) -> None:
    write(tmp_path, template_text("config.yml"))
    assert load_config(tmp_path) == default_config()


def test_template_documents_every_key() -> None:
    text = template_text("config.yml")
    for key in [*SEED_DEFAULTS, "artifact_boundary"]:
        assert f"  {key}: " in text


def test_layout_argument(tmp_path: Path) -> None:
    write(tmp_path, "context_efficiency:\n  rollout: shadow\n")
    assert load_config(Layout(tmp_path, tmp_path / ".git"))["context_efficiency"]["rollout"] == "shadow"


@pytest.mark.parametrize(
    "word,expected", [("off", "off"), ("on", "on"), ("'off'", "off"), ("canary", "canary")]
)
def test_yaml_boolean_words_read_back_as_stages(tmp_path: Path, word: str, expected: str) -> None:
    write(tmp_path, f"context_efficiency:\n  rollout: {word}\n  telemetry: off\n")
    block = load_config(tmp_path)["context_efficiency"]
    assert block["rollout"] == expected and block["telemetry"] == "off"


def test_partial_block_keeps_other_defaults(tmp_path: Path) -> None:
    write(tmp_path, "context_efficiency:\n  enabled: false\n  canary_percent: 25\n")
    block = load_config(tmp_path)["context_efficiency"]
    assert block["enabled"] is False and block["canary_percent"] == 25 and block["profile"] == "balanced"


@pytest.mark.parametrize(
    "text",
    [
        "context_efficiency:\n  rollout: sideways-SECRETCANARY\n",
        "context_efficiency:\n  SECRETCANARY: 1\n",
        "SECRETCANARY: true\n",
        "context_efficiency:\n  max_nesting_depth: '2'\n",
        "context_efficiency:\n  max_nesting_depth: 0\n",
        "context_efficiency:\n  canary_percent: 101\n",
        "context_efficiency:\n  canary_percent: yes\n",
        "context_efficiency:\n  enabled: 'SECRETCANARY'\n",
        "context_efficiency: [SECRETCANARY]\n",
        "workgroup:\n  artifact_boundary: ../SECRETCANARY\n",
        "workgroup:\n  artifact_boundary: /abs/SECRETCANARY\n",
        "workgroup:\n  artifact_boundary: .git/SECRETCANARY\n",
        "- SECRETCANARY\n",
        "context_efficiency: {rollout: [SECRETCANARY\n",
        "a: &x [*x]\nSECRETCANARY: !!python/object:os.system x\n",
    ],
)
def test_invalid_config_is_coded_and_never_echoed(tmp_path: Path, text: str) -> None:
    write(tmp_path, text)
    with pytest.raises(InvalidInput) as info:
        load_config(tmp_path)
    assert info.value.code == "CONFIG_INVALID" and info.value.exit_code == 2
    assert "SECRETCANARY" not in info.value.message and "sideways" not in info.value.message


def test_unknown_key_message_names_the_section(tmp_path: Path) -> None:
    write(tmp_path, "context_efficiency:\n  rolout: on\n")
    with pytest.raises(InvalidInput) as info:
        load_config(tmp_path)
    assert info.value.message.endswith("unknown key in context_efficiency")


@pytest.mark.parametrize("raw", [b"\xff\xfe", b"x: " + b"a" * 70_000])
def test_unreadable_or_huge_file(tmp_path: Path, raw: bytes) -> None:
    write(tmp_path, raw)
    with pytest.raises(InvalidInput):
        load_config(tmp_path)


def test_directory_instead_of_file(tmp_path: Path) -> None:
    (tmp_path / ".workgroup" / "config.yml").mkdir(parents=True)
    with pytest.raises(InvalidInput):
        load_config(tmp_path)


def test_request_values_win_config_fills_absent() -> None:
    config = default_config()
    facts = fill_absent({"max_nesting_depth": 5}, routing_defaults(config))
    assert facts == {"max_nesting_depth": 5, "max_active_inherited": 2}
    assert fill_absent({"rollout": "on"}, rollout_defaults(config)) == {"rollout": "on", "canary_percent": 10}


def test_model_schema_matches_defaults() -> None:
    from toolkit.models.config import WorkgroupConfig

    assert WorkgroupConfig().model_dump() == default_config()


# Live OTLP mode is detected on the runtime path without YAML or pydantic (toolkit.infra.livespool);
# each row is a config text and whether the validated config selects telemetry: otlp.
@pytest.mark.parametrize(
    "text",
    [
        "context_efficiency:\n  telemetry: otlp\n",  # the plain key
        "context_efficiency:\n  telemetry: 'otlp'\n",  # quoted
        'context_efficiency:\n  rollout: off\n  telemetry: "otlp"  # live export\n',  # comment after
        "context_efficiency:\n  telemetry: local\n",  # another mode
        "context_efficiency:\n  # telemetry: otlp\n  telemetry: local\n",  # commented out
        "context_efficiency:\n  enabled: true\n",  # absent: the default (local)
        "",  # no file content at all
    ],
)
def test_otlp_mode_and_its_lean_detection_agree(tmp_path: Path, text: str) -> None:
    from toolkit.infra.livespool import config_says_otlp

    write(tmp_path, text)
    validated = load_config(tmp_path)["context_efficiency"]["telemetry"] == "otlp"
    assert config_says_otlp(text) is validated


def test_otlp_mode_is_in_the_committed_schema() -> None:
    import json

    committed = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.json"
    schema = json.loads(committed.read_text(encoding="utf-8"))
    assert "otlp" in json.dumps(schema)


def test_loaded_config_shapes_follow_the_models_fields_in_order(tmp_path: Path) -> None:
    """``load_config``'s declared shape (config_shapes) has the models' keys in their order, block by
    block, and so has what it returns for a full config file."""
    from pydantic import BaseModel
    from support.harness import declared_keys

    from toolkit.infra.config_shapes import ContextEfficiencyBlock, LoadedConfig, PrivacyBlock, ToolkitBlock
    from toolkit.models.config import ContextEfficiency, PrivacySettings, ToolkitSettings, WorkgroupConfig

    write(
        tmp_path,
        "context_efficiency:\n  telemetry: otlp\n  enabled: false\n  canary_percent: 5\n"
        "privacy:\n  artifact_paths: ['notes/**']\nworkgroup:\n  artifact_boundary: out\n",
    )
    loaded = load_config(tmp_path)
    pairs: list[tuple[type, type[BaseModel], Mapping[str, object]]] = [
        (LoadedConfig, WorkgroupConfig, loaded),
        (ContextEfficiencyBlock, ContextEfficiency, loaded["context_efficiency"]),
        (ToolkitBlock, ToolkitSettings, loaded["workgroup"]),
        (PrivacyBlock, PrivacySettings, loaded["privacy"]),
    ]
    for shape, model, value in pairs:
        assert declared_keys(shape) == list(model.model_fields) == list(value), shape.__name__
    assert list(routing_defaults(loaded)) == ["max_active_inherited", "max_nesting_depth"]
    assert list(rollout_defaults(loaded)) == ["rollout", "canary_percent"]
