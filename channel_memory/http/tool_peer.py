"""Peer-compatible ``POST /source-messages`` and ``POST /search``: the HTTP endpoints of
the tools' peer reads (``channel_memory.tools.peer``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from channel_memory.http.api import AppContext, Endpoint, json_response, read_json
from channel_memory.kernel.principal import Principal
from channel_memory.tools.peer import (
    PeerSearchRequest,
    PeerSearchResponse,
    PeerSourceMessagesRequest,
    PeerSourceMessagesResponse,
    peer_search,
    peer_source_messages,
)


async def source_messages(request: Request, ctx: AppContext, principal: Principal) -> Response:
    body = await read_json(request, PeerSourceMessagesRequest)
    return json_response(await peer_source_messages(ctx, principal, body))


async def search(request: Request, ctx: AppContext, principal: Principal) -> Response:
    body = await read_json(request, PeerSearchRequest)
    return json_response(await peer_search(ctx, principal, body))


ENDPOINTS = [
    Endpoint(
        "POST",
        "/source-messages",
        source_messages,
        "Peer-compatible: exact stored versions of messages by id "
        "(current by default, every version with include_history).",
        "read",
        PeerSourceMessagesRequest,
        PeerSourceMessagesResponse,
    ),
    Endpoint(
        "POST",
        "/search",
        search,
        "Peer-compatible: keyword search (literal words, all required) over current messages "
        "and sparse blocks of the channels.",
        "read",
        PeerSearchRequest,
        PeerSearchResponse,
    ),
]
