"""Operational endpoints: /metrics, /ready, /v1/stats. None carries content or channel ids
except /v1/stats, which needs the admin scope."""

from __future__ import annotations

from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from channel_memory.http.api import AppContext, Endpoint
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import MICROS_PER_SECOND, format_rfc3339, utc_day
from channel_memory.store import erasure, stats
from channel_memory.store import llm as llm_store

READY_LAG_SECONDS = 30.0


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
    body = {"ready": keeping_up, "queue_depth": depth, "lag_seconds": round(lag, 3)}
    return JSONResponse(body, 200 if keeping_up else 503)


def _time(micros: int | None) -> str | None:
    return None if micros is None else format_rfc3339(micros)


async def stats_endpoint(request: Request, ctx: AppContext, principal: Principal) -> Response:
    principal.require("admin")
    async with ctx.store.read() as conn:
        channels = await stats.channel_stats(conn)
        owed = await erasure.pending_erasures(conn)
        depth, oldest = await stats.backlog(conn)
        spend = await llm_store.spend_by_channel(conn, utc_day(ctx.clock()))
    caps = ctx.settings.llm

    def llm_spend(usage: llm_store.Usage, calls_cap: int, usd_cap: float) -> dict[str, Any]:
        return {
            "calls_today": usage.calls,
            "usd_today": round(usage.usd, 6),
            "failures_today": usage.failures,
            "rejected_today": usage.rejected,
            "cache_hits_today": usage.cache_hits,
            "calls_cap": calls_cap,
            "usd_cap": usd_cap,
            "capped": usage.capped,
        }

    body: dict[str, Any] = {
        "channels": [
            {
                "channel_id": c["channel_id"],
                "source_kind": c["source_kind"],
                "retained": {
                    "from": _time(c["oldest_us"]),
                    "to": _time(c["newest_us"]),
                    "retention_cutoff": _time(c["retained_from_us"]),
                },
                "messages": c["messages"],
                "blocks": c["blocks"],
                "dirty_backlog": c["dirty_backlog"],
                "open_coverage_gaps": c["open_gaps"],
                "llm": llm_spend(
                    spend.get(c["channel_id"], llm_store.Usage()),
                    caps.calls_per_channel_day,
                    caps.usd_per_channel_day,
                )
                | {"promotions": c["promotions"]},
            }
            for c in channels
        ],
        "worker": {"queue_depth": depth, "oldest_change": _time(oldest)},
        "pending_erasures": owed,
        "llm": {
            "enabled": caps.enabled,
            "model": caps.model,
            **llm_spend(
                spend.get(llm_store.DEPLOYMENT, llm_store.Usage()),
                caps.calls_per_day,
                caps.usd_per_day,
            ),
            "promotions": sum(c["promotions"] for c in channels),
        },
    }
    return JSONResponse(body)


ENDPOINTS = [
    Endpoint(
        "GET", "/metrics", metrics, "Prometheus metrics; open, no content or channel ids.", None
    ),
    Endpoint("GET", "/ready", ready, "Readiness: whether the worker keeps up; open.", None),
    Endpoint(
        "GET",
        "/v1/stats",
        stats_endpoint,
        "Per channel: retained range, messages, blocks by kind, dirty backlog, gaps; "
        "pending erasures, LLM spend.",
        "admin",
    ),
]
