"""The privacy engine: typed findings for secrets, provider identifiers, raw transcripts,
home paths and emails, used by capsules, telemetry, the CM event log and handoffs, the
``workgroup privacy scan`` command and the pre-commit hooks.

Standard library only (the runtime imports it on every delegation)::

    from toolkit.privacy import scan_text, scan_value, Finding, Category, Context
    scan_text(text, Context.CAPSULE) -> list[Finding]
    scan_value(obj, Context.TELEMETRY) -> list[Finding]
"""

from __future__ import annotations

from toolkit.privacy.engine import RULE_IDS, scan_text, scan_value
from toolkit.privacy.types import Category, Context, Finding, mask

__all__ = ["RULE_IDS", "Category", "Context", "Finding", "mask", "scan_text", "scan_value"]
