"""The PostgreSQL backend: a database several replicas share (ADR 0030).

- **Writes** run in ``READ COMMITTED`` transactions that first take one
  transaction-level advisory lock, so write transactions are serialised across every
  process and host on the database, as SQLite's single writer serialises them: each
  write path reads what it needs and writes inside its transaction, and the result of
  concurrent batches is that of a serial order. Waiting for the lock is bounded by
  ``lock_timeout`` (``database_busy`` past it), as SQLite's ``busy_timeout``.
- **Reads** run in ``REPEATABLE READ READ ONLY`` transactions: one snapshot for every
  query of a request, from any replica, in parallel with the writer.
- **The schema** is created or migrated under a session advisory lock, so replicas
  starting together migrate once.
- **Erasure** after a forget: the forget blanks and deletes rows and index entries in
  its own transaction; the owed erasure then rewrites the tables that held content
  (``VACUUM FULL``), so no dead tuple keeps the text in the relation files.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from importlib import resources
from typing import Any, TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from channel_memory.store.connection import Connection, Params, Row
from channel_memory.store.database import (
    DatabaseUnavailable,
    DatabaseUnreachable,
    SchemaTooNew,
    StorageError,
    StorageFull,
    StorageLocked,
    StorageReadOnly,
    StorageUnavailable,
    Store,
    WriterBusy,
    failure_reason,
    migrations,
    redacted,
)
from channel_memory.store.postgres.dialect import DIALECT, PostgresDialect, translate

WRITE_LOCK = 0x636D_7772  # "cmwr": the one write lock, held for a write transaction
MIGRATE_LOCK = 0x636D_6D67  # "cmmg": held while the schema is created or migrated
LOCK_TIMEOUT_MS = 10_000
IDLE_IN_TRANSACTION_MS = 60_000
CONTENT_TABLES = (
    "source_messages",
    "recall_blocks",
    "search_terms",
    "llm_cache",
    # rows a forget deletes that name the forgotten versions' authors or content hashes
    "derived_messages",
    "block_sources",
    "llm_promotions",
    "consumed_versions",
    "consumption_read_versions",
)
"""The tables whose rows hold message text, terms of it, its authors or its versions'
content hashes: erasure rewrites them."""


def schema_sql() -> str:
    """The PostgreSQL DDL of the current schema version."""
    return (
        resources.files("channel_memory")
        .joinpath("store", "postgres", "schema.sql")
        .read_text(encoding="utf-8")
    )


def schema_version(sql: str) -> int:
    """The version the PostgreSQL schema script declares."""
    match = re.search(r"INSERT INTO channel_memory_schema \(version\) VALUES \((\d+)\)", sql)
    if match is None:
        raise ValueError("the PostgreSQL schema must insert its version")
    return int(match.group(1))


Raw: TypeAlias = "asyncpg.Connection | PoolConnectionProxy[Any]"
"""An asyncpg connection, pooled or not."""


class _Status:
    """How many rows a statement changed, read from its command tag."""

    def __init__(self, tag: str) -> None:
        last = tag.rsplit(" ", 1)[-1] if tag else ""
        self._rowcount = int(last) if last.isdigit() else -1

    @property
    def rowcount(self) -> int:
        return self._rowcount


def _arguments(parameters: Params, names: tuple[str, ...]) -> Sequence[Any]:
    if isinstance(parameters, Mapping):
        return [parameters[name] for name in names]
    return list(parameters)


class PostgresConnection:
    """An asyncpg connection as the store's :class:`Connection`."""

    def __init__(self, raw: Raw) -> None:
        self.raw = raw

    @property
    def dialect(self) -> PostgresDialect:
        return DIALECT

    async def execute(self, sql: str, parameters: Params = ()) -> _Status:
        text, names = translate(sql)
        return _Status(await self.raw.execute(text, *_arguments(parameters, names)))

    async def execute_fetchall(self, sql: str, parameters: Params = ()) -> Sequence[Row]:
        text, names = translate(sql)
        fetched = await self.raw.fetch(text, *_arguments(parameters, names))
        return [tuple(record) for record in fetched]

    async def executemany(self, sql: str, parameters: Iterable[Params]) -> None:
        text, names = translate(sql)
        rows = [_arguments(p, names) for p in parameters]
        if rows:
            await self.raw.executemany(text, rows)


