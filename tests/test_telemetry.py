"""Observability that tells the truth: JSON log lines from the real processes, feed numbers
that agree between the header, the log line and /metrics, and ingest counters."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from prometheus_client.parser import text_string_to_metric_families

from channel_memory.http.logs import JsonLines
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.kernel.config import Settings
from channel_memory.kernel.timefmt import format_rfc3339
from channel_memory.store import Store
from channel_memory.worker.runner import derive_hook, derive_settings
from tests.conftest import LiveServer, at, ingest_ok, message_event

CANARY = "Zq7telemetrycanaryW"
QUERY_CANARY = "Vb3querycanaryK"
READ = "read-token-0123456789ab"

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client: httpx.Client) -> Samples:
    text = client.get("/metrics").text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


def json_lines(stderr: str) -> list[dict[str, Any]]:
    """Every stderr line, parsed; fails on any line that is not one JSON object."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    parsed = []
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            pytest.fail(f"a stderr line is not JSON: {line[:200]!r}")
        assert isinstance(value, dict), line
        assert {"ts", "level", "logger", "event"} <= value.keys(), line
        parsed.append(value)
    return parsed


def header_numbers(text_feed: str) -> dict[str, int]:
    header = text_feed.split("\n", 1)[0]
    names = ("raw_bytes", "digest_bytes", "digest_blocks", "omitted", "messages")
    return {name: int(re.search(rf" {name}=(\d+)", header)[1]) for name in names}  # type: ignore[index]


# --- serve: one JSON op line per call ---------------------------------------------------------


@pytest.mark.parametrize("level", ["info", "debug"])
def test_serve_writes_json_lines_and_one_op_line_per_call(tmp_path: Path, level: str) -> None:
    now = time.time_ns() // 1000
    process = subprocess.Popen(
        [sys.executable, "-m", "channel_memory", "serve", "--db", str(tmp_path / "s.db"),
         "--port", "0", "--log-level", level],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CHANNEL_MEMORY_TOKEN": "", "CHANNEL_MEMORY_RETENTION__DAYS": "100000"},
    )  # fmt: skip
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split("listening on ")[1].split()[0]
        with httpx.Client(base_url=url, timeout=30) as client:
            ingest_ok(
                client,
                message_event("1", f"FILLED 200 NVDA @ 131.20 {CANARY}",
                              created_at=format_rfc3339(now - 600_000_000)),
                message_event("2", f"tape heavy {CANARY}", author=f"trader-{CANARY}",
                              created_at=format_rfc3339(now - 300_000_000)),
            )  # fmt: skip
            feed = client.get("/channel-awareness", params={"channels": "floor", "since": "24h"})
            assert feed.status_code == 200
            found = client.post(
                "/v1/tools/search_channel_context",
                json={"channels": ["floor"], "query": f'"tape heavy {CANARY}"'},
            )
            assert found.status_code == 200
            # a client's own text in a request target stays out of the access line
            assert client.get(f"/nowhere/{QUERY_CANARY}", params={"q": CANARY}).status_code == 404
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert process.returncode in (0, -15)

    lines = json_lines(stderr)
    assert CANARY not in stderr and QUERY_CANARY not in stderr
    assert CANARY.lower() not in stderr.lower() and QUERY_CANARY.lower() not in stderr.lower()
    ops = [line for line in lines if line["event"] == "channel_context_op"]
    assert [op["type"] for op in ops] == ["feed", "tool"]  # exactly one per call
    feed_op, tool_op = ops
    numbers = header_numbers(feed.text)
    assert feed_op["logger"] == "channel_memory.ops" and feed_op["level"] == "info"
    assert feed_op["consumer"] == "local" and feed_op["channels"] == ["floor"]
    assert feed_op["kind"] == "raw_window+digest" and feed_op["status_code"] == 200
    assert (feed_op["raw_bytes"], feed_op["digest_bytes"]) == (
        numbers["raw_bytes"],
        numbers["digest_bytes"],
    )
    assert feed_op["raw_bytes"] > 0
    assert tool_op["tool_name"] == "search_channel_context" and tool_op["status"] == "ok"
    assert tool_op["channels"] == ["floor"]
    assert tool_op["returned"] == 1 and tool_op["status_code"] == 200
    access = [line for line in lines if line["event"] == "http_request"]
    assert [(a["method"], a["route"], a["status"]) for a in access] == [
        ("POST", "/v1/ingest", 200),
        ("GET", "/channel-awareness", 200),
        ("POST", "/v1/tools/search_channel_context", 200),
        ("GET", "unmatched", 404),
    ]
    assert "Application startup complete." in {line.get("message") for line in lines}


