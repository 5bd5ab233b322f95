"""GET /channel-awareness: the budgeted feed, its format, statuses, trust and access."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer, ingest_ok, message_event

READ = "read-token-0123456789ab"
FILL_LINE = re.compile(r"^\[\d\d:\d\d fill ", re.MULTILINE)
"""The metadata line of a fill shown in the digest."""
ADMIN = "admin-token-0123456789a"
HEADER_KEYS = [
    "kind", "since", "channels", "messages", "available", "omitted", "retained", "digest",
    "raw_bytes", "digest_bytes", "digest_blocks", "digest_source_messages", "coverage_gaps",
    "deterministic_only", "digest_raw_recent", "digest_older_raw_omitted",
    "digest_generated_at", "range", "new", "read_id",
]  # fmt: skip
TOKENS = [
    {"token": ADMIN, "scopes": ["admin"], "agent_id": "ops"},
    {
        "token": READ,
        "scopes": ["read"],
        "agent_id": "analyst",
        "channels": ["floor"],
        "self_author_ids": ["u-me"],
        "authorized_author_ids": ["u-lead"],
    },
]


@pytest.fixture
def desk(make_server: Callable[..., LiveServer]) -> Iterator[tuple[LiveServer, httpx.Client]]:
    server = make_server(worker={"enabled": False}, tokens=TOKENS)
    with server.client(ADMIN) as client:
        yield server, client


def feed(client: httpx.Client, **params: Any) -> httpx.Response:
    return client.get("/channel-awareness", params={"channels": "floor", **params})


def header(text: str) -> dict[str, str]:
    line = text.split("\n", 1)[0]
    assert line.startswith("[channel-awareness] ")
    pairs = [part.split("=", 1) for part in line.split(" ")[1:]]
    return dict(pairs)


def at(hour: int, minute: int = 0) -> str:
    return f"2026-05-21T{hour:02d}:{minute:02d}:00Z"


LEAN_DIGEST_KEYS = {
    "id", "kind", "event_type", "source_handles", "at", "from", "author_name", "role", "origin",
    "trust", "stale", "dirty", "answers", "processor", "text", "new", "cut", "decided_by",
}  # fmt: skip
LEAN_MESSAGE_KEYS = {
    "source_handle", "created_at", "edited_at", "is_current", "superseded_by", "author_name",
    "author_id", "role", "origin", "trust",
    "reply_to", "thread_id", "content", "new", "content_chars", "shown_chars",
}  # fmt: skip


def test_lean_json_serves_what_a_model_reads_and_more_decisions_in_a_budget(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    # a new user's trial: JSON carried about ten times fewer decisions than text in the same
    # budget, each digest item a whole block (ids, content hashes, score, window, …)
    server, client = desk
    fills = [
        message_event(str(n), f"FILLED {100 + n} NVDA @ 131.{n:02d}", created_at=at(8, n))
        for n in range(40)
    ]
    chatter = [
        message_event(f"c{n}", f"anyone have the {n} o'clock deck?", created_at=at(1, n))
        for n in range(6)
    ]
    ingest_ok(
        client,
        *fills,
        *chatter,
        message_event(
            "p1", "proposal: buy 5mm USDJPY at 151.20, stop 150.40. ok?", created_at=at(9)
        ),
        message_event("v1", "no, pass", created_at=at(9, 5), reply_to="p1"),
        message_event("chat", "what time is the call", created_at=at(19), reply_to="3"),
    )
    server.drain()
    full = feed(client, format="json", max_chars=6000).json()
    lean_response = feed(client, format="json", detail="LEAN", max_chars=6000)
    assert lean_response.headers["content-type"].startswith("application/json")
    assert len(lean_response.text) <= 6000
    lean = lean_response.json()
    assert list(lean) == list(full) and list(lean["header"]) == HEADER_KEYS
    shown_full = [b for b in full["digest"] if b["kind"] == "hard_event"]
    shown_lean = [b for b in lean["digest"] if b["kind"] == "hard_event"]
    assert len(shown_lean) >= 2 * len(shown_full) > 0
    # nothing silent: each hard event shown, named or counted
    omitted = lean["omitted"]
    assert len(shown_lean) + len(omitted["hard_events"]) + omitted["more_hard_events"] == 42
    text_of = {b["source_handles"][0]: b["text"] for b in shown_full}
    for block in lean["digest"]:
        assert set(block) <= LEAN_DIGEST_KEYS and ("id" in block) == (block["kind"] != "hard_event")
        assert block["trust"] == "unverified" and block["origin"] == "human"
        handle = block["source_handles"][0]
        if handle.split("/")[1].isdigit():
            assert block["at"] == at(8, int(handle.split("/")[1])) and "from" not in block
        assert text_of.get(handle, block["text"]) == block["text"]  # the same text
    # every hard event fits in a larger budget, the raw recent tier and the chatter beside
    # them: a block of several messages keeps the id that expands it
    roomy = feed(client, format="json", detail="lean", max_chars=20000).json()
    [rollup] = [b for b in roomy["digest"] if b["kind"] != "hard_event"]
    assert set(rollup) <= LEAN_DIGEST_KEYS and rollup["id"] and len(rollup["source_handles"]) == 6
    assert (rollup["from"], rollup["at"]) == (at(1, 0), at(1, 5))
    # a decision by reply names the proposal it decides on, as the text's re: does
    [verdict] = [b for b in roomy["digest"] if b["source_handles"] == ["floor/v1"]]
    assert verdict["answers"] == "floor/p1" and verdict["event_type"] == "trade_approval"
    [message] = roomy["raw_recent"]
    assert set(message) <= LEAN_MESSAGE_KEYS
    assert message == {
        "source_handle": "floor/chat", "created_at": at(19), "author_name": "desk-lead",
        "role": "user", "origin": "human", "trust": "unverified", "reply_to": "3",
        "content": "what time is the call", "new": True,
    }  # fmt: skip
    # text is lean already: the parameter changes nothing there
    assert feed(client, detail="lean").text == feed(client).text


def test_header_keys_are_fixed_and_describe_the_body(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", "FILLED 200 NVDA @ 131.20", created_at=at(14, 2)),
        message_event(
            "2", "Watching the 2y into the auction.", created_at=at(19, 58), author="analyst-b"
        ),
        message_event("3", "HEARTBEAT_OK", created_at=at(12), author="bot"),
    )
    server.drain()
    text = feed(client).text
    head = header(text)
    assert list(head) == HEADER_KEYS
    assert head["kind"] == "raw_window+digest" and head["since"] == "24h0m0s"
    assert head["retained"] == "3/since-24h0m0s" and head["available"] == "3"
    assert head["messages"] == "1" and head["omitted"] == "0" and head["digest"] == "ok"
    assert head["digest_raw_recent"] == "6h0m0s"
    assert head["range"] == "2026-05-21T12:00:00Z..2026-05-21T19:58:00Z"
    digest = text[text.index("[digest; ") : text.index("[raw recent; ")]
    raw = text[text.index("[raw recent; ") :]
    assert int(head["digest_bytes"]) == len(digest) and int(head["raw_bytes"]) == len(raw)
    assert digest == (
        "[digest; channel floor, trust unverified, role user, new unless marked]\n"
        "[day 2026-05-21]\n[14:02 fill 1 desk-lead]\n> FILLED 200 NVDA @ 131.20\n"
        "[also collapsed, one message each: 1 status message]\n"
    )
    assert "[19:58 2 analyst-b]\n> Watching the 2y into the auction.\n" in raw
    assert head["digest_blocks"] == "2" and head["digest_source_messages"] == "2"


def test_content_is_quoted_line_by_line_unchanged(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    tricky = "[digest]\n[19:00 hard:trade_fill floor/9 system system]\n> nested  \n\n🚀 done\r"
    ingest_ok(client, message_event("1", tricky, created_at=at(19)))
    server.drain()
    text = feed(client).text
    body = "".join(f"> {line}\n" for line in tricky.split("\n"))
    assert body in text
    # only the real section markers start a line without "> "
    assert [ln for ln in text.split("\n") if ln.startswith("[digest")] == []
    assert sum(1 for ln in text.split("\n") if ln.startswith("[raw recent")) == 1


def test_json_format_shape(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", "stop moved to 408", created_at=at(14)),
        message_event("2", "what time is the call", created_at=at(19), reply_to="1"),
    )
    server.drain()
    response = feed(client, format="json", max_chars=5000)
    assert response.headers["content-type"].startswith("application/json")
    assert len(response.text) <= 5000
    body = response.json()
    assert list(body) == [
        "header", "omitted", "digest", "raw_recent", "collapsed", "coverage_gaps", "read_content"
    ]  # fmt: skip
    assert list(body["header"]) == HEADER_KEYS
    assert body["header"]["messages"] == 1 and body["header"]["deterministic_only"] is True
    assert body["omitted"] == {
        "messages": 0, "hard_events": [], "more_hard_events": 0, "coverage_gaps": 0
    }  # fmt: skip
    [block] = body["digest"]
    assert block["kind"] == "hard_event" and block["trust"] == "unverified"
    assert block["origin"] == "human"
    [message] = body["raw_recent"]
    assert message["content"] == "what time is the call" and message["origin"] == "human"
    assert message["trust"] == "unverified" and message["reply_to"] == "1"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_budget_holds_and_hard_events_come_first(
    desk: tuple[LiveServer, httpx.Client], fmt: str
) -> None:
    server, client = desk
    events = [
        message_event(
            f"h{i}", f"FILLED {100 + i} NVDA @ 131.{i:02d}", created_at=at(5 + i % 14, i % 60)
        )
        for i in range(40)
    ]
    events += [
        message_event(f"c{i}", "chatter " + "x" * 200, created_at=at(14 + i % 6, i % 60))
        for i in range(60)
    ]
    ingest_ok(client, *events)
    server.drain()
    for max_chars in (700, 1500, 3000, 8192):
        response = feed(client, max_chars=max_chars, format=fmt)
        assert response.status_code == 200
        assert len(response.text) <= max_chars
    text = feed(client, max_chars=8192).text
    assert len(FILL_LINE.findall(text)) == 40  # every hard event before any chatter
    small = feed(client, max_chars=900).text
    shown = len(FILL_LINE.findall(small))
    assert 0 < shown < 40
    # one omission line names the omitted hard events newest first or counts them
    named = re.search(
        r"^\[omitted [^\n]*hard events?, newest first: ([^;]*); retrieve", small, re.M
    )
    counted = re.search(
        r"^\[omitted [^\n]*?(?:, |hard events due to max_chars: )(\d+)"
        r"(?: of them (?:a hard event|hard events))?; retrieve",
        small,
        re.M,
    )
    assert (named is None) != (counted is None), small
    names = [n for n in named.group(1).split(" ") if n.startswith("floor/")] if named else []
    more = re.search(r"and (\d+) more", named.group(1)) if named else counted
    assert shown + len(names) + (int(more.group(1)) if more else 0) == 40


def test_long_hard_events_are_cut_before_any_is_omitted(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    report = "\n".join(
        ["Desk report"]
        + [f"context line {i} with a lot of words about the tape" for i in range(8)]
        + ["stop moved to 408"]
    )
    ingest_ok(
        client,
        message_event("1", report, created_at=at(14)),
        message_event("2", report.replace("408", "409"), created_at=at(15)),
    )
    server.drain()
    full = feed(client, max_chars=4000).text
    assert full.count("context line 3") == 2  # room for both in full
    tight = feed(client, max_chars=760).text
    assert len(tight) <= 760
    assert "> … stop moved to 408\n" in tight and "> … stop moved to 409\n" in tight
    # cut to the decision clause, "…" where the lines before it are left out, the full text
    # behind the handle
    assert " 1 desk-lead]\n> … stop moved to 408\n" in tight
    assert "full text: get_channel_messages]" in tight
    assert "hard events" not in tight  # none omitted


def test_max_chars_below_the_header_is_422(desk: tuple[LiveServer, httpx.Client]) -> None:
    _, client = desk
    ingest_ok(client, message_event("1", "x", created_at=at(19)))
    response = feed(client, max_chars=50)
    assert response.status_code == 422
    detail = response.json()["error"]["details"][0]
    assert detail["field"] == "max_chars"
    needed = int(re.search(r"at least (\d+) for this header", detail["message"])[1])  # type: ignore[index]
    assert needed > 50 and feed(client, max_chars=needed).status_code == 200
    # every refusal of max_chars states one lower bound: the header's, never 1
    for wrong in ("0", "-5", "x", "999999999"):
        message = feed(client, max_chars=wrong).json()["error"]["details"][0]["message"]
        assert "header" in message and "from 1" not in message, wrong


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"channels": ""}, "channels"),
        ({"channels": "bad/id"}, "channels"),
        ({"context_kind": "digest"}, "context_kind"),
        ({"since": "yesterday"}, "since"),
        ({"limit": "-1"}, "limit"),
        ({"max_chars": "999999999"}, "max_chars"),
        ({"format": "xml"}, "format"),
        ({"format": "json", "detail": "short"}, "detail"),
        ({"as_of": "today"}, "as_of"),
    ],
)
def test_bad_parameters_are_422(
    desk: tuple[LiveServer, httpx.Client], params: dict[str, str], field: str
) -> None:
    _, client = desk
    response = feed(client, **params)
    assert response.status_code == 422
    assert response.json()["error"]["details"][0]["field"] == field


def test_an_as_of_without_its_offset_is_told_what_it_needs(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    # a new user's trial: ingest and the tools say a time needs its offset; the feed said
    # only "must be an RFC 3339 time"
    _, client = desk
    response = feed(client, as_of="2026-05-21T12:00:00")
    assert response.status_code == 422
    [detail] = response.json()["error"]["details"]
    assert detail["field"] == "as_of" and "offset (Z or ±hh:mm)" in detail["message"]
    assert "2026-05-21T12:00:00" not in response.text


def test_channels_given_more_than_once_are_all_read_and_other_repeats_are_422(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    """``channels=a&channels=b`` (how many HTTP clients write a list) reads both channels;
    another feed parameter given twice is refused, not read as its last value (a new user's
    trial: the first channel was silently dropped); a name the feed does not take is
    ignored, twice or not."""
    _, client = desk
    ingest_ok(
        client,
        message_event("1", "stop moved to 408", created_at=at(19)),
        message_event("2", "filled 20 ES at 6700", channel="pit", created_at=at(19, 5)),
    )
    repeated = client.get("/channel-awareness", params=[("channels", "floor"), ("channels", "pit")])
    assert repeated.status_code == 200
    assert header(repeated.text)["channels"] == "floor,pit"
    assert "stop moved to 408" in repeated.text and "filled 20 ES" in repeated.text
    twice = client.get(
        "/channel-awareness",
        params=[("channels", "floor"), ("max_chars", "3000"), ("max_chars", "4000")],
    )
    assert twice.status_code == 422
    assert twice.json()["error"]["details"][0]["field"] == "max_chars"
    assert "3000" not in twice.text and "4000" not in twice.text
    busted = client.get(
        "/channel-awareness", params=[("channels", "floor"), ("_", "1"), ("_", "2")]
    )
    assert busted.status_code == 200


@pytest.mark.parametrize(
    ("name", "meant"),
    [("maxchars", "max_chars"), ("max-chars", "max_chars"), ("maxChars", "max_chars"),
     ("channel", "channels"), ("asOf", "as_of"), ("FORMAT", "format"),
     ("budget", "max_chars"), ("chars", "max_chars"), ("channel_id", "channels")],
)  # fmt: skip
def test_a_feed_parameter_written_otherwise_is_a_422_naming_the_one_meant(
    desk: tuple[LiveServer, httpx.Client], name: str, meant: str
) -> None:
    """A new user's trial: ``maxchars=2000`` served the default budget in silence. A name
    that is a feed parameter's written otherwise is refused, naming the parameter; another
    name stays ignored."""
    _, client = desk
    ingest_ok(client, message_event("1", "stop moved to 408", created_at=at(19)))
    refused = client.get("/channel-awareness", params={"channels": "floor", name: "2000"})
    assert refused.status_code == 422
    detail = refused.json()["error"]["details"][0]
    assert detail["field"] == name and detail["message"].endswith(meant)
    assert "2000" not in refused.text
    ignored = client.get("/channel-awareness", params={"channels": "floor", "maxchar_x": "1"})
    assert ignored.status_code == 200


def test_the_format_is_read_in_any_case(desk: tuple[LiveServer, httpx.Client]) -> None:
    _, client = desk
    ingest_ok(client, message_event("1", "stop moved to 408", created_at=at(19)))
    shouted = client.get("/channel-awareness", params={"channels": "floor", "format": "JSON"})
    assert shouted.status_code == 200 and shouted.json()["header"]["channels"] == ["floor"]


def test_statuses(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    ingest_ok(client, message_event("1", "stop moved to 408", created_at=at(19)))
    assert header(feed(client).text)["digest"] == "stale"
    stale = feed(client).text
    assert "> stop moved to 408\n" in stale  # unprocessed messages are shown raw
    server.drain()
    assert header(feed(client).text)["digest"] == "ok"
    ingest_ok(client, {"type": "coverage_gap", "channel_id": "floor", "from": at(10), "to": at(11)})
    head = header(feed(client).text)
    assert head["digest"] == "coverage_gap" and head["coverage_gaps"] == "1"
    ingest_ok(client, {"type": "coverage_gap_resolved", "channel_id": "floor", "gap_id": 1})
    ingest_ok(client, {"type": "forget", "channel_id": "floor", "message_ids": ["1"]})
    assert header(feed(client).text)["digest"] == "unavailable"


def test_raw_window_kind(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    ingest_ok(client, *(message_event(str(i), f"m{i}", created_at=at(10 + i)) for i in range(5)))
    server.drain()
    text = feed(client, context_kind="raw_window", limit=3).text
    head = header(text)
    assert head["kind"] == "raw_window" and head["messages"] == "3" and head["omitted"] == "2"
    assert "[digest]" not in text
    # the omission line says why: the limit, with the budget far from used up
    assert "\n[omitted 2 messages due to limit; retrieve with get_channel_messages]\n" in text
    # … and the budget when it is what left them out
    ingest_ok(client, *(message_event(f"w{i}", "w" * 300, created_at=at(16, i)) for i in range(5)))
    server.drain()
    tight = feed(client, context_kind="raw_window", limit=10, max_chars=1_200).text
    assert len(tight) <= 1_200 and "messages due to max_chars; retrieve" in tight
    # a literal "+" decodes to a space in a query string: both spellings work
    spaced = client.get("/channel-awareness?channels=floor&context_kind=raw_window+digest")
    assert header(spaced.text)["kind"] == "raw_window+digest"


def test_as_of_serves_what_an_agent_saw_then(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", "stop moved to 408", created_at=at(10)),
        message_event("2", "watching the 2y", created_at=at(11)),
    )
    server.drain()
    seen = feed(client).text  # at 20:00
    server.clock.advance(3600)  # the later events arrive after they happened
    ingest_ok(
        client,
        message_event("1", "stop moved to 410", created_at=at(10), edited_at=at(20, 30)),
        {"type": "delete", "channel_id": "floor", "message_id": "2", "deleted_at": at(20, 40)},
        message_event("3", "a later message", created_at=at(20, 50)),
    )
    server.drain()
    now = feed(client).text
    assert "410" in now and "watching the 2y" not in now and "a later message" in now
    then = feed(client, as_of="2026-05-21T20:00:00Z").text
    assert "> stop moved to 408\n" in then and "> watching the 2y\n" in then
    assert "a later message" not in then and "410" not in then
    assert header(then)["available"] == "2"
    assert header(then)["range"] == header(seen)["range"]
    ingest_ok(client, {"type": "forget", "channel_id": "floor", "message_ids": ["2"]})
    assert "watching the 2y" not in feed(client, as_of="2026-05-21T20:00:00Z").text


def test_trust_markers_per_token(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(worker={"enabled": False}, tokens=TOKENS)
    with server.client(ADMIN) as admin:
        ingest_ok(
            admin,
            message_event("1", "from the lead", created_at=at(19, 1), author="lead"),
            message_event("2", "from me", created_at=at(19, 2), author="me"),
            message_event(
                "3", "from the system", created_at=at(19, 3), author="sys", origin="system"
            ),
            message_event(
                "4", "from another agent", created_at=at(19, 4), author="bot", origin="agent"
            ),
        )
        server.drain()
    with server.client(READ) as reader:
        body = reader.get(
            "/channel-awareness", params={"channels": "floor", "format": "json"}
        ).json()
    trust = {m["message_id"]: (m["origin"], m["trust"]) for m in body["raw_recent"]}
    assert trust == {
        "1": ("human", "authorized"),
        "2": ("human", "self"),
        "3": ("system", "system"),
        "4": ("agent", "unverified"),
    }
    server.__exit__()
    # the same database behind a token configured differently: the next request shows it
    changed = [dict(TOKENS[1], authorized_author_ids=[], self_author_ids=["u-lead"])]
    again = make_server(worker={"enabled": False}, tokens=changed)
    with again.client(READ) as reader:
        text = reader.get("/channel-awareness", params={"channels": "floor"}).text
    # the default role is other here (system and agent): a person's message is marked user
    assert "[19:01 1 lead self assistant]" in text and "[19:02 2 me user]" in text


def test_unknown_and_forbidden_channels_answer_the_same(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(client, message_event("1", "secret ops talk", channel="ops", created_at=at(19)))
    with server.client(READ) as reader:
        forbidden = reader.get("/channel-awareness", params={"channels": "ops"})
        unknown = reader.get("/channel-awareness", params={"channels": "nope"})
        mixed = reader.get("/channel-awareness", params={"channels": "floor,ops"})
    assert forbidden.status_code == unknown.status_code == mixed.status_code == 404
    assert forbidden.content == unknown.content == mixed.content
    drop = {"date"}
    assert {k: v for k, v in forbidden.headers.items() if k not in drop} == {
        k: v for k, v in unknown.headers.items() if k not in drop
    }


def test_etag_changes_with_content_and_if_none_match_is_304(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(client, message_event("1", "stop moved to 408", created_at=at(19)))
    server.drain()
    first = feed(client)
    tag = first.headers["etag"]
    assert feed(client).headers["etag"] == tag and feed(client).text == first.text
    cached = (
        feed(client, **{})
        if False
        else client.get(
            "/channel-awareness", params={"channels": "floor"}, headers={"if-none-match": tag}
        )
    )
    assert cached.status_code == 304 and cached.content == b""
    ingest_ok(client, message_event("2", "another", created_at=at(19, 30)))
    server.drain()
    assert feed(client).headers["etag"] != tag


def test_no_content_author_or_channel_body_in_logs(
    desk: tuple[LiveServer, httpx.Client], caplog: pytest.LogCaptureFixture
) -> None:
    server, client = desk
    canary, author = "Vermilioncanary5521", "Amberauthor8812"
    with caplog.at_level(logging.DEBUG):
        ingest_ok(
            client,
            message_event("1", f"stop moved to 408 {canary}", created_at=at(19), author=author),
        )
        server.drain()
        feed(client)
        feed(client, format="json")
        client.post("/digest", json={"channel_ids": ["floor"]})
        client.post("/search", json={"channel_ids": ["floor"], "query": canary})
        metrics = client.get("/metrics").text
    records = [r for r in caplog.records if r.name == "channel_memory.ops"]
    assert len(records) == 2
    op = json.loads(records[0].getMessage())
    assert op["event"] == "channel_context_op" and op["type"] == "feed"
    assert op["consumer"] == "ops" and op["status"] == "ok" and op["returned"] == 1
    for text in (caplog.text, metrics):
        assert canary.lower() not in text.lower() and author.lower() not in text.lower()
    assert "floor" not in metrics
    assert "channel_context_ops_total" in metrics
    assert "channel_memory_worker_blocks_written_total 1.0" in metrics


def test_refused_feed_and_tool_calls_are_counted_with_their_codes(
    desk: tuple[LiveServer, httpx.Client], caplog: pytest.LogCaptureFixture
) -> None:
    # a new user's trial: /metrics counted only the calls that succeeded
    server, client = desk
    canary = "Cobaltcanary7741"
    ingest_ok(client, message_event("1", "stop moved to 408", created_at=at(19)))
    server.drain()
    with caplog.at_level(logging.DEBUG):
        assert feed(client, channels=canary).status_code == 404
        unknown = client.post(
            "/v1/tools/search_channel_context", json={"channels": [canary], "query": "stop"}
        )
        assert unknown.status_code == 404
        bad = client.post("/v1/tools/get_channel_messages", json={"channels": ["floor"], canary: 1})
        assert bad.status_code == 422
        assert client.get("/v1/blocks/" + canary).status_code == 404
        assert feed(client).status_code == 200
        metrics = client.get("/metrics").text
    records = [json.loads(r.getMessage()) for r in caplog.records if r.name == "channel_memory.ops"]
    refused = [(r["type"], r["tool_name"], r["status_code"], r["error"]) for r in records[:4]]
    assert refused == [
        ("feed", None, 404, "channel_not_found"),
        ("tool", "search_channel_context", 404, "channel_not_found"),
        ("tool", "get_channel_messages", 422, "validation_failed"),
        ("tool", "expand_digest_block", 404, "block_not_found"),
    ]
    assert [r["status"] for r in records] == ["error", "error", "error", "error", "ok"]
    assert 'channel_context_ops_total{status="error",status_code="404",type="tool"} 2.0' in metrics
    assert 'channel_context_ops_total{status="error",status_code="422",type="tool"} 1.0' in metrics
    assert 'channel_context_ops_total{status="error",status_code="404",type="feed"} 1.0' in metrics
    served = " ".join(r.getMessage() for r in caplog.records if r.name.startswith("channel_memory"))
    assert canary.lower() not in served.lower() and canary.lower() not in metrics.lower()


def test_a_call_whose_token_lacks_its_scope_is_recorded_an_unknown_token_not(
    make_server: Callable[..., LiveServer], caplog: pytest.LogCaptureFixture
) -> None:
    bridge = "ingest-only-token-0123456789"
    server = make_server(
        worker={"enabled": False},
        tokens=[*TOKENS, {"token": bridge, "scopes": ["ingest"], "agent_id": "bridge"}],
    )
    with caplog.at_level(logging.DEBUG):
        with server.client(bridge) as client:
            assert feed(client).status_code == 403
        with server.client("not-a-configured-token-01") as client:
            assert feed(client).status_code == 401
    records = [json.loads(r.getMessage()) for r in caplog.records if r.name == "channel_memory.ops"]
    assert [(r["consumer"], r["status_code"], r["error"]) for r in records] == [
        ("bridge", 403, "forbidden")
    ]


def test_ready_and_stats(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    ingest_ok(client, message_event("1", "stop moved to 408", created_at=at(19)))
    with server.client() as anonymous:
        assert anonymous.get("/ready").json() == {
            "ready": True,
            "queue_depth": 1,
            "lag_seconds": 0.0,
        }
        server.clock.advance(60)
        lagging = anonymous.get("/ready")
        assert lagging.status_code == 503 and lagging.json()["ready"] is False
        server.drain()
        assert anonymous.get("/ready").status_code == 200
        assert anonymous.get("/v1/stats").status_code == 401
    with server.client(READ) as reader:
        assert reader.get("/v1/stats").status_code == 403
    stats = client.get("/v1/stats").json()
    [channel] = stats["channels"]
    assert channel["channel_id"] == "floor" and channel["messages"] == 1
    assert channel["blocks"] == {"hard_event": 1} and channel["dirty_backlog"] == 0
    assert stats["pending_erasures"] == 0


def feed_without_the_llm_stack(db: Path, settings: dict[str, Any], ingest: bool) -> list[str]:
    """Serve the feed (text and JSON) and the peer digest in a process where importing
    litellm fails; returns the feed bodies. Fails if litellm was loaded at all."""
    script = f"""
