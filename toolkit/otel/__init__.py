"""OpenTelemetry export of efficiency events, CM model calls and runtime decisions.

The package splits along the one rule that matters for start-up: only ``toolkit.otel.sdk`` (and
the detached ``toolkit.otel.flusher`` process that uses it) imports ``opentelemetry``; everything
else is standard library, so a toolkit installed without the ``otel`` extra, or a repository whose
config does not say ``telemetry: otlp``, never loads any of it.

* ``spans``: pure mapping of our records to neutral span and metric records (GenAI semantic
  conventions, stable ids derived from event ids, privacy projection through the shared engine).
* ``resource``: resource attributes (service, hashed repository id, workgroup, run) and
  ``OTEL_RESOURCE_ATTRIBUTES``.
* ``sources``: reading the local telemetry log and the CM logs.
* ``sdk``: neutral records to SDK objects and the OTLP/HTTP exporters.
* ``export``: ``workgroup telemetry export --otlp``.
* ``live``: the runtime path of ``telemetry: otlp`` (spool append, flusher hand-off).
* ``flusher``: the detached process that batches the spool to the collector.
"""

__all__ = [
    "export",
    "flusher",
    "live",
    "resource",
    "sdk",
    "sources",
    "spans",
    "withhold",
]
