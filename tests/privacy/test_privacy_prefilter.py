"""The fast paths of the engine give exactly what the plain regex passes give.

* the combined prefilter (``toolkit/privacy/needles.py``) reports a literal present if and only
  if it occurs, overlapping and nested literals included;
* seeded rules (candidate starts from literal occurrences) yield the same matches as the rule's
  own pass (its anchor, or its pattern over the whole text), also where seeds are dense;
* the high-entropy rule's run finder equals its regex;
* the ASCII view keeps character offsets, and a case-insensitive label is found the same way
  whatever else the text holds.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from toolkit.privacy import Context, scan_text
from toolkit.privacy.engine import RULES
from toolkit.privacy.needles import NeedleFinder, choose_triggers, present_literals
from toolkit.privacy.rules import Rule
from toolkit.privacy.scantext import ScanText
from toolkit.privacy.secrets import _ENTROPY_RUN, token_runs

LITERALS = sorted({w for rule in RULES for w in rule.tuning.literals})
NOISE = [
    "",
    " ",
    "\n",
    "_",
    "-",
    ".",
    "=",
    "a",
    "Z",
    "9",
    "\u00e9",
    "\u5b57",
    "\U0001f600",
    "\u0130",
    "\u017f",
    "\u212a",
    "x" * 30,
]


def _soup(rng: random.Random, pieces: list[str], count: int) -> str:
    """Text made of needle fragments, whole needles and noise, glued in random order."""
    out = []
    for _ in range(count):
        piece = rng.choice(pieces)
        roll = rng.random()
        if roll < 0.3 and len(piece) > 1:
            cut = rng.randrange(1, len(piece))
            piece = piece[:cut] if rng.random() < 0.5 else piece[cut:]
        elif roll < 0.6:
            piece = rng.choice(NOISE)
        out.append(piece)
    return "".join(out)


def test_every_rule_literal_has_a_trigger_pass() -> None:
    groups = choose_triggers(LITERALS)
    covered = sorted(n for members in groups.values() for n in members)
    assert covered == LITERALS  # each literal in exactly one pass
    for trigger, members in groups.items():
        assert all(trigger in (m[:-1] or m) for m in members)


@pytest.mark.parametrize("seed", range(40))
def test_prefilter_reports_exactly_the_literals_that_occur(seed: int) -> None:
    rng = random.Random(seed)
    text = _soup(rng, LITERALS, 400)
    data = ScanText(text).ascii_bytes()
    expected = frozenset(w for w in LITERALS if w in text)
    assert present_literals(data) == expected  # substring searches (a small text)
    assert NeedleFinder(LITERALS).present(data) == expected  # the trigger passes


@pytest.mark.parametrize("seed", range(20))
def test_overlapping_needles_around_one_trigger_are_all_found(seed: int) -> None:
    # needles that share a trigger occurrence: the alternation reports one, companions the rest
    needles = ["sk-", "sk-ant-", "k-a", "ab_", "_cd", "b_c", "AAAA", "AAAAAA", "AKIA", "A", "zz"]
    rng = random.Random(seed)
    finder = NeedleFinder(needles)
    for _ in range(30):
        text = _soup(rng, needles, rng.randrange(1, 12))
        data = text.encode("ascii", "replace")
        assert finder.present(data) == frozenset(n for n in needles if n.encode() in data), text


SEEDED = [rule for rule in RULES if rule.tuning.seeds]
SEED_PIECES = sorted(
    {s for rule in SEEDED for s in rule.tuning.seeds}
    | {s.upper() for rule in SEEDED for s in rule.tuning.seeds}
    | {
        "=",
        ": ",
        "='",
        "'",
        '"',
        " = ",
        "_key",
        "-token",
        "Bearer ",
        "login: ",
        "/",
        "user=",
        "password=",
        "--user ",
    }
    | {"Ab3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY", "aaaaaaaaaaa", "0123456789abcdef" * 2, "api_", "secret_", "aws_"}
    | {
        "refresh_",
        "refresh",
        "private-",
        "client.",
        "client",
        "access_",
        "auth-",
        "db_",
        "aws_secret_access_",
    }
)


def _reference(rule: Rule, view: ScanText) -> list[tuple[int, int]]:
    """The rule's own pass without seeds: its anchor over the lower-cased view, or its pattern."""
    plain = dataclasses.replace(rule, tuning=dataclasses.replace(rule.tuning, seeds=()))
    return [m.span() for m in plain.matches(view)]


@pytest.mark.parametrize("rule", SEEDED, ids=[f"{r.id}-{i}" for i, r in enumerate(SEEDED)])
def test_seeded_rules_match_exactly_where_their_own_pass_does(rule: Rule) -> None:
    rng = random.Random(rule.id)
    pieces = SEED_PIECES + list(rule.tuning.seeds) * 6
    for _ in range(60):
        view = ScanText(_soup(rng, pieces, rng.randrange(1, 40)))
        assert [m.span() for m in rule.matches(view)] == _reference(rule, view), view.text


def test_dense_seeds_fall_back_to_the_rule_pass_with_the_same_result() -> None:
    rule = next(r for r in SEEDED if r.id == "password-assignment")
    view = ScanText("key=" * 5000 + "password='Xy7kq9Lm2Pz'")
    assert rule._seed_starts(view) is None  # too dense: one pass of the anchor instead
    assert [m.span() for m in rule.matches(view)] == _reference(rule, view)
    assert any(f.rule == "password-assignment" for f in scan_text(view.text, Context.SOURCE))


