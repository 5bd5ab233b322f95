"""Copy a store into another database, SQLite or PostgreSQL on either side
(``channel-memory copy SRC DST``).

What moves is what cannot be recomputed: every version of every message (deletions and
forgotten, blanked rows included), the forget ledger and the forgotten identities, coverage
gaps, channels and their retention, the LLM cache and spend, the consumption ledger, and
``worker_state`` (the cursor and read-id secrets, so cursors, ``read_id``s and ``ETag``s
stay valid). Ids are kept. What is derived does not move: every message is queued in the
destination's ``dirty_messages`` and the worker derives the blocks again — derivation is
deterministic, so they come out with the same ids and text. The search indexes are filled
by the destination's own triggers and index upkeep as rows arrive.

- **The source is only read**: SQLite through ``sqlite-utils`` on a read-only connection,
  PostgreSQL in one ``REPEATABLE READ READ ONLY`` transaction; each run reads one snapshot.
- **The destination is written by the store** (:meth:`Store.write`), so its schema,
  triggers and generated ids are the store's own. It must be empty, or a copy of the same
  source left unfinished: ``worker_state`` holds the copy's record (:data:`RECORD_KEY`).
- **Resumable**: each table moves in chunks ordered by its primary key, one transaction
  per chunk; a run continues after the highest key the destination already holds.
- **Verified**: every copied table's rows are counted and digested on both sides (an
  order-independent sum of each row's SHA-256); the copy is finished only when they agree.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO
from urllib.request import pathname2url

from channel_memory.kernel.timefmt import Clock, wall_clock
from channel_memory.store import dirty
from channel_memory.store.connection import Connection
from channel_memory.store.database import (
    DatabaseUnavailable,
    SchemaTooNew,
    StorageError,
    Store,
    failure_reason,
    is_postgres_url,
    redacted,
    schema_version,
)
from channel_memory.store.state import get_state, set_state

if TYPE_CHECKING:
    import asyncpg
    from asyncpg.transaction import Transaction
    from sqlite_utils import Database

RECORD_KEY = "copy_source"
"""The ``worker_state`` key of a destination's copy record: the source and the state."""
CHUNK_ROWS = 1_000
_DIGEST_MODULUS = 1 << 256

Row = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Table:
    """A table that moves: its primary key orders the chunks.

    ``identity``: a generated key column, to continue after the copied ids. ``where``: which
    rows move (a condition on the table, the same on both sides). ``order``: copy the table
    whole, in one transaction, in this order instead of the key's.
    """

    name: str
    key: tuple[str, ...]
    identity: str | None = None
    where: str | None = None
    order: str | None = None


TABLES: tuple[Table, ...] = (
    # in the source's search slot order, so each channel keeps its slot (the ranked
    # search's keys, and its ties, are the same on both sides)
    Table(
        "channels",
        ("channel_id",),
        order="(SELECT slot FROM search_channels AS s WHERE s.channel_id = channels.channel_id)"
        ", channel_id",
    ),
    Table("channel_retention", ("channel_id",)),
    Table("source_messages", ("id",)),
    # before the consumption ledger: a forgotten identity's trigger clears its rows there
    Table("forgotten_messages", ("source_kind", "channel_id", "message_id")),
    Table("forget_ledger", ("id",), identity="id"),
    Table("coverage_gaps", ("id",), identity="id"),
    Table("llm_cache", ("key",)),
    Table("llm_cache_sources", ("cache_key", "message_id")),
    Table("llm_usage", ("day_us", "channel_id")),
    Table("llm_promotions", ("channel_id", "message_id", "content_hash")),
    Table("consumption_reads", ("read_id",)),
    Table("consumption_read_versions", ("read_id", "channel_id", "message_id", "content_hash")),
    Table("consumed_versions", ("id",), identity="id"),
    Table("worker_state", ("key",), where=f"\"key\" <> '{RECORD_KEY}'"),
)
"""Every table that moves, in the order they are written (a referenced table first)."""

