#!/usr/bin/env bash
# The README's main-job command: creates .venv if needed, installs the toolkit, runs `workgroup demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e .
exec .venv/bin/workgroup demo "$@"
