"""The SQLite store: one serialised writer, a small pool of readers, the schema.

Durability (ADR 0002): WAL with ``synchronous=FULL``, so a transaction is on
disk before ``COMMIT`` returns and an acknowledged batch survives a crash.
Writes go through :meth:`Store.write` only: an asyncio lock serialises them in
this process and ``BEGIN IMMEDIATE`` against other processes (the CLI importer,
a separate worker), with ``busy_timeout`` to wait for each other.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path

import aiosqlite

from channel_memory.kernel.models import MessageKey
from channel_memory.store import erasure
from channel_memory.store.rows import one_row

BUSY_TIMEOUT_MS = 10_000

# aiosqlite logs every statement with its parameters at DEBUG: message content and
# query text would reach the logs of anyone running at debug level.
logging.getLogger("aiosqlite").setLevel(logging.INFO)

DeriveHook = Callable[[aiosqlite.Connection, Sequence[MessageKey], int], Awaitable[object]]
"""Derivation of blocks for some messages, run inside the caller's write transaction.

The worker provides it; ingest calls it for forgotten messages, so that no
block cites them once the forget returns (ingest never imports the worker).
"""
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


class WriterBusy(Exception):
    """The single writer stayed busy longer than the caller was willing to wait."""


class StorageError(Exception):
    """A write failed for a reason outside the request: nothing of it was written."""

    status = 503
    code = "storage_error"
    message = "the database could not be written; nothing was written"


class StorageFull(StorageError):
    """The disk (or the database's ``max_page_count``) is full."""

    status = 507
    code = "storage_full"
    message = "the database is out of space; nothing was written, retry once space is freed"


class StorageReadOnly(StorageError):
    """The database cannot be written (a read-only file, disk or connection)."""

    code = "storage_read_only"
    message = "the database is read-only; nothing was written"


class StorageLocked(StorageError):
    """Another process held a lock on the database longer than ``busy_timeout``."""

    code = "database_busy"
    message = "the database is locked by another process; retry shortly"


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


class SchemaTooNew(Exception):
    """The database was written by a newer channel-memory than this one."""


def schema_sql() -> str:
    """The canonical DDL: ``schema.sql`` inside the wheel, or at the source tree's top."""
    packaged = resources.files("channel_memory").joinpath("schema.sql")
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    return (Path(__file__).resolve().parents[2] / "schema.sql").read_text(encoding="utf-8")


def schema_version(sql: str) -> int:
    match = re.search(r"PRAGMA\s+user_version\s*=\s*(\d+)", sql)
    if match is None:
        raise ValueError("schema.sql must set PRAGMA user_version")
    return int(match.group(1))


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


def migrations(directory: Path | None = None) -> dict[int, str]:
    """Numbered migrations: ``{target_version: sql}``."""
    if directory is None:
        folder = resources.files("channel_memory").joinpath("store", "migrations")
        entries = [(entry.name, entry) for entry in folder.iterdir()]
    else:
        entries = [(entry.name, entry) for entry in directory.iterdir()]
    found: dict[int, str] = {}
    for name, entry in entries:
        match = _MIGRATION_NAME.match(name)
        if match:
            found[int(match.group(1))] = entry.read_text(encoding="utf-8")
    return dict(sorted(found.items()))


async def _configure(conn: aiosqlite.Connection, *, writer: bool) -> None:
    await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    await conn.execute("PRAGMA foreign_keys = ON")
    if writer:
        await conn.execute("PRAGMA journal_mode = WAL")
        await conn.execute("PRAGMA synchronous = FULL")
        await conn.execute("PRAGMA secure_delete = ON")
    else:
        await conn.execute("PRAGMA query_only = ON")


async def _user_version(conn: aiosqlite.Connection) -> int:
    (version,) = await one_row(conn, "PRAGMA user_version")
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


class Store:
    """A channel-memory database: open it with :meth:`open`, always :meth:`close` it."""

    def __init__(self, path: Path, writer: aiosqlite.Connection) -> None:
        self.path = path
        self._writer = writer
        self._write_lock = asyncio.Lock()
        self._readers: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._all_readers: list[aiosqlite.Connection] = []

    @classmethod
    async def open(cls, path: Path | str, *, readers: int = 4) -> Store:
        """Open (creating or upgrading) the database at ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        writer = await aiosqlite.connect(path, isolation_level=None)
        try:
            await _configure(writer, writer=True)
            await upgrade(writer)
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
        """Complete owed physical erasures; False when one must be retried later."""
        async with self.maintenance() as conn:
            return await erasure.erase(conn)

    async def pending_erasures(self) -> int:
        async with self.read() as conn:
            return await erasure.pending_erasures(conn)

    @asynccontextmanager
    async def write(self, wait: float | None = None) -> AsyncIterator[aiosqlite.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction on the single writer, committed on success.

        ``wait`` bounds the time spent queueing for the writer (``None``: no
        bound); past it ``WriterBusy`` is raised and nothing is written.
        """
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
                    yield self._writer
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
    async def read(self) -> AsyncIterator[aiosqlite.Connection]:
        """A reader connection from the pool, in a read transaction: every query inside sees
        the same snapshot, so counts and the rows they count agree under concurrent writes."""
        conn = await self._readers.get()
        try:
            await conn.execute("BEGIN")
            yield conn
        finally:
            if conn.in_transaction:
                await conn.execute("ROLLBACK")
            self._readers.put_nowait(conn)
