"""Owned-path canonicalization, the overlap index and owned globs (toolkit/core/ownership.py,
toolkit/infra/paths.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.core.ownership import (
    OverlapIndex,
    OwnershipPathError,
    check_globs,
    expand_globs,
    fold,
    glob_literal_prefix,
    overlaps,
)
from toolkit.infra.paths import Canonicalizer, canonical_path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace with src/api.py, a symlinked alias dir, a file symlink and an escaping link."""
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "api.py").write_text("x\n", encoding="utf-8")
    (ws / "alias").symlink_to(ws / "src", target_is_directory=True)
    (ws / "api_link.py").symlink_to(ws / "src" / "api.py")
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "escape").symlink_to(outside, target_is_directory=True)
    (ws / "escape_file").symlink_to(outside / "secret.txt")
    return ws


ALIASES = [
    ("./src/api.py", "src/api.py"),  # leading ./ is the same file
    ("src//api.py", "src/api.py"),  # empty segment collapses
    ("src/./api.py", "src/api.py"),  # . segment vanishes
    ("src\\api.py", "src/api.py"),  # backslash is a separator
    ("src/api.py/", "src/api.py"),  # trailing slash stripped
    ("SRC/API.PY", "src/api.py"),  # case folded for comparison
    ("ｓｒｃ/api.py", "src/api.py"),  # NFKC: fullwidth letters
    ("src/tmp/../api.py", "src/api.py"),  # .. inside the root resolves
    ("alias/api.py", "src/api.py"),  # directory symlink resolves to its target
    ("api_link.py", "src/api.py"),  # file symlink resolves to its target
    ("alias/../src/api.py", "src/api.py"),  # .. after a symlink follows the link (physical)
]


@pytest.mark.parametrize(("alias", "target"), ALIASES)
def test_aliases_share_one_key(root: Path, alias: str, target: str) -> None:
    canon = Canonicalizer(str(root))
    assert canon.key(alias) == canon.key(target)
    assert overlaps(canon.key(alias), canon.key(target))


@pytest.mark.parametrize(
    ("held", "proposed", "conflict"),
    [
        ("src", "src/api.py", True),  # directory contains file
        ("src/api.py", "src", True),  # file is inside directory (either direction)
        ("src/api.py", "./SRC/api.py", True),  # alias + case
        (".", "README.md", True),  # the workspace root contains everything
        ("src/api", "src/api.py", False),  # a name prefix is not containment
        ("src/ap", "src/api.py", False),  # neither is a shorter prefix
        ("docs/notes", "docs/notes:v2.md", False),  # ':' after the first segment is a legal, distinct name
        ("alias", "src/api.py", True),  # symlinked dir contains the real file
    ],
)
def test_overlap_is_equality_or_containment(root: Path, held: str, proposed: str, conflict: bool) -> None:
    canon = Canonicalizer(str(root))
    index = OverlapIndex()
    index.add(canon.key(held), "holder")
    assert (index.find(canon.key(proposed)) is not None) is conflict
    assert overlaps(canon.key(held), canon.key(proposed)) is conflict


INVALID = [
    "",  # empty
    " src/api.py",  # padded (leading)
    "src/api.py ",  # padded (trailing)
    "\ufeffsrc/api.py",  # padded with a BOM (JavaScript's trim removes it)
    "src/api.py\u3000",  # padded with an ideographic space
    "src/a\x00b",  # NUL
    "src/a\nb",  # control character
    "src/a\x7fb",  # DEL
    "/etc/passwd",  # absolute
    "\\etc\\passwd",  # absolute after backslash conversion
    "C:/Windows",  # drive
    "c:relative",  # drive-relative
    "C:\\x",  # drive with backslash
    "https://example.com/x",  # URL scheme
    "file:src/api.py",  # scheme without slashes
    "./C:/x",  # drive hidden behind ./
    "../x",  # climbs out
    "src/../../x",  # climbs out after a segment
    "alias/../../x",  # climbs out through a symlink
    "escape/x.py",  # a symlinked directory that leads outside
    "escape_file",  # a file symlink that leads outside
    "a/" * 2048 + "x",  # longer than PATH_MAX (bounds the caches a hostile request could grow)
]


@pytest.mark.parametrize("bad", INVALID)
def test_invalid_paths_are_refused(root: Path, bad: str) -> None:
    with pytest.raises(OwnershipPathError) as caught:
        Canonicalizer(str(root)).key(bad)
    assert caught.value.code == "INVALID_OWNERSHIP_PATH"
    if bad.strip():
        assert bad not in caught.value.message  # never echoes input


def test_deep_paths_resolve_iteratively(root: Path) -> None:
    deep = "/".join(["d"] * 2000)  # far deeper than the recursion limit, within PATH_MAX
    assert Canonicalizer(str(root)).key(deep).endswith("/d/d")


@pytest.mark.parametrize("bad", [None, 3, ["src"], {"p": 1}, b"src"])
def test_non_strings_are_refused(root: Path, bad: object) -> None:
    with pytest.raises(OwnershipPathError):
        Canonicalizer(str(root)).key(bad)


