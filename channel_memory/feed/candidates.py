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
from typing import Any, Literal

from channel_memory.feed.layout import (
    FILLED_SLACK,
    Body,
    Candidates,
    FeedItem,
    Format,
    Gap,
    Trigger,
    is_elided,
    is_summary,
    render,
)
from channel_memory.feed.reads import consumer_of
from channel_memory.kernel.models import (
    HARD_EVENT_BLOCK,
    PRIMARY_KINDS,
    RAW_EXCERPT,
    TOMBSTONE_BLOCK,
    RecallBlock,
    SourceVersion,
    source_handle,
)
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import utc_day
from channel_memory.kernel.trust import block_role, block_trust, role_of, trust_of
from channel_memory.kernel.wire import BlockOut, FeedMessageOut
from channel_memory.store import consumption, gaps, sources, windows
from channel_memory.store import llm as llm_store
from channel_memory.store.connection import Connection

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
    lean: bool = False
    """With ``fmt`` json: lean items (``detail=lean``, :func:`lean_block`)."""
    depth: int = 1
    """Divides how many candidates each tier reads; the shallow first read uses 4."""
    llm_enabled: bool = False
    """Report the LLM processor's state (``llm=`` in the header) for the window's day."""
    trigger: str | None = None
    """The handle of the message that woke the agent: shown whole, outside ``max_chars``."""
    trigger_author: str | None = None
    """The trigger's author id: that author's elements have trust ``trigger``."""
    trigger_answers: str | None = None
    """The handle of the message the trigger replies to: its hard event is read whatever
    the budget's reach (it is chosen first when not every hard event fits)."""
    unconsumed_only: bool = False
    """Serve only what the consumer has not consumed (``unconsumed=only``)."""
    told_hard: frozenset[str] = frozenset()
    """With ``unconsumed_only``: the handles of the window's hard events a handled read
    showed, which the hard tier reads past and neither counts nor names (they are not
    served again, and the newest unshown still are); read once per feed."""
    told_older: frozenset[str] = frozenset()
    """Likewise the older messages' handles (excerpts before the raw tier's cutoff)."""
    told_other: int = 0
    """With ``unconsumed_only``: how many of the window's other blocks a handled read
    showed, which the other tiers read past likewise."""

    @property
    def from_us(self) -> int:
        return self.to_us - self.since_us

    @property
    def item_fmt(self) -> ItemFormat:
        """How each item is built: text, json, or lean json."""
        return "lean" if self.fmt == "json" and self.lean else self.fmt

    @property
    def raw_cutoff_us(self) -> int:
        return max(self.from_us, self.to_us - self.raw_recent_us)

    @property
    def hard_reach(self) -> int:
        """Hard events read at any depth: as many as could fit (48+ characters each)."""
        return self.max_chars // 48 + 8 + len(self.told_hard)

    def reach(self, smallest: int) -> int:
        """How many candidates of a tier to read: as many as could fit in the budget, when
        the tier's items take at least ``smallest`` characters with their metadata line."""
        return self.max_chars // (smallest * self.depth) + 8 + self.told_other


ItemFormat = Literal["text", "json", "lean"]
"""How a feed item is built: for a text body, or as a full or a lean JSON object."""

_BUILT_BY_CODE = frozenset({"deterministic", "source"})


def lean_block(full: dict[str, Any]) -> dict[str, Any]:
    """A digest item as ``detail=lean`` serves it: what a model reads of a block (its kind
    and type, its sources' handles, when, who, how far it is trusted, its text), without
    what identifies and verifies it (its sources' content hashes, its score, when it was
    generated: ``detail=full`` has them, and the tools give each source by handle); its id
    only when it covers several messages (``expand_digest_block`` takes it, as the text's
    ``id=``), what it ``answers`` when it is a decision by reply.
    ``at`` is its newest source's time, ``from`` its oldest's when it spans several;
    ``stale``, ``dirty`` and ``processor`` are there only when they say something (true,
    an LLM's)."""
    window = full["source_window"]
    lean: dict[str, Any] = {}
    if len(full["source_handles"]) > 1 and full.get("id"):
        lean["id"] = full["id"]  # what expand_digest_block takes, as the text's ``id=``
    lean["kind"] = full["kind"]
    if full.get("event_type"):
        lean["event_type"] = full["event_type"]
    lean["source_handles"] = full["source_handles"]
    lean["at"] = window["to"]
    if window["from"] != window["to"]:
        lean["from"] = window["from"]
    for key in ("author_name", "role", "origin", "trust"):
        if full.get(key) is not None:
            lean[key] = full[key]
    for key in ("stale", "dirty"):
        if full.get(key):
            lean[key] = True
    if full.get("answers"):  # the proposal a decision by reply decides on (the text's re:)
        lean["answers"] = full["answers"]
    if full.get("processor") not in _BUILT_BY_CODE:
        lean["processor"] = full["processor"]
    lean["text"] = full["text"]
    return lean


