"""Trust ``trigger`` for the trigger's author, and a ``role`` on every element for each
kind of author: feed (text and JSON) and tools."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer, ingest_ok, message_event

READ = "reader-token-0123456789"
TOKENS = [
    {
        "token": READ,
        "scopes": ["read", "ingest"],
        "agent_id": "analyst",
        "channels": ["floor"],
        "self_author_ids": ["u-me", "u-mybot"],
        "authorized_author_ids": ["u-lead", "u-sam"],
    },
]
EXPECTED = {  # message id: (origin, role, trust with trigger=floor/ask, trust without)
    "ask": ("human", "user", "trigger", "authorized"),
    "earlier": ("human", "user", "trigger", "authorized"),
    "sam": ("human", "user", "authorized", "authorized"),
    "me": ("human", "assistant", "self", "self"),
    # the consumer's own, sent through a bot account: its assistant, as its trust is self
    "mine": ("app", "assistant", "self", "self"),
    "bot": ("agent", "other", "unverified", "unverified"),
    "app": ("app", "other", "unverified", "unverified"),
    "imp": ("import", "other", "authorized", "authorized"),  # never the trigger's request
    "sys": ("system", "other", "system", "system"),
    "anon": ("human", "user", "unverified", "unverified"),
}


def at(minute: int) -> str:
    return f"2026-05-21T19:{minute:02d}:00Z"


@pytest.fixture
def desk(make_server: Callable[..., LiveServer]) -> Iterator[httpx.Client]:
    server = make_server(worker={"enabled": False}, tokens=TOKENS)
    with server.client(READ) as client:
        ingest_ok(
            client,
            message_event("earlier", "note from the lead", created_at=at(1), author="lead"),
            message_event("sam", "note from sam", created_at=at(2), author="sam"),
            message_event("me", "note from me", created_at=at(3), author="me"),
            message_event("bot", "note from a bot", created_at=at(4), author="bot", origin="agent"),
            message_event(
                "app", "note from an app", created_at=at(5), author="oms", author_kind="bot"
            ),
            message_event("imp", "imported note", created_at=at(6), author="lead", origin="import"),
            message_event(
                "sys", "channel renamed", created_at=at(7), author="sys", origin="system"
            ),
            message_event("anon", "note from a stranger", created_at=at(8), author="stranger"),
            message_event(
                "mine", "note from my bot", created_at=at(8), author="mybot", author_kind="bot"
            ),
            message_event("ask", "please hedge the book", created_at=at(9), author="lead"),
        )
        server.drain()
        yield client


def get_feed(client: httpx.Client, **params: Any) -> httpx.Response:
    return client.get(
        "/channel-awareness", params={"channels": "floor", "context_kind": "raw_window", **params}
    )


def test_feed_json_carries_role_and_trigger_trust_on_every_element(desk: httpx.Client) -> None:
    body = get_feed(desk, format="json", trigger="floor/ask").json()
    seen = {m["message_id"]: (m["origin"], m["role"], m["trust"]) for m in body["raw_recent"]}
    seen["ask"] = (body["trigger"]["origin"], body["trigger"]["role"], body["trigger"]["trust"])
    assert seen == {k: (o, r, t) for k, (o, r, t, _) in EXPECTED.items()}
    assert all(isinstance(m["new"], bool) for m in body["raw_recent"])

    plain = get_feed(desk, format="json").json()
    trusts = {m["message_id"]: m["trust"] for m in plain["raw_recent"]}
    assert trusts == {k: without for k, (_, _, _, without) in EXPECTED.items()}


def test_feed_text_marks_roles_and_trust_where_they_differ_from_the_section(
    desk: httpx.Client,
) -> None:
    text = get_feed(desk, trigger="floor/ask").text
    section = next(line for line in text.split("\n") if line.startswith("[raw recent;"))
    # four of the seven are agents, apps, imports or system: the section's role is other
    assert section == "[raw recent; channel floor, trust unverified, role other, new unless marked]"
    assert "[19:01 earlier lead trigger user]\n" in text  # the trigger's author, elsewhere
    assert "[19:02 sam sam authorized user]\n" in text
    assert "[19:03 me me self assistant]\n" in text
    assert "[19:04 bot bot]\n" in text
    assert "[19:06 imp lead authorized]\n" in text  # origin decides the role
    assert "[19:07 sys sys system]\n" in text
    assert "[19:08 anon stranger user]\n" in text
    assert "[trigger]\n[2026-05-21T19:09:00Z floor/ask lead trigger user new]\n" in text
    # an author named like a role or a marker is quoted, never read as one
    ingest_ok(desk, message_event("x", "hi", created_at=at(10), author="assistant"))
    assert '[19:10 x "assistant"]' in get_feed(desk).text  # users now lead: 6 of 10


def test_tools_carry_the_role(desk: httpx.Client) -> None:
    read = desk.post("/v1/tools/get_channel_messages", json={"channels": ["floor"]}).json()
    roles = {m["message_id"]: m["role"] for m in read["messages"]}
    assert roles == {k: r for k, (_, r, _, _) in EXPECTED.items()}
    found = desk.post(
        "/v1/tools/search_channel_context", json={"channels": ["floor"], "query": "note"}
    ).json()
    assert {h["message_id"]: h["role"] for h in found["hits"]} == {
        k: roles[k] for k in ("earlier", "sam", "me", "mine", "bot", "app", "imp", "anon")
    }
