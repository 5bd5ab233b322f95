"""POST /digest: the peer adapter's digest semantics."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer, message_event

READ = "read-token-0123456789ab"
ADMIN = "admin-token-0123456789a"


@pytest.fixture
def desk(make_server: Callable[..., LiveServer]) -> Iterator[tuple[LiveServer, httpx.Client]]:
    server = make_server(
        worker={"enabled": False},
        tokens=[
            {"token": ADMIN, "scopes": ["admin"]},
            {
                "token": READ,
                "scopes": ["read"],
                "channels": ["floor"],
                "authorized_author_ids": ["u-lead"],
                "self_author_ids": ["u-me"],
            },
        ],
    )
    with server.client(ADMIN) as client:
        yield server, client


def digest(client: httpx.Client, **body: Any) -> dict[str, Any]:
    response = client.post("/digest", json={"channel_ids": ["floor"], **body})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_max_blocks_caps_ordinary_blocks_but_never_hard_events(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    events = [
        message_event(str(i), f"chatter {i}", created_at=f"2026-05-21T12:{i:02d}:00Z")
        for i in range(10)
    ]
    events += [
        message_event(f"f{i}", f"FILLED {i}00 NVDA", created_at=f"2026-05-21T11:{i:02d}:00Z")
        for i in range(3)
    ]
    client.post("/v1/ingest", json={"events": events})
    server.drain()
    body = digest(client, budget={"max_blocks": 4})
    kinds = [b["kind"] for b in body["blocks"]]
    assert kinds.count("hard_event") == 3 and kinds.count("raw_excerpt") == 4
    # the newest ordinary blocks are kept, chronological
    assert [b["text"] for b in body["blocks"] if b["kind"] == "raw_excerpt"] == [
        "chatter 6",
        "chatter 7",
        "chatter 8",
        "chatter 9",
    ]
    assert body["coverage"]["source_messages"] == 13
    assert len(digest(client)["blocks"]) == 13  # default cap is 32


def test_raw_recent_counts_older_messages_without_a_rollup(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    client.post(
        "/v1/ingest",
        json={
            "events": [
                message_event("old", "a lone older remark", created_at="2026-05-21T08:00:00Z"),
                message_event("new", "a recent remark", created_at="2026-05-21T19:30:00Z"),
            ]
        },
    )
    server.drain()
    body = digest(client, budget={"raw_recent": "6h0m0s"})
    assert [b["source_messages"] for b in body["blocks"]] == [["new"]]
    assert body["coverage"]["older_raw_messages"] == 1
    assert body["coverage"]["raw_recent_messages"] == 1


def test_since_accepts_durations_and_times(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    client.post(
        "/v1/ingest", json={"events": [message_event("1", "x", created_at="2026-05-21T10:00:00Z")]}
    )
    server.drain()
    assert len(digest(client, since="24h0m0s")["blocks"]) == 1
    assert digest(client, since="90m")["blocks"] == []
    assert len(digest(client, since="2026-05-21T09:00:00Z")["blocks"]) == 1
    assert (
        digest(client, since="2026-05-21T10:30:00+00:00")["coverage"]["from"]
        == "2026-05-21T10:30:00Z"
    )
    bad = client.post("/digest", json={"channel_ids": ["floor"], "since": "yesterday"})
    assert bad.status_code == 422


def test_unknown_and_forbidden_channels_look_the_same(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    client.post("/v1/ingest", json={"events": [message_event("1", "secret ops", channel="ops")]})
    server.drain()
    with server.client(READ) as reader:
        forbidden = reader.post("/digest", json={"channel_ids": ["ops"]}).json()
        unknown = reader.post("/digest", json={"channel_ids": ["nope"]}).json()
    assert forbidden == unknown
    assert forbidden["status"] == "unavailable" and forbidden["blocks"] == []


def test_trust_markers_follow_the_caller(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    authors = [("lead", {}), ("me", {}), ("sys", {"origin": "system"}), ("other", {})]
    events = [
        message_event(
            str(i),
            f"stop moved to {408 + i}",
            author=name,
            created_at=f"2026-05-21T16:0{i}:00Z",
            **extra,
        )
        for i, (name, extra) in enumerate(authors)
    ]
    client.post("/v1/ingest", json={"events": events})
    server.drain()
    with server.client(READ) as reader:
        blocks = reader.post("/digest", json={"channel_ids": ["floor"]}).json()["blocks"]
    assert [b["trust"] for b in blocks] == ["authorized", "self", "system", "unverified"]
    admin_view = digest(client)["blocks"]
    assert [b["trust"] for b in admin_view] == ["unverified", "unverified", "system", "unverified"]


def test_block_object_shape(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    client.post("/v1/ingest", json={"events": [message_event("1", "no route for AAPL today")]})
    server.drain()
    body = digest(client)
    assert set(body) == {"status", "generated_at", "coverage", "blocks", "cost"}
    assert body["cost"] == {"deterministic_only": True, "llm_calls_today": 0}
    [block] = body["blocks"]
    assert set(block) == {
        "id",
        "kind",
        "event_type",
        "text",
        "source_channel",
        "source_messages",
        "source_handles",
        "covered_content_hashes",
        "source_window",
        "sparse",
        "score",
        "origin",
        "trust",
        "generated_at",
        "stale",
        "dirty",
        "processor",
        "author_name",  # a block of one message names its author
    }
    assert block["author_name"] == "desk-lead"
    assert block["source_window"] == {"from": "2026-05-21T16:00:00Z", "to": "2026-05-21T16:00:00Z"}
    assert block["id"].isalnum() and block["id"].islower()
