"""Reading a window into feed candidates: bounded by the budget, never by the history.

Two readers fill the same :class:`~channel_memory.feed.layout.Candidates`:

- the live view reads materialised blocks newest first, with limits derived from
  ``max_chars``, and shows messages with unprocessed changes from their sources;
- the ``as_of`` view reads the whole window, takes each message's version as of
  then, and uses a stored block only where its sources are exactly those
  versions, rendering the others from their sources.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import aiosqlite

from channel_memory.auth import Principal
from channel_memory.feed.layout import Body, Candidates, FeedItem, Format, Gap, Tier, render
from channel_memory.models import PRIMARY_KINDS, RecallBlock, SourceVersion, source_handle
from channel_memory.store import gaps, sources, windows
from channel_memory.store import llm as llm_store
from channel_memory.timefmt import utc_day
from channel_memory.trust import block_trust, trust_of
from channel_memory.wire import BlockOut, FeedMessageOut

ContextKind = Literal["raw_window+digest", "raw_window"]


@dataclass(frozen=True, slots=True)
class FeedQuery:
    channels: tuple[str, ...]
    kind: ContextKind
    since_us: int
    to_us: int
    as_of: bool
    limit: int
    max_chars: int
    fmt: Format
    raw_recent_us: int
    depth: int = 1
    """Divides how many candidates each tier reads; the shallow first read uses 4."""
    llm_enabled: bool = False
    """Report the LLM processor's state (``llm=`` in the header) for the window's day."""

    @property
    def from_us(self) -> int:
        return self.to_us - self.since_us

    @property
    def raw_cutoff_us(self) -> int:
        return max(self.from_us, self.to_us - self.raw_recent_us)

    @property
    def hard_reach(self) -> int:
        """Hard events read at any depth: as many as could fit (48+ characters each)."""
        return self.max_chars // 48 + 8

    def reach(self, smallest: int) -> int:
        """How many candidates of a tier to read: as many as could fit in the budget, when
        the tier's items take at least ``smallest`` characters with their metadata line."""
        return self.max_chars // (smallest * self.depth) + 8


def block_item(block: RecallBlock, tier: Tier, principal: Principal, fmt: Format) -> FeedItem:
    trust = block_trust(block, principal)
    handles = [source_handle(block.channel_id, s.message_id) for s in block.sources]
    return FeedItem(
        key=block.id,
        tier=tier,
        kind=block.kind,
        event_type=block.event_type,
        handle=handles[0],
        handles=len(handles),
        first_us=block.from_us,
        last_us=block.to_us,
        author=block.author,
        trust=trust,
        text=block.text,
        cut_text=block.cut_text,
        covers=frozenset(() if block.kind == "tombstone" else handles),
        block_id=block.id,
        processor=block.processor,
        generated_us=block.generated_us,
        json_object=BlockOut.of(block, trust).model_dump(mode="json", by_alias=True)
        if fmt == "json"
        else {},
        score=block.score,
        answers=block.answers if block.kind == "hard_event" else None,
    )


def source_item(version: SourceVersion, tier: Tier, principal: Principal, fmt: Format) -> FeedItem:
    """A message rendered from its source version (no current block represents it)."""
    trust = trust_of(version.origin, version.author_id, principal)
    handle = version.key.handle
    json_object = {}
    message_object = None
    if fmt == "json":
        created = FeedMessageOut.of_version(version, trust)
        message_object = created.model_dump(mode="json")
        json_object = {
            "id": None,
            "kind": "raw_excerpt",
            "event_type": None,
            "text": version.content,
            "source_channel": version.key.channel_id,
            "source_messages": [version.key.message_id],
            "source_handles": [handle],
            "covered_content_hashes": [version.content_hash],
            "source_window": {"from": created.created_at, "to": created.created_at},
            "sparse": False,
            "score": 0.5,
            "origin": version.origin,
            "trust": trust,
            "generated_at": None,
            "stale": False,
            "dirty": False,
            "processor": "source",
        }
    return FeedItem(
        key="source:" + handle,
        tier=tier,
        kind="raw_excerpt",
        event_type=None,
        handle=handle,
        handles=1,
        first_us=version.created_us,
        last_us=version.created_us,
        author=version.author_name or version.author_id,
        trust=trust,
        text=version.content,
        cut_text=None,
        covers=frozenset({handle}),
        block_id=None,
        processor="source",
        generated_us=None,
        json_object=json_object,
        message_object=message_object,
    )


