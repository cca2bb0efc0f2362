"""A prompt before the model sees it (``user-prompt-submit``): one holding a secret is held back."""

from __future__ import annotations

from toolkit.agents import answers
from toolkit.privacy import Context, scan_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from toolkit.agents.answers import Answer
    from toolkit.agents.payload import HookInput, Options

MAX_LISTED = 5


def handle(hook: HookInput, options: Options) -> Answer:
    return check_prompt(hook)


def check_prompt(hook: HookInput) -> Answer:
    """A prompt holding a secret is held back (the secret rules only: a prompt is not an artifact)."""
    if not hook.prompt:
        return answers.allow()
    findings = scan_text(hook.prompt, Context.SOURCE)
    if not findings:
        return answers.allow()
    listed = "; ".join(f"line {f.line} holds a {f.rule} secret" for f in findings[:MAX_LISTED])
    return answers.block(
        f"workgroup held this prompt back: {listed}. Remove the secret and send it again "
        "(reference it by the name of an environment variable instead)."
    )