def lean_message(full: dict[str, Any]) -> dict[str, Any]:
    """A message as ``detail=lean`` serves it: its handle, when, who, how far it is trusted,
    what it answers and its content (not its version's bookkeeping: ids, content hash,
    sequence; ``edited_at``, ``reply_to`` and ``thread_id`` only when set; ``is_current``
    false and ``superseded_by`` only for a version replaced since, as ``as_of`` shows one;
    ``author_id`` only when it has no ``author_name``)."""
    lean: dict[str, Any] = {
        "source_handle": full["source_handle"],
        "created_at": full["created_at"],
    }
    if full.get("edited_at"):
        lean["edited_at"] = full["edited_at"]
    if full.get("is_current") is False:
        lean["is_current"] = False
        lean["superseded_by"] = full.get("superseded_by")
    if full.get("author_name"):
        lean["author_name"] = full["author_name"]
    else:
        lean["author_id"] = full.get("author_id")
    for key in ("role", "origin", "trust", "reply_to", "thread_id"):
        if full.get(key) is not None:
            lean[key] = full[key]
    lean["content"] = full["content"]
    return lean


def _message_object(message: FeedMessageOut, fmt: ItemFormat) -> dict[str, Any]:
    full = message.model_dump(mode="json")
    return lean_message(full) if fmt == "lean" else full


def _block_object(block: BlockOut, fmt: ItemFormat) -> dict[str, Any]:
    full = block.model_dump(mode="json", by_alias=True)
    return lean_block(full) if fmt == "lean" else full


def _whole(block: RecallBlock) -> bool:
    """Whether the block, shown uncut, shows its one message's whole version."""
    if len(block.sources) != 1 or block.processor != "deterministic":
        return False
    if block.kind == HARD_EVENT_BLOCK:
        return not is_elided(block.text)
    return block.kind in (RAW_EXCERPT, TOMBSTONE_BLOCK)


def block_item(
    block: RecallBlock,
    principal: Principal,
    fmt: ItemFormat,
    trigger_author: str | None = None,
) -> FeedItem:
    trust = block_trust(block, principal, trigger_author)
    role = block_role(block, principal)
    handles = [source_handle(block.channel_id, s.message_id) for s in block.sources]
    return FeedItem(
        key=block.id,
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
        covers=frozenset(() if block.kind == TOMBSTONE_BLOCK else handles),
        block_id=block.id,
        processor=block.processor,
        generated_us=block.generated_us,
        json_object={} if fmt == "text" else _block_object(BlockOut.of(block, trust, role), fmt),
        score=block.score,
        answers=block.answers if block.kind == HARD_EVENT_BLOCK else None,
        role=role,
        versions=tuple((block.channel_id, s.message_id, s.content_hash) for s in block.sources),
        whole=_whole(block),
    )


def _version_of(version: SourceVersion) -> tuple[str, str, str]:
    return (version.key.channel_id, version.key.message_id, version.content_hash)