@pytest.mark.parametrize("seed", range(30))
def test_token_runs_equal_the_entropy_pattern(seed: int) -> None:
    rng = random.Random(seed)
    pieces = [
        "a" * 10,
        "B" * 14,
        "09" * 7,
        "+/",
        "_-",
        "=",
        "==",
        "===",
        " ",
        ".",
        "\u00e9",
        "\U0001f600",
        "x" * 24,
    ]
    text = _soup(rng, pieces, 80)
    assert list(token_runs(ScanText(text))) == [m.span() for m in _ENTROPY_RUN.finditer(text)]


def test_the_ascii_view_keeps_character_offsets() -> None:
    text = "a\udc80b\U0001f600c\u00e9\u0130\u5b57\u212a"
    view = ScanText(text)
    assert len(view.ascii_bytes()) == len(view.low_ascii) == len(text)
    assert view.ascii_bytes() == b"a?b?c????"
    assert view.low_ascii == b"a?b?c?i?k"  # the dotted I and the Kelvin sign fold as re folds them


SECRET = "Xy7kq9Lm2Pz4"


@pytest.mark.parametrize("label", ["password", "pa\u017fsword", "PASSWORD", "PA\u017fSWORD"])
@pytest.mark.parametrize("elsewhere", ["", "\u0130stanbul\n", "Kelvin \u212a\n", "\u0131\n"])
def test_a_case_insensitive_label_is_found_whatever_else_the_text_holds(label: str, elsewhere: str) -> None:
    # re matches ſ to s case-insensitively; the label is a finding in every text alike (before,
    # an unrelated dotted capital I elsewhere decided whether the engine looked for it)
    found = scan_text(f'{elsewhere}{label} = "{SECRET}"\n', Context.SOURCE)
    assert [f.rule for f in found] == ["password-assignment"]
    assert found[0].line == (2 if elsewhere else 1)


def _labels() -> list[str]:
    """Every label of the assignment and AWS rules, each joiner spelled out."""
    joined = ["secret{}key", "client{}secret", "api{}key", "access{}token", "auth{}token"]
    joined += [
        "refresh{}token",
        "private{}key",
        "db{}pass",
        "aws{}secret{}access{}key",
        "secret{}access{}key",
    ]
    plain = ["password", "passwd", "pwd", "passphrase", "secret", "apikey", "token", "secretaccesskey"]
    return plain + [j.replace("{}", sep) for j in joined for sep in ("", "_", ".", "-")]


@pytest.mark.parametrize("label", _labels())
@pytest.mark.parametrize("rule", [r for r in SEEDED if r.tuning.anchor is not None], ids=lambda r: r.id)
def test_every_label_is_seeded_where_the_anchor_starts(rule: Rule, label: str) -> None:
    value = "Ab3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY+/Ab3dE5"  # 40 characters, as an AWS secret key
    for text in (f"{label} = '{value}'", f"x.{label.upper()}: {value}"):
        view = ScanText(text)
        assert [m.span() for m in rule.matches(view)] == _reference(rule, view), text


@pytest.mark.parametrize("seed", range(10))
def test_the_run_precheck_only_drops_runs_the_entropy_judge_drops(seed: int) -> None:
    from toolkit.privacy.secrets import entropy_candidate, mixed_run

    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/_-"
    kept = 0
    for _ in range(3000):
        pool = rng.choice([alphabet, alphabet[:26] + "0123456789", alphabet[26:], alphabet[:52], alphabet])
        run = "".join(rng.choice(pool) for _ in range(rng.randrange(24, 60))) + "=" * rng.randrange(3)
        if entropy_candidate(run):
            kept += 1
            assert mixed_run(run.encode("ascii")), run
    assert kept > 100  # the check was exercised on runs the judge keeps


def test_small_texts_use_substring_searches_until_the_passes_are_compiled() -> None:
    from toolkit.privacy import needles

    needles.present_literals(b"")
    finder = needles._FINDER[0]
    saved = finder._passes
    try:
        finder._passes = None
        small = b"x ghp_ AKIA sk-ant- y"
        assert needles.present_literals(small) == frozenset(w for w in LITERALS if w.encode() in small)
        assert finder._passes is None  # a small text did not compile the passes
        large = small + b" " * needles.SMALL_TEXT
        assert needles.present_literals(large) == frozenset(w for w in LITERALS if w.encode() in large)
        assert finder._passes is not None
    finally:
        finder._passes = saved


def test_dense_trigger_hits_end_in_substring_searches_with_the_same_answer() -> None:
    finder = NeedleFinder(LITERALS)
    for text in ("A" * 200_000 + " AKIA ghp_", "sk-" * 100_000 + "sk-ant-", "AKIA" * 50_000):
        data = text.encode("ascii")
        assert finder.present(data) == frozenset(w for w in LITERALS if w in text)


def test_relative_paths_without_pathlib_equal_pathlib(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    from pathlib import Path

    from toolkit.privacy.files import relative_to_root

    def by_pathlib(path: Path, root: Path) -> str:
        try:
            return Path(os.path.abspath(path)).relative_to(root).as_posix()
        except ValueError:
            return path.as_posix()

    monkeypatch.chdir(str(tmp_path))
    here = str(tmp_path)
    roots = [
        Path(here),
        Path("/"),
        Path(here + "/"),
        Path("rel"),
        Path(here + "/../" + Path(here).name),
        Path("//x"),
    ]
    paths = [
        Path(here + "/a/b.txt"),
        Path("a/b"),
        Path(here),
        Path(here + "x/a"),
        Path("./x/../y"),
        Path("/"),
    ]
    paths += [Path(here + "/a b/\u00e9.md"), Path("//tmp/a")]
    for root in roots:
        for path in paths:
            assert relative_to_root(path, root) == by_pathlib(path, root), (root, path)
