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


async def pending_erasures(conn: aiosqlite.Connection) -> int:
    fetched = list(await conn.execute_fetchall("SELECT count(*) FROM pending_erasures"))
    row = fetched[0] if fetched else None
    assert row is not None
    return int(row[0])


async def erase(conn: aiosqlite.Connection) -> bool:
    """Run the owed erasure on the writer connection (outside any transaction).

    Returns True when nothing is owed any more, False when the checkpoint could
    not complete (a reader held an old snapshot) and it must be retried.
    """
    fetched = list(await conn.execute_fetchall("SELECT max(id) FROM pending_erasures"))
    row = fetched[0] if fetched else None
    newest = row[0] if row else None
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
    fetched = list(await conn.execute_fetchall("PRAGMA wal_checkpoint(TRUNCATE)"))
    row = fetched[0] if fetched else None
    assert row is not None
    busy, _log_frames, _checkpointed = row
    return int(busy) == 0
