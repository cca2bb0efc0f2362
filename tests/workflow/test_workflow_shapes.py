"""Issue #25: the answers and rows the workflow modules build are TypedDicts; these tests hold what
is returned and printed to the declared keys, in the declared order."""

from __future__ import annotations

import json

from support.harness import GitRepo, cli, declared_keys


def test_agent_merge_answers_the_declared_rows(git_repo: GitRepo) -> None:
    """``init --agent --json``: an AgentAnswer (Claude Code's optional keys, or Codex's note) with
    AddedHook rows, then the command's own ``dry_run``."""
    from toolkit.workflow.agent_settings import AddedHook, AgentAnswer

    claude_keys = [k for k in declared_keys(AgentAnswer) if k != "note"]
    codex_keys = [k for k in declared_keys(AgentAnswer) if k not in ("status_line", "also_in_local_settings")]
    code, out, err = cli("init", "--agent", "claude", "--json")
    assert code == 0, err
    claude = json.loads(out)
    assert list(claude) == [*claude_keys, "dry_run"]
    assert claude["added"] and all(list(row) == declared_keys(AddedHook) for row in claude["added"])
    code, out, err = cli("init", "--agent", "codex", "--dry-run", "--json")
    assert code == 0, err
    codex = json.loads(out)
    assert list(codex) == [*codex_keys, "dry_run"]
    assert codex["added"] and all(list(row) == declared_keys(AddedHook) for row in codex["added"])


def test_scenario_row_declares_the_scenario_model_field_for_field() -> None:
    """ScenarioRow (what load_scenarios returns) names exactly the model's fields (by their JSON
    names) and its parts those of the model's parts; every shipped scenario has exactly those keys."""
    from pydantic import BaseModel

    from toolkit.infra.resources import data_dir
    from toolkit.models.corpus import Scenario, Spec, VirtualFile, VirtualRepository
    from toolkit.workflow.evaluate import (
        ScenarioFile,
        ScenarioRepository,
        ScenarioRow,
        ScenarioSpec,
        load_scenarios,
    )

    def fields(model: type[BaseModel]) -> list[str]:
        return [info.alias or name for name, info in model.model_fields.items()]

    assert fields(Scenario) == declared_keys(ScenarioRow)
    assert fields(VirtualRepository) == declared_keys(ScenarioRepository)
    assert fields(VirtualFile) == declared_keys(ScenarioFile)
    assert fields(Spec) == declared_keys(ScenarioSpec)
    scenarios = load_scenarios(data_dir("corpus"))
    assert scenarios and all(sorted(s) == sorted(declared_keys(ScenarioRow)) for s in scenarios)


def test_eval_json_prints_the_declared_answer() -> None:
    from toolkit.workflow.evaluate import EvalAnswer

    code, out, _ = cli("eval", "--json")
    assert code == 0
    assert list(json.loads(out)) == declared_keys(EvalAnswer)


def test_fanout_finding_rows_and_parsed_workers() -> None:
    """``FanoutFinding.as_dict`` is a FindingRow equal to the dataclass's fields; the plan's workers
    are parsed once into their role and scope (None when absent), the worker kept as given."""
    from dataclasses import asdict

    from toolkit.workflow.fanout import FindingRow, _read_plan, check_plan

    plan = {
        "stage": "0",
        "workers": [
            {"role": "analyst"},
            {"role": "discovery", "scope": "src/a", "read_only": True},
            {"role": "discovery", "scope": "src/a/b"},
        ],
    }
    _, findings = check_plan(plan)
    assert findings
    for finding in findings:
        row = finding.as_dict()
        assert list(row) == declared_keys(FindingRow) and row == asdict(finding)
    facts = _read_plan(plan, None)
    assert [(w.role, w.scope) for w in facts.workers] == [
        ("analyst", None),
        ("discovery", "src/a"),
        ("discovery", "src/a/b"),
    ]
    assert [w.row for w in facts.workers] == plan["workers"]
    assert "DISCOVERY_SCOPE_OVERLAP" in [f.rule for f in findings]


def test_inventory_document_is_the_declared_record() -> None:
    """The built document and the one parsed back from the cached bytes are InventoryDocuments:
    digest first, then InventoryBody's keys; FileRow and Totals rows in their declared order."""
    from toolkit.workflow.inventory import (
        FileRow,
        InventoryBody,
        InventoryDocument,
        Totals,
        build,
        build_document,
        load_cached,
    )

    rows = [("src/app.py", "a" * 40, 0o100644, 12), ("link", "b" * 40, 0o120000, 3)]
    assert list(build_document("tree", "k", rows)) == declared_keys(InventoryBody)
    built = build("tree", "k", rows)
    assert declared_keys(InventoryDocument) == ["digest", *declared_keys(InventoryBody)]
    assert list(built.document) == declared_keys(InventoryDocument)
    assert list(built.document["totals"]) == declared_keys(Totals)
    assert [list(row) for row in built.document["files"]] == [declared_keys(FileRow)] * 2
    cached = load_cached(built.to_bytes(), "k")
    assert cached is not None and cached.document == built.document


