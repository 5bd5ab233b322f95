"""The native retrieval tools: search, browse by handle or time, expand a block.

The HTTP endpoints (``channel_memory.http.tool_routes``) and the MCP server
(``channel_memory.tools.mcp_server``) both answer through these functions.

Every result is compact JSON within ``tools.result_budget_chars``; items are
chosen before the result is built (``limit + 1`` reads, the largest fitting
prefix), and a result that holds less than asked says so (``omitted`` within the
fetched page, ``has_more``, ``next_cursor``). A message too large for one result
is read in fragments through ``content_cursor``s bound to its exact content.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from channel_memory.feed import reads
from channel_memory.feed.layout import READ_ID_PLACEHOLDER
from channel_memory.feed.reads import ReadContext
from channel_memory.kernel.errors import ApiError, field_refused
from channel_memory.kernel.jsonfmt import compact
from channel_memory.kernel.models import (
    HARD_EVENT_BLOCK,
    TOMBSTONE_BLOCK,
    RecallBlock,
    SourceVersion,
    source_handle,
)
from channel_memory.kernel.ops import ContextOp, OpRecorder
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import (
    TimeFormatError,
    format_rfc3339,
    parse_rfc3339,
    parse_since,
)
from channel_memory.kernel.trust import block_role, block_trust, role_of, trust_of
from channel_memory.kernel.wire import BlockOut, ErrorDetail, Id, StrictModel, ToolMessageOut
from channel_memory.store import blocks as block_store
from channel_memory.store import search as search_index
from channel_memory.store import sources
from channel_memory.store.connection import Connection
from channel_memory.tools import cursors
from channel_memory.tools.budget import fitting_prefix, fragment_length
from channel_memory.tools.cursors import CursorError, CursorKeys

HANDLE_PATTERN = r"^[A-Za-z0-9._:-]{1,128}/[A-Za-z0-9._:-]{1,128}$"
_HANDLE = re.compile(HANDLE_PATTERN)


def _source_handle(value: object) -> object:
    """A source handle is ``channel/message``; the error says so, and what to pass for the
    message id a feed of one channel shows alone or a ``re:`` names."""
    if isinstance(value, str) and not _HANDLE.match(value):
        if "/" in value:
            raise PydanticCustomError(
                "source_handle",
                'a source handle is "channel/message", each part of letters, digits and '
                "._:- (at most 128)",
            )
        raise PydanticCustomError(
            "source_handle",
            'a source handle is "channel/message"; a message id alone (as a feed of one '
            'channel shows it, or after "re:") goes in message_ids, with channels',
        )
    return value


Handle = Annotated[str, BeforeValidator(_source_handle), Field(pattern=HANDLE_PATTERN)]


def _message_id(value: object) -> object:
    """A message id names no channel; a whole handle put here ("desk/m013", as the omission
    line and the tools write it) is refused with where it goes instead."""
    if isinstance(value, str) and "/" in value:
        raise PydanticCustomError(
            "message_id",
            'a message id has no channel: a "channel/message" handle goes in source_handles; '
            "in message_ids, the id alone, with its channel in channels",
        )
    return value


MessageId = Annotated[Id, BeforeValidator(_message_id)]
Cursor = Annotated[str, Field(min_length=1, max_length=2048)]
EXCERPT_CHARS = 240
LONGEST_CURSOR = "x" * 200
"""Room kept for a cursor while fitting, longer than any cursor issued (~150 characters)."""


def _about(text: str) -> Any:
    """A field's description as the HTTP tools' OpenAPI document and the MCP tools' input
    schemas publish it."""
    return Field(description=text)


_SINCE = "A Go duration like 24h or 168h, or an RFC 3339 time (default: everything retained)."
_AUTHOR = "Part of an author's name or id."
_LIMIT = "Most results on a page (default tools.default_limit, at most tools.max_limit)."
_CURSOR = "The next_cursor of the page before, for the next page."
_Author = Annotated[str, Field(min_length=1, max_length=256)]
_Limit = Annotated[int, Field(ge=1)]
_Position = Annotated[str, Field(max_length=260)]


BLOCK_NOT_FOUND = (
    "no such block (a block's id changes when the messages it covers change: read the feed "
    "or search again for current ids)"
)


class SearchRequest(StrictModel):
    channels: Annotated[
        list[Id], Field(min_length=1, max_length=32), _about("Channel ids to search (1 to 32).")
    ]
    query: Annotated[
        str,
        Field(min_length=1, max_length=1024),
        _about('Plain words, the way the answer would be written; "quoted" for exact wording.'),
    ]
    since: Annotated[Annotated[str, Field(max_length=64)] | None, _about(_SINCE)] = None
    author: Annotated[_Author | None, _about(_AUTHOR)] = None
    limit: Annotated[_Limit | None, _about(_LIMIT)] = None
    cursor: Annotated[Cursor | None, _about(_CURSOR)] = None
    sort: Annotated[
        Literal["relevance", "newest"],
        _about("relevance (newest first among equals), or newest: the same hits newest first."),
    ] = "relevance"
    hard_events: Annotated[
        bool, _about("Only the decisions (the hard events a feed shows), ranked as ever.")
    ] = False


class MessagesRequest(StrictModel):
    channels: Annotated[
        Annotated[list[Id], Field(min_length=1, max_length=32)] | None,
        _about("Channels to browse by time, or whose message_ids are asked (1 to 32)."),
    ] = None
    source_handles: Annotated[
        Annotated[list[Handle], Field(min_length=1, max_length=100)] | None,
        _about("Exact messages by handle, channel/message (1 to 100)."),
    ] = None
    message_ids: Annotated[
        Annotated[list[MessageId], Field(min_length=1, max_length=100)] | None,
        _about("Exact messages by id, in the one channel given in channels (1 to 100)."),
    ] = None
    after: Annotated[
        _Position | None,
        _about("Browse after a handle, an RFC 3339 time or (one channel) a message id."),
    ] = None
    before: Annotated[
        _Position | None,
        _about("Browse before a handle, an RFC 3339 time or (one channel) a message id."),
    ] = None
    since: Annotated[
        Annotated[str, Field(max_length=64)] | None,
        _about("Browse from a duration (24h) or a time, as the feed's window."),
    ] = None
    author: Annotated[_Author | None, _about(_AUTHOR)] = None
    hard_events: Annotated[
        bool, _about("Browse only the decisions (the hard events a feed shows).")
    ] = False
    limit: Annotated[_Limit | None, _about(_LIMIT)] = None
    include_history: Annotated[
        bool, _about("Every version of the messages named, not only the current one.")
    ] = False
    cursor: Annotated[Cursor | None, _about(_CURSOR)] = None
    content_cursor: Annotated[
        Cursor | None, _about("A read_content fragment's next_content_cursor, for its next part.")
    ] = None

    @model_validator(mode="after")
    def _one_way_to_ask(self) -> MessagesRequest:
        # each refusal names the field to change (its error's location)
        if self.source_handles and self.message_ids:
            raise _refused("message_ids", "give source_handles or message_ids, not both")
        named = self.source_handles or self.message_ids
        if named and (self.after or self.before):
            raise _refused(
                "after" if self.after else "before",
                "after/before browse by time; they do not combine with named messages",
            )
        if named and self.since:
            raise _refused(
                "since", "since bounds browsing by time; it does not combine with named messages"
            )
        if named and self.hard_events:
            raise _refused(
                "hard_events",
                "hard_events filters browsing by time; it does not combine with named messages",
            )
        if self.include_history and not named:
            raise _refused(
                "include_history",
                "include_history reads named messages (source_handles or message_ids); "
                "browsing reads current versions",
            )
        if self.message_ids and not self.channels:
            raise _refused("channels", "message_ids need channels (the channel of each id)")
        if self.message_ids and any(i.startswith(("re:", "decided:")) for i in self.message_ids):
            raise _refused(
                "message_ids",
                'a message id goes without "re:" or "decided:" (a feed\'s re:m0051 names '
                "message m0051)",
            )
        if not (named or self.channels or self.content_cursor):
            raise _refused("channels", "channels are required unless handles name them")
        return self


def _refused(field: str, message: str) -> PydanticCustomError:
    """A refusal of a combination of fields, located at the field to change."""
    return PydanticCustomError("invalid_combination", message, {"field": field})


# --- results (the HTTP responses and the MCP output schemas) ----------------------------


class _Output(BaseModel):
    model_config = ConfigDict(extra="allow")

    status: str = Field(description='"ok", or "empty" when nothing matched.')


class _Page(_Output):
    omitted: int = Field(0, description="Items fetched for this page that did not fit.")
    has_more: bool = Field(False, description="More items follow: pass next_cursor as cursor.")
    next_cursor: str | None = Field(None, description="The cursor of the next page.")


class SearchOutput(_Page):
    """``search_channel_context``'s result."""

    hits: list[dict[str, Any]] = Field(
        default_factory=list,
        description="source_handle, message_id, kind, block_id?, covers? (a block's "
        "messages), author_name, created_at, trust, excerpt, decision? and answers? (a "
        "decision by reply: the proposal it decides on), decided_by? (the verdicts by reply "
        "on it); best first (or newest first).",
    )