# --- mcp: the same JSON lines, none of the SDK's rich text -----------------------------------


async def _seed(db: Path) -> None:
    now = time.time_ns() // 1000
    store = await Store.open(db)
    try:
        events = [
            message_event(str(i), f"tape heavy {CANARY} {i}", created_at=format_rfc3339(now - i))
            for i in range(1, 4)
        ]
        batch = IngestBatch.model_validate({"events": events})
        derive = derive_hook(derive_settings(Settings(db=db)))
        await ingest(store, ["floor"] * 3, native_commands(batch.events), now_us=now, derive=derive)
    finally:
        await store.close()


@pytest.mark.anyio
async def test_mcp_stderr_is_json_lines_with_one_op_line_per_tool_call(tmp_path: Path) -> None:
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
        env={**os.environ, "CHANNEL_MEMORY_MCP_TOKEN": READ,
             "CHANNEL_MEMORY_RETENTION__DAYS": "100000"},
    )  # fmt: skip
    err_path = tmp_path / "mcp.stderr"
    with err_path.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            found = await session.call_tool(
                "search_channel_context", {"channels": ["floor"], "query": f"tape {QUERY_CANARY}"}
            )
            assert not found.is_error
            browsed = await session.call_tool("get_channel_messages", {"channels": ["floor"]})
            assert not browsed.is_error
            feed = await session.call_tool("channel_awareness", {"channels": ["floor"]})
            assert not feed.is_error
    stderr = err_path.read_text()
    lines = json_lines(stderr)
    assert CANARY not in stderr and QUERY_CANARY not in stderr
    ops = [line for line in lines if line["event"] == "channel_context_op"]
    assert [(op["type"], op["tool_name"], op["consumer"], op["channels"]) for op in ops] == [
        ("tool", "search_channel_context", "mcp-agent", ["floor"]),
        ("tool", "get_channel_messages", "mcp-agent", ["floor"]),
        ("feed", None, "mcp-agent", ["floor"]),
    ]
    assert ops[1]["returned"] == 3
    # the feed's line carries the numbers its header states
    header = feed.content[0].text.split("\n", 1)[0]  # type: ignore[union-attr]
    assert f"raw_bytes={ops[2]['raw_bytes']} " in header and ops[2]["raw_bytes"] > 0


# --- the feed's numbers: header, log line and metrics agree ---------------------------------


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_feed_numbers_agree_in_header_log_line_and_metrics(
    server: LiveServer, caplog: pytest.LogCaptureFixture, fmt: str
) -> None:
    with server.client() as client:
        ingest_ok(
            client,
            message_event("old", "FILLED 200 NVDA @ 131.20", created_at=at(0, 10)),
            *(message_event(f"r{i}", f"breadth narrow {i}", created_at=at(10 + i, 19))
              for i in range(3)),
        )  # fmt: skip
        server.drain()
        before = scrape(client)
        with caplog.at_level(logging.INFO, logger="channel_memory.ops"):
            response = client.get("/channel-awareness", params={"channels": "floor", "format": fmt})
        after = scrape(client)
    assert response.status_code == 200
    header = header_numbers(response.text) if fmt == "text" else response.json()["header"]
    [record] = [r for r in caplog.records if r.name == "channel_memory.ops"]
    op = json.loads(record.getMessage())
    assert header["raw_bytes"] > 0 and header["digest_bytes"] > 0  # both sections served
    assert (op["raw_bytes"], op["digest_bytes"]) == (header["raw_bytes"], header["digest_bytes"])
    assert op["digest_blocks"] == header["digest_blocks"] and op["omitted"] == header["omitted"]
    served = "channel_context_served_chars_total"
    assert moved(before, after, served, type="feed", section="raw") == header["raw_bytes"]
    assert moved(before, after, served, type="feed", section="digest") == header["digest_bytes"]


# --- ingest counters -------------------------------------------------------------------------


