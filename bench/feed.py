"""Feed benchmark: latency in process and requests/second over HTTP, small vs large store.

Two stores: 10,000 messages (all in the queried channel, over 3 days) and
1,000,000 (the queried channel holds 100,000 over 30 days, 99 others the rest).
The queried channel's 24 h window is the same in both (~3,300 messages), so the
ratio between them shows how the feed's cost grows with the history (it should
not). For
each: the feed's p50/p99 in process (read + layout + render, ``max_chars``
8192), requests/second through HTTP on loopback, and — as the baseline of the
same run — reading the raw 24 h window the naive way (every message of the
window, formatted in the bridge's line format).

PostgreSQL beside SQLite (``--backends``, both by default): building the
1,000,000-message store on PostgreSQL takes too long for a routine run, so the
comparison rows use the small store and a ``--compare``-message one (100,000 by
default: 10,000 in the queried channel over 3 days — the same 24 h window again — and
99 others), each built on both backends in the same run, the PostgreSQL ones on fresh
databases of a throwaway server the bench starts. The 1,000,000-message rows stay
SQLite's.

Run: ``python bench/feed.py [--large N] [--compare N] [--cache DIR] [--backends
sqlite,postgres]`` (building the large store takes a few minutes; ``--cache`` keeps the
SQLite stores for the next run within the hour).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from channel_memory.cli import tune_gc
from channel_memory.feed import candidates
from channel_memory.feed.candidates import FeedQuery
from channel_memory.http.feed_routes import etag_of
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.kernel.config import Settings
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import MICROS_PER_DAY, format_rfc3339
from channel_memory.store import Store, windows

sys.path.insert(0, str(Path(__file__).parent))
from ingest import machine
from pg import PgCluster, Target, add_backends_option, cluster, describe, label
from served import served
from worker import desk_message

# The data ends on the current hour, so a server on the wall clock serves (about) the
# same live window as the in-process measurement; a cached store is rebuilt every hour.
END_US = time.time_ns() // 1000 // 3_600_000_000 * 3_600_000_000
DAY_US = MICROS_PER_DAY
SPAN_US = 30 * DAY_US


def _event(channel: str, i: int, per_channel: int) -> dict[str, Any]:
    event = desk_message(i, 0)
    # the queried channels share one density, 100,000 messages per 30 days
    span = SPAN_US * per_channel // 100_000 if per_channel >= 10_000 else SPAN_US
    created = END_US - span + (i * span) // per_channel
    event["channel_id"] = channel
    message = event["message"]
    message["created_at"] = format_rfc3339(created)
    message["id"] = f"{channel}-{i}"
    if "thread_id" in message:
        message["thread_id"] = f"{channel}-{message['thread_id']}"
    return event


async def build(path: Target, total: int, queried: int, others: int) -> None:
    from channel_memory.worker.runner import Worker

    settings = Settings(db=path, retention={"days": 100_000})
    store = await Store.open(path)
    try:
        worker = Worker(store, settings, lambda: END_US)
        await worker.prepare()
        per_other = (total - queried) // others if others else 0
        plan = [("floor", queried)] + [(f"ch{n:02d}", per_other) for n in range(others)]
        for channel, count in plan:
            for start in range(0, count, 1000):
                events = [_event(channel, i, count) for i in range(start, min(count, start + 1000))]
                batch = IngestBatch.model_validate({"events": events})
                await ingest(
                    store, [channel], native_commands(batch.events), now_us=END_US,
                    derive=worker.hook,
                )  # fmt: skip
            await worker.drain()
    finally:
        await store.close()


def _percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples) * 1000, samples[int(len(samples) * 0.99) - 1] * 1000


async def in_process(
    path: Target, rounds: int
) -> tuple[tuple[float, float], tuple[float, float], int, int]:
    store = await Store.open(path)
    tune_gc()  # as `channel-memory serve` does
    principal = Principal("bench", frozenset({"read"}), frozenset({"*"}))
    query = FeedQuery(
        ("floor",), "raw_window+digest", DAY_US, END_US, False, 10, 8192, "text", 21_600_000_000
    )
    feed_times: list[float] = []
    naive_times: list[float] = []
    try:
        for _ in range(rounds):
            started = time.perf_counter()
            async with store.read() as conn:
                body = await candidates.serve(conn, query, principal)
            etag_of(body.content)
            feed_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            async with store.read() as conn:
                window = await windows.readable_newest(
                    conn, "floor", END_US - DAY_US, END_US, 10_000_000
                )
            naive = "".join(
                f"[{format_rfc3339(v.created_us)[11:16]}] {v.author_name}: {v.content}\n"
                for v in reversed(window)
            )
            naive_times.append(time.perf_counter() - started)
        return _percentiles(feed_times), _percentiles(naive_times), len(body.content), len(naive)
    finally:
        await store.close()


def _client(url: str, params: dict[str, str], stop_at: float, out: Any) -> None:
    # the standard library's client: httpx costs the client more CPU than the server spends
    import http.client
    import urllib.parse

    host, port = url.split("//")[1].split(":")
    target = "/channel-awareness?" + urllib.parse.urlencode(params)
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    latencies = []
    while time.time() < stop_at:
        started = time.perf_counter()
        connection.request("GET", target)
        response = connection.getresponse()
        response.read()
        assert response.status == 200
        latencies.append(time.perf_counter() - started)
    connection.close()
    out.put(latencies)


def over_http(path: Target, seconds: float, clients: int = 1) -> tuple[float, float]:
    """Requests/second from ``clients`` client processes (threads would share one core)."""
    import multiprocessing

    with served(path, "--no-worker") as url:
        params = {"channels": "floor", "since": "24h", "max_chars": "8192"}
        queue: Any = multiprocessing.Queue()
        stop_at = time.time() + seconds
        workers = [
            multiprocessing.Process(target=_client, args=(url, params, stop_at, queue))
            for _ in range(clients)
        ]
        started = time.perf_counter()
        for worker in workers:
            worker.start()
        latencies: list[float] = []
        for _ in workers:
            latencies += queue.get()
        for worker in workers:
            worker.join()
        elapsed = time.perf_counter() - started
        return len(latencies) / elapsed, _percentiles(latencies)[1]


@dataclass(frozen=True)
class Figures:
    """One store's row: how it was built and what the feed measured on it."""

    total: int
    queried: int
    built_s: float
    feed: tuple[float, float]
    naive: tuple[float, float]
    served_chars: int
    naive_chars: int
    rps: float
    http_p99: float

    def line(self) -> str:
        return (
            f"store {self.total:>9,} msgs (queried channel {self.queried:,}, built in "
            f"{self.built_s:.0f} s): feed p50 {self.feed[0]:.2f} ms p99 {self.feed[1]:.2f} ms "
            f"({self.served_chars:,} chars); "
            f"HTTP {self.rps:,.0f} req/s p99 {self.http_p99:.1f} ms; "
            f"naive raw 24h p50 {self.naive[0]:.2f} ms p99 {self.naive[1]:.2f} ms "
            f"({self.naive_chars:,} chars)"
        )