class MessagesOutput(_Page):
    """``get_channel_messages``'s result: a page of messages, or one fragment."""

    messages: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Source messages, oldest first (or as named); browsed with hard_events, "
        "each with its decision type (trade_fill, stop_or_target_change, …), decided "
        "by reply the handle of the proposal it answers, and, a proposal decided on by "
        "reply, its verdicts' handles (decided_by).",
    )
    read_content: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Messages too large for this result: {source_handle, content_chars}; "
        "ask for the handle alone to read it in fragments (a decision among them, browsed "
        "with hard_events, shows its decision lines in decision_excerpt).",
    )
    fragment: dict[str, Any] | None = Field(
        None,
        description="source_handle, content_hash, offset, total_chars, content, "
        "next_content_cursor (absent on the last fragment).",
    )
    read_id: str | None = Field(
        None,
        description="Names the message versions this result showed complete; after the "
        "turn, POST /v1/consumption {read_id, outcome: handled|failed} settles it.",
    )


class BlockOutput(_Output):
    """``expand_digest_block``'s result: the block and its provenance."""

    id: str = Field(description="The block's id.")
    text: str = Field("", description="The block's text.")
    provenance: list[dict[str, Any]] = Field(
        default_factory=list,
        description="source_handle, message_id, content_hash, is_current, deleted.",
    )
    provenance_omitted: int = Field(0, description="Provenance entries that did not fit.")


