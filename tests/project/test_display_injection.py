"""Terminal and output injection (issue 24): hostile names never reach the terminal raw.

File names, delta titles and model names holding an OSC title sequence (``ESC ] 0 ; x BEL``), a
colour sequence (``ESC [ 31 m``), a newline that forges a finding line, or a bidi override are
printed by every human-readable printer with those characters escaped (``toolkit.core.display``);
the JSON output is unchanged (``json.dumps`` escapes on its own).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from support.harness import GitRepo, run_workgroup

from toolkit.core.display import shown
from toolkit.privacy.providers import base62_crc32

BODY = "Zq8Xw2Lm4Np6Rt0Vy3Bd5Fh7Jk9Mc1"
TOKEN = "gh" + "p_" + BODY + base62_crc32(BODY)
FORGED = "forged.py:1:1: FAKE-RULE all clear"
HOSTILE_NAMES = {
    "osc": "a\x1b]0;x\x07.py",
    "csi": "b\x1b[31mred.py",
    "newline": f"c.py\n{FORGED}",
    "bidi": "d\u202etxt.py",
}
HOSTILE_TEXTS = [*HOSTILE_NAMES.values(), "e\u2028f", "g\u200bh", "i\x85j", "k\x7fl"]


def assert_clean(text: str) -> None:
    """No control or format character except the newline ending each line, and no forged line."""
    for line in text.split("\n"):
        for char in line:
            assert char == "\t" or unicodedata.category(char) not in ("Cc", "Cf", "Cs", "Zl", "Zp"), (
                repr(char),
                line,
            )
        assert not line.startswith("forged.py"), line


# --- the helper ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_shown_escapes_every_control_and_format_character(text: str) -> None:
    out = shown(text)
    assert_clean(out)
    assert "\n" not in out and "\x1b" not in out


def test_shown_is_unambiguous_and_keeps_ordinary_text() -> None:
    assert shown("src/app.py") == "src/app.py"
    assert shown("données/文件.py") == "données/文件.py"
    assert shown("a\x1b[31m") == "a\\x1b[31m"
    assert shown("x\ny") == "x\\ny"
    assert shown("\u202e") == "\\u202e"
    assert shown("\ud800") == "\\ud800"
    assert shown("\U000e0001") == "\\U000e0001"
    # a typed backslash sequence and a real control character print differently
    assert shown("\\x1b") == "\\\\x1b" != shown("\x1b")


# --- privacy scan and the privacy hook ---------------------------------------------------------


@pytest.fixture
def hostile_files(git_repo: GitRepo) -> GitRepo:
    for name in HOSTILE_NAMES.values():
        (git_repo.path / name).write_text(f'key = "{TOKEN}"\n', encoding="utf-8")
    return git_repo


def test_privacy_scan_prints_hostile_file_names_escaped(hostile_files: GitRepo) -> None:
    proc = run_workgroup("privacy", "scan", *HOSTILE_NAMES.values(), cwd=hostile_files.path)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout.decode("utf-8")
    assert_clean(out)
    assert_clean(proc.stderr.decode("utf-8"))
    lines = out.splitlines()
    assert len(lines) == len(HOSTILE_NAMES)  # one line per finding, none forged
    for name in HOSTILE_NAMES.values():
        assert sum(line.startswith(shown(name) + ":1:") for line in lines) == 1, (name, lines)
    # JSON keeps the real names (escaped by the JSON encoder)
    doc = json.loads(run_workgroup("privacy", "scan", "--json", *HOSTILE_NAMES.values()).stdout)
    assert sorted(f["path"] for f in doc["findings"]) == sorted(HOSTILE_NAMES.values())


def test_privacy_hook_prints_hostile_file_names_escaped(hostile_files: GitRepo) -> None:
    hook = Path(sys.executable).parent / "workgroup-privacy-hook"
    proc = subprocess.run(
        [str(hook), *HOSTILE_NAMES.values()], cwd=hostile_files.path, capture_output=True, check=False
    )
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout.decode("utf-8")
    assert_clean(out)
    assert_clean(proc.stderr.decode("utf-8"))
    assert len(out.splitlines()) == len(HOSTILE_NAMES)


# --- verify and its hook ---------------------------------------------------------------------


def test_verify_and_its_hook_print_hostile_record_names_escaped(git_repo: GitRepo) -> None:
    git_repo.commit("initial", {"src/app.py": "a = 1\n"})
    capsules = git_repo.path / ".workgroup" / "workgroups" / "wg" / "capsules"
    capsules.mkdir(parents=True)
    for name in HOSTILE_NAMES.values():
        (capsules / f"{name}.json").write_text("{not json", encoding="utf-8")
    git_repo.commit("records")
    hook = Path(sys.executable).parent / "workgroup-verify-hook"
    for proc in (
        run_workgroup("verify", cwd=git_repo.path),
        subprocess.run([str(hook), "--no-cache"], cwd=git_repo.path, capture_output=True, check=False),
    ):
        assert proc.returncode == 1, proc.stderr
        out = proc.stdout.decode("utf-8")
        assert_clean(out)
        assert_clean(proc.stderr.decode("utf-8"))
        heads = [line for line in out.splitlines() if not line.startswith("  ")]
        assert len(heads) == len(HOSTILE_NAMES), out
    doc = json.loads(run_workgroup("verify", "--json", cwd=git_repo.path).stdout)
    assert sorted(Path(f["path"]).name for f in doc["findings"]) == sorted(
        f"{n}.json" for n in HOSTILE_NAMES.values()
    )


# --- vault list ------------------------------------------------------------------------------


def test_vault_list_prints_hostile_titles_escaped(git_repo: GitRepo) -> None:
    for i, title in enumerate(HOSTILE_NAMES.values()):
        delta = {"delta": {"title": title, "content": f"body {i}"}}
        added = run_workgroup("vault", "add", "-", stdin=json.dumps(delta), cwd=git_repo.path)
        assert added.returncode == 0, added.stderr
    proc = run_workgroup("vault", "list", cwd=git_repo.path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode("utf-8")
    assert_clean(out)
    assert len(out.splitlines()) == len(HOSTILE_NAMES)
    doc = json.loads(run_workgroup("vault", "list", "--json", cwd=git_repo.path).stdout)
    assert [e["delta"]["title"] for e in doc["entries"]] == list(HOSTILE_NAMES.values())


# --- cm-usage-report ---------------------------------------------------------------------------


def test_cm_usage_report_prints_hostile_model_names_escaped(tmp_path: Path) -> None:
    home = tmp_path / "logs"
    env = {**os.environ, "CM_WORKFLOW_LOG_HOME": str(home)}
    bin_dir = Path(sys.executable).parent
    data = {
        "call_id": "call-0000",
        "stage": "design_generation",
        "role": "planner",
        "adapter": "company-api",
        "requested_model": "planner-default",
        "effective_model": "model-a",
        "source": "api",
        "purpose": "cm-prd:design_generation",
        "usage_state": "observed",
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "outcome": "success",
    }
    logged = subprocess.run(
        [
            str(bin_dir / "cm-log-event"),
            *("--workflow", "cm-prd", "--event", "model_usage", "--phase", "complete"),
            *("--runtime", "codex", "--run-id", "run-0001", "--detail", "call"),
            *("--data-json", json.dumps(data)),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        check=False,
    )
    assert logged.returncode == 0, logged.stderr
    run_log = Path(json.loads(logged.stdout)["global_log"])
    (event,) = [json.loads(x) for x in run_log.read_text(encoding="utf-8").splitlines()]
    # the log is a file anyone with the home can edit: the models are written in by hand
    rows = [
        {**event, "event_id": f"event-{i}", "call_id": f"call-{i:04d}", "effective_model": model}
        for i, model in enumerate(HOSTILE_NAMES.values())
    ]
    run_log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    proc = subprocess.run([str(bin_dir / "cm-usage-report")], env=env, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode("utf-8")
    assert_clean(out)
    assert_clean(proc.stderr.decode("utf-8"))
    model_lines = [line for line in out.splitlines() if "| planner |" in line]
    assert len(model_lines) == len(HOSTILE_NAMES), out
    assert any(shown(HOSTILE_NAMES["osc"]) in line for line in model_lines)
    doc = json.loads(
        subprocess.run([str(bin_dir / "cm-usage-report"), "--json"], env=env, capture_output=True).stdout
    )
    assert sorted(g["model"] for g in doc["groups"]) == sorted(HOSTILE_NAMES.values())


# --- handoff show, usage tables, owners list -----------------------------------------------------


def test_handoff_show_escapes_control_characters_and_keeps_lines(git_repo: GitRepo) -> None:
    from toolkit.cm.handoff import handoff_path

    target = handoff_path(git_repo.path / "specs")
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    text = "# Handoff\n\ttitle \x1b]0;owned\x07 and \x1b[2J \u202edone\nnext\n"
    Path(target).write_text(text, encoding="utf-8")
    proc = run_workgroup("handoff", "show", "specs", cwd=git_repo.path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode("utf-8")
    assert_clean(out)
    assert out == "# Handoff\n\ttitle \\x1b]0;owned\\x07 and \\x1b[2J \\u202edone\nnext\n"
    doc = json.loads(run_workgroup("handoff", "show", "specs", "--json", cwd=git_repo.path).stdout)
    assert doc["text"] == text


def test_usage_table_cells_are_escaped() -> None:
    from toolkit.usage.render import table

    out = table(["model", "calls"], [[name, "1"] for name in HOSTILE_NAMES.values()])
    assert_clean(out)
    assert len(out.splitlines()) == 2 + len(HOSTILE_NAMES)


def test_an_error_naming_a_hostile_path_prints_it_escaped(git_repo: GitRepo) -> None:
    name = HOSTILE_NAMES["osc"] + "-missing"
    proc = run_workgroup("privacy", "scan", name, cwd=git_repo.path)
    assert proc.returncode == 2
    err = proc.stderr.decode("utf-8")
    assert err.startswith("error[PATH_NOT_FOUND]: ")
    assert_clean(err)
    assert shown(name) in err
    doc = json.loads(run_workgroup("privacy", "scan", "--json", name, cwd=git_repo.path).stdout)
    assert name in doc["error"]["message"]  # JSON keeps the name, escaped by the encoder


# --- error[CODE] lines: the message's own lines only ------------------------------------------

FORGED_ERROR = "error[FAKE]: all clear"
# an OSC title, a colour, a bidi override and a newline that would start a forged error line
HOSTILE_VALUE = f"v\x1b]0;x\x07\x1b[31m\u202e\n{FORGED_ERROR}\n{FORGED}"


def assert_no_forged_line(text: str) -> None:
    assert_clean(text)
    for line in text.split("\n"):
        assert not line.lstrip().startswith(("error[FAKE]", "forged.py")), line


def test_error_lines_escape_each_value_and_keep_only_their_own_line_breaks() -> None:
    from toolkit.core.errors import InvalidInput

    exc = InvalidInput(
        "SCHEMA_INVALID", f"no such file: {HOSTILE_VALUE}", lines=(f"  $.{HOSTILE_VALUE}: required", "(hint)")
    )
    out = exc.diagnostics()
    assert_no_forged_line(out)
    assert out.split("\n") == [
        f"error[SCHEMA_INVALID]: no such file: {shown(HOSTILE_VALUE)}",
        f"  $.{shown(HOSTILE_VALUE)}: required",
        "(hint)",
    ]
    # the JSON error object keeps the message as given (json.dumps escapes it)
    assert exc.message == f"no such file: {HOSTILE_VALUE}\n  $.{HOSTILE_VALUE}: required\n(hint)"


def test_schema_errors_keep_their_field_lines(git_repo: GitRepo) -> None:
    git_repo.commit("initial", {"src/app.py": "a = 1\n"})
    (git_repo.path / "capsule.json").write_text("{}", encoding="utf-8")
    proc = _workgroup("capsule", "seal", "capsule.json", cwd=git_repo.path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.decode("utf-8").splitlines()
    assert lines[0] == "error[CAPSULE_SCHEMA_INVALID]: the capsule does not match the capsule schema:"
    assert lines[1].startswith("  $.") and lines[-1].startswith("(an example: ")


# --- the CLI walk: every text output that echoes an input value --------------------------------


def _workgroup(
    *args: str, cwd: Path, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The installed console script, as users run it."""
    script = Path(sys.executable).parent / "workgroup"
    return subprocess.run(
        [str(script), *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


def _keys(root: Path) -> Path:
    made = _workgroup("measure", "keygen", "keys", cwd=root)
    assert made.returncode == 0, made.stderr
    return root / "keys" / "measurement-key-local.key"


def _case_measure_keygen(root: Path) -> tuple[list[str], dict[str, str], str]:
    return ["measure", "keygen", f"k{HOSTILE_VALUE}"], {}, HOSTILE_VALUE


def _case_measure_sign_out(root: Path) -> tuple[list[str], dict[str, str], str]:
    key = _keys(root)
    pairs = Path(__file__).resolve().parents[2] / "corpus" / "paired-results.json"
    args = ["measure", "sign", "--pairs", str(pairs), "--key", str(key)]
    args += ["--candidate-version", "c1", "--corpus-version", "v1", "--out", f"e{HOSTILE_VALUE}.json"]
    return args, {}, HOSTILE_VALUE


def _case_privacy_scan_missing_path(root: Path) -> tuple[list[str], dict[str, str], str]:
    return ["privacy", "scan", f"m{HOSTILE_VALUE}"], {}, HOSTILE_VALUE


def _case_eval_corpus_file_name(root: Path) -> tuple[list[str], dict[str, str], str]:
    scenarios = root / "corpus" / "scenarios"
    scenarios.mkdir(parents=True)
    (scenarios / f"s{HOSTILE_VALUE}.json").write_text('{"id": "x"}', encoding="utf-8")
    return ["eval", "corpus"], {}, HOSTILE_VALUE


def _case_boundary_reason(root: Path) -> tuple[list[str], dict[str, str], str]:
    # one line: the boundary refuses a line break in --reason before anything is printed
    value = HOSTILE_VALUE.split("\n")[0]
    (root / "specs").mkdir()
    args = ["boundary", "cm-ai", "--at", "run_done", "--lang", "en", "--specs-dir", "specs"]
    return [*args, "--reason", value, "--next-command", f"/cm-ai {value}"], {}, value


def _case_usage_searched_folder(root: Path) -> tuple[list[str], dict[str, str], str]:
    home = root / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(root / f"x{HOSTILE_VALUE}")}
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        env[name] = ""
    return ["usage"], env, HOSTILE_VALUE


def _case_skills_lint_file_name(root: Path) -> tuple[list[str], dict[str, str], str]:
    skill = root / "skills" / f"s{HOSTILE_VALUE}"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: s\ndescription: does things\n---\n", encoding="utf-8")
    return ["skills", "lint"], {}, HOSTILE_VALUE


CLI_CASES = {
    "measure keygen (paths on stderr)": _case_measure_keygen,
    "measure sign --out (wrote PATH)": _case_measure_sign_out,
    "privacy scan (error naming the path)": _case_privacy_scan_missing_path,
    "eval (error naming the scenario file)": _case_eval_corpus_file_name,
    "boundary (verdict lines)": _case_boundary_reason,
    "usage (the folders searched)": _case_usage_searched_folder,
    "skills lint (finding lines)": _case_skills_lint_file_name,
}


@pytest.mark.parametrize("case", list(CLI_CASES), ids=list(CLI_CASES))
def test_cli_text_outputs_echo_hostile_values_escaped(git_repo: GitRepo, case: str) -> None:
    git_repo.commit("initial", {"src/app.py": "a = 1\n"})
    args, env, value = CLI_CASES[case](git_repo.path)
    proc = _workgroup(*args, cwd=git_repo.path, env=env)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert_no_forged_line(out)
    assert_no_forged_line(err)
    assert shown(value) in out + err, (proc.returncode, out, err)  # the value was echoed, escaped


# --- the shared printers of the commands ---------------------------------------------------------


def test_say_and_echo_escape_the_whole_line(capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.commands._common import echo, echo_row, say, say_lines

    say(f"wrote {HOSTILE_VALUE}")
    say_lines(["first", f"second {HOSTILE_VALUE}"])
    echo(f"stage: {HOSTILE_VALUE}")
    echo_row(f"id\t{HOSTILE_VALUE}", "until 2026-01-01T00:00:00Z")
    out, err = capsys.readouterr()
    assert_no_forged_line(out)
    assert_no_forged_line(err)
    assert err.split("\n") == [f"wrote {shown(HOSTILE_VALUE)}", "first", f"second {shown(HOSTILE_VALUE)}", ""]
    # a row: the tab between the fields is kept, a tab inside a field is shown as \t
    assert out.split("\n") == [
        f"stage: {shown(HOSTILE_VALUE)}",
        f"id\\t{shown(HOSTILE_VALUE)}\tuntil 2026-01-01T00:00:00Z",
        "",
    ]


def test_promote_table_prints_one_line_per_row_whatever_the_names(capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.commands._common import echo
    from toolkit.commands.promote import render_gates

    result = {
        "gate_details": [
            {"gate": HOSTILE_VALUE, "passed": False, "value": 1.0, "comparison": ">=", "threshold": 2}
        ],
        "provenance_failures": [HOSTILE_VALUE],
        "report": {
            "bootstrap": {HOSTILE_VALUE: {"estimate": 0.1, "low": 0.0, "high": 0.2, "samples": 10}},
            "strata": [{"stratum": HOSTILE_VALUE, "n": 1}],
        },
        "promote": False,
        "recorded": HOSTILE_VALUE,
    }
    lines = render_gates(result)
    for line in lines:
        echo(line)
    out = capsys.readouterr().out
    assert_no_forged_line(out)
    assert len(out.splitlines()) == len(lines) == 8