def measure(
    target: Target, size: tuple[int, int, int], rounds: int, seconds: float, fresh: bool
) -> Figures:
    """Build the store of ``size`` at ``target`` (unless it exists: an SQLite cache),
    then measure the feed in process and over HTTP."""
    total, queried, others = size
    started = time.perf_counter()
    if fresh:
        asyncio.run(build(target, total, queried, others))
    built = time.perf_counter() - started
    feed, naive, served_chars, naive_chars = asyncio.run(in_process(target, rounds))
    rps, http_p99 = over_http(target, seconds)
    return Figures(total, queried, built, feed, naive, served_chars, naive_chars, rps, http_p99)


def compare(
    args: argparse.Namespace,
    sizes: list[tuple[int, int, int]],
    sqlite_store: Callable[[tuple[int, int, int]], Path],
    server: PgCluster | None,
    measured: dict[tuple[str, int], Figures],
) -> None:
    """The rows of each backend at each of ``sizes``, and PostgreSQL's ratios to SQLite."""
    print(
        "PostgreSQL beside SQLite, stores of "
        + " and ".join(f"{total:,}" for total, _, _ in sizes)
        + " messages (the same shape; PostgreSQL on a fresh database each):"
    )
    for size in sizes:
        for backend in args.backends:
            key = (backend, size[0])
            if key not in measured:
                if backend == "sqlite":
                    path = sqlite_store(size)
                    target: Target = path
                    fresh = not path.exists()
                else:
                    assert server is not None
                    target, fresh = server.create_database(), True
                measured[key] = measure(target, size, args.rounds, args.seconds, fresh)
            print(f"{label(backend):<10} {measured[key].line()}")
        if len(args.backends) == 2:
            lite, post = measured[("sqlite", size[0])], measured[("postgres", size[0])]
            print(
                f"{'':<10} PostgreSQL/SQLite at {size[0]:,}: feed p50 "
                f"{post.feed[0] / lite.feed[0]:.2f}x, p99 {post.feed[1] / lite.feed[1]:.2f}x; "
                f"HTTP req/s {post.rps / lite.rps:.2f}x; naive raw 24h p50 "
                f"{post.naive[0] / lite.naive[0]:.2f}x"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument(
        "--compare",
        type=int,
        default=100_000,
        help="the larger store of the PostgreSQL-beside-SQLite rows (default 100,000)",
    )
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument(
        "--cache", help="keep the built SQLite stores in this folder and reuse them"
    )
    add_backends_option(parser)
    args = parser.parse_args()
    # The small store's channel has the large one's density over 3 days instead of 30:
    # the same 24 h window, a hundredth of the history.
    small = (10_000, 10_000, 0)
    sizes = [small, (args.large, args.large // 10, 99)]
    measured: dict[tuple[str, int], Figures] = {}
    with tempfile.TemporaryDirectory() as scratch, cluster(args.backends) as server:
        folder = Path(args.cache or scratch)
        folder.mkdir(parents=True, exist_ok=True)

        def sqlite_store(size: tuple[int, int, int]) -> Path:
            total, queried, _ = size
            return folder / f"store-{total}-{queried}-{END_US // 3_600_000_000}.db"

        print(f"machine: {machine()}")
        if server is not None:
            print(f"postgresql: {describe(server)}")
        if "sqlite" in args.backends:
            for size in sizes:
                path = sqlite_store(size)
                figures = measure(path, size, args.rounds, args.seconds, not path.exists())
                measured[("sqlite", size[0])] = figures
                print(figures.line())
            small_feed, large_feed = measured[("sqlite", small[0])].feed, figures.feed
            print(
                f"large/small feed p99 ratio: {large_feed[1] / small_feed[1]:.2f} "
                f"(p50 ratio {large_feed[0] / small_feed[0]:.2f})"
            )
        if "postgres" in args.backends:
            middle = (args.compare, args.compare // 10, 99)
            compare(args, [small, middle], sqlite_store, server, measured)


if __name__ == "__main__":
    main()
