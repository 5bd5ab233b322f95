"""``GET /channel-awareness``: the budgeted feed an LLM proxy polls. Never calls an LLM."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Mapping
from dataclasses import replace

import aiosqlite
from starlette.requests import Request
from starlette.responses import Response

from channel_memory.feed import candidates, reads
from channel_memory.feed.candidates import ContextKind, FeedQuery
from channel_memory.feed.layout import Body, BudgetTooSmall, Format
from channel_memory.http.api import AppContext, Endpoint, QueryParameter
from channel_memory.http.telemetry import ContextOp, now_stamp
from channel_memory.kernel.errors import ApiError
from channel_memory.kernel.models import ID_PATTERN, SourceVersion
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import (
    MICROS_PER_SECOND,
    TimeFormatError,
    parse_go_duration,
    parse_rfc3339,
)
from channel_memory.kernel.wire import ErrorDetail
from channel_memory.store import sources

_ID = re.compile(ID_PATTERN)
_HANDLE = re.compile(r"^[A-Za-z0-9._:-]{1,128}/[A-Za-z0-9._:-]{1,128}$")
MAX_CHANNELS = 32


def _invalid(field: str, message: str) -> ApiError:
    detail = ErrorDetail(field=field, code="invalid", message=message)
    return ApiError(422, "validation_failed", f"the request is invalid (field {field})", [detail])


def _int(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise _invalid(name, f"must be an integer from {low} to {high}")
    return int(raw)


def parse_query(request: Request, ctx: AppContext) -> FeedQuery:
    """The feed's parameters, validated. Raises ``ApiError`` 422."""
    return parse_values(request.query_params, ctx)


def parse_values(params: Mapping[str, str], ctx: AppContext) -> FeedQuery:
    """The feed's parameters from name/value pairs (a query string, an MCP call)."""
    channels = tuple(dict.fromkeys(c for c in params.get("channels", "").split(",") if c))
    if not channels:
        raise _invalid("channels", "at least one channel id is required")
    if len(channels) > MAX_CHANNELS or not all(_ID.match(c) for c in channels):
        raise _invalid("channels", f"up to {MAX_CHANNELS} ids matching {ID_PATTERN}")
    # "+" in a query string decodes to a space: accept both spellings
    kind_text = params.get("context_kind", "raw_window+digest").replace(" ", "+")
    if kind_text not in ("raw_window+digest", "raw_window"):
        raise _invalid("context_kind", "must be raw_window+digest or raw_window")
    kind: ContextKind = "raw_window" if kind_text == "raw_window" else "raw_window+digest"
    fmt_text = params.get("format", "text")
    if fmt_text not in ("text", "json"):
        raise _invalid("format", "must be text or json")
    fmt: Format = "json" if fmt_text == "json" else "text"
    feed = ctx.settings.feed
    try:
        since_us = parse_go_duration(params.get("since") or "24h")
    except TimeFormatError:
        raise _invalid("since", "must be a Go duration such as 24h or 90m") from None
    if since_us <= 0:
        raise _invalid("since", "must be longer than zero")
    as_of_text = params.get("as_of")
    try:
        to_us = parse_rfc3339(as_of_text) if as_of_text else ctx.clock()
    except TimeFormatError:
        raise _invalid("as_of", "must be an RFC 3339 time") from None
    default_limit = feed.raw_window_limit if kind == "raw_window" else feed.raw_recent_limit
    trigger = params.get("trigger") or None
    if trigger is not None:
        if not _HANDLE.match(trigger):
            raise _invalid("trigger", "must be a source handle, channel/message")
        if as_of_text:
            raise _invalid("trigger", "does not combine with as_of")
    unconsumed = params.get("unconsumed", "all") or "all"
    if unconsumed not in ("all", "only"):
        raise _invalid("unconsumed", "must be all or only")
    if unconsumed == "only" and as_of_text:
        raise _invalid("unconsumed", "does not combine with as_of")
    return FeedQuery(
        channels=channels,
        kind=kind,
        since_us=since_us,
        to_us=to_us,
        as_of=bool(as_of_text),
        limit=_int(params, "limit", default_limit, 0, 1000),
        max_chars=_int(params, "max_chars", feed.max_chars, 1, feed.max_chars_limit),
        fmt=fmt,
        raw_recent_us=int(feed.raw_recent_window * MICROS_PER_SECOND),
        llm_enabled=ctx.settings.llm.enabled,
        trigger=trigger,
        unconsumed_only=unconsumed == "only",
    )


async def feed_trigger(
    conn: aiosqlite.Connection, ctx: AppContext, principal: Principal, query: FeedQuery
) -> tuple[FeedQuery, SourceVersion | None]:
    """The query with its trigger's author, and the trigger's current version (None when
    the query names none). Raises the one ``404 trigger_not_found`` for an unknown,
    invisible, deleted or forgotten trigger, ``422 trigger_too_large`` over
    ``feed.trigger_max_chars``, and 422 when its channel is not among ``channels``."""
    if query.trigger is None:
        return query, None
    version = await reads.resolve_trigger(conn, principal, query.trigger)
    if version.key.channel_id not in query.channels:
        raise _invalid("trigger", "its channel must be among channels")
    size = len(version.content)
    most = ctx.settings.feed.trigger_max_chars
    if size > most:
        handle = version.key.handle
        detail = ErrorDetail(
            field="trigger",
            code="trigger_too_large",
            message=f"{size} characters; read_content: get_channel_messages "
            f'source_handles=["{handle}"] returns it in fragments',
        )
        raise ApiError(
            422,
            "trigger_too_large",
            f"the trigger message has {size} characters, more than feed.trigger_max_chars "
            f"({most}); it is never cut: read it with get_channel_messages "
            f'source_handles=["{handle}"]',
            [detail],
        )
    return replace(query, trigger_author=version.author_id), version


