"""The runtime's one adapter (toolkit/runtime/adapter.py): the clock, the environment and the
repository reads reach the decisions only through ``RuntimeContext``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from support.harness import GitRepo
from support.lineage_fixtures import hot_current, hot_lineage
from support.promotion_data import pairs

from toolkit.runtime.adapter import RuntimeContext
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.protocol import execute


def _clock(moment: datetime) -> RuntimeContext:
    return RuntimeContext(environ={}, clock=lambda: moment)


def test_lineage_without_now_asks_the_context_clock() -> None:
    request = {"lineage": hot_lineage(), "current": hot_current()}  # lease until 08:30
    before = execute("lineage", request, _clock(datetime(2026, 7, 30, 8, 20, tzinfo=UTC)))
    after = execute("lineage", request, _clock(datetime(2026, 7, 30, 8, 31, tzinfo=UTC)))
    assert before["result"]["state"] == "HOT"
    assert after["result"]["state"] == "COLD_VALID"


def test_promotion_without_now_is_evaluated_at_the_context_clock() -> None:
    frame = execute("promotion", {"pairs": pairs()}, _clock(datetime(2031, 1, 2, 3, 4, 5, tzinfo=UTC)))
    assert frame["result"]["evaluated_at"] == "2031-01-02T03:04:05Z"


def test_environment_comes_from_the_context(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKGROUP_ADAPTER_PROBE", "from-os")
    assert RuntimeContext().env("WORKGROUP_ADAPTER_PROBE") == "from-os"
    assert RuntimeContext(environ={}).env("WORKGROUP_ADAPTER_PROBE") is None
    assert (
        RuntimeContext(environ={"WORKGROUP_ADAPTER_PROBE": "given"}).env("WORKGROUP_ADAPTER_PROBE") == "given"
    )


def test_the_context_is_frozen() -> None:
    ctx = RuntimeContext(cwd="/somewhere")
    with pytest.raises(AttributeError):
        ctx.cwd = "/elsewhere"
    assert ctx.cwd == "/somewhere" and repr(ctx) == "RuntimeContext(cwd='/somewhere')"


def test_repository_reads(git_repo: GitRepo, tmp_path: object) -> None:
    git_repo.commit("init", {"src/api.py": "x = 1\n", "src/db.py": "y = 2\n", "docs/a.md": "a\n"})
    ctx = RuntimeContext(cwd=str(git_repo.path), environ={})
    workdir, data = ctx.writer_registry() or ("", None)
    assert workdir and data == {"writers": []}  # no registry file yet: an empty one
    assert ctx.owned_glob_matches(["src/*.py"], str(git_repo.path)) == ["src/api.py", "src/db.py"]
    # relative to the root given, which may be a sub-directory of the work tree
    assert ctx.owned_glob_matches(["src/*.py"], str(git_repo.path / "src")) == ["api.py", "db.py"]
    assert ctx.replay_state() == ([], [])
    canon = ctx.canonicalizer(str(git_repo.path))
    assert ctx.canonicalizer(str(git_repo.path)) is canon  # one per root and context


def test_outside_a_repository(tmp_path: object) -> None:
    ctx = RuntimeContext(cwd=str(tmp_path), environ={})
    assert ctx.writer_registry() is None and ctx.replay_state() == ([], [])
    with pytest.raises(RuntimeOpError) as caught:
        ctx.owned_glob_matches(["*.py"], str(tmp_path))
    assert caught.value.code == "ENVIRONMENT_ERROR"


def test_the_clock_in_microseconds_is_the_same_instant_as_now() -> None:
    # the registry index compares leases in integer microseconds; the context reads them from the
    # system clock without importing datetime, flooring as datetime.now does
    from toolkit.core.owners_index import micros
    from toolkit.infra.clock import now_utc

    moment = datetime(2031, 1, 2, 3, 4, 5, 678_901, tzinfo=UTC)
    assert _clock(moment).now_micros() == micros(moment) == 1_925_089_445_678_901
    ctx = RuntimeContext(environ={})
    before = micros(now_utc())
    read = ctx.now_micros()
    after = micros(now_utc())
    assert before <= read <= after
