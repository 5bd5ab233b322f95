"""/openapi.json describes every answer; the operational endpoints' live answers (/health,
/ready, /metrics, /v1/stats) match the schemas the document gives them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
from jsonschema import Draft202012Validator, FormatChecker
from prometheus_client.parser import text_string_to_metric_families
from pydantic import BaseModel

from channel_memory.http.operations import Health, Ready, Stats
from channel_memory.kernel.timefmt import TimeFormatError, parse_rfc3339, utc_day
from channel_memory.store import llm as llm_store
from tests.conftest import LiveServer, at, ingest_ok, message_event


def _instant(value: object) -> bool:
    return not isinstance(value, str) or parse_rfc3339(value) >= 0


FORMATS = FormatChecker()
FORMATS.checks("date-time", raises=TimeFormatError)(_instant)


def _success(operation: dict[str, Any]) -> dict[str, Any]:
    [status] = [s for s in operation["responses"] if s.startswith("2")]
    response: dict[str, Any] = operation["responses"][status]
    return response


def assert_matches(
    document: dict[str, Any], response: httpx.Response, path: str, model: type[BaseModel]
) -> dict[str, Any]:
    """Validate ``response`` against the schema the document gives its status, and check
    that its model rebuilds the very same bytes (no field the model does not describe)."""
    described = document["paths"][path]["get"]["responses"][str(response.status_code)]
    schema = described["content"]["application/json"]["schema"]
    body: dict[str, Any] = response.json()
    # "#/components/..." references resolve against this root
    validator = Draft202012Validator(
        {**schema, "components": document["components"]}, format_checker=FORMATS
    )
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]
    assert not errors, errors
    rebuilt = model.model_validate(body).model_dump(mode="json", by_alias=True)
    assert json.dumps(rebuilt, separators=(",", ":"), ensure_ascii=False) == response.text
    return body


def test_every_operation_describes_its_success_answer(client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()
    undescribed = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            content = _success(operation).get("content", {})
            if not content or any("schema" not in media for media in content.values()):
                undescribed.append(f"{method.upper()} {path}")
    assert undescribed == []


def test_the_operational_answers_name_their_models(client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()

    def model_of(path: str, status: str = "200") -> Any:
        content = document["paths"][path]["get"]["responses"][status]["content"]
        return content["application/json"]["schema"]

    assert model_of("/health") == {"$ref": "#/components/schemas/Health"}
    assert model_of("/ready") == {"$ref": "#/components/schemas/Ready"}
    assert model_of("/v1/stats") == {"$ref": "#/components/schemas/Stats"}
    # not ready answers the readiness body; a busy database answers an error
    either = [{"$ref": "#/components/schemas/Ready"}, {"$ref": "#/components/schemas/ErrorBody"}]
    assert model_of("/ready", "503") == {"anyOf": either}
    schemas = document["components"]["schemas"]
    retained = schemas["RetainedRange"]["properties"]
    assert set(retained) == {"from", "to", "retention_cutoff"}
    assert retained["from"]["anyOf"][0] == {"type": "string", "format": "date-time"}
    assert list(schemas["DeploymentLlm"]["properties"])[:2] == ["enabled", "model"]
    for name in ("Health", "Ready", "Stats", "ChannelStats", "LlmSpend", "WorkerBacklog"):
        for field, described in schemas[name]["properties"].items():
            assert described.get("description"), f"{name}.{field}"


def test_live_answers_match_their_schemas(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(
        worker={"enabled": False},
        llm={"model": "openai/test-model", "usd_per_day": 3, "calls_per_channel_day": 7},
    )
    with server.client() as client:
        document = client.get("/openapi.json").json()
        ingest_ok(
            client,
            message_event("1", "FILLED 200 NVDA", created_at=at(1)),
            message_event("2", "héllo — ünïcode", created_at="2026-05-21T16:02:00.5Z"),
            message_event("3", "stop moved to 408", channel="desk", created_at=at(3)),
        )
        server.clock.advance(45)
        lagging = client.get("/ready")
        assert lagging.status_code == 503
        assert assert_matches(document, lagging, "/ready", Ready)["lag_seconds"] == 45.0

        server.drain()
        ingest_ok(client, message_event("4", "still dirty", created_at=at(30)))
        server.run(_spend_today(server, "floor"))

        health = client.get("/health")
        assert health.status_code == 200
        assert assert_matches(document, health, "/health", Health) == {"status": "ok"}
        ready = client.get("/ready")
        assert ready.status_code == 200
        assert assert_matches(document, ready, "/ready", Ready)["queue_depth"] == 1
        answer = client.get("/v1/stats")
        assert answer.status_code == 200
        stats = assert_matches(document, answer, "/v1/stats", Stats)
        assert [c["channel_id"] for c in stats["channels"]] == ["desk", "floor"]
        floor = stats["channels"][1]
        assert floor["retained"]["from"] == at(1) and floor["dirty_backlog"] == 1
        assert floor["llm"]["calls_today"] == 1 and floor["llm"]["calls_cap"] == 7
        assert stats["llm"]["capped"] == "usd_per_day" and stats["llm"]["usd_cap"] == 3.0
        assert stats["worker"]["oldest_change"] is not None

        metrics = client.get("/metrics")
    assert metrics.status_code == 200
    described = _success(document["paths"]["/metrics"]["get"])["content"]
    assert list(described) == [metrics.headers["content-type"]]
    assert described[metrics.headers["content-type"]]["schema"] == {"type": "string"}
    families = {family.name for family in text_string_to_metric_families(metrics.text)}
    assert "channel_memory_worker_queue_depth" in families


async def _spend_today(server: LiveServer, channel: str) -> None:
    """One model call's spend, and the deployment capped: what the LLM processor records."""
    day = utc_day(server.clock())
    async with server.app.state.ctx.store.write() as conn:
        await llm_store.reserve_call(conn, day, channel, 0.0123456789)
        await llm_store.mark_capped(conn, day, llm_store.DEPLOYMENT, "usd_per_day")
