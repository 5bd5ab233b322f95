"""Peer-compatible read endpoint ``POST /source-messages``."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response

from channel_memory.api import AppContext, Endpoint, json_response, read_json
from channel_memory.auth import Principal
from channel_memory.models import DEFAULT_SOURCE_KIND
from channel_memory.store import sources
from channel_memory.wire import Id, LenientModel, SourceMessageOut, StrictModel


class SourceMessagesRequest(LenientModel):
    source_kind: Annotated[str, Field(max_length=64)] | None = None
    channel_id: Id
    message_ids: Annotated[list[Id], Field(min_length=1, max_length=1000)]
    include_history: bool = False


class SourceRef(StrictModel):
    source_kind: str
    channel_id: str
    message_id: str


class SourceMessagesResponse(StrictModel):
    messages: list[SourceMessageOut]
    not_found: list[SourceRef]


async def source_messages(request: Request, ctx: AppContext, principal: Principal) -> Response:
    body = await read_json(request, SourceMessagesRequest)
    wanted = list(dict.fromkeys(body.message_ids))
    found = []
    if principal.may_see(body.channel_id):
        async with ctx.store.read() as conn:
            found = await sources.versions_of(
                conn, body.channel_id, wanted, include_history=body.include_history
            )
    if body.source_kind:
        found = [v for v in found if v.key.source_kind == body.source_kind.lower()]
    by_id: dict[str, list[SourceMessageOut]] = {}
    for version in found:
        by_id.setdefault(version.key.message_id, []).append(SourceMessageOut.of(version))
    kind = (body.source_kind or "").lower() or (
        found[0].key.source_kind if found else DEFAULT_SOURCE_KIND
    )
    return json_response(
        SourceMessagesResponse(
            messages=[m for message_id in wanted for m in by_id.get(message_id, [])],
            not_found=[
                SourceRef(source_kind=kind, channel_id=body.channel_id, message_id=message_id)
                for message_id in wanted
                if message_id not in by_id
            ],
        )
    )


ENDPOINTS = [
    Endpoint(
        "POST",
        "/source-messages",
        source_messages,
        "Peer-compatible: exact stored versions of messages by id "
        "(current by default, every version with include_history).",
        "read",
        SourceMessagesRequest,
        SourceMessagesResponse,
    ),
]