DERIVED_TABLES = (
    "recall_blocks",
    "block_sources",
    "derived_messages",
    "dirty_messages",
    "pending_erasures",
    "worker_lease",
)
"""Tables that do not move, but must be empty in a destination a copy starts in."""


class CopyRefused(Exception):
    """The copy cannot start: nothing was written. The message names no content."""


class CopyFailed(Exception):
    """Writing a chunk failed; what was committed before stays, a new run resumes."""

    def __init__(self, table: str, cause: BaseException) -> None:
        super().__init__(f"copying {table} failed ({type(cause).__name__})")
        self.table = table


# --- pure parts --------------------------------------------------------------------------------


def quoted(name: str) -> str:
    """An identifier as both backends read it, whatever words it shares with SQL."""
    return '"' + name.replace('"', '""') + '"'


def selection(columns: Sequence[str]) -> str:
    return ", ".join(quoted(c) for c in columns)


def page(table: Table, after: Row | None) -> tuple[str | None, list[Any]]:
    """The WHERE condition (None: every row) and its parameters for the rows of ``table``
    that move and come after the key ``after``."""
    conditions: list[str] = [table.where] if table.where else []
    parameters: list[Any] = []
    if after is not None:
        placeholders = ", ".join("?" for _ in table.key)
        conditions.append(f"({selection(table.key)}) > ({placeholders})")
        parameters.extend(after)
    return (" AND ".join(conditions) or None), parameters


def key_order(table: Table, *, descending: bool = False) -> str:
    direction = " DESC" if descending else ""
    return ", ".join(quoted(c) + direction for c in table.key)


def select_sql(
    table: Table, columns: Sequence[str], where: str | None, order: str, limit: int | None
) -> str:
    sql = f"SELECT {selection(columns)} FROM {table.name}"
    if where:
        sql += f" WHERE {where}"
    sql += f" ORDER BY {order}"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return sql


def insert_sql(table: Table, columns: Sequence[str]) -> str:
    placeholders = ", ".join("?" for _ in columns)
    return f"INSERT INTO {table.name} ({selection(columns)}) VALUES ({placeholders})"


def key_of(table: Table, columns: Sequence[str], row: Row) -> Row:
    return tuple(row[columns.index(name)] for name in table.key)


def row_digest(row: Row) -> int:
    """One row's SHA-256 as an integer: its values as compact JSON (integers, floats by
    their shortest repr, text, null), the same bytes from either backend."""
    text = json.dumps(list(row), ensure_ascii=False, separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest(), "big")


@dataclass(slots=True)
class Tally:
    """A table's rows, counted and digested: the digest is the sum of the rows' digests
    modulo 2**256 — independent of order, and a repeated row counts twice."""

    rows: int = 0
    digest: int = 0

    def add(self, rows: Sequence[Row]) -> None:
        self.rows += len(rows)
        self.digest = (self.digest + sum(row_digest(r) for r in rows)) % _DIGEST_MODULUS

    @property
    def hex(self) -> str:
        return f"{self.digest:064x}"


@dataclass(frozen=True, slots=True)
class TableCheck:
    table: str
    source: Tally
    copy: Tally

    @property
    def ok(self) -> bool:
        return (self.source.rows, self.source.digest) == (self.copy.rows, self.copy.digest)


@dataclass(frozen=True, slots=True)
class Verification:
    """Each copied table on both sides; ``ok`` when every table agrees."""

    tables: tuple[TableCheck, ...]
    copied: int = 0
    resumed: bool = False

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.tables)

    def render(self) -> str:
        """The verification as a table, one line per copied table, and a verdict."""
        lines = [f"{'table':<26} {'source':>9} {'copy':>9}  {'digest':<12}  result"]
        for check in self.tables:
            same_digest = check.source.digest == check.copy.digest
            digest = check.source.hex[:12] if same_digest else "differs"
            result = "ok" if check.ok else "MISMATCH"
            lines.append(
                f"{check.table:<26} {check.source.rows:>9} {check.copy.rows:>9}  "
                f"{digest:<12}  {result}"
            )
        rows = sum(check.source.rows for check in self.tables)
        if self.ok:
            lines.append(
                f"verified: the copy holds the source's {rows} rows in {len(self.tables)} "
                "tables; the worker derives the blocks when it next runs on it"
            )
        else:
            bad = ", ".join(check.table for check in self.tables if not check.ok)
            lines.append(f"NOT verified: the copy differs from its source in {bad}")
        return "\n".join(lines)


