"""The commit-msg privacy hook in-process: a secret or a provider session id in the message is
exit 1 with the masked value; git's comment lines and the scissors part are not the message; a
message that cannot be read is not a pass. (Through real pre-commit and git: tests/hooks.)"""

from __future__ import annotations

import os
from pathlib import Path

from support.harness import CliResult, cli

from toolkit.privacy.providers import base62_crc32

BODY = "Zq8Xw2Lm4Np6Rt0Vy3Bd5Fh7Jk9Mc1"
GH = "gh" + "p_" + BODY + base62_crc32(BODY)
SESSION = "resume claude session " + "3f2a9c1e-5b7d-4e8f-" + "9a0b-1c2d3e4f5a6b"
HOOK = "workgroup-privacy-commit-msg-hook"


def _hook(*args: str) -> CliResult:
    return cli(*args, script=HOOK)


def _run(tmp_path: Path, message: str) -> CliResult:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    return _hook(str(path))


def test_a_token_in_the_message_blocks(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path, f"Fix the deploy\n\nused {GH} for the test\n")
    assert code == 1
    assert out == "commit message:3:6: github-token secret: ghp_********\n"
    assert GH not in out + err and BODY[:8] not in out + err


def test_a_provider_session_id_blocks(tmp_path: Path) -> None:
    code, out, _ = _run(tmp_path, f"Pick up the work\n\n{SESSION}\n")
    assert code == 1 and "provider-session-id identifier" in out


def test_clean_messages_comments_and_the_scissors_part_pass(tmp_path: Path) -> None:
    assert _run(tmp_path, "Add a request timeout\n\nAuthor: alice@example.com, see /home/alice\n")[0] == 0
    template = f"Add a timeout\n\n# Please enter the commit message\n# {GH}\n"
    assert _run(tmp_path, template)[0] == 0
    verbose = f"Add a timeout\n# ------------------------ >8 ------------------------\n+token = {GH}\n"
    assert _run(tmp_path, verbose)[0] == 0
    allowed = f"Document the fixture\n\nfixture {GH}  workgroup: allow github-token\n"
    assert _run(tmp_path, allowed)[0] == 0


def test_a_utf16_message_is_read(tmp_path: Path) -> None:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_bytes(f"Fix\n\n{GH}\n".encode("utf-16"))
    code, out, _ = _hook(str(path))
    assert code == 1
    assert "github-token" in out


def test_a_message_that_cannot_be_read_is_not_a_pass(tmp_path: Path) -> None:
    assert _hook(str(tmp_path / "missing")).exit_code == 3
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = _hook(str(fifo))
    assert result.exit_code == 3
    assert "not scanned" in result.stderr
    assert _hook().exit_code == 2
