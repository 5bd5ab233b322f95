"""PostgreSQL beside SQLite in the benchmarks: the ``--backends`` option, a throwaway
server the bench starts itself, fresh databases on it, and a blocking connection for
threads that read the database straight.

The server is the test suite's ``PgCluster`` (``tests/pgcluster.py``: ``initdb`` into a
temporary directory, loopback TCP, removed on exit) with the durability of a production
server — ``fsync``, ``synchronous_commit`` and ``full_page_writes`` on — so that its
commits wait for the disk as SQLite's ``synchronous=FULL`` ones do.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.pgcluster import PgCluster, PostgresNotFound, run_sync

BACKENDS = ("sqlite", "postgres")
DURABLE = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
"""Undo the test cluster's speed-ups: a benchmark measures a server as deployed."""

Target = Path | str
"""A store: an SQLite file's path or a ``postgresql://`` URL."""


def parse_backends(text: str) -> tuple[str, ...]:
    """The backends a comma-separated list names, each once, in its order."""
    chosen = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in chosen if name not in BACKENDS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"expected a comma-separated subset of {','.join(BACKENDS)}, got {text!r}"
        )
    return chosen


def add_backends_option(parser: argparse.ArgumentParser) -> None:
    """``--backends sqlite,postgres`` (the default): which stores the bench measures."""
    parser.add_argument(
        "--backends",
        type=parse_backends,
        default=BACKENDS,
        help="comma-separated: sqlite, postgres (default both; postgres starts a "
        "throwaway server, which needs the PostgreSQL server binaries)",
    )


@contextmanager
def cluster(backends: tuple[str, ...]) -> Iterator[PgCluster | None]:
    """A started throwaway server when ``backends`` names postgres, else ``None``;
    stopped and removed on exit."""
    if "postgres" not in backends:
        yield None
        return
    try:
        server = PgCluster(settings=DURABLE).start()
    except PostgresNotFound as exc:
        raise SystemExit(f"{exc}\n(or measure SQLite alone: --backends sqlite)") from None
    try:
        yield server
    finally:
        server.stop()


def describe(server: PgCluster) -> str:
    """The server's version and the settings that matter to the figures."""

    async def ask() -> list[str]:
        conn = await asyncpg.connect(server.url())
        try:
            names = ("server_version", "fsync", "synchronous_commit", "shared_buffers")
            return [str(await conn.fetchval(f"SHOW {name}")) for name in names]
        finally:
            await conn.close()

    version, fsync, commit, buffers = run_sync(ask())
    return (
        f"PostgreSQL {version.split()[0]} on loopback TCP (started by the bench), fsync {fsync}, "
        f"synchronous_commit {commit}, shared_buffers {buffers}"
    )


def databases(backend: str, folder: Path, server: PgCluster | None) -> Callable[[str], Target]:
    """``fresh(name)``: a new, empty store of ``backend`` — the file ``folder/name.db``
    for sqlite, a new database on ``server`` for postgres."""
    if backend == "sqlite":
        return lambda name: folder / f"{name}.db"
    if server is None:
        raise RuntimeError("no PostgreSQL server was started for this run")
    return lambda name: server.create_database()


def clone(server: PgCluster, source_url: str) -> str:
    """A new database on ``server`` holding a file copy of the one at ``source_url`` (which
    nothing may be connected to), and its URL: every configuration of a bench starts
    from the same bytes, as SQLite's start from a copy of one file."""
    source = source_url.rsplit("/", 1)[1]
    name = f"{source}_copy_{next(_clones)}"

    statement = f'CREATE DATABASE "{name}" TEMPLATE "{source}"'
    if server.server_major >= 15:
        statement += " STRATEGY FILE_COPY"  # as PgCluster.create_database: nothing to WAL-log

    async def create() -> None:
        conn = await asyncpg.connect(server.url())
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    run_sync(create())
    return server.url(name)


_clones = itertools.count(1)


def label(backend: str) -> str:
    return {"sqlite": "SQLite", "postgres": "PostgreSQL"}[backend]


class Blocking:
    """One asyncpg connection used from synchronous code in one thread (it drives its
    own event loop), for a thread that watches the database while servers run."""

    def __init__(self, url: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._conn: asyncpg.Connection = self._loop.run_until_complete(asyncpg.connect(url))

    def fetchval(self, sql: str, *args: Any) -> Any:
        return self._loop.run_until_complete(self._conn.fetchval(sql, *args))

    def fetchrow(self, sql: str, *args: Any) -> Any:
        return self._loop.run_until_complete(self._conn.fetchrow(sql, *args))

    def close(self) -> None:
        try:
            self._loop.run_until_complete(self._conn.close())
        finally:
            self._loop.close()