class Progress(Protocol):
    """Told how many rows there are to copy, then of every chunk committed."""

    def start(self, total: int, done: int) -> None: ...

    def advance(self, table: str, rows: int) -> None: ...


class NoProgress:
    def start(self, total: int, done: int) -> None:
        pass

    def advance(self, table: str, rows: int) -> None:
        pass


# --- reading: the source (read-only) and the destination ----------------------------------------


class Reader(Protocol):
    """Rows of one snapshot of a database, in the store's SQL."""

    async def rows(
        self, table: Table, columns: Sequence[str], after: Row | None, limit: int | None
    ) -> list[Row]: ...

    async def count(self, table: Table) -> int: ...


class ConnectionReader:
    """Reads through a store :class:`Connection` (a PostgreSQL source, the destination)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    async def rows(
        self, table: Table, columns: Sequence[str], after: Row | None, limit: int | None
    ) -> list[Row]:
        where, parameters = page(table, after)
        order = table.order if after is None and limit is None and table.order else None
        sql = select_sql(table, columns, where, order or key_order(table), limit)
        return [tuple(row) for row in await self.conn.execute_fetchall(sql, parameters)]

    async def count(self, table: Table) -> int:
        where, parameters = page(table, None)
        sql = f"SELECT count(*) FROM {table.name}" + (f" WHERE {where}" if where else "")
        ((count,),) = await self.conn.execute_fetchall(sql, parameters)
        return int(count)

    async def last_key(self, table: Table) -> Row | None:
        where, parameters = page(table, None)
        sql = select_sql(table, table.key, where, key_order(table, descending=True), 1)
        fetched = await self.conn.execute_fetchall(sql, parameters)
        return tuple(fetched[0]) if fetched else None


class Source(Protocol):
    """A store opened only to be read, on one snapshot until :meth:`close`."""

    identity: str
    """Names the source in the destination's copy record (never a password)."""
    reader: Reader

    def columns(self, table: Table) -> list[str]: ...

    async def close(self) -> None: ...


class SqliteSource:
    """An SQLite store read with ``sqlite-utils`` on a read-only connection."""

    def __init__(self, path: Path, db: Database, columns: dict[str, list[str]]) -> None:
        self.identity = str(path)
        self._db = db
        self._columns = columns
        self.reader: Reader = self

    @classmethod
    async def open(cls, path: Path) -> SqliteSource:
        return await asyncio.to_thread(cls._open, path)

    @classmethod
    def _open(cls, path: Path) -> SqliteSource:
        from sqlite_utils import Database

        from channel_memory.store.sqlite import schema_sql

        path = path.resolve()
        if not path.is_file():
            raise CopyRefused(f"the source {path} does not exist")
        # read-only: a copy never writes its source (nor migrates it, nor finishes its
        # erasures); the connection is used from one worker thread at a time
        raw = sqlite3.connect(
            f"file:{pathname2url(str(path))}?mode=ro", uri=True, check_same_thread=False
        )
        try:
            db = Database(raw, recursive_triggers=False, execute_plugins=False)
            (version,) = db.execute("PRAGMA user_version").fetchone()
            _check_version(str(path), int(version), schema_version(schema_sql()))
            missing = [t.name for t in TABLES if not db.table(t.name).exists()]
            if missing:
                raise CopyRefused(f"the source {path} has no table {missing[0]}")
            columns = {t.name: [c.name for c in db.table(t.name).columns] for t in TABLES}
            db.begin()  # one snapshot for the whole run (WAL: writers go on meanwhile)
        except BaseException:
            raw.close()
            raise
        return cls(path, db, columns)

    def columns(self, table: Table) -> list[str]:
        return self._columns[table.name]

    async def rows(
        self, table: Table, columns: Sequence[str], after: Row | None, limit: int | None
    ) -> list[Row]:
        return await asyncio.to_thread(self._rows, table, columns, after, limit)

    def _rows(
        self, table: Table, columns: Sequence[str], after: Row | None, limit: int | None
    ) -> list[Row]:
        where, parameters = page(table, after)
        order = table.order if after is None and limit is None and table.order else None
        found = self._db.table(table.name).rows_where(
            where=where,
            where_args=parameters,
            order_by=order or key_order(table),
            select=selection(columns),
            limit=limit,
        )
        return [tuple(row[c] for c in columns) for row in found]

    async def count(self, table: Table) -> int:
        where, parameters = page(table, None)
        counted = await asyncio.to_thread(self._db.table(table.name).count_where, where, parameters)
        return int(counted)

    async def close(self) -> None:
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        self._db.rollback()
        self._db.close()


