"""SQL for retention: drop sources older than the window, remember the retained range."""

from __future__ import annotations

from channel_memory.kernel.models import MessageKey
from channel_memory.store.connection import Connection
from channel_memory.store.rows import columns


async def drop_sources_before(conn: Connection, cutoff_us: int) -> list[MessageKey]:
    """Delete every version of messages created before ``cutoff_us``; returns their keys.

    The caller re-derives the returned keys in the same transaction, which
    removes their derived rows and rebuilds the groups they were in.
    """
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT DISTINCT {columns(MessageKey._fields)} FROM source_messages "
            "WHERE is_current = 1 AND created_us < ?",
            (cutoff_us,),
        )
    )
    keys = [MessageKey._make(row) for row in fetched]
    if keys:
        await conn.dialect.unindex_expired_sources(conn, cutoff_us)
        await conn.execute(
            "DELETE FROM source_messages WHERE (source_kind, channel_id, message_id) IN "
            "(SELECT source_kind, channel_id, message_id FROM source_messages "
            "WHERE is_current = 1 AND created_us < ?)",
            (cutoff_us,),
        )
    await conn.execute(
        "DELETE FROM source_messages WHERE forgotten_us IS NOT NULL AND created_us < ?",
        (cutoff_us,),
    )
    await conn.execute(
        "INSERT INTO channel_retention (channel_id, retained_from_us) "
        "SELECT channel_id, ? FROM channels WHERE true ON CONFLICT (channel_id) "
        "DO UPDATE SET retained_from_us = excluded.retained_from_us",
        (cutoff_us,),
    )
    return keys
