"""``channel-memory copy``: a store moved between SQLite and PostgreSQL, through the real HTTP
app on both sides — every version, forget, gap, LLM cache and spend row, consumption and
secret moves; the destination's worker derives the same blocks; the feed and the tools
answer the same bytes. Interrupted copies resume; foreign destinations are refused; the
verification catches a tampered copy."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from channel_memory.kernel.config import Settings, load_settings
from channel_memory.store.copy import (
    RECORD_KEY,
    TABLES,
    CopyRefused,
    Tally,
    Verification,
    copy_command,
    copy_store,
)
from tests.conftest import FakeClock, LiveServer, at, ingest_ok, message_event, query
from tests.fake_provider import FakeProvider
from tests.pgcluster import PgCluster

MODEL = "openai/fake-summariser"
CHATTER = [
    "Tape feels heavy into lunch, nobody wants to lift offers",
    "Dealers say real money was a small seller of duration",
    "Semis bid again, breadth still narrow across the complex",
    "Watching the dollar for a break of the overnight range",
    "Quiet session so far, volumes a third below the average",
]


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CHANNEL_MEMORY_TOKEN", "CHANNEL_MEMORY_CONFIG", "CHANNEL_MEMORY_DB"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider() as fake:
        yield fake


def settings(db: Path | str, provider: FakeProvider | None = None) -> Settings:
    """The worker driven by the test (drain, then one LLM pass); LLM rollups when given a
    provider."""
    llm: dict[str, Any] = {"enabled": False}
    if provider is not None:
        llm = {"enabled": True, "model": MODEL, "api_base": provider.api_base,
               "api_key": "sk-local", "retries": 0}  # fmt: skip
    return load_settings(None, db=db, worker={"enabled": False}, llm=llm)


def serve(db: Path | str, clock: FakeClock, provider: FakeProvider | None = None) -> LiveServer:
    return LiveServer(settings(db, provider), clock).__enter__()


def derive(server: LiveServer) -> None:
    server.drain()
    worker = server.app.state.worker
    if worker.llm is not None:
        server.run(worker.llm.run_once())


def build(server: LiveServer) -> None:
    """A store with every kind of row that moves, written through the HTTP app."""
    with server.client() as client:
        for hour, channel in ((8, "floor"), (10, "floor"), (9, "desk")):
            ingest_ok(
                client,
                *(
                    message_event(
                        f"{channel}{hour}-{i}", text, created_at=at(9 * i, hour), channel=channel
                    )
                    for i, text in enumerate(CHATTER)
                ),
            )
        ingest_ok(
            client,
            message_event("fill", "FILLED 200 NVDA @ 131.20", created_at=at(5, 17)),
            message_event("ask", "Can we size up NVDA into the print?", created_at=at(6, 17)),
            message_event("ok", "ok", created_at=at(7, 17), reply_to="ask"),
            message_event("edit", "opened 100 AAPL", created_at=at(8, 17)),
            message_event("gone", "cancel that order", created_at=at(9, 17)),
            message_event("secret", "Zebracanary7731 do not keep", created_at=at(10, 17)),
            message_event("late", "desk note on rates", channel="desk", created_at=at(11, 17)),
        )
        ingest_ok(
            client,
            message_event("edit", "opened 150 AAPL", created_at=at(8, 17), edited_at=at(20, 17)),
            {
                "type": "delete",
                "channel_id": "floor",
                "message_id": "gone",
                "deleted_at": at(30, 17),
            },
            {
                "type": "coverage_gap",
                "channel_id": "floor",
                "from": at(0, 12),
                "to": at(30, 12),
                "reason": "bridge restart",
            },
            {"type": "coverage_gap", "channel_id": "desk", "from": at(0, 13), "to": at(10, 13)},
        )
        ingest_ok(client, {"type": "coverage_gap_resolved", "channel_id": "floor", "gap_id": 1})
        forget = client.post(
            "/forget", json={"channel_id": "floor", "message_ids": ["secret"], "reason": "gdpr"}
        )
        assert forget.status_code == 200, forget.text
        derive(server)
        # consumption: a read settled as handled, and a cursor (the cursor secret)
        feed = client.get("/channel-awareness", params={"channels": "floor", "format": "json"})
        settled = client.post(
            "/v1/consumption", json={"read_id": feed.headers["read-id"], "outcome": "handled"}
        )
        assert settled.status_code == 200, settled.text
        page = client.post(
            "/v1/tools/get_channel_messages", json={"channels": ["floor"], "limit": 3}
        )
        assert page.json()["next_cursor"]


def answers(server: LiveServer) -> dict[str, Any]:
    """What the feed and the tools answer (in a fixed order: the reads record consumption)."""
    found: dict[str, Any] = {}
    with server.client() as client:
        for name, params in {
            "feed": {"channels": "floor,desk"},
            "feed_json": {"channels": "floor", "format": "json"},
            "as_of": {"channels": "floor", "as_of": at(0, 18)},
            "tight": {"channels": "floor", "max_chars": "900"},
        }.items():
            response = client.get("/channel-awareness", params=params)
            assert response.status_code == 200, response.text
            found[name] = (response.text, response.headers.get("etag"))
        first = client.post(
            "/v1/tools/get_channel_messages", json={"channels": ["floor"], "limit": 3}
        ).json()
        found["messages"] = first
        found["next"] = client.post(
            "/v1/tools/get_channel_messages",
            json={"channels": ["floor"], "limit": 3, "cursor": first["next_cursor"]},
        ).json()
        found["search"] = client.post(
            "/v1/tools/search_channel_context", json={"channels": ["floor"], "query": "nvda"}
        ).json()
        found["ranked"] = client.post(
            "/v1/tools/search_channel_context",
            json={"channels": ["floor", "desk"], "query": "dollar range duration"},
        ).json()
        found["peer_search"] = client.post(
            "/search", json={"channel_ids": ["floor", "desk"], "query": "nvda"}
        ).json()
        assert len(found["peer_search"]["source_messages"]) == 2  # "fill" and "ask"
        found["history"] = client.post(
            "/source-messages",
            json={
                "channel_id": "floor",
                "message_ids": ["edit", "gone", "secret"],
                "include_history": True,
            },
        ).json()
        blocks = sorted(row[0] for row in query(server.settings.db, "SELECT id FROM recall_blocks"))
        found["blocks"] = {b: client.get(f"/v1/blocks/{b}").json() for b in blocks}
    return found


def rows(db: Path | str, table: str) -> list[tuple[Any, ...]]:
    return sorted(query(db, f"SELECT * FROM {table}"), key=repr)


def copy(source: Path | str, dest: Path | str, **options: Any) -> Verification:
    return asyncio.run(copy_store(source, dest, **options))


@pytest.mark.parametrize("direction", ["sqlite-to-postgres", "postgres-to-sqlite"])
def test_a_copied_store_answers_the_same_after_its_worker_derives_it(
    direction: str,
    tmp_path: Path,
    pg_url: str,
    clock: FakeClock,
    provider: FakeProvider,
) -> None:
    sqlite_db = tmp_path / "store.db"
    source, dest = (sqlite_db, pg_url) if direction == "sqlite-to-postgres" else (pg_url, sqlite_db)
    server = serve(source, clock, provider)
    build(server)
    before = answers(server)
    server.__exit__()
    calls = len(provider.requests)
    assert calls > 0 and rows(source, "llm_usage") and rows(source, "consumed_versions")

    verification = copy(source, dest, chunk_rows=7)
    assert verification.ok and not verification.resumed, verification.render()
    counts = {check.table: check.copy.rows for check in verification.tables}
    assert counts["source_messages"] == len(rows(source, "source_messages")) > 20
    assert verification.copied == sum(counts.values())
    for table in ("source_messages", "forget_ledger", "forgotten_messages", "coverage_gaps",
                  "llm_cache", "llm_cache_sources", "llm_usage", "consumed_versions"):  # fmt: skip
        assert rows(dest, table) == rows(source, table), table
    # nothing derived moved: every message waits for the destination's worker
    assert rows(dest, "recall_blocks") == []
    queued = query(dest, "SELECT count(*) FROM dirty_messages")[0][0]
    assert (
        queued
        == query(
            source,
            "SELECT count(*) FROM (SELECT DISTINCT channel_id, message_id FROM source_messages "
            "WHERE is_current = 1) AS current",
        )[0][0]
    )

    copied = serve(dest, clock, provider)
    try:
        derive(copied)
        after = answers(copied)
        assert sorted(after["blocks"]) == sorted(before["blocks"])
        assert after == before
        # the search index, rebuilt by the destination: each channel keeps its slot (the
        # ranked search's keys), and its statistics
        assert rows(dest, "search_channels") == rows(source, "search_channels")
        # the LLM rollups came from the copied cache: nothing was asked again
        assert len(provider.requests) == calls
        with copied.client() as client:
            # the forgotten message stays forgotten; a new gap follows the copied ids
            replay = ingest_ok(client, message_event("secret", "Zebracanary7731 again"))
            assert replay["ignored_forgotten"] == 1
            gap = ingest_ok(
                client,
                {
                    "type": "coverage_gap",
                    "channel_id": "floor",
                    "from": at(0, 14),
                    "to": at(5, 14),
                },
            )
            assert gap["results"][0]["gap_id"] == 3
    finally:
        copied.__exit__()


class StopAfter:
    """A progress that interrupts the copy once ``chunks`` chunks are committed."""

    def __init__(self, chunks: int) -> None:
        self.chunks = chunks
        self.started: list[tuple[int, int]] = []
        self.tables: list[str] = []

    def start(self, total: int, done: int) -> None:
        self.started.append((total, done))

    def advance(self, table: str, rows: int) -> None:
        self.tables.append(table)
        if len(self.tables) == self.chunks:
            raise KeyboardInterrupt


def test_an_interrupted_copy_resumes_where_it_stopped(
    tmp_path: Path, pg_url: str, clock: FakeClock
) -> None:
    source = tmp_path / "store.db"
    server = serve(source, clock)
    build(server)
    server.__exit__()
    stop = StopAfter(4)
    with pytest.raises(KeyboardInterrupt):
        copy(source, pg_url, chunk_rows=5, progress=stop)
    # channels whole, then source_messages in chunks of 5: the first 15 versions are there
    assert stop.tables == ["channels", "source_messages", "source_messages", "source_messages"]
    assert [r[0] for r in query(pg_url, "SELECT id FROM source_messages ORDER BY id")] == [
        r[0] for r in query(source, "SELECT id FROM source_messages ORDER BY id LIMIT 15")
    ]
    record = json.loads(
        query(pg_url, "SELECT value FROM worker_state WHERE key = ?", RECORD_KEY)[0][0]
    )
    assert record == {"source": str(source.resolve()), "state": "copying"}

    again = StopAfter(0)
    verification = copy(source, pg_url, chunk_rows=5, progress=again)
    assert verification.ok and verification.resumed, verification.render()
    total, done = again.started[0]
    assert done == 2 + 15 and total == sum(c.source.rows for c in verification.tables)
    assert verification.copied == total - done
    assert again.tables[0] == "source_messages"  # channels were there already
    assert rows(pg_url, "source_messages") == rows(source, "source_messages")
    record = json.loads(
        query(pg_url, "SELECT value FROM worker_state WHERE key = ?", RECORD_KEY)[0][0]
    )
    assert record["state"] == "done"

    # run again: a finished copy of this source is verified, nothing is written
    out, err = io.StringIO(), io.StringIO()
    assert copy_command(str(source), pg_url, out=out, err=err) == 0, err.getvalue()
    assert out.getvalue().splitlines()[-1].startswith("verified: ")
    assert rows(pg_url, "source_messages") == rows(source, "source_messages")


def test_a_destination_that_is_not_empty_is_refused_and_left_alone(
    tmp_path: Path, pg_url: str, pg_cluster: PgCluster, clock: FakeClock
) -> None:
    source = tmp_path / "store.db"
    server = serve(source, clock)
    build(server)
    server.__exit__()
    in_use = serve(pg_url, clock)
    with in_use.client() as client:
        ingest_ok(client, message_event("m1", "already serving here"))
    in_use.__exit__()
    before = rows(pg_url, "source_messages")

    out, err = io.StringIO(), io.StringIO()
    assert copy_command(str(source), pg_url, out=out, err=err) == 2
    assert "is not empty (its channels has rows)" in err.getvalue()
    assert "already serving" not in err.getvalue() + out.getvalue()
    assert rows(pg_url, "source_messages") == before
    assert query(pg_url, "SELECT count(*) FROM worker_state WHERE key = ?", RECORD_KEY) == [(0,)]

    # a copy of another store, unfinished, is not resumed from this one
    other = tmp_path / "other.db"
    serve(other, clock).__exit__()
    partial = pg_cluster.create_database()
    try:
        with pytest.raises(KeyboardInterrupt):
            copy(source, partial, progress=StopAfter(1))
        with pytest.raises(CopyRefused, match="holds a copy of another store"):
            copy(other, partial)
    finally:
        pg_cluster.drop_database(partial)
    # a database that cannot be reached is refused at the start, as every command refuses
    # one: the server's words (which name no stored content), never a password
    err = io.StringIO()
    missing_db = pg_url.rsplit("/", 1)[0] + "/no_such_database"
    assert copy_command(str(source), missing_db, out=out, err=err) == 2
    assert err.getvalue().startswith(
        "channel-memory: copy refused: cannot connect to the database at postgresql://"
    )
    assert 'InvalidCatalogNameError: database "no_such_database" does not exist' in (err.getvalue())
    assert copy_command(str(source), str(tmp_path / "new.db"), chunk_rows=0, err=err) == 2
    with pytest.raises(CopyRefused, match="the same database"):
        copy(source, str(source))
    with pytest.raises(CopyRefused, match="does not exist"):
        copy(tmp_path / "missing.db", tmp_path / "new.db")
    assert not (tmp_path / "new.db").exists()


def test_the_verification_catches_a_tampered_copy(
    tmp_path: Path, pg_url: str, clock: FakeClock
) -> None:
    server = serve(pg_url, clock)
    build(server)
    server.__exit__()
    dest = tmp_path / "copy.db"
    out, err = io.StringIO(), io.StringIO()
    assert copy_command(pg_url, str(dest), chunk_rows=50, out=out, err=err) == 0, err.getvalue()
    lines = out.getvalue().splitlines()
    assert len(lines) == len(TABLES) + 2 and all(line.endswith(" ok") for line in lines[1:-1])

    query(dest, "SELECT 1")  # the copy is an ordinary SQLite store
    import sqlite3

    from channel_memory.store.sqlite import register_functions

    with sqlite3.connect(dest) as conn:
        register_functions(conn)  # the triggers' function, as the store's writer defines it
        conn.execute(
            "UPDATE source_messages SET content_hash = 'sha256:tampered' "
            "WHERE id = (SELECT min(id) FROM source_messages WHERE forgotten_us IS NULL)"
        )
    out = io.StringIO()
    assert copy_command(pg_url, str(dest), out=out, err=err) == 1
    report = {line.split()[0]: line for line in out.getvalue().splitlines()[1:-1]}
    assert (
        report["source_messages"].endswith("MISMATCH") and " differs " in report["source_messages"]
    )
    assert all(line.endswith(" ok") for name, line in report.items() if name != "source_messages")
    assert out.getvalue().splitlines()[-1] == (
        "NOT verified: the copy differs from its source in source_messages"
    )


def test_the_digest_ignores_order_and_counts_repeats() -> None:
    one, two, three = (
        (1, "floor", "a", 2.5, None),
        (2, "floor", "b", 0.0, "x"),
        (3, "é", "", 1.0, 7),
    )
    forward, backward, doubled = Tally(), Tally(), Tally()
    forward.add([one, two, three])
    backward.add([three])
    backward.add([two, one])
    doubled.add([one, one, two, three])
    assert (forward.rows, forward.digest) == (backward.rows, backward.digest)
    assert doubled.digest != forward.digest
    changed = Tally()
    changed.add([one, two, (3, "é", "", 1.0, 8)])
    assert changed.digest != forward.digest


def test_a_store_moves_along_every_pair_of_backends(
    tmp_path: Path, pg_url: str, pg_cluster: PgCluster, clock: FakeClock
) -> None:
    first = tmp_path / "first.db"
    server = serve(first, clock)
    build(server)
    server.__exit__()
    second, last = tmp_path / "second.db", pg_cluster.create_database()
    try:
        for source, dest in ((first, second), (second, pg_url), (pg_url, last)):
            verification = copy(source, dest, chunk_rows=9)
            assert verification.ok, verification.render()
        for table in (t.name for t in TABLES if t.name != "worker_state"):
            assert rows(last, table) == rows(first, table), table
        # worker_state moves whole; each copy keeps its own record of where it came from
        state = "SELECT key, value FROM worker_state WHERE key <> ? ORDER BY key"
        assert query(last, state, RECORD_KEY) == query(first, state, RECORD_KEY)
        assert {key for key, _ in query(first, state, RECORD_KEY)} >= {"cursor_secret"}
        (record,) = query(last, "SELECT value FROM worker_state WHERE key = ?", RECORD_KEY)
        assert json.loads(record[0]) == {"source": pg_url, "state": "done"}
    finally:
        pg_cluster.drop_database(last)