def storage_error(exc: BaseException) -> StorageError | None:
    """The typed form of a PostgreSQL error that is about storage, not about the request."""
    if isinstance(exc, asyncpg.exceptions.DiskFullError | asyncpg.exceptions.OutOfMemoryError):
        return StorageFull()
    if isinstance(exc, asyncpg.exceptions.ReadOnlySQLTransactionError):
        return StorageReadOnly()
    if isinstance(exc, asyncpg.exceptions.LockNotAvailableError):
        return StorageLocked()
    if isinstance(
        exc,
        asyncpg.exceptions.PostgresConnectionError
        | asyncpg.exceptions.CannotConnectNowError
        | asyncpg.exceptions.TooManyConnectionsError
        | asyncpg.exceptions.AdminShutdownError
        | asyncpg.exceptions.CrashShutdownError
        | ConnectionError,
    ):
        return StorageUnavailable()
    return None


CONNECT_FAILURES = (OSError, ValueError, asyncpg.PostgresError, asyncpg.InterfaceError)
"""What connecting to a server can raise: refused, unreachable, its name unresolved, a
timeout (``OSError``), a malformed URL (``ValueError``), the server's own refusal."""


@contextmanager
def _typed_storage_errors() -> Iterator[None]:
    """A driver error about storage raised as its typed :class:`StorageError` (a full disk, a
    read-only transaction, a lock, a connection lost); any other as it was: an error of the
    caller's own (a bad argument count, a missing file) is no outage."""
    try:
        yield
    except (asyncpg.PostgresError, ConnectionError) as exc:
        typed = storage_error(exc)
        if typed is None:
            raise
        raise typed from exc


@asynccontextmanager
async def _connection(pool: asyncpg.Pool) -> AsyncIterator[Raw]:
    """A connection of ``pool``; failing to get one — the server stopped, its socket gone,
    its name unresolved, a timeout — is the server unreachable (:class:`StorageUnavailable`,
    or the typed error the server gave)."""
    try:
        raw = await pool.acquire()
    except CONNECT_FAILURES as exc:
        raise (storage_error(exc) or StorageUnavailable()) from exc
    try:
        yield raw
    finally:
        await pool.release(raw)


async def _init(raw: Raw) -> None:
    await raw.execute(f"SET lock_timeout = {LOCK_TIMEOUT_MS}")
    # a replica that hangs inside a transaction must not hold the write lock for good
    await raw.execute(f"SET idle_in_transaction_session_timeout = {IDLE_IN_TRANSACTION_MS}")


async def upgrade(
    raw: Raw, *, schema: str | None = None, steps: dict[int, str] | None = None
) -> int:
    """Create the schema on an empty database or apply pending migrations; returns the
    version. Holds the migration lock throughout, so concurrent starts migrate once."""
    schema = schema if schema is not None else schema_sql()
    steps = steps if steps is not None else migrations(backend="postgres")
    target = schema_version(schema)
    await raw.execute(f"SELECT pg_advisory_lock({MIGRATE_LOCK})")
    try:
        version = await _version(raw)
        if version == 0:
            async with raw.transaction():
                await raw.execute(schema)
            version = target
        if version > target:
            raise SchemaTooNew(f"database schema version {version} is newer than {target}")
        while version < target:
            step = steps.get(version + 1)
            if step is None:
                raise ValueError(f"no migration from schema version {version} to {version + 1}")
            async with raw.transaction():
                await raw.execute(step)
                await raw.execute("UPDATE channel_memory_schema SET version = $1", version + 1)
            version += 1
        return version
    finally:
        await raw.execute(f"SELECT pg_advisory_unlock({MIGRATE_LOCK})")