async def read_feed(
    ctx: AppContext, principal: Principal, query: FeedQuery
) -> tuple[Body, str | None]:
    """Serve a feed in one read snapshot: 404 for unknown or invisible channels, the
    trigger's checks, 422 for a budget too small. Returns the body (its read id still a
    placeholder) and the read id it gets when that is known without writing."""
    async with ctx.store.read() as conn:
        known = await sources.channel_kinds(conn, query.channels)
        if any(c not in known or not principal.may_see(c) for c in query.channels):
            # an unknown channel and one outside the token's list answer the same
            raise ApiError(404, "channel_not_found", "no such channel")
        query, trigger = await feed_trigger(conn, ctx, principal, query)
        try:
            body = await candidates.serve(conn, query, principal, trigger)
        except BudgetTooSmall as exc:
            raise _invalid("max_chars", str(exc)) from None
        return body, await reads.known_read_id(conn, principal, body.complete)


def etag_of(content: str) -> str:
    return '"' + hashlib.sha256(content.encode()).hexdigest()[:32] + '"'


def feed_op(
    ctx: AppContext,
    principal: Principal,
    query: FeedQuery,
    body: Body,
    started: float,
    status_code: int = 200,
) -> ContextOp:
    """The ``channel_context_op`` of one feed served. Its numbers are the ones the body's
    header states (``body.numbers``), so the log line and /metrics never disagree with it."""
    numbers = body.numbers
    return ContextOp(
        ts=now_stamp(ctx.clock()),
        type="feed",
        consumer=principal.agent_id,
        kind=query.kind,
        channels=list(query.channels),
        retained=numbers["retained"],
        returned=numbers["messages"] + numbers["digest_blocks"],
        omitted=numbers["omitted"],
        raw_bytes=numbers["raw_bytes"],
        digest_bytes=numbers["digest_bytes"],
        digest_blocks=numbers["digest_blocks"],
        coverage_gaps=numbers["coverage_gaps"],
        deterministic_only=numbers["deterministic_only"],
        status=numbers["digest"],
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
        status_code=status_code,
    )


async def channel_awareness(request: Request, ctx: AppContext, principal: Principal) -> Response:
    started = time.perf_counter()
    query = parse_query(request, ctx)
    body, read_id = await read_feed(ctx, principal, query)
    asked = [t.strip() for t in request.headers.get("if-none-match", "").split(",")]
    if read_id is not None and etag_of(body.with_read_id(read_id).content) in asked:
        # unchanged: the read of the body the client holds stands; a 304 records nothing
        body = body.with_read_id(read_id)
        ctx.telemetry.record(feed_op(ctx, principal, query, body, started, 304))
        return Response(status_code=304, headers={"ETag": etag_of(body.content), **_NO_CACHE})
    body = body.with_read_id(await reads.record(ctx, principal, body.complete))
    etag = etag_of(body.content)
    ctx.telemetry.record(feed_op(ctx, principal, query, body, started, 200))
    headers = {"ETag": etag, "Read-Id": body.numbers["read_id"], **_NO_CACHE}
    return Response(body.content, 200, headers=headers, media_type=body.media_type)


_NO_CACHE = {"Cache-Control": "no-cache"}


PARAMETERS = (
    QueryParameter("channels", "Comma-separated channel ids.", {"type": "string"}, True),
    QueryParameter(
        "context_kind",
        "raw_window+digest (default) or raw_window.",
        {"type": "string", "enum": ["raw_window+digest", "raw_window"]},
    ),
    QueryParameter("since", "The window, a Go duration (default 24h).", {"type": "string"}),
    QueryParameter(
        "limit",
        "Most messages in the raw recent tier (default 10, or 60 for raw_window).",
        {"type": "integer", "minimum": 0, "maximum": 1000},
    ),
    QueryParameter(
        "max_chars",
        "The whole body's budget in code points (default feed.max_chars).",
        {"type": "integer", "minimum": 1},
    ),
    QueryParameter(
        "format", "text (default) or json.", {"type": "string", "enum": ["text", "json"]}
    ),
    QueryParameter(
        "as_of", "RFC 3339: the feed as it was then.", {"type": "string", "format": "date-time"}
    ),
    QueryParameter(
        "trigger",
        "The handle (channel/message) of the message that woke the agent: shown first, "
        "complete, outside max_chars; its channel must be among channels.",
        {"type": "string"},
    ),
    QueryParameter(
        "unconsumed",
        "all (default) or only: serve only what this consumer has not consumed.",
        {"type": "string", "enum": ["all", "only"]},
    ),
)

ENDPOINTS = [
    Endpoint(
        "GET",
        "/channel-awareness",
        channel_awareness,
        "The channels' window as raw_window+digest (or raw_window) within max_chars: hard "
        "events verbatim, recent messages raw, older material as digest blocks; text or JSON.",
        "read",
        parameters=PARAMETERS,
        media_types=("text/plain", "application/json"),
        extra_statuses=(304, 404),
    ),
]
