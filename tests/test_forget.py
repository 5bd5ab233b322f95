"""Forget: effective on return, physically erased from the database files, never re-stored."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from channel_memory.store import sqlite as sqlite_store
from tests.conftest import LiveServer, at, message_event, query
from tests.fake_provider import FakeProvider, echoing

CANARY = "Zebracanary7731"
ALSO = "Quokkasecret4410"


def post(client: httpx.Client, *events: dict[str, Any]) -> httpx.Response:
    response = client.post("/v1/ingest", json={"events": list(events)})
    assert response.status_code == 200, response.text
    return response


def raw_bytes(db: Path) -> bytes:
    """The database file with its -wal and -shm, as bytes on disk."""
    data = b""
    for suffix in ("", "-wal", "-shm"):
        path = Path(str(db) + suffix)
        if path.exists():
            data += path.read_bytes()
    return data


def found_anywhere(db: Path, word: str) -> bool:
    return re.search(re.escape(word.encode()), raw_bytes(db), re.IGNORECASE) is not None


@pytest.mark.sqlite_only  # reads the SQLite files; PostgreSQL: test_forget_postgres.py
def test_forget_counts_every_version_and_erases_them_from_disk(
    client: httpx.Client, server: LiveServer
) -> None:
    db = server.settings.db
    post(client, message_event("1", f"opened 100 AAPL {CANARY}"))
    post(client, message_event("1", f"opened 150 AAPL {CANARY}", edited_at="2026-05-21T16:05:00Z"))
    post(client, message_event("2", "unrelated chatter that stays"))
    assert found_anywhere(db, CANARY)

    forget = client.post(
        "/forget", json={"channel_id": "floor", "message_ids": ["1"], "reason": "operator request"}
    )
    assert forget.status_code == 200
    assert forget.json() == {"forgotten": 2}

    # effective at once: no read path returns it
    read = client.post(
        "/source-messages",
        json={"channel_id": "floor", "message_ids": ["1"], "include_history": True},
    ).json()
    assert read["messages"] == [] and read["not_found"][0]["message_id"] == "1"
    assert query(db, "SELECT rowid FROM source_fts WHERE source_fts MATCH ?", CANARY.lower()) == []
    # physically gone: main file, WAL and shared memory, in any case, index terms included
    assert not found_anywhere(db, CANARY)
    assert query(db, "SELECT count(*) FROM pending_erasures") == [(0,)]
    # the content-free ledger keeps the audit trail
    assert query(
        db, "SELECT channel_id, message_id, reason, versions_forgotten FROM forget_ledger"
    ) == [("floor", "1", "operator request", 2)]
    # the other message is untouched and still searchable
    assert len(query(db, "SELECT rowid FROM source_fts WHERE source_fts MATCH 'chatter'")) == 1
    again = client.post("/forget", json={"channel_id": "floor", "message_ids": ["1"]})
    assert again.json() == {"forgotten": 0}


def test_forgotten_message_resent_is_acknowledged_but_not_stored(
    client: httpx.Client, server: LiveServer
) -> None:
    post(client, message_event("1", CANARY))
    post(client, {"type": "forget", "channel_id": "floor", "message_ids": ["1"]})
    replay = post(client, message_event("1", CANARY), message_event("3", "new")).json()
    assert replay["results"][0]["inserted"] is False
    assert replay["results"][0]["forgotten"] is True
    assert replay["ignored_forgotten"] == 1 and replay["inserted"] == 1
    assert replay["duplicates"] == 0
    assert not found_anywhere(server.settings.db, CANARY)


def test_forget_before_the_message_arrives_still_applies(
    client: httpx.Client, server: LiveServer
) -> None:
    post(client, {"type": "forget", "channel_id": "floor", "message_ids": ["5"]})
    late = post(client, message_event("5", CANARY)).json()
    assert late["ignored_forgotten"] == 1
    assert not found_anywhere(server.settings.db, CANARY)


def test_forget_by_author_covers_every_message_of_the_author(
    client: httpx.Client, server: LiveServer
) -> None:
    post(
        client,
        message_event("1", f"{CANARY} one", author="leaker"),
        message_event("2", f"{ALSO} two", author="leaker"),
        message_event("3", "stays", author="someone-else"),
        message_event("4", "other channel", author="leaker", channel="ops"),
    )
    result = post(
        client, {"type": "forget", "channel_id": "floor", "author_id": "u-leaker", "reason": "gdpr"}
    ).json()["results"][0]
    assert result["versions_forgotten"] == 2 and result["messages_forgotten"] == 2
    db = server.settings.db
    assert not found_anywhere(db, CANARY) and not found_anywhere(db, ALSO)
    # the author's name is gone from the forgotten rows too
    assert query(
        db, "SELECT count(*) FROM source_messages WHERE channel_id='floor' AND author_name='leaker'"
    ) == [(0,)]
    assert query(db, "SELECT count(*) FROM source_messages WHERE channel_id='ops'") == [(1,)]
    assert query(db, "SELECT author_id, message_id FROM forget_ledger") == [("u-leaker", None)]
    replay = post(client, message_event("2", f"{ALSO} two", author="leaker")).json()
    assert replay["ignored_forgotten"] == 1


@pytest.mark.sqlite_only  # interrupts SQLite's erasure
def test_pending_erasure_is_finished_at_the_next_start(
    make_server: Any, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash between the forget's commit and its erasure is completed on restart."""

    async def interrupted(conn: object) -> bool:
        return False  # as if the process died before the erasure finished

    monkeypatch.setattr(sqlite_store, "erase", interrupted)
    first = make_server()
    with first.client() as client:
        post(client, message_event("1", CANARY))
        post(client, {"type": "forget", "channel_id": "floor", "message_ids": ["1"]})
    first.__exit__()
    assert query(db_path, "SELECT count(*) FROM pending_erasures") == [(1,)]
    assert found_anywhere(db_path, CANARY)  # the index segments still hold the term
    monkeypatch.undo()
    second = make_server()
    with second.client() as client:
        assert client.get("/health").status_code == 200
    assert query(db_path, "SELECT count(*) FROM pending_erasures") == [(0,)]
    assert not found_anywhere(db_path, CANARY)


