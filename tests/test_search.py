"""POST /search: literal keyword search over current messages and sparse blocks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer, message_event


@pytest.fixture
def desk(make_server: Callable[..., LiveServer]) -> Iterator[tuple[LiveServer, httpx.Client]]:
    server = make_server(worker={"enabled": False})
    with server.client() as client:
        client.post(
            "/v1/ingest",
            json={
                "events": [
                    message_event(
                        "1",
                        "Watching NVDA into the auction",
                        author="Analyst-B",
                        created_at="2026-05-21T15:00:00Z",
                    ),
                    message_event(
                        "2",
                        "NVDA bid is thin (again) -- careful",
                        author="desk-lead",
                        created_at="2026-05-21T15:05:00Z",
                    ),
                    message_event(
                        "3",
                        "NVDA looks heavy",
                        author="ops-bot",
                        channel="ops",
                        created_at="2026-05-21T15:06:00Z",
                    ),
                    message_event(
                        "4", "HEARTBEAT_OK", author="bot", created_at="2026-05-21T15:07:00Z"
                    ),
                    message_event(
                        "5", "HEARTBEAT_OK", author="bot", created_at="2026-05-21T15:08:00Z"
                    ),
                ]
            },
        )
        server.drain()
        yield server, client


def search(client: httpx.Client, **body: Any) -> dict[str, Any]:
    response = client.post("/search", json={"channel_ids": ["floor"], **body})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_finds_current_messages_of_the_channel_only(desk: tuple[LiveServer, httpx.Client]) -> None:
    _, client = desk
    body = search(client, query="nvda")
    assert body["status"] == "ok"
    assert [m["message_id"] for m in body["source_messages"]] == ["1", "2"]
    assert body["coverage"]["source_message_hits"] == 2


def test_query_text_is_literal(desk: tuple[LiveServer, httpx.Client]) -> None:
    _, client = desk
    assert [
        m["message_id"] for m in search(client, query='thin (again) -- "careful')["source_messages"]
    ] == ["2"]
    assert search(client, query="NVDA OR heavy")["status"] == "empty"  # OR is just a word here
    assert search(client, query="NEAR(NVDA auction)")["status"] == "empty"
    assert search(client, query="*")["status"] == "empty"


def test_author_is_a_case_insensitive_substring(desk: tuple[LiveServer, httpx.Client]) -> None:
    _, client = desk
    assert [
        m["message_id"] for m in search(client, query="nvda", author="analyst")["source_messages"]
    ] == ["1"]
    assert [
        m["message_id"] for m in search(client, query="", author="U-DESK")["source_messages"]
    ] == ["2"]


def test_sparse_blocks_are_searched_too(desk: tuple[LiveServer, httpx.Client]) -> None:
    _, client = desk
    body = search(client, query="runtime status")
    assert [b["kind"] for b in body["derived_blocks"]] == ["telemetry_count"]
    assert body["coverage"]["derived_block_hits"] == 1


def test_edits_deletes_and_forgets_are_honoured(desk: tuple[LiveServer, httpx.Client]) -> None:
    _, client = desk
    client.post(
        "/v1/ingest",
        json={
            "events": [
                message_event(
                    "1",
                    "Watching AAPL instead",
                    author="Analyst-B",
                    created_at="2026-05-21T15:00:00Z",
                    edited_at="2026-05-21T15:30:00Z",
                )
            ]
        },
    )
    client.post(
        "/v1/ingest",
        json={"events": [{"type": "forget", "channel_id": "floor", "message_ids": ["2"]}]},
    )
    assert search(client, query="nvda")["status"] == "empty"
    assert [m["content"] for m in search(client, query="aapl")["source_messages"]] == [
        "Watching AAPL instead"
    ]


def test_limit_and_since(desk: tuple[LiveServer, httpx.Client]) -> None:
    _, client = desk
    assert [m["message_id"] for m in search(client, query="", limit=1)["source_messages"]] == ["5"]
    assert search(client, query="nvda", since="30m")["status"] == "empty"
