"""The shipped collector configuration and Grafana dashboard fit what the export really produces."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from toolkit.otel.spans import (
    SOURCE_DECISION,
    Skipped,
    SpanRecord,
    cm_span,
    decision_span,
    efficiency_span,
    metrics_for,
)

ROOT = Path(__file__).resolve().parents[2]
OTEL_DOCS = ROOT / "docs" / "otel"


def _spans() -> list[SpanRecord]:
    skipped = Skipped()
    row = {
        "event": "model_usage",
        "phase": "complete",
        "event_id": "e-1",
        "run_id": "run-20260730-aaaa",
        "at": "2026-07-30T12:00:05Z",
        "workflow": "cm-ai",
        "runtime": "codex",
        "stage": "build",
        "role": "coder",
        "adapter": "manual",
        "requested_model": "gpt-5",
        "source": "api",
        "purpose": "cm-ai:build",
        "call_id": "c-1",
        "usage_state": "observed",
        "outcome": "error",
        "duration_ms": 20,
        "input_tokens": 5,
        "output_tokens": 1,
        "cache_read_tokens": 2,
        "cache_write_tokens": 1,
    }
    event = {
        "schema": "knowzcode.efficiency-event/v1",
        "event": "worker_usage",
        "observed_at": "2026-07-30T12:00:00Z",
        "provider": "claude",
        "model": "sonnet",
        "mode": "fresh-capsule",
        "reason_codes": ["INDEPENDENT_CAPSULE"],
        "billed": {"uncached_input_tokens": 3, "output_tokens": 1, "accounting_source": "authoritative"},
    }
    decision = {
        "op": "dispatch",
        "mode": "local",
        "reason_codes": ["LOCAL_CHEAPER"],
        "at": "2026-07-30T12:00:00Z",
    }
    spans = [
        cm_span(row, skipped),
        efficiency_span(event, "k#0", skipped),
        decision_span(decision, "d", skipped),
    ]
    assert skipped.total == 0, skipped.reasons
    return [span for span in spans if span is not None]


def _prometheus_names() -> tuple[set[str], set[str]]:
    """Metric and label names as the collector's Prometheus exporter writes them (suffixes added)."""
    names: set[str] = set()
    labels = {"le", "workgroup_repository_id", "service_name", "job", "instance"}
    for metric in metrics_for(_spans()):
        base = metric.name.replace(".", "_")
        if metric.histogram:
            base += "_seconds" if metric.unit == "s" else ""
            names.update(f"{base}_{suffix}" for suffix in ("bucket", "sum", "count"))
        else:
            names.add(f"{base}_total")
        for key in metric.points:
            labels.update(name.replace(".", "_") for name, _value in key)
    return names, labels


def _spanmetrics(collector: dict[str, Any]) -> tuple[set[str], set[str]]:
    config = collector["connectors"]["spanmetrics"]
    prefix = config["namespace"].replace(".", "_")
    dims = {dim["name"].replace(".", "_") for dim in config["dimensions"]}
    span_attrs: set[str] = set()
    for span in _spans():
        span_attrs.update(key.replace(".", "_") for key in span.attributes)
    assert dims <= span_attrs | {"error_type"}, dims - span_attrs  # every dimension is an attribute we send
    return {f"{prefix}_calls_total", f"{prefix}_duration_milliseconds_bucket"}, dims | {
        "span_name",
        "status_code",
    }


def test_collector_pipelines_use_only_defined_components() -> None:
    collector = yaml.safe_load((OTEL_DOCS / "collector.yaml").read_text(encoding="utf-8"))
    defined = {
        kind: set(collector.get(kind, {})) for kind in ("receivers", "processors", "exporters", "connectors")
    }
    pipelines = collector["service"]["pipelines"]
    assert {"traces", "metrics"} <= set(pipelines)
    for pipeline in pipelines.values():
        assert set(pipeline["receivers"]) <= defined["receivers"] | defined["connectors"]
        assert set(pipeline.get("processors", [])) <= defined["processors"]
        assert set(pipeline["exporters"]) <= defined["exporters"] | defined["connectors"]
    http = collector["receivers"]["otlp"]["protocols"]["http"]["endpoint"]
    assert http.endswith(":4318")  # the export's default port
    assert (
        "spanmetrics" in pipelines["traces"]["exporters"]
        and "spanmetrics" in pipelines["metrics"]["receivers"]
    )


def test_dashboard_queries_name_metrics_and_labels_the_export_produces() -> None:
    collector = yaml.safe_load((OTEL_DOCS / "collector.yaml").read_text(encoding="utf-8"))
    dashboard = json.loads((OTEL_DOCS / "grafana-dashboard.json").read_text(encoding="utf-8"))
    names, labels = _prometheus_names()
    span_names, span_labels = _spanmetrics(collector)
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    assert len(exprs) >= 8
    used_metrics: set[str] = set()
    used_labels: set[str] = set()
    for expr in exprs:
        used_metrics.update(re.findall(r"([a-z_]+)\{", expr))
        for group in re.findall(r"by \(([^)]*)\)", expr):
            used_labels.update(label.strip() for label in group.split(","))
        used_labels.update(re.findall(r"([a-z_]+)(?:=~|!=|=)\"", expr))
    assert used_metrics <= names | span_names, used_metrics - names - span_names
    assert used_labels <= labels | span_labels, used_labels - labels - span_labels
    assert {
        "gen_ai_client_token_usage_sum",
        "gen_ai_client_operation_duration_seconds_bucket",
    } <= used_metrics
    assert any(span.source == SOURCE_DECISION for span in _spans())
