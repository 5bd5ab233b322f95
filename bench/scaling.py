"""Read scaling on one host: feed requests/second against ``serve --workers 1`` and
``serve --workers 2`` on the same SQLite store, and against one and two replicas
(separate ``serve`` processes) on one PostgreSQL database.

The store: 15 channels of the synthetic desk (3,000 messages, hard events, reports,
chatter, acks; its blocks derived), stamped so that its day ends now. Every SQLite
configuration serves a fresh copy of that one file. For PostgreSQL the file is moved
into a database of a throwaway server the bench starts (``channel-memory copy``, then
one ``serve`` derives the blocks, which come out identical), and every PostgreSQL
configuration serves a fresh file copy of that database; with two replicas the clients
are spread over both URLs. For each, concurrent client
processes (httpx, keep-alive connections renewed every 20 requests, channels taken in
turn) ask the feed (``max_chars`` 8192) for a fixed time, twice:

- ``feed``: plain GETs, each answered 200; every such answer records a read, so each
  request also takes the database's single writer once;
- ``poll``: GETs with the ``If-None-Match`` of the answer the client holds, answered
  304 while the feed is unchanged, which records nothing: a read-only request.

Prints the machine, one row per configuration and kind, and the ratio of each row to
the first configuration's. Each configuration is a function that starts its servers on
the prepared stores and yields the URLs clients spread over: one function each in
``CONFIGURATIONS``.

Run: ``python bench/scaling.py [--seconds 10] [--clients 8] [--backends sqlite,postgres]``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from ingest import machine
from pg import Blocking, PgCluster, add_backends_option, clone, cluster, describe
from served import served

from channel_memory.demo.synthetic_desk import END, desk_events
from channel_memory.kernel.timefmt import format_rfc3339, parse_rfc3339

CHANNELS = [f"desk{n:02d}" for n in range(15)]
FEED = {"since": "24h", "max_chars": "8192"}
KINDS = ("feed", "poll")
RECONNECT = 20
"""A client opens a new connection every this many requests: the server processes share
one listening socket, and whichever accepts a connection keeps it, so a few long-lived
connections could all land on one process."""


def workload() -> list[dict[str, Any]]:
    """The 15 desks as native events, their day ending on the current minute."""
    shift = time.time_ns() // 1000 // 60_000_000 * 60_000_000 - END
    events = []
    for seed, channel in enumerate(CHANNELS):
        for event in desk_events(seed=seed):
            message = dict(event["message"])
            message["created_at"] = format_rfc3339(parse_rfc3339(message["created_at"]) + shift)
            events.append({**event, "channel_id": channel, "message": message})
    return events


def load(url: str, events: list[dict[str, Any]], timeout: float = 600.0) -> None:
    """Push ``events`` through ``/v1/ingest`` and wait until the worker derived them all."""
    with httpx.Client(base_url=url, timeout=120) as client:
        for start in range(0, len(events), 500):
            client.post(
                "/v1/ingest", json={"events": events[start : start + 500]}
            ).raise_for_status()
        deadline = time.monotonic() + timeout
        while client.get("/v1/stats").json()["worker"]["queue_depth"]:
            if time.monotonic() > deadline:
                raise RuntimeError("the worker did not derive the workload in time")
            time.sleep(0.2)


def sqlite_store(folder: Path, events: list[dict[str, Any]]) -> Path:
    """The SQLite store every SQLite configuration serves, built by one ``serve``."""
    path = folder / "built.db"
    with served(path) as url:
        load(url, events)
    return path


def postgres_store(server: PgCluster, built: Path) -> str:
    """The SQLite store moved into a database of ``server`` and its blocks derived there:
    the database every PostgreSQL configuration serves a copy of."""
    url = server.create_database()
    subprocess.run(
        [sys.executable, "-m", "channel_memory", "copy", str(built), url],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    with served(url) as served_url:
        load(served_url, [])  # the copy queued every message: wait for the worker
    return url


CONTENT = (
    "SELECT (SELECT count(*) FROM source_messages), count(*), sum(length(text)) FROM recall_blocks"
)
"""What the two stores must agree on: versions, blocks, and the blocks' characters."""


def content(db: Path | str) -> tuple[int, int, int]:
    """``CONTENT`` of an SQLite file or a PostgreSQL database."""
    if isinstance(db, Path):
        with sqlite3.connect(db) as conn:
            row = conn.execute(CONTENT).fetchone()
    else:
        conn = Blocking(db)
        try:
            row = conn.fetchrow(CONTENT)
        finally:
            conn.close()
    return int(row[0]), int(row[1]), int(row[2])


@dataclass
class Stores:
    """The prepared store on each backend measured: the SQLite file, and the PostgreSQL
    database (built on first use) with the same messages and blocks."""

    sqlite: Path
    server: PgCluster | None
    _postgres: str | None = None

    def postgres(self) -> str:
        """A fresh copy of the PostgreSQL store: a new database, same content."""
        if self.server is None:
            raise RuntimeError("no PostgreSQL server was started for this run")
        if self._postgres is None:
            self._postgres = postgres_store(self.server, self.sqlite)
            versions, blocks, chars = content(self._postgres)
            same = (
                "the same as"
                if content(self.sqlite) == (versions, blocks, chars)
                else "NOT the same as"
            )
            print(
                f"store on PostgreSQL: {versions:,} versions, {blocks:,} blocks of {chars:,} "
                f"characters: {same} SQLite's"
            )
        return clone(self.server, self._postgres)


