"""Consumption: reads settled handled or failed, per consumer, in a bounded ledger of ids
and hashes that forget and retention take with the messages."""

from __future__ import annotations

import asyncio
import itertools
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from channel_memory.feed.reads import limits
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.kernel.config import Settings, load_settings
from channel_memory.store import Store
from channel_memory.store import consumption as ledger
from channel_memory.store.consumption import Limits, Version
from channel_memory.worker.runner import Worker, derive_hook, derive_settings
from tests.conftest import FakeClock, LiveServer, message_event, query

DERIVE = derive_hook(derive_settings(Settings()))
NOW_US = 1_779_393_600_000_000  # 2026-05-21T20:00:00Z
HOUR_US = 3_600_000_000
READ = "reader-token-0123456789"
OTHER = "other-reader-0123456789"
INGEST = "ingest-only-token-0123"


# --- helpers ---------------------------------------------------------------------------------


async def put(store: Store, *events: dict[str, Any], now_us: int = NOW_US) -> None:
    batch = IngestBatch.model_validate({"events": list(events)})
    await ingest(store, ["floor"], native_commands(batch.events), now_us=now_us, derive=DERIVE)


async def current(store: Store, *message_ids: str) -> list[Version]:
    """The current versions of ``message_ids``, in that order."""
    async with store.read() as conn:
        rows = await conn.execute_fetchall(
            "SELECT message_id, channel_id, content_hash FROM source_messages "
            "WHERE is_current = 1 AND forgotten_us IS NULL"
        )
    found = {row[0]: Version(row[1], row[0], row[2]) for row in rows}
    return [found[m] for m in message_ids]


async def record(store: Store, consumer: str, versions: list[Version], **kw: Any) -> str:
    async with store.write() as conn:
        return await ledger.record_read(conn, consumer, versions, kw.pop("now_us", NOW_US), **kw)


async def settle(
    store: Store, consumer: str, read_id: str, outcome: Any, **kw: Any
) -> ledger.Settled | None:
    async with store.write() as conn:
        return await ledger.settle(conn, consumer, read_id, outcome, kw.pop("now_us", NOW_US), **kw)


async def consumed(store: Store, consumer: str, versions: list[Version]) -> set[Version]:
    async with store.read() as conn:
        return await ledger.consumed(conn, consumer, versions)


@asynccontextmanager
async def desk(tmp_path: Path, count: int = 3) -> AsyncIterator[Store]:
    """A store holding messages m0..m{count-1} in channel floor."""
    store = await Store.open(tmp_path / "cm.db")
    try:
        await put(store, *(message_event(f"m{i}", f"FILLED {i} NVDA") for i in range(count)))
        yield store
    finally:
        await store.close()


def raw_bytes(db: Path) -> bytes:
    data = b""
    for suffix in ("", "-wal", "-shm"):
        path = Path(str(db) + suffix)
        if path.exists():
            data += path.read_bytes()
    return data


def digest_of(content_hash: str) -> bytes:
    """The hash's hex digits: what would identify the forgotten content on disk."""
    return content_hash.split(":")[-1].encode()


# --- the store -------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_handled_consumes_exactly_the_read_and_failed_nothing(tmp_path: Path) -> None:
    async with desk(tmp_path) as store:
        m0, m1, m2 = await current(store, "m0", "m1", "m2")
        shown = await record(store, "alpha", [m0, m1])
        assert re.fullmatch(ledger.READ_ID_PATTERN, shown)
        assert await consumed(store, "alpha", [m0, m1, m2]) == set()  # pending consumes nothing

        failed = await record(store, "alpha", [m2])
        assert await settle(store, "alpha", failed, "failed") == ledger.Settled(
            failed, "failed", 1, repeated=False
        )
        assert await consumed(store, "alpha", [m0, m1, m2]) == set()

        assert await settle(store, "alpha", shown, "handled") == ledger.Settled(
            shown, "handled", 2, repeated=False
        )
        assert await consumed(store, "alpha", [m0, m1, m2]) == {m0, m1}
        # a second consumer is unaffected
        assert await consumed(store, "beta", [m0, m1, m2]) == set()


