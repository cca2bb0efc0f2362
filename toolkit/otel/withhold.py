"""The last step before anything leaves the machine: every string passes the privacy engine's
telemetry context, and a value that fails is replaced by a bounded pseudonym (standard library only).

What is checked: every span's name, string attributes (and the strings of list attributes) and
error type, every metric point's attributes, and every resource attribute (including those of
``OTEL_RESOURCE_ATTRIBUTES`` and ``OTEL_SERVICE_NAME``). A value the engine flags becomes
``withheld:<8 hex>``: the first 32 bits of an HMAC-SHA256 of the value under a per-repository key
(``pseudonym-key`` in the export's local state, created once, never committed or sent), so equal
values still group together in a backend while the value itself, or a guess checked against it
without the key, never leaves. Without a usable key (or in a dry run) the pseudonym is keyed with
random bytes for this run only. ``count`` is how many values were replaced; the export reports it.

Two attributes carry the workflow's own identifiers (the CM run and call ids, the workgroup id);
a ``run-2026...``-shaped value is what they are, so the session-like-id shape alone does not
withhold them there; anything else the engine finds in them (an email, a path, a secret) does.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from toolkit.core.errors import ToolkitError
from toolkit.infra.boundedio import FileRefused, read_regular
from toolkit.infra.store import create_exclusive
from toolkit.otel.spans import AttrValue, MetricRecord, SpanRecord
from toolkit.privacy import Context, scan_text

PREFIX = "withheld:"
KEY_FILE = "pseudonym-key"
IDENTIFIER_ATTRIBUTES = frozenset({"workgroup.run.id", "workgroup.cm.call_id", "workgroup.id"})
_ID_SHAPE_RULES = frozenset({"telemetry-id"})
_MAX_CACHE = 100_000


def load_key(otel_dir: Path) -> bytes | None:
    """The per-repository pseudonym key (created on first use); None when it cannot be had."""

    path = otel_dir / KEY_FILE
    try:
        if not os.path.lexists(path):
            create_exclusive(path, os.urandom(32).hex())
        raw = read_regular(path, limit=4096, what="the pseudonym key", follow_symlinks=False)
    except (OSError, FileRefused, ToolkitError):
        return None
    key = (raw or b"").strip()
    return key if len(key) >= 32 else None


class Withholder:
    """Replaces what the telemetry context flags; counts what it replaced."""

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key if key else os.urandom(32)
        self.count = 0
        self._rules: dict[str, frozenset[str]] = {}

    def _findings(self, text: str) -> frozenset[str]:
        rules = self._rules.get(text)
        if rules is None:
            rules = frozenset(finding.rule for finding in scan_text(text, Context.TELEMETRY))
            if len(self._rules) < _MAX_CACHE:
                self._rules[text] = rules
        return rules

    def pseudonym(self, text: str) -> str:
        mac = hmac.new(
            self.key,
            b"workgroup-toolkit/otel/withheld\0" + text.encode("utf-8", "surrogatepass"),
            hashlib.sha256,
        )
        return PREFIX + mac.hexdigest()[:8]

    def text(self, value: str, name: str = "") -> str:
        """``value`` unchanged when the telemetry context finds nothing in it, else its pseudonym."""
        if not value:
            return value
        rules = self._findings(value)
        if name in IDENTIFIER_ATTRIBUTES:
            rules = rules - _ID_SHAPE_RULES
        if not rules:
            return value
        self.count += 1
        return self.pseudonym(value)

    def attributes(self, attrs: Mapping[str, AttrValue]) -> dict[str, AttrValue]:
        out: dict[str, AttrValue] = {}
        for name, value in attrs.items():
            if isinstance(value, str):
                out[name] = self.text(value, name)
            elif isinstance(value, tuple):
                out[name] = tuple(self.text(item, name) if isinstance(item, str) else item for item in value)
            else:
                out[name] = value
        return out

    def resource(self, attrs: Mapping[str, str]) -> dict[str, str]:
        """Resource attributes; a pair whose own name is flagged (``/home/...=x``) is dropped."""
        out: dict[str, str] = {}
        for name, value in attrs.items():
            if self._findings(name):
                self.count += 1
                continue
            out[name] = self.text(value, name)
        return out

    def span(self, span: SpanRecord) -> SpanRecord:
        return replace(
            span,
            name=self.text(span.name),
            attributes=self.attributes(span.attributes),
            error=None if span.error is None else self.text(span.error),
        )

    def spans(self, spans: Iterable[SpanRecord]) -> list[SpanRecord]:
        return [self.span(span) for span in spans]

    def metrics(self, metrics: Iterable[MetricRecord]) -> list[MetricRecord]:
        """Metric point attributes checked too (derived from checked spans, so normally clean)."""
        out = []
        for metric in metrics:
            points = {}
            for key, point in metric.points.items():
                clean = tuple((name, self.text(value, name)) for name, value in key)
                points[tuple(sorted(clean))] = point  # equal pseudonyms of one value keep one point
            out.append(replace(metric, points=points))
        return out
