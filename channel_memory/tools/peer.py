"""The peer-compatible reads: exact stored versions by id and keyword search
(``POST /source-messages`` and ``POST /search``, mounted by
``channel_memory.http.tool_peer``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from channel_memory.feed.reads import ReadContext
from channel_memory.kernel.errors import field_refused
from channel_memory.kernel.models import DEFAULT_SOURCE_KIND, RecallBlock, SourceVersion
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import TimeFormatError, format_rfc3339, parse_since
from channel_memory.kernel.trust import block_trust
from channel_memory.kernel.wire import BlockOut, Id, LenientModel, SourceMessageOut, StrictModel
from channel_memory.store import blocks as block_store
from channel_memory.store import sources
from channel_memory.store.sources import literal_match


class PeerSourceMessagesRequest(LenientModel):
    source_kind: Annotated[str, Field(max_length=64)] | None = None
    channel_id: Id
    message_ids: Annotated[list[Id], Field(min_length=1, max_length=1000)]
    include_history: bool = False


class PeerSourceRef(StrictModel):
    source_kind: str
    channel_id: str
    message_id: str


class PeerSourceMessagesResponse(StrictModel):
    messages: list[SourceMessageOut]
    not_found: list[PeerSourceRef]


async def peer_source_messages(
    ctx: ReadContext, principal: Principal, body: PeerSourceMessagesRequest
) -> PeerSourceMessagesResponse:
    """The stored versions ``body`` names. A channel ``principal`` may not see answers
    like an unknown one: its messages are listed in ``not_found``."""
    wanted = list(dict.fromkeys(body.message_ids))
    found = []
    if principal.may_see(body.channel_id):
        async with ctx.store.read() as conn:
            found = await sources.versions_of(
                conn, body.channel_id, wanted, include_history=body.include_history
            )
            if body.include_history:
                # a deleted message's history is its tombstone alone: metadata, no content
                found += await sources.tombstones_of(conn, body.channel_id, wanted)
    if body.source_kind:
        found = [v for v in found if v.key.source_kind == body.source_kind.lower()]
    by_id: dict[str, list[SourceMessageOut]] = {}
    for version in found:
        by_id.setdefault(version.key.message_id, []).append(SourceMessageOut.of(version))
    kind = (body.source_kind or "").lower() or (
        found[0].key.source_kind if found else DEFAULT_SOURCE_KIND
    )
    return PeerSourceMessagesResponse(
        messages=[m for message_id in wanted for m in by_id.get(message_id, [])],
        not_found=[
            PeerSourceRef(source_kind=kind, channel_id=body.channel_id, message_id=message_id)
            for message_id in wanted
            if message_id not in by_id
        ],
    )


class PeerSearchRequest(LenientModel):
    source_kind: Annotated[str, Field(max_length=64)] | None = None
    channel_ids: Annotated[list[Id], Field(max_length=100)] = Field(default_factory=list)
    query: Annotated[str, Field(max_length=1024)] = ""
    since: Annotated[str, Field(max_length=64)] | None = None
    author: Annotated[str, Field(max_length=256)] | None = None
    limit: Annotated[int, Field(ge=0, le=1000)] = 0


class PeerSearchCoverage(BaseModel):
    from_: str = Field(alias="from")
    to: str
    source_message_hits: int
    derived_block_hits: int


class PeerSearchResponse(BaseModel):
    status: str
    coverage: PeerSearchCoverage
    source_messages: list[SourceMessageOut]
    derived_blocks: list[BlockOut]


async def peer_search(
    ctx: ReadContext, principal: Principal, body: PeerSearchRequest
) -> PeerSearchResponse:
    """Current messages and sparse blocks holding every word of ``body.query`` literally,
    in the channels ``principal`` may see. Raises ``ApiError`` 422 for a malformed
    ``since``."""
    now = ctx.clock()
    try:
        from_us = parse_since(body.since, now)
    except TimeFormatError as exc:
        raise field_refused("since", "invalid_time", str(exc)) from None
    limit = min(body.limit or 20, 100)
    match = literal_match(body.query)
    searchable = match is not None or not body.query.strip()
    messages: list[SourceVersion] = []
    found: list[RecallBlock] = []
    async with ctx.store.read() as conn:
        visible = [c for c in dict.fromkeys(body.channel_ids) if principal.may_see(c)]
        for channel in visible if searchable else []:
            messages += await sources.search_current(
                conn, channel, match, body.author, from_us, limit
            )
            if body.author is None:  # a block has many authors: author filters messages
                found += await block_store.search_blocks(conn, channel, match, from_us, limit)
        messages = sorted(messages, key=lambda v: (v.created_us, v.id))[-limit:]
        found = sorted(found, key=lambda b: (b.to_us, b.id))[-limit:]
    return PeerSearchResponse(
        status="ok" if messages or found else "empty",
        coverage=PeerSearchCoverage.model_validate(
            {
                "from": format_rfc3339(from_us),
                "to": format_rfc3339(now),
                "source_message_hits": len(messages),
                "derived_block_hits": len(found),
            }
        ),
        source_messages=[SourceMessageOut.of(v) for v in messages],
        derived_blocks=[BlockOut.of(b, block_trust(b, principal)) for b in found],
    )