class PostgresSource:
    """A PostgreSQL store read in one ``REPEATABLE READ READ ONLY`` transaction."""

    def __init__(
        self,
        url: str,
        raw: asyncpg.Connection,
        transaction: Transaction,
        columns: dict[str, list[str]],
    ) -> None:
        self.identity = redacted(url)
        self._raw = raw
        self._transaction = transaction
        self._columns = columns
        from channel_memory.store.postgres.database import PostgresConnection

        self.reader: Reader = ConnectionReader(PostgresConnection(raw))

    @classmethod
    async def open(cls, url: str) -> PostgresSource:
        import asyncpg

        from channel_memory.store.postgres.database import CONNECT_FAILURES, schema_sql
        from channel_memory.store.postgres.database import schema_version as pg_version

        try:
            raw = await asyncpg.connect(url)
        except CONNECT_FAILURES as exc:
            # refused at the start, as every command refuses a database it cannot reach
            raise CopyRefused(
                f"cannot connect to the source {redacted(url)} ({failure_reason(exc)})"
            ) from exc
        try:
            transaction = raw.transaction(isolation="repeatable_read", readonly=True)
            await transaction.start()
            if not await raw.fetchval("SELECT to_regclass('channel_memory_schema') IS NOT NULL"):
                raise CopyRefused(f"the source {redacted(url)} holds no channel-memory store")
            version = int(await raw.fetchval("SELECT version FROM channel_memory_schema"))
            _check_version(redacted(url), version, pg_version(schema_sql()))
            fetched = await raw.fetch(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
            )
            found: dict[str, list[str]] = {}
            for record in fetched:
                found.setdefault(str(record[0]), []).append(str(record[1]))
            missing = [t.name for t in TABLES if t.name not in found]
            if missing:
                raise CopyRefused(f"the source {redacted(url)} has no table {missing[0]}")
            columns = {t.name: found[t.name] for t in TABLES}
        except BaseException:
            await raw.close()
            raise
        return cls(url, raw, transaction, columns)

    def columns(self, table: Table) -> list[str]:
        return self._columns[table.name]

    async def close(self) -> None:
        try:
            await self._transaction.rollback()
        finally:
            await self._raw.close()


def _check_version(where: str, version: int, expected: int) -> None:
    if version > expected:
        raise CopyRefused(
            f"the source {where} has schema version {version}, newer than this "
            f"channel-memory's {expected}: copy it with the newer version"
        )
    if version < expected:
        raise CopyRefused(
            f"the source {where} has schema version {version}, older than {expected}: open it "
            "once with this channel-memory (e.g. `channel-memory worker --once --db SRC`) so "
            "it is migrated, then copy it"
        )


def identity_of(target: str | Path) -> str:
    """How a copy record names a database: a resolved path, or a URL without password."""
    return redacted(target) if is_postgres_url(target) else str(Path(target).resolve())


async def open_source(target: str | Path) -> Source:
    """Open a store to copy from, read-only: a path or a ``postgresql://`` URL."""
    if is_postgres_url(target):
        return await PostgresSource.open(str(target))
    return await SqliteSource.open(Path(target))


# --- the copy ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Run:
    source: Source
    dest: Store
    chunk_rows: int
    progress: Progress
    copied: int = 0
    columns: dict[str, list[str]] = field(default_factory=dict)