class ToolContext(ReadContext, Protocol):
    """What the tools need from the face that serves them: a read's store, settings and
    clock, the cursors' signing keys, and where each call's record goes. The HTTP
    application's context offers it; so does the one ``channel-memory mcp`` builds."""

    @property
    def cursor_keys(self) -> CursorKeys: ...

    @property
    def telemetry(self) -> OpRecorder: ...


@dataclass(frozen=True, slots=True)
class Caller:
    ctx: ToolContext
    principal: Principal

    @property
    def budget(self) -> int:
        return self.ctx.settings.tools.result_budget_chars

    def limit(self, asked: int | None) -> int:
        tools = self.ctx.settings.tools
        if asked is not None and asked > tools.max_limit:
            raise field_refused("limit", "less_than_equal", f"must be at most {tools.max_limit}")
        return asked or tools.default_limit


def asked_channels(
    channels: Sequence[str] | None, handles: Sequence[str] | None = None
) -> list[str]:
    """The channels a tool call named, directly or through source handles."""
    named = set(channels or ()) | {h.split("/", 1)[0] for h in handles or ()}
    return sorted(named)


def record(
    caller: Caller,
    tool: str,
    started: float,
    result: dict[str, Any],
    channels: Sequence[str] = (),
) -> None:
    """One ``channel_context_op`` for a tool call, naming the channels it asked for (a
    block's channel is known once it is read: it is the result's ``source_channel``)."""
    if not channels and "source_channel" in result:
        channels = [str(result["source_channel"])]
    caller.ctx.telemetry.record(
        ContextOp(
            ts=format_rfc3339(caller.ctx.clock()),
            type="tool",
            consumer=caller.principal.agent_id,
            channels=list(channels),
            tool_name=tool,
            returned=len(result.get("hits") or result.get("messages") or []),
            omitted=int(result.get("omitted", 0)),
            status=str(result.get("status")),
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
        )
    )


def within_budget(caller: Caller, result: dict[str, Any]) -> str:
    """The result as sent; the last check that it holds its budget."""
    content = compact(result)
    if len(content) > caller.budget:  # selection guarantees this never happens
        raise ApiError(500, "budget_exceeded", "a tool result outgrew its budget")
    return content


async def visible(conn: Connection, principal: Principal, channels: list[str]) -> None:
    """404 unless every channel exists and the caller may see it (both look the same)."""
    await reads.visible_channels(conn, principal, channels)


def _cursor_error(exc: CursorError) -> ApiError:
    return ApiError(exc.status, exc.code, exc.message)


def _paging_cursor(secret: bytes, token: str, bound: str) -> dict[str, Any]:
    """A paging cursor's payload, if this deployment issued it for this query and caller."""
    try:
        payload = cursors.verify(secret, token)
    except CursorError as exc:
        raise _cursor_error(exc) from None
    if payload.get("b") != bound:
        raise ApiError(400, "cursor_mismatch", "the cursor belongs to another query or caller")
    return payload


# --- search_channel_context -------------------------------------------------------------


MAX_UNITS = 16
"""Query units (words and phrases) searched at most; a question rarely has more."""


def _message_hit(
    version: SourceVersion,
    units: list[search_index.Unit],
    principal: Principal,
    decision: sources.Decided | None = None,
) -> dict[str, Any]:
    hit = {
        "source_handle": version.key.handle,
        "message_id": version.key.message_id,
        "kind": "message",
        "author_name": version.author_name or version.author_id,
        "created_at": format_rfc3339(version.created_us),
        "trust": trust_of(version.origin, version.author_id, principal),
        "role": role_of(version.origin, version.author_id, principal),
        "excerpt": search_index.excerpt(version.content, units, EXCERPT_CHARS),
    }
    if decision:  # the message is a decision: the type the feed shows it as
        hit |= decision.fields()
    return hit


QUESTION_WEIGHT = 0.5
"""A message that ends by asking counts half its relevance: the words of a question asked of
search are often the words of the question asked in the channel, and its answer is what
is looked for ("who approved the copper trade?" finds "approved the copper trade, 200
lots" before "should we do the copper trade?"). Chosen, not tuned: ``bench/search.py``'s
recall at 1 31.0% → 35.3% on its one set (0.6: 34.5%; 0.4 or less: 36.2%; ADR 0064)."""
_QUESTION_END = re.compile(r"[?？]\s*$")
BLOCK_TIER = 1
"""Relevance order puts block hits after message hits: a message hit is the exact
source, a block is derived from sources (and a rollup's header would otherwise match
every question naming its authors)."""
COVERS_SHOWN = 8
"""Handles a block hit lists of the messages it covers (``covers_count`` has them all)."""


