"""Forget on PostgreSQL: what the server holds after a forget, read through SQL and in
the database's files on disk (issue 17).

What is guaranteed once a forget has answered (its erasure runs right after its commit,
and again at every start and close while one is owed): no row of any table holds the
forgotten text, its words, its author or its versions' content hashes, and neither does
any file of the database's directory (``base/<database oid>``: every table, index, TOAST
relation and the planner's statistics), once the server has written its buffers out.

What is not: the write-ahead log (``pg_wal``) keeps the records that stored the text
until its segments are recycled and overwritten after later checkpoints; base backups
and WAL archives keep whatever they copied; the statistics of a table the forget
emptied keep their old sample of values. A streaming replica replays the same
``VACUUM FULL`` and so ends up as its primary, with its own ``pg_wal``.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from channel_memory.store.postgres.database import PostgresStore
from tests.conftest import LiveServer, at, ingest_ok, message_event
from tests.fake_provider import FakeProvider, echoing
from tests.pgcluster import PgCluster, run_sync

pytestmark = pytest.mark.parametrize("backend", ["postgres"], indirect=True)

CANARY = "zqxcanary123"  # one word: also a term of the ranked search index
OLD = "zqxoldversion456"  # only in the version an edit superseded
TOASTED = "zqxtoasted789"  # in a message long enough to live in a TOAST relation
AUTHOR = "zqxauthor321"  # the forgotten messages' author, named nowhere else
TOKEN = "alpha-token-0123456789"
TOKENS = [{"token": TOKEN, "scopes": ["read", "ingest"], "agent_id": "alpha", "channels": ["*"]}]


# --- reading the server as an operator would (psql, and the files as root) ---------------


def sql(url: str, statement: str, *args: Any) -> list[tuple[Any, ...]]:
    """Run one statement as the cluster's superuser and return its rows."""

    async def fetch() -> list[tuple[Any, ...]]:
        conn = await asyncpg.connect(url)
        try:
            return [tuple(row) for row in await conn.fetch(statement, *args)]
        finally:
            await conn.close()

    return run_sync(fetch())


def tables_holding(url: str, needle: str) -> dict[str, int]:
    """Per table of the current schema, the rows in which any column holds ``needle`` (in
    any case): a row cast to text shows every column (text, arrays, JSON, numbers), and
    each bytea column is searched as bytes."""
    found: dict[str, int] = {}
    tables = sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    assert len(tables) > 20  # the whole schema, not an empty or wrong one
    for (table,) in tables:
        byteas = sql(
            url,
            "SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 "
            "AND NOT attisdropped AND atttypid = 'bytea'::regtype",
            table,
        )
        condition = " OR ".join(
            ["strpos(lower(t::text), lower($1)) > 0"]
            + [
                f"strpos(lower(encode(t.\"{column}\", 'escape')), lower($1)) > 0"
                for (column,) in byteas
            ]
        )
        ((count,),) = sql(url, f'SELECT count(*) FROM "{table}" AS t WHERE {condition}', needle)
        if count:
            found[table] = count
    return found


def database_files(url: str, data_dir: Path) -> dict[Path, str]:
    """Every file of the database's directory, named by the relation it stores (every
    table, index, TOAST relation and sequence with storage, system catalogs included:
    ``pg_relation_filepath``, with its segments and forks); a file no relation claims is
    named by its file name (such as a relation file a rewrite emptied, unlinked at the
    next checkpoint)."""
    relations = sql(
        url,
        "SELECT c.relname, pg_relation_filepath(c.oid) FROM pg_class AS c "
        "WHERE pg_relation_filepath(c.oid) IS NOT NULL",
    )
    ((directory,),) = sql(
        url, "SELECT 'base/' || oid FROM pg_database WHERE datname = current_database()"
    )
    named = {Path(path).name: name for name, path in relations}
    files: dict[Path, str] = {}
    for path in (data_dir / directory).iterdir():
        # <filenode>, <filenode>.<segment>, <filenode>_<fork>[.<segment>]
        stem = re.sub(r"(_[a-z]+)?(\.\d+)?$", "", path.name)
        files[path] = named.get(stem, path.name)
    assert len(files) > 100 and "source_messages" in files.values()
    return files


