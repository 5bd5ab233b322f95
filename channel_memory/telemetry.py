"""Operations telemetry: one ``channel_context_op`` record per feed and tool call.

Each record is a JSON log line (logger ``channel_memory.ops``) and updates the
Prometheus metrics served at ``/metrics``. Records hold counts, sizes, statuses
and the consumer's agent id — never message content, author names, query text
or channel ids in metric labels.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from channel_memory.timefmt import format_rfc3339

log = logging.getLogger("channel_memory.ops")


@dataclass(slots=True)
class ContextOp:
    """The fields of DESIGN section 8."""

    ts: str
    type: str
    consumer: str
    kind: str | None = None
    channels: list[str] = field(default_factory=list)
    retained: int = 0
    returned: int = 0
    omitted: int = 0
    raw_bytes: int = 0
    digest_bytes: int = 0
    digest_blocks: int = 0
    coverage_gaps: int = 0
    deterministic_only: bool = True
    status: str | None = None
    tool_name: str | None = None
    latency_ms: float = 0.0
    status_code: int = 200
    error: str | None = None


class Telemetry:
    """Metrics in their own registry (so several apps in one process do not collide)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.ops = Counter(
            "channel_context_ops",
            "Feed and tool calls",
            ["type", "status", "status_code"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "channel_context_latency_seconds",
            "Feed and tool call latency",
            ["type"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
            registry=self.registry,
        )
        self.bytes = Counter(
            "channel_context_served_chars",
            "Characters served, by section",
            ["type", "section"],
            registry=self.registry,
        )
        self.omitted = Counter(
            "channel_context_omitted_messages",
            "Messages neither shown nor covered by a served block",
            ["type"],
            registry=self.registry,
        )
        self.queue_depth = Gauge(
            "channel_memory_worker_queue_depth",
            "Messages with unprocessed changes",
            registry=self.registry,
        )
        self.worker_lag = Gauge(
            "channel_memory_worker_lag_seconds",
            "Age of the oldest unprocessed change",
            registry=self.registry,
        )
        self.blocks_written = Counter(
            "channel_memory_worker_blocks_written",
            "Blocks written by the worker",
            registry=self.registry,
        )

        self.llm_calls = Counter(
            "channel_memory_llm_calls",
            "LLM calls by outcome (ok, rejected, failed)",
            ["outcome"],
            registry=self.registry,
        )
        self.llm_usd = Counter(
            "channel_memory_llm_cost_usd", "LLM spend recorded, in USD", registry=self.registry
        )
        self.llm_calls_today = Gauge(
            "channel_memory_llm_calls_today",
            "LLM calls today (UTC), deployment-wide; compare llm.calls_per_day",
            registry=self.registry,
        )
        self.llm_usd_today = Gauge(
            "channel_memory_llm_usd_today",
            "LLM spend today (UTC) in USD, deployment-wide; compare llm.usd_per_day",
            registry=self.registry,
        )
        self.llm_capped = Gauge(
            "channel_memory_llm_capped",
            "1 when a daily LLM cap stopped calls today (any channel or the deployment)",
            registry=self.registry,
        )
        self.llm_breaker_open = Gauge(
            "channel_memory_llm_breaker_open",
            "1 while repeated failures have stopped LLM calls",
            registry=self.registry,
        )

    def llm_call(self, outcome: str, usd: float) -> None:
        """One LLM call ended (the worker's LLM processor reports it)."""
        self.llm_calls.labels(outcome).inc()
        self.llm_usd.inc(usd)

    def llm_state(self, calls_today: int, usd_today: float, capped: bool, breaker: bool) -> None:
        """Spend against the caps after an LLM pass."""
        self.llm_calls_today.set(calls_today)
        self.llm_usd_today.set(usd_today)
        self.llm_capped.set(int(capped))
        self.llm_breaker_open.set(int(breaker))

    def record(self, op: ContextOp) -> None:
        self.ops.labels(op.type, op.status or "-", str(op.status_code)).inc()
        self.latency.labels(op.type).observe(op.latency_ms / 1000)
        self.bytes.labels(op.type, "raw").inc(op.raw_bytes)
        self.bytes.labels(op.type, "digest").inc(op.digest_bytes)
        self.omitted.labels(op.type).inc(op.omitted)
        log.info(json.dumps({"event": "channel_context_op", **asdict(op)}, sort_keys=True))


def now_stamp(micros: int) -> str:
    return format_rfc3339(micros)