def _block_hit(
    block: RecallBlock,
    units: list[search_index.Unit],
    principal: Principal,
    decided_by: tuple[str, ...] = (),
) -> dict[str, Any]:
    first = block.sources[0].message_id
    covers = [source_handle(block.channel_id, s.message_id) for s in block.sources]
    hit = {
        "source_handle": source_handle(block.channel_id, first),
        "message_id": first,
        "kind": block.kind,
        "block_id": block.id,
        "author_name": block.author,
        "created_at": format_rfc3339(block.from_us),
        "trust": block_trust(block, principal),
        "role": block_role(block, principal),
        "covers": covers[:COVERS_SHOWN],
        "covers_count": len(covers),
        "excerpt": search_index.excerpt(block.text, units, EXCERPT_CHARS),
    }
    if block.kind == HARD_EVENT_BLOCK and block.event_type:  # as a message hit says it
        hit |= sources.Decided(block.event_type, block.answers, decided_by).fields()
    return hit


@dataclass(frozen=True, slots=True)
class _Query:
    units: list[search_index.Unit]
    body: SearchRequest
    from_us: int

    @property
    def relevance(self) -> bool:
        return self.body.sort == "relevance"

    def score(self, text: str, found: search_index.Postings) -> float | None:
        """The text's rank score (0 in newest order), None when it is no hit after all
        (a phrase FTS5 matched by its stems but not word for word)."""
        if not self.relevance and not any(u.phrase for u in self.units):
            return 0.0
        score = search_index.score(self.units, text, found)
        if score <= 0:
            return None
        return score if self.relevance else 0.0


async def _message_items(
    conn: Connection, channel: str, q: _Query, found: search_index.Postings
) -> list[search_index.Ranked]:
    ids = [c.row_id for c in found.candidates if not c.is_block]
    items = []
    for version in await sources.readable_by_ids(conn, channel, ids, q.body.author, q.from_us):
        score = q.score(version.content, found)
        if score is not None:
            if _QUESTION_END.search(version.content) is not None:
                score *= QUESTION_WEIGHT
            rank = (0, -score, -version.created_us, f"m{version.id:015d}")
            items.append(search_index.Ranked(rank, (version.key.handle,), version))
    return items


async def _block_items(
    conn: Connection, channel: str, q: _Query, found: search_index.Postings
) -> list[search_index.Ranked]:
    if q.body.author is not None:  # a block has many authors: author filters messages
        return []
    seqs = [c.row_id for c in found.candidates if c.is_block]
    items = []
    for block in await search_index.fresh_blocks(conn, channel, seqs, q.from_us):
        if q.body.hard_events and block.kind != HARD_EVENT_BLOCK:
            continue
        score = q.score(block.text, found)
        if score is not None:
            rank = (BLOCK_TIER if q.relevance else 0, -score, -block.to_us, f"b{block.id}")
            names = tuple(source_handle(channel, s.message_id) for s in block.sources)
            items.append(search_index.Ranked(rank, names, block, block=True))
    return items


async def _ranking(
    conn: Connection,
    channels: list[str],
    q: _Query,
    position: tuple[int, float, int, str] | None,
    wanted: int,
) -> list[search_index.Ranked]:
    """The ranking after ``position``, complete for its first ``wanted`` items. In
    relevance order blocks come after every message hit, so they are only read and
    scored when the message hits after ``position`` do not fill ``wanted``."""
    found = {c: await search_index.postings(conn, c, q.units) for c in channels}
    items: list[search_index.Ranked] = []
    for channel in channels:
        items += await _message_items(conn, channel, q, found[channel])
    if q.body.hard_events:  # the decisions alone: a message a fresh hard event covers
        versions = [r.payload for r in items if isinstance(r.payload, SourceVersion)]
        covered = await sources.hard_event_keys(conn, versions)
        items = [r for r, v in zip(items, versions, strict=True) if sources.exact_key(v) in covered]
    after = [r for r in items if position is None or r.rank > position]
    if not q.relevance or len(after) < wanted:
        for channel in channels:
            items += await _block_items(conn, channel, q, found[channel])
    ranking = search_index.deduplicated(items)
    return [r for r in ranking if position is None or r.rank > position]


def _hit(
    item: search_index.Ranked,
    units: list[search_index.Unit],
    principal: Principal,
    decisions: Mapping[sources.ExactKey, sources.Decided],
    block_verdicts: Mapping[str, tuple[str, ...]],
) -> dict[str, Any]:
    if isinstance(item.payload, RecallBlock):
        block = item.payload
        by = block_verdicts.get(_first_handle(block), ()) if _decides(block) else ()
        return _block_hit(block, units, principal, by)
    assert isinstance(item.payload, SourceVersion)
    return _message_hit(
        item.payload, units, principal, decisions.get(sources.exact_key(item.payload))
    )


def _decides(block: RecallBlock) -> bool:
    return block.kind == HARD_EVENT_BLOCK and len(block.sources) == 1


def _first_handle(block: RecallBlock) -> str:
    return source_handle(block.channel_id, block.sources[0].message_id)