@pytest.mark.anyio
async def test_settling_twice_is_idempotent_and_the_first_outcome_stands(tmp_path: Path) -> None:
    async with desk(tmp_path) as store:
        m0, m1, _ = await current(store, "m0", "m1", "m2")
        handled = await record(store, "alpha", [m0])
        failed = await record(store, "alpha", [m1])
        assert await settle(store, "alpha", handled, "handled") is not None
        assert await settle(store, "alpha", failed, "failed") is not None
        again = await settle(store, "alpha", handled, "handled")
        assert again == ledger.Settled(handled, "handled", 1, repeated=True)
        # a contradiction is answered with what was recorded, and changes nothing
        assert await settle(store, "alpha", failed, "handled") == ledger.Settled(
            failed, "failed", 1, repeated=True
        )
        assert await settle(store, "alpha", handled, "failed") == again
        assert await consumed(store, "alpha", [m0, m1]) == {m0}


@pytest.mark.anyio
async def test_unknown_foreign_and_expired_reads_are_alike(tmp_path: Path) -> None:
    async with desk(tmp_path) as store:
        m0, m1, _ = await current(store, "m0", "m1", "m2")
        mine = await record(store, "alpha", [m0])
        assert await settle(store, "beta", mine, "handled") is None  # another consumer's
        assert await settle(store, "alpha", "r_" + "A" * 22, "handled") is None  # unknown
        assert await consumed(store, "beta", [m0]) == set()

        ttl = Limits(read_ttl_us=HOUR_US)
        old = await record(store, "alpha", [m1], limits=ttl)
        later = NOW_US + HOUR_US + 1
        assert await settle(store, "alpha", old, "handled", now_us=later, limits=ttl) is None
        assert await consumed(store, "alpha", [m1]) == set()
        # an expired read's rows are dropped by the next recording (anyone's)
        await record(store, "beta", [m0], now_us=later, limits=ttl)
        rows = query(store.path, "SELECT read_id FROM consumption_reads WHERE consumer = 'alpha'")
        assert rows == []


@pytest.mark.anyio
async def test_read_ids_bind_consumer_and_versions_and_a_repeat_reopens(tmp_path: Path) -> None:
    async with desk(tmp_path) as store:
        m0, m1, _ = await current(store, "m0", "m1", "m2")
        first = await record(store, "alpha", [m0, m1])
        assert await record(store, "alpha", [m1, m0, m1]) == first  # the same set
        assert await record(store, "alpha", [m0]) != first
        assert await record(store, "beta", [m0, m1]) != first
        # failed, then the same versions shown again: the same read, settleable once more
        assert await settle(store, "alpha", first, "failed") is not None
        assert await record(store, "alpha", [m0, m1], now_us=NOW_US + 1) == first
        settled = await settle(store, "alpha", first, "handled", now_us=NOW_US + 2)
        assert settled == ledger.Settled(first, "handled", 2, repeated=False)
        assert await consumed(store, "alpha", [m0, m1]) == {m0, m1}


@pytest.mark.anyio
async def test_an_edit_is_a_new_version_and_unconsumed(tmp_path: Path) -> None:
    async with desk(tmp_path) as store:
        (before,) = await current(store, "m0")
        assert await settle(store, "alpha", await record(store, "alpha", [before]), "handled")
        await put(
            store,
            message_event("m0", "FILLED 0 NVDA (corrected)", edited_at="2026-05-21T16:05:00Z"),
        )
        (after,) = await current(store, "m0")
        assert after.content_hash != before.content_hash
        assert await consumed(store, "alpha", [before, after]) == {before}
        # an old read of the earlier version consumes only that version
        stale = await record(store, "alpha", [before], now_us=NOW_US + 5)
        assert await settle(store, "alpha", stale, "handled", now_us=NOW_US + 6)
        assert await consumed(store, "alpha", [after]) == set()


