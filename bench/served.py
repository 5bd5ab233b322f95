"""A `channel-memory serve` process for the benchmarks, on a loopback port the OS picks."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


@contextmanager
def served(db: Path | str, *flags: str) -> Iterator[str]:
    """Start the server on ``db`` — an SQLite file or a ``postgresql://`` URL — (retention
    off, no token) and yield its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "channel_memory", "serve", "--port", "0", "--log-level",
         "warning", "--db", str(db), *flags],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "CHANNEL_MEMORY_TOKEN": "", "CHANNEL_MEMORY_RETENTION__DAYS": "100000"},
    )  # fmt: skip
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split("listening on ")[1].split()[0]
        httpx.get(url + "/health", timeout=60).raise_for_status()
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            # a worker with a backlog drains all of it before its server exits; the bench
            # has measured what it came for, and the store is thrown away
            print("(a server still draining its backlog 60 s after SIGTERM: killed)",
                  file=sys.stderr)  # fmt: skip
            process.kill()
            process.wait(timeout=60)
        assert process.stdout is not None
        process.stdout.close()
