"""The commands ``workgroup init --agent`` writes into the agents' settings, run the way the agents
run them (a shell, the payload on stdin), answer every recorded payload of their event."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.agent_hooks import PAYLOADS, claude_transcript, codex_transcript, github_token, payload
from support.harness import GitRepo, run_workgroup

from toolkit.agents.payload import event_name

SETTINGS = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json"}


def _commands(root: Path, agent: str) -> dict[str, str]:
    data = json.loads((root / SETTINGS[agent]).read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for event, groups in data["hooks"].items():
        for group in groups:
            for handler in group["hooks"]:
                found[event_name(event)] = handler["command"]
    return found


def _shell(command: str, data: dict[str, object], root: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(data).encode(),
        capture_output=True,
        cwd=root,
        env=env,
        check=False,
    )


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_the_settings_init_writes_drive_the_hook(agent: str, git_repo: GitRepo, tmp_path: Path) -> None:
    root = git_repo.path
    git_repo.commit("base", {"src/api.py": "def handler(request):\n    return request.send()\n"})
    assert run_workgroup("init", "--agent", agent, cwd=root).returncode == 0
    commands = _commands(root, agent)
    assert all(f"workgroup agent-hook {event} --agent {agent}" in cmd for event, cmd in commands.items())
    home = tmp_path / "home"
    transcript = claude_transcript(home) if agent == "claude" else codex_transcript(home)
    for file in sorted((PAYLOADS / agent).glob("*.json")):
        event = event_name(file.stem.split(".")[0])
        if event not in commands:
            continue
        proc = _shell(commands[event], payload(agent, file.stem, root, transcript), root)
        assert proc.returncode == 0, (file.name, proc.stderr)
    # the wired pre-write command denies a secret, the agents' way
    secret = payload(
        agent, "pre-tool-use.write" if agent == "claude" else "pre-tool-use.heredoc", root, transcript
    )
    token = github_token()
    if agent == "claude":
        secret["tool_input"] = {"file_path": str(root / "src" / "k.py"), "content": f"K = '{token}'\n"}
    else:
        secret["tool_input"] = {"command": f"cat > src/k.py <<'EOF'\nK = '{token}'\nEOF"}
    denied = _shell(commands["pre-tool-use"], secret, root)
    assert (
        denied.returncode == 2
        and b"github-token secret" in denied.stderr
        and token.encode() not in denied.stderr
    )