@pytest.mark.anyio
async def test_versions_not_stored_never_join_a_read(tmp_path: Path) -> None:
    async with desk(tmp_path) as store:
        (m0,) = await current(store, "m0")
        forged = Version("floor", "m0", "sha256:" + "0" * 64)
        elsewhere = Version("nowhere", "m0", m0.content_hash)
        read_id = await record(store, "alpha", [m0, forged, elsewhere])
        settled = await settle(store, "alpha", read_id, "handled")
        assert settled is not None and settled.versions == 1
        assert await consumed(store, "alpha", [m0, forged, elsewhere]) == {m0}


@pytest.mark.anyio
async def test_the_ledger_keeps_the_newest_versions_per_consumer(tmp_path: Path) -> None:
    bound = Limits(max_versions_per_consumer=3)
    async with desk(tmp_path, count=6) as store:
        versions = await current(store, *(f"m{i}" for i in range(6)))
        for step, version in enumerate(versions[:4]):
            read_id = await record(store, "alpha", [version], now_us=NOW_US + step)
            assert await settle(store, "alpha", read_id, "handled", limits=bound)
        # consumed again: the oldest becomes the newest
        read_id = await record(store, "alpha", [versions[1]], now_us=NOW_US + 10)
        assert await settle(store, "alpha", read_id, "handled", limits=bound)
        read_id = await record(store, "alpha", versions[4:], now_us=NOW_US + 11)
        assert await settle(store, "alpha", read_id, "handled", limits=bound)
        async with store.read() as conn:
            assert await ledger.ledger_size(conn, "alpha") == 3
        assert await consumed(store, "alpha", versions) == {versions[1], versions[4], versions[5]}
        # another consumer's ledger is its own
        read_id = await record(store, "beta", [versions[0]])
        assert await settle(store, "beta", read_id, "handled", limits=bound)
        assert await consumed(store, "beta", versions) == {versions[0]}


@pytest.mark.anyio
async def test_reads_per_consumer_are_capped_keeping_pending_ones(tmp_path: Path) -> None:
    cap = Limits(max_reads_per_consumer=2)
    async with desk(tmp_path, count=4) as store:
        m0, m1, m2, m3 = await current(store, "m0", "m1", "m2", "m3")
        oldest = await record(store, "alpha", [m0], now_us=NOW_US, limits=cap)
        settled = await record(store, "alpha", [m1], now_us=NOW_US + 1, limits=cap)
        assert await settle(store, "alpha", settled, "failed", limits=cap)
        newest = await record(store, "alpha", [m2], now_us=NOW_US + 2, limits=cap)
        others = await record(store, "beta", [m3], now_us=NOW_US + 3, limits=cap)
        # the settled read went first, though the oldest pending one is older
        kept = query(store.path, "SELECT read_id FROM consumption_reads WHERE consumer = 'alpha'")
        assert {row[0] for row in kept} == {oldest, newest}
        assert await settle(store, "alpha", settled, "failed", limits=cap) is None
        newer = await record(store, "alpha", [m3], now_us=NOW_US + 4, limits=cap)
        assert await settle(store, "alpha", oldest, "handled", limits=cap) is None
        assert await settle(store, "alpha", newer, "handled", limits=cap) is not None
        assert await settle(store, "beta", others, "handled", limits=cap) is not None
        assert query(store.path, "SELECT count(*) FROM consumption_read_versions") == [(1,)]


# --- forget and retention -----------------------------------------------------------------------


