"""No content in logs or metrics: a canary in message content, author names and query
text goes through every endpoint, the worker and the LLM processor (including their
failures) at debug level, and appears in no log record and no metric."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import pytest

from channel_memory.http.app import endpoints
from channel_memory.http.logs import JsonLines, route_matcher
from tests.conftest import LiveServer, at, ingest_ok, message_event
from tests.fake_provider import FakeProvider, Reply, echoing

CANARY = "Kx9canaryQz"
AUTHOR = f"trader-{CANARY}"


def test_no_content_reaches_logs_or_metrics(
    make_server: Callable[..., LiveServer], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # everything, from every logger
    called: set[tuple[str, str]] = set()
    with FakeProvider(echoing) as provider:
        server = make_server(
            worker={"enabled": False},
            llm={"enabled": True, "model": "openai/fake", "api_base": provider.api_base,
                 "api_key": "sk-local", "retries": 0},
        )  # fmt: skip

        def hit(method: str, path: str, template: str | None = None, **kwargs: Any) -> Any:
            with server.client() as client:
                response = client.request(method, path, **kwargs)
            called.add((method, template or path))
            return response

        events = [
            message_event(f"m{i}", f"{CANARY} note {i}: tape heavy, breadth narrow " + "and " * 30,
                          created_at=at(10 * i, 8), author=AUTHOR)
            for i in range(5)
        ] + [message_event("fill", f"FILLED 200 NVDA {CANARY}", created_at=at(0, 19))]  # fmt: skip
        hit("GET", "/health")
        hit("POST", "/v1/ingest", json={"events": events})
        with server.client() as client:
            ingest_ok(client, {"type": "coverage_gap", "channel_id": "floor", "from": at(0, 1),
                               "to": at(0, 2), "reason": f"gap {CANARY}"})  # fmt: skip
        server.drain()
        assert server.run(server.app.state.worker.llm.run_once()).written == 1
        provider.responder = lambda _: Reply(status=500)  # failures are logged too
        edited = dict(events[0]["message"], content=f"{CANARY} edited", edited_at=at(0, 12))
        hit("POST", "/ingest", json={"channel_id": "floor", "message": edited})
        server.drain()
        server.run(server.app.state.worker.llm.run_once())
        hit("GET", "/channel-awareness", params={"channels": "floor", "format": "json"})
        hit("GET", "/channel-awareness", params={"channels": "floor", "max_chars": "1"})  # 422
        hit("POST", "/digest", json={"channel_ids": ["floor"]})
        hit("POST", "/search", json={"channel_ids": ["floor"], "query": CANARY})
        hit("POST", "/source-messages", json={"channel_id": "floor", "message_ids": ["m1"]})
        hit("POST", "/v1/tools/search_channel_context",
            json={"channels": ["floor"], "query": f"{CANARY} note", "author": AUTHOR})  # fmt: skip
        hit("POST", "/v1/tools/search_channel_context", json={"channels": ["floor"]})  # 422
        hit("POST", "/v1/tools/get_channel_messages", json={"source_handles": ["floor/m2"]})
        hit("POST", "/v1/consumption", json={"read_id": "r_" + "A" * 22, "outcome": CANARY})  # 422
        block = hit("POST", "/digest", json={"channel_ids": ["floor"]}).json()["blocks"][0]
        hit("GET", f"/v1/blocks/{block['id']}", "/v1/blocks/{block_id}")
        hit("POST", "/v1/ingest", json={"events": [message_event(f"bad {CANARY}", CANARY)]})
        hit("POST", "/v1/ingest", content=f'{{"events": [{CANARY}', headers={
            "content-type": "application/json"})  # fmt: skip
        hit("POST", "/coverage-gaps", json={"channel_id": "floor", "from": at(0, 3),
                                            "to": at(0, 4), "reason": CANARY})  # fmt: skip
        hit("POST", "/forget", json={"channel_id": "floor", "message_ids": ["m3"],
                                     "reason": CANARY})  # fmt: skip
        hit("GET", "/ready")
        hit("GET", "/v1/stats")
        hit("GET", "/openapi.json")
        metrics = hit("GET", "/metrics").text
        server.drain()
        server.__exit__()  # what it logs while stopping is checked too

    served = {(e.method, e.path) for e in endpoints()} | {("GET", "/openapi.json")}
    assert called == served  # every endpoint was exercised
    assert len(caplog.records) > 20  # the logs were captured
    for record in caplog.records:
        assert CANARY not in record.getMessage(), (record.name, record.levelname)
        assert CANARY not in repr(record.args)
    assert CANARY not in caplog.text
    # and as the processes write them: one JSON object per line, still without the canary
    lines = JsonLines(route_matcher(path for _, path in served))
    for record in caplog.records:
        line = lines.format(record)
        assert "\n" not in line and CANARY not in line
        assert json.loads(line)["logger"] == record.name
    assert CANARY not in metrics and "floor" not in metrics  # no content, no channel ids
    assert "channel_memory_llm_calls" in metrics
