"""SQL the feed reads a window with. Every query is bounded by a LIMIT the caller
derives from its character budget, or is an index-only count: the cost of a feed
grows with the budget, not with the history."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from channel_memory.kernel.models import MessageKey, RecallBlock, SourceVersion
from channel_memory.store.blocks import BLOCK_COLUMNS, block_from_row
from channel_memory.store.connection import Connection
from channel_memory.store.rows import one_row
from channel_memory.store.sources import VERSION_COLUMNS, version_from_row


def _ids(values: Iterable[str]) -> str:
    """Channel or message ids as the JSON list ``json_each`` reads (sorted, once each)."""
    return json.dumps(sorted(set(values)))


async def readable_stats(
    conn: Connection, channel_ids: Sequence[str], from_us: int, to_us: int
) -> tuple[int, int | None, int | None]:
    """``(count, oldest, newest)`` creation times of readable current messages in the window."""
    count, oldest, newest = await one_row(
        conn,
        "SELECT count(*), min(created_us), max(created_us) FROM source_messages "
        "WHERE channel_id IN (SELECT value FROM json_each(?)) AND is_current = 1 AND deleted "
        "= 0 "
        "AND created_us BETWEEN ? AND ?",
        (_ids(channel_ids), from_us, to_us),
    )
    return int(count), oldest, newest


async def fresh_blocks_newest(
    conn: Connection,
    channel_id: str,
    kind: str,
    from_us: int,
    to_us: int,
    limit: int,
) -> list[RecallBlock]:
    """Non-dirty blocks of one kind starting in the window, newest first.

    One channel per query, so the index order serves the ORDER BY and the LIMIT
    stops the read early.
    """
    fetched = await conn.execute_fetchall(
        f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE channel_id = ? AND kind = ? "
        "AND from_us BETWEEN ? AND ? AND dirty = 0 ORDER BY from_us DESC, seq DESC LIMIT ?",
        (channel_id, kind, from_us, to_us, limit),
    )
    return [block_from_row(row) for row in fetched]


async def fresh_block_covering(
    conn: Connection,
    channel_id: str,
    message_id: str,
    kind: str,
    from_us: int,
    to_us: int,
) -> RecallBlock | None:
    """The non-dirty block of one kind starting in the window that covers a message, if
    any (by the index of block sources by message)."""
    fetched = await conn.execute_fetchall(
        f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE seq IN (SELECT block_seq FROM "
        "block_sources WHERE channel_id = ? AND message_id = ?) AND kind = ? "
        "AND from_us BETWEEN ? AND ? AND dirty = 0 ORDER BY seq LIMIT 1",
        (channel_id, message_id, kind, from_us, to_us),
    )
    return block_from_row(fetched[0]) if fetched else None


async def fresh_block_count(
    conn: Connection, channel_ids: Sequence[str], kind: str, from_us: int, to_us: int
) -> int:
    (count,) = await one_row(
        conn,
        "SELECT count(*) FROM recall_blocks WHERE channel_id IN (SELECT value FROM "
        "json_each(?)) "
        "AND kind = ? AND from_us BETWEEN ? AND ? AND dirty = 0",
        (_ids(channel_ids), kind, from_us, to_us),
    )
    return int(count)


async def message_block_handles(
    conn: Connection,
    channel_id: str,
    kind: str,
    from_us: int,
    to_us: int,
    offset: int,
    limit: int,
) -> list[tuple[int, str]]:
    """``(from_us, handle)`` of single-message blocks of a kind, newest first, after ``offset``."""
    fetched = list(
        await conn.execute_fetchall(
            # a single-message block's one source is its message (its group key is not
            # taken apart here)
            "SELECT from_us, channel_id, sources -> 0 ->> 0 FROM recall_blocks "
            "WHERE channel_id = ? AND kind = ? AND from_us BETWEEN ? AND ? AND dirty = 0 "
            "ORDER BY from_us DESC, seq DESC LIMIT ? OFFSET ?",
            (channel_id, kind, from_us, to_us, limit, offset),
        )
    )
    return [(start_us, f"{channel}/{message_id}") for start_us, channel, message_id in fetched]


async def fresh_sparse_within(
    conn: Connection,
    channel_id: str,
    from_us: int,
    to_us: int,
    limit: int,
) -> list[RecallBlock]:
    """Non-dirty sparse blocks lying wholly within the window, newest first."""
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE channel_id = ? "
            "AND sparse = 1 AND to_us <= ? AND from_us >= ? "
            "AND dirty = 0 ORDER BY to_us DESC, seq DESC LIMIT ?",
            (channel_id, to_us, from_us, limit),
        )
    )
    return [block_from_row(row) for row in fetched]


async def pending_keys(
    conn: Connection, channel_ids: Sequence[str], limit: int
) -> list[MessageKey]:
    """Messages of the channels with unprocessed changes, newest markers first."""
    fetched = list(
        await conn.execute_fetchall(
            "SELECT source_kind, channel_id, message_id FROM dirty_messages WHERE channel_id IN "
            "(SELECT value FROM json_each(?)) ORDER BY seq DESC LIMIT ?",
            (_ids(channel_ids), limit),
        )
    )
    return [
        MessageKey(source_kind, channel, message_id) for source_kind, channel, message_id in fetched
    ]


async def versions_in_window(
    conn: Connection, channel_ids: Sequence[str], from_us: int, to_us: int
) -> list[SourceVersion]:
    """Every non-forgotten version of messages created in the window (for ``as_of`` views)."""
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE channel_id IN "
            "(SELECT value FROM json_each(?)) AND created_us BETWEEN ? AND ? "
            "AND forgotten_us IS NULL ORDER BY channel_id, message_id, observed_seq",
            (_ids(channel_ids), from_us, to_us),
        )
    )
    return [version_from_row(row) for row in fetched]


async def blocks_within(
    conn: Connection, channel_ids: Sequence[str], from_us: int, to_us: int
) -> list[RecallBlock]:
    """Every block starting in the window, dirty or not (for ``as_of`` views)."""
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE channel_id IN "
            "(SELECT value FROM json_each(?)) AND from_us BETWEEN ? AND ? ORDER BY from_us, seq",
            (_ids(channel_ids), from_us, to_us),
        )
    )
    return [block_from_row(row) for row in fetched]


async def readable_newest(
    conn: Connection,
    channel_id: str,
    from_us: int,
    to_us: int,
    limit: int,
) -> list[SourceVersion]:
    """Readable current versions created in the window, newest first."""
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE channel_id = ? "
            "AND is_current = 1 AND deleted = 0 "
            "AND created_us BETWEEN ? AND ? ORDER BY created_us DESC, id DESC LIMIT ?",
            (channel_id, from_us, to_us, limit),
        )
    )
    return [version_from_row(row) for row in fetched]


async def answered(
    conn: Connection, channel_id: str, message_ids: Sequence[str], to_us: int
) -> set[str]:
    """The messages among ``message_ids`` of a channel that a message created by ``to_us``
    answers: a reply short enough for its class to read the message it replies to (or
    the root of its thread) records it as its ``parent_id``. Index-bounded: one lookup per
    message asked about, stopping at its first answer."""
    fetched = await conn.execute_fetchall(
        "SELECT value FROM json_each(?) WHERE EXISTS (SELECT 1 FROM derived_messages "
        "WHERE channel_id = ? AND parent_id = value AND created_us <= ?)",
        (_ids(message_ids), channel_id, to_us),
    )
    return {str(message) for (message,) in fetched}


async def answers(
    conn: Connection, channel_id: str, message_ids: Sequence[str], to_us: int
) -> list[tuple[str, str, str]]:
    """``(answered, answer, content_hash)`` for each message created by ``to_us`` that
    answers one of ``message_ids`` (see :func:`answered`), with the content hash of the
    version its class was derived from: an ``as_of`` view counts an answer only when it
    holds that version."""
    fetched = await conn.execute_fetchall(
        "SELECT parent_id, message_id, content_hash FROM derived_messages WHERE channel_id = ? "
        "AND parent_id IN (SELECT value FROM json_each(?)) AND created_us <= ?",
        (channel_id, _ids(message_ids), to_us),
    )
    return [(str(parent), str(message), str(digest)) for parent, message, digest in fetched]