def test_ingest_metrics_count_events_versions_duplicates_and_refusals(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server(ingest={"max_events": 5})
    with server.client() as client:
        before = scrape(client)
        batch = ingest_ok(
            client,
            message_event("m1", f"stop moved to 408 {CANARY}", created_at=at(1)),
            message_event("m1", f"stop moved to 408 {CANARY}", created_at=at(1)),  # duplicate
            message_event("m2", "breadth narrow", created_at=at(2)),
            {"type": "delete", "channel_id": "floor", "message_id": "m2", "deleted_at": at(3)},
            {"type": "coverage_gap", "channel_id": "floor", "from": at(4), "to": at(5),
             "reason": CANARY},
        )  # fmt: skip
        assert (batch["inserted"], batch["duplicates"]) == (3, 1)
        peer = {"channel_id": "floor", "message": {"id": "m3", "author_id": "u1",
                "author_name": "a", "created_at": at(6), "content": f"peer {CANARY}"}}  # fmt: skip
        assert client.post("/ingest", json=peer).status_code == 202
        assert client.post("/ingest", json=peer).status_code == 202  # duplicate
        forget = {"channel_id": "floor", "message_ids": ["m1"], "reason": CANARY}
        assert client.post("/forget", json=forget).status_code == 200
        gap = {"channel_id": "floor", "from": at(7), "to": at(8), "reason": CANARY}
        assert client.post("/coverage-gaps", json=gap).status_code == 202
        # refused: nothing written, nothing counted but the refusal
        refused = [
            client.post("/v1/ingest", content=f'{{"events": [{CANARY}',
                        headers={"content-type": "application/json"}),
            client.post("/v1/ingest", json={"events": [
                message_event(f"x{i}", CANARY, created_at=at(9)) for i in range(6)]}),
            client.post("/v1/ingest", json={"events": [
                message_event("y", CANARY, created_at=at(9)),
                {"type": "coverage_gap_resolved", "channel_id": "floor", "gap_id": 999}]}),
            client.post("/ingest", json={"channel_id": "floor", "surprise": CANARY}),
        ]  # fmt: skip
        assert [r.status_code for r in refused] == [400, 422, 422, 422]
        assert [r.json()["error"]["code"] for r in refused] == [
            "invalid_json", "too_many_events", "unknown_gap", "validation_failed"]  # fmt: skip
        after = scrape(client)
        text = client.get("/metrics").text

    events = "channel_memory_ingest_events_total"
    assert {
        kind: moved(before, after, events, type=kind)
        for kind in ("message", "delete", "forget", "coverage_gap", "coverage_gap_resolved")
    } == {"message": 5, "delete": 1, "forget": 1, "coverage_gap": 2, "coverage_gap_resolved": 0}
    assert moved(before, after, "channel_memory_ingest_versions_inserted_total") == 4
    assert moved(before, after, "channel_memory_ingest_duplicates_total") == 2
    refusals = "channel_memory_ingest_refused_total"
    assert moved(before, after, refusals, endpoint="/v1/ingest", code="invalid_json") == 1
    assert moved(before, after, refusals, endpoint="/v1/ingest", code="too_many_events") == 1
    assert moved(before, after, refusals, endpoint="/v1/ingest", code="unknown_gap") == 1
    assert moved(before, after, refusals, endpoint="/ingest", code="validation_failed") == 1
    assert sum(v for (name, _), v in after.items() if name == refusals) == 4
    latency = "channel_memory_ingest_latency_seconds_count"
    assert {
        (endpoint, outcome): moved(before, after, latency, endpoint=endpoint, outcome=outcome)
        for endpoint in ("/v1/ingest", "/ingest", "/forget", "/coverage-gaps")
        for outcome in ("accepted", "refused")
    } == {
        ("/v1/ingest", "accepted"): 1, ("/v1/ingest", "refused"): 3,
        ("/ingest", "accepted"): 2, ("/ingest", "refused"): 1,
        ("/forget", "accepted"): 1, ("/forget", "refused"): 0,
        ("/coverage-gaps", "accepted"): 1, ("/coverage-gaps", "refused"): 0,
    }  # fmt: skip
    assert CANARY not in text and "floor" not in text  # no content, no channel ids


def test_a_logged_exception_gives_its_type_and_place_never_its_text() -> None:
    try:
        raise ValueError(f"could not parse {CANARY}")
    except ValueError:
        record = logging.LogRecord(
            "channel_memory.worker", logging.ERROR, __file__, 1, "worker run failed", None,
            sys.exc_info(),
        )  # fmt: skip
    line = JsonLines().format(record)
    assert CANARY not in line and "\n" not in line
    parsed = json.loads(line)
    assert parsed["event"] == "log" and parsed["message"] == "worker run failed"
    assert parsed["error_type"] == "ValueError"
    assert parsed["error_at"].startswith("test_telemetry.py:")
