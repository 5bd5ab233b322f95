"""Physical erasure after a forget: what is owed, in the backend-neutral table.

A pending erasure is recorded in the forget's own transaction, so a crash in
between is finished at the next start; each backend does the erasure itself
(SQLite: index merges and a WAL checkpoint; PostgreSQL: ``VACUUM FULL`` of the
tables that held the content).
"""

from __future__ import annotations

from channel_memory.store.connection import Connection
from channel_memory.store.rows import one_row


async def pending_erasures(conn: Connection) -> int:
    (count,) = await one_row(conn, "SELECT count(*) FROM pending_erasures")
    return int(count)
