"""Operational endpoints: /health, /metrics, /ready, /v1/stats. None carries content or
channel ids except /v1/stats, which needs the admin scope.

Each JSON answer is built through its pydantic model, so ``/openapi.json`` describes
exactly what is sent."""

from __future__ import annotations

from typing import Annotated, Literal

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import Response

from channel_memory.http.api import AppContext, Endpoint, json_response
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import MICROS_PER_SECOND, format_rfc3339, utc_day
from channel_memory.store import erasure, stats
from channel_memory.store import llm as llm_store

READY_LAG_SECONDS = 30.0

Instant = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
"""An RFC 3339 UTC instant. A string, not a datetime: the wire form is ``format_rfc3339``'s,
which pydantic's datetime would render differently."""


# --- answers --------------------------------------------------------------------------------


class Health(BaseModel):
    """``GET /health``: the process answers."""

    status: Literal["ok"] = Field(description='Always "ok".')


class Ready(BaseModel):
    """``GET /ready``: whether the worker keeps up (status 200), or not (503, same body)."""

    ready: bool = Field(
        description=f"True while the oldest unprocessed change is under "
        f"{READY_LAG_SECONDS:g} s old (status 200); false otherwise (status 503)."
    )
    queue_depth: int = Field(description="Messages with changes the worker has not processed.")
    lag_seconds: float = Field(
        description="Age of the oldest unprocessed change in seconds, to the millisecond "
        "(0 when there is none)."
    )


class RetainedRange(BaseModel):
    """The span of a channel's readable messages."""

    model_config = ConfigDict(populate_by_name=True)

    from_: Instant | None = Field(
        alias="from",
        description="created_at of the oldest readable message; null when there is none.",
    )
    to: Instant | None = Field(
        description="created_at of the newest readable message; null when there is none."
    )
    retention_cutoff: Instant | None = Field(
        description="Messages created before this instant were dropped by retention; null "
        "until retention has run."
    )


class LlmSpend(BaseModel):
    """Model calls and spend today (UTC day) against the caps."""

    calls_today: int = Field(description="Model calls made today (failed ones included).")
    usd_today: float = Field(description="Spend today in USD, to 6 decimals.")
    failures_today: int = Field(description="Calls that failed today.")
    rejected_today: int = Field(
        description="Answers rejected today (not JSON, wrong shape, wrong citations, …)."
    )
    cache_hits_today: int = Field(description="Windows served from the cache without a call.")
    calls_cap: int = Field(
        description="The cap on calls per day (llm.calls_per_channel_day for a channel, "
        "llm.calls_per_day for the deployment)."
    )
    usd_cap: float = Field(
        description="The cap on USD per day (llm.usd_per_channel_day for a channel, "
        "llm.usd_per_day for the deployment)."
    )
    capped: str | None = Field(
        description="The cap that stopped calls today (calls_per_day, usd_per_day, "
        "calls_per_channel_day or usd_per_channel_day); null when none did."
    )
    promotions: int = Field(
        description="Messages served as hard events because model-assisted detection promoted them."
    )


class ChannelStats(BaseModel):
    """One channel's figures."""

    channel_id: str = Field(description="The channel.")
    source_kind: str = Field(description="The source the channel's messages come from.")
    retained: RetainedRange = Field(description="The span of its readable messages.")
    messages: int = Field(description="Readable messages (current versions, not deleted).")
    blocks: dict[str, int] = Field(description="Recall blocks by kind.")
    dirty_backlog: int = Field(description="Messages with changes the worker has not processed.")
    open_coverage_gaps: int = Field(description="Coverage gaps not resolved yet.")
    llm: LlmSpend = Field(description="The channel's model calls and spend against its caps.")


class WorkerBacklog(BaseModel):
    """The worker's backlog over every channel."""

    queue_depth: int = Field(description="Messages with changes the worker has not processed.")
    oldest_change: Instant | None = Field(
        description="When the oldest unprocessed change was made; null when there is none."
    )


class _LlmSettings(BaseModel):
    # A base class only so that these two fields come first in the answer (pydantic orders
    # inherited fields by the reversed MRO: this class's, then LlmSpend's).
    enabled: bool = Field(description="Whether the LLM processor is enabled (llm.enabled).")
    model: str | None = Field(description="The configured model (llm.model); null when unset.")


class DeploymentLlm(LlmSpend, _LlmSettings):
    """The deployment's model calls and spend against its caps, over every channel."""