def holding(files: dict[Path, str] | list[Path], needle: str) -> set[str]:
    """The names of the files (or of the relations they store) that hold ``needle``'s
    bytes in any case."""
    pattern = re.compile(re.escape(needle.encode()), re.IGNORECASE)
    names = files if isinstance(files, dict) else {path: path.name for path in files}
    return {
        name for path, name in names.items() if path.is_file() and pattern.search(path.read_bytes())
    }


def wal_segments(data_dir: Path) -> list[Path]:
    return [path for path in (data_dir / "pg_wal").iterdir() if path.is_file()]


def entries(url: str, relation: str) -> int:
    """The rows of a table, or the rows a (partial) index covers."""
    index = sql(
        url,
        "SELECT indrelid::regclass::text, pg_get_expr(indpred, indrelid) FROM pg_index "
        "WHERE indexrelid = $1::regclass",
        relation,
    )
    table, predicate = index[0] if index else (relation, None)
    where = f" WHERE {predicate}" if predicate else ""
    ((count,),) = sql(url, f'SELECT count(*) FROM "{table}"{where}')
    return int(count)


def checkpoint(url: str) -> None:
    """Write every dirty buffer to the relation files (superuser only), so the files hold
    what the database holds, live or dead."""
    sql(url, "CHECKPOINT")


# --- the scenario --------------------------------------------------------------------------


def noise(words: int, seed: int) -> str:
    """Text that compression cannot shrink: stored as it is, out of line when long."""
    rng = random.Random(seed)
    return " ".join("".join(rng.choices(string.ascii_letters, k=8)) for _ in range(words))


def chatter(prefix: str, hour: int) -> list[dict[str, Any]]:
    return [
        message_event(f"{prefix}{i}", f"small talk about the weather, part {i} " + "words " * 20,
                      created_at=at(10 * i, hour))
        for i in range(4)
    ]  # fmt: skip


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider(echoing) as fake:
        yield fake


@pytest.fixture
def start(
    make_server: Callable[..., LiveServer], provider: FakeProvider
) -> Callable[[], LiveServer]:
    """A server with rollups by a local model that quotes its sources, a consumer token,
    and the worker run by the test (``drain``)."""

    def make() -> LiveServer:
        return make_server(
            worker={"enabled": False},
            tokens=TOKENS,
            llm={"enabled": True, "model": "openai/fake", "api_base": provider.api_base,
                 "api_key": "sk-local"},
        )  # fmt: skip

    return make


def seed(server: LiveServer, client: httpx.Client) -> list[str]:
    """Messages holding the canaries everywhere the store keeps text, then everything the
    worker, the model and a consumer derive from them; returns the forgotten versions'
    content hashes (the server's digests)."""
    first = ingest_ok(
        client,
        *chatter("c", 8),
        *chatter("d", 10),  # a second rollup window: the cache keeps an entry after the forget
        # a message, then its edit: the superseded version holds OLD
        message_event("s", f"{CANARY} {OLD} chart thoughts over lunch " + "words " * 20,
                      created_at=at(45, 8), author=AUTHOR),
    )  # fmt: skip
    second = ingest_ok(
        client,
        message_event("s", f"{CANARY} chart thoughts over a late lunch " + "words " * 20,
                      created_at=at(45, 8), edited_at=at(47, 8), author=AUTHOR),
        message_event("r", "nice, same here", created_at=at(50, 8), reply_to="s"),
        message_event("u", f"FILLED 10 MSFT @ 412.5 {CANARY}", created_at=at(20, 19),
                      author=AUTHOR),
        message_event("t", f"{TOASTED} {noise(700, 17)}", created_at=at(25, 19), author=AUTHOR),
        message_event("v", "watching the close from here", created_at=at(30, 19)),
    )  # fmt: skip
    server.drain()
    assert server.run(server.app.state.worker.llm.run_once()).written == 2
    # a consumer handles one read and leaves the next pending
    read = client.get("/channel-awareness", params={"channels": "floor", "format": "json"})
    settled = client.post(
        "/v1/consumption", json={"read_id": read.headers["read-id"], "outcome": "handled"}
    )
    assert settled.status_code == 200 and settled.json()["versions"] > 0
    pending = client.get("/channel-awareness", params={"channels": "floor", "format": "json"})
    assert pending.status_code == 200
    forgotten = {"s", "t", "u"}
    return [
        result["content_hash"].removeprefix("sha256:")
        for result in first["results"] + second["results"]
        if result["source_handle"].split("/")[1] in forgotten
    ]