def source_item(
    version: SourceVersion,
    principal: Principal,
    fmt: ItemFormat,
    trigger_author: str | None = None,
) -> FeedItem:
    """A message rendered from its source version (no current block represents it)."""
    trust = trust_of(version.origin, version.author_id, principal, trigger_author)
    role = role_of(version.origin, version.author_id, principal)
    handle = version.key.handle
    json_object = {}
    message_object = None
    if fmt != "text":
        created = FeedMessageOut.of_version(version, trust, role)
        message_object = _message_object(created, fmt)
        json_object = {
            "id": None,
            "kind": RAW_EXCERPT,
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
            "role": role,
            "generated_at": None,
            "stale": False,
            "dirty": False,
            "processor": "source",
            "author_name": version.author_name or version.author_id,
        }
        if fmt == "lean":
            json_object = lean_block(json_object)
    return FeedItem(
        key="source:" + handle,
        kind=RAW_EXCERPT,
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
        role=role,
        versions=(_version_of(version),),
        whole=True,
    )


def _newest_first(items: Iterable[FeedItem]) -> list[FeedItem]:
    return sorted(items, key=lambda i: (i.last_us, i.first_us, i.key), reverse=True)


def _llm_first(items: Iterable[FeedItem]) -> list[FeedItem]:
    """Sparse candidates, LLM rollups first (tighter than the deterministic ones they
    overlap), each group newest first."""
    return sorted(_newest_first(items), key=lambda i: i.processor == "deterministic")


async def llm_state(conn: Connection, q: FeedQuery) -> str | None:
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


async def _status(conn: Connection, q: FeedQuery, pending: bool) -> tuple[str, list[Gap]]:
    """The digest status and the open coverage gaps overlapping the window, oldest first."""
    found: list[Gap] = []
    for channel in q.channels:
        for gap in await gaps.open_gaps_overlapping(conn, channel, q.from_us, q.to_us):
            found.append(Gap(gap.channel_id, gap.from_us, gap.to_us, gap.reason))
    found.sort(key=lambda g: (g.from_us, g.to_us, g.channel))
    return ("coverage_gap" if found else "stale" if pending else "ok"), found


