"""The identifier patterns shared across the toolkit, one home each (pure, standard library only).

``MEASUREMENT_RUN_ID``: a promotion measurement run (``measurement-`` + 16 to 64 hex digits), the
id the replay ledger consumes; ``FULL_SHA``: a full 40-hex git commit id; ``PSEUDONYM``: a
pseudonymized handle (``anon-`` + 16 to 64 hex digits); ``CM_RUN_ID``: a CM Workflow run id
(8 to 128 characters of letters, digits, ``.``, ``_``, ``-``, starting with a letter or digit).
"""

from __future__ import annotations

import re

MEASUREMENT_RUN_ID = re.compile(r"^measurement-[a-f0-9]{16,64}\Z")
FULL_SHA = re.compile(r"^[0-9a-f]{40}\Z")
PSEUDONYM = re.compile(r"^anon-[0-9a-f]{16,64}\Z")
CM_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{7,127}$")
