"""Operations telemetry: one ``channel_context_op`` record per feed and tool call, and
the ingest endpoints' counters.

Each ``channel_context_op`` record is a JSON log line (logger ``channel_memory.ops``)
and updates the Prometheus metrics served at ``/metrics``. Records hold counts, sizes,
statuses and the consumer's agent id — never message content, author names, query
text or channel ids in metric labels.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict
from functools import wraps
from typing import TYPE_CHECKING, Protocol, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from starlette.requests import Request
from starlette.responses import Response

from channel_memory.ingest.commands import (
    AddCoverageGap,
    Command,
    DeleteMessage,
    ForgetMessages,
    PutMessage,
    ResolveCoverageGap,
)
from channel_memory.kernel.errors import ApiError
from channel_memory.kernel.ops import ContextOp
from channel_memory.kernel.principal import Principal
from channel_memory.store.database import StorageError

if TYPE_CHECKING:
    from channel_memory.ingest.service import IngestReport

log = logging.getLogger("channel_memory.ops")


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

        self.ingest_events = Counter(
            "channel_memory_ingest_events",
            "Events in accepted ingest requests, by event type",
            ["type"],
            registry=self.registry,
        )
        self.ingest_inserted = Counter(
            "channel_memory_ingest_versions_inserted",
            "Message versions stored by ingest (new messages, edits, delete markers)",
            registry=self.registry,
        )
        self.ingest_duplicates = Counter(
            "channel_memory_ingest_duplicates",
            "Message events that were already stored (idempotent re-sends)",
            registry=self.registry,
        )
        self.ingest_ignored_forgotten = Counter(
            "channel_memory_ingest_ignored_forgotten",
            "Message events for forgotten messages, not stored",
            registry=self.registry,
        )
        self.ingest_refused = Counter(
            "channel_memory_ingest_refused",
            "Ingest requests answered with an error (nothing written), by endpoint and code",
            ["endpoint", "code"],
            registry=self.registry,
        )
        self.ingest_latency = Histogram(
            "channel_memory_ingest_latency_seconds",
            "Ingest request latency by endpoint and outcome (accepted, refused)",
            ["endpoint", "outcome"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
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
        self.llm_promotions = Counter(
            "channel_memory_llm_promotions",
            "Messages model-assisted detection promoted to hard events",
            registry=self.registry,
        )

    def llm_call(self, outcome: str, usd: float) -> None:
        """One LLM call ended (the worker's LLM processor reports it)."""
        self.llm_calls.labels(outcome).inc()
        self.llm_usd.inc(usd)

    def llm_promoted(self, count: int) -> None:
        """Model-assisted detection promoted ``count`` messages to hard events."""
        self.llm_promotions.inc(count)

    def llm_state(self, calls_today: int, usd_today: float, capped: bool, breaker: bool) -> None:
        """Spend against the caps after an LLM pass."""
        self.llm_calls_today.set(calls_today)
        self.llm_usd_today.set(usd_today)
        self.llm_capped.set(int(capped))
        self.llm_breaker_open.set(int(breaker))

    def ingest_applied(self, commands: Iterable[Command], report: IngestReport) -> None:
        """An ingest request was committed: its events by type, and what they stored."""
        for command in commands:
            self.ingest_events.labels(event_type(command)).inc()
        self.ingest_inserted.inc(report.inserted)
        self.ingest_duplicates.inc(report.duplicates)
        self.ingest_ignored_forgotten.inc(report.ignored_forgotten)

    def record(self, op: ContextOp) -> None:
        """Count the call in the metrics and write its one ``channel_context_op`` log line."""
        self.ops.labels(op.type, op.status or "-", str(op.status_code)).inc()
        self.latency.labels(op.type).observe(op.latency_ms / 1000)
        self.bytes.labels(op.type, "raw").inc(op.raw_bytes)
        self.bytes.labels(op.type, "digest").inc(op.digest_bytes)
        self.omitted.labels(op.type).inc(max(0, op.omitted))  # never fail a served answer
        fields = {"event": "channel_context_op", **asdict(op)}
        # the message is the line itself (for any handler); a JSON-lines formatter uses fields
        log.info("%s", json.dumps(fields, sort_keys=True), extra={"fields": fields})


_EVENT_TYPES: dict[type, str] = {
    PutMessage: "message",
    DeleteMessage: "delete",
    ForgetMessages: "forget",
    AddCoverageGap: "coverage_gap",
    ResolveCoverageGap: "coverage_gap_resolved",
}


def event_type(command: Command) -> str:
    """The native event type a write command stands for (the metric's ``type`` label)."""
    return _EVENT_TYPES[type(command)]


class Measured(Protocol):
    """What a metered handler's context offers: the telemetry it counts into (the
    application's context; a protocol so this module need not import it)."""

    @property
    def telemetry(self) -> Telemetry: ...


Ctx = TypeVar("Ctx", bound=Measured)
IngestHandler = Callable[[Request, Ctx, Principal], Awaitable[Response]]


def refusal_code(exc: Exception) -> str:
    """The error code the answer to a request that raised ``exc`` carries."""
    if isinstance(exc, ApiError | StorageError):
        return exc.code
    return "internal_error"  # what the application answers to anything unexpected


def metered(endpoint: str, handler: IngestHandler[Ctx]) -> IngestHandler[Ctx]:
    """``handler`` with its latency observed and its refusals counted by error code.

    What an accepted request stored is counted where it is committed
    (:meth:`Telemetry.ingest_applied`).
    """

    @wraps(handler)
    async def measured(request: Request, ctx: Ctx, principal: Principal) -> Response:
        started = time.perf_counter()
        outcome = "refused"
        try:
            response = await handler(request, ctx, principal)
            outcome = "accepted"
            return response
        except Exception as exc:
            ctx.telemetry.ingest_refused.labels(endpoint, refusal_code(exc)).inc()
            raise
        finally:
            elapsed = time.perf_counter() - started
            ctx.telemetry.ingest_latency.labels(endpoint, outcome).observe(elapsed)

    return measured


Build = Callable[[dict[str, str]], list[Command]]


def counting(build: Build) -> tuple[Build, list[Command]]:
    """``build``, keeping the commands of its last call in the returned list (for
    :meth:`Telemetry.ingest_applied` once they are committed)."""
    built: list[Command] = []

    def kept(kinds: dict[str, str]) -> list[Command]:
        built[:] = build(kinds)
        return built

    return kept, built
