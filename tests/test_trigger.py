"""A feed naming its trigger: the message that woke the agent, complete and never cut,
first and outside ``max_chars``; refused whole when too large; one 404 for every way
it can be missing."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from channel_memory.kernel.timefmt import format_rfc3339
from tests.conftest import LiveServer, ingest_ok, message_event
from tests.test_mcp import _env, _session, _store, _texts

ADMIN = "admin-token-0123456789"
READ = "reader-token-0123456789"
INGEST = "ingest-token-0123456789"
TOKENS = [
    {"token": ADMIN, "scopes": ["admin"], "agent_id": "ops"},
    {"token": INGEST, "scopes": ["ingest"], "agent_id": "bridge"},
    {
        "token": READ,
        "scopes": ["read"],
        "agent_id": "analyst",
        "channels": ["floor"],
        "self_author_ids": ["u-me"],
    },
]
LONG = "".join(f"line {i:05d} of the request: please hedge the book\n" for i in range(500))[:20_000]


def at(minute: int, hour: int = 19) -> str:
    return f"2026-05-21T{hour:02d}:{minute:02d}:00Z"


@pytest.fixture
def desk(make_server: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    server = make_server(worker={"enabled": False}, tokens=TOKENS)
    with server.client(INGEST) as client:
        ingest_ok(
            client,
            *(
                message_event(f"c{i}", f"chatter {i} " + "z" * 300, created_at=at(i))
                for i in range(40)
            ),
            message_event("ask", LONG, created_at=at(45), author="lead"),
            message_event("secret", "ops only", channel="ops", created_at=at(46)),
            message_event("gone", "deleted soon", created_at=at(47)),
            message_event("erased", "forgotten soon", created_at=at(48)),
        )
        ingest_ok(
            client,
            {"type": "delete", "channel_id": "floor", "message_id": "gone", "deleted_at": at(49)},
            {"type": "forget", "channel_id": "floor", "message_ids": ["erased"]},
        )
    server.drain()
    return server


def header(text: str) -> dict[str, str]:
    line = text.split("\n", 1)[0]
    return dict(part.split("=", 1) for part in line.split(" ")[1:])


def feed(server: LiveServer, token: str = READ, **params: Any) -> httpx.Response:
    with server.client(token) as client:
        return client.get("/channel-awareness", params={"channels": "floor", **params})


def test_a_long_trigger_arrives_whole_while_the_rest_holds_max_chars(desk: LiveServer) -> None:
    assert len(LONG) == 20_000
    for max_chars in (2_000, 4_000, 8_192):
        text = feed(desk, trigger="floor/ask", max_chars=max_chars).text
        head = header(text)
        assert head["trigger"] == "floor/ask"
        extra = int(head["trigger_chars"])
        assert extra > len(LONG) and len(text) - extra <= max_chars < len(text)
        # the [trigger] section follows the header, whole, and nothing else shows it
        section = text.split("\n", 1)[1][:extra]
        assert section.startswith("[trigger]\n[2026-05-21T19:45:00Z floor/ask lead ")
        assert section.endswith("".join(f"> {line}\n" for line in LONG.split("\n")))
        assert text.count("floor/ask") == 2  # the header's key and the section's line
        assert text.count("line 00123 of the request") == 1

        body = feed(desk, trigger="floor/ask", max_chars=max_chars, format="json")
        data = body.json()
        assert (
            data["trigger"]["content"] == LONG and data["trigger"]["source_handle"] == "floor/ask"
        )
        assert data["trigger"]["role"] == "user" and data["trigger"]["trust"] == "trigger"
        extra = data["header"]["trigger_chars"]
        assert len(body.text) - extra <= max_chars
        assert (
            ',"trigger":' + json.dumps(data["trigger"], separators=(",", ":"), ensure_ascii=False)
            in body.text
        )
        assert all(m["message_id"] != "ask" for m in data["raw_recent"])
    # the same feed without a trigger shows the message in the budget (cut): nothing silent
    plain = feed(desk, max_chars=4_000).text
    assert "trigger=" not in plain.split("\n", 1)[0]


def test_a_trigger_that_replies_says_what_it_answers(desk: LiveServer) -> None:
    # a new user's trial: a trigger "go" answering a proposal showed no re: on its line,
    # though every reply in the digest does
    with desk.client(INGEST) as client:
        ingest_ok(
            client,
            message_event("p1", "proposal: buy 20 CLZ5 at 72.10, stop 71.40", created_at=at(50)),
            message_event("go1", "go", created_at=at(51), author="risk", reply_to="p1"),
        )
    desk.drain()
    response = feed(desk, trigger="floor/go1")
    assert response.status_code == 200, response.text
    trigger_line = response.text.split("[trigger]\n", 1)[1].split("\n", 1)[0]
    assert trigger_line.startswith(f"[{at(51)[:-1]}") and " floor/go1 re:p1 " in trigger_line
    answered = feed(desk, trigger="floor/p1").text.split("[trigger]\n", 1)[1]
    assert " re:" not in answered.split("\n", 1)[0]  # a message that replies to nothing
    # a reply in a thread answers the thread's root (a review)
    with desk.client(INGEST) as client:
        ingest_ok(
            client,
            message_event("go2", "go", created_at=at(52), author="risk", thread_id="p1"),
        )
    desk.drain()
    threaded = feed(desk, trigger="floor/go2").text.split("[trigger]\n", 1)[1]
    assert " floor/go2 re:p1 " in threaded.split("\n", 1)[0]


def test_a_trigger_over_the_limit_is_refused_never_cut(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server(
        worker={"enabled": False}, tokens=TOKENS, feed={"trigger_max_chars": 5_000}
    )
    with server.client(INGEST) as client:
        ingest_ok(client, message_event("ask", LONG, created_at=at(45)))
    server.drain()
    refused = feed(server, trigger="floor/ask")
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["code"] == "trigger_too_large"
    assert (
        "20000 characters" in error["message"]
        and "feed.trigger_max_chars (5000)" in error["message"]
    )
    assert 'source_handles=["floor/ask"]' in error["message"]  # the read_content locator
    assert error["details"][0]["field"] == "trigger"
    assert "hedge" not in refused.text  # never the content
    # the locator works: the tool reads it in fragments
    with server.client(READ) as client:
        read = client.post("/v1/tools/get_channel_messages", json={"source_handles": ["floor/ask"]})
    assert read.status_code == 200 and read.json()["fragment"]["total_chars"] == 20_000


def test_unknown_invisible_deleted_and_forgotten_triggers_answer_alike(desk: LiveServer) -> None:
    answers = []
    for params in (
        {"trigger": "floor/nope"},
        {"trigger": "ops/secret"},  # outside the reader's channels
        {"trigger": "floor/gone"},
        {"trigger": "floor/erased"},
    ):
        response = feed(desk, **params)
        answers.append((response.status_code, response.headers["content-type"], response.content))
    assert answers[0][0] == 404
    assert json.loads(answers[0][2])["error"]["code"] == "trigger_not_found"
    assert all(a == answers[0] for a in answers)
    # the admin sees ops, and a visible trigger in a channel not asked for is a bad query
    outside = feed(desk, ADMIN, trigger="ops/secret")
    assert (
        outside.status_code == 422 and outside.json()["error"]["details"][0]["field"] == "trigger"
    )
    assert feed(desk, trigger="not a handle").status_code == 422
    # a bare message id is refused with what a handle is (a new user's trial)
    bare = feed(desk, trigger="nope")
    detail = bare.json()["error"]["details"][0]
    assert bare.status_code == 422 and detail["field"] == "trigger"
    assert "channel/message" in detail["message"] and "id alone" in detail["message"]


@pytest.mark.anyio
async def test_mcp_feed_takes_the_trigger_and_never_cuts_it(tmp_path: Path) -> None:
    db = tmp_path / "cm.db"
    now = time.time_ns() // 1000
    await _store(
        db,
        [
            message_event("ask", LONG, created_at=format_rfc3339(now - 60_000_000)),
            message_event("n", "FILLED 200 NVDA @ 131.20", created_at=format_rfc3339(now - 1)),
        ],
        now,
    )
    async with _session(["--db", str(db)], _env()) as session:
        await session.initialize()
        result = await session.call_tool(
            "channel_awareness", {"channels": ["floor"], "trigger": "floor/ask", "max_chars": 4000}
        )
        assert not result.is_error
        [text] = _texts(result)
        head = header(text)
        assert head["trigger"] == "floor/ask" and head["read_id"].startswith("r_")
        assert len(text) - int(head["trigger_chars"]) <= 4000
        assert "".join(f"> {line}\n" for line in LONG.split("\n")) in text
        assert not (result.meta or {}).get("truncated")
        missing = await session.call_tool(
            "channel_awareness", {"channels": ["floor"], "trigger": "floor/none"}
        )
        assert missing.is_error
        assert json.loads(_texts(missing)[0])["error"]["code"] == "trigger_not_found"
        read = await session.call_tool("get_channel_messages", {"source_handles": ["floor/n"]})
        assert read.structured_content["read_id"].startswith("r_")


def test_the_proposal_a_trigger_answers_is_read_however_old(
    make_server: Callable[..., LiveServer],
) -> None:
    # a new user's trial: "yes" as the trigger at 1,000 characters, the proposal it answers
    # older than the hard events a small budget reads, was left out while four newer
    # decisions were shown; the proposal is now read whatever the budget's reach
    server = make_server(tokens=TOKENS)
    with server.client(INGEST) as client:
        ingest_ok(
            client,
            message_event("p1", "proposal: buy 20 CLZ5 at 72.10, stop 71.40", created_at=at(0)),
            message_event("ok1", "yes", created_at=at(1), author="risk", reply_to="p1"),
            *(
                message_event(f"f{i}", f"filled {i + 1} ES @ 5,88{i % 10}.25", created_at=at(2 + i))
                for i in range(50)
            ),
        )
    server.drain()
    body = feed(server, trigger="floor/ok1", max_chars=1000).text
    digest = body.split("[trigger]\n", 1)[1]
    assert " p1 " in digest and "proposal: buy 20 CLZ5" in digest
    # without the trigger the budget reads the newest fills only
    plain = feed(server, max_chars=1000).text
    assert "proposal: buy 20 CLZ5" not in plain