async def copy_store(
    source_target: str | Path,
    dest_target: str | Path,
    *,
    chunk_rows: int = CHUNK_ROWS,
    progress: Progress | None = None,
    clock: Clock = wall_clock,
) -> Verification:
    """Copy the store at ``source_target`` into ``dest_target`` (created when it is a path
    that does not exist yet), or finish a copy of the same source left there unfinished;
    then verify both sides. A destination already holding a finished copy of this source
    is verified only.

    Raises :class:`CopyRefused` (nothing written) for a source that is missing, not a
    store or of another schema version, a destination that is the source, is not empty,
    or holds a copy of another source; :class:`CopyFailed` when a chunk cannot be written.
    The copy record in the destination is marked finished only when the verification
    agrees.
    """
    if identity_of(source_target) == identity_of(dest_target):
        raise CopyRefused("the source and the destination are the same database")
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be at least 1")
    source = await open_source(source_target)
    try:
        try:
            dest = await Store.open(dest_target)
        except SchemaTooNew as exc:
            raise CopyRefused(f"the destination {redacted(dest_target)}: {exc}") from None
        try:
            run = _Run(source, dest, chunk_rows, progress or NoProgress())
            for table in TABLES:
                run.columns[table.name] = source.columns(table)
            state = await _claim(dest, source.identity)
            if state == "done":
                return await verify(run)
            await _copy_tables(run)
            async with dest.write() as conn:
                for table in TABLES:
                    if table.identity is not None:
                        await conn.dialect.advance_identity(conn, table.name, table.identity)
                await dirty.mark_all(conn, clock())
            verification = await verify(run, resumed=state == "resume")
            if verification.ok:
                async with dest.write() as conn:
                    await set_state(conn, RECORD_KEY, _record(source.identity, "done"))
            return verification
        finally:
            await dest.close()
    finally:
        await source.close()


def _record(identity: str, state: str) -> str:
    return json.dumps({"source": identity, "state": state}, separators=(",", ":"))


async def _claim(dest: Store, identity: str) -> str:
    """Start a copy in an empty destination (``"new"``), or find this source's copy there
    (``"resume"`` or ``"done"``); refuse anything else."""
    async with dest.write() as conn:
        known = await get_state(conn, RECORD_KEY)
        if known is None:
            for name in [t.name for t in TABLES] + list(DERIVED_TABLES):
                if await conn.execute_fetchall(f"SELECT 1 FROM {name} LIMIT 1"):
                    raise CopyRefused(
                        f"the destination {dest.location} is not empty (its {name} has "
                        "rows): copy into a new or empty database"
                    )
            await set_state(conn, RECORD_KEY, _record(identity, "copying"))
            return "new"
        record = json.loads(known)
        if record.get("source") != identity:
            raise CopyRefused(
                f"the destination {dest.location} holds a copy of another store "
                f"({record.get('source')}), not of {identity}"
            )
        return "done" if record.get("state") == "done" else "resume"


async def _copy_tables(run: _Run) -> None:
    dest_counts: dict[str, int] = {}
    total = 0
    async with run.dest.read() as conn:
        here = ConnectionReader(conn)
        for table in TABLES:
            dest_counts[table.name] = await here.count(table)
            total += await run.source.reader.count(table)
    run.progress.start(total, sum(dest_counts.values()))
    for table in TABLES:
        columns = run.columns[table.name]
        if table.order is not None:
            if dest_counts[table.name]:
                continue  # written whole, in one transaction: there already
            rows = await run.source.reader.rows(table, columns, None, None)
            await _write(run, table, columns, rows)
            continue
        async with run.dest.read() as conn:
            after = await ConnectionReader(conn).last_key(table)
        while rows := await run.source.reader.rows(table, columns, after, run.chunk_rows):
            await _write(run, table, columns, rows)
            after = key_of(table, columns, rows[-1])


