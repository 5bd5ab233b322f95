"""Crash safety: a server (with its worker) killed with SIGKILL at random points under
sustained ingest loses no acknowledged batch, never shows half a batch, processes the
dirty markers the crashes left, and settles to the feed a never-crashed run serves.

``CHANNEL_MEMORY_CRASH_ROUNDS`` sets the rounds (12 here, 100 under ``make soak``).
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx

from bench.soak import start_server as serve_process
from channel_memory.kernel.timefmt import format_rfc3339
from tests.conftest import message_event, query

BATCH_SIZE = 40
ROUNDS = int(os.environ.get("CHANNEL_MEMORY_CRASH_ROUNDS", "12"))
# Messages are dated just before the run, so every server's 24 h feed window holds them.
BASE_US = (time.time_ns() // 1000) - 3 * 3600 * 1_000_000
KINDS = [
    "FILLED {n} NVDA @ 131.{m:02d}",
    "Stop moved to {n} on AAPL.",
    "ok",
    "HEARTBEAT_OK",
    "Tape is two-way into the close, breadth {n} and volume light {m}.",
    "Semis lead again; dispersion stays wide across megacaps {n}.",
    "Same conclusion as before: no trade.",
]


def start_server(db: Path) -> tuple[subprocess.Popen[str], str]:
    return serve_process(db, CHANNEL_MEMORY_RETENTION__DAYS="100000")


def kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.stdout is not None
    process.stdout.close()


def batch(batch_id: int) -> dict[str, object]:
    """A deterministic batch: hard events, noise, repeats and chatter, in a second of its own."""
    events = []
    for i in range(BATCH_SIZE):
        text = KINDS[(batch_id + i) % len(KINDS)].format(n=100 + batch_id, m=i)
        # a second per batch: even thousands of batches stay in the past, inside the window
        created = BASE_US + batch_id * 1_000_000 + i * 20_000
        events.append(
            message_event(
                f"b{batch_id}-m{i}",
                f"{text} [{batch_id}.{i}]" if i % 3 else text,
                created_at=format_rfc3339(created),
                author=("desk-lead", "analyst-a", "ops-bot")[i % 3],
            )
        )
    return {"events": events}


def settle(url: str) -> httpx.Client:
    """Wait until the server's worker has processed every change; the feed is then ``ok``."""
    with httpx.Client(base_url=url, timeout=30) as client:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            stats = client.get("/v1/stats").json()
            if stats["worker"]["queue_depth"] == 0:
                header = client.get("/channel-awareness", params={"channels": "floor"}).text
                if " digest=ok " in header.split("\n", 1)[0]:
                    return httpx.Client(base_url=url, timeout=30)
            time.sleep(0.1)  # waiting on another process's worker, not on time itself
    raise AssertionError("the worker did not settle")


# read ids are keyed by each database's own secret: two databases never share them
GENERATED = re.compile(
    r'(digest_generated_at=|"digest_generated_at":|"generated_at":|read_id=|"read_id":)"?[^ ",]*"?'
)


def feeds(client: httpx.Client) -> list[str]:
    """The feed as a proxy reads it, without the worker's generation timestamps and read ids."""
    bodies = []
    for params in ({"max_chars": 8192}, {"max_chars": 60000}, {"format": "json"}):
        response = client.get("/channel-awareness", params={"channels": "floor", **params})
        assert response.status_code == 200
        bodies.append(GENERATED.sub(r"\1-", response.text))
    return bodies


def test_acknowledged_batches_survive_sigkill_and_converge(tmp_path: Path) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    db = tmp_path / "crash.db"
    acked: set[int] = set()
    attempted: set[int] = set()
    lock = threading.Lock()
    next_id = iter(range(1_000_000))

    for _ in range(ROUNDS):
        process, url = start_server(db)
        target = len(acked) + rng.randint(1, 8)
        stop = threading.Event()

        def sender(url: str = url, stop: threading.Event = stop, target: int = target) -> None:
            with httpx.Client(base_url=url, timeout=30) as client:
                while not stop.is_set():
                    with lock:
                        batch_id = next(next_id)
                        attempted.add(batch_id)
                    try:
                        response = client.post("/v1/ingest", json=batch(batch_id))
                    except httpx.HTTPError:
                        return
                    if response.status_code == 200:
                        with lock:
                            acked.add(batch_id)
                            if len(acked) >= target:
                                stop.set()

        senders = [threading.Thread(target=sender) for _ in range(3)]
        for thread in senders:
            thread.start()
        stop.wait(timeout=120)
        # a random moment after the target: other requests and the worker are mid-write
        time.sleep(rng.random() * 0.05)
        kill(process)
        stop.set()
        for thread in senders:
            thread.join(timeout=60)

    assert query(db, "PRAGMA integrity_check") == [("ok",)]
    # Restart with the worker: it finishes what the crashes left, the feed settles to ok.
    process, url = start_server(db)
    try:
        with settle(url) as client:
            for batch_id in sorted(acked):
                ids = [f"b{batch_id}-m{i}" for i in range(BATCH_SIZE)]
                found = client.post(
                    "/source-messages", json={"channel_id": "floor", "message_ids": ids}
                ).json()
                assert found["not_found"] == [], f"seed {seed}: batch {batch_id} lost"
            crashed = feeds(client)
    finally:
        kill(process)

    counts = dict(
        query(
            db,
            "SELECT substr(message_id, 2, instr(message_id, '-') - 2), count(*) "
            "FROM source_messages GROUP BY 1",
        )
    )
    stored = sorted(int(b) for b in counts)
    for batch_id, count in counts.items():
        # all or nothing, and never twice
        assert count == BATCH_SIZE, f"seed {seed}: batch {batch_id} has {count} rows"
        assert int(batch_id) in attempted
    assert set(stored) >= acked
    assert query(db, "SELECT count(*) FROM dirty_messages") == [(0,)]
    assert query(db, "SELECT count(*) FROM derived_messages") == [(len(stored) * BATCH_SIZE,)]

    # The same input, never crashed: the feed is the same, byte for byte.
    reference_db = tmp_path / "reference.db"
    process, url = start_server(reference_db)
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            for batch_id in stored:
                assert client.post("/v1/ingest", json=batch(batch_id)).status_code == 200
        with settle(url) as client:
            reference = feeds(client)
    finally:
        kill(process)
    for got, expected in zip(crashed, reference, strict=True):
        assert got == expected, f"seed {seed}: the crashed run's feed differs"
    blocks = "SELECT id, kind, text, sources FROM recall_blocks ORDER BY id"
    assert query(db, blocks) == query(reference_db, blocks), f"seed {seed}: blocks differ"
