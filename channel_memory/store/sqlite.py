"""The SQLite backend: one serialised writer, a small pool of readers, the schema.

Durability (ADR 0002): WAL with ``synchronous=FULL``, so a transaction is on
disk before ``COMMIT`` returns and an acknowledged batch survives a crash.
Writes go through :meth:`SqliteStore.write` only: an asyncio lock serialises them in
this process and ``BEGIN IMMEDIATE`` against other processes (the CLI importer,
a separate worker, the other ``serve --workers``), with ``busy_timeout`` to wait for
each other.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path

import aiosqlite

from channel_memory.store.connection import Connection, Params, Result, Row
from channel_memory.store.database import (
    DatabaseUnavailable,
    SchemaTooNew,
    StorageError,
    StorageFull,
    StorageLocked,
    StorageReadOnly,
    Store,
    WriterBusy,
    failure_reason,
    migrations,
    schema_version,
)
from channel_memory.store.rows import one_row
from channel_memory.store.terms import doc_length, fold, index_text

BUSY_TIMEOUT_MS = 10_000

# aiosqlite logs every statement with its parameters at DEBUG: message content and
# query text would reach the logs of anyone running at debug level.
logging.getLogger("aiosqlite").setLevel(logging.INFO)

_SQLITE_FULL, _SQLITE_READONLY, _SQLITE_BUSY, _SQLITE_LOCKED = 13, 8, 5, 6


def storage_error(exc: sqlite3.Error) -> StorageError | None:
    """The typed form of an SQLite error that is about storage, not about the request."""
    code = getattr(exc, "sqlite_errorcode", -1) & 0xFF
    if code == _SQLITE_FULL:
        return StorageFull()
    if code == _SQLITE_READONLY:
        return StorageReadOnly()
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return StorageLocked()
    return None


def schema_sql() -> str:
    """The canonical DDL: ``schema.sql`` inside the wheel, or at the source tree's top."""
    packaged = resources.files("channel_memory").joinpath("schema.sql")
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    return (Path(__file__).resolve().parents[2] / "schema.sql").read_text(encoding="utf-8")


def split_statements(script: str) -> list[str]:
    """Split an SQL script into complete statements (trigger bodies included)."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statement = buffer.strip()
            if statement and not all(
                part.strip().startswith("--") or not part.strip() for part in statement.splitlines()
            ):
                statements.append(statement)
            buffer = ""
    if buffer.strip() and not all(
        p.strip().startswith("--") or not p.strip() for p in buffer.splitlines()
    ):
        raise ValueError("SQL script ends with an incomplete statement")
    return statements


class SqliteConnection:
    """An aiosqlite connection as the store's :class:`Connection`: SQL runs as written."""

    def __init__(self, raw: aiosqlite.Connection) -> None:
        self.raw = raw

    @property
    def dialect(self) -> SqliteDialect:
        return DIALECT

    async def execute(self, sql: str, parameters: Params = ()) -> Result:
        return await self.raw.execute(sql, parameters)

    async def execute_fetchall(self, sql: str, parameters: Params = ()) -> Sequence[Row]:
        return list(await self.raw.execute_fetchall(sql, parameters))

    async def executemany(self, sql: str, parameters: Iterable[Params]) -> None:
        await self.raw.executemany(sql, parameters)


def _fts_match(phrases: Sequence[str]) -> str:
    """An FTS5 query holding every phrase (each a space-separated run of index terms)."""
    return " ".join('"' + phrase.replace('"', '""') + '"' for phrase in phrases)


