"""Profiles: the documented table, precedence, ceilings, and a profile change recorded as its own event."""

from __future__ import annotations

import json

import pytest
from support.harness import run_workgroup

from toolkit.workflow.profiles import (
    PROFILE_NAMES,
    PROFILES,
    ProfileError,
    change_record,
    effective_settings,
    render_table,
)

CONFIG = """# team settings
context_efficiency:
  enabled: true
  rollout: off
  profile: balanced # quality|balanced|economy|latency
  max_active_inherited: 2
  max_nesting_depth: 2
  telemetry: local
"""


def test_every_profile_documents_every_setting() -> None:
    keys = set(PROFILES["balanced"])
    for name in PROFILE_NAMES:
        assert set(PROFILES[name]) == keys
    table = render_table()
    for name in PROFILE_NAMES:
        assert name in table.splitlines()[0]
    for key in keys:
        assert f"`{key}`" in table


def test_precedence_request_over_config_over_profile() -> None:
    assert effective_settings({"profile": "economy"})["max_parallel_workers"] == 2
    assert effective_settings({"profile": "economy", "max_parallel_workers": 3})["max_parallel_workers"] == 3
    merged = effective_settings(
        {"profile": "economy", "max_parallel_workers": 3}, {"max_parallel_workers": 5}
    )
    assert merged["max_parallel_workers"] == 5


def test_seed_limits_in_config_are_ceilings_profiles_only_tighten() -> None:
    # the seed block always carries max_active_inherited: 2; economy still tightens to 1
    assert effective_settings({"profile": "economy", "max_active_inherited": 2})["max_active_inherited"] == 1
    assert effective_settings({"profile": "quality", "max_active_inherited": 1})["max_active_inherited"] == 1
    with pytest.raises(ProfileError):
        effective_settings({"profile": "quality"}, {"max_active_inherited": 3})
    with pytest.raises(ProfileError):
        effective_settings({"profile": "nope"})


def test_change_record_lists_moved_settings() -> None:
    rec = change_record("balanced", "economy", at="2026-12-02T00:00:00Z", reason="cost review")
    assert rec["schema"] == "workgroup.profile-change/v1"
    assert rec["changed_settings"]["max_parallel_workers"] == [4, 2]
    assert "max_nesting_depth" in rec["changed_settings"]
    assert "inherit_min_affinity" not in rec["changed_settings"]  # high in both


def test_profile_set_edits_one_line_and_records_its_own_event(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.write(".workgroup/config.yml", CONFIG)
    git_repo.commit("config")
    proc = run_workgroup("profile", "set", "economy", "--reason", "cost review", "--json")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    text = (git_repo.path / ".workgroup/config.yml").read_text()
    assert "  profile: economy # quality|balanced|economy|latency\n" in text
    assert text.replace("economy #", "balanced #") == CONFIG  # nothing else changed
    log = git_repo.raw.path + "workgroup/profile-changes.jsonl"
    lines = [json.loads(x) for x in open(log, encoding="utf-8").read().splitlines()]
    assert lines == [record] and record["from_profile"] == "balanced" and record["to_profile"] == "economy"
    # routing experiments live elsewhere: the telemetry log got no profile record
    assert not (git_repo.path / ".git/workgroup/telemetry.jsonl").exists()
    shown = json.loads(run_workgroup("profile", "show", "--json").stdout)
    assert shown["profile"] == "economy" and shown["max_active_inherited"] == 1
    same = run_workgroup("profile", "set", "economy")
    assert same.returncode == 0 and len(open(log, encoding="utf-8").read().splitlines()) == 1


def test_profile_set_refusals_change_nothing(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("empty")
    missing = run_workgroup("profile", "set", "economy")
    assert missing.returncode == 2 and b"CONFIG_MISSING" in missing.stderr
    git_repo.write(".workgroup/config.yml", CONFIG)
    bad = run_workgroup("profile", "set", "turbo")
    assert bad.returncode == 2 and b"INVALID_PROFILE" in bad.stderr
    assert (git_repo.path / ".workgroup/config.yml").read_text() == CONFIG


def test_profile_settings_declaration_matches_every_profile_and_the_docs() -> None:
    """The ProfileSettings TypedDict names exactly the settings of each profile and of SETTING_DOCS,
    with each value of the declared type (bool is not taken for int)."""
    from typing import get_type_hints

    from toolkit.workflow.profiles import PROFILES, SETTING_DOCS, ProfileSettings

    declared = get_type_hints(ProfileSettings)
    assert list(declared) == list(SETTING_DOCS)
    for name, settings in PROFILES.items():
        assert list(settings) == list(declared), name
        for key, value in settings.items():
            assert type(value) is declared[key], (name, key)
