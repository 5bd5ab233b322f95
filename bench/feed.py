"""Feed benchmark: latency in process and requests/second over HTTP, small vs large store.

Two stores: 10,000 messages (the queried channel holds 1,000 over 30 days, nine
others the rest) and 1,000,000 (the queried channel holds 100,000 over 30 days,
99 others the rest). For each: the feed's p50/p99 in process (read + layout +
render, ``max_chars`` 8192), the same through HTTP on loopback, and — as the
baseline of the same run — reading the raw 24 h window the naive way (every
message of the window, formatted in the bridge's line format).

Run: ``python bench/feed.py [--large N]`` (building the large store takes a few minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from channel_memory.auth import Principal
from channel_memory.config import Settings
from channel_memory.feed import candidates
from channel_memory.feed.candidates import FeedQuery
from channel_memory.feed.layout import render
from channel_memory.feed.routes import etag_of
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.store import Store, windows
from channel_memory.timefmt import format_rfc3339

sys.path.insert(0, str(Path(__file__).parent))
from ingest import machine
from worker import desk_message

# The data ends now, so a server on the wall clock serves the same live window.
END_US = time.time_ns() // 1000 // 60_000_000 * 60_000_000
DAY_US = 86_400_000_000
SPAN_US = 30 * DAY_US


def _event(channel: str, i: int, per_channel: int) -> dict[str, Any]:
    event = desk_message(i, 0)
    created = END_US - SPAN_US + (i * SPAN_US) // per_channel
    event["channel_id"] = channel
    message = event["message"]
    message["created_at"] = format_rfc3339(created)
    message["id"] = f"{channel}-{i}"
    if "thread_id" in message:
        message["thread_id"] = f"{channel}-{message['thread_id']}"
    return event


async def build(path: Path, total: int, queried: int, others: int) -> None:
    from channel_memory.worker.runner import Worker

    settings = Settings(db=path, retention={"days": 100_000})
    store = await Store.open(path)
    try:
        worker = Worker(store, settings, lambda: END_US)
        await worker.prepare()
        per_other = (total - queried) // others
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
    path: Path, rounds: int
) -> tuple[tuple[float, float], tuple[float, float], int, int]:
    store = await Store.open(path)
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
                found = await candidates.live(conn, query, principal)
            body = render(found, 8192, "text")
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


def over_http(path: Path, seconds: float, clients: int = 4) -> tuple[float, float]:
    process = subprocess.Popen(
        [sys.executable, "-m", "channel_memory", "serve", "--port", "0", "--no-worker",
         "--log-level", "warning", "--db", str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "CHANNEL_MEMORY_TOKEN": "", "CHANNEL_MEMORY_RETENTION__DAYS": "100000"},
    )  # fmt: skip
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split("listening on ")[1].split()[0]
        params = {"channels": "floor", "since": "24h", "max_chars": "8192"}
        httpx.get(url + "/health", timeout=60)
        counts = [0] * clients
        latencies: list[float] = []
        lock = threading.Lock()
        stop = time.perf_counter() + seconds

        def run(n: int) -> None:
            with httpx.Client(base_url=url, timeout=60) as client:
                while time.perf_counter() < stop:
                    started = time.perf_counter()
                    client.get("/channel-awareness", params=params).raise_for_status()
                    with lock:
                        latencies.append(time.perf_counter() - started)
                    counts[n] += 1

        threads = [threading.Thread(target=run, args=(n,)) for n in range(clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        return sum(counts) / elapsed, _percentiles(latencies)[1]
    finally:
        process.terminate()
        process.wait(timeout=60)
        assert process.stdout is not None
        process.stdout.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    sizes = [(10_000, 1_000, 9), (args.large, args.large // 10, 99)]
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for total, queried, others in sizes:
            path = Path(folder) / f"store-{total}.db"
            started = time.perf_counter()
            asyncio.run(build(path, total, queried, others))
            built = time.perf_counter() - started
            feed, naive, served, naive_chars = asyncio.run(in_process(path, args.rounds))
            rps, http_p99 = over_http(path, args.seconds)
            results.append(feed)
            print(
                f"store {total:>9,} msgs (queried channel {queried:,}, built in {built:.0f} s): "
                f"feed p50 {feed[0]:.2f} ms p99 {feed[1]:.2f} ms ({served:,} chars); "
                f"HTTP {rps:,.0f} req/s p99 {http_p99:.1f} ms; "
                f"naive raw 24h p50 {naive[0]:.2f} ms p99 {naive[1]:.2f} ms ({naive_chars:,} chars)"
            )
    print(
        f"large/small feed p99 ratio: {results[1][1] / results[0][1]:.2f} "
        f"(p50 ratio {results[1][0] / results[0][0]:.2f})"
    )


if __name__ == "__main__":
    main()