@pytest.mark.anyio
async def test_retention_removes_the_ledger_rows_of_expired_messages(tmp_path: Path) -> None:
    clock = FakeClock("2026-05-21T20:00:00Z")
    config = load_settings(None, db=tmp_path / "cm.db", retention={"days": 1})
    store = await Store.open(config.db)
    try:
        worker = Worker(store, config, clock)
        await put(
            store,
            message_event("old", "FILLED 9 TSLA", created_at="2026-05-19T10:00:00Z"),
            message_event("new", "FILLED 8 TSLA", created_at="2026-05-21T10:00:00Z"),
        )
        old, new = await current(store, "old", "new")
        handled = await record(store, "alpha", [old, new])
        assert await settle(store, "alpha", handled, "handled")
        pending = await record(store, "beta", [old, new])
        await worker.prepare()
        await worker.drain()
        assert digest_of(old.content_hash) in raw_bytes(config.db)
        assert await worker.apply_retention() == 1
        assert await consumed(store, "alpha", [old, new]) == {new}
        settled = await settle(store, "beta", pending, "handled")
        assert settled is not None
        assert await consumed(store, "beta", [old, new]) == {new}
    finally:
        await store.close()
    assert query(config.db, "SELECT DISTINCT message_id FROM consumed_versions") == [("new",)]
    assert digest_of(old.content_hash) not in raw_bytes(config.db)