async def _with_messages(
    conn: Connection,
    items: list[FeedItem],
    principal: Principal,
    trigger_author: str | None = None,
    fmt: ItemFormat = "json",
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
        trust = trust_of(version.origin, version.author_id, principal, trigger_author)
        role = role_of(version.origin, version.author_id, principal)
        message = FeedMessageOut.of_version(version, trust, role)
        out.append(_replace_message(item, _message_object(message, fmt)))
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


async def live(conn: Connection, q: FeedQuery, principal: Principal) -> Candidates:
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
        raw_items = [
            source_item(v, principal, q.item_fmt, q.trigger_author)
            for v in newest_versions[: q.limit]
        ]
        return replace(base, raw=raw_items)
    cutoff = q.raw_cutoff_us
    hard_blocks: list[RecallBlock] = []
    raw_blocks: list[RecallBlock] = []
    older_blocks: list[RecallBlock] = []
    sparse_blocks: list[RecallBlock] = []
    more: list[tuple[int, str]] = []
    truncated = False
    hard_total = await windows.fresh_block_count(
        conn, channels, HARD_EVENT_BLOCK, q.from_us, q.to_us
    )
    # One channel per read, so every read stops at its LIMIT in index order.
    for channel in channels:
        # hard events come first whatever the depth: read as many as could fit
        found = await windows.fresh_blocks_newest(
            conn, channel, HARD_EVENT_BLOCK, q.from_us, q.to_us, q.hard_reach
        )
        hard_blocks += found
        if len(hard_blocks) < hard_total:  # only when some hard event may go unshown
            more += await windows.message_block_handles(
                conn, channel, HARD_EVENT_BLOCK, q.from_us, q.to_us, len(found), q.max_chars // 40
            )
        tiers = (
            await windows.fresh_blocks_newest(
                conn, channel, RAW_EXCERPT, cutoff, q.to_us, q.limit + q.reach(64)
            ),
            await windows.fresh_blocks_newest(
                conn, channel, RAW_EXCERPT, q.from_us, cutoff - 1, q.reach(64)
            ),
            await windows.fresh_sparse_within(conn, channel, q.from_us, q.to_us, q.reach(96)),
        )
        raw_blocks += tiers[0]
        older_blocks += tiers[1]
        sparse_blocks += tiers[2]
        for tier, smallest, extra in zip(tiers, (64, 64, 96), (q.limit, 0, 0), strict=True):
            truncated = truncated or len(tier) == q.reach(smallest) + extra
    older_total = await windows.fresh_block_count(
        conn, channels, RAW_EXCERPT, q.from_us, cutoff - 1
    )
    hard_items = _newest_first(
        block_item(b, principal, q.item_fmt, q.trigger_author) for b in hard_blocks
    )
    kept = hard_items[: q.hard_reach]
    dropped = [(i.first_us, i.handle) for i in hard_items[q.hard_reach :]]
    # the hard event the trigger answers is read however old: "yes" as the trigger, its
    # proposal older than the budget's reach (a new user's trial)
    pinned = await _trigger_answers(conn, q, principal)
    if pinned is not None and all(i.key != pinned.key for i in kept):
        kept = _newest_first([*kept, pinned])
        dropped = [d for d in dropped if d[1] != pinned.handle]
        more = [m for m in more if m[1] != pinned.handle]
    more_handles = [h for _, h in sorted(dropped + more, reverse=True)]
    raw_items = [block_item(b, principal, q.item_fmt, q.trigger_author) for b in raw_blocks]
    older_items = [block_item(b, principal, q.item_fmt, q.trigger_author) for b in older_blocks]
    for version in pending:
        recent = version.created_us >= cutoff
        item = source_item(version, principal, q.item_fmt, q.trigger_author)
        (raw_items if recent else older_items).append(item)
        older_total += 0 if recent else 1
    raw_items = _newest_first(raw_items)[: q.limit + q.reach(64)]
    if q.fmt == "json":
        raw_items = (
            await _with_messages(
                conn, raw_items[: q.limit], principal, q.trigger_author, q.item_fmt
            )
            + raw_items[q.limit :]
        )
    sparse_items = _llm_first(
        block_item(b, principal, q.item_fmt, q.trigger_author) for b in sparse_blocks
    )
    return replace(
        base,
        hard=kept,
        answered=await _answered(conn, kept, q.to_us),
        hard_total=hard_total,
        hard_more_handles=more_handles,
        raw=raw_items,
        sparse=sparse_items[: q.reach(96)],
        older=_newest_first(older_items)[: q.reach(64)],
        older_total=older_total,
        truncated=truncated,
    )


async def _trigger_answers(conn: Connection, q: FeedQuery, principal: Principal) -> FeedItem | None:
    """The hard event covering the message the trigger replies to, when the window holds
    one (see ``FeedQuery.trigger_answers``)."""
    if q.trigger_answers is None:
        return None
    channel, message_id = q.trigger_answers.split("/", 1)
    if channel not in q.channels:
        return None
    block = await windows.fresh_block_covering(
        conn, channel, message_id, HARD_EVENT_BLOCK, q.from_us, q.to_us
    )
    return None if block is None else block_item(block, principal, q.item_fmt, q.trigger_author)


async def _answered(
    conn: Connection,
    hard: Sequence[FeedItem],
    to_us: int,
    then: dict[str, SourceVersion] | None = None,
) -> frozenset[str]:
    """The handles of the hard events in ``hard`` that a message created by ``to_us``
    answers (:func:`windows.answered`), one query per channel. With ``then`` (an
    ``as_of`` view's readable versions), an answer counts only when the view holds the
    version its class was derived from: one edited since does not, nor one deleted since
    (the view shows it deleted, and its class no longer reads a parent)."""
    asked: dict[str, list[str]] = defaultdict(list)
    for item in hard:
        for channel, message, _ in item.versions:
            asked[channel].append(message)
    found: set[str] = set()
    for channel, messages in asked.items():
        if then is None:
            ids = await windows.answered(conn, channel, messages, to_us)
        else:
            ids = {
                parent
                for parent, answer, digest in await windows.answers(conn, channel, messages, to_us)
                if (held := then.get(source_handle(channel, answer))) is not None
                and held.content_hash == digest
            }
        found |= {source_handle(channel, m) for m in ids}
    return frozenset(found)


async def serve(
    conn: Connection,
    q: FeedQuery,
    principal: Principal,
    trigger: SourceVersion | None = None,
) -> Body:
    """Read and lay out a feed; raises ``BudgetTooSmall`` like :func:`render`.

    ``trigger`` (the current version of ``q.trigger``) is shown first, whole. Every
    element is marked ``new`` unless the consumer consumed what it shows; with
    ``q.unconsumed_only`` only new elements are candidates.

    The live view first reads a quarter of each tier's reach. Only when some tier
    had more to offer and either the budget was left unfilled or a tier's every
    candidate was served (so more of it might have displaced lower priorities)
    does it read the full reach.
    """
    if q.as_of:
        found = await as_of(conn, q, principal)
        return render(await marked(conn, q, principal, found, trigger), q.max_chars, q.fmt)
    if q.unconsumed_only:
        q = await with_told(conn, q, consumer_of(principal))
    shallow_q = replace(q, depth=4)
    shallow = await marked(conn, q, principal, await live(conn, shallow_q, principal), trigger)
    body = render(shallow, q.max_chars, q.fmt)
    unfilled = len(body.content) - body.numbers.get("trigger_chars", 0) < q.max_chars - FILLED_SLACK
    if shallow.truncated and (unfilled or body.used_up):
        deep = await marked(conn, q, principal, await live(conn, q, principal), trigger)
        body = render(deep, q.max_chars, q.fmt)
    return body


async def with_told(conn: Connection, q: FeedQuery, consumer: str) -> FeedQuery:
    """``q`` with what a handled read of ``consumer`` showed in its window (for
    ``unconsumed=only``): read once, before the tiers, which read past it."""
    told_hard = await consumption.shown_blocks(
        conn, consumer, q.channels, HARD_EVENT_BLOCK, q.from_us, q.to_us
    )
    told_older = await consumption.shown_blocks(
        conn, consumer, q.channels, RAW_EXCERPT, q.from_us, q.raw_cutoff_us - 1
    )
    others = await consumption.shown_other_blocks(conn, consumer, q.channels, q.from_us, q.to_us)
    return replace(
        q,
        told_hard=frozenset(told_hard),
        told_older=frozenset(told_older),
        told_other=others,
    )


def _with_new(item: FeedItem, new: bool) -> FeedItem:
    json_object = {**item.json_object, "new": new} if item.json_object else item.json_object
    message = item.message_object
    return replace(
        item,
        new=new,
        json_object=json_object,
        message_object=None if message is None else {**message, "new": new},
    )


def answered_id(version: SourceVersion) -> str | None:
    """The message id a message answers: its reply's target, else its thread's root (a
    thread reply answers the root; a root answers nothing)."""
    return next(
        (t for t in (version.reply_to, version.thread_id) if t and t != version.key.message_id),
        None,
    )


def trigger_view(
    version: SourceVersion, q: FeedQuery, principal: Principal, new: bool, counted: bool
) -> Trigger:
    """The trigger as the feed shows it; ``counted``: it is among the header's
    ``available`` messages (so it counts as shown, never as omitted)."""
    trust = trust_of(version.origin, version.author_id, principal, q.trigger_author)
    role = role_of(version.origin, version.author_id, principal)
    message = _message_object(FeedMessageOut.of_version(version, trust, role), q.item_fmt)
    return Trigger(
        handle=version.key.handle,
        created_us=version.created_us,
        author=version.author_name or version.author_id,
        trust=trust,
        role=role,
        new=new,
        text=version.content,
        version=_version_of(version),
        in_window=counted,
        reply_to=answered_id(version),
        message_object={**message, "new": new},
    )


async def marked(
    conn: Connection,
    q: FeedQuery,
    principal: Principal,
    c: Candidates,
    trigger: SourceVersion | None,
) -> Candidates:
    """``c`` with every element marked ``new`` or not for the consumer, the trigger set
    apart (no item showing it alone stays in a tier), and, with ``q.unconsumed_only``,
    only new elements left (the header's ``available`` then counts new messages)."""
    consumer = consumer_of(principal)
    tiers = (c.hard, c.raw, c.sparse, c.older)
    asked = {v for tier in tiers for item in tier for v in item.versions}
    if trigger is not None:
        asked.add(_version_of(trigger))
    done: set[tuple[str, str, str]] = set(await consumption.consumed(conn, consumer, asked))
    # a summary (no one message's whole version) is new until a handled read showed each
    # of its versions, whole or in part; the messages themselves stay new until shown
    # whole, but under unconsumed=only nothing a handled read showed — whole, cut, in a
    # summary or counted — is served again (ADR 0068)
    seen = done | set(await consumption.summarized(conn, consumer, asked - done))

    def keep(items: Sequence[FeedItem]) -> list[FeedItem]:
        out = []
        for item in items:
            if trigger is not None and item.handles == 1 and item.handle == trigger.key.handle:
                continue  # the trigger section shows it
            new = any(v not in (seen if is_summary(item) else done) for v in item.versions)
            if q.unconsumed_only:
                if all(v in seen for v in item.versions):
                    continue
                known = {source_handle(v[0], v[1]) for v in item.versions if v in seen}
                # the header counts new messages: a summary served again for the one
                # message that joined it covers that one, not those shown before
                item = replace(item, covers=item.covers - known)
            out.append(_with_new(item, new))
        return out

    hard, raw, sparse, older = (keep(tier) for tier in tiers)
    more = list(c.hard_more_handles)
    hard_total = c.hard_total - (len(c.hard) - len(hard))
    kept_older = {i.key for i in older}
    older_total = c.older_total - sum(
        1
        for i in c.older
        if i.kind in (RAW_EXCERPT, HARD_EVENT_BLOCK) and i.handles == 1 and i.key not in kept_older
    )
    if q.unconsumed_only:
        # hard events and older messages beyond those loaded that a handled read showed are
        # not counted nor named as omitted (else the hard tier never seems complete and the
        # rest is never served: a review's stuck feed)
        more = [h for h in more if h not in q.told_hard]
        hard_total -= len(q.told_hard - {i.handle for i in c.hard})
        older_total -= len(q.told_older - {i.handle for i in c.older})
    if trigger is not None and trigger.key.handle in more:
        more.remove(trigger.key.handle)
        hard_total -= 1
    available = c.available
    if q.unconsumed_only:
        available -= await consumption.consumed_in_window(
            conn, consumer, q.channels, q.from_us, q.to_us, summarized=True
        )
    view = None
    if trigger is not None:
        new = _version_of(trigger) not in done
        # counted among the header's messages as the window counts it: under
        # unconsumed=only one a handled read showed, even in part, is not counted
        in_window = q.from_us <= trigger.created_us <= q.to_us and (
            not q.unconsumed_only or _version_of(trigger) not in seen
        )
        view = trigger_view(trigger, q, principal, new, in_window)
    return replace(
        c,
        hard=hard,
        hard_total=hard_total,
        hard_more_handles=more,
        raw=raw,
        sparse=sparse,
        older=older,
        older_total=max(0, older_total),
        available=available,
        trigger=view,
    )


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


async def as_of(conn: Connection, q: FeedQuery, principal: Principal) -> Candidates:
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
            base,
            raw=[
                source_item(v, principal, q.item_fmt, q.trigger_author) for v in newest[: q.limit]
            ],
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
        if own is not None and own.kind == HARD_EVENT_BLOCK:
            hard.append(block_item(own, principal, q.item_fmt, q.trigger_author))
        elif own is None or own.kind == RAW_EXCERPT:
            # recent messages, and those no stored block matches, come from their source
            if recent or own is None:
                item = source_item(version, principal, q.item_fmt, q.trigger_author)
            else:
                item = block_item(own, principal, q.item_fmt, q.trigger_author)
            (raw_items if recent else older_items).append(item)
    sparse = [
        block_item(b, principal, q.item_fmt, q.trigger_author)
        for b in valid
        if b.sparse and b.from_us >= q.from_us
    ]
    hard = _newest_first(hard)
    return replace(
        base,
        hard=hard,
        answered=await _answered(conn, hard, q.to_us, readable),
        hard_total=len(hard),
        hard_more_handles=[],
        raw=_newest_first(raw_items),
        sparse=_llm_first(sparse),
        older=_newest_first(older_items),
        older_total=len(older_items),
    )
