"""Peer-compatible endpoints: /ingest, /source-messages, /forget, /coverage-gaps, /health."""

from __future__ import annotations

from typing import Any

import httpx

from channel_memory.ingest.commands import compute_content_hash
from channel_memory.kernel.models import MessageKey
from tests.conftest import LiveServer


def peer_message(message_id: str, content: str, **message: Any) -> dict[str, Any]:
    return {
        "channel_id": "floor",
        "message": {
            "id": message_id,
            "author_id": "u42",
            "author_name": "desk-lead",
            "created_at": "2026-05-21T16:00:00Z",
            "content": content,
            **message,
        },
        "source": {"kind": "discord", "service": "claw-wall", "guild_id": "g1"},
        "metadata": {"source_handle": f"floor/{message_id}", "visibility_scope": "desk"},
        "scope": "desk",
        "unknown_extra": {"ignored": True},
    }


def test_ingest_answers_202_in_the_peer_shape(client: httpx.Client) -> None:
    response = client.post("/ingest", json=peer_message("1301", "FILLED 200 NVDA @ 131.20"))
    assert response.status_code == 202
    assert response.json() == {
        "inserted": True,
        "source_kind": "discord",
        "channel_id": "floor",
        "message_id": "1301",
        "source_handle": "floor/1301",
        "content_hash": compute_content_hash(
            MessageKey("discord", "floor", "1301"), "FILLED 200 NVDA @ 131.20", False
        ),
        "observed_seq": 1,
        "current": True,
    }
    again = client.post("/ingest", json=peer_message("1301", "FILLED 200 NVDA @ 131.20"))
    assert again.status_code == 202 and again.json()["inserted"] is False


def test_ingest_fills_defaults_for_missing_optional_fields(
    client: httpx.Client, server: LiveServer
) -> None:
    minimal = {"channel_id": "floor", "message": {"id": "7", "content": "hi", "edited_at": ""}}
    response = client.post("/ingest", json=minimal)
    assert response.status_code == 202
    body = client.post("/source-messages", json={"channel_id": "floor", "message_ids": ["7"]})
    [stored] = body.json()["messages"]
    assert stored["author_id"] is None and stored["edited_at"] is None
    # created_at defaults to the receive time, as the peer does
    assert stored["created_at"] == "2026-05-21T20:00:00Z"


def test_deleted_message_arrives_with_empty_content(client: httpx.Client) -> None:
    client.post("/ingest", json=peer_message("1", "stop remains 610"))
    gone = client.post(
        "/ingest",
        json=peer_message("1", "", deleted=True, edited_at="2026-05-21T16:10:00Z"),
    )
    assert gone.status_code == 202 and gone.json()["current"] is True
    read = client.post("/source-messages", json={"channel_id": "floor", "message_ids": ["1"]})
    assert read.json()["messages"] == []


def test_source_messages_history_and_not_found(client: httpx.Client) -> None:
    client.post("/ingest", json=peer_message("1", "v1"))
    client.post("/ingest", json=peer_message("1", "v2", edited_at="2026-05-21T16:01:00Z"))
    response = client.post(
        "/source-messages",
        json={"channel_id": "floor", "message_ids": ["1", "404", "1"], "include_history": True},
    )
    body = response.json()
    assert [
        (m["content"], m["observed_seq"], m["is_current"], m["superseded_by"])
        for m in body["messages"]
    ] == [
        ("v1", 1, False, 2),
        ("v2", 2, True, None),
    ]
    assert set(body["messages"][0]) == {
        "source_kind",
        "channel_id",
        "message_id",
        "source_handle",
        "content_hash",
        "observed_seq",
        "is_current",
        "superseded_by",
        "author_id",
        "author_name",
        "created_at",
        "edited_at",
        "deleted",
        "content",
    }
    assert body["not_found"] == [
        {"source_kind": "discord", "channel_id": "floor", "message_id": "404"}
    ]


def test_forget_returns_versions_forgotten(client: httpx.Client) -> None:
    client.post("/ingest", json=peer_message("1", "v1"))
    client.post("/ingest", json=peer_message("1", "v2", edited_at="2026-05-21T16:01:00Z"))
    client.post("/ingest", json=peer_message("2", "w"))
    response = client.post(
        "/forget", json={"channel_id": "floor", "message_ids": ["1", "2", "3"], "reason": "x"}
    )
    assert response.status_code == 200 and response.json() == {"forgotten": 3}


def test_forget_accepts_a_thousand_ids(client: httpx.Client) -> None:
    ids = [str(i) for i in range(1000)]
    assert (
        client.post("/forget", json={"channel_id": "floor", "message_ids": ids}).status_code == 200
    )
    too_many = client.post("/forget", json={"channel_id": "floor", "message_ids": [*ids, "x"]})
    assert too_many.status_code == 422


def test_coverage_gap_answers_202_with_its_id(client: httpx.Client) -> None:
    response = client.post(
        "/coverage-gaps",
        json={
            "channel_id": "floor",
            "from": "2026-05-21T10:00:00+02:00",
            "to": "2026-05-21T10:30:00Z",
            "reason": "bridge restart",
            "extra": 1,
        },
    )
    assert response.status_code == 202
    assert response.json() == {
        "id": 1,
        "channel_id": "floor",
        "from": "2026-05-21T08:00:00Z",
        "to": "2026-05-21T10:30:00Z",
        "reason": "bridge restart",
    }


def test_health_is_open(server: LiveServer) -> None:
    with server.client() as anonymous:
        response = anonymous.get("/health")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
