"""Native retrieval tools: search, browse, fragments, block provenance — inside the budget."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer, at, ingest_ok, message_event

READ = "read-token-0123456789ab"
OTHER = "other-token-0123456789a"
ADMIN = "admin-token-0123456789a"
BUDGET = 2_000
TOKENS = [
    {"token": ADMIN, "scopes": ["admin"], "agent_id": "ops"},
    {"token": READ, "scopes": ["read"], "agent_id": "analyst", "channels": ["floor", "ops"]},
    {"token": OTHER, "scopes": ["read"], "agent_id": "other", "channels": ["floor", "ops"]},
]


@pytest.fixture
def desk(make_server: Callable[..., LiveServer]) -> Iterator[tuple[LiveServer, httpx.Client]]:
    server = make_server(
        worker={"enabled": False}, tokens=TOKENS, tools={"result_budget_chars": BUDGET}
    )
    with server.client(READ) as client:
        yield server, client


def push(server: LiveServer, *events: dict[str, Any]) -> None:
    with server.client(ADMIN) as admin:
        ingest_ok(admin, *events)


def call(client: httpx.Client, tool: str, **body: Any) -> httpx.Response:
    response = client.post(f"/v1/tools/{tool}", json=body)
    assert len(response.text) <= BUDGET
    return response


def test_browsing_pages_through_every_message_once_in_order(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    push(
        server,
        *(
            message_event(
                str(i), f"message {i} " + "x" * (i * 37 % 300), created_at=at(i % 60, 10 + i // 60)
            )
            for i in range(90)
        ),
        message_event("o1", "other channel", channel="ops", created_at=at(30)),
    )
    push(server, {"type": "delete", "channel_id": "floor", "message_id": "5"})
    seen: list[str] = []
    cursor = None
    for _ in range(100):
        body = call(
            client, "get_channel_messages", channels=["floor"], limit=7, cursor=cursor
        ).json()
        seen += [m["message_id"] for m in body["messages"]]
        # omitted counts what this page fetched but could not fit, nothing more
        assert 0 <= body["omitted"] <= 7 - len(body["messages"])
        assert body["has_more"] or body["omitted"] == 0
        cursor = body["next_cursor"]
        if not body["has_more"]:
            break
    expected = [str(i) for i in range(90) if i != 5]
    assert seen == expected


def test_browse_after_and_before_are_exclusive(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    push(server, *(message_event(str(i), f"m{i}", created_at=at(i)) for i in range(6)))
    body = call(
        client, "get_channel_messages", channels=["floor"], after="floor/1", before=at(4)
    ).json()
    assert [m["message_id"] for m in body["messages"]] == ["2", "3"]
    message = body["messages"][0]
    assert message["origin"] == "human" and message["trust"] == "unverified"
    assert message["attachments"] == [] and message["reply_to"] is None


def test_a_bound_is_a_message_id_alone_when_one_channel_is_asked(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    # a feed of one channel shows message ids alone: "after": "1" there is floor/1
    server, client = desk
    push(server, *(message_event(str(i), f"m{i}", created_at=at(i)) for i in range(6)))
    push(server, message_event("o1", "other channel", channel="ops", created_at=at(30)))
    body = call(client, "get_channel_messages", channels=["floor"], after="1", before="4").json()
    assert [m["message_id"] for m in body["messages"]] == ["2", "3"]
    # with two channels it names neither: refused at the field, with what it may be
    for body_args in (
        {"channels": ["floor", "ops"], "after": "1"},
        {"channels": ["floor", "ops"], "before": "soon"},
    ):
        response = call(client, "get_channel_messages", **body_args)
        field = "after" if "after" in body_args else "before"
        assert response.status_code == 422
        error = response.json()["error"]
        assert error["message"] == f"the request is invalid (field {field})"
        assert (
            error["details"][0]["field"] == field
            and "message id alone" in error["details"][0]["message"]
        )
        assert "soon" not in response.text
    # a handle of a channel not asked for names the field too
    response = call(client, "get_channel_messages", channels=["floor"], after="ops/1")
    assert (
        response.status_code == 422 and response.json()["error"]["details"][0]["field"] == "after"
    )
    # a time without its offset is a time, not a message id: refused with what it lacks
    response = call(client, "get_channel_messages", channels=["floor"], after="2026-05-21T16:02:00")
    assert response.status_code == 422
    [detail] = response.json()["error"]["details"]
    assert detail["field"] == "after" and "offset" in detail["message"]
    # a new user's trial: a time of day as the feed shows it ("11:30") answered 404; no
    # message has that id, so it is refused as a time without its date, at its field
    for value, field in (("11:30", "after"), ("floor/9:05:00", "before")):
        response = call(client, "get_channel_messages", channels=["floor"], **{field: value})
        assert response.status_code == 422
        [detail] = response.json()["error"]["details"]
        assert detail["field"] == field and "date and offset" in detail["message"]
        assert value not in response.text
    # a message whose id reads like a time is still found by it
    push(server, message_event("10:15", "named like a time", created_at=at(8)))
    body = call(client, "get_channel_messages", channels=["floor"], after="10:15").json()
    assert body["messages"] == []  # nothing after the newest message


def browse_all(client: httpx.Client, **body: Any) -> list[str]:
    """The message ids of a browse, every page followed."""
    seen: list[str] = []
    cursor = None
    for _ in range(50):
        page = call(client, "get_channel_messages", cursor=cursor, **body).json()
        seen += [m["message_id"] for m in page["messages"]]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            return seen
    raise AssertionError("no last page")


def test_hard_events_read_as_the_feed_serves_them(desk: tuple[LiveServer, httpx.Client]) -> None:
    # the same id and the client's same version label in two channels: each keeps its own
    # decision type; a block the worker has yet to derive again is left out, as the feed does
    server, client = desk
    push(
        server,
        message_event("7", "FILLED 100 NVDA @ 131.00", created_at=at(1), content_hash="v1"),
        message_event(
            "7",
            "proposal: buy 100 NVDA @ 131, stop 129, target 140",
            channel="ops",
            created_at=at(2),
            content_hash="v1",
        ),
    )
    server.drain()
    both = browse_all(client, channels=["floor", "ops"], hard_events=True)
    assert both == ["7", "7"]
    pages = call(
        client, "get_channel_messages", channels=["floor", "ops"], hard_events=True
    ).json()["messages"]
    kinds = {m["source_handle"]: m["decision"] for m in pages}
    assert kinds == {"floor/7": "trade_fill", "ops/7": "trade_proposal"}
    server.run(_mark_dirty(server, 1))
    assert browse_all(client, channels=["floor", "ops"], hard_events=True) == []
    server.run(_mark_dirty(server, 0))
    assert browse_all(client, channels=["floor", "ops"], hard_events=True) == ["7", "7"]
    # a window reaching back before 1970 starts there (not a 500)
    assert browse_all(client, channels=["floor"], since="9999999999999999h") == ["7"]


async def _mark_dirty(server: LiveServer, dirty: int) -> None:
    """Every block marked as waiting to be derived again (1), or fresh again (0)."""
    async with server.app.state.ctx.store.write() as conn:
        await conn.execute("UPDATE recall_blocks SET dirty = ?", (dirty,))


def test_since_starts_a_browse_where_a_feed_window_starts(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    # the clock reads 20:00: "since": "4h" starts at 16:00, inclusive, as a feed's window
    server, client = desk
    push(server, *(message_event(str(i), f"m{i}", created_at=at(0, 14 + i)) for i in range(6)))
    assert browse_all(client, channels=["floor"], since="4h") == ["2", "3", "4", "5"]
    assert browse_all(client, channels=["floor"], since="2026-05-21T17:00:00Z") == ["3", "4", "5"]
    # with after, the later bound holds; with before, the range between
    assert browse_all(client, channels=["floor"], since="4h", after="floor/3") == ["4", "5"]
    assert browse_all(client, channels=["floor"], since="5h", before="floor/4") == ["1", "2", "3"]
    # a cursor from another window is refused
    first = call(client, "get_channel_messages", channels=["floor"], since="4h", limit=2).json()
    other = call(
        client, "get_channel_messages", channels=["floor"], since="5h", cursor=first["next_cursor"]
    )
    assert other.status_code == 400 and other.json()["error"]["code"] == "cursor_mismatch"
    bad = call(client, "get_channel_messages", channels=["floor"], since="yesterday")
    assert bad.status_code == 422 and bad.json()["error"]["details"][0]["field"] == "since"


def browse_decisions(
    client: httpx.Client, **bounds: str
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """A browse of the channel's hard events, and its messages by id."""
    browsed = call(
        client, "get_channel_messages", channels=["floor"], hard_events=True, **bounds
    ).json()
    return browsed, {m["message_id"]: m for m in browsed["messages"]}


