"""A bounded soak on loopback: ingest clients, feed pollers and tool callers at once.

The server runs as its own process (``channel-memory serve``, worker included); the
clients are threads here. Every response is recorded: status, latency, and whether its
body mentions a locked database. A monitor reads ``/v1/stats`` twice a second for the
worker's lag (the age of the oldest unprocessed change).

Run ``python bench/soak.py [--seconds 60]`` (``make soak``); ``tests/test_load.py`` runs
a short one in ``make test``.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

CHANNELS = [f"desk{i}" for i in range(4)]
LINES = [
    "FILLED {n} NVDA @ 131.{m:02d}",
    "Stop moved to {n} on AAPL.",
    "Tape is two-way into the close; breadth {n}, volume light.",
    "ok",
    "HEARTBEAT_OK",
    "Semis lead again, dispersion wide across megacaps ({n}).",
]


@dataclass
class Results:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, dict[int, int]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(int))
    )
    locked: int = 0
    max_lag_s: float = 0.0
    seconds: float = 0.0
    messages: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, started: float, response: httpx.Response) -> None:
        elapsed = time.perf_counter() - started
        with self.lock:
            self.latencies[kind].append(elapsed)
            self.statuses[kind][response.status_code] += 1
            if "locked" in response.text.lower():
                self.locked += 1

    def server_errors(self) -> int:
        return sum(n for codes in self.statuses.values() for c, n in codes.items() if c >= 500)

    def summary(self) -> dict[str, dict[str, float]]:
        out = {}
        for kind, values in sorted(self.latencies.items()):
            ordered = sorted(values)
            out[kind] = {
                "requests": len(ordered),
                "per_s": len(ordered) / self.seconds,
                "p50_ms": 1000 * ordered[len(ordered) // 2],
                "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
            }
        return out


def start_server(db: Path, **env: str) -> tuple[subprocess.Popen[str], str]:
    """``channel-memory serve`` (worker included) on a free loopback port, and its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "channel_memory", "serve", "--db", str(db), "--port", "0",
         "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "CHANNEL_MEMORY_TOKEN": "", **env},
    )  # fmt: skip
    assert process.stdout is not None
    banner = process.stdout.readline()
    return process, banner.split("listening on ")[1].split()[0]


def _iso(micros: int) -> str:
    from channel_memory.kernel.timefmt import format_rfc3339

    return format_rfc3339(micros)


def run_soak(
    seconds: float, ingesters: int = 4, pollers: int = 16, tool_callers: int = 4
) -> Results:
    results = Results()
    stop = threading.Event()
    with tempfile.TemporaryDirectory() as folder:
        process, url = start_server(Path(folder) / "soak.db")
        try:
            with httpx.Client(base_url=url, timeout=60) as client:  # the channels exist
                seed = [{"type": "message", "channel_id": c, "message": {"id": "seed",
                         "author_name": "ops", "created_at": _iso(time.time_ns() // 1000),
                         "content": "desk open"}} for c in CHANNELS]  # fmt: skip
                client.post("/v1/ingest", json={"events": seed}).raise_for_status()

            def ingest(worker: int) -> None:
                batch_no = 0
                with httpx.Client(base_url=url, timeout=60) as client:
                    while not stop.is_set():
                        now = time.time_ns() // 1000
                        events = [
                            {"type": "message", "channel_id": CHANNELS[(worker + i) % 4],
                             "message": {"id": f"w{worker}-b{batch_no}-m{i}",
                                         "author_name": f"author-{i % 5}",
                                         "created_at": _iso(now - 1_000_000 + i),
                                         "content": LINES[i % len(LINES)].format(n=batch_no, m=i)}}
                            for i in range(20)
                        ]  # fmt: skip
                        started = time.perf_counter()
                        response = client.post("/v1/ingest", json={"events": events})
                        results.record("ingest (20 messages)", started, response)
                        if response.status_code == 200:
                            with results.lock:
                                results.messages += 20
                        batch_no += 1

            def poll(worker: int) -> None:
                with httpx.Client(base_url=url, timeout=60) as client:
                    while not stop.is_set():
                        started = time.perf_counter()
                        response = client.get(
                            "/channel-awareness", params={"channels": CHANNELS[worker % 4]}
                        )
                        results.record("feed", started, response)

            def tools(worker: int) -> None:
                with httpx.Client(base_url=url, timeout=60) as client:
                    while not stop.is_set():
                        started = time.perf_counter()
                        response = client.post(
                            "/v1/tools/search_channel_context",
                            json={"channels": [CHANNELS[worker % 4]], "query": "stop moved"},
                        )
                        results.record("tools: search", started, response)
                        started = time.perf_counter()
                        response = client.post(
                            "/v1/tools/get_channel_messages",
                            json={"channels": [CHANNELS[worker % 4]], "limit": 20},
                        )
                        results.record("tools: browse", started, response)

            def monitor() -> None:
                from channel_memory.kernel.timefmt import parse_rfc3339

                with httpx.Client(base_url=url, timeout=60) as client:
                    while not stop.wait(0.5):
                        oldest = client.get("/v1/stats").json()["worker"]["oldest_change"]
                        if oldest is not None:
                            lag = (time.time_ns() // 1000 - parse_rfc3339(oldest)) / 1e6
                            results.max_lag_s = max(results.max_lag_s, lag)

            threads = [threading.Thread(target=ingest, args=(i,)) for i in range(ingesters)]
            threads += [threading.Thread(target=poll, args=(i,)) for i in range(pollers)]
            threads += [threading.Thread(target=tools, args=(i,)) for i in range(tool_callers)]
            threads.append(threading.Thread(target=monitor))
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            time.sleep(seconds)
            stop.set()
            for thread in threads:
                thread.join(timeout=120)
            results.seconds = time.perf_counter() - started
        finally:
            process.terminate()
            process.wait(timeout=60)
            assert process.stdout is not None
            process.stdout.close()
    return results


def report(results: Results) -> str:
    lines = [
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        f"soak: {results.seconds:.0f} s, {results.messages:,} messages ingested "
        f"({results.messages / results.seconds:,.0f}/s), 5xx: {results.server_errors()}, "
        f"'database is locked' seen by clients: {results.locked}, "
        f"worker lag max {results.max_lag_s:.2f} s",
    ]
    for kind, figures in results.summary().items():
        errors = {c: n for c, n in results.statuses[kind].items() if c >= 400}
        lines.append(
            f"  {kind:<22} {figures['per_s']:>7.1f} req/s  p50 {figures['p50_ms']:>7.1f} ms  "
            f"p99 {figures['p99_ms']:>7.1f} ms" + (f"  errors {errors}" if errors else "")
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> Any:
    args = argparse.ArgumentParser(description=__doc__)
    args.add_argument("--seconds", type=float, default=60.0)
    parsed = args.parse_args(argv)
    results = run_soak(parsed.seconds)
    print(report(results))
    return 0 if results.server_errors() == 0 and results.locked == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
