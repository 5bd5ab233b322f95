"""MCP start benchmark: how long an agent waits for ``channel-memory mcp`` to answer.

Spawns the real command over stdio with the MCP SDK's own client (as an agent's host
does) against a small SQLite store, and times each start from the spawn to the answered
``initialize`` and ``tools/list``. The baseline, in the same run, is the interpreter
starting the package (``python -m channel_memory --version``); besides, in process, the
time loading the rules and their model takes, which the MCP server leaves until a
derivation asks for them (it never derives: its tools read).

Run: ``python bench/mcp_start.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ingest import machine
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from channel_memory.store import Store

TOKEN = "bench-read-token-0123456789"
_LOADING = (
    "import time\n"
    "from channel_memory.kernel.config import Settings\n"
    "from channel_memory.worker.runner import derive_settings\n"
    "started = time.perf_counter()\n"
    "derive_settings(Settings())\n"
    "print(time.perf_counter() - started)\n"
)
"""Loading the rules and their model in a fresh interpreter (nothing cached), timed."""


async def _one_start(db: Path, config: Path, env: dict[str, str]) -> float:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "channel_memory", "mcp", "--db", str(db), "--config", str(config)],
        env=env,
    )
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        answered = time.perf_counter() - started
    assert tools.tools, "the server listed no tools"
    return answered


def _version_start(env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "channel_memory", "--version"],
        env=env,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def _loading(env: dict[str, str]) -> float:
    run = subprocess.run(
        [sys.executable, "-c", _LOADING], env=env, check=True, capture_output=True, text=True
    )
    return float(run.stdout)


async def measure(rounds: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        db, config = Path(tmp) / "cm.sqlite3", Path(tmp) / "cm.toml"
        config.write_text(
            f'[[tokens]]\ntoken = "{TOKEN}"\nscopes = ["read"]\nagent_id = "bench"\n'
            'channels = ["*"]\n'
        )
        await (await Store.open(db)).close()
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHANNEL_MEMORY_")}
        env["CHANNEL_MEMORY_MCP_TOKEN"] = TOKEN
        _version_start(env)  # warm the file cache for both
        await _one_start(db, config, env)
        starts, versions = [], []
        for _ in range(rounds):
            starts.append(await _one_start(db, config, env))
            versions.append(_version_start(env))
        loading = _loading(env)
    start, version = statistics.median(starts), statistics.median(versions)
    return [
        f"mcp answered initialize and tools/list: median {start:.2f} s over {rounds} starts "
        f"(min {min(starts):.2f}, max {max(starts):.2f})",
        f"baseline, the interpreter starting the package (--version): median {version:.2f} s; "
        f"mcp start = {start / version:.1f}x the baseline",
        f"loading the rules and their model (left until a derivation asks): {loading:.2f} s "
        "in a fresh interpreter",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(machine())
    for line in asyncio.run(measure(args.rounds)):
        print(line)


if __name__ == "__main__":
    main()
