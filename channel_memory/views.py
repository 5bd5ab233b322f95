"""Stored things as a caller sees them: block objects with trust markers for its token."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import aiosqlite

from channel_memory.auth import Principal
from channel_memory.models import RecallBlock
from channel_memory.store import sources
from channel_memory.trust import Trust, block_trust, trust_of
from channel_memory.wire import BlockOut


async def block_trusts(
    conn: aiosqlite.Connection, blocks: Sequence[RecallBlock], principal: Principal
) -> list[Trust]:
    """Each block's trust: the lowest of its sources' trust for this caller."""
    wanted: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for block in blocks:
        wanted[block.channel_id].update((s.message_id, s.content_hash) for s in block.sources)
    authors: dict[tuple[str, str, str], tuple[str, str | None]] = {}
    for channel, pairs in wanted.items():
        found = await sources.source_authors(conn, channel, pairs)
        authors.update({(channel, m, h): who for (m, h), who in found.items()})
    trusts: list[Trust] = []
    for block in blocks:
        per_source = [
            trust_of(
                *authors.get((block.channel_id, s.message_id, s.content_hash), ("", None)),
                principal,
            )
            for s in block.sources
        ]
        trusts.append(block_trust(block.processor, per_source))
    return trusts


async def block_objects(
    conn: aiosqlite.Connection, blocks: Sequence[RecallBlock], principal: Principal
) -> list[BlockOut]:
    trusts = await block_trusts(conn, blocks, principal)
    return [BlockOut.of(block, trust) for block, trust in zip(blocks, trusts, strict=True)]