def test_stored_form_is_never_rewritten_only_the_key_is_folded(root: Path) -> None:
    found = canonical_path("./SRC/Api.py", str(root))
    assert found.rel == "SRC/Api.py"  # not lower-cased
    assert found.key.endswith("/src/api.py")


def test_realpath_is_cached_per_directory(root: Path) -> None:
    canon = Canonicalizer(str(root))
    canon.keys([f"pkg/mod/file{i}.py" for i in range(100)] + [f"other/file{i}.py" for i in range(100)])
    assert set(canon._dirs) == {"", "pkg", "pkg/mod", "other"}
    assert set(canon._links) == {canon.real_root}  # no scandir under directories that do not exist


def test_index_reports_holder_and_held_key(root: Path) -> None:
    canon = Canonicalizer(str(root))
    index = OverlapIndex()
    index.add_all(canon.keys(["src/a.py", "src/b.py"]), "L1")
    index.add_all(canon.keys(["docs"]), "L2")
    assert index.find(canon.key("src")) == ("L1", canon.key("src/a.py"))
    assert index.find(canon.key("docs/x/y.md")) == ("L2", canon.key("docs"))
    assert index.find(canon.key("lib")) is None


@pytest.mark.parametrize(
    "bad",
    [
        ["!src/generated/"],  # negation is refused (pathspec would still match the files)
        ["/abs/*.py"],  # absolute
        ["../up/*.py"],  # escapes
        ["C:/x/*"],  # drive
        [""],  # empty
        [" src/*"],  # padded
        "src/*",  # not a list
    ],
)
def test_bad_globs_are_refused(bad: object) -> None:
    with pytest.raises(OwnershipPathError) as caught:
        check_globs(bad)
    assert caught.value.code == "INVALID_OWNERSHIP_GLOB"


def test_globs_expand_against_real_tracked_files(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("files", {"src/api.py": "a", "src/ui.tsx": "b", "src/deep/x.py": "c", "README.md": "r"})
    from toolkit.infra.git import discover

    tracked = discover(git_repo.path).tracked_files()
    assert expand_globs(["src/*.py"], tracked) == ["src/api.py"]
    assert expand_globs(["src/**/*.py"], tracked) == ["src/api.py", "src/deep/x.py"]
    assert expand_globs(["*.md"], tracked) == ["README.md"]
    assert glob_literal_prefix("src/deep/**/*.py") == "src/deep"


# --- hypothesis: the only error is the coded one, and keys are idempotent ----------------------

_segment = st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=0, max_size=12)
_paths = st.lists(_segment, min_size=1, max_size=5).map("/".join) | st.text(max_size=40)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_paths)
def test_canonicalization_only_raises_the_coded_error(tmp_path: Path, value: str) -> None:
    root = tmp_path / "fuzzroot"
    root.mkdir(exist_ok=True)
    canon = Canonicalizer(str(root))
    try:
        found = canon.canonical(value)
    except OwnershipPathError as exc:
        assert exc.code == "INVALID_OWNERSHIP_PATH"
        return
    assert found.key == fold(found.key)  # folding is idempotent
    assert found.key == canon.key(value)  # the fast path agrees with the general one
    if found.rel:
        again = canon.canonical(found.rel)
        assert again.key == found.key and again.rel == found.rel  # canonical form is a fixed point


def test_fused_first_overlap_agrees_with_find_and_validates_everything(root: Path) -> None:
    canon = Canonicalizer(str(root))
    index = OverlapIndex()
    index.add_all(canon.keys(["src/api.py", "docs"]), "held")
    cases = [
        (["lib/a.py", "lib/b.py"], None),  # no overlap
        (["lib/a.py", "./SRC/api.py"], "src/api.py"),  # alias, second value
        (["docs/x/y.md"], "docs"),  # held directory contains it
        (["src"], "src/api.py"),  # it contains a held file
        (["alias/api.py"], "src/api.py"),  # symlink (slow path)
    ]
    for values, held in cases:
        found = canon.first_overlap(index, values)
        expected = next((hit for v in values if (hit := index.find(canon.key(v))) is not None), None)
        assert found == expected
        assert (found is None) if held is None else (found is not None and found[1] == canon.key(held))
    with pytest.raises(OwnershipPathError):  # a later invalid path is refused even after a hit
        canon.first_overlap(index, ["src/api.py", "/etc/passwd"])


# --- hostile path tricks (issue 15): normalization before the escape checks, nothing invisible,
# nothing under .git ---