def test_forget_erases_blocks_llm_answers_and_every_token_from_the_files(
    make_server: Any, db_path: Path
) -> None:
    """Derived text too: blocks, their index, and LLM answers that quoted the message."""
    secret = f"{CANARY} {ALSO} Wombatledger9921"
    with FakeProvider(echoing) as provider:
        server = make_server(
            worker={"enabled": False},
            llm={"enabled": True, "model": "openai/fake", "api_base": provider.api_base,
                 "api_key": "sk-local"},
        )  # fmt: skip
        with server.client() as client:
            chatter = [
                message_event(f"c{i}", f"ordinary desk chatter number {i} " + "words " * 20,
                              created_at=at(10 * i, 8))
                for i in range(4)
            ]  # fmt: skip
            secret_event = message_event("s", f"{secret} " + "words " * 20, created_at=at(45, 8))
            post(client, *chatter, secret_event)
            server.drain()
            assert server.run(server.app.state.worker.llm.run_once()).written == 1
            for table in ("llm_cache", "recall_blocks"):
                assert CANARY in str(query(db_path, f"SELECT * FROM {table}"))
            post(client, {"type": "forget", "channel_id": "floor", "message_ids": ["s"]})
            for word in secret.split():  # the message, and each of its tokens, in any case
                assert not found_anywhere(db_path, word)
                assert not found_anywhere(db_path, word.lower())
            assert query(db_path, "SELECT count(*) FROM llm_cache") == [(0,)]
            replay = post(client, secret_event).json()  # a bridge replaying it
            assert replay["ignored_forgotten"] == 1
            server.drain()
            for word in secret.split():
                assert not found_anywhere(db_path, word)