def test_repo_entry_is_the_declared_record() -> None:
    """``HookForm.entry`` builds a RepoEntry: repo, rev, hooks (remote) or repo, hooks (local);
    every published hook's definition is read from the shipped file with a string entry."""
    from toolkit.workflow.hook_source import hook_definitions
    from toolkit.workflow.init import HOOK_IDS, HookForm, RepoEntry, render_entry
    from toolkit.workflow.init import Layout as Indent

    remote = HookForm("remote", "https://example.invalid/toolkit", "v1.0.0").entry(
        list(HOOK_IDS), "python3.11"
    )
    assert list(remote) == declared_keys(RepoEntry)
    assert all(list(hook) == ["id", "language_version"] for hook in remote["hooks"])
    local = HookForm("local", None, "v1.0.0").entry(list(HOOK_IDS))
    assert list(local) == [k for k in declared_keys(RepoEntry) if k != "rev"]
    assert [hook["id"] for hook in local["hooks"]] == list(HOOK_IDS)
    assert all(isinstance(spec["entry"], str) for spec in hook_definitions().values())
    text = render_entry(remote, Indent())
    assert "- repo: https://example.invalid/toolkit\n" in text and "  rev: v1.0.0\n" in text


def test_lint_finding_row_is_the_declared_record() -> None:
    """``LintFinding.as_dict`` is a LintRow equal to the dataclass's fields, for real findings."""
    from dataclasses import asdict

    from toolkit.workflow.skills import LintConfig, LintRow, lint

    findings = lint({"skills/demo/SKILL.md": "# no frontmatter\n"}, config=LintConfig())
    assert findings
    for finding in findings:
        row = finding.as_dict()
        assert list(row) == declared_keys(LintRow) and row == asdict(finding)
        assert json.dumps(row) == json.dumps(asdict(finding))


def test_capability_table_is_the_declared_record() -> None:
    """``capabilities.table`` (``capabilities --json``) is a CapabilityTable of ProviderRows of
    OperationRows, keys in the declared order, one row per provider and operation."""
    from toolkit.workflow import capabilities as caps

    table = caps.table()
    assert list(table) == declared_keys(caps.CapabilityTable)
    assert list(table["providers"]) == list(caps.PROVIDERS)
    for row in table["providers"].values():
        assert list(row) == declared_keys(caps.ProviderRow)
        assert list(row["operations"]) == list(caps.OPERATIONS)
        assert all(list(op) == declared_keys(caps.OperationRow) for op in row["operations"].values())


def test_profile_set_reads_an_unknown_profile_as_the_default(git_repo: GitRepo) -> None:
    """A config profile that is not a known name (here a list) is read as the default profile when
    the change is recorded, and the block comes back as written."""
    from toolkit.workflow.profile_config import current_block, set_profile

    config = git_repo.path / ".workgroup" / "config.yml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("context_efficiency:\n  profile: [odd]\n", encoding="utf-8")
    assert current_block(required=True) == {"profile": ["odd"]}
    change = set_profile("economy", reason=None)
    assert (change["from_profile"], change["to_profile"]) == ("balanced", "economy")


def test_route_answers_are_route_answers(git_repo: GitRepo) -> None:
    """``route`` answers ``{mode, reason_codes}`` (RouteAnswer) whether the router decides or the
    config disables it; the disabled answer is a copy (the module's DISABLED is never handed out)."""
    from toolkit.workflow.delegation import DISABLED, RouteAnswer, route

    git_repo.commit("init", {"src/api.py": "a"})
    decided, _ = route({"input": {"independent_reviewer": True}}, record=False)
    assert list(decided) == declared_keys(RouteAnswer)
    git_repo.write(".workgroup/config.yml", "context_efficiency:\n  enabled: false\n")
    disabled, notes = route({"input": {}}, record=True)
    assert list(disabled) == declared_keys(RouteAnswer) and disabled == DISABLED and disabled is not DISABLED
    assert notes == ["context efficiency is disabled (enabled: false): nothing recorded"]


def test_profile_show_prints_the_declared_settings(git_repo: GitRepo) -> None:
    """``profile show --json`` prints EffectiveSettings: the profile's settings in ProfileSettings'
    order (config values applied in place), then ``profile``."""
    from toolkit.workflow.profiles import EffectiveSettings, ProfileSettings, effective_settings

    assert declared_keys(EffectiveSettings) == [*declared_keys(ProfileSettings), "profile"]
    git_repo.write(
        ".workgroup/config.yml",
        "context_efficiency:\n  max_scanners: 1\n  worker_model: deep\n  max_active_inherited: 1\n",
    )
    code, out, err = cli("profile", "show", "economy", "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert list(shown) == declared_keys(EffectiveSettings)
    assert (shown["profile"], shown["max_scanners"], shown["worker_model"]) == ("economy", 1, "deep")
    assert list(effective_settings({"profile": 3})) == declared_keys(EffectiveSettings)
