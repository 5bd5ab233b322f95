"""Read-only queries behind the web inspector. Nothing here writes: every function only
SELECTs, and the inspector calls them inside ``Store.read()`` transactions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, fields

from channel_memory.kernel.models import HARD_EVENT_BLOCK, RecallBlock, SourceVersion
from channel_memory.store.blocks import BLOCK_COLUMNS, block_from_row
from channel_memory.store.connection import Connection
from channel_memory.store.rows import columns, first_row, one_row
from channel_memory.store.sources import VERSION_COLUMNS, version_from_row

_BRIDGE_LINE_EXTRA = len("[HH:MM] ") + len(": ") + len("\n")
"""Characters the bridge's ``[HH:MM] author: content`` line adds around author and content."""


@dataclass(frozen=True, slots=True)
class RawWindow:
    """The raw window as a bridge would paste it: how many messages, how many characters."""

    messages: int
    chars: int


async def raw_window(conn: Connection, channel_id: str, from_us: int, to_us: int) -> RawWindow:
    """Readable current messages created in ``[from_us, to_us]`` and the length of the
    window in the bridge's ``[HH:MM] author: content`` lines (counted in SQL: no content
    leaves the database)."""
    count, chars = await one_row(
        conn,
        "SELECT count(*), coalesce(sum(length(content) + "
        "length(coalesce(author_name, author_id, ''))), 0) FROM source_messages "
        "WHERE channel_id = ? AND is_current = 1 AND deleted = 0 AND forgotten_us IS NULL "
        "AND created_us BETWEEN ? AND ?",
        (channel_id, from_us, to_us),
    )
    return RawWindow(int(count), int(chars) + int(count) * _BRIDGE_LINE_EXTRA)


async def message_versions(
    conn: Connection, channel_id: str, message_id: str
) -> list[SourceVersion]:
    """Every stored version of one message in ``observed_seq`` order, deletions and
    forgotten rows (content-free) included; content is returned as stored."""
    fetched = await conn.execute_fetchall(
        f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE source_kind = "
        "(SELECT source_kind FROM channels WHERE channel_id = ?1) AND channel_id = ?1 "
        "AND message_id = ?2 ORDER BY observed_seq",
        (channel_id, message_id),
    )
    return [version_from_row(row) for row in fetched]


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One content-free record of a forget."""

    message_id: str | None
    author_id: str | None
    reason: str | None
    versions_forgotten: int
    forgotten_us: int


_LEDGER_COLUMNS = columns([f.name for f in fields(LedgerEntry)])


async def forget_ledger(
    conn: Connection, channel_id: str, message_id: str
) -> tuple[int | None, list[LedgerEntry]]:
    """When the message was forgotten (``None``: it was not) and the channel's ledger
    entries naming it, or forgetting its author, oldest first."""
    row = await first_row(
        conn,
        "SELECT forgotten_us FROM forgotten_messages WHERE channel_id = ? AND message_id = ?",
        (channel_id, message_id),
    )
    if row is None:
        return None, []
    (forgotten,) = row
    forgotten_us = int(forgotten)
    rows = await conn.execute_fetchall(
        f"SELECT {_LEDGER_COLUMNS} FROM forget_ledger WHERE channel_id = ? AND (message_id = ? OR "
        "(message_id IS NULL AND forgotten_us = ?)) ORDER BY id",
        (channel_id, message_id, forgotten_us),
    )
    return forgotten_us, [LedgerEntry(*row) for row in rows]


async def blocks_citing(
    conn: Connection, channel_id: str, message_id: str, limit: int = 50
) -> list[RecallBlock]:
    """Blocks whose provenance names the message (any of its versions), newest first."""
    fetched = await conn.execute_fetchall(
        f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE seq IN (SELECT block_seq FROM "
        "block_sources WHERE channel_id = ? AND message_id = ?) ORDER BY to_us DESC, seq DESC "
        "LIMIT ?",
        (channel_id, message_id, limit),
    )
    return [block_from_row(row) for row in fetched]


async def exact_sources(
    conn: Connection, channel_id: str, pairs: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], SourceVersion]:
    """The stored versions a block cites, by ``(message_id, content_hash)``; forgotten
    versions are absent (their hash is erased)."""
    if not pairs:
        return {}
    fetched = await conn.execute_fetchall(
        f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE source_kind = "
        "(SELECT source_kind FROM channels WHERE channel_id = ?1) AND channel_id = ?1 "
        "AND (message_id, content_hash) IN (SELECT value->>0, value->>1 FROM json_each(?2)) "
        "AND forgotten_us IS NULL",
        (channel_id, json.dumps(sorted(set(pairs)))),
    )
    versions = [version_from_row(row) for row in fetched]
    return {(v.key.message_id, v.content_hash): v for v in versions}


async def recent_hard_events(
    conn: Connection, channel_ids: Sequence[str], limit: int
) -> list[RecallBlock]:
    """The newest hard-event blocks of the channels."""
    fetched = await conn.execute_fetchall(
        f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE kind = ? AND channel_id "
        "IN (SELECT value FROM json_each(?)) ORDER BY to_us DESC, seq DESC LIMIT ?",
        (HARD_EVENT_BLOCK, json.dumps(list(channel_ids)), limit),
    )
    return [block_from_row(row) for row in fetched]