def forget(client: httpx.Client) -> None:
    response = client.post(
        "/forget", json={"channel_id": "floor", "message_ids": ["s", "t", "u"], "reason": "gdpr"}
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"forgotten": 4}


# --- the tests -------------------------------------------------------------------------------


def test_forget_leaves_the_text_in_no_row_and_no_file_of_the_database(
    start: Callable[[], LiveServer], db_path: str, pg_cluster: PgCluster
) -> None:
    """After a forget, on a database in use (every table keeps other rows, the planner's
    statistics were gathered as autovacuum gathers them): no row of any table, and no
    file of the database's directory, holds the forgotten text, its search terms, its
    superseded version, its out-of-line (TOAST) part, its author or its versions'
    content hashes, once every buffer is written out (CHECKPOINT).

    Not guaranteed, and shown here: the write-ahead log still holds the text (the
    records that inserted it) until its segments are recycled and overwritten; nothing
    else of the cluster's directory holds it."""
    url, data_dir = db_path, pg_cluster.data_dir
    server = start()
    with server.client(TOKEN) as client:
        hashes = seed(server, client)
        sql(url, "ANALYZE")
        checkpoint(url)

        # the test is real: the text is in the rows and in the files of its relations
        # a term of the current versions of s and u, and of sparse blocks quoting them
        ((documents,),) = sql(url, "SELECT count(*) FROM search_terms WHERE term = $1", CANARY)
        assert documents >= 2
        rows = tables_holding(url, CANARY)
        assert {"source_messages", "recall_blocks", "search_terms", "llm_cache"} <= rows.keys()
        assert tables_holding(url, OLD) == {"source_messages": 1}
        assert "derived_messages" in tables_holding(url, AUTHOR)
        shown = set().union(*(tables_holding(url, h).keys() for h in hashes))
        assert {"block_sources", "consumed_versions", "consumption_read_versions"} <= shown
        files = database_files(url, data_dir)
        assert {
            "source_messages",
            "source_messages_words",  # the GIN index of the literal-match search
            "search_terms",
            "search_terms_pkey",
            "recall_blocks",
            "llm_cache",
            "pg_statistic",  # the planner's sample of the columns' values
        } <= holding(files, CANARY)
        assert {"source_messages", "pg_statistic"} <= holding(files, OLD)
        toast = sql(url, "SELECT reltoastrelid::regclass::text FROM pg_class WHERE relname = $1",
                    "source_messages")[0][0]  # fmt: skip
        assert toast.removeprefix("pg_toast.") in holding(files, TOASTED)
        assert {"derived_messages", "source_messages_by_author"} <= holding(files, AUTHOR)
        in_files = set().union(*(holding(files, h) for h in hashes))
        assert {"block_sources", "consumed_versions", "consumption_read_versions"} <= in_files

        forget(client)

        assert sql(url, "SELECT count(*) FROM pending_erasures") == [(0,)]
        assert sql(url, "SELECT count(*) FROM search_terms WHERE term LIKE 'zqx%'") == [(0,)]
        for needle in (CANARY, OLD, TOASTED, AUTHOR, *hashes):
            assert tables_holding(url, needle) == {}, needle
        # the rest is untouched: the chatter, its blocks, the other model answer
        kept = "SELECT count(*) FROM source_messages WHERE forgotten_us IS NULL"
        assert sql(url, kept) == [(10,)]
        assert sql(url, "SELECT count(*) FROM llm_cache") == [(1,)]

        checkpoint(url)
        files = database_files(url, data_dir)
        for needle in (CANARY, OLD, TOASTED, AUTHOR, *hashes):
            assert holding(files, needle) == set(), needle
        # the write-ahead log still holds the records that wrote the text; nothing else
        # of the cluster does (server log, shared catalogs, commit status, statistics)
        assert holding(wal_segments(data_dir), CANARY)
        elsewhere = [
            path
            for path in data_dir.parent.rglob("*")
            if not {"base", "pg_wal"} & set(path.relative_to(data_dir.parent).parts)
        ]
        assert len(elsewhere) > 50 and holding(elsewhere, CANARY) == set()