def _newest_first(items: Iterable[FeedItem]) -> list[FeedItem]:
    return sorted(items, key=lambda i: (i.last_us, i.first_us, i.key), reverse=True)


def _llm_first(items: Iterable[FeedItem]) -> list[FeedItem]:
    """Sparse candidates, LLM rollups first (tighter than the deterministic ones they
    overlap), each group newest first."""
    return sorted(_newest_first(items), key=lambda i: i.processor == "deterministic")


async def llm_state(conn: aiosqlite.Connection, q: FeedQuery) -> str | None:
    """``capped`` when a daily cap stopped LLM calls on the window's last day for these
    channels or the deployment, ``failing`` while the breaker is open, else ``ok``;
    None when LLM rollups are off. Read from the store: the feed never calls a model."""
    if not q.llm_enabled:
        return None
    day = utc_day(q.to_us)
    if await llm_store.capped_today(conn, day, q.channels):
        return "capped"
    if (await llm_store.breaker(conn)).open_until_us > q.to_us:
        return "failing"
    return "ok"


async def _status(conn: aiosqlite.Connection, q: FeedQuery, pending: bool) -> tuple[str, list[Gap]]:
    """The digest status and the open coverage gaps overlapping the window, oldest first."""
    found: list[Gap] = []
    for channel in q.channels:
        for gap in await gaps.open_gaps_overlapping(conn, channel, q.from_us, q.to_us):
            found.append(Gap(gap.channel_id, gap.from_us, gap.to_us, gap.reason))
    found.sort(key=lambda g: (g.from_us, g.to_us, g.channel))
    return ("coverage_gap" if found else "stale" if pending else "ok"), found


async def _with_messages(
    conn: aiosqlite.Connection, items: list[FeedItem], principal: Principal
) -> list[FeedItem]:
    """Attach source message objects to raw-tier items built from blocks (JSON only)."""
    by_channel: dict[str, list[str]] = defaultdict(list)
    for item in items:
        channel, message_id = item.handle.split("/", 1)
        by_channel[channel].append(message_id)
    found: dict[str, SourceVersion] = {}
    for channel, ids in by_channel.items():
        kinds = await sources.channel_kinds(conn, [channel])
        versions = await sources.current_versions(conn, kinds.get(channel, ""), channel, ids)
        found.update({v.key.handle: v for v in versions.values()})
    out = []
    for item in items:
        version = found.get(item.handle)
        if version is None:
            out.append(item)
            continue
        trust = trust_of(version.origin, version.author_id, principal)
        message = FeedMessageOut.of_version(version, trust).model_dump(mode="json")
        out.append(_replace_message(item, message))
    return out


def _replace_message(item: FeedItem, message: dict[str, object]) -> FeedItem:
    return replace(item, message_object=message)


def _base(
    q: FeedQuery,
    available: int,
    range_us: tuple[int, int] | None,
    status: str,
    open_gaps: list[Gap],
    llm: str | None,
) -> Candidates:
    """The window's numbers, with empty tiers to fill."""
    return Candidates(
        kind=q.kind,
        channels=q.channels,
        since_us=q.since_us,
        from_us=q.from_us,
        to_us=q.to_us,
        raw_recent_us=q.raw_recent_us,
        available=available,
        range_us=range_us,
        status=status,
        coverage_gaps=len(open_gaps),
        gaps=open_gaps,
        hard=[],
        hard_total=0,
        hard_more_handles=[],
        raw=[],
        sparse=[],
        older=[],
        older_total=0,
        limit=q.limit,
        llm=llm,
    )


