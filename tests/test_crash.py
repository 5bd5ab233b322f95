"""Crash safety: a server killed with SIGKILL mid-ingest loses no acknowledged batch."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from tests.conftest import message_event, query

BATCH_SIZE = 40
ROUNDS = 5


def start_server(db: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "channel_memory", "serve", "--db", str(db), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "CHANNEL_MEMORY_TOKEN": "", "CHANNEL_MEMORY_RETENTION__DAYS": "100000"},
    )
    assert process.stdout is not None
    banner = process.stdout.readline()
    return process, banner.split("listening on ")[1].split()[0]


def kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.stdout is not None
    process.stdout.close()


def batch(batch_id: int) -> dict[str, object]:
    return {
        "events": [
            message_event(f"b{batch_id}-m{i}", f"batch {batch_id} message {i} " + "x" * 200)
            for i in range(BATCH_SIZE)
        ]
    }


def test_acknowledged_batches_survive_sigkill(tmp_path: Path) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    db = tmp_path / "crash.db"
    acked: set[int] = set()
    attempted: set[int] = set()
    lock = threading.Lock()
    next_id = iter(range(1_000_000))

    for _ in range(ROUNDS):
        process, url = start_server(db)
        target = len(acked) + rng.randint(1, 12)
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
        # Requests from the other senders are still in flight: kill now, mid-write.
        kill(process)
        stop.set()
        for thread in senders:
            thread.join(timeout=60)

    # Restart once more: the store opens cleanly and reads see a consistent state.
    process, url = start_server(db)
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            for batch_id in sorted(acked):
                ids = [f"b{batch_id}-m{i}" for i in range(BATCH_SIZE)]
                found = client.post(
                    "/source-messages", json={"channel_id": "floor", "message_ids": ids}
                ).json()
                assert found["not_found"] == [], f"seed {seed}: batch {batch_id} lost"
    finally:
        kill(process)

    counts = dict(
        query(
            db,
            "SELECT substr(message_id, 2, instr(message_id, '-') - 2), count(*) "
            "FROM source_messages GROUP BY 1",
        )
    )
    for batch_id, count in counts.items():
        # all or nothing, and never twice
        assert count == BATCH_SIZE, f"seed {seed}: batch {batch_id} has {count} rows"
        assert int(batch_id) in attempted
    assert {int(b) for b in counts} >= acked
    assert query(db, "PRAGMA integrity_check") == [("ok",)]
    # dirty markers left by the crashes are processed by the next worker run
    drained = subprocess.run(
        [sys.executable, "-m", "channel_memory", "worker", "--once", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CHANNEL_MEMORY_RETENTION__DAYS": "100000"},
        check=True,
    )
    assert json.loads(drained.stdout)["processed"] >= 0
    assert query(db, "SELECT count(*) FROM dirty_messages") == [(0,)]
    assert query(db, "SELECT count(*) FROM derived_messages") == [(len(counts) * BATCH_SIZE,)]