async def search(ctx: ToolContext, principal: Principal, body: SearchRequest) -> dict[str, Any]:
    """``search_channel_context``: hits ranked by relevance (BM25 over the channel, any
    word, stemmed, phrases exact, newest first among equals) or newest first, each
    message at most once, within the result budget."""
    caller = Caller(ctx, principal)
    limit = caller.limit(body.limit)
    channels = sorted(set(body.channels))
    try:
        from_us = parse_since(body.since, ctx.clock()) if body.since else 0  # all retained
    except TimeFormatError as exc:
        raise field_refused("since", "invalid_time", str(exc)) from None
    units = search_index.parse_query(body.query)[:MAX_UNITS]
    if not units:
        raise ApiError(
            422,
            "validation_failed",
            "query has no word to search for (only stop words or punctuation)",
            [
                ErrorDetail(
                    field="query",
                    code="no_search_terms",
                    message="only stop words or punctuation",
                )
            ],
        )
    bound = cursors.binding(
        "search",
        {
            "c": channels,
            "q": body.query,
            "s": body.since,
            "a": body.author,
            "o": body.sort,
            "h": body.hard_events,
        },
        principal.agent_id,
    )
    secret = await ctx.cursor_keys.secret(ctx.store)
    position: tuple[int, float, int, str] | None = None
    if body.cursor is not None:
        payload = _paging_cursor(secret, body.cursor, bound)
        try:
            position = (
                int(payload["g"]),
                float(payload["r"]),
                int(payload["t"]),
                str(payload["k"]),
            )
        except (KeyError, TypeError, ValueError):
            raise ApiError(400, "cursor_invalid", "the cursor is malformed") from None
    async with ctx.store.read() as conn:
        await visible(conn, principal, channels)
        ranking = await _ranking(conn, channels, _Query(units, body, from_us), position, limit + 1)
        page = ranking[: limit + 1]
        fetched = page[:limit]
        # a message hit that is a decision says so, as a browse of hard events does, and
        # one decided on by reply names its verdicts
        decisions = await sources.decisions_of(
            conn, [r.payload for r in fetched if isinstance(r.payload, SourceVersion)]
        )
        block_verdicts = await sources.verdicts(
            conn,
            [
                _first_handle(r.payload)
                for r in fetched
                if isinstance(r.payload, RecallBlock) and _decides(r.payload)
            ],
        )
    # excerpts for what is sent
    hits = [_hit(r, units, principal, decisions, block_verdicts) for r in fetched]
    envelope = {
        "status": "ok",
        "hits": [],
        "omitted": limit,
        "has_more": True,
        "next_cursor": LONGEST_CURSOR,
    }
    count = fitting_prefix(envelope, "hits", hits, caller.budget)
    included = fetched[:count]
    has_more = len(page) > limit or count < len(fetched)
    next_cursor = None
    if has_more and included:
        last = included[-1].rank
        next_cursor = cursors.sign(
            secret, {"b": bound, "g": last[0], "r": last[1], "t": last[2], "k": last[3]}
        )
    return {
        "status": "ok" if included else "empty",
        "hits": hits[:count],
        "omitted": len(fetched) - count,
        "has_more": has_more,
        "next_cursor": next_cursor,
    }


# --- get_channel_messages ---------------------------------------------------------------


def _bound_error(field: str, message: str) -> ApiError:
    """A 422 for a browse bound, naming the field (never its value)."""
    return field_refused(field, "invalid_bound", message)


_TIME_LIKE = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d")
"""A bound that reads as a date and a time (valid RFC 3339 or not)."""
_CLOCK_TIME = re.compile(r"\d{1,2}:\d\d(?::\d\d(?:\.\d{1,6})?)?")
"""A time of day alone, as a feed's item lines show it ("11:30")."""


async def _position(
    conn: Connection, value: str, channels: list[str], exclusive_end: bool
) -> tuple[int, int]:
    """A browse bound: an RFC 3339 time, or a handle's current position; with one channel
    asked, a message id alone (as a feed of one channel shows it) is that channel's."""
    field = "before" if exclusive_end else "after"
    if _TIME_LIKE.match(value):
        try:
            parse_rfc3339(value)
        except TimeFormatError:
            # a time, not a message id: "2026-12-05T12:00:00" without its offset
            raise _bound_error(
                field, "reads as a time but is not RFC 3339: a time needs its offset (Z or ±hh:mm)"
            ) from None
    if "/" not in value and len(channels) == 1:
        try:
            parse_rfc3339(value)
        except TimeFormatError:
            value = f"{channels[0]}/{value}"
    if "/" in value:
        channel, message_id = value.split("/", 1)
        if channel not in channels:
            raise _bound_error(field, "names a channel not asked for")
        kinds = await sources.channel_kinds(conn, [channel])
        current = await sources.current_versions(
            conn, kinds.get(channel, ""), channel, [message_id]
        )
        version = current.get(message_id)
        if version is None and _CLOCK_TIME.fullmatch(message_id):
            # no message has that id: a time of day as the feed shows it, without its date
            raise _bound_error(
                field,
                "reads as a time of day: a time needs its date and offset "
                "(2026-05-21T09:00:00Z), or name a message",
            )
        if version is None:
            raise ApiError(404, "message_not_found", "after/before names no current message")
        return (version.created_us, version.id)
    try:
        moment = parse_rfc3339(value)
    except TimeFormatError:
        raise _bound_error(
            field,
            "must be a handle (channel/message), an RFC 3339 time, or with one channel asked "
            "a message id alone",
        ) from None
    # exclusive: after T starts past every message at T, before T ends before them
    return (moment, 2**62) if not exclusive_end else (moment, -1)