async def live(conn: aiosqlite.Connection, q: FeedQuery, principal: Principal) -> Candidates:
    """Candidates from the materialised blocks (the request-time view)."""
    channels = list(q.channels)
    available, oldest, newest = await windows.readable_stats(conn, channels, q.from_us, q.to_us)
    pending_keys = await windows.pending_keys(conn, channels, q.reach(48))
    status, open_gaps = await _status(conn, q, bool(pending_keys))
    pending: list[SourceVersion] = []
    by_channel: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key in pending_keys:
        by_channel[(key.source_kind, key.channel_id)].append(key.message_id)
    for (kind, channel), ids in by_channel.items():
        for version in (await sources.current_versions(conn, kind, channel, ids)).values():
            if not version.deleted and q.from_us <= version.created_us <= q.to_us:
                pending.append(version)
    range_us = None if oldest is None or newest is None else (oldest, newest)
    base = _base(q, available, range_us, status, open_gaps, await llm_state(conn, q))
    if q.kind == "raw_window":
        newest_versions: list[SourceVersion] = []
        for channel in channels:
            newest_versions += await windows.readable_newest(
                conn, channel, q.from_us, q.to_us, q.limit
            )
        newest_versions.sort(key=lambda v: (v.created_us, v.id), reverse=True)
        raw_items = [source_item(v, "raw", principal, q.fmt) for v in newest_versions[: q.limit]]
        return replace(base, raw=raw_items)
    cutoff = q.raw_cutoff_us
    hard_blocks: list[RecallBlock] = []
    raw_blocks: list[RecallBlock] = []
    older_blocks: list[RecallBlock] = []
    sparse_blocks: list[RecallBlock] = []
    more: list[tuple[int, str]] = []
    truncated = False
    hard_total = await windows.fresh_block_count(conn, channels, "hard_event", q.from_us, q.to_us)
    # One channel per read, so every read stops at its LIMIT in index order.
    for channel in channels:
        # hard events come first whatever the depth: read as many as could fit
        found = await windows.fresh_blocks_newest(
            conn, channel, "hard_event", q.from_us, q.to_us, q.hard_reach
        )
        hard_blocks += found
        if len(hard_blocks) < hard_total:  # only when some hard event may go unshown
            more += await windows.message_block_handles(
                conn, channel, "hard_event", q.from_us, q.to_us, len(found), q.max_chars // 40
            )
        tiers = (
            await windows.fresh_blocks_newest(
                conn, channel, "raw_excerpt", cutoff, q.to_us, q.limit + q.reach(64)
            ),
            await windows.fresh_blocks_newest(
                conn, channel, "raw_excerpt", q.from_us, cutoff - 1, q.reach(64)
            ),
            await windows.fresh_sparse_within(conn, channel, q.from_us, q.to_us, q.reach(96)),
        )
        raw_blocks += tiers[0]
        older_blocks += tiers[1]
        sparse_blocks += tiers[2]
        for tier, smallest, extra in zip(tiers, (64, 64, 96), (q.limit, 0, 0), strict=True):
            truncated = truncated or len(tier) == q.reach(smallest) + extra
    older_total = await windows.fresh_block_count(
        conn, channels, "raw_excerpt", q.from_us, cutoff - 1
    )
    hard_items = _newest_first(block_item(b, "hard", principal, q.fmt) for b in hard_blocks)
    kept = hard_items[: q.hard_reach]
    dropped = [(i.first_us, i.handle) for i in hard_items[q.hard_reach :]]
    more_handles = [h for _, h in sorted(dropped + more, reverse=True)]
    raw_items = [block_item(b, "raw", principal, q.fmt) for b in raw_blocks]
    older_items = [block_item(b, "older", principal, q.fmt) for b in older_blocks]
    for version in pending:
        recent = version.created_us >= cutoff
        item = source_item(version, "raw" if recent else "older", principal, q.fmt)
        (raw_items if recent else older_items).append(item)
        older_total += 0 if recent else 1
    raw_items = _newest_first(raw_items)[: q.limit + q.reach(64)]
    if q.fmt == "json":
        raw_items = (
            await _with_messages(conn, raw_items[: q.limit], principal) + raw_items[q.limit :]
        )
    sparse_items = _llm_first(block_item(b, "sparse", principal, q.fmt) for b in sparse_blocks)
    return replace(
        base,
        hard=kept,
        hard_total=hard_total,
        hard_more_handles=more_handles,
        raw=raw_items,
        sparse=sparse_items[: q.reach(96)],
        older=_newest_first(older_items)[: q.reach(64)],
        older_total=older_total,
        truncated=truncated,
    )


