"""Resource exhaustion: a full disk or a read-only database gives a clear error, writes
nothing, corrupts nothing, and everything works again once the cause is gone."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LiveServer, ingest_ok, message_event, query

# exhausts and write-protects the SQLite file through its pragmas
pytestmark = pytest.mark.sqlite_only

BIG = "position notes " * 8000  # ~120 KB: many pages


def on_writer(server: LiveServer, *statements: str) -> None:
    async def run() -> None:
        async with server.app.state.ctx.store.maintenance() as conn:
            for statement in statements:
                await conn.execute(statement)

    server.run(run())


def rows(db: Path) -> int:
    [(count,)] = query(db, "SELECT count(*) FROM source_messages")
    return int(count)


@pytest.mark.parametrize(
    ("exhaust", "restore", "status", "code"),
    [
        # a full disk, simulated by capping the database at its current size
        (
            "PRAGMA max_page_count = {pages}",
            "PRAGMA max_page_count = 1073741823",
            507,
            "storage_full",
        ),
        # a database that cannot be written
        ("PRAGMA query_only = ON", "PRAGMA query_only = OFF", 503, "storage_read_only"),
    ],
)
def test_exhaustion_is_a_clear_error_and_recovers(
    make_server: Callable[..., LiveServer],
    db_path: Path,
    caplog: pytest.LogCaptureFixture,
    exhaust: str,
    restore: str,
    status: int,
    code: str,
) -> None:
    server = make_server(worker={"enabled": False})
    with server.client() as client:
        ingest_ok(client, message_event("1", "FILLED 200 NVDA @ 131.20"))
        server.drain()
        before = rows(db_path)
        [(pages,)] = query(db_path, "PRAGMA page_count")
        on_writer(server, exhaust.format(pages=pages))

        caplog.set_level(logging.DEBUG)
        events = [message_event(f"big{i}", f"secret-canary {i} {BIG}") for i in range(4)]
        refused = client.post("/v1/ingest", json={"events": events})
        assert refused.status_code == status
        error = refused.json()["error"]
        assert error["code"] == code and "nothing was written" in error["message"]
        assert "secret-canary" not in refused.text and "secret-canary" not in caplog.text
        if code == "storage_read_only":  # a forget is a write too (a full disk may fit it)
            forget = {"type": "forget", "channel_id": "floor", "message_ids": ["1"]}
            refused = client.post("/v1/ingest", json={"events": [forget]})
            assert refused.status_code == status
        assert rows(db_path) == before  # nothing half-written
        feed = client.get("/channel-awareness", params={"channels": "floor"})
        assert feed.status_code == 200 and "FILLED 200 NVDA" in feed.text  # reads go on
        assert query(db_path, "PRAGMA integrity_check") == [("ok",)]

        on_writer(server, restore)
        ingest_ok(client, *events)
        server.drain()
        assert rows(db_path) == before + 4
        body = client.get("/channel-awareness", params={"channels": "floor"}).text
        assert " digest=ok " in body and " available=5 " in body
    assert query(db_path, "PRAGMA integrity_check") == [("ok",)]


def test_the_worker_survives_a_full_disk_and_catches_up(
    make_server: Callable[..., LiveServer], db_path: Path
) -> None:
    server = make_server(worker={"enabled": False})
    worker: Any = server.app.state.worker
    with server.client() as client:
        ingest_ok(client, *[message_event(f"m{i}", f"Stop moved to {400 + i}") for i in range(50)])
        [(pages,)] = query(db_path, "PRAGMA page_count")
        on_writer(server, f"PRAGMA max_page_count = {pages}")
        with pytest.raises(Exception) as failed:
            server.drain()
        assert type(failed.value).__name__ == "StorageFull"
        assert query(db_path, "SELECT count(*) FROM dirty_messages") == [(50,)]  # kept
        header = client.get("/channel-awareness", params={"channels": "floor"}).text
        assert " digest=stale " in header  # not silently fresh
        on_writer(server, "PRAGMA max_page_count = 1073741823")
        assert server.run(worker.drain()) == 50
        header = client.get("/channel-awareness", params={"channels": "floor"}).text
        assert " digest=ok " in header and " omitted=0 " in header
    assert query(db_path, "PRAGMA integrity_check") == [("ok",)]


def test_a_read_sees_one_snapshot_while_writes_commit(
    make_server: Callable[..., LiveServer], db_path: Path
) -> None:
    """The feed counts messages and reads blocks in separate queries: they must agree."""
    server = make_server(worker={"enabled": False})
    store = server.app.state.ctx.store
    with server.client() as client:
        ingest_ok(client, message_event("1", "FILLED 200 NVDA @ 131.20"))

        async def counts_around_a_write() -> tuple[int, int, int]:
            async with store.read() as conn:
                first = (await conn.execute_fetchall("SELECT count(*) FROM source_messages"))[0]
                async with store.write() as writer:
                    await writer.execute(
                        "INSERT INTO channels (channel_id, source_kind, first_seen_us) "
                        "VALUES ('x', 'native', 0)"
                    )
                second = (await conn.execute_fetchall("SELECT count(*) FROM channels"))[0]
            async with store.read() as conn:
                third = (await conn.execute_fetchall("SELECT count(*) FROM channels"))[0]
            return int(first[0]), int(second[0]), int(third[0])

        assert server.run(counts_around_a_write()) == (1, 1, 2)


def test_each_storage_error_answers_with_its_status_code_and_retry() -> None:
    # what HTTP and the MCP tools answer: a retry helps a lock or a lost server
    from channel_memory.store import (
        StorageError,
        StorageFull,
        StorageLocked,
        StorageReadOnly,
        StorageUnavailable,
    )

    answers = {
        type(e).__name__: (e.api_error().status, e.api_error().code, e.api_error().headers)
        for e in (
            StorageError(),
            StorageFull(),
            StorageReadOnly(),
            StorageLocked(),
            StorageUnavailable(),
        )
    }
    assert answers == {
        "StorageError": (503, "storage_error", None),
        "StorageFull": (507, "storage_full", None),
        "StorageReadOnly": (503, "storage_read_only", None),
        "StorageLocked": (503, "database_busy", {"Retry-After": "1"}),
        "StorageUnavailable": (503, "storage_unavailable", {"Retry-After": "1"}),
    }
