"""`workgroup init`: the config, .gitignore lines, the pre-commit hooks (merged, never
clobbered) and the git hook. Running it again changes nothing, or switches the hook form."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolkit.commands._common import emit_json, repository, say

HELP = """Write .workgroup/config.yml, .gitignore lines and the pre-commit config; install the git hook.

The hooks: workgroup-privacy-all (secrets in every staged file; every privacy rule in workflow
artifacts), workgroup-privacy-commit-msg (the commit message), workgroup-docs-claims and
workgroup-verify; init prints what each checks and what it does not. It writes
default_install_hook_types: [pre-commit, commit-msg], so a plain `pre-commit install` (init's, and
every clone's) installs the commit-message hook too. By default they are the toolkit's published hooks, which pre-commit installs in every
clone: `repo:` the git URL the toolkit was installed from and `rev:` the installed commit (pip
records both), else the repository of its package metadata at the release commit (or its tag);
the rev is checked to exist with git before anything is written. When the config's
default_language_version for python is below 3.11, the hooks get language_version: the Python
running init, and init says so. A toolkit installed from a local path is
never written into the shared config unless given as --hook-repo. With --local they are `repo: local` hooks that call
the installed console scripts and say how to install the toolkit when they are missing.
Rerunning with the other form switches the hooks in place. The CM lines of .gitignore are added
only in a project that uses CM (a .cm-run.json, CM project log, handoff or .cm-workflow.yml).

With --ci github it also writes .github/workflows/workgroup.yml: the CI job that installs the
toolkit at the same repository and rev as the hooks, runs `workgroup verify` and `workgroup
privacy scan --history` on the pushed commits (so `git commit --no-verify` does not get past it)
and uploads both reports to code scanning as SARIF. An existing, different workflow file is
replaced only with --force.

With --agent claude it writes only the agent hooks, into .claude/settings.json (Claude Code's
project settings): SessionStart, PreToolUse (Write, Edit, MultiEdit, NotebookEdit), PreCompact,
Stop and SessionEnd run `workgroup agent-hook EVENT`, and statusLine runs `workgroup statusline`.
With --agent codex: .codex/hooks.json with SessionStart, PreToolUse (Bash, apply_patch) and Stop; Codex runs
them only with hooks enabled in its config.toml ([features] codex_hooks = true), which init does
not write. Existing keys and hooks are kept; an event that already runs our hook is left as it
is, so a re-run adds nothing. --dry-run says what would be added and writes nothing. See
docs/agents.md.

Exit codes: 0 done, 1 the pre-commit config cannot be merged safely, the rev does not exist or
the workflow file exists, or the agent's settings are not a JSON object of hook lists
(nothing written), 2 invalid option or config file (the agent's settings file not valid JSON), 3 no git repository, the hook repository
is unreachable, or `pre-commit install` failed.
"""


def register(app: typer.Typer) -> None:
    @app.command("init", help=HELP)
    def init(
        local: Annotated[
            bool,
            typer.Option(
                "--local",
                help="Write `repo: local` hooks that call the installed console scripts (no network "
                "at commit time; every teammate installs the toolkit).",
            ),
        ] = False,
        hook_repo: Annotated[
            str | None,
            typer.Option(
                "--hook-repo",
                metavar="URL",
                help="Hook repository (git URL or local path) instead of the git URL the toolkit "
                "was installed from or the repository of its package metadata.",
            ),
        ] = None,
        hook_rev: Annotated[
            str | None,
            typer.Option(
                "--hook-rev",
                metavar="REV",
                help="Tag or commit of the hook repository [default: the installed commit when "
                "installed from a git URL, else the installed release's commit, or its tag].",
            ),
        ] = None,
        cm: Annotated[
            bool | None,
            typer.Option(
                "--cm/--no-cm",
                help="Add (or leave out) the CM lines of .gitignore [default: detected].",
                show_default=False,
            ),
        ] = None,
        no_install: Annotated[
            bool, typer.Option("--no-install", help="Do not run `pre-commit install`.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print what was done as JSON.")] = False,
        ci: Annotated[
            str | None,
            typer.Option(
                "--ci",
                metavar="github",
                help="Also write the CI workflow (.github/workflows/workgroup.yml) for this CI.",
            ),
        ] = None,
        force: Annotated[
            bool, typer.Option("--force", help="With --ci: replace an existing, different workflow file.")
        ] = False,
        agent: Annotated[
            str | None,
            typer.Option(
                "--agent",
                metavar="claude|codex",
                help="Write only the agent hooks: .claude/settings.json (claude) or .codex/hooks.json "
                "(codex), merged with what is there.",
            ),
        ] = None,
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="With --agent: say what would be added; write nothing.")
        ] = False,
    ) -> int:
        if agent is not None or dry_run:
            others = local or hook_repo or hook_rev or cm is not None or no_install or ci or force
            _init_agent(agent, dry_run=dry_run, as_json=as_json, others=bool(others))
            return 0
        from toolkit.workflow.init import hook_form, initialize

        repo = repository()
        form = hook_form(local=local, hook_repo=hook_repo, hook_rev=hook_rev)
        workdir = Path(repo.workdir)
        ci_plan = None
        if ci is not None:
            from toolkit.workflow import ci as ci_workflow

            # checked before anything is written: a refusal leaves every file as it was
            ci_plan = ci_workflow.plan(workdir, ci, form.repo, form.rev, force=force)
        outcome = initialize(workdir, form=form, install=not no_install, cm=cm)
        ci_status = ""
        if ci_plan is not None:
            from toolkit.workflow import ci as ci_workflow

            outcome.messages.insert(3, ci_workflow.write(workdir, ci_plan))
            ci_status = ci_plan.status
        for line in outcome.messages:
            say(line)
        if as_json:
            emit_json({**outcome.as_json(), **({"ci_workflow": ci_status} if ci_plan else {})})
        if outcome.hook == "failed":
            # the --json document above already says "hook": "failed"; one document on stdout
            say("error[HOOK_INSTALL_FAILED]: `pre-commit install` failed; the files were written")
            return 3
        return 0


def _init_agent(agent: str | None, *, dry_run: bool, as_json: bool, others: bool) -> None:
    from toolkit.core.errors import InvalidInput
    from toolkit.workflow.agent_settings import write_agent_settings

    if agent is None:
        raise InvalidInput("INIT_DRY_RUN_NEEDS_AGENT", "--dry-run applies to --agent only")
    if others:
        raise InvalidInput(
            "INIT_AGENT_ALONE",
            "--agent writes only the agent's hook file and takes no other init option but --dry-run "
            "and --json; run `workgroup init` without --agent for the rest",
        )
    result = write_agent_settings(Path(repository().workdir), agent, dry_run=dry_run)
    for line in result.messages(dry_run=dry_run):
        say(line)
    import shutil

    if shutil.which("workgroup") is None:
        say(
            "  note: workgroup is not on this shell's PATH; the agent runs these hooks with its own "
            "PATH, which must find it (the pre-write hook blocks every write until it does)"
        )
    if as_json:
        emit_json({**result.as_json(), "dry_run": dry_run})
