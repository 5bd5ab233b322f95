"""Ingest throughput: library path (batches of 1000) and HTTP path (batches of 500).

Prints messages/second for each path, a same-run baseline (plain sqlite3
executemany of the same rows into one table, same durability settings) and the
ratio of each path to it, plus the machine. With PostgreSQL (``--backends``, both by
default) the same paths run again, each on a fresh database of a throwaway server the
bench starts, beside PostgreSQL's own baseline (asyncpg executemany of the same rows
into one table, commits waiting for the disk as SQLite's do); those rows give their
ratio to the sqlite3 baseline and to the same path's SQLite row. Run: ``make bench`` or
``python bench/ingest.py [--messages N] [--backends sqlite,postgres]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import asyncpg
import httpx
from pg import Target, add_backends_option, cluster, databases, describe
from served import served

from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.kernel.config import Settings
from channel_memory.store import Store
from channel_memory.worker.runner import derive_hook, derive_settings

DERIVE = derive_hook(derive_settings(Settings()))
WORDS = [
    "NVDA",
    "AAPL",
    "desk",
    "route",
    "stop",
    "target",
    "fill",
    "review",
    "thesis",
    "risk",
    "flat",
    "long",
    "short",
    "auction",
    "curve",
    "bid",
    "offer",
    "size",
    "print",
    "volume",
    "momentum",
]


def events(count: int, offset: int = 0) -> list[dict[str, object]]:
    out = []
    for i in range(offset, offset + count):
        words = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(45))
        clock = f"{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}"
        out.append(
            {
                "type": "message",
                "channel_id": f"floor-{i % 4}",
                "message": {
                    "id": str(100_000 + i),
                    "author_id": f"u{i % 9}",
                    "author_name": f"analyst-{i % 9}",
                    "created_at": f"2026-05-21T{clock}Z",
                    "content": f"{i}: {words}",
                },
            }
        )
    return out


def bodies(total: int, size: int) -> list[bytes]:
    return [
        json.dumps({"events": events(min(size, total - start), start)}).encode()
        for start in range(0, total, size)
    ]


def baseline_rows(payload: bytes) -> list[tuple[str, str, str, str, str]]:
    """The rows both baselines insert for one batch: channel, id, author, time, content."""
    return [
        (
            e["channel_id"],
            e["message"]["id"],
            e["message"]["author_name"],
            e["message"]["created_at"],
            e["message"]["content"],
        )
        for e in json.loads(payload)["events"]
    ]


def baseline(folder: Path, payloads: list[bytes]) -> float:
    conn = sqlite3.connect(folder / "baseline.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute(
        "CREATE TABLE m (channel_id, message_id, author, created_at, content, PRIMARY KEY "
        "(channel_id, message_id))"
    )
    started = time.perf_counter()
    total = 0
    for payload in payloads:
        rows = baseline_rows(payload)
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO m VALUES (?, ?, ?, ?, ?)", rows)
        conn.execute("COMMIT")
        total += len(rows)
    elapsed = time.perf_counter() - started
    conn.close()
    return total / elapsed


async def pg_baseline(url: str, payloads: list[bytes]) -> float:
    """The sqlite3 baseline's work on PostgreSQL: the same rows into one table, one
    transaction per batch."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "CREATE TABLE m (channel_id text, message_id text, author text, created_at text, "
            "content text, PRIMARY KEY (channel_id, message_id))"
        )
        started = time.perf_counter()
        total = 0
        for payload in payloads:
            rows = baseline_rows(payload)
            async with conn.transaction():
                await conn.executemany("INSERT INTO m VALUES ($1, $2, $3, $4, $5)", rows)
            total += len(rows)
        return total / (time.perf_counter() - started)
    finally:
        await conn.close()


async def library(db: Target, payloads: list[bytes]) -> float:
    store = await Store.open(db)
    try:
        started = time.perf_counter()
        total = 0
        for payload in payloads:
            batch = IngestBatch.model_validate_json(payload)
            await ingest(
                store,
                [e.channel_id for e in batch.events],
                native_commands(batch.events),
                now_us=time.time_ns() // 1000,
                derive=DERIVE,
            )
            total += len(batch.events)
        return total / (time.perf_counter() - started)
    finally:
        await store.close()


def http(db: Target, payloads: list[bytes], *flags: str) -> float:
    with served(db, *flags) as url, httpx.Client(base_url=url, timeout=60) as client:
        started = time.perf_counter()
        total = 0
        for payload in payloads:
            response = client.post(
                "/v1/ingest", content=payload, headers={"content-type": "application/json"}
            )
            response.raise_for_status()
            total += len(response.json()["results"])
        return total / (time.perf_counter() - started)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}, {platform.system()} {platform.release()}"
    )


PATHS = (
    "library, batches of 1000",
    "HTTP loopback, batches of 500",
    "  same, worker deriving alongside",
)


def measure(db: Callable[[str], Target], library_payloads: list[bytes],
            http_payloads: list[bytes]) -> list[float]:  # fmt: skip
    """msg/s of each of ``PATHS``, each on a fresh store ``db(name)``."""
    return [
        asyncio.run(library(db("library"), library_payloads)),
        http(db("http_no_worker"), http_payloads, "--no-worker"),
        http(db("http"), http_payloads),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=50_000)
    add_backends_option(parser)
    args = parser.parse_args()
    library_payloads = bodies(args.messages, 1000)
    http_payloads = bodies(args.messages, 500)
    rates: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as name, cluster(args.backends) as server:
        folder = Path(name)
        base = baseline(folder, library_payloads)
        for backend in args.backends:
            fresh = databases(backend, folder, server)
            rates[backend] = measure(fresh, library_payloads, http_payloads)
        if server is not None:
            pg_base = asyncio.run(pg_baseline(server.create_database(), library_payloads))
            postgres = describe(server)
    print(f"machine: {machine()}")
    if server is not None:
        print(f"postgresql: {postgres}")
    print(f"messages per path: {args.messages} (content ~300 chars, 4 channels)")
    print(f"{'path':<34} {'msg/s':>10} {'vs baseline':>12}")
    print(f"{'baseline: sqlite3 executemany':<34} {base:>10,.0f} {1.0:>11.2f}x")
    for path, rate in zip(PATHS, rates.get("sqlite", []), strict=False):
        print(f"{path:<34} {rate:>10,.0f} {rate / base:>11.2f}x")
    if "postgres" in rates:
        print("PostgreSQL, a fresh database per path (vs the sqlite3 baseline; vs SQLite's row):")
        print(f"{'baseline: asyncpg executemany':<34} {pg_base:>10,.0f} {pg_base / base:>11.2f}x")
        for n, (path, rate) in enumerate(zip(PATHS, rates["postgres"], strict=True)):
            beside = f" {rate / rates['sqlite'][n]:>8.2f}x SQLite" if "sqlite" in rates else ""
            print(f"{path:<34} {rate:>10,.0f} {rate / base:>11.2f}x{beside}")


if __name__ == "__main__":
    main()