async def serve(conn: aiosqlite.Connection, q: FeedQuery, principal: Principal) -> Body:
    """Read and lay out a feed; raises ``BudgetTooSmall`` like :func:`render`.

    The live view first reads a quarter of each tier's reach. Only when some tier
    had more to offer and either the budget was left unfilled or a tier's every
    candidate was served (so more of it might have displaced lower priorities)
    does it read the full reach.
    """
    if q.as_of:
        return render(await as_of(conn, q, principal), q.max_chars, q.fmt)
    shallow = await live(conn, replace(q, depth=4), principal)
    body = render(shallow, q.max_chars, q.fmt)
    unfilled = len(body.content) < q.max_chars - FILLED_SLACK
    if shallow.truncated and (unfilled or body.used_up):
        body = render(await live(conn, q, principal), q.max_chars, q.fmt)
    return body


FILLED_SLACK = 160
"""Characters a layout may leave unused and still count as having filled its budget."""


def as_of_versions(
    versions: Sequence[SourceVersion], as_of_us: int, *, reveal_deleted: bool = True
) -> dict[str, SourceVersion]:
    """Each message's version as of a time: the newest one observed by then.

    A message deleted since keeps that version only with ``reveal_deleted`` (an
    investigation); otherwise it is its tombstone (the current deletion, without
    content), as every other read shows a deleted message. Messages not created by
    then are absent either way.
    """
    chosen: dict[str, SourceVersion] = {}
    tombstones: dict[str, SourceVersion] = {}
    for version in versions:
        handle = version.key.handle
        if version.is_current and version.deleted:
            tombstones[handle] = replace(version, content="")
        if version.event_us > as_of_us or version.created_us > as_of_us:
            continue
        rank = (version.event_us, version.deleted, version.observed_seq)
        held = chosen.get(handle)
        if held is None or rank > (held.event_us, held.deleted, held.observed_seq):
            chosen[handle] = version
    if not reveal_deleted:
        chosen = {h: tombstones.get(h, v) for h, v in chosen.items()}
    return chosen


async def as_of(conn: aiosqlite.Connection, q: FeedQuery, principal: Principal) -> Candidates:
    """Candidates as the feed would have served them at ``q.to_us``."""
    channels = list(q.channels)
    then = as_of_versions(
        await windows.versions_in_window(conn, channels, q.from_us, q.to_us),
        q.to_us,
        reveal_deleted="admin" in principal.scopes,
    )
    readable = {h: v for h, v in then.items() if not v.deleted}
    status, open_gaps = await _status(conn, q, False)
    times = [v.created_us for v in readable.values()]
    range_us = (min(times), max(times)) if times else None
    base = _base(q, len(readable), range_us, status, open_gaps, await llm_state(conn, q))
    if q.kind == "raw_window":
        newest = sorted(readable.values(), key=lambda v: (v.created_us, v.id), reverse=True)
        return replace(
            base, raw=[source_item(v, "raw", principal, q.fmt) for v in newest[: q.limit]]
        )

    def matches(block: RecallBlock) -> bool:
        return (
            all(
                (v := then.get(source_handle(block.channel_id, s.message_id))) is not None
                and v.content_hash == s.content_hash
                for s in block.sources
            )
            and block.to_us <= q.to_us
        )

    valid = [
        b for b in await windows.blocks_within(conn, channels, q.from_us, q.to_us) if matches(b)
    ]
    primary: dict[str, RecallBlock] = {}
    for block in valid:
        if block.kind in PRIMARY_KINDS:
            for s in block.sources:
                primary[source_handle(block.channel_id, s.message_id)] = block
    cutoff = q.raw_cutoff_us
    hard: list[FeedItem] = []
    raw_items: list[FeedItem] = []
    older_items: list[FeedItem] = []
    for handle, version in readable.items():
        own = primary.get(handle)
        recent = version.created_us >= cutoff
        if own is not None and own.kind == "hard_event":
            hard.append(block_item(own, "hard", principal, q.fmt))
        elif own is None or own.kind == "raw_excerpt":
            # recent messages, and those no stored block matches, come from their source
            if recent or own is None:
                item = source_item(version, "raw" if recent else "older", principal, q.fmt)
            else:
                item = block_item(own, "older", principal, q.fmt)
            (raw_items if recent else older_items).append(item)
    sparse = [
        block_item(b, "sparse", principal, q.fmt)
        for b in valid
        if b.sparse and b.from_us >= q.from_us
    ]
    hard = _newest_first(hard)
    return replace(
        base,
        hard=hard,
        hard_total=len(hard),
        hard_more_handles=[],
        raw=_newest_first(raw_items),
        sparse=_llm_first(sparse),
        older=_newest_first(older_items),
        older_total=len(older_items),
    )
