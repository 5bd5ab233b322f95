"""Physical erasure after a forget: no forgotten byte may stay in the database files.

``secure_delete`` zeroes the freed cells and pages of the blanked rows; what can
remain is (1) the full-text indexes' old segments (sources, block text and the
relevance index),
which still hold the terms until they are merged, and (2) the old page images
in the WAL file. Erasure
merges the index (``optimize``) and checkpoints with ``TRUNCATE``. A pending
erasure is recorded in the forget's own transaction, so a crash in between is
finished at the next start.
"""

from __future__ import annotations

import aiosqlite

from channel_memory.store.rows import one_row


async def pending_erasures(conn: aiosqlite.Connection) -> int:
    (count,) = await one_row(conn, "SELECT count(*) FROM pending_erasures")
    return int(count)


async def erase(conn: aiosqlite.Connection) -> bool:
    """Run the owed erasure on the writer connection (outside any transaction).

    Returns True when nothing is owed any more, False when the checkpoint could
    not complete (a reader held an old snapshot) and it must be retried.
    """
    (newest,) = await one_row(conn, "SELECT max(id) FROM pending_erasures")
    if newest is None:
        return True
    await conn.execute("BEGIN IMMEDIATE")
    try:
        for index in ("source_fts", "block_fts", "search_index"):
            await conn.execute(f"INSERT INTO {index} ({index}) VALUES ('optimize')")
        await conn.execute("COMMIT")
    except BaseException:
        await conn.execute("ROLLBACK")
        raise
    if not await _checkpoint(conn):
        return False
    await conn.execute("DELETE FROM pending_erasures WHERE id <= ?", (newest,))
    return await _checkpoint(conn)


async def _checkpoint(conn: aiosqlite.Connection) -> bool:
    busy, _log_frames, _checkpointed = await one_row(conn, "PRAGMA wal_checkpoint(TRUNCATE)")
    return int(busy) == 0