@pytest.mark.sqlite_only  # reads the SQLite files; PostgreSQL: test_forget_postgres.py
def test_forget_removes_the_ledger_rows_and_their_bytes(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server()
    store: Store = server.app.state.ctx.store
    with server.client() as client:
        for event in (message_event("1", "FILLED 100 AAPL"), message_event("2", "other")):
            assert client.post("/v1/ingest", json={"events": [event]}).status_code == 200
        one, two = server.run(current(store, "1", "2"))
        handled = server.run(record(store, "local", [one, two]))
        assert client.post(
            "/v1/consumption", json={"read_id": handled, "outcome": "handled"}
        ).json() == {"read_id": handled, "outcome": "handled", "versions": 2}
        pending = server.run(record(store, "other", [one, two]))
        server.drain()
        db = server.settings.db
        assert digest_of(one.content_hash) in raw_bytes(db)

        forget = client.post("/forget", json={"channel_id": "floor", "message_ids": ["1"]})
        assert forget.status_code == 200
        rows = query(
            db,
            "SELECT message_id FROM consumed_versions UNION ALL "
            "SELECT message_id FROM consumption_read_versions",
        )
        assert sorted(rows) == [("2",), ("2",)]
        assert digest_of(one.content_hash) not in raw_bytes(db)
        # a read recorded before the forget and settled after it never consumes the message
        assert server.run(settle(store, "other", pending, "handled")) is not None
        assert server.run(consumed(store, "other", [one, two])) == {two}


# --- HTTP ------------------------------------------------------------------------------------


@pytest.fixture
def tokens_server(make_server: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    yield make_server(
        tokens=[
            {"token": READ, "scopes": ["read"], "agent_id": "alpha"},
            {"token": OTHER, "scopes": ["read"], "agent_id": "beta"},
            {"token": INGEST, "scopes": ["ingest"], "agent_id": "bridge"},
        ]
    )


def seeded(server: LiveServer, consumer: str, *message_ids: str) -> tuple[str, list[Version]]:
    with server.client(INGEST) as bridge:
        events = [message_event(m, f"Stop moved to 4{m} on NVDA") for m in message_ids]
        assert bridge.post("/v1/ingest", json={"events": events}).status_code == 200
    store: Store = server.app.state.ctx.store
    versions = server.run(current(store, *message_ids))
    return server.run(record(store, consumer, versions)), versions


def test_http_handled_failed_and_idempotent(tokens_server: LiveServer) -> None:
    server = tokens_server
    store: Store = server.app.state.ctx.store
    handled, shown = seeded(server, "alpha", "1", "2")
    failed, kept = seeded(server, "alpha", "3")
    with server.client(READ) as alpha:
        first = alpha.post("/v1/consumption", json={"read_id": handled, "outcome": "handled"})
        assert first.status_code == 200
        assert first.json() == {"read_id": handled, "outcome": "handled", "versions": 2}
        again = alpha.post("/v1/consumption", json={"read_id": handled, "outcome": "handled"})
        assert (again.status_code, again.content) == (200, first.content)
        no = alpha.post("/v1/consumption", json={"read_id": failed, "outcome": "failed"})
        assert no.json() == {"read_id": failed, "outcome": "failed", "versions": 1}
        conflict = alpha.post("/v1/consumption", json={"read_id": failed, "outcome": "handled"})
        assert conflict.status_code == 409
        assert conflict.json()["error"]["code"] == "read_already_settled"
    assert server.run(consumed(store, "alpha", shown + kept)) == set(shown)
    assert server.run(consumed(store, "beta", shown + kept)) == set()


def test_http_foreign_read_answers_exactly_like_an_unknown_one(tokens_server: LiveServer) -> None:
    server = tokens_server
    mine, shown = seeded(server, "alpha", "1")
    with server.client(OTHER) as beta:
        foreign = beta.post("/v1/consumption", json={"read_id": mine, "outcome": "handled"})
        unknown_id = "r_" + "Q" * 22
        unknown = beta.post("/v1/consumption", json={"read_id": unknown_id, "outcome": "handled"})
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.content == unknown.content
    same = {k: v for k, v in foreign.headers.items() if k != "date"}
    assert same == {k: v for k, v in unknown.headers.items() if k != "date"}
    assert foreign.json()["error"]["code"] == "read_not_found"
    assert "expires after consumption.read_ttl" in foreign.json()["error"]["message"]
    assert server.run(consumed(server.app.state.ctx.store, "beta", shown)) == set()
    # the owner still settles it
    with server.client(READ) as alpha:
        ok = alpha.post("/v1/consumption", json={"read_id": mine, "outcome": "handled"})
    assert ok.status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        {"read_id": "r_" + "A" * 22, "outcome": "Canary-outcome-77"},
        {"read_id": "Canary-read-id-77", "outcome": "handled"},
        {"read_id": "r_" + "A" * 22, "outcome": "handled", "Canary extra 77!": 1},
        {"outcome": "handled"},
        {"read_id": 77, "outcome": "handled"},
    ],
)
def test_http_bad_body_is_422_without_echo(tokens_server: LiveServer, body: Any) -> None:
    with tokens_server.client(READ) as alpha:
        response = alpha.post("/v1/consumption", json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_failed"
    assert error["details"] and "canary" not in response.text.lower()
    assert "77" not in response.text


def test_http_scope_and_token(tokens_server: LiveServer) -> None:
    body = {"read_id": "r_" + "A" * 22, "outcome": "handled"}
    with tokens_server.client(INGEST) as bridge:
        assert bridge.post("/v1/consumption", json=body).status_code == 403
    with tokens_server.client() as nobody:
        assert nobody.post("/v1/consumption", json=body).status_code == 401
    with tokens_server.client(READ) as alpha:
        document = alpha.get("/openapi.json").json()
    operation = document["paths"]["/v1/consumption"]["post"]
    assert operation["x-scope"] == "read"
    assert set(operation["responses"]) >= {"200", "401", "403", "404", "409", "422"}
    schema = document["components"]["schemas"]["ConsumptionRequest"]
    assert schema["properties"]["outcome"]["enum"] == ["handled", "failed"]


def test_settings_feed_the_store_limits(make_settings: Callable[..., Settings]) -> None:
    config = make_settings(
        consumption={"read_ttl": "2h", "max_reads_per_consumer": 5, "max_versions_per_consumer": 9}
    )
    assert limits(config) == Limits(
        read_ttl_us=2 * HOUR_US, max_reads_per_consumer=5, max_versions_per_consumer=9
    )
    assert limits(make_settings()) == Limits()


# --- the property ----------------------------------------------------------------------------

MESSAGES = 4
CONSUMERS = ("alpha", "beta")
_template: list[Path] = []
_runs = itertools.count()


def template() -> Path:
    """A database with messages m0..m3 in two versions each (one edit), built once."""
    if not _template:
        folder = Path(tempfile.mkdtemp(prefix="consumption-"))

        async def build() -> None:
            store = await Store.open(folder / "template.db")
            try:
                await put(store, *(message_event(f"m{i}", f"v1 of {i}") for i in range(MESSAGES)))
                await put(
                    store,
                    *(
                        message_event(f"m{i}", f"v2 of {i}", edited_at="2026-05-21T16:05:00Z")
                        for i in range(MESSAGES)
                    ),
                )
            finally:
                await store.close()

        asyncio.run(build())
        _template.append(folder / "template.db")
    return _template[0]


def all_versions(db: Path) -> list[Version]:
    rows = query(db, "SELECT channel_id, message_id, content_hash FROM source_messages")
    return sorted(Version(*row) for row in rows)


operation = st.one_of(
    st.tuples(
        st.just("read"),
        st.sampled_from(CONSUMERS),
        st.lists(st.integers(0, 2 * MESSAGES), max_size=4),  # the last index: not stored
    ),
    st.tuples(
        st.just("settle"),
        st.integers(0, 4),  # how far back among the reads issued (past the first: unknown)
        st.sampled_from(["owner", "owner", "owner", "other"]),  # who settles it
        st.sampled_from(ledger.OUTCOMES),
    ),
    st.tuples(st.just("wait"), st.integers(10, 90)),  # minutes
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(operation, max_size=25), bound=st.sampled_from([2, 5, 50_000]))
def test_a_version_is_consumed_only_through_a_handled_read_that_showed_it(
    ops: list[tuple[Any, ...]], bound: int
) -> None:
    source = template()
    versions = all_versions(source)
    forged = Version("floor", "m0", "sha256:" + "f" * 64)
    pool = [*versions, forged]
    db = source.with_name(f"run-{next(_runs)}.db")
    shutil.copy(source, db)
    rules = Limits(read_ttl_us=2 * HOUR_US, max_versions_per_consumer=bound)

    async def run() -> None:
        now = NOW_US
        issued: list[tuple[str, str]] = []  # (consumer, read id), in order
        shown: dict[str, set[Version]] = {}  # read id -> what it held
        recorded_at: dict[str, int] = {}
        first: dict[str, str] = {}  # read id -> outcome, while settled
        handled: dict[str, set[Version]] = {c: set() for c in CONSUMERS}
        ids: dict[tuple[str, frozenset[Version]], str] = {}
        async with aiosqlite.connect(db, isolation_level=None) as conn:
            for op in ops:
                now += 1
                await conn.execute("BEGIN IMMEDIATE")
                if op[0] == "wait":
                    now += op[1] * 60_000_000
                elif op[0] == "read":
                    _, consumer, picks = op
                    chosen = [pool[i] for i in picks]
                    read_id = await ledger.record_read(conn, consumer, chosen, now, limits=rules)
                    # one id per consumer and set of versions, never shared
                    key = (consumer, frozenset(chosen))
                    assert ids.setdefault(key, read_id) == read_id
                    assert [k for k, v in ids.items() if v == read_id] == [key]
                    issued.append((consumer, read_id))
                    shown[read_id] = set(chosen) - {forged}
                    recorded_at[read_id] = now
                    first.pop(read_id, None)
                else:
                    _, back, who, outcome = op
                    owner, read_id = (
                        issued[-1 - back] if back < len(issued) else ("", "r_" + "Z" * 22)
                    )
                    consumer = owner if who == "owner" and owner else CONSUMERS[owner == "alpha"]
                    result = await ledger.settle(
                        conn, consumer, read_id, outcome, now, limits=rules
                    )
                    live = owner == consumer and now - recorded_at[read_id] <= rules.read_ttl_us
                    assert (result is not None) == live
                    if result is not None:
                        assert result.outcome == first.get(read_id, outcome)
                        assert result.repeated == (read_id in first)
                        assert result.versions == len(shown[read_id])
                        if read_id not in first and outcome == "handled":
                            handled[consumer] |= shown[read_id]
                        first.setdefault(read_id, outcome)
                await conn.execute("COMMIT")
                for consumer in CONSUMERS:
                    now_consumed = await ledger.consumed(conn, consumer, pool)
                    # only what some handled read of this consumer showed complete
                    assert now_consumed <= handled[consumer]
                    assert forged not in now_consumed
                    assert len(now_consumed) <= bound
                    if bound >= len(pool):
                        assert now_consumed == handled[consumer]

    try:
        asyncio.run(run())
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