class SqliteDialect:
    """FTS5: ``source_fts`` and ``block_fts`` for literal matches (unicode61), the
    contentless ``search_index`` (porter) for the ranked search, kept by triggers. Each
    is given a document's ``index_text`` (runs written without spaces cut into pieces),
    never its raw text."""

    name = "sqlite"

    def source_match(self) -> str:
        return "id IN (SELECT rowid FROM source_fts WHERE source_fts MATCH ?)"

    def block_match(self) -> str:
        return "seq IN (SELECT rowid FROM block_fts WHERE block_fts MATCH ?)"

    def match_parameter(self, words: Sequence[str]) -> str:
        return _fts_match(words)

    async def index_source_text(
        self,
        conn: Connection,
        removed: Sequence[tuple[int, str]],
        added: Sequence[tuple[int, str]],
    ) -> None:
        if removed:
            await conn.executemany(
                "INSERT INTO source_fts (source_fts, rowid, content) VALUES ('delete', ?, ?)",
                [(rowid, index_text(text)) for rowid, text in removed],
            )
        if added:
            await conn.executemany(
                "INSERT INTO source_fts (rowid, content) VALUES (?, ?)",
                [(rowid, index_text(text)) for rowid, text in added],
            )

    async def unindex_expired_sources(self, conn: Connection, cutoff_us: int) -> None:
        await conn.execute(
            "INSERT INTO source_fts (source_fts, rowid, content) "
            "SELECT 'delete', id, cm_index_text(content) "
            "FROM source_messages WHERE is_current = 1 AND deleted = 0 AND forgotten_us IS NULL "
            "AND created_us < ?",
            (cutoff_us,),
        )

    async def index_block_text(self, conn: Connection, added: Sequence[tuple[int, str]]) -> None:
        if added:
            await conn.executemany(
                "INSERT INTO block_fts (rowid, text) VALUES (?, ?)",
                [(rowid, index_text(text)) for rowid, text in added],
            )

    async def unindex_block_text(self, conn: Connection, seqs: Sequence[int]) -> None:
        await conn.execute(
            "DELETE FROM block_fts WHERE rowid IN (SELECT value FROM json_each(?))",
            (_json_list(seqs),),
        )

    async def postings(
        self, conn: Connection, parts: Sequence[str], first: int, last: int, limit: int
    ) -> list[int]:
        fetched = await conn.execute_fetchall(
            "SELECT rowid FROM search_index WHERE search_index MATCH ? "
            "AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?",
            (_fts_match(parts), first, last, limit),
        )
        return [int(rowid) for (rowid,) in fetched]

    async def span(self, conn: Connection, first: int, last: int) -> tuple[int, int] | None:
        bounds: list[int] = []
        for order in ("ASC", "DESC"):
            fetched = await conn.execute_fetchall(
                "SELECT rowid FROM search_index WHERE rowid BETWEEN ? AND ? "
                f"ORDER BY rowid {order} LIMIT 1",
                (first, last),
            )
            if not fetched:
                return None
            bounds.append(int(fetched[0][0]))
        return bounds[0], bounds[1]

    async def advance_identity(self, conn: Connection, table: str, column: str) -> None:
        """Nothing to do: an explicit id above ``sqlite_sequence`` moves it up by itself."""


DIALECT = SqliteDialect()


def _json_list(values: Iterable[int]) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


FUNCTIONS: dict[str, Callable[[str | None], str | int | None]] = {
    "cm_index_text": lambda text: None if text is None else index_text(str(text)),
    "cm_length": lambda text: None if text is None else doc_length(str(text)),
    "cm_fold": lambda text: None if text is None else fold(str(text)),
}
"""Functions the schema and the store's SQL call, defined on every connection:
``cm_index_text`` and ``cm_length`` (the relevance index's triggers, migration 9) and
``cm_fold`` (the author filter: lower case, diacritics and width folded as search folds
words — SQLite's ``lower()`` lowers ASCII only). PostgreSQL's schema defines the same."""


def register_functions(conn: sqlite3.Connection) -> None:
    """Define ``FUNCTIONS`` on a plain ``sqlite3`` connection: a program other than the
    store that writes messages or blocks needs them (the triggers call them)."""
    for name, function in FUNCTIONS.items():
        conn.create_function(name, 1, function, deterministic=True)


async def define_functions(conn: aiosqlite.Connection) -> None:
    """Define ``FUNCTIONS`` on a store connection (before any statement runs on it)."""
    for name, function in FUNCTIONS.items():
        await conn.create_function(name, 1, function, deterministic=True)


async def _configure(conn: aiosqlite.Connection, *, writer: bool) -> None:
    await define_functions(conn)
    await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    await conn.execute("PRAGMA foreign_keys = ON")
    if writer:
        await conn.execute("PRAGMA journal_mode = WAL")
        await conn.execute("PRAGMA synchronous = FULL")
        await conn.execute("PRAGMA secure_delete = ON")
    else:
        await conn.execute("PRAGMA query_only = ON")


async def _user_version(conn: aiosqlite.Connection) -> int:
    (version,) = await one_row(SqliteConnection(conn), "PRAGMA user_version")
    return int(version)


async def upgrade(
    conn: aiosqlite.Connection, *, schema: str | None = None, steps: dict[int, str] | None = None
) -> int:
    """Create the schema on an empty database or apply pending migrations; returns the version.

    Raises ``SchemaTooNew`` when the database is ahead of this code.
    """
    schema = schema if schema is not None else schema_sql()
    steps = steps if steps is not None else migrations()
    target = schema_version(schema)
    await conn.execute("BEGIN IMMEDIATE")
    try:
        version = await _user_version(conn)
        if version == 0:
            for statement in split_statements(schema):
                await conn.execute(statement)
            version = target
        await conn.execute("COMMIT")
    except BaseException:
        await conn.execute("ROLLBACK")
        raise
    if version > target:
        raise SchemaTooNew(f"database schema version {version} is newer than {target}")
    while version < target:
        step = steps.get(version + 1)
        if step is None:
            raise ValueError(f"no migration from schema version {version} to {version + 1}")
        await conn.execute("BEGIN IMMEDIATE")
        try:
            if await _user_version(conn) == version:
                for statement in split_statements(step):
                    await conn.execute(statement)
                await conn.execute(f"PRAGMA user_version = {version + 1}")
            await conn.execute("COMMIT")
        except BaseException:
            await conn.execute("ROLLBACK")
            raise
        version = await _user_version(conn)
    return version