def test_a_decision_too_big_for_the_result_shows_its_decision_lines(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    """A new user's trial: a 45,000-character report browsed as a hard event came as a
    locator alone, its decision in its last lines four fragments away; browsed with
    ``hard_events``, it carries what the feed shows of it (``decision_excerpt``: its
    decision lines, the rest marked elided). A plain browse and a small decision carry
    none."""
    server, client = desk
    report = (
        "EOD risk report, rates book\n"
        + "".join(f"- bucket {n}: dv01 {n * 3}k, within limits, no change\n" for n in range(120))
        + "Decision: stop on the 40 FGBL short moved to 131.20, was 131.60."
    )
    assert len(report) > BUDGET
    push(
        server,
        message_event("eod", report, created_at=at(1)),
        message_event("fill", "sold 20 FGBL at 131.05, done", created_at=at(2)),
    )
    server.drain()
    browsed, by_id = browse_decisions(client, since="100000h")
    assert by_id["eod"]["content"] is None
    assert by_id["eod"]["decision"] == "stop_or_target_change"
    excerpt = by_id["eod"]["decision_excerpt"]
    assert "stop on the 40 FGBL short moved to 131.20, was 131.60." in excerpt
    assert "lines elided" in excerpt and len(excerpt) < 600
    assert browsed["read_content"] == [{"source_handle": "floor/eod", "content_chars": len(report)}]
    assert "decision_excerpt" not in by_id["fill"]  # shown whole
    plain = call(client, "get_channel_messages", channels=["floor"], since="100000h").json()
    assert all("decision_excerpt" not in m for m in plain["messages"])
    # decision lines too many for the result: its decision clauses, … where text is left out
    busy = "EOD fills, futures book\n" + "".join(
        f"- sold {n + 1} ES at 67{n:02d}.25 on the screen, done\n" for n in range(90)
    )
    push(server, message_event("busy", busy, created_at=at(3)))
    server.drain()
    _, by_id = browse_decisions(client, after="floor/fill")
    assert by_id["busy"]["content"] is None
    excerpt = by_id["busy"]["decision_excerpt"]
    assert "…" in excerpt and len(excerpt) < BUDGET // 2
    # named by its handle, a decision keeps its type, as a browse of decisions shows it
    named = call(client, "get_channel_messages", source_handles=["floor/fill"]).json()
    assert named["messages"][0]["decision"] == "trade_fill"


def test_oversized_message_is_read_in_exact_fragments(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    big = "line one\r\nüñï 🚀 " + ('0123456789abcdef"\\\n' * 400) + "end\n"
    push(
        server,
        message_event("big", big, created_at=at(1)),
        message_event("s", "small", created_at=at(2)),
    )
    listed = call(client, "get_channel_messages", channels=["floor"]).json()
    assert [m["message_id"] for m in listed["messages"]] == ["big", "s"]
    assert listed["messages"][0]["content"] is None
    assert listed["read_content"] == [{"source_handle": "floor/big", "content_chars": len(big)}]
    pieces = []
    body = call(client, "get_channel_messages", source_handles=["floor/big"]).json()
    while True:
        fragment = body["fragment"]
        assert fragment["offset"] == sum(len(p) for p in pieces)
        assert fragment["total_chars"] == len(big)
        pieces.append(fragment["content"])
        if "next_content_cursor" not in fragment:
            break
        body = call(
            client, "get_channel_messages", content_cursor=fragment["next_content_cursor"]
        ).json()
    assert len(pieces) > 3
    assert "".join(pieces).encode() == big.encode()


def test_content_cursors_refuse_edits_other_targets_and_tampering(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    big = "z" * 5000
    push(
        server,
        message_event("big", big, created_at=at(1)),
        message_event("s", "small", created_at=at(2)),
    )
    first = call(client, "get_channel_messages", source_handles=["floor/big"]).json()["fragment"]
    token = first["next_content_cursor"]
    other = call(client, "get_channel_messages", source_handles=["floor/s"], content_cursor=token)
    assert other.status_code == 400 and other.json()["error"]["code"] == "cursor_mismatch"
    body, mac = token.split(".")
    forged = call(client, "get_channel_messages", content_cursor=body[:-2] + "AA." + mac)
    assert forged.status_code == 400 and forged.json()["error"]["code"] == "cursor_invalid"
    push(server, message_event("big", big + "!", created_at=at(1), edited_at=at(3)))
    edited = call(client, "get_channel_messages", content_cursor=token)
    assert edited.status_code == 409 and edited.json()["error"]["code"] == "content_changed"


def test_paging_cursors_are_bound_to_query_channels_and_caller(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    push(
        server,
        *(message_event(str(i), f"NVDA note {i}", created_at=at(i)) for i in range(10)),
        *(
            message_event(f"o{i}", f"NVDA ops {i}", channel="ops", created_at=at(i))
            for i in range(3)
        ),
    )
    page = call(client, "get_channel_messages", channels=["floor"], limit=3).json()
    cursor = page["next_cursor"]
    assert page["has_more"] and cursor
    across = call(client, "get_channel_messages", channels=["floor", "ops"], limit=3, cursor=cursor)
    assert across.status_code == 400 and across.json()["error"]["code"] == "cursor_mismatch"
    with server.client(OTHER) as other:
        stolen = other.post(
            "/v1/tools/get_channel_messages",
            json={"channels": ["floor"], "limit": 3, "cursor": cursor},
        )
    assert stolen.status_code == 400 and stolen.json()["error"]["code"] == "cursor_mismatch"
    found = call(client, "search_channel_context", channels=["floor"], query="nvda", limit=3).json()
    wrong_query = call(
        client, "search_channel_context", channels=["floor"], query="note", limit=3,
        cursor=found["next_cursor"],
    )  # fmt: skip
    assert wrong_query.status_code == 400
    garbage = call(client, "get_channel_messages", channels=["floor"], cursor="not-a-cursor")
    assert garbage.status_code == 400 and garbage.json()["error"]["code"] == "cursor_invalid"


def test_search_pages_newest_first_and_honours_filters(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    push(
        server,
        *(
            message_event(
                str(i), f"NVDA flows {i}", author="Analyst-B" if i % 2 else "lead", created_at=at(i)
            )
            for i in range(12)
        ),
        message_event("x", "NVDA secret", channel="hidden", created_at=at(20)),
    )
    push(server, {"type": "forget", "channel_id": "floor", "message_ids": ["11"]})
    seen: list[str] = []
    cursor = None
    while True:
        body = call(
            client,
            "search_channel_context",
            channels=["floor"],
            query="nvda",
            limit=4,
            cursor=cursor,
        ).json()
        seen += [h["message_id"] for h in body["hits"]]
        if not body["has_more"]:
            break
        cursor = body["next_cursor"]
    assert seen == [str(i) for i in range(10, -1, -1)]
    hit = call(client, "search_channel_context", channels=["floor"], query="flows 3").json()[
        "hits"
    ][0]
    assert hit == hit | {"kind": "message", "source_handle": "floor/3", "trust": "unverified"}
    assert "flows 3" in hit["excerpt"]
    by_author = call(
        client, "search_channel_context", channels=["floor"], query="nvda", author="analyst"
    ).json()
    assert {h["message_id"] for h in by_author["hits"]} == {"1", "3", "5", "7", "9"}
    recent = call(
        client,
        "search_channel_context",
        channels=["floor"],
        query="nvda",
        since="2026-05-21T16:09:00Z",
    ).json()
    assert [h["message_id"] for h in recent["hits"]] == ["10", "9"]
    hidden = call(client, "search_channel_context", channels=["hidden"], query="nvda")
    unknown = call(client, "search_channel_context", channels=["nope"], query="nvda")
    assert hidden.status_code == unknown.status_code == 404 and hidden.content == unknown.content


def test_block_provenance_resolves_exact_versions(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    push(
        server,
        *(message_event(str(i), "HEARTBEAT_OK", author="bot", created_at=at(i)) for i in range(3)),
    )
    server.drain()
    hit = call(client, "search_channel_context", channels=["floor"], query="runtime status").json()[
        "hits"
    ][0]
    assert hit["kind"] == "telemetry_count"
    block = client.get(f"/v1/blocks/{hit['block_id']}").json()
    assert [p["source_handle"] for p in block["provenance"]] == ["floor/0", "floor/1", "floor/2"]
    assert all(p["is_current"] and not p["deleted"] for p in block["provenance"])
    push(
        server,
        message_event("1", "HEARTBEAT_OK again", author="bot", created_at=at(1), edited_at=at(9)),
    )
    stale = client.get(f"/v1/blocks/{hit['block_id']}").json()
    assert stale["dirty"] is True
    assert [p["is_current"] for p in stale["provenance"]] == [True, False, True]
    missing = client.get("/v1/blocks/doesnotexist")
    assert missing.status_code == 404
    assert "read the feed or search again" in missing.json()["error"]["message"]


def test_hard_events_browses_the_decisions_a_feed_omitted(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    # forty fills among sixty lines of chatter: a small feed shows some fills, names some
    # and counts the rest; browsing with hard_events reads exactly those forty, in pages
    server, client = desk
    fills = [f"f{i}" for i in range(40)]
    push(
        server,
        *(
            message_event(
                f, f"FILLED {100 + i} NVDA @ 131.{i:02d}", created_at=at(i % 60, 5 + i // 20)
            )
            for i, f in enumerate(fills)
        ),
        *(
            message_event(f"c{i}", "chatter " + "x" * 200, created_at=at(i % 60, 8 + i // 30))
            for i in range(60)
        ),
        message_event("o1", "FILLED 5 NVDA @ 130.00", channel="ops", created_at=at(30)),
    )
    # a fill edited into chatter is no decision now; a deleted fill is gone
    push(
        server,
        message_event("f3", "never mind " + "x" * 40, created_at=at(3, 5), edited_at=at(0, 9)),
        {"type": "delete", "channel_id": "floor", "message_id": "f4"},
    )
    server.drain()
    decisions = [f for f in fills if f not in ("f3", "f4")]
    seen: list[str] = []
    cursor = None
    for _ in range(20):
        body = call(
            client, "get_channel_messages", channels=["floor"], hard_events=True, cursor=cursor
        ).json()
        seen += [m["message_id"] for m in body["messages"]]
        # each with its decision type, as the feed names its kind
        assert {m["decision"] for m in body["messages"]} == {"trade_fill"}
        cursor = body["next_cursor"]
        if not body["has_more"]:
            break
    assert seen == decisions
    # what a small feed shows, names and counts is what the filter reads
    small = client.get(
        "/channel-awareness", params={"channels": "floor", "max_chars": 3000, "format": "json"}
    ).json()
    omitted = small["omitted"]
    named = {h.split("/", 1)[1] for h in omitted["hard_events"]}
    shown = sum(block["kind"] == "hard_event" for block in small["digest"])
    assert shown and named and named <= set(seen)
    assert shown + len(named) + omitted["more_hard_events"] == len(seen)
    # browsing back from a time, and by author, combine with it
    before = call(
        client, "get_channel_messages", channels=["floor"], hard_events=True, before=at(0, 6)
    ).json()
    # (the budget keeps the ones nearest the anchor; the cursor goes further back)
    got = [m["message_id"] for m in before["messages"]]
    assert got and got == decisions[:18][-len(got) :] and before["has_more"]
    assert not call(
        client, "get_channel_messages", channels=["floor"], hard_events=True, author="nobody"
    ).json()["messages"]
    # an unfiltered browse carries no decision field
    plain = call(client, "get_channel_messages", channels=["floor"], limit=3).json()
    assert plain["messages"] and not [m for m in plain["messages"] if "decision" in m]
    # a cursor of the filtered browse does not page an unfiltered one
    first = call(
        client, "get_channel_messages", channels=["floor"], hard_events=True, limit=5
    ).json()
    other = call(client, "get_channel_messages", channels=["floor"], cursor=first["next_cursor"])
    assert other.status_code == 400 and other.json()["error"]["code"] == "cursor_mismatch"


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({"message_ids": ["m1"]}, "channels", "message_ids need channels"),
        ({"channels": ["floor"], "message_ids": ["re:m1"]}, "message_ids", 'without "re:"'),
        ({"channels": ["floor"], "message_ids": ["decided:m1"]}, "message_ids", '"decided:"'),
        ({"source_handles": ["floor/m1"], "message_ids": ["m1"]}, "message_ids", "not both"),
        ({"source_handles": ["floor/m1"], "before": "2025-01-01T00:00:00Z"}, "before", "browse"),
        ({"source_handles": ["floor/m1"], "hard_events": True}, "hard_events", "filters browsing"),
        ({"source_handles": ["floor/m1"], "since": "24h"}, "since", "bounds browsing"),
        ({"channels": ["floor"], "include_history": True}, "include_history", "named messages"),
        ({"limit": 5}, "channels", "channels are required"),
        # what a feed line shows: a message id alone, or "re:" and the proposal's id
        ({"source_handles": ["re:m1"]}, "source_handles.0", "message_ids, with channels"),
        ({"source_handles": ["m0052"]}, "source_handles.0", 'is "channel/message"'),
        # an input that happens to appear in the advice does not hide it
        ({"source_handles": ["re:"]}, "source_handles.0", "message_ids, with channels"),
        ({"source_handles": ["floor/a b"]}, "source_handles.0", "letters, digits"),
        # a whole handle, as the omission line writes it, put in message_ids
        (
            {"channels": ["floor"], "message_ids": ["floor/m0052"]},
            "message_ids.0",
            "goes in source_handles",
        ),
    ],
)
def test_a_refused_read_names_the_field_to_change(
    desk: tuple[LiveServer, httpx.Client], body: dict[str, Any], field: str, says: str
) -> None:
    _, client = desk
    response = call(client, "get_channel_messages", **body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_failed"
    assert error["message"] == f"the request is invalid (field {field})"
    assert [(d["field"], says in d["message"]) for d in error["details"]] == [(field, True)]
    # the message id sent is never repeated in the answer
    assert "m0052" not in response.text and "re:m1" not in response.text
    assert "a b" not in response.text
