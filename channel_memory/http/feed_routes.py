"""``GET /channel-awareness``: the feed's HTTP endpoint (the feed itself is
``channel_memory.feed.awareness``), with its ETag and the read it records."""

from __future__ import annotations

import hashlib
import time

from starlette.requests import Request
from starlette.responses import Response

from channel_memory.feed import reads
from channel_memory.feed.awareness import (
    FeedParameters,
    feed_op,
    parse_values,
    query_string_values,
    read_feed,
)
from channel_memory.http.api import AppContext, Endpoint
from channel_memory.http.openapi import query_parameters
from channel_memory.kernel.principal import Principal


def etag_of(content: str) -> str:
    return '"' + hashlib.sha256(content.encode()).hexdigest()[:32] + '"'


async def channel_awareness(request: Request, ctx: AppContext, principal: Principal) -> Response:
    started = time.perf_counter()
    query = parse_values(query_string_values(request.query_params), ctx)
    body, read_id = await read_feed(ctx, principal, query)
    asked = [t.strip() for t in request.headers.get("if-none-match", "").split(",")]
    if read_id is not None and etag_of(body.with_read_id(read_id).content) in asked:
        # unchanged: the read of the body the client holds stands; a 304 records nothing
        body = body.with_read_id(read_id)
        ctx.telemetry.record(feed_op(ctx, principal, query, body, started, 304))
        return Response(status_code=304, headers={"ETag": etag_of(body.content), **_NO_CACHE})
    body = body.with_read_id(await reads.record(ctx, principal, body.complete, body.summarized))
    etag = etag_of(body.content)
    ctx.telemetry.record(feed_op(ctx, principal, query, body, started, 200))
    headers = {"ETag": etag, "Read-Id": body.numbers["read_id"], **_NO_CACHE}
    return Response(body.content, 200, headers=headers, media_type=body.media_type)


_NO_CACHE = {"Cache-Control": "no-cache"}


ENDPOINTS = [
    Endpoint(
        "GET",
        "/channel-awareness",
        channel_awareness,
        "The channels' window as raw_window+digest (or raw_window) within max_chars: hard "
        "events verbatim, recent messages raw, older material as digest blocks; text or JSON.",
        "read",
        parameters=query_parameters(FeedParameters),
        media_types=("text/plain", "application/json"),
        extra_statuses=(304, 404),
    ),
]
