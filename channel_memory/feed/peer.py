"""The peer-compatible digest: derived blocks of a window, as the peer adapter serves them
(``POST /digest``, mounted by ``channel_memory.http.feed_peer``).

Selection (the peer wire): hard events and collapsed-noise blocks are always
served; ordinary messages by their raw excerpt — or, with ``budget.raw_recent``,
those older than it by a rollup where one exists, otherwise dropped and counted
in ``coverage.older_raw_messages``. ``budget.max_blocks`` (default 32) caps the
ordinary blocks, keeping the newest. Dirty blocks are never served.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from channel_memory.feed.reads import ReadContext
from channel_memory.kernel.errors import ApiError
from channel_memory.kernel.models import (
    DECISION_REPEAT,
    HARD_EVENT_BLOCK,
    LOW_VALUE_ACK,
    RAW_EXCERPT,
    ROLLUP_KINDS,
    TELEMETRY_COUNT,
    TOMBSTONE_BLOCK,
    RecallBlock,
)
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import (
    TimeFormatError,
    format_rfc3339,
    parse_go_duration,
    parse_since,
    utc_day,
)
from channel_memory.kernel.trust import block_trust
from channel_memory.kernel.wire import BlockOut, Id, LenientModel
from channel_memory.store import blocks as block_store
from channel_memory.store import dirty as dirty_store
from channel_memory.store import gaps, sources
from channel_memory.store import llm as llm_store
from channel_memory.store.gaps import CoverageGap

ALWAYS_SERVED = frozenset(
    {HARD_EVENT_BLOCK, TOMBSTONE_BLOCK, TELEMETRY_COUNT, LOW_VALUE_ACK, DECISION_REPEAT}
)


class PeerDigestBudget(LenientModel):
    max_blocks: Annotated[int, Field(ge=1, le=10_000)] | None = None
    raw_recent: Annotated[str, Field(max_length=64)] | None = None


class PeerDigestRequest(LenientModel):
    source_kind: Annotated[str, Field(max_length=64)] | None = None
    channel_ids: Annotated[list[Id], Field(max_length=100)] = Field(default_factory=list)
    since: Annotated[str, Field(max_length=64)] | None = None
    budget: PeerDigestBudget = Field(default_factory=PeerDigestBudget)


class PeerGapOut(BaseModel):
    id: int
    channel_id: str
    from_: str = Field(alias="from")
    to: str
    reason: str | None
    created_at: str

    @classmethod
    def of(cls, gap: CoverageGap) -> PeerGapOut:
        return cls.model_validate(
            {
                "id": gap.id,
                "channel_id": gap.channel_id,
                "from": format_rfc3339(gap.from_us),
                "to": format_rfc3339(gap.to_us),
                "reason": gap.reason,
                "created_at": format_rfc3339(gap.created_us),
            }
        )


class PeerDigestCoverage(BaseModel):
    from_: str = Field(alias="from")
    to: str
    source_messages: int
    digest_messages: int
    raw_recent_messages: int
    older_raw_messages: int
    gaps: list[PeerGapOut]


class PeerDigestCost(BaseModel):
    deterministic_only: bool
    llm_calls_today: int


class PeerDigestResponse(BaseModel):
    status: str
    generated_at: str
    coverage: PeerDigestCoverage
    blocks: list[BlockOut]
    cost: PeerDigestCost


def select_blocks(
    blocks: list[RecallBlock], raw_cutoff_us: int | None, max_blocks: int
) -> tuple[list[RecallBlock], int, int]:
    """Choose what to serve: ``(blocks, raw_recent_messages, older_raw_messages)``."""
    rollup_of: dict[str, RecallBlock] = {}
    # LLM rollups first: where one exists it is the tighter alternative
    for block in sorted(blocks, key=lambda b: b.processor == "deterministic"):
        if block.kind in ROLLUP_KINDS and not block.dirty:
            for source in block.sources:
                rollup_of.setdefault(source.message_id, block)
    always: list[RecallBlock] = []
    ordinary: list[RecallBlock] = []
    chosen_rollups: set[str] = set()
    raw_recent = older_raw = 0
    for block in blocks:
        if block.dirty:
            continue
        if block.kind in ALWAYS_SERVED:
            always.append(block)
        elif block.kind == RAW_EXCERPT:
            if raw_cutoff_us is None or block.from_us >= raw_cutoff_us:
                ordinary.append(block)
                raw_recent += 1
                continue
            rollup = rollup_of.get(block.sources[0].message_id)
            if rollup is None:
                older_raw += 1
            elif rollup.id not in chosen_rollups:
                chosen_rollups.add(rollup.id)
                ordinary.append(rollup)
    ordinary = sorted(ordinary, key=lambda b: (b.to_us, b.id))[-max_blocks:]
    served = sorted(always + ordinary, key=lambda b: (b.from_us, b.to_us, b.id))
    return served, raw_recent, older_raw


async def peer_digest(
    ctx: ReadContext, principal: Principal, body: PeerDigestRequest
) -> PeerDigestResponse:
    """The digest ``body`` asks for, of the channels ``principal`` may see (others are
    left out, as if empty). Raises ``ApiError`` 422 for a malformed ``since`` or
    ``budget.raw_recent``."""
    now = ctx.clock()
    try:
        from_us = parse_since(body.since, now)
        raw_cutoff = (
            None
            if body.budget.raw_recent is None
            else now - parse_go_duration(body.budget.raw_recent)
        )
    except TimeFormatError as exc:
        raise ApiError(422, "validation_failed", f"since/raw_recent {exc}") from None
    max_blocks = body.budget.max_blocks or 32
    served: list[RecallBlock] = []
    found_gaps: list[CoverageGap] = []
    source_count = raw_recent = older_raw = unprocessed = llm_calls = 0
    async with ctx.store.read() as conn:
        visible = [c for c in dict.fromkeys(body.channel_ids) if principal.may_see(c)]
        for channel in visible:
            blocks = await block_store.blocks_overlapping(conn, channel, from_us, now)
            chosen, recent, older = select_blocks(blocks, raw_cutoff, max_blocks)
            served += chosen
            raw_recent += recent
            older_raw += older
            source_count += await sources.count_current_in_window(conn, channel, from_us, now)
            llm_calls += (await llm_store.usage(conn, utc_day(now), channel)).calls
            found_gaps += await gaps.open_gaps_overlapping(conn, channel, from_us, now)
            unprocessed += sum(1 for b in blocks if b.dirty)
        if visible:
            unprocessed += await dirty_store.dirty_count(conn, visible)
    if found_gaps:
        status = "coverage_gap"
    elif unprocessed:
        status = "stale"
    elif not served:
        status = "unavailable"
    else:
        status = "ok"
    return PeerDigestResponse(
        status=status,
        generated_at=format_rfc3339(now),
        coverage=PeerDigestCoverage.model_validate(
            {
                "from": format_rfc3339(from_us),
                "to": format_rfc3339(now),
                "source_messages": source_count,
                "digest_messages": len(
                    {(b.channel_id, s.message_id) for b in served for s in b.sources}
                ),
                "raw_recent_messages": raw_recent,
                "older_raw_messages": older_raw,
                "gaps": [PeerGapOut.of(g) for g in found_gaps],
            }
        ),
        blocks=[BlockOut.of(b, block_trust(b, principal)) for b in served],
        cost=PeerDigestCost(
            deterministic_only=all(b.processor == "deterministic" for b in served),
            llm_calls_today=llm_calls,
        ),
    )
