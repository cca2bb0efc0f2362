"""Demo step: Stage 0 inventory, skill hygiene, profiles, provider capabilities and a fan-out check."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.demo.runner import Demo


def run(demo: Demo) -> None:
    demo.heading("Stage 0: deterministic inventory, skill hygiene, profiles and capabilities")
    built = demo.run("index")
    again = demo.run("index")
    demo.say("`workgroup index` inventories every tracked file (path, blob, size, language) with one digest;")
    demo.say("the second run reuses it because the tree did not change:")
    demo.say(built.stderr.strip())
    demo.say(again.stderr.strip())

    demo.write(
        "skills/release/SKILL.md",
        "---\nname: release\ndescription: Ships things.\n---\n# Release\n\nFollow references/checklist.md.\n",
    )
    demo.write("skills/release/references/checklist.md", "# Checklist\n\nTag, build, smoke-test.\n")
    bad = demo.run("skills", "lint", "skills")
    demo.say(f"A skill whose description never says when to use it is refused (exit {bad.returncode}):")
    demo.say(bad.stderr.strip())
    demo.write(
        "skills/release/SKILL.md",
        "---\nname: release\ndescription: Use when the user asks to ship "
        "a release.\n---\n# Release\n\nFollow references/checklist.md.\n",
    )
    good = demo.run("skills", "lint", "skills")
    demo.say(f"With a 'Use when ...' trigger it passes (exit {good.returncode}).")

    facts = json.loads(demo.run("capabilities", "--provider", "codex", "--route-facts").stdout)
    demo.say(f"Codex exposes no worker fork and no team runtime: {json.dumps(facts, sort_keys=True)};")
    demo.say(
        "so a high-affinity delegation degrades to a capsule with CAPABILITY_FALLBACK, nothing fabricated."
    )

    demo.write(
        "plan.json",
        json.dumps(
            {
                "stage": "0",
                "indexed": True,
                "workers": [{"role": "analyst"}, {"role": "scanner", "scope": "src"}, {"role": "security"}],
            }
        ),
    )
    plan = demo.run("fanout", "check", "plan.json", "--profile", "economy")
    demo.say(
        f"A Stage 0 fan-out with an unjustified scanner and an unrequired specialist, under the economy "
        f"profile (exit {plan.returncode}):"
    )
    demo.say(plan.stderr.strip())
