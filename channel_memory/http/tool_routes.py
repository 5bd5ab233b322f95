"""The native retrieval tools over HTTP: the endpoints of
``channel_memory.tools.retrieval``, each answer compact JSON within
``tools.result_budget_chars`` and counted as one ``channel_context_op``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from channel_memory.http.api import AppContext, Endpoint, QueryParameter, read_json
from channel_memory.kernel.principal import Principal
from channel_memory.tools.retrieval import (
    BlockOutput,
    Caller,
    MessagesOutput,
    MessagesRequest,
    SearchOutput,
    SearchRequest,
    asked_channels,
    expand_block,
    messages,
    record,
    search,
    within_budget,
)


def _respond(
    caller: Caller,
    tool: str,
    started: float,
    result: dict[str, Any],
    channels: Sequence[str] = (),
) -> Response:
    content = within_budget(caller, result)
    record(caller, tool, started, result, channels)
    return Response(content, 200, media_type="application/json")


async def search_channel_context(
    request: Request, ctx: AppContext, principal: Principal
) -> Response:
    started = time.perf_counter()
    body = await read_json(request, SearchRequest)
    result = await search(ctx, principal, body)
    caller = Caller(ctx, principal)
    return _respond(caller, "search_channel_context", started, result, body.channels)


async def get_channel_messages(request: Request, ctx: AppContext, principal: Principal) -> Response:
    started = time.perf_counter()
    body = await read_json(request, MessagesRequest)
    result = await messages(ctx, principal, body)
    channels = asked_channels(body.channels, body.source_handles)
    return _respond(Caller(ctx, principal), "get_channel_messages", started, result, channels)


async def get_block(request: Request, ctx: AppContext, principal: Principal) -> Response:
    started = time.perf_counter()
    result = await expand_block(ctx, principal, str(request.path_params["block_id"]))
    return _respond(Caller(ctx, principal), "expand_digest_block", started, result)


ENDPOINTS = [
    Endpoint(
        "POST",
        "/v1/tools/search_channel_context",
        search_channel_context,
        "Keyword search (every word, literally) over current messages and sparse blocks of "
        "the channels, newest first, within the result budget.",
        "read",
        SearchRequest,
        SearchOutput,
    ),
    Endpoint(
        "POST",
        "/v1/tools/get_channel_messages",
        get_channel_messages,
        "Exact messages by handle or id (unknown, deleted and forgotten ones listed in "
        "not_found), or browsed by time: after pages forwards, before alone backwards from "
        "its anchor (after/before exclusive; results in time order), within the result "
        "budget; large messages are read in fragments.",
        "read",
        MessagesRequest,
        MessagesOutput,
    ),
    Endpoint(
        "GET",
        "/v1/blocks/{block_id}",
        get_block,
        "A recall block with its provenance: each cited version, current or superseded.",
        "read",
        response=BlockOutput,
        parameters=(
            QueryParameter(
                "block_id", "The block's id.", {"type": "string"}, required=True, location="path"
            ),
        ),
    ),
]