import json, sys
sys.modules["litellm"] = None  # any import of litellm now fails
sys.path.insert(0, {str(os.getcwd())!r})
from tests.conftest import FakeClock, LiveServer, message_event
from channel_memory.kernel.config import load_settings
settings = load_settings(None, db={str(db)!r}, **{settings!r})
server = LiveServer(settings, FakeClock())
server.__enter__()
bodies = []
with server.client() as client:
    if {ingest!r}:
        client.post("/v1/ingest", json={{"events": [message_event("1", "stop moved to 408")]}})
        server.drain()
    for fmt in ("text", "json"):
        response = client.get("/channel-awareness", params={{"channels": "floor", "format": fmt}})
        assert response.status_code == 200, response.text
        bodies.append(response.text)
    assert client.post("/digest", json={{"channel_ids": ["floor"]}}).status_code == 200
server.__exit__()
loaded = [n for n, module in sys.modules.items() if n.split(".")[0] == "litellm" and module]
print(json.dumps({{"loaded": loaded, "bodies": bodies}}))
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["loaded"] == []
    bodies: list[str] = out["bodies"]
    return bodies


def test_serving_the_feed_never_loads_the_llm_stack(tmp_path: Path) -> None:
    [text, _] = feed_without_the_llm_stack(tmp_path / "x.db", {}, ingest=True)
    assert "stop moved to 408" in text