async def erase(conn: aiosqlite.Connection) -> bool:
    """Run the owed erasure on the writer connection (outside any transaction).

    ``secure_delete`` zeroes the freed cells and pages of the blanked rows; what can
    remain is (1) the full-text indexes' old segments (sources, block text and the
    relevance index), which still hold the terms until they are merged, and (2) the
    old page images in the WAL file. Erasure merges the indexes (``optimize``) and
    checkpoints with ``TRUNCATE``. Returns True when nothing is owed any more, False
    when the checkpoint could not complete (a reader held an old snapshot) and it must
    be retried.
    """
    wrapped = SqliteConnection(conn)
    (newest,) = await one_row(wrapped, "SELECT max(id) FROM pending_erasures")
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
    if not await _checkpoint(wrapped):
        return False
    await conn.execute("DELETE FROM pending_erasures WHERE id <= ?", (newest,))
    return await _checkpoint(wrapped)


async def _checkpoint(conn: Connection) -> bool:
    busy, _log_frames, _checkpointed = await one_row(conn, "PRAGMA wal_checkpoint(TRUNCATE)")
    return int(busy) == 0


def _unavailable(path: Path, exc: BaseException) -> DatabaseUnavailable:
    return DatabaseUnavailable(f"cannot open the database at {path} ({failure_reason(exc)})")


class SqliteStore(Store):
    """A channel-memory database in one SQLite file."""

    backend = "sqlite"

    def __init__(self, path: Path, writer: aiosqlite.Connection) -> None:
        self.path = path
        self.location = str(path)
        self._writer = writer
        self._write_lock = asyncio.Lock()
        self._readers: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._all_readers: list[aiosqlite.Connection] = []

    @classmethod
    async def connect(cls, path: Path, *, readers: int = 4) -> SqliteStore:
        """Open (creating or upgrading) the database at ``path``."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            writer = await aiosqlite.connect(path, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise _unavailable(path, exc) from exc
        try:
            await _configure(writer, writer=True)
            await upgrade(writer)
        except (OSError, sqlite3.Error) as exc:
            await writer.close()
            raise _unavailable(path, exc) from exc
        except BaseException:
            await writer.close()
            raise
        store = cls(path, writer)
        try:
            for _ in range(readers):
                reader = await aiosqlite.connect(path, isolation_level=None)
                store._all_readers.append(reader)
                await _configure(reader, writer=False)
                store._readers.put_nowait(reader)
            await store.erase_pending()
        except BaseException:
            await store.close()
            raise
        return store

    async def close(self) -> None:
        """Finish owed erasures, then close every connection.

        aiosqlite's threads are not daemons: an unclosed store keeps the process alive.
        """
        for reader in self._all_readers:
            await reader.close()
        self._all_readers.clear()
        try:
            await self.erase_pending()
        finally:
            await self._writer.close()

    async def erase_pending(self) -> bool:
        async with self.maintenance() as conn:
            return await erase(conn)

    async def pending_erasures(self) -> int:
        async with self.read() as conn:
            (count,) = await one_row(conn, "SELECT count(*) FROM pending_erasures")
            return int(count)

    @asynccontextmanager
    async def write(self, wait: float | None = None) -> AsyncIterator[Connection]:
        """A ``BEGIN IMMEDIATE`` transaction on the single writer, committed on success."""
        if self._write_lock.locked() and wait is not None:
            try:
                await asyncio.wait_for(self._write_lock.acquire(), timeout=wait)
            except TimeoutError:
                raise WriterBusy from None
        else:
            await self._write_lock.acquire()
        try:
            try:
                await self._writer.execute("BEGIN IMMEDIATE")
                try:
                    yield SqliteConnection(self._writer)
                    await self._writer.execute("COMMIT")
                except BaseException:
                    if self._writer.in_transaction:
                        await self._writer.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                typed = storage_error(exc)
                if typed is None:
                    raise
                raise typed from exc
        finally:
            self._write_lock.release()

    @asynccontextmanager
    async def maintenance(self) -> AsyncIterator[aiosqlite.Connection]:
        """The writer connection outside a transaction (checkpoints, index merges)."""
        async with self._write_lock:
            yield self._writer

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Connection]:
        """A reader connection from the pool, in a read transaction: every query inside sees
        the same snapshot, so counts and the rows they count agree under concurrent writes."""
        conn = await self._readers.get()
        try:
            await conn.execute("BEGIN")
            yield SqliteConnection(conn)
        finally:
            if conn.in_transaction:
                await conn.execute("ROLLBACK")
            self._readers.put_nowait(conn)
