#!/usr/bin/env bash
# The README's test command, what CI runs through .ci/run. Creates .venv if needed and installs the
# toolkit with its test extras; then, in order: ruff check, ruff format --check, mypy --strict (the
# package, then the tests), and
# the test suite under branch coverage that follows subprocesses (the floor is fail_under in
# pyproject.toml). With arguments (a subset of the tests), only pytest runs, with those arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
if [ "$#" -gt 0 ]; then
  exec .venv/bin/python -m pytest "$@"
fi
step() { printf '\n== %s\n' "$*" >&2; }
step "ruff check"
.venv/bin/ruff check .
step "ruff format --check"
.venv/bin/ruff format --check .
step "mypy --strict"
.venv/bin/mypy --strict toolkit hooks  # hooks/ is toolkit.hooks
step "mypy --strict over the tests"
# the tests patch names a module imported (appendlog.os.write) and check that modules share one
# vocabulary object (router.MODES is vocabulary.MODES): re-exports are implicit for them only
.venv/bin/mypy --strict --implicit-reexport tests
step "pytest under coverage (branches, subprocesses followed)"
rm -f .coverage .coverage.*
.venv/bin/python -m coverage run -m pytest
.venv/bin/python -m coverage combine --quiet
step "coverage report (floor: fail_under in pyproject.toml)"
.venv/bin/python -m coverage report
