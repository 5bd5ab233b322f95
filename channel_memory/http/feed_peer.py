"""Peer-compatible ``POST /digest``: the HTTP endpoint of the feed's peer digest
(``channel_memory.feed.peer``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from channel_memory.feed.peer import PeerDigestRequest, PeerDigestResponse, peer_digest
from channel_memory.http.api import AppContext, Endpoint, json_response, read_json
from channel_memory.kernel.principal import Principal


async def digest(request: Request, ctx: AppContext, principal: Principal) -> Response:
    body = await read_json(request, PeerDigestRequest)
    return json_response(await peer_digest(ctx, principal, body))


ENDPOINTS = [
    Endpoint(
        "POST",
        "/digest",
        digest,
        "Peer-compatible: derived blocks of the channels' window (hard events, collapsed "
        "noise, raw excerpts or rollups), with coverage and status.",
        "read",
        PeerDigestRequest,
        PeerDigestResponse,
    ),
]
