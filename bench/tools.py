"""Retrieval tools benchmark: search and browse latency on a 1,000,000-message store.

Uses the store ``bench/feed.py`` builds (the queried channel holds 100,000
messages over 30 days, 99 others the rest; ``--cache`` shares it). Measures, in
process, ``search_channel_context`` for a common and a rare word, and
``get_channel_messages`` browsing a page from a random point in time and
fetching a message by its handle.

Run: ``python bench/tools.py [--large N] [--cache DIR] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

from feed import DAY_US, END_US, build
from ingest import machine

from channel_memory.cli import tune_gc
from channel_memory.http.api import AppContext
from channel_memory.http.auth import TokenTable
from channel_memory.http.telemetry import Telemetry
from channel_memory.kernel.config import Settings
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import format_rfc3339
from channel_memory.store import Store
from channel_memory.tools import retrieval as tools
from channel_memory.worker.runner import derive_hook, derive_settings

EVERYONE = Principal("bench", frozenset({"read"}), frozenset({"*"}))


def _p(samples: list[float]) -> str:
    samples = sorted(samples)
    p50 = statistics.median(samples) * 1000
    p99 = samples[max(0, int(len(samples) * 0.99) - 1)] * 1000
    return f"p50 {p50:6.2f} ms  p99 {p99:6.2f} ms"


async def measure(path: Path, rounds: int) -> list[str]:
    settings = Settings(db=path)
    store = await Store.open(path)
    tune_gc()
    ctx = AppContext(
        store, settings, TokenTable(settings), lambda: END_US,
        derive_hook(derive_settings(settings)), lambda: None, Telemetry(),
    )  # fmt: skip
    rng = random.Random(1)
    rows = []
    try:
        for label, query in (("search, common word", "flows"), ("search, rare word", "momentum")):
            times = []
            for _ in range(rounds):
                started = time.perf_counter()
                await tools.search(
                    ctx, EVERYONE, tools.SearchRequest(channels=["floor"], query=query, limit=20)
                )
                times.append(time.perf_counter() - started)
            rows.append(f"{label:<28} {_p(times)}")
        times = []
        for _ in range(rounds):
            after = format_rfc3339(END_US - rng.randrange(30 * DAY_US))
            started = time.perf_counter()
            await tools.messages(
                ctx, EVERYONE, tools.MessagesRequest(channels=["floor"], after=after, limit=20)
            )
            times.append(time.perf_counter() - started)
        rows.append(f"{'browse 20 from a random time':<28} {_p(times)}")
        times = []
        for _ in range(rounds):
            after = format_rfc3339(END_US - rng.randrange(30 * DAY_US))
            started = time.perf_counter()
            body = tools.MessagesRequest(channels=["floor"], after=after, limit=1)
            page = await tools.messages(ctx, EVERYONE, body)
            handle = page["messages"][0]["source_handle"] if page["messages"] else None
            if handle:
                await tools.messages(ctx, EVERYONE, tools.MessagesRequest(source_handles=[handle]))
            times.append(time.perf_counter() - started)
        rows.append(f"{'browse 1 + fetch by handle':<28} {_p(times)}")
    finally:
        await store.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--cache", help="keep the built store in this folder and reuse it")
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.cache or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        queried = args.large // 10
        path = folder / f"store-{args.large}-{queried}-{END_US // 3_600_000_000}.db"
        if not path.exists():
            asyncio.run(build(path, args.large, queried, 99))
        rows = asyncio.run(measure(path, args.rounds))
    print(f"machine: {machine()}")
    print(f"store of {args.large:,} messages, queried channel {queried:,} over 30 days:")
    for row in rows:
        print("  " + row)


if __name__ == "__main__":
    main()