async def _version(raw: Raw) -> int:
    exists = await raw.fetchval("SELECT to_regclass('channel_memory_schema') IS NOT NULL")
    if not exists:
        return 0
    version = await raw.fetchval("SELECT version FROM channel_memory_schema")
    return int(version)


class PostgresStore(Store):
    """A channel-memory database in PostgreSQL."""

    backend = "postgres"

    def __init__(self, url: str, writer: asyncpg.Pool, readers: asyncpg.Pool) -> None:
        self.url = url
        self.location = redacted(url)
        self._writer = writer
        self._readers = readers
        self._write_lock = asyncio.Lock()

    @classmethod
    async def connect(cls, url: str, *, readers: int = 4) -> PostgresStore:
        """Connect to the database at ``url``, creating or migrating its schema."""
        # statements are prepared per connection and reused; a transaction pooler in
        # front (pgbouncer in transaction mode) needs statement_cache_size=0 in the URL
        try:
            writer = await asyncpg.create_pool(url, min_size=1, max_size=1, init=_init)
        except CONNECT_FAILURES as exc:
            # the server's own words (a refused password, a database that does not exist)
            # and a URL's parse error name no stored content; the URL is shown without its
            # password
            raise DatabaseUnreachable(
                f"cannot connect to the database at {redacted(url)} ({failure_reason(exc)})"
            ) from exc
        try:
            async with writer.acquire() as raw:
                await upgrade(raw)
            reader_pool = await asyncpg.create_pool(
                url, min_size=1, max_size=max(1, readers), init=_init
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            # a user without the right to create the schema, too many connections …
            await writer.close()
            raise DatabaseUnavailable(
                f"cannot open the database at {redacted(url)} ({failure_reason(exc)})"
            ) from exc
        except BaseException:
            await writer.close()
            raise
        store = cls(url, writer, reader_pool)
        try:
            await store.erase_pending()
        except BaseException:
            await store.close()
            raise
        return store

    async def close(self) -> None:
        try:
            await self.erase_pending()
        finally:
            await self._readers.close()
            await self._writer.close()

    async def erase_pending(self) -> bool:
        # the database lost part way (a forget's VACUUM) is an outage, not a 500
        with _typed_storage_errors():
            async with self._write_lock, _connection(self._writer) as raw:
                newest = await raw.fetchval("SELECT max(id) FROM pending_erasures")
                if newest is None:
                    return True
                # VACUUM FULL writes each table anew without its dead tuples (the forgotten
                # text) and rebuilds its indexes. ANALYZE replaces the values the planner's
                # statistics sampled from a table that still has rows (a table, or an
                # expression index, left empty keeps its old sample), and rewriting
                # pg_statistic drops the replaced samples (the database's owner may; for
                # another role the server skips it with a warning). None of it can run
                # inside a transaction.
                await raw.execute("VACUUM (FULL, ANALYZE) " + ", ".join(CONTENT_TABLES))
                await raw.execute("VACUUM (FULL) pg_statistic")
                await raw.execute("DELETE FROM pending_erasures WHERE id <= $1", newest)
                return True

    async def pending_erasures(self) -> int:
        async with self.read() as conn:
            ((count,),) = await conn.execute_fetchall("SELECT count(*) FROM pending_erasures")
            return int(count)

    @asynccontextmanager
    async def write(self, wait: float | None = None) -> AsyncIterator[Connection]:
        if self._write_lock.locked() and wait is not None:
            try:
                await asyncio.wait_for(self._write_lock.acquire(), timeout=wait)
            except TimeoutError:
                raise WriterBusy from None
        else:
            await self._write_lock.acquire()
        try:
            with _typed_storage_errors():
                async with _connection(self._writer) as raw, raw.transaction():
                    await raw.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK})")
                    yield PostgresConnection(raw)
        finally:
            self._write_lock.release()

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Connection]:
        with _typed_storage_errors():
            async with (
                _connection(self._readers) as raw,
                raw.transaction(isolation="repeatable_read", readonly=True),
            ):
                yield PostgresConnection(raw)