# --- configurations: each starts its servers and yields the URLs to spread clients over ---

Configuration = Callable[[Stores], AbstractContextManager[list[str]]]


def sqlite_processes(processes: int) -> Configuration:
    """``serve --workers N`` on a fresh copy of the built SQLite store."""

    @contextmanager
    def configuration(stores: Stores) -> Iterator[list[str]]:
        built = stores.sqlite
        copy = built.with_name(f"served-{processes}-{time.monotonic_ns()}.db")
        with sqlite3.connect(built) as source, sqlite3.connect(copy) as target:
            source.backup(target)
        with served(copy, "--workers", str(processes)) as url:
            yield [url]

    return configuration


def postgres_replicas(replicas: int) -> Configuration:
    """``replicas`` separate ``serve`` processes (each its own worker, one holding the
    lease) on a fresh copy of the PostgreSQL store."""

    @contextmanager
    def configuration(stores: Stores) -> Iterator[list[str]]:
        url = stores.postgres()
        with ExitStack() as stack:
            yield [stack.enter_context(served(url)) for _ in range(replicas)]

    return configuration


CONFIGURATIONS: dict[str, tuple[str, Configuration]] = {
    "SQLite, serve --workers 1": ("sqlite", sqlite_processes(1)),
    "SQLite, serve --workers 2": ("sqlite", sqlite_processes(2)),
    "PostgreSQL, 1 replica": ("postgres", postgres_replicas(1)),
    "PostgreSQL, 2 replicas": ("postgres", postgres_replicas(2)),
}
"""Each configuration's name, its backend (``--backends`` picks) and its function."""


# --- clients ---------------------------------------------------------------------------------


def _client(url: str, channel: str, kind: str, start_at: float, stop_at: float, out: Any) -> None:
    """A keep-alive client asking one channel's feed until ``stop_at``. Polling, it
    sends the ETag of the body it holds, as a proxy does, and keeps the new one a 200
    brings (the window moves with the clock, now and then changing the feed)."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    params = {"channels": channel, **FEED}
    with httpx.Client(base_url=url, timeout=60) as client:
        first = client.get("/channel-awareness", params=params)  # warms the connection
        first.raise_for_status()
        etag = first.headers["etag"]
        while time.time() < start_at:
            time.sleep(0.001)
        asked = 0
        while time.time() < stop_at:
            headers = {"if-none-match": etag} if kind == "poll" else {}
            asked += 1
            if asked % RECONNECT == 0:
                headers["connection"] = "close"
            started = time.perf_counter()
            response = client.get("/channel-awareness", params=params, headers=headers)
            latencies.append(time.perf_counter() - started)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            if response.status_code == 200:
                etag = response.headers["etag"]
    out.put((latencies, statuses))


@dataclass(frozen=True)
class Row:
    configuration: str
    kind: str
    requests: int
    per_second: float
    p50_ms: float
    p99_ms: float
    statuses: dict[int, int]


def measure(name: str, urls: list[str], kind: str, clients: int, seconds: float) -> Row:
    """``clients`` client processes (threads would share one core) for ``seconds``."""
    out: Any = multiprocessing.Queue()
    start_at = time.time() + 2.0  # every client connected and warm before the clock runs
    stop_at = start_at + seconds
    processes = [
        multiprocessing.Process(
            target=_client,
            args=(urls[n % len(urls)], CHANNELS[n % len(CHANNELS)], kind, start_at, stop_at, out),
        )
        for n in range(clients)
    ]
    for process in processes:
        process.start()
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    for _ in processes:
        got, answered = out.get()
        latencies += got
        for status, count in answered.items():
            statuses[status] = statuses.get(status, 0) + count
    for process in processes:
        process.join()
    ordered = sorted(latencies)
    return Row(
        name,
        kind,
        len(ordered),
        len(ordered) / seconds,
        statistics.median(ordered) * 1000,
        ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
        statuses,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="per row (default 10)")
    parser.add_argument("--clients", type=int, default=8, help="client processes (default 8)")
    add_backends_option(parser)
    args = parser.parse_args()
    print(f"machine: {machine()}; {args.clients} client processes, {args.seconds:g} s a row")
    events = workload()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as scratch, cluster(args.backends) as server:
        if server is not None:
            print(f"postgresql: {describe(server)}")
        # SQLite builds the store in every run: PostgreSQL's is a copy of it
        stores = Stores(sqlite_store(Path(scratch), events), server)
        print(f"store: {len(events):,} messages in {len(CHANNELS)} channels, blocks derived")
        for name, (backend, configuration) in CONFIGURATIONS.items():
            if backend not in args.backends:
                continue
            with configuration(stores) as urls:
                for kind in KINDS:
                    row = measure(name, urls, kind, args.clients, args.seconds)
                    rows.append(row)
                    base = next(r for r in rows if r.kind == kind)
                    print(
                        f"{name:<28} {kind:<4} {row.per_second:7,.0f} req/s "
                        f"(x{row.per_second / base.per_second:.2f})  p50 {row.p50_ms:6.1f} ms  "
                        f"p99 {row.p99_ms:6.1f} ms  {row.requests:,} requests "
                        f"{dict(sorted(row.statuses.items()))}, load {os.getloadavg()[0]:.1f}"
                    )


if __name__ == "__main__":
    main()
