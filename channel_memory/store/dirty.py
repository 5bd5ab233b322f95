"""SQL over ``dirty_messages``: the queue of messages whose derived data is owed.

Ingest marks what changed; the worker takes the oldest markers, derives them, and
clears exactly the markers it took (a message marked again meanwhile has a new
``seq`` and stays queued).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from channel_memory.kernel.models import MessageKey
from channel_memory.store.connection import Connection
from channel_memory.store.rows import one_row


def _ids(values: Iterable[str]) -> str:
    return json.dumps(sorted(set(values)))


async def mark_dirty(conn: Connection, keys: Sequence[MessageKey], now_us: int) -> None:
    """Queue messages for the worker; a re-marked message gets a fresh sequence number
    (its marker is replaced, not updated)."""
    await conn.executemany(
        "DELETE FROM dirty_messages WHERE source_kind = ? AND channel_id = ? AND message_id = ?",
        [tuple(key) for key in keys],
    )
    await conn.executemany(
        "INSERT INTO dirty_messages (source_kind, channel_id, message_id, marked_us) "
        "VALUES (?, ?, ?, ?)",
        [(*key, now_us) for key in keys],
    )


async def mark_all(conn: Connection, now_us: int) -> None:
    """Queue every message with a current version or derived data."""
    everything = (
        "SELECT source_kind, channel_id, message_id FROM source_messages WHERE is_current = 1 "
        "UNION SELECT source_kind, channel_id, message_id FROM derived_messages"
    )
    await conn.execute(
        f"DELETE FROM dirty_messages WHERE (source_kind, channel_id, message_id) IN ({everything})"
    )
    await conn.execute(
        "INSERT INTO dirty_messages (source_kind, channel_id, message_id, marked_us) "
        f"SELECT source_kind, channel_id, message_id, ? FROM ({everything}) AS everything",
        (now_us,),
    )


async def pending_dirty(conn: Connection, limit: int) -> list[tuple[int, MessageKey]]:
    """The oldest dirty markers, ``(seq, key)``."""
    fetched = await conn.execute_fetchall(
        "SELECT seq, source_kind, channel_id, message_id FROM dirty_messages ORDER BY seq LIMIT ?",
        (limit,),
    )
    return [
        (seq, MessageKey(source_kind, channel_id, message_id))
        for seq, source_kind, channel_id, message_id in fetched
    ]


async def dirty_count(conn: Connection, channel_ids: Iterable[str] | None = None) -> int:
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


async def clear_markers(conn: Connection, seqs: Sequence[int]) -> None:
    """Clear processed markers; a message re-marked since has a new seq and stays queued."""
    if seqs:
        await conn.execute(
            "DELETE FROM dirty_messages WHERE seq IN "
            "(SELECT CAST(value AS INTEGER) FROM json_each(?))",
            (json.dumps(list(seqs)),),
        )


async def clear_markers_for(conn: Connection, channel_id: str, message_ids: Iterable[str]) -> None:
    """Unqueue the named messages of a channel, whatever their markers' seq."""
    await conn.execute(
        "DELETE FROM dirty_messages WHERE channel_id = ? AND message_id IN "
        "(SELECT value FROM json_each(?))",
        (channel_id, _ids(message_ids)),
    )