def _fragment(secret: bytes, version: SourceVersion, offset: int, budget: int) -> dict[str, Any]:
    """One fragment of a message's content from ``offset``, as large as the budget allows."""
    content = version.content
    handle = version.key.handle

    def result(piece: str, next_cursor: str | None) -> dict[str, Any]:
        fragment: dict[str, Any] = {
            "source_handle": handle,
            "content_hash": version.content_hash,
            "offset": offset,
            "total_chars": len(content),
            "content": piece,
        }
        if next_cursor is not None:
            fragment["next_content_cursor"] = next_cursor
        return {"status": "ok", "fragment": fragment, "read_id": READ_ID_PLACEHOLDER}

    length = fragment_length(
        content, offset, lambda piece: len(compact(result(piece, LONGEST_CURSOR))), budget
    )
    end = offset + length
    next_cursor = None
    if end < len(content):
        sha = cursors.content_sha(content)
        next_cursor = cursors.sign(secret, {"h": handle, "s": sha, "o": end})
    return result(content[offset:end], next_cursor)


def complete_versions(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The versions a ``get_channel_messages`` result shows complete: each message with
    its content, and a fragment only when it is the whole content (from offset 0, no
    next cursor). A ``read_content`` locator or a fragment short of the whole is partial."""
    shown = [
        (m["channel_id"], m["message_id"], m["content_hash"])
        for m in result.get("messages") or []
        if m.get("content") is not None and not m.get("deleted")
    ]
    fragment = result.get("fragment")
    if fragment and fragment["offset"] == 0 and "next_content_cursor" not in fragment:
        channel, message_id = fragment["source_handle"].split("/", 1)
        shown.append((channel, message_id, fragment["content_hash"]))
    return shown


async def messages(ctx: ToolContext, principal: Principal, body: MessagesRequest) -> dict[str, Any]:
    """``get_channel_messages``: named, browsed or fragmented, within the result budget,
    with the ``read_id`` naming the versions it shows complete (recorded after the read)."""
    result = await _messages(ctx, principal, body)
    result["read_id"] = await reads.record(ctx, principal, complete_versions(result))
    return result


async def _messages(
    ctx: ToolContext, principal: Principal, body: MessagesRequest
) -> dict[str, Any]:
    caller = Caller(ctx, principal)
    limit = caller.limit(body.limit)
    secret = await ctx.cursor_keys.secret(ctx.store)
    async with ctx.store.read() as conn:
        if body.content_cursor is not None:
            fragment = await _continue_fragment(
                conn, secret, body.content_cursor, principal, caller
            )
            named = body.source_handles or []
            if named and named != [fragment["fragment"]["source_handle"]]:
                raise ApiError(400, "cursor_mismatch", "the content cursor is for another message")
            return fragment
        if body.source_handles or body.message_ids:
            return await _named(conn, secret, body, principal, caller, limit)
        return await _browse(conn, secret, body, principal, caller, limit)


async def _continue_fragment(
    conn: Connection, secret: bytes, token: str, principal: Principal, caller: Caller
) -> dict[str, Any]:
    try:
        payload = cursors.verify(secret, token)
    except CursorError as exc:
        raise _cursor_error(exc) from None
    if not {"h", "s", "o"} <= set(payload):
        raise ApiError(400, "cursor_invalid", "this is not a content cursor")
    channel, message_id = str(payload["h"]).split("/", 1)
    await visible(conn, principal, [channel])
    kinds = await sources.channel_kinds(conn, [channel])
    version = (await sources.current_versions(conn, kinds[channel], channel, [message_id])).get(
        message_id
    )
    if version is None or version.deleted:
        raise ApiError(409, "content_changed", "the message is gone; start again from its handle")
    if cursors.content_sha(version.content) != payload["s"]:
        raise ApiError(
            409, "content_changed", "the message was edited; start again from its handle"
        )
    offset = int(payload["o"])
    if not 0 <= offset <= len(version.content):
        raise ApiError(400, "cursor_invalid", "the content cursor's offset is out of range")
    return _fragment(secret, version, offset, caller.budget)


def _fit_messages(
    versions: list[SourceVersion],
    principal: Principal,
    budget: int,
    envelope: dict[str, Any],
    decisions: Mapping[sources.ExactKey, sources.Decided] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The largest fitting prefix. A message too big for any result on its own comes
    without content, with a ``read_content`` locator to read it in fragments. With
    ``decisions`` (a browse of hard events), each message carries its ``decision`` type,
    a decision by reply the handle of the proposal it ``answers``, and one decided on by
    reply its verdicts' handles (``decided_by``); a decision too big for the result
    comes with its ``decision_excerpt`` (what the feed shows of it: its decision lines,
    else its decision clauses) when that fits."""
    empty = len(compact(envelope))
    used = empty
    messages: list[dict[str, Any]] = []
    locators: list[dict[str, Any]] = []
    for version in versions:
        trust = trust_of(version.origin, version.author_id, principal)
        role = role_of(version.origin, version.author_id, principal)
        decision = (decisions or {}).get(sources.exact_key(version))
        extra = decision.fields() if decision else {}
        item = ToolMessageOut.of_tool(version, trust, role).model_dump(mode="json") | extra
        locator = None
        if empty + len(compact(item)) > budget:
            bare = ToolMessageOut.of_tool(version, trust, role, with_content=False)
            item = bare.model_dump(mode="json") | extra
            locator = {"source_handle": version.key.handle, "content_chars": len(version.content)}
            for excerpt in decision.excerpts if decision is not None else ():
                # a decision too long for the result still shows what the feed shows of it:
                # its decision lines, else its decision clauses (a new user's trial read a
                # 45,000-character report's last lines in four fragments)
                shown = item | {"decision_excerpt": excerpt}
                if empty + len(compact(shown)) + len(compact(locator)) <= budget:
                    item = shown
                    break
        # a comma before every item but a list's first
        cost = len(compact(item)) + (1 if messages else 0)
        if locator:
            cost += len(compact(locator)) + (1 if locators else 0)
        if used + cost > budget:
            break
        used += cost
        messages.append(item)
        if locator:
            locators.append(locator)
    if versions and not messages:  # only with a budget far below the 2,000 minimum
        raise ApiError(500, "budget_too_small", "tools.result_budget_chars cannot hold a message")
    return messages, locators


async def _fit_decisions(
    conn: Connection,
    versions: list[SourceVersion],
    principal: Principal,
    budget: int,
    envelope: dict[str, Any],
    decisions: Mapping[sources.ExactKey, sources.Decided] | None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """:func:`_fit_messages`; when a decision among them comes as a locator, its excerpts
    are read (only then: they are the blocks' texts) and the page fitted again with them."""
    messages, locators = _fit_messages(versions, principal, budget, envelope, decisions)
    located = {locator["source_handle"] for locator in locators}
    big = [v for v in versions if v.key.handle in located]
    if not big or decisions is None:
        return messages, locators
    excerpts = await sources.decision_excerpts(conn, big)
    if not excerpts:
        return messages, locators
    shown = {k: replace(d, excerpts=excerpts.get(k, ())) for k, d in decisions.items()}
    return _fit_messages(versions, principal, budget, envelope, shown)


def _envelope(limit: int) -> dict[str, Any]:
    return {
        "status": "ok",
        "messages": [],
        "read_content": [],
        "omitted": limit,
        "has_more": True,
        "next_cursor": LONGEST_CURSOR,
        "read_id": READ_ID_PLACEHOLDER,
    }


async def _named(
    conn: Connection,
    secret: bytes,
    body: MessagesRequest,
    principal: Principal,
    caller: Caller,
    limit: int,
) -> dict[str, Any]:
    wanted: list[tuple[str, str]] = []
    if body.source_handles:
        wanted = [tuple(h.split("/", 1)) for h in body.source_handles]  # type: ignore[misc]
    else:
        assert body.channels and body.message_ids
        wanted = [(c, m) for c in body.channels for m in body.message_ids]
    wanted = list(dict.fromkeys(wanted))
    await visible(conn, principal, sorted({c for c, _ in wanted}))
    bound = cursors.binding("named", {"w": wanted, "h": body.include_history}, principal.agent_id)
    start = 0
    if body.cursor is not None:
        payload = _paging_cursor(secret, body.cursor, bound)
        start = int(payload["i"])
    found: list[SourceVersion] = []
    for channel in sorted({c for c, _ in wanted}):
        ids = [m for c, m in wanted if c == channel]
        found += await sources.versions_of(conn, channel, ids, include_history=body.include_history)
    order = {key: i for i, key in enumerate(wanted)}
    found.sort(key=lambda v: (order[(v.key.channel_id, v.key.message_id)], v.observed_seq))
    readable = {(v.key.channel_id, v.key.message_id) for v in found}
    # unknown, deleted and forgotten messages look alike: named, never described
    missing = [source_handle(c, m) for c, m in wanted if (c, m) not in readable]
    envelope = {**_envelope(limit), **not_found_listing(missing if start == 0 else [], caller)}
    page = found[start : start + limit + 1]
    fetched = page[:limit]
    # a message named carries what a browse of decisions says of it: a handle followed from
    # a feed's re: or decided: keeps its decision type (a new user's trial)
    decisions = await sources.decisions_of(conn, fetched)
    if len(wanted) == 1 and len(found) == 1 and start == 0 and not body.include_history:
        trust = trust_of(found[0].origin, found[0].author_id, principal)
        role = role_of(found[0].origin, found[0].author_id, principal)
        whole = ToolMessageOut.of_tool(found[0], trust, role).model_dump(mode="json")
        decided = decisions.get(sources.exact_key(found[0]))
        whole |= decided.fields() if decided else {}
        # measured in the envelope the listing below fills: a message that fits here
        # fits there, one that does not comes in fragments
        if len(compact({**envelope, "messages": [whole]})) > caller.budget:
            return _fragment(secret, found[0], 0, caller.budget)
    messages, locators = await _fit_decisions(
        conn, fetched, principal, caller.budget, envelope, decisions
    )
    has_more = len(page) > limit or len(messages) < len(fetched)
    next_cursor = (
        cursors.sign(secret, {"b": bound, "i": start + len(messages)})
        if has_more and messages
        else None
    )
    return {
        "status": "ok" if messages else "empty",
        "messages": messages,
        "read_content": locators,
        "not_found": envelope["not_found"],
        "not_found_omitted": envelope["not_found_omitted"],
        "omitted": len(fetched) - len(messages),
        "has_more": has_more,
        "next_cursor": next_cursor,
    }


def not_found_listing(missing: list[str], caller: Caller) -> dict[str, Any]:
    """``not_found`` (the handles, in the order asked) and ``not_found_omitted``.

    The list takes at most a quarter of the result budget, so messages always fit
    beside it; handles beyond that are counted, not listed.
    """
    share = caller.budget // 4
    count = fitting_prefix(
        {"not_found": [], "not_found_omitted": len(missing)}, "not_found", missing, share
    )
    return {"not_found": missing[:count], "not_found_omitted": len(missing) - count}


async def _browse(
    conn: Connection,
    secret: bytes,
    body: MessagesRequest,
    principal: Principal,
    caller: Caller,
    limit: int,
) -> dict[str, Any]:
    assert body.channels
    channels = sorted(set(body.channels))
    await visible(conn, principal, channels)
    after = await _position(conn, body.after, channels, False) if body.after else None
    before = await _position(conn, body.before, channels, True) if body.before else None
    if body.since:
        try:
            start = parse_since(body.since, caller.ctx.clock())
        except TimeFormatError as exc:
            raise field_refused("since", "invalid_time", str(exc)) from None
        # inclusive, as a feed's window is: a message created at the start is in it
        after = max(after or (start, -1), (start, -1))
    bound = cursors.binding(
        "browse",
        {
            "c": channels,
            "a": body.after,
            "b": body.before,
            "s": body.since,
            "u": body.author,
            "h": body.hard_events,
        },
        principal.agent_id,
    )
    # before alone pages backwards from its anchor; otherwise pages run forwards
    backwards = before is not None and after is None
    if body.cursor is not None:
        payload = _paging_cursor(secret, body.cursor, bound)
        position = (int(payload["t"]), int(payload["i"]))
        if backwards:
            before = position
        else:
            after = position
    found: list[SourceVersion] = []
    for channel in channels:
        found += await sources.browse_current(
            conn,
            channel,
            after,
            before,
            body.author,
            limit + 1,
            newest_first=backwards,
            hard_events=body.hard_events,
        )
    # nearest the anchor first: the budget keeps those, the cursor goes on from the rest
    found.sort(key=lambda v: (v.created_us, v.id), reverse=backwards)
    page = found[: limit + 1]
    fetched = page[:limit]
    decisions = None
    if body.hard_events:  # each read as what the feed calls it
        decisions = await sources.decisions_of(conn, fetched)
    messages, locators = await _fit_decisions(
        conn, fetched, principal, caller.budget, _envelope(limit), decisions
    )
    has_more = len(page) > limit or len(messages) < len(fetched)
    next_cursor = None
    if has_more and messages:
        last = fetched[len(messages) - 1]
        next_cursor = cursors.sign(secret, {"b": bound, "t": last.created_us, "i": last.id})
    if backwards:  # results are in time order whichever way the pages run
        messages.reverse()
        locators.reverse()
    return {
        "status": "ok" if messages else "empty",
        "messages": messages,
        "read_content": locators,
        "omitted": len(fetched) - len(messages),
        "has_more": has_more,
        "next_cursor": next_cursor,
    }


# --- blocks -----------------------------------------------------------------------------


async def expand_block(ctx: ToolContext, principal: Principal, block_id: str) -> dict[str, Any]:
    """A block with its provenance (a prefix of it when long), within the result budget."""
    caller = Caller(ctx, principal)
    async with ctx.store.read() as conn:
        block = await block_store.block_by_id(conn, block_id)
        if block is None or not principal.may_see(block.channel_id):
            raise ApiError(404, "block_not_found", BLOCK_NOT_FOUND)
        if block.kind != TOMBSTONE_BLOCK and await sources.deleted_messages(
            conn, block.channel_id, [s.message_id for s in block.sources]
        ):
            # until the worker replaces it, a block citing a deleted message still
            # holds its content: it answers as a block that no longer exists
            raise ApiError(404, "block_not_found", BLOCK_NOT_FOUND)
        status = await sources.version_status(
            conn, block.channel_id, [(s.message_id, s.content_hash) for s in block.sources]
        )
    provenance = []
    for source in block.sources:
        current, deleted = status.get((source.message_id, source.content_hash), (False, False))
        provenance.append(
            {
                "source_handle": source_handle(block.channel_id, source.message_id),
                "message_id": source.message_id,
                "content_hash": source.content_hash,
                "is_current": current,
                "deleted": deleted,
            }
        )
    trust = block_trust(block, principal)
    result: dict[str, Any] = BlockOut.of(block, trust, block_role(block, principal)).model_dump(
        mode="json", by_alias=True
    )
    envelope = {**result, "provenance": [], "provenance_omitted": len(provenance)}
    count = fitting_prefix(envelope, "provenance", provenance, caller.budget)
    result.update(
        status="ok", provenance=provenance[:count], provenance_omitted=len(provenance) - count
    )
    return result
