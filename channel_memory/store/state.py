"""SQL over ``worker_state``: small named values the deployment keeps between runs
(the derivation settings' fingerprint, the LLM breaker, the cursor and read-id secrets)."""

from __future__ import annotations

from channel_memory.store.connection import Connection
from channel_memory.store.rows import first_row


async def get_state(conn: Connection, key: str) -> str | None:
    """The value stored under ``key``, None when nothing is."""
    row = await first_row(conn, "SELECT value FROM worker_state WHERE key = ?", (key,))
    if row is None:
        return None
    (value,) = row
    return str(value)


async def set_state(conn: Connection, key: str, value: str) -> None:
    """Store ``value`` under ``key``, replacing what was there."""
    await conn.execute(
        "INSERT INTO worker_state (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