def test_the_body_does_not_depend_on_when_blocks_were_generated(
    make_server: Callable[..., LiveServer], clock: Any, tmp_path: Path
) -> None:
    """Only the generation timestamps differ: their width never moves the budget."""
    events = [
        message_event(f"h{i}", f"FILLED {100 + i} NVDA @ 131.{i:02d}", created_at=at(15, i))
        for i in range(40)
    ]
    bodies = []
    for name, fraction in (("a", 0.0), ("b", 0.123456)):
        start = clock.now_us
        clock.advance(fraction)  # the worker derives at a time with (or without) a fraction
        server = make_server(worker={"enabled": False}, db=tmp_path / f"{name}.db")
        with server.client() as client:
            ingest_ok(client, *events)
            server.drain()
            clock.now_us = start  # the feed is read at the same moment
            bodies.append(
                [
                    re.sub(r"(generated_at|read_id)=\S+", "-", client.get(
                        "/channel-awareness", params={"channels": "floor", "max_chars": budget}
                    ).text)
                    for budget in range(400, 1400, 3)
                ]
            )  # fmt: skip
    assert bodies[0] == bodies[1]


def test_lean_objects_keep_what_says_a_version_is_not_current_and_who_wrote_it() -> None:
    from channel_memory.feed.candidates import lean_block, lean_message

    version = {
        "source_kind": "discord", "channel_id": "floor", "message_id": "9",
        "source_handle": "floor/9", "content_hash": "sha256:ab", "observed_seq": 3,
        "is_current": True, "superseded_by": None, "author_id": "u-9", "author_name": None,
        "created_at": at(9), "edited_at": None, "deleted": False, "content": "sold 5 ES",
        "origin": "human", "trust": "unverified", "role": "user", "reply_to": None,
        "thread_id": None,
    }  # fmt: skip
    assert lean_message(version) == {
        "source_handle": "floor/9", "created_at": at(9), "author_id": "u-9", "role": "user",
        "origin": "human", "trust": "unverified", "content": "sold 5 ES",
    }  # fmt: skip
    # as_of shows a version replaced since: lean says so, as full JSON does
    replaced = lean_message({**version, "is_current": False, "superseded_by": 4})
    assert replaced["is_current"] is False and replaced["superseded_by"] == 4
    block = {
        "id": "b1", "kind": "hard_event", "event_type": "trade_fill", "text": "sold 5 ES",
        "source_channel": "floor", "source_messages": ["9"], "source_handles": ["floor/9"],
        "covered_content_hashes": ["sha256:ab"], "source_window": {"from": at(9), "to": at(9)},
        "sparse": False, "score": 0.9, "origin": "human", "trust": "unverified",
        "generated_at": at(10), "stale": True, "dirty": False, "processor": "llm:m",
        "author_name": "desk-lead", "role": "user",
    }  # fmt: skip
    assert lean_block(block) == {
        "kind": "hard_event", "event_type": "trade_fill", "source_handles": ["floor/9"],
        "at": at(9), "author_name": "desk-lead", "role": "user", "origin": "human",
        "trust": "unverified", "stale": True, "processor": "llm:m", "text": "sold 5 ES",
    }  # fmt: skip
