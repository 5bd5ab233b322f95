"""`channel-memory mcp`: the SDK's own client over stdio, against the real command.

Every result is measured as the client receives it: the text blocks and the
structured content, each within the result budget, never the same JSON twice.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import BaseModel, ValidationError

from channel_memory import __version__
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.kernel.config import Settings
from channel_memory.kernel.errors import ApiError
from channel_memory.kernel.timefmt import format_rfc3339
from channel_memory.store import Store
from channel_memory.tools.budget import compact
from channel_memory.tools.mcp_budget import TEXT_MARK, bound_result
from channel_memory.tools.mcp_server import ToolFailure, refusal_of, render
from channel_memory.tools.retrieval import SearchRequest
from channel_memory.worker import runner
from channel_memory.worker.rules import RulesError, RuleSet
from channel_memory.worker.runner import Worker, lazy_derive_hook
from tests.conftest import message_event

pytestmark = pytest.mark.anyio
READ = "read-token-0123456789ab"
INGEST = "ingest-token-0123456789ab"
EVERYTHING = "all-scopes-token-0123456789"
BUDGET = 12_000  # tools.result_budget_chars by default
COMMAND = [sys.executable, "-m", "channel_memory", "mcp"]


def _ago(now_us: int, minutes: float) -> str:
    return format_rfc3339(now_us - int(minutes * 60_000_000))


async def _store(db: Path, events: list[dict[str, Any]], now: int) -> None:
    settings = Settings(db=db, retention={"days": 100_000})
    store = await Store.open(db)
    try:
        worker = Worker(store, settings, lambda: now)
        await worker.prepare()
        for start in range(0, len(events), 100):
            batch = IngestBatch.model_validate({"events": events[start : start + 100]})
            await ingest(
                store,
                [e.channel_id for e in batch.events],
                native_commands(batch.events),
                now_us=now,
                derive=worker.hook,
            )
        await worker.drain()
    finally:
        await store.close()


async def _seed(db: Path) -> None:
    # the MCP server reads the feed on the wall clock: the data is recent
    now = time.time_ns() // 1000
    await _store(
        db,
        [
            message_event("1", "FILLED 200 NVDA @ 131.20", created_at=_ago(now, 300)),
            *(
                message_event(
                    f"h{i}", "HEARTBEAT_OK", author="bot", created_at=f"2026-05-21T15:0{i}:00Z"
                )
                for i in range(3)
            ),
            message_event("big", "x" * 30_000, created_at=_ago(now, 100)),
            message_event("s", "secret ops", channel="ops", created_at=_ago(now, 100)),
            message_event("hb", "HEARTBEAT_OK", channel="ops", author="bot",
                          created_at="2026-05-21T15:00:00Z"),
        ],
        now,
    )  # fmt: skip


async def _seed_full(db: Path) -> None:
    """A desk that fills every result: 250 messages of 100-400 characters that all
    match one word, a run of 250 heartbeats (one block citing them all) and one huge
    message."""
    now = time.time_ns() // 1000
    rng = random.Random(12)
    words = ["ticket", "hedge", "spread", "fill", "desk", "quote", "risk", "book", "délai", "€"]
    events = []
    for i in range(250):
        size = rng.randint(100, 400)
        text = "ticket"
        while len(text) < size:
            text += " " + rng.choice(words)
        events.append(
            message_event(f"m{i:03d}", text[:size], channel="desk", author=f"trader-{i % 7}",
                          created_at=_ago(now, 600 - i))
        )  # fmt: skip
    events += [
        message_event(f"hb{i:03d}", "HEARTBEAT_OK", channel="desk", author="bot",
                      created_at=_ago(now, 1500 - i))
        for i in range(250)
    ]  # fmt: skip
    events.append(message_event("huge", "ticket " + "y" * 40_000, channel="desk",
                                created_at=_ago(now, 5)))  # fmt: skip
    await _store(db, events, now)


def _config(tmp_path: Path, token: str, scopes: str, channels: str) -> Path:
    config = tmp_path / "cm.toml"
    config.write_text(
        f'[[tokens]]\ntoken = "{token}"\nscopes = {scopes}\n'
        f'agent_id = "mcp-agent"\nchannels = {channels}\n'
    )
    return config


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHANNEL_MEMORY_")}
    return {**env, **values}


@asynccontextmanager
async def _session(args: list[str], env: dict[str, str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=COMMAND[0], args=[*COMMAND[1:], *args], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        yield session


def _texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


def _error(result: Any) -> dict[str, Any]:
    assert result.is_error
    [text] = _texts(result)
    body: dict[str, Any] = json.loads(text)["error"]
    return body


def _measure(result: Any) -> None:
    """Each part of a result as the client got it holds the budget; no JSON twice."""
    texts = _texts(result)
    assert sum(len(t) for t in texts) <= BUDGET
    structured = result.structured_content
    if structured is not None:
        encoded = compact(structured)
        assert len(encoded) <= BUDGET
        assert not (set(structured) == {"result"} and isinstance(structured["result"], str))
        for text in texts:
            assert encoded not in text
            with suppress(json.JSONDecodeError):
                assert json.loads(text) != structured


async def test_every_tool_result_holds_the_budget_as_received(tmp_path: Path) -> None:
    db = tmp_path / "full.db"
    await _seed_full(db)
    config = _config(tmp_path, READ, '["read"]', '["desk"]')
    env = _env(CHANNEL_MEMORY_MCP_TOKEN=READ)
    async with _session(["--db", str(db), "--config", str(config)], env) as session:
        init = await session.initialize()
        assert init.server_info.version == __version__

        found = await session.call_tool(
            "search_channel_context", {"channels": ["desk"], "query": "ticket", "limit": 100}
        )
        _measure(found)
        assert not found.is_error and found.structured_content["has_more"] is True
        assert len(found.structured_content["hits"]) >= 20

        browsed = await session.call_tool(
            "get_channel_messages", {"channels": ["desk"], "limit": 100}
        )
        _measure(browsed)
        page = browsed.structured_content
        assert len(page["messages"]) >= 20 and page["has_more"] is True
        assert f"next_cursor={page['next_cursor']}" in _texts(browsed)[0]

        handles = [f"desk/m{i:03d}" for i in range(100)]
        named = await session.call_tool(
            "get_channel_messages", {"source_handles": handles, "limit": 100}
        )
        _measure(named)
        assert named.structured_content["omitted"] > 0

        pieces: list[str] = []
        args: dict[str, Any] = {"source_handles": ["desk/huge"]}
        while True:
            part = await session.call_tool("get_channel_messages", args)
            _measure(part)
            fragment = part.structured_content["fragment"]
            pieces.append(fragment["content"])
            if "next_content_cursor" not in fragment:
                break
            args = {"content_cursor": fragment["next_content_cursor"]}
        assert "".join(pieces) == "ticket " + "y" * 40_000

        noise = await session.call_tool(
            "search_channel_context", {"channels": ["desk"], "query": "runtime status"}
        )
        block_id = noise.structured_content["hits"][0]["block_id"]
        block = await session.call_tool("expand_digest_block", {"block_id": block_id})
        _measure(block)
        assert not block.is_error and block.structured_content["id"] == block_id
        assert block.structured_content["provenance"]

        feed = await session.call_tool(
            "channel_awareness", {"channels": ["desk"], "max_chars": 50_000}
        )
        _measure(feed)
        assert feed.structured_content is None  # the feed is text alone
        assert _texts(feed)[0].startswith("[channel-awareness] ")


async def test_input_schemas_carry_each_arguments_description_and_bounds(tmp_path: Path) -> None:
    # a new user's trial: the tools' input schemas named the arguments and their types only;
    # they are the HTTP request models' own schemas, so what they say is what is accepted
    db = tmp_path / "mcp.db"
    await _seed(db)
    config = _config(tmp_path, READ, '["read"]', '["floor"]')
    env = _env(CHANNEL_MEMORY_MCP_TOKEN=READ)
    async with _session(["--db", str(db), "--config", str(config)], env) as session:
        await session.initialize()
        listed = {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}
    for name, schema in listed.items():
        assert schema["additionalProperties"] is False, name
        assert schema["properties"], name
        for field, spec in schema["properties"].items():
            assert spec.get("description"), (name, field)
    search = listed["search_channel_context"]
    assert search["required"] == ["channels", "query"]
    assert search["properties"]["channels"]["maxItems"] == 32
    assert search["properties"]["query"]["maxLength"] == 1024
    assert {"minimum": 1, "type": "integer"} in search["properties"]["limit"]["anyOf"]
    assert search["properties"] == {
        k: v
        for k, v in SearchRequest.model_json_schema()["properties"].items()
        if k in search["properties"]
    }
    messages = listed["get_channel_messages"]["properties"]
    assert messages["source_handles"]["anyOf"][0]["maxItems"] == 100
    feed = listed["channel_awareness"]
    assert feed["required"] == ["channels"]
    assert set(feed["properties"]) == {
        "channels", "since", "max_chars", "limit", "context_kind", "trigger", "unconsumed",
    }  # fmt: skip
    assert feed["properties"]["unconsumed"]["enum"] == ["all", "only"]
    # the tool takes no as_of: no description names it (the HTTP model's say "not with as_of")
    for field, spec in feed["properties"].items():
        assert "as_of" not in spec["description"], field
    assert feed["properties"]["trigger"]["description"].endswith("channel must be among channels.")
    # a new user's trial: "comma-separated in a query string" read as a string accepted
    assert feed["properties"]["channels"]["description"] == "Channel ids (1 to 32)."


async def test_round_trip_reads_and_refusals(tmp_path: Path) -> None:
    db = tmp_path / "mcp.db"
    await _seed(db)
    config = _config(tmp_path, READ, '["read"]', '["floor"]')
    env = _env(CHANNEL_MEMORY_MCP_TOKEN=READ, CHANNEL_MEMORY_TOOLS__RESULT_BUDGET_CHARS="4000")
    async with _session(["--db", str(db), "--config", str(config)], env) as session:
        await session.initialize()
        listed = await session.list_tools()
        schemas = {tool.name: tool.output_schema for tool in listed.tools}
        assert set(schemas) == {
            "search_channel_context",
            "get_channel_messages",
            "expand_digest_block",
            "channel_awareness",
            "settle_read",
        }
        assert all(tool.description for tool in listed.tools)
        assert schemas["channel_awareness"] is None
        assert all(schemas[n]["type"] == "object" for n in schemas if n != "channel_awareness")

        found = await session.call_tool(
            "search_channel_context", {"channels": ["floor"], "query": "nvda"}
        )
        assert [h["source_handle"] for h in found.structured_content["hits"]] == ["floor/1"]
        assert "source_handle=floor/1" in _texts(found)[0]

        browsed = await session.call_tool("get_channel_messages", {"channels": ["floor"]})
        assert browsed.structured_content["read_content"] == [
            {"source_handle": "floor/big", "content_chars": 30_000}
        ]

        noise = await session.call_tool(
            "search_channel_context", {"channels": ["floor"], "query": "runtime status"}
        )
        block_id = noise.structured_content["hits"][0]["block_id"]
        block = await session.call_tool("expand_digest_block", {"block_id": block_id})
        assert [p["source_handle"] for p in block.structured_content["provenance"]] == [
            "floor/h0",
            "floor/h1",
            "floor/h2",
        ]

        feed = await session.call_tool(
            "channel_awareness", {"channels": ["floor"], "max_chars": 3000}
        )
        [text] = _texts(feed)
        assert text.startswith("[channel-awareness] ") and len(text) <= 3000
        assert re.search(r"^\[\d\d:\d\d fill 1 ", text, re.M)


async def test_an_agent_settles_its_read_over_mcp_and_the_feed_then_serves_only_what_is_new(
    tmp_path: Path,
) -> None:
    # a new user's trial: over MCP a read could be recorded but never settled
    db = tmp_path / "mcp.db"
    await _seed(db)
    config = _config(tmp_path, READ, '["read"]', '["floor"]')
    env = _env(CHANNEL_MEMORY_MCP_TOKEN=READ)
    only_new = {"channels": ["floor"], "unconsumed": "only"}
    async with _session(["--db", str(db), "--config", str(config)], env) as session:
        await session.initialize()
        [first] = _texts(await session.call_tool("channel_awareness", only_new))
        read_id = re.search(r" read_id=(r_[\w-]+)", first.split("\n", 1)[0])
        assert read_id is not None and "FILLED 200 NVDA" in first
        failed = await session.call_tool(
            "settle_read", {"read_id": read_id.group(1), "outcome": "failed"}
        )
        assert failed.structured_content["outcome"] == "failed"
        assert failed.structured_content["versions"] >= 1
        # a read is settled once: the same again answers the same, the other outcome 409
        repeated = await session.call_tool(
            "settle_read", {"read_id": read_id.group(1), "outcome": "failed"}
        )
        assert repeated.structured_content == failed.structured_content
        refused = await session.call_tool(
            "settle_read", {"read_id": read_id.group(1), "outcome": "handled"}
        )
        assert _error(refused)["code"] == "read_already_settled"
        # failed: what it showed is still new
        [again] = _texts(await session.call_tool("channel_awareness", only_new))
        assert "FILLED 200 NVDA" in again
        # a read settled handled: what it showed is no longer new to this agent
        [third] = _texts(await session.call_tool("get_channel_messages", {"channels": ["floor"]}))
        fresh = await session.call_tool("channel_awareness", only_new)
        [fresh_text] = _texts(fresh)
        fresh_id = re.search(r" read_id=(r_[\w-]+)", fresh_text.split("\n", 1)[0])
        assert fresh_id is not None
        handled = await session.call_tool(
            "settle_read", {"read_id": fresh_id.group(1), "outcome": "handled"}
        )
        assert handled.structured_content["outcome"] == "handled", _texts(handled)
        [last] = _texts(await session.call_tool("channel_awareness", only_new))
        assert "FILLED 200 NVDA" not in last
        # nothing a handled read showed comes again, not even the 30,000-character message
        # shown cut (ADR 0068) ...
        assert " new=0 " in last.split("\n", 1)[0] and "big desk-lead" not in last
        # ... which stays new: it was shown cut, never complete
        [every] = _texts(await session.call_tool("channel_awareness", {"channels": ["floor"]}))
        assert " new=1 " in every.split("\n", 1)[0] and "big desk-lead cut: first " in every
        # unknown and malformed ids: one 404, and a 422 naming the field, never the value
        unknown = await session.call_tool(
            "settle_read", {"read_id": "r_" + "A" * 22, "outcome": "handled"}
        )
        assert _error(unknown)["code"] == "read_not_found"
        bad = await session.call_tool("settle_read", {"read_id": "nope-x", "outcome": "handled"})
        assert _error(bad)["code"] == "validation_failed" and "nope-x" not in _texts(bad)[0]
    assert third  # a tool read between settlements changes nothing


async def test_refused_calls_are_recorded_with_their_codes(tmp_path: Path) -> None:
    # a new user's trial: the records (and /metrics over HTTP) counted only calls that worked
    db = tmp_path / "mcp.db"
    await _seed(db)
    config = _config(tmp_path, READ, '["read"]', '["floor"]')
    args = [*COMMAND[1:], "--db", str(db), "--config", str(config)]
    params = StdioServerParameters(
        command=COMMAND[0], args=args, env=_env(CHANNEL_MEMORY_MCP_TOKEN=READ)
    )
    with (tmp_path / "stderr.log").open("w+") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.call_tool("search_channel_context", {"channels": ["nope"], "query": "x"})
            await session.call_tool("channel_awareness", {"channels": ["nope"]})
            await session.call_tool("get_channel_messages", {"channels": ["floor"], "limit": 0})
            await session.call_tool(
                "settle_read", {"read_id": "r_" + "A" * 22, "outcome": "failed"}
            )
        errlog.seek(0)
        lines = errlog.read().splitlines()
    ops = [json.loads(line) for line in lines if '"channel_context_op"' in line]
    assert [(o["type"], o["tool_name"], o["status_code"], o["error"]) for o in ops] == [
        ("tool", "search_channel_context", 404, "channel_not_found"),
        ("feed", None, 404, "channel_not_found"),
        ("tool", "get_channel_messages", 422, "validation_failed"),
    ]  # a settlement is no read: not recorded, refused or not


async def test_a_forbidden_channel_answers_like_an_unknown_one(tmp_path: Path) -> None:
    db = tmp_path / "mcp.db"
    await _seed(db)
    config = _config(tmp_path, READ, '["read"]', '["floor"]')
    env = _env(CHANNEL_MEMORY_MCP_TOKEN=READ)
    async with _session(["--db", str(db), "--config", str(config)], env) as session:
        await session.initialize()
        ops_hits = await session.call_tool(
            "search_channel_context", {"channels": ["ops"], "query": "heartbeat"}
        )
        assert _error(ops_hits)["code"] == "channel_not_found"
        calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
            ("search_channel_context", {"channels": ["ops"], "query": "secret"},
             {"channels": ["nowhere"], "query": "secret"}),
            ("get_channel_messages", {"channels": ["ops"]}, {"channels": ["nowhere"]}),
            ("get_channel_messages", {"source_handles": ["ops/s"]},
             {"source_handles": ["nowhere/s"]}),
            ("channel_awareness", {"channels": ["ops"]}, {"channels": ["nowhere"]}),
        ]  # fmt: skip
        for tool, forbidden, unknown in calls:
            refused = await session.call_tool(tool, forbidden)
            missing = await session.call_tool(tool, unknown)
            assert _texts(refused) == _texts(missing), tool
            assert _error(refused)["code"] == "channel_not_found"
        # a block of a forbidden channel: found by the admin-free path only through its id
        store = await Store.open(db)
        try:
            async with store.read() as conn:
                rows = await conn.execute_fetchall(
                    "SELECT id FROM recall_blocks WHERE channel_id = 'ops' LIMIT 1"
                )
                row = rows[0] if rows else None
        finally:
            await store.close()
        assert row is not None
        refused = await session.call_tool("expand_digest_block", {"block_id": str(row[0])})
        missing = await session.call_tool("expand_digest_block", {"block_id": "no-such-block"})
        assert _texts(refused) == _texts(missing)
        assert _error(refused)["code"] == "block_not_found"


async def test_argument_errors_name_the_field_never_the_value(tmp_path: Path) -> None:
    db = tmp_path / "mcp.db"
    await _seed(db)
    config = _config(tmp_path, READ, '["read"]', '["floor"]')
    env = _env(CHANNEL_MEMORY_MCP_TOKEN=READ)
    secret = "zq-private-words-of-the-caller"
    async with _session(["--db", str(db), "--config", str(config)], env) as session:
        await session.initialize()
        # rejected by the SDK's own validation of the tool's signature
        bad_limit = await session.call_tool(
            "search_channel_context", {"channels": ["floor"], "query": "nvda", "limit": secret}
        )
        error = _error(bad_limit)
        assert error["code"] == "validation_failed" and error["status"] == 422
        assert [d["field"] for d in error["details"]] == ["limit"]
        # rejected by the tool's request model
        too_long = await session.call_tool(
            "search_channel_context", {"channels": ["floor"], "query": secret * 50}
        )
        assert _error(too_long)["details"][0]["field"] == "query"
        bad_feed = await session.call_tool(
            "channel_awareness", {"channels": ["floor"], "max_chars": secret}
        )
        assert _error(bad_feed)["code"] == "validation_failed"
        # strict as the HTTP body is: a word or a number in a string is no flag, no count
        for field, value in (("hard_events", "yes"), ("include_history", "true"), ("limit", "10")):
            loose = await session.call_tool(
                "get_channel_messages", {"channels": ["floor"], field: value}
            )
            assert [d["field"] for d in _error(loose)["details"]] == [field], field
        loose_limit = await session.call_tool(
            "search_channel_context", {"channels": ["floor"], "query": "nvda", "limit": "5"}
        )
        assert [d["field"] for d in _error(loose_limit)["details"]] == ["limit"]
        for field in ("max_chars", "limit"):  # the feed's counts too, as its schema says
            loose_feed = await session.call_tool(
                "channel_awareness", {"channels": ["floor"], field: "1500"}
            )
            assert [d["field"] for d in _error(loose_feed)["details"]] == [field], field
        # a misspelt argument is refused as the HTTP body refuses it, not ignored
        misspelt = await session.call_tool(
            "get_channel_messages", {"channels": ["floor"], "hardevents": True, "limit": 1}
        )
        details = _error(misspelt)["details"]
        assert [(d["field"], d["code"]) for d in details] == [("hardevents", "extra_forbidden")]
        unknown = await session.call_tool(secret, {})
        assert _error(unknown)["code"] == "tool_not_found"
        for result in (bad_limit, too_long, bad_feed, unknown):
            text = "".join(_texts(result))
            assert secret not in text and "input_value" not in text


def _start(db: Path, config: Path | None, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    args = [*COMMAND, "--db", str(db), *(["--config", str(config)] if config else [])]
    return subprocess.run(
        args, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )


async def test_a_token_without_read_is_refused_at_start(tmp_path: Path) -> None:
    db = tmp_path / "mcp.db"
    await _seed(db)
    config = _config(tmp_path, INGEST, '["ingest"]', '["*"]')
    started = _start(db, config, _env(CHANNEL_MEMORY_MCP_TOKEN=INGEST))
    assert started.returncode != 0
    assert "read scope" in started.stderr
    assert started.stdout == ""  # stdout is the protocol's
    unknown = _start(db, config, _env(CHANNEL_MEMORY_MCP_TOKEN="not-a-configured-token"))
    assert unknown.returncode != 0 and "read scope" in unknown.stderr
    missing = _start(db, config, _env())
    assert missing.returncode != 0 and "read scope" in missing.stderr


async def test_it_starts_on_a_config_whose_other_tokens_are_not_in_its_environment(
    tmp_path: Path,
) -> None:
    """A new user's trial: the documented config (the bridge's token from ``token_env``, the
    agent's inline) stopped ``mcp`` unless the agent's environment held the bridge's secret;
    it needs only the token it acts for. The table stays closed: no token, or the
    bridge's own variable's name, is still refused."""
    db = tmp_path / "mcp.db"
    await _seed(db)
    config = tmp_path / "cm.toml"
    config.write_text(
        '[[tokens]]\ntoken_env = "CM_BRIDGE_TOKEN_NOT_HERE"\nscopes = ["ingest"]\n'
        f'[[tokens]]\ntoken = "{READ}"\nscopes = ["read"]\nagent_id = "agent"\n'
    )
    args = ["--db", str(db), "--config", str(config)]
    async with _session(args, _env(CHANNEL_MEMORY_MCP_TOKEN=READ)) as session:
        await session.initialize()
        found = await session.call_tool(
            "search_channel_context", {"channels": ["ops"], "query": "secret"}
        )
        assert [h["source_handle"] for h in found.structured_content["hits"]] == ["ops/s"]
    for env in (_env(), _env(CHANNEL_MEMORY_MCP_TOKEN="CM_BRIDGE_TOKEN_NOT_HERE")):
        refused = _start(db, config, env)
        assert refused.returncode != 0 and "read scope" in refused.stderr
        # a new user's trial: a valid token whose token_env was unset read as "not valid";
        # the refusal names the variables left out (their names, never a value)
        assert "token_env variable is not set here: CM_BRIDGE_TOKEN_NOT_HERE" in refused.stderr
        assert READ not in refused.stderr


async def test_the_all_scopes_token_alone_serves(tmp_path: Path) -> None:
    db = tmp_path / "mcp.db"
    await _seed(db)
    async with _session(["--db", str(db)], _env(CHANNEL_MEMORY_TOKEN=EVERYTHING)) as session:
        init = await session.initialize()
        assert init.server_info.version == __version__
        found = await session.call_tool(
            "search_channel_context", {"channels": ["ops"], "query": "secret"}
        )
        assert [h["source_handle"] for h in found.structured_content["hits"]] == ["ops/s"]


async def test_it_reads_without_loading_the_rules_it_never_derives_with(tmp_path: Path) -> None:
    # the MCP tools only read: the rules and their model (a second or more to load) are left
    # until a derivation asks for them, so a rules file that cannot load does not stop it
    db = tmp_path / "mcp.db"
    await _seed(db)
    broken = tmp_path / "broken.toml"
    broken.write_text("[[rule]]\nname = 'x'\nevent_type = 'x'\npatterns = ['(']\n")
    env = _env(CHANNEL_MEMORY_TOKEN=EVERYTHING, CHANNEL_MEMORY_WORKER__RULES_FILE=str(broken))
    async with _session(["--db", str(db)], env) as session:
        await session.initialize()
        found = await session.call_tool(
            "search_channel_context", {"channels": ["ops"], "query": "secret"}
        )
        assert [h["source_handle"] for h in found.structured_content["hits"]] == ["ops/s"]


async def test_a_lazy_derive_hook_loads_the_rules_at_its_first_call(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[[rule]]\nname = 'x'\nevent_type = 'x'\npatterns = ['(']\n")
    hook = lazy_derive_hook(Settings(db=tmp_path / "x.db", worker={"rules_file": str(broken)}))
    store = await Store.open(tmp_path / "x.db")
    try:
        async with store.write() as conn:
            with pytest.raises(RulesError):
                await hook(conn, [], 0)
    finally:
        await store.close()


async def test_a_lazy_derive_hook_loads_the_rules_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[object] = []
    real = runner.load_rules

    def counted(path: Path | str | None) -> RuleSet:
        loads.append(path)
        return real(path)

    monkeypatch.setattr(runner, "load_rules", counted)
    hook = lazy_derive_hook(Settings(db=tmp_path / "x.db"))
    assert loads == []
    store = await Store.open(tmp_path / "x.db")
    try:
        for _ in range(2):
            async with store.write() as conn:
                await hook(conn, [], 0)
    finally:
        await store.close()
    assert loads == [None]


async def test_with_no_token_configured_it_acts_for_everyone_as_http_on_loopback(
    tmp_path: Path,
) -> None:
    db = tmp_path / "mcp.db"
    await _seed(db)
    async with _session(["--db", str(db)], _env()) as session:
        await session.initialize()
        found = await session.call_tool(
            "search_channel_context", {"channels": ["ops"], "query": "secret"}
        )
        assert [h["source_handle"] for h in found.structured_content["hits"]] == ["ops/s"]


# --- the boundary, as a pure function -----------------------------------------------------


def test_a_result_within_every_bound_passes_unchanged() -> None:
    structured = {"status": "ok", "hits": [{"source_handle": "floor/1", "excerpt": "a"}]}
    result = {
        "content": [{"type": "text", "text": render(structured)}],
        "structuredContent": structured,
    }
    assert bound_result(result, BUDGET) == result


def test_the_boundary_keeps_only_standard_fields_and_says_so() -> None:
    result = {
        "content": [{"type": "text", "text": "ok"}],
        "isError": False,
        "debug": {"query": "the caller's words"},
        "raw": "x" * 50_000,
    }
    bounded = bound_result(result, BUDGET)
    assert set(bounded) == {"content", "_meta"}
    assert bounded["_meta"]["truncated"] is True
    assert bounded["_meta"]["budget_kind"] == "fields"
    assert bounded["_meta"]["omitted_count"] == 2
    assert sorted(bounded["_meta"]["omitted_paths"]) == ["debug", "raw"]


def test_the_boundary_cuts_text_and_structured_content_to_the_budget() -> None:
    items = [{"source_handle": f"floor/{i}", "content": "é" * 300} for i in range(100)]
    structured = {"status": "ok", "messages": items, "has_more": False}
    result = {
        "content": [{"type": "text", "text": "t" * 9_000}, {"type": "text", "text": "u" * 9_000}],
        "structuredContent": structured,
    }
    bounded = bound_result(result, BUDGET)
    texts = [block["text"] for block in bounded["content"]]
    assert sum(len(t) for t in texts) <= BUDGET and texts[1].endswith(TEXT_MARK)
    encoded = compact(bounded["structuredContent"])
    assert len(encoded) <= BUDGET
    kept = bounded["structuredContent"]["messages"]
    assert kept == items[: len(kept)] and 0 < len(kept) < 100  # a prefix, whole items
    meta = bounded["_meta"]
    assert meta["truncated"] and meta["budget_kind"] == "chars"
    assert meta["omitted_count"] == 1 + (100 - len(kept))
    assert f"structuredContent.messages[{len(kept)}:]" in meta["omitted_paths"]
    assert "é" not in compact(meta)  # paths and kinds, never content


def test_the_boundary_bounds_list_length_string_length_and_depth() -> None:
    deep: Any = "leaf"
    for _ in range(30):
        deep = {"next": deep}
    structured = {
        "status": "ok",
        "ids": list(range(2_000)),
        "text": "w" * 20_000,
        "deep": deep,
        "weird key with content": 1,
    }
    bounded = bound_result({"content": [], "structuredContent": structured}, BUDGET)
    out = bounded["structuredContent"]
    assert len(compact(out)) <= BUDGET
    assert len(out["ids"]) <= 500 and len(out["text"]) <= BUDGET
    depth, node = 0, out["deep"]
    while node:
        depth, node = depth + 1, node["next"]
    assert depth < 30 and node == {}  # a cut keeps the value's type
    kinds = set(bounded["_meta"]["budget_kind"].split("+"))
    assert {"list_length", "string_length", "depth"} <= kinds
    assert all("weird" not in path for path in bounded["_meta"]["omitted_paths"])


class _Limit(BaseModel):
    limit: int


def _wrapped(outer: type[ToolError], cause: BaseException) -> ToolError:
    try:
        try:
            raise cause
        except BaseException as exc:
            raise outer("Error executing tool x: input_value='zq'") from exc
    except ToolError as wrapped:
        return wrapped


def test_refusals_come_from_the_cause_never_from_the_sdk_text() -> None:
    try:
        _Limit.model_validate({"limit": "zq-secret"})
    except ValidationError as exc:
        invalid = exc
    refused = refusal_of(_wrapped(ToolError, invalid))
    assert (refused.status, refused.code) == (422, "validation_failed")
    assert [d.field for d in refused.details] == ["limit"] and "zq" not in refused.message
    own = ApiError(404, "channel_not_found", "no such channel")
    assert refusal_of(_wrapped(ToolError, ToolFailure(own))) is own
    # a crash stays a crash, whatever its cause
    crashed = refusal_of(_wrapped(UnexpectedToolError, invalid))
    assert (crashed.status, crashed.code) == (500, "internal_error")
    assert refusal_of(ToolError("Unknown tool: zq-secret")).code == "tool_not_found"
