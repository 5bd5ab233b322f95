"""Cursor keys are state the application owns: read once per store, kept per owner,
never shared across the process."""

from __future__ import annotations

import asyncio
from pathlib import Path

from channel_memory.store import Store
from channel_memory.tools.cursors import CursorError, CursorKeys, sign, verify


async def _secret(keys: CursorKeys, path: Path) -> bytes:
    store = await Store.open(path)
    try:
        return await keys.secret(store)
    finally:
        await store.close()


def test_a_key_survives_restarts_and_a_new_database_gets_its_own(tmp_path: Path) -> None:
    path = tmp_path / "cm.db"
    first = asyncio.run(_secret(CursorKeys(), path))
    assert len(first) == 32
    # another owner (a restarted application) reads the same key from the database
    assert asyncio.run(_secret(CursorKeys(), path)) == first
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    # a fresh database at the same path: a new owner must not serve a remembered key
    fresh = asyncio.run(_secret(CursorKeys(), path))
    assert fresh != first
    token = sign(fresh, {"b": "x", "i": 3})
    assert verify(fresh, token) == {"b": "x", "i": 3}
    try:
        verify(first, token)
    except CursorError as error:
        assert error.status == 400 and error.code == "cursor_invalid"
    else:
        raise AssertionError("a cursor signed under another key was accepted")


def test_an_owner_answers_from_memory_once_it_has_read_the_key(tmp_path: Path) -> None:
    async def scenario() -> tuple[bytes, bytes]:
        keys = CursorKeys()
        store = await Store.open(tmp_path / "cm.db")
        try:
            known = await keys.secret(store)
            async with store.write() as conn:
                await conn.execute("DELETE FROM worker_state WHERE key = 'cursor_secret'")
            return known, await keys.secret(store)
        finally:
            await store.close()

    known, again = asyncio.run(scenario())
    assert again == known
