"""Ingest throughput: library path (batches of 1000) and HTTP path (batches of 500).

Prints messages/second for each path, a same-run baseline (plain sqlite3
executemany of the same rows into one table, same durability settings) and the
ratio of each path to it, plus the machine. Run: ``make bench`` or
``python bench/ingest.py [--messages N]``.
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
from pathlib import Path

import httpx
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
        rows = [
            (
                e["channel_id"],
                e["message"]["id"],
                e["message"]["author_name"],
                e["message"]["created_at"],
                e["message"]["content"],
            )
            for e in json.loads(payload)["events"]
        ]
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO m VALUES (?, ?, ?, ?, ?)", rows)
        conn.execute("COMMIT")
        total += len(rows)
    elapsed = time.perf_counter() - started
    conn.close()
    return total / elapsed


async def library(folder: Path, payloads: list[bytes]) -> float:
    store = await Store.open(folder / "library.db")
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


def http(folder: Path, payloads: list[bytes], *flags: str) -> float:
    name = "http" + "".join(flags).replace("-", "_") + ".db"
    with served(folder / name, *flags) as url, httpx.Client(base_url=url, timeout=60) as client:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=50_000)
    args = parser.parse_args()
    library_payloads = bodies(args.messages, 1000)
    http_payloads = bodies(args.messages, 500)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        base = baseline(folder, library_payloads)
        lib = asyncio.run(library(folder, library_payloads))
        web_alone = http(folder, http_payloads, "--no-worker")
        web = http(folder, http_payloads)
    print(f"machine: {machine()}")
    print(f"messages per path: {args.messages} (content ~300 chars, 4 channels)")
    print(f"{'path':<34} {'msg/s':>10} {'vs baseline':>12}")
    print(f"{'baseline: sqlite3 executemany':<34} {base:>10,.0f} {1.0:>11.2f}x")
    print(f"{'library, batches of 1000':<34} {lib:>10,.0f} {lib / base:>11.2f}x")
    print(f"{'HTTP loopback, batches of 500':<34} {web_alone:>10,.0f} {web_alone / base:>11.2f}x")
    print(f"{'  same, worker deriving alongside':<34} {web:>10,.0f} {web / base:>11.2f}x")


if __name__ == "__main__":
    main()
