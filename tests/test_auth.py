"""Bearer tokens and scopes: 401 without or with a wrong token, 403 without the scope."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import LiveServer, message_event

INGEST = "ingest-token-0123456789"
READ = "read-token-0123456789ab"
ADMIN = "admin-token-0123456789a"
ALL = "single-token-0123456789"

TOKENS = [
    {"token": INGEST, "scopes": ["ingest"], "agent_id": "bridge"},
    {"token": READ, "scopes": ["read"], "agent_id": "analyst", "channels": ["floor"]},
    {"token": ADMIN, "scopes": ["admin"], "agent_id": "ops"},
]

BATCH = {"events": [message_event("1", "hello")]}
READ_BODY = {"channel_id": "floor", "message_ids": ["1"]}


@pytest.fixture
def secured(make_server: Callable[..., LiveServer]) -> LiveServer:
    return make_server(tokens=TOKENS)


@pytest.mark.parametrize(
    ("token", "path", "body", "status"),
    [
        (None, "/v1/ingest", BATCH, 401),
        ("wrong-token-0123456789", "/v1/ingest", BATCH, 401),
        (READ, "/v1/ingest", BATCH, 403),
        (INGEST, "/v1/ingest", BATCH, 200),
        (ADMIN, "/v1/ingest", BATCH, 200),
        (None, "/source-messages", READ_BODY, 401),
        (INGEST, "/source-messages", READ_BODY, 403),
        (READ, "/source-messages", READ_BODY, 200),
        (ADMIN, "/source-messages", READ_BODY, 200),
        (READ, "/forget", {"channel_id": "floor", "message_ids": ["1"]}, 403),
        (
            INGEST,
            "/coverage-gaps",
            {"channel_id": "floor", "from": "2026-05-21T10:00:00Z", "to": "2026-05-21T11:00:00Z"},
            202,
        ),
    ],
)
def test_scopes(
    secured: LiveServer, token: str | None, path: str, body: dict[str, Any], status: int
) -> None:
    with secured.client(token) as client:
        response = client.post(path, json=body)
    assert response.status_code == status
    if status == 401:
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.json()["error"]["code"] == "unauthorized"
    if status == 403:
        assert response.json()["error"]["code"] == "forbidden"


def test_rejected_requests_write_nothing(secured: LiveServer) -> None:
    with secured.client(READ) as reader:
        assert reader.post("/v1/ingest", json=BATCH).status_code == 403
    with secured.client(ADMIN) as admin:
        read = admin.post("/source-messages", json=READ_BODY).json()
    assert read["messages"] == []


def test_health_needs_no_token(secured: LiveServer) -> None:
    with secured.client() as client:
        assert client.get("/health").status_code == 200


def test_single_token_grants_everything(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(token=ALL)
    with server.client(ALL) as client:
        assert client.post("/v1/ingest", json=BATCH).status_code == 200
        assert (
            client.post("/source-messages", json=READ_BODY).json()["messages"][0]["content"]
            == "hello"
        )
    with server.client("x" * 23) as wrong:
        assert wrong.post("/source-messages", json=READ_BODY).status_code == 401


def test_read_token_sees_only_its_channels(secured: LiveServer) -> None:
    with secured.client(INGEST) as bridge:
        bridge.post("/v1/ingest", json={"events": [message_event("1", "x", channel="ops")]})
        bridge.post("/v1/ingest", json={"events": [message_event("1", "y", channel="floor")]})
    with secured.client(READ) as reader:
        hidden = reader.post("/source-messages", json={"channel_id": "ops", "message_ids": ["1"]})
        unknown = reader.post("/source-messages", json={"channel_id": "nope", "message_ids": ["1"]})
        allowed = reader.post(
            "/source-messages", json={"channel_id": "floor", "message_ids": ["1"]}
        )
    assert hidden.status_code == unknown.status_code == 200
    assert hidden.json()["messages"] == [] == unknown.json()["messages"]
    assert allowed.json()["messages"][0]["content"] == "y"


def test_ingest_token_limited_to_channels(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(tokens=[{"token": INGEST, "scopes": ["ingest"], "channels": ["floor"]}])
    with server.client(INGEST) as bridge:
        response = bridge.post(
            "/v1/ingest",
            json={"events": [message_event("1", "a"), message_event("2", "b", channel="ops")]},
        )
    assert response.status_code == 403
    assert response.json()["error"]["details"][0]["index"] == 1