def test_an_erasure_owed_when_the_process_died_is_done_at_the_next_start(
    start: Callable[[], LiveServer],
    db_path: str,
    pg_cluster: PgCluster,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A forget commits, then the process dies before its erasure (here: the erasure
    does nothing, at the forget and at close): the dead rows still hold the text in the
    files, the erasure is owed, and the next start does it before serving."""
    url = db_path

    async def died(self: PostgresStore) -> bool:
        return False

    monkeypatch.setattr(PostgresStore, "erase_pending", died)
    first = start()
    with first.client(TOKEN) as client:
        ingest_ok(client, message_event("1", f"{CANARY} posted by mistake", author=AUTHOR),
                  message_event("2", "stays"))  # fmt: skip
        first.drain()
        response = client.post("/forget", json={"channel_id": "floor", "message_ids": ["1"]})
        assert response.json() == {"forgotten": 1}
    first.__exit__()
    assert tables_holding(url, CANARY) == {}  # no row: the forget itself is done
    assert sql(url, "SELECT count(*) FROM pending_erasures") == [(1,)]
    checkpoint(url)
    assert {"source_messages", "search_terms"} <= holding(
        database_files(url, pg_cluster.data_dir), CANARY
    )

    monkeypatch.undo()
    second = start()
    with second.client(TOKEN) as client:
        assert client.get("/health").status_code == 200
    assert sql(url, "SELECT count(*) FROM pending_erasures") == [(0,)]
    checkpoint(url)
    assert holding(database_files(url, pg_cluster.data_dir), CANARY) == set()


def test_a_table_the_forget_empties_keeps_its_old_statistics_sample(
    start: Callable[[], LiveServer], db_path: str, pg_cluster: PgCluster
) -> None:
    """Not guaranteed, and pinned here so that a change is noticed: ANALYZE replaces a
    table's statistics only from the rows it samples, so a table the forget leaves
    empty — or an expression index the forget leaves empty — keeps in ``pg_statistic``
    the values it sampled before (here the only message's search terms and words);
    every table that still has rows gets a sample without the forgotten text."""
    url = db_path
    server = start()
    with server.client(TOKEN) as client:
        ingest_ok(client, message_event("1", f"{CANARY} posted by mistake", author=AUTHOR))
        server.drain()
        sql(url, "ANALYZE")
        response = client.post("/forget", json={"channel_id": "floor", "message_ids": ["1"]})
        assert response.json() == {"forgotten": 1}
    assert tables_holding(url, CANARY) == {} and tables_holding(url, AUTHOR) == {}
    sampled = sql(
        url,
        "SELECT DISTINCT tablename FROM pg_stats WHERE schemaname = current_schema() "
        "AND concat(most_common_vals::text, histogram_bounds::text, "
        "most_common_elems::text) ~* $1",
        f"{CANARY}|{AUTHOR}",
    )
    stale = {table for (table,) in sampled}
    # the terms, and the literal-match index's words (a partial index: forgotten
    # versions are not in it, so it samples nothing either); source_messages keeps the
    # forgotten row, blanked, and gets a new sample without the text
    assert stale == {"search_terms", "source_messages_words"}
    for relation in stale:
        assert entries(url, relation) == 0, relation
    checkpoint(url)
    assert holding(database_files(url, pg_cluster.data_dir), CANARY) == {"pg_statistic"}