async def _write(run: _Run, table: Table, columns: Sequence[str], rows: Sequence[Row]) -> None:
    """One chunk in one transaction, with the index upkeep the destination's triggers do not
    do themselves."""
    if not rows:
        return
    try:
        async with run.dest.write() as conn:
            await conn.executemany(insert_sql(table, columns), rows)
            if table.name == "source_messages":
                await conn.dialect.index_source_text(conn, (), _readable(columns, rows))
    except Exception as exc:
        raise CopyFailed(table.name, exc) from exc
    run.copied += len(rows)
    run.progress.advance(table.name, len(rows))


def _readable(columns: Sequence[str], rows: Sequence[Row]) -> list[tuple[int, str]]:
    """``(id, content)`` of the versions the literal-match index holds: current, not
    deleted, not forgotten (as ingest indexes them)."""
    at = {name: columns.index(name) for name in ("id", "content", "is_current", "deleted")}
    forgotten = columns.index("forgotten_us")
    return [
        (int(row[at["id"]]), str(row[at["content"]]))
        for row in rows
        if row[at["is_current"]] == 1 and row[at["deleted"]] == 0 and row[forgotten] is None
    ]


async def _tally(reader: Reader, table: Table, columns: Sequence[str], chunk: int) -> Tally:
    tally = Tally()
    after: Row | None = None
    while rows := await reader.rows(table, columns, after, chunk):
        tally.add(rows)
        after = key_of(table, columns, rows[-1])
    return tally


async def verify(run: _Run, *, resumed: bool = False) -> Verification:
    """Count and digest every copied table on both sides."""
    chunk = max(run.chunk_rows, CHUNK_ROWS)
    checks: list[TableCheck] = []
    async with run.dest.read() as conn:
        here = ConnectionReader(conn)
        for table in TABLES:
            columns = run.columns[table.name]
            source = await _tally(run.source.reader, table, columns, chunk)
            copy = await _tally(here, table, columns, chunk)
            checks.append(TableCheck(table.name, source, copy))
    return Verification(tuple(checks), copied=run.copied, resumed=resumed)


# --- the command -------------------------------------------------------------------------------


class _Bar:
    """tqdm on stderr (off when stderr is not a terminal)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._bar: Any = None

    def start(self, total: int, done: int) -> None:
        from tqdm import tqdm

        self._bar = tqdm(
            total=total, initial=done, unit="row", desc="copy", file=self._stream, disable=None
        )

    def advance(self, table: str, rows: int) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(table, refresh=False)
            self._bar.update(rows)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def copy_command(
    source: str,
    dest: str,
    *,
    chunk_rows: int = CHUNK_ROWS,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """``channel-memory copy``: 0 when the copy is verified, 1 when it is not (or failed
    part way: run the same command again to resume), 2 when it was refused."""
    import asyncpg

    out = out or sys.stdout
    err = err or sys.stderr
    if chunk_rows < 1:
        print(f"channel-memory: --chunk-rows must be at least 1, got {chunk_rows}", file=err)
        return 2
    bar = _Bar(err)
    # a database's own message may quote a value (asyncpg's DataError does): only the
    # failure's type is shown, never content
    unavailable = (
        OSError,
        StorageError,
        sqlite3.Error,
        asyncpg.PostgresError,
        asyncpg.InterfaceError,
    )
    try:
        verification = asyncio.run(copy_store(source, dest, chunk_rows=chunk_rows, progress=bar))
    except (CopyRefused, DatabaseUnavailable) as exc:
        # a destination that cannot be reached or opened is refused at the start, as every
        # command refuses one (the server's words name no stored content)
        bar.close()
        print(f"channel-memory: copy refused: {exc}", file=err)
        return 2
    except (CopyFailed, *unavailable) as exc:
        bar.close()
        reason = str(exc) if isinstance(exc, CopyFailed) else type(exc).__name__
        print(
            f"channel-memory: copy stopped: {reason}; the chunks already copied are kept and "
            "the same command resumes after them",
            file=err,
        )
        return 1
    except KeyboardInterrupt:
        bar.close()
        print("channel-memory: copy interrupted; run the same command again to resume", file=err)
        return 130
    bar.close()
    print(verification.render(), file=out)
    return 0 if verification.ok else 1
