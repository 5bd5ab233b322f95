"""SQL over ``dirty_messages``: the queue of messages whose derived data is owed.

Ingest marks what changed; the worker takes the oldest markers, derives them, and
clears exactly the markers it took (a message marked again meanwhile has a new
``seq`` and stays queued).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import aiosqlite

from channel_memory.kernel.models import MessageKey
from channel_memory.store.rows import one_row


def _ids(values: Iterable[str]) -> str:
    return json.dumps(sorted(set(values)))


async def mark_dirty(conn: aiosqlite.Connection, keys: Sequence[MessageKey], now_us: int) -> None:
    """Queue messages for the worker; a re-marked message gets a fresh sequence number."""
    await conn.executemany(
        "INSERT OR REPLACE INTO dirty_messages (source_kind, channel_id, message_id, marked_us) "
        "VALUES (?, ?, ?, ?)",
        [(*key, now_us) for key in keys],
    )


async def mark_all(conn: aiosqlite.Connection, now_us: int) -> None:
    """Queue every message with a current version or derived data."""
    await conn.execute(
        "INSERT OR REPLACE INTO dirty_messages (source_kind, channel_id, message_id, marked_us) "
        "SELECT source_kind, channel_id, message_id, ? FROM source_messages WHERE is_current = 1 "
        "UNION SELECT source_kind, channel_id, message_id, ? FROM derived_messages",
        (now_us, now_us),
    )


async def pending_dirty(conn: aiosqlite.Connection, limit: int) -> list[tuple[int, MessageKey]]:
    """The oldest dirty markers, ``(seq, key)``."""
    fetched = await conn.execute_fetchall(
        "SELECT seq, source_kind, channel_id, message_id FROM dirty_messages ORDER BY seq LIMIT ?",
        (limit,),
    )
    return [
        (seq, MessageKey(source_kind, channel_id, message_id))
        for seq, source_kind, channel_id, message_id in fetched
    ]


async def dirty_count(conn: aiosqlite.Connection, channel_ids: Iterable[str] | None = None) -> int:
    """How many messages are queued, in the named channels or in all."""
    if channel_ids is None:
        (count,) = await one_row(conn, "SELECT count(*) FROM dirty_messages")
    else:
        (count,) = await one_row(
            conn,
            "SELECT count(*) FROM dirty_messages WHERE channel_id IN "
            "(SELECT value FROM json_each(?))",
            (_ids(channel_ids),),
        )
    return int(count)


async def clear_markers(conn: aiosqlite.Connection, seqs: Sequence[int]) -> None:
    """Clear processed markers; a message re-marked since has a new seq and stays queued."""
    if seqs:
        await conn.execute(
            "DELETE FROM dirty_messages WHERE seq IN (SELECT value FROM json_each(?))",
            (json.dumps(list(seqs)),),
        )


async def clear_markers_for(
    conn: aiosqlite.Connection, channel_id: str, message_ids: Iterable[str]
) -> None:
    """Unqueue the named messages of a channel, whatever their markers' seq."""
    await conn.execute(
        "DELETE FROM dirty_messages WHERE channel_id = ? AND message_id IN "
        "(SELECT value FROM json_each(?))",
        (channel_id, _ids(message_ids)),
    )
