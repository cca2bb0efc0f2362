"""The commit-msg privacy hook in-process: a secret or a provider session id in the message is
exit 1 with the masked value; git's comment lines and the scissors part are not the message; a
message that cannot be read is not a pass. (Through real pre-commit and git: tests/hooks.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolkit.hooks.privacy_msg import main
from toolkit.privacy.providers import base62_crc32

BODY = "Zq8Xw2Lm4Np6Rt0Vy3Bd5Fh7Jk9Mc1"
GH = "gh" + "p_" + BODY + base62_crc32(BODY)
SESSION = "resume claude session " + "3f2a9c1e-5b7d-4e8f-" + "9a0b-1c2d3e4f5a6b"


def _run(tmp_path: Path, message: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    code = main([str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_token_in_the_message_blocks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(tmp_path, f"Fix the deploy\n\nused {GH} for the test\n", capsys)
    assert code == 1
    assert out == "commit message:3:6: github-token secret: ghp_********\n"
    assert GH not in out + err and BODY[:8] not in out + err


def test_a_provider_session_id_blocks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(tmp_path, f"Pick up the work\n\n{SESSION}\n", capsys)
    assert code == 1 and "provider-session-id identifier" in out


def test_clean_messages_comments_and_the_scissors_part_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        _run(tmp_path, "Add a request timeout\n\nAuthor: alice@example.com, see /home/alice\n", capsys)[0]
        == 0
    )
    template = f"Add a timeout\n\n# Please enter the commit message\n# {GH}\n"
    assert _run(tmp_path, template, capsys)[0] == 0
    verbose = f"Add a timeout\n# ------------------------ >8 ------------------------\n+token = {GH}\n"
    assert _run(tmp_path, verbose, capsys)[0] == 0
    allowed = f"Document the fixture\n\nfixture {GH}  workgroup: allow github-token\n"
    assert _run(tmp_path, allowed, capsys)[0] == 0


def test_a_utf16_message_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_bytes(f"Fix\n\n{GH}\n".encode("utf-16"))
    assert main([str(path)]) == 1
    assert "github-token" in capsys.readouterr().out


def test_a_message_that_cannot_be_read_is_not_a_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path / "missing")]) == 3
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main([str(fifo)]) == 3
    assert "not scanned" in capsys.readouterr().err
    assert main([]) == 2
