"""``workgroup demo``: the main job on an embedded default, in a throwaway git repository.

Each step lives in ``toolkit/demo/steps/`` and narrates what it decides and why. Steps call the
real commands as subprocesses, the way a skill or a hook would.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from toolkit.core.display import shown
from toolkit.core.jsontypes import JsonObject
from toolkit.demo.steps import STEPS
from toolkit.infra.git import commit_all, init_repository


class RuntimeFrame(TypedDict, total=False):
    """The answer line of ``workgroup runtime OP`` as read back: ``ok``, then the operation and
    its result (a JSON object the demo prints or reads fields of), or the refusal's code and message."""

    ok: bool
    operation: str
    result: JsonObject
    code: str
    message: str


@dataclass
class Demo:
    root: Path
    env: dict[str, str] = field(default_factory=dict)
    step: int = 0

    def heading(self, title: str) -> None:
        self.step += 1
        print(f"\n== {self.step}. {title}", flush=True)

    def say(self, text: str) -> None:
        for line in text.splitlines() or [""]:
            print(f"   {line}", flush=True)

    def run(
        self,
        *args: str,
        stdin: str | bytes | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``workgroup ARGS`` (or another console script when args[0] starts with ``cm-``)."""
        if args and args[0].startswith("cm-"):
            cmd = [sys.executable, "-c", _CM_SHIM, *args]
        else:
            cmd = [sys.executable, "-m", "toolkit", *args]
        data = stdin.decode("utf-8") if isinstance(stdin, bytes) else stdin
        return subprocess.run(
            cmd,
            input=data,
            capture_output=True,
            text=True,
            cwd=cwd or self.root,
            env={**os.environ, **self.env, **(env or {})},
            check=False,
        )

    def runtime(self, op: str, request: Mapping[str, object]) -> RuntimeFrame:
        proc = self.run("runtime", op, stdin=json.dumps(request))
        frame: RuntimeFrame = json.loads(proc.stdout.strip().splitlines()[-1])  # the protocol's frame
        return frame

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path


_CM_SHIM = (
    "import sys, importlib; name = sys.argv[1]; sys.argv = sys.argv[1:];"
    "mod = {'cm-openai-compatible-call': 'toolkit.cm.adapter', 'cm-log-event': 'toolkit.cm.events',"
    " 'cm-usage-report': 'toolkit.cm.report'}[name];"
    "raise SystemExit(importlib.import_module(mod).main())"
)


def run_demo(keep: bool = False) -> int:

    tmp = tempfile.mkdtemp(prefix="workgroup-demo-")
    root = Path(tmp) / "project"
    root.mkdir()
    print(
        f"workgroup demo: a throwaway repository at {root.name}/ (removed afterwards)"
        if not keep
        else f"workgroup demo: repository kept at {shown(root)}"  # TMPDIR comes from the environment
    )
    repo = init_repository(root)
    (root / "src").mkdir()
    (root / "src" / "api.py").write_text("def handler():\n    return 'ok'\n", encoding="utf-8")
    (root / "src" / "ui.tsx").write_text("export const App = () => null;\n", encoding="utf-8")
    (root / "README.md").write_text("# demo project\n", encoding="utf-8")
    commit_all(repo, "initial commit")
    home = Path(tmp) / "home"
    home.mkdir()
    demo = Demo(
        root=root,
        env={
            "HOME": str(home),
            "CM_WORKFLOW_LOG_HOME": str(home / "cm-logs"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "PRE_COMMIT_HOME": str(home / "pre-commit"),
        },
    )
    failures = 0
    try:
        for name in STEPS:
            module = importlib.import_module(f"toolkit.demo.steps.{name}")
            try:
                module.run(demo)
            except Exception as exc:  # a failing step is reported, the demo goes on
                failures += 1
                print(f"   !! step '{name}' failed: {exc.__class__.__name__}: {shown(exc)}", flush=True)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(
        "\ndemo finished"
        + (f" with {failures} failed step(s)" if failures else ": every step behaved as narrated")
    )
    return 1 if failures else 0