PATH_TRICKS = [
    ("\uff0e\uff0e/x", "normalize"),  # full-width dots: NFKC gives ../x
    ("\u2025/x", "normalize"),  # two-dot leader: NFKC gives ../x
    ("src/\uff0e\uff0e/\uff0e\uff0e/\uff0e\uff0e/etc", "normalize"),  # climbing with full-width dots
    ("a\uff0fb", "normalize"),  # full-width solidus: NFKC adds a separator
    ("a\uff3cb", "normalize"),  # full-width reverse solidus
    ("\uff0e/x", "normalize"),  # full-width "." segment
    ("\uff1a/x", "drive"),  # full-width colon in the first segment: a drive after NFKC
    ("src/evil\u202etxt.py", "invisible"),  # right-to-left override inside a name
    ("src/\u2066x\u2069.py", "invisible"),  # bidi isolate
    ("src/a\u200bb.py", "invisible"),  # zero-width space
    ("src/a\u00adb.py", "invisible"),  # soft hyphen
    ("src/a\u0085b.py", "invisible"),  # C1 control NEL
    ("src/a\u2028b.py", "invisible"),  # line separator inside a name
    ("src/\u3164.py", "invisible"),  # Hangul filler (looks blank)
    ("src/a\ud800b.py", "surrogate"),  # lone surrogate
    (".git/config", "git"),  # git's own files
    (".git", "git"),
    ("sub/.git/hooks/pre-commit", "git"),  # a nested repository's git dir
    (".GIT/config", "git"),  # case-folded
    ("\uff0egit/config", "normalize"),  # full-width dot: NFKC .git
]


@pytest.mark.parametrize(("value", "why"), PATH_TRICKS)
def test_path_tricks_are_refused(root: Path, value: str, why: str) -> None:
    canon = Canonicalizer(str(root))
    with pytest.raises(OwnershipPathError):
        canon.key(value)
    with pytest.raises(OwnershipPathError):
        canon.canonical(value)
    with pytest.raises(OwnershipPathError):
        canon.keys(["src/api.py", value])  # the batch path refuses it too


def test_symlink_into_dot_git_is_not_ownable(root: Path) -> None:
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / "hooks_link").symlink_to(root / ".git" / "hooks", target_is_directory=True)
    (root / "config_link").symlink_to(root / ".git" / "config")
    canon = Canonicalizer(str(root))
    for value in ("hooks_link/pre-commit", "config_link", "hooks_link"):
        with pytest.raises(OwnershipPathError):
            canon.key(value)
    # a name that merely contains ".git" stays ownable
    assert canon.canonical("docs/.github/workflow.yml").rel == "docs/.github/workflow.yml"
    assert canon.canonical("my.git/x").rel == "my.git/x"


def test_legitimate_unicode_names_are_still_ownable(root: Path) -> None:
    canon = Canonicalizer(str(root))
    assert canon.canonical("docs/caf\u00e9.md").rel == "docs/caf\u00e9.md"
    assert canon.canonical("docs/\u65e5\u672c.md").rel == "docs/\u65e5\u672c.md"
    # compatibility forms that keep the structure still compare equal to their NFKC form
    assert canon.key("\uff53rc/api.py") == canon.key("src/api.py")


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.text(alphabet=st.sampled_from("a/.\\\uff0e\u2025\uff0f\u202e\u200b:\u0085"), min_size=1, max_size=12)
)
def test_no_accepted_path_escapes_or_hides(root: Path, value: str) -> None:
    import unicodedata

    from toolkit.core.ownership import hidden_character

    canon = Canonicalizer(str(root))
    try:
        found = canon.canonical(value)
    except OwnershipPathError:
        return
    assert hidden_character(value) is None
    normal = unicodedata.normalize("NFKC", value).replace("\\", "/")
    assert ".." not in [seg for seg in normal.split("/")] or ".." in value.replace("\\", "/").split("/")
    assert not normal.startswith("/")
    assert ".git" not in fold(found.rel).split("/")


@pytest.mark.parametrize(
    "task_id",
    ["task\u0085x", "task\u202ex", "task\u200bx", "task\ud800", "task\x01"],
)
def test_capsule_op_refuses_an_id_with_hidden_characters(task_id: str) -> None:
    from test_capsule_support import in_process, valid_capsule

    for field_name in ("task_id", "workgroup_id"):
        capsule = {**valid_capsule(), field_name: task_id}
        frame = in_process("capsule", {"capsule": capsule})
        assert frame["ok"] is False and frame["code"] == "CAPSULE_SCHEMA_INVALID", frame
    assert in_process("capsule", {"capsule": valid_capsule()})["ok"] is True


@pytest.mark.parametrize(
    "glob",
    [
        ".git/**",  # git's own files
        "sub/.git/*",  # a nested repository's
        "\uff0e\uff0e/**",  # full-width dots: NFKC gives ../**
        "src\uff0f..\uff0f..\uff0f*",  # full-width slashes around ..
        "src/*\u202e.py",  # bidi override
        "src/\u200b*.py",  # zero-width space
    ],
)
def test_glob_tricks_are_refused(glob: str) -> None:
    with pytest.raises(OwnershipPathError) as info:
        check_globs([glob])
    assert info.value.code == "INVALID_OWNERSHIP_GLOB"


def test_ordinary_globs_still_pass() -> None:
    assert check_globs(["src/**/*.py", "docs/caf\u00e9/*.md", ".github/workflows/*"]) == [
        "src/**/*.py",
        "docs/caf\u00e9/*.md",
        ".github/workflows/*",
    ]
