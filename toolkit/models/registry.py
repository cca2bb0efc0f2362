"""Every file format defined by a pydantic model, and the schema file it is exported to.

``workgroup schemas export`` writes ``schemas/<name>`` from these; a test fails when the
committed schemas differ from the models. Add one line per model you own.
"""

from __future__ import annotations

SCHEMA_MODELS: dict[str, str] = {
    "agent-lineage.schema.json": "toolkit.models.lineage:AgentLineage",
    "config.schema.json": "toolkit.models.config:WorkgroupConfig",
    "context-capsule.schema.json": "toolkit.models.capsule:ContextCapsule",
    "efficiency-event.schema.json": "toolkit.models.telemetry:EfficiencyEvent",
    "measurement-envelope.schema.json": "toolkit.models.promotion:MeasurementEnvelope",
    "paired-results.schema.json": "toolkit.models.promotion:PairedResults",
    "corpus-scenario.schema.json": "toolkit.models.corpus:Scenario",
    "role-packet.schema.json": "toolkit.models.packet:AdapterInput",
    "usage-event.schema.json": "toolkit.models.cm_event:UsageEvent",
    "route-request.schema.json": "toolkit.models.route:RouteRequest",
    "budget-request.schema.json": "toolkit.models.budget:BudgetRequest",
    "verification-plan-request.schema.json": "toolkit.models.budget:VerificationPlanRequest",
    "promotion-request.schema.json": "toolkit.models.promotion:PromotionRequest",
    "should-deep-query-request.schema.json": "toolkit.models.deep_query:ShouldDeepQueryRequest",
}
