"""SQL over ``worker_lease``: the single row naming which worker may derive, until when.

Several processes may run a worker on one database; only the lease holder works,
the others stand by and take over once its lease expires.
"""

from __future__ import annotations

from channel_memory.store.connection import Connection
from channel_memory.store.rows import first_row


async def acquire_lease(conn: Connection, holder: str, now_us: int, ttl_us: int) -> bool:
    """Take or renew the single worker lease; False while another live holder has it."""
    await conn.execute(
        "INSERT INTO worker_lease (id, holder, expires_us) VALUES (1, ?, ?) "
        "ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_us = excluded.expires_us "
        "WHERE worker_lease.holder = excluded.holder OR worker_lease.expires_us < ?",
        (holder, now_us + ttl_us, now_us),
    )
    row = await first_row(conn, "SELECT holder FROM worker_lease WHERE id = 1")
    if row is None:
        return False
    (current,) = row
    return bool(current == holder)


async def release_lease(conn: Connection, holder: str) -> None:
    """Give the lease up, if ``holder`` has it."""
    await conn.execute("DELETE FROM worker_lease WHERE id = 1 AND holder = ?", (holder,))
