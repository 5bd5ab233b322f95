"""`channel-memory mcp`: the SDK's own client over stdio lists and calls every tool."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from channel_memory.config import Settings
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.store import Store
from channel_memory.timefmt import format_rfc3339
from channel_memory.worker.runner import Worker
from tests.conftest import message_event

pytestmark = pytest.mark.anyio
READ = "read-token-0123456789ab"


def _ago(now_us: int, minutes: int) -> str:
    return format_rfc3339(now_us - minutes * 60_000_000)


async def _seed(db: Path) -> None:
    # the MCP server reads the feed on the wall clock: the data is recent
    now = time.time_ns() // 1000
    settings = Settings(db=db, retention={"days": 100_000})
    store = await Store.open(db)
    try:
        worker = Worker(store, settings, lambda: now)
        await worker.prepare()
        events = [
            message_event("1", "FILLED 200 NVDA @ 131.20", created_at=_ago(now, 300)),
            *(
                message_event(
                    f"h{i}", "HEARTBEAT_OK", author="bot", created_at=f"2026-05-21T15:0{i}:00Z"
                )
                for i in range(3)
            ),
            message_event("big", "x" * 30_000, created_at=_ago(now, 100)),
            message_event("s", "secret ops", channel="ops", created_at=_ago(now, 100)),
        ]
        batch = IngestBatch.model_validate({"events": events})
        await ingest(
            store, ["floor", "ops"], native_commands(batch.events), now_us=now, derive=worker.hook
        )
        await worker.drain()
    finally:
        await store.close()


def _text(result: Any) -> str:
    [content] = result.content
    text: str = content.text
    return text


async def test_mcp_round_trip(tmp_path: Path) -> None:
    db = tmp_path / "mcp.db"
    await _seed(db)
    config = tmp_path / "cm.toml"
    config.write_text(
        f'[[tokens]]\ntoken = "{READ}"\nscopes = ["read"]\n'
        'agent_id = "mcp-agent"\nchannels = ["floor"]\n'
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "channel_memory", "mcp", "--db", str(db), "--config", str(config)],
        env={
            **os.environ,
            "CHANNEL_MEMORY_MCP_TOKEN": READ,
            "CHANNEL_MEMORY_TOOLS__RESULT_BUDGET_CHARS": "4000",
        },
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        names = {tool.name for tool in listed.tools}
        assert names == {
            "search_channel_context",
            "get_channel_messages",
            "expand_digest_block",
            "channel_awareness",
        }
        assert all(tool.description for tool in listed.tools)

        found = json.loads(
            _text(
                await session.call_tool(
                    "search_channel_context", {"channels": ["floor"], "query": "nvda"}
                )
            )
        )
        assert [h["source_handle"] for h in found["hits"]] == ["floor/1"]

        browsed_text = _text(
            await session.call_tool("get_channel_messages", {"channels": ["floor"]})
        )
        assert len(browsed_text) <= 4000
        browsed = json.loads(browsed_text)
        assert browsed["read_content"] == [{"source_handle": "floor/big", "content_chars": 30_000}]

        pieces: list[str] = []
        args: dict[str, Any] = {"source_handles": ["floor/big"]}
        while True:
            text = _text(await session.call_tool("get_channel_messages", args))
            assert len(text) <= 4000
            fragment = json.loads(text)["fragment"]
            pieces.append(fragment["content"])
            if "next_content_cursor" not in fragment:
                break
            args = {"content_cursor": fragment["next_content_cursor"]}
        assert "".join(pieces) == "x" * 30_000

        noise = json.loads(
            _text(
                await session.call_tool(
                    "search_channel_context", {"channels": ["floor"], "query": "runtime status"}
                )
            )
        )
        block_id = noise["hits"][0]["block_id"]
        block = json.loads(
            _text(await session.call_tool("expand_digest_block", {"block_id": block_id}))
        )
        assert [p["source_handle"] for p in block["provenance"]] == [
            "floor/h0",
            "floor/h1",
            "floor/h2",
        ]

        feed = _text(
            await session.call_tool("channel_awareness", {"channels": ["floor"], "max_chars": 3000})
        )
        assert feed.startswith("[channel-awareness] ") and len(feed) <= 3000
        assert "hard:trade_fill floor/1" in feed

        refused = await session.call_tool(
            "search_channel_context", {"channels": ["ops"], "query": "secret"}
        )
        assert refused.is_error and "channel_not_found" in _text(refused)