class Stats(BaseModel):
    """``GET /v1/stats``: per channel figures, the worker's backlog, erasures, LLM spend."""

    channels: list[ChannelStats] = Field(description="Every channel, ordered by channel_id.")
    worker: WorkerBacklog = Field(description="The worker's backlog.")
    pending_erasures: int = Field(
        description="Forgets whose physical erasure (index merge, WAL truncation) is owed."
    )
    llm: DeploymentLlm = Field(description="The deployment's model calls and spend.")


# --- handlers -------------------------------------------------------------------------------


async def health(request: Request, ctx: AppContext, principal: Principal) -> Response:
    return json_response(Health(status="ok"))


async def _refresh_worker_gauges(ctx: AppContext) -> tuple[int, float]:
    async with ctx.store.read() as conn:
        depth, oldest = await stats.backlog(conn)
    lag = 0.0 if oldest is None else max(0.0, (ctx.clock() - oldest) / MICROS_PER_SECOND)
    ctx.telemetry.queue_depth.set(depth)
    ctx.telemetry.worker_lag.set(lag)
    return depth, lag


async def metrics(request: Request, ctx: AppContext, principal: Principal) -> Response:
    await _refresh_worker_gauges(ctx)
    return Response(generate_latest(ctx.telemetry.registry), media_type=CONTENT_TYPE_LATEST)


async def ready(request: Request, ctx: AppContext, principal: Principal) -> Response:
    """200 while the worker keeps up (oldest unprocessed change under 30 s), else 503."""
    depth, lag = await _refresh_worker_gauges(ctx)
    keeping_up = lag < READY_LAG_SECONDS
    body = Ready(ready=keeping_up, queue_depth=depth, lag_seconds=round(lag, 3))
    return json_response(body, 200 if keeping_up else 503)


def _time(micros: int | None) -> str | None:
    return None if micros is None else format_rfc3339(micros)


def _spend(usage: llm_store.Usage, calls_cap: int, usd_cap: float, promotions: int) -> LlmSpend:
    return LlmSpend(
        calls_today=usage.calls,
        usd_today=round(usage.usd, 6),
        failures_today=usage.failures,
        rejected_today=usage.rejected,
        cache_hits_today=usage.cache_hits,
        calls_cap=calls_cap,
        usd_cap=usd_cap,
        capped=usage.capped,
        promotions=promotions,
    )


async def stats_endpoint(request: Request, ctx: AppContext, principal: Principal) -> Response:
    principal.require("admin")
    async with ctx.store.read() as conn:
        channels = await stats.channel_stats(conn)
        owed = await erasure.pending_erasures(conn)
        depth, oldest = await stats.backlog(conn)
        spend = await llm_store.spend_by_channel(conn, utc_day(ctx.clock()))
    caps = ctx.settings.llm
    body = Stats(
        channels=[
            ChannelStats(
                channel_id=c["channel_id"],
                source_kind=c["source_kind"],
                retained=RetainedRange(
                    from_=_time(c["oldest_us"]),
                    to=_time(c["newest_us"]),
                    retention_cutoff=_time(c["retained_from_us"]),
                ),
                messages=c["messages"],
                blocks=c["blocks"],
                dirty_backlog=c["dirty_backlog"],
                open_coverage_gaps=c["open_gaps"],
                llm=_spend(
                    spend.get(c["channel_id"], llm_store.Usage()),
                    caps.calls_per_channel_day,
                    caps.usd_per_channel_day,
                    c["promotions"],
                ),
            )
            for c in channels
        ],
        worker=WorkerBacklog(queue_depth=depth, oldest_change=_time(oldest)),
        pending_erasures=owed,
        llm=DeploymentLlm(
            enabled=caps.enabled,
            model=caps.model,
            **_spend(
                spend.get(llm_store.DEPLOYMENT, llm_store.Usage()),
                caps.calls_per_day,
                caps.usd_per_day,
                sum(c["promotions"] for c in channels),
            ).model_dump(),
        ),
    )
    return json_response(body)


HEALTH = Endpoint(
    "GET", "/health", health, "Liveness; open, carries no content.", None, response=Health
)
"""Listed first among the endpoints (``http.app.endpoints``), apart from the others here."""

ENDPOINTS = [
    Endpoint(
        "GET",
        "/metrics",
        metrics,
        "Prometheus metrics; open, no content or channel ids.",
        None,
        media_types=(CONTENT_TYPE_LATEST,),
    ),
    Endpoint(
        "GET",
        "/ready",
        ready,
        "Readiness: whether the worker keeps up; open.",
        None,
        response=Ready,
        extra_statuses=(503,),
    ),
    Endpoint(
        "GET",
        "/v1/stats",
        stats_endpoint,
        "Per channel: retained range, messages, blocks by kind, dirty backlog, gaps; "
        "pending erasures, LLM spend.",
        "admin",
        response=Stats,
    ),
]
