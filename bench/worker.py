"""Worker benchmark: derivation throughput and ingest-to-block lag.

1. Derivation: a 100,000-message channel (a desk's month: hard events, acks,
   telemetry, repeats, threads, chatter) is ingested with the worker off, then
   derived from scratch. Baseline in the same run: reading the same sources back
   through the store (the I/O floor of any derivation).
2. Lag: a server with its in-process worker takes a sustained 1,000 msg/s of
   ingest (batches of 100 every 100 ms) for ``--seconds``; a poller records, per
   batch, the time from the ingest's 200 until no message of the batch is dirty
   any more (its blocks are served).
3. Long messages: the time to derive one message of 10k, 100k and 1M characters
   (after one short message in the same channel) by shape: a blob without spaces
   or digits, base64, prose, and a log of many lines that is a hard event.
4. Requests during a long derivation: a served sidecar takes a 1,000,000-character
   blob; while its worker derives it a client alternates small ingests and feed
   reads, and the latency of each is recorded.

With PostgreSQL (``--backends``, both by default) parts 1 and 2 run again on fresh
databases of a throwaway server the bench starts, printed as extra rows under
SQLite's: derivation against the same baseline read from PostgreSQL, and the lag.
Parts 3 and 4 run on the backends ``--long-backends`` names (SQLite alone by default:
they measure the derivation's Python, which is the same on both).

Run: ``make bench`` or ``python bench/worker.py [--messages N] [--seconds S]
[--backends sqlite,postgres]`` (``--long-only`` runs parts 3 and 4 alone).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.kernel.config import Settings
from channel_memory.store import Store, sources
from channel_memory.worker.runner import Worker

sys.path.insert(0, str(Path(__file__).parent))
from ingest import machine
from pg import (
    Blocking,
    PgCluster,
    Target,
    add_backends_option,
    cluster,
    databases,
    describe,
    parse_backends,
)
from served import served

START_US = 1_776_000_000_000_000  # 2026-04-12


def desk_message(i: int, spacing_s: float) -> dict[str, object]:
    """A realistic mix: 1 in 10 a hard event, ack or heartbeat; threads and chatter otherwise."""
    kind = i % 20
    text = {
        0: f"FILLED {100 + i % 900} NVDA @ {120 + i % 40}.{i % 100:02d}",
        1: f"stop moved to {400 + i % 200}",
        2: "ok",
        3: "thanks!",
        4: "HEARTBEAT_OK",
        5: f"cron status: ingest job ran in {i % 90}s",
        6: f"Same conclusion as {i % 24:02d}:{i % 60:02d}: no trade, range intact.",
    }.get(kind, f"note {i}: flows two-way around {100 + i % 50}, watching the 2y and 5s {i % 7}bp")
    created = START_US + int(i * spacing_s * 1_000_000)
    seconds, micros = divmod(created, 1_000_000)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{micros:06d}Z"
    message: dict[str, object] = {
        "id": str(i),
        "author_id": f"u{i % 7}",
        "author_name": f"analyst-{i % 7}",
        "created_at": stamp,
        "content": text,
    }
    if kind in (7, 8, 9):
        message["thread_id"] = f"t{i // 60}"
    return {"type": "message", "channel_id": "floor", "message": message}


class Dirty:
    """Whether any of some messages of channel ``floor`` is still dirty (its blocks not
    yet derived), read straight from the database, SQLite or PostgreSQL. Use it from
    one thread."""

    def __init__(self, db: Target) -> None:
        self._sqlite = sqlite3.connect(db) if isinstance(db, Path) else None
        self._postgres = Blocking(db) if isinstance(db, str) else None

    def any(self, ids: list[str]) -> bool:
        if self._sqlite is not None:
            row = self._sqlite.execute(
                "SELECT 1 FROM dirty_messages WHERE channel_id = 'floor' AND message_id IN "
                "(SELECT value FROM json_each(?)) LIMIT 1",
                (json.dumps(ids),),
            ).fetchone()
            return row is not None
        assert self._postgres is not None
        found = self._postgres.fetchval(
            "SELECT 1 FROM dirty_messages WHERE channel_id = 'floor' "
            "AND message_id = ANY($1::text[]) LIMIT 1",
            ids,
        )
        return found is not None

    def close(self) -> None:
        if self._sqlite is not None:
            self._sqlite.close()
        if self._postgres is not None:
            self._postgres.close()


async def derivation(db: Target, count: int) -> tuple[float, float]:
    settings = Settings(db=db, retention={"days": 100_000})
    store = await Store.open(settings.db)
    try:
        worker = Worker(store, settings, lambda: time.time_ns() // 1000)
        await worker.prepare()
        for start in range(0, count, 1000):
            batch = IngestBatch.model_validate(
                {"events": [desk_message(i, 26.0) for i in range(start, min(count, start + 1000))]}
            )
            await ingest(
                store,
                ["floor"],
                native_commands(batch.events),
                now_us=time.time_ns() // 1000,
                derive=worker.hook,
            )
        started = time.perf_counter()
        after = 0
        read = 0
        while True:
            async with store.read() as conn:
                page = await sources.current_page(conn, after, 1000)
            if not page:
                break
            read += len(page)
            after = page[-1].id
        baseline = read / (time.perf_counter() - started)
        started = time.perf_counter()
        derived = await worker.drain()
        rate = derived / (time.perf_counter() - started)
        return rate, baseline
    finally:
        await store.close()


def lag(db: Target, seconds: float) -> tuple[list[float], int, float]:
    lags: list[float] = []
    outstanding: list[tuple[float, list[str]]] = []
    lock = threading.Lock()
    done = threading.Event()

    def poll() -> None:
        dirty = Dirty(db)
        try:
            while not (done.is_set() and not outstanding):
                with lock:
                    head = outstanding[0] if outstanding else None
                if head is None:
                    time.sleep(0.005)
                    continue
                acked_at, ids = head
                if not dirty.any(ids):
                    lags.append(time.perf_counter() - acked_at)
                    with lock:
                        outstanding.pop(0)
                else:
                    time.sleep(0.005)
        finally:
            dirty.close()

    def send(url: str, lane: int, started: float, counter: list[int]) -> None:
        # Two lanes, each 100 messages every 200 ms, staggered by 100 ms: 1,000 msg/s.
        with httpx.Client(base_url=url, timeout=60) as client:
            batch = 0
            while time.perf_counter() - started < seconds:
                pause = started + lane * 0.1 + batch * 0.2 - time.perf_counter()
                if pause > 0:
                    time.sleep(pause)
                first = (batch * 2 + lane) * 100
                events = [desk_message(first + j, 0.001) for j in range(100)]
                client.post("/v1/ingest", json={"events": events}).raise_for_status()
                with lock:
                    outstanding.append((time.perf_counter(), [str(first + j) for j in range(100)]))
                    outstanding.sort()
                    counter[0] += 100
                batch += 1

    with served(db) as url:
        poller = threading.Thread(target=poll)
        poller.start()
        counter = [0]
        started = time.perf_counter()
        lanes = [
            threading.Thread(target=send, args=(url, lane, started, counter)) for lane in (0, 1)
        ]
        for lane in lanes:
            lane.start()
        for lane in lanes:
            lane.join()
        elapsed = time.perf_counter() - started
        done.set()
        poller.join(timeout=120)
        return lags, counter[0], counter[0] / elapsed


LONG_SIZES = (10_000, 100_000, 1_000_000)


def long_content(shape: str, size: int) -> str:
    """A message of ``size`` characters of one shape (seeded, so runs compare)."""
    rng = random.Random(size)
    if shape == "blob":  # no spaces, no digits: a pasted token or minified blob
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ_-") for _ in range(size))
    if shape == "base64":
        return base64.b64encode(rng.randbytes(size))[:size].decode()
    if shape == "prose":
        words = ["the", "desk", "watched", "flows", "into", "close", "NVDA", "range", "held"]
        text = " ".join(rng.choice(words) for _ in range(size // 4))
        return (text + " " * size)[:size]
    if shape == "log":  # many lines, some of them fills: a hard event cut to its decisions
        lines = []
        while sum(len(line) + 1 for line in lines) < size:
            n = len(lines)
            lines.append(f"FILLED {n % 900 + 100} ES @ 5{n % 1000:03d}" if n % 50 == 0 else
                         f"{n:08d} INFO gateway heartbeat seq={n} latency_ms={n % 97}")  # fmt: skip
        return "\n".join(lines)[:size]
    raise ValueError(shape)


def _message(i: int, content: str) -> dict[str, object]:
    return {
        "type": "message",
        "channel_id": "floor",
        "message": {
            "id": f"m{i}",
            "author_id": "u1",
            "author_name": "analyst",
            "created_at": "2026-05-21T16:00:00Z",
            "content": content,
        },
    }


async def long_derivation(db: Target, shape: str, size: int) -> float:
    """Seconds to derive one ``size``-character message after one short one."""
    settings = Settings(db=db, retention={"days": 100_000})
    store = await Store.open(settings.db)
    try:
        worker = Worker(store, settings, lambda: time.time_ns() // 1000)
        await worker.prepare()
        batch = IngestBatch.model_validate(
            {"events": [_message(0, "Watching the range."), _message(1, long_content(shape, size))]}
        )
        await ingest(
            store,
            ["floor"],
            native_commands(batch.events),
            now_us=time.time_ns() // 1000,
            derive=worker.hook,
        )
        started = time.perf_counter()
        await worker.drain()
        return time.perf_counter() - started
    finally:
        await store.close()


def requests_during(db: Target, size: int) -> tuple[list[float], list[float], float]:
    """Ingest and feed latencies (s) seen while a served worker derives a ``size`` blob,
    and how long that derivation took."""
    ingests: list[float] = []
    feeds: list[float] = []
    with served(db) as url, httpx.Client(base_url=url, timeout=120) as client:
        client.post("/v1/ingest", json={"events": [_message(0, "Watching the range.")]})
        started = time.perf_counter()
        client.post(
            "/v1/ingest", json={"events": [_message(1, long_content("blob", size))]}
        ).raise_for_status()
        dirty = Dirty(db)
        try:
            i = 2
            while dirty.any(["m1"]):
                if time.perf_counter() - started > 600:
                    raise RuntimeError("derivation did not finish within 600 s")
                t = time.perf_counter()
                client.post(
                    "/v1/ingest", json={"events": [_message(i, f"note {i}")]}
                ).raise_for_status()
                ingests.append(time.perf_counter() - t)
                t = time.perf_counter()
                client.get("/channel-awareness", params={"channels": "floor"}).raise_for_status()
                feeds.append(time.perf_counter() - t)
                i += 1
                time.sleep(0.01)
        finally:
            dirty.close()
        return ingests, feeds, time.perf_counter() - started


def _ms(values: list[float]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"n {len(ordered)}  median {statistics.median(ordered) * 1000:.1f} ms  "
        f"p99 {p99 * 1000:.1f} ms  max {ordered[-1] * 1000:.1f} ms"
    )


def long_messages(fresh: Callable[[str], Target], title: str = "") -> None:
    """Parts 3 and 4, each measurement on a fresh store ``fresh(name)``."""
    print(f"{title}derivation of one long message (after one short one), seconds:")
    print(f"  {'shape':<8}" + "".join(f"{size:>12,}" for size in LONG_SIZES))
    for shape in ("blob", "base64", "prose", "log"):
        times = [
            asyncio.run(long_derivation(fresh(f"long-{shape}-{size}"), shape, size))
            for size in LONG_SIZES
        ]
        print(f"  {shape:<8}" + "".join(f"{t:>12.3f}" for t in times))
    ingests, feeds, took = requests_during(fresh("during"), 1_000_000)
    print(
        f"{title}requests while a served worker derives a 1,000,000-character blob ({took:.1f} s):"
    )
    print(f"  ingest  {_ms(ingests)}")
    print(f"  feed    {_ms(feeds)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--long-only", action="store_true")
    add_backends_option(parser)
    parser.add_argument(
        "--long-backends",
        type=parse_backends,
        default=("sqlite",),
        help="backends of parts 3 and 4 (default sqlite)",
    )
    args = parser.parse_args()
    backends = () if args.long_only else args.backends
    with cluster((*backends, *args.long_backends)) as server:
        print(f"machine: {machine()}")
        if server is not None:
            print(f"postgresql: {describe(server)}")
        if backends:
            short_parts(args.messages, args.seconds, backends, server)
        for backend in args.long_backends:
            with tempfile.TemporaryDirectory() as name:
                title = "PostgreSQL: " if backend == "postgres" else ""
                long_messages(databases(backend, Path(name), server), title)


def short_parts(
    messages: int, seconds: float, backends: tuple[str, ...], server: PgCluster | None
) -> None:
    """Parts 1 and 2 on each of ``backends``: SQLite's rows as they always were, then
    PostgreSQL's beside them."""
    results = {}
    for backend in backends:
        with tempfile.TemporaryDirectory() as name:
            fresh = databases(backend, Path(name), server)
            rate, baseline = asyncio.run(derivation(fresh("derive"), messages))
            lags, sent, offered = lag(fresh("lag"), seconds)
        results[backend] = (rate, baseline, sorted(lags), sent, offered)

    def lag_line(lags: list[float]) -> str:
        p99 = lags[min(len(lags) - 1, int(len(lags) * 0.99))]
        return (
            f"batches {len(lags)}  median {statistics.median(lags) * 1000:.0f} ms  "
            f"p99 {p99 * 1000:.0f} ms  max {lags[-1] * 1000:.0f} ms"
        )

    if "sqlite" in results:
        rate, baseline, lags, sent, offered = results["sqlite"]
        print(f"derivation over a {messages:,}-message channel:")
        print(f"  baseline (read the sources back)   {baseline:>10,.0f} msg/s  1.00x")
        print(f"  derive every block from scratch    {rate:>10,.0f} msg/s  {rate / baseline:.2f}x")
        print(f"lag from ingest 200 to served block, {sent:,} messages at {offered:,.0f} msg/s:")
        print(f"  {lag_line(lags)}")
    if "postgres" in results:
        rate, baseline, lags, sent, offered = results["postgres"]
        beside = results.get("sqlite")
        print(
            f"PostgreSQL, the same on a fresh database (the ratio: to PostgreSQL's own "
            f"baseline{'; then to the SQLite row' if beside else ''}):"
        )
        print(
            f"  baseline (read the sources back)   {baseline:>10,.0f} msg/s  1.00x"
            + (f"  {baseline / beside[1]:.2f}x SQLite" if beside else "")
        )
        print(
            f"  derive every block from scratch    {rate:>10,.0f} msg/s  {rate / baseline:.2f}x"
            + (f"  {rate / beside[0]:.2f}x SQLite" if beside else "")
        )
        print(f"  lag, {sent:,} messages at {offered:,.0f} msg/s: {lag_line(lags)}")


if __name__ == "__main__":
    main()
