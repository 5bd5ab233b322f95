"""Consumption through the feed and the tools: every answer's ``read_id`` names exactly the
versions it showed complete; settling it ``handled`` removes ``new`` from them, per consumer."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from channel_memory.inspector.feedview import served_items
from tests.conftest import LiveServer, ingest_ok, message_event, query

ALPHA = "alpha-token-0123456789"
BETA = "beta-token-01234567890"
TOKENS = [
    {"token": ALPHA, "scopes": ["read", "ingest"], "agent_id": "alpha", "channels": ["*"]},
    {"token": BETA, "scopes": ["read"], "agent_id": "beta", "channels": ["*"]},
]
# a hard event over feed.hard_event_max_chars: stored with its other lines elided
ELIDED = "FILLED 100 NVDA @ 131.20\n" + "\n".join(
    f"context line {i} " + "c" * 40 for i in range(30)
)


def at(minute: int, hour: int = 19) -> str:
    return f"2026-05-21T{hour:02d}:{minute:02d}:00Z"


@pytest.fixture
def server(make_server: Callable[..., LiveServer]) -> LiveServer:
    return make_server(worker={"enabled": False}, tokens=TOKENS)


@pytest.fixture
def alpha(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client(ALPHA) as client:
        yield client


def feed(client: httpx.Client, channel: str = "floor", **params: Any) -> dict[str, Any]:
    response = client.get(
        "/channel-awareness", params={"channels": channel, "format": "json", **params}
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert response.headers["read-id"] == body["header"]["read_id"]
    return body


def elements(body: dict[str, Any]) -> dict[str, bool]:
    """Every element's ``new``, by message id (blocks by their first source)."""
    found = {m["message_id"]: m["new"] for m in body["raw_recent"]}
    found.update({b["source_messages"][0]: b["new"] for b in body["digest"]})
    if "trigger" in body:
        found[body["trigger"]["message_id"]] = body["trigger"]["new"]
    return found


def settle(client: httpx.Client, read_id: str, outcome: str) -> dict[str, Any]:
    response = client.post("/v1/consumption", json={"read_id": read_id, "outcome": outcome})
    assert response.status_code == 200, response.text
    settled: dict[str, Any] = response.json()
    return settled


def ledger(server: LiveServer, consumer: str) -> set[str]:
    rows = query(
        server.settings.db,
        "SELECT message_id FROM consumed_versions WHERE consumer = ? AND whole = 1",
        consumer,
    )
    return {r[0] for r in rows}


def seed(server: LiveServer, client: httpx.Client) -> None:
    ingest_ok(
        client,
        message_event("m1", "Watching the 2y into the auction.", created_at=at(1)),
        message_event("m2", "Lunch at one?", created_at=at(2)),
        message_event("fill", "FILLED 200 NVDA @ 131.20", created_at=at(3)),
        message_event("long", ELIDED, created_at=at(4)),
        message_event("huge", "word " * 6_000, created_at=at(5)),
    )
    server.drain()


def test_handled_removes_new_and_failed_keeps_it(server: LiveServer, alpha: httpx.Client) -> None:
    seed(server, alpha)
    first = feed(alpha)
    assert first["header"]["new"] == len(elements(first)) and all(elements(first).values())
    failed = settle(alpha, first["header"]["read_id"], "failed")
    assert failed["outcome"] == "failed" and ledger(server, "alpha") == set()
    again = feed(alpha)
    assert all(elements(again).values())
    # the same versions shown again: the same read id, re-opened for this turn
    assert again["header"]["read_id"] == first["header"]["read_id"]
    handled = settle(alpha, again["header"]["read_id"], "handled")
    # m1, m2, fill shown whole; the elided hard event and the cut huge message are partial
    assert ledger(server, "alpha") == {"m1", "m2", "fill"} and handled["versions"] == 3
    after = feed(alpha)
    assert elements(after) == {"m1": False, "m2": False, "fill": False, "long": True, "huge": True}
    assert after["header"]["new"] == 2
    text = alpha.get("/channel-awareness", params={"channels": "floor"}).text
    # an id spelled like a kind keeps its channel (its author under an alias or by name)
    assert re.search(r" fill floor/fill (desk-lead|DLhw)( seen)?\]\n", text)
    assert [i.author for i in served_items(text) if i.message_id == "fill"] == ["desk-lead"]
    assert " new=2 " in text.split("\n", 1)[0]


def test_a_hard_event_cut_to_its_decision_clauses_does_not_consume(
    server: LiveServer, alpha: httpx.Client
) -> None:
    ingest_ok(
        alpha,
        *(
            message_event(
                f"h{i}",
                f"Morning all, quick context on the book today. FILLED {100 + i} NVDA "
                f"@ 131.{i:02d}. " + "More colour on the tape follows in the afternoon. " * 3,
                created_at=at(i),
            )
            for i in range(12)
        ),
    )
    server.drain()
    tight = alpha.get("/channel-awareness", params={"channels": "floor", "max_chars": 1_600})
    # some hard events are shown cut to their clauses, "…" where text is left out
    cut = {
        item.message_id  # a feed of one channel: the message id
        for item in served_items(tight.text)
        if any("…" in line for line in item.content)
    }
    read_id = tight.headers["read-id"]
    settle(alpha, read_id, "handled")
    assert cut and not cut & ledger(server, "alpha")


def test_a_fragment_and_a_locator_do_not_consume_a_whole_read_does(
    server: LiveServer, alpha: httpx.Client
) -> None:
    seed(server, alpha)
    part = alpha.post("/v1/tools/get_channel_messages", json={"source_handles": ["floor/huge"]})
    first = part.json()
    assert "next_content_cursor" in first["fragment"]
    settle(alpha, first["read_id"], "handled")
    cursor = first["fragment"]["next_content_cursor"]
    last = alpha.post("/v1/tools/get_channel_messages", json={"content_cursor": cursor}).json()
    while "next_content_cursor" in last["fragment"]:
        settle(alpha, last["read_id"], "handled")
        cursor = last["fragment"]["next_content_cursor"]
        last = alpha.post("/v1/tools/get_channel_messages", json={"content_cursor": cursor}).json()
    settle(alpha, last["read_id"], "handled")  # the final fragment alone is not the message
    browsed = alpha.post("/v1/tools/get_channel_messages", json={"channels": ["floor"]}).json()
    assert browsed["read_content"] == [{"source_handle": "floor/huge", "content_chars": 30_000}]
    settle(alpha, browsed["read_id"], "handled")
    assert ledger(server, "alpha") == {"m1", "m2", "fill", "long"}  # never the huge one
    assert elements(feed(alpha))["long"] is False  # read whole through the tool


def test_an_edit_reopens_and_a_second_consumer_is_unaffected(
    server: LiveServer, alpha: httpx.Client
) -> None:
    seed(server, alpha)
    settle(alpha, feed(alpha)["header"]["read_id"], "handled")
    assert elements(feed(alpha))["m1"] is False
    with server.client(BETA) as beta:
        assert all(elements(feed(beta)).values())
    ingest_ok(
        alpha,
        message_event("m1", "Watching the 2y, auction tailed.", created_at=at(1), edited_at=at(9)),
    )
    server.drain()
    assert elements(feed(alpha))["m1"] is True and elements(feed(alpha))["m2"] is False


def test_forget_removes_the_ledger_rows(server: LiveServer, alpha: httpx.Client) -> None:
    canary = "canary-7f3e9a consumed then forgotten"
    ingest_ok(alpha, message_event("c", canary, created_at=at(1)))
    server.drain()
    settle(alpha, feed(alpha)["header"]["read_id"], "handled")
    [(content_hash,)] = query(server.settings.db, "SELECT content_hash FROM consumed_versions")
    ingest_ok(alpha, {"type": "forget", "channel_id": "floor", "message_ids": ["c"]})
    assert ledger(server, "alpha") == set()
    assert query(server.settings.db, "SELECT count(*) FROM consumption_read_versions") == [(0,)]
    data = b"".join(
        Path(str(server.settings.db) + s).read_bytes()
        for s in ("", "-wal")
        if Path(str(server.settings.db) + s).exists()
    )
    assert canary.encode() not in data and content_hash.split(":")[-1].encode() not in data


def test_unconsumed_only_serves_what_is_new_within_the_budget(
    server: LiveServer, alpha: httpx.Client
) -> None:
    ingest_ok(
        alpha,
        *(
            message_event(f"m{i:02d}", f"note {i} " + "n" * 200, created_at=at(i, 18))
            for i in range(40)
        ),
    )
    server.drain()
    shown = feed(alpha, max_chars=3_000)
    settle(alpha, shown["header"]["read_id"], "handled")
    done = ledger(server, "alpha")
    assert done
    only = alpha.get(
        "/channel-awareness",
        params={"channels": "floor", "max_chars": 3_000, "unconsumed": "only", "format": "json"},
    )
    assert len(only.text) <= 3_000
    body = only.json()
    assert body["header"]["available"] == 40 - len(done)
    assert elements(body) and all(elements(body).values()) and not done & set(elements(body))
    assert body["header"]["new"] == len(elements(body))
    counted = len(body["raw_recent"]) + sum(len(b["source_messages"]) for b in body["digest"])
    assert counted + body["header"]["omitted"] == body["header"]["available"]


def test_a_handled_summary_is_no_longer_new_and_its_messages_still_are(
    server: LiveServer, alpha: httpx.Client
) -> None:
    """A rollup or collapse block a handled read showed is not served again by
    ``unconsumed=only`` (so it empties), while the messages it stands for stay unconsumed
    until shown complete; a message joining the summary makes it new again (ADR 0068)."""
    ingest_ok(
        alpha,
        *(
            message_event(f"hb{i:02d}", "HEARTBEAT_OK", author="bot", created_at=at(i, 9))
            for i in range(12)
        ),
        *(
            message_event(f"c{i:02d}", f"chatter {i} about the weekend", created_at=at(i, 10))
            for i in range(12)
        ),
        message_event("fill", "FILLED 200 NVDA @ 131.20", created_at=at(1)),
    )
    server.drain()
    only = {"unconsumed": "only", "max_chars": 6_000}
    first = feed(alpha, **only)
    summaries = [b for b in first["digest"] if b["kind"] not in ("hard_event", "raw_excerpt")]
    assert summaries, first["digest"]  # the older chatter and the heartbeats are summarized
    settle(alpha, first["header"]["read_id"], "handled")
    # the messages inside the summaries are not consumed: only what was shown whole
    assert not ledger(server, "alpha") & {m for b in summaries for m in b["source_messages"]}
    summarized = query(
        server.settings.db,
        "SELECT count(*) FROM consumed_versions WHERE consumer = 'alpha' AND whole = 0",
    )
    assert summarized == [(sum(len(b["source_messages"]) for b in summaries),)]
    # the next turn is empty: neither the summaries nor the messages they told of one by
    # one, and the header counts nothing new and nothing left out (the review's finding:
    # the older tier served the summarized chatter verbatim, the header called it omitted)
    again = feed(alpha, **only)
    assert again["digest"] == [] and again["raw_recent"] == [], again["digest"]
    assert (again["header"]["new"], again["header"]["available"], again["header"]["omitted"]) == (
        0,
        0,
        0,
    )
    # the same window for every message (not only the new): all of them, the summaries too
    everything = feed(alpha, max_chars=6_000)
    assert {b["id"] for b in summaries} <= {b["id"] for b in everything["digest"]}
    # another consumer still gets them
    with server.client(BETA) as beta:
        theirs = feed(beta, **only)["digest"]
        assert {b["id"] for b in summaries} <= {b["id"] for b in theirs}
    # a new heartbeat joins the collapse block: a new summary, new again
    ingest_ok(alpha, message_event("hb99", "HEARTBEAT_OK", author="bot", created_at=at(59, 9)))
    server.drain()
    third = feed(alpha, **only)
    [joined] = [b for b in third["digest"] if "hb99" in b["source_messages"]]
    assert joined["id"] not in {b["id"] for b in summaries} and third["header"]["new"] >= 1
    # over unconsumed=all it is marked new, the chatter rollup (unchanged) is not
    marked = {b["id"]: b["new"] for b in feed(alpha, max_chars=6_000)["digest"]}
    assert marked[joined["id"]] is True
    assert [marked[b["id"]] for b in summaries if b["id"] in marked and b["kind"] != "noise"]
    assert all(
        marked[b["id"]] is False for b in summaries if b["id"] in marked and b["kind"] != "noise"
    )


def test_unconsumed_only_does_not_serve_again_what_it_showed_cut(
    server: LiveServer, alpha: httpx.Client
) -> None:
    """A hard event shown with its other lines elided and a message shown cut, once a
    handled read showed them, are not served again under ``unconsumed=only`` (they would
    take the budget every turn, a check found, starving what is new); they stay ``new``
    to ``unconsumed=all`` until shown whole (ADR 0068)."""
    seed(server, alpha)
    first = feed(alpha, unconsumed="only")
    assert {"long", "huge"} <= set(elements(first))
    settle(alpha, first["header"]["read_id"], "handled")
    ingest_ok(alpha, message_event("later", "anyone for coffee?", created_at=at(20)))
    server.drain()
    again = feed(alpha, unconsumed="only")
    assert set(elements(again)) == {"later"}
    assert again["header"]["available"] == 1 and again["header"]["omitted"] == 0
    everything = elements(feed(alpha))
    assert everything["long"] is True and everything["huge"] is True
    assert everything["fill"] is False


def test_unconsumed_only_with_a_trigger_shown_cut_before(
    server: LiveServer, alpha: httpx.Client
) -> None:
    """A trigger an earlier handled read showed cut is the trigger of the next turn: the
    feed answers, its counts agree (a review: a 500 on a negative count)."""
    ingest_ok(alpha, message_event("big", "long report line. " * 160, created_at=at(1)))
    server.drain()
    first = feed(alpha, unconsumed="only", max_chars=2_000)
    assert [m["message_id"] for m in first["raw_recent"] if "shown_chars" in m] == ["big"]
    settle(alpha, first["header"]["read_id"], "handled")
    again = feed(alpha, unconsumed="only", max_chars=2_000, trigger="floor/big")
    header = again["header"]
    assert again["trigger"]["message_id"] == "big" and header["omitted"] >= 0
    assert (header["available"], header["omitted"]) == (0, 0)


def test_unconsumed_only_is_not_stuck_behind_hard_events_it_showed(
    server: LiveServer, alpha: httpx.Client
) -> None:
    """More hard events in the window than a small feed loads: once a handled read showed
    them, they are neither counted nor named as omitted, and a new message is served (a
    review: the feed stuck at a header and a note blaming max_chars)."""
    ingest_ok(
        alpha,
        *(
            message_event(f"f{i:02d}", f"FILLED {100 + i} NVDA @ 131.{i:02d}", created_at=at(i))
            for i in range(60)
        ),
    )
    server.drain()
    only = {"channels": "floor", "max_chars": 1_500, "unconsumed": "only"}

    def counts(text: str) -> tuple[int, int]:
        head = text.split("\n", 1)[0]
        found = re.search(r" available=(\d+) omitted=(\d+) ", head)
        assert found is not None, head
        return int(found.group(1)), int(found.group(2))

    seen = []
    for _ in range(8):
        answer = alpha.get("/channel-awareness", params=only)
        seen.append(counts(answer.text))
        if seen[-1] == (0, 0):
            break
        settle(alpha, answer.headers["read-id"], "handled")
    assert seen[-1] == (0, 0) and len(seen) < 8, seen
    assert "[omitted" not in answer.text
    ingest_ok(alpha, message_event("new1", "anyone for coffee?", created_at="2026-05-21T19:59:30Z"))
    server.drain()
    after = alpha.get("/channel-awareness", params=only).text
    assert counts(after) == (1, 0) and " new1 " in after


def test_unconsumed_only_drains_a_busy_channel_at_a_small_budget(
    server: LiveServer, alpha: httpx.Client
) -> None:
    """Chatter, heartbeats between it (status blocks) and fills over a day, read turn by
    turn at 1,500 characters: every tier reads past what a handled read showed, so the
    oldest status blocks come too and the feed ends empty (a check with a trial's desk:
    it stuck at a header and a note blaming max_chars, the oldest blocks never loaded)."""
    events = []
    for hour in range(0, 20):
        for minute in (0, 10, 20, 30, 40):
            n = f"{hour:02d}{minute:02d}"
            events.append(
                message_event(
                    f"c{n}", f"chatter {n}: coffee, lunch, the game", created_at=at(minute, hour)
                )
            )
            events.append(
                message_event(
                    f"h{n}", "HEARTBEAT_OK", author="gw-bot", created_at=at(minute + 1, hour)
                )
            )
        events.append(
            message_event(f"f{hour}", f"FILLED {hour}01 NVDA @ 131.{hour}", created_at=at(50, hour))
        )
    ingest_ok(alpha, *events)
    server.drain()
    only = {"channels": "floor", "max_chars": 1_500, "unconsumed": "only"}
    heads = []
    for _ in range(60):
        answer = alpha.get("/channel-awareness", params=only)
        head = answer.text.split("\n", 1)[0]
        found = re.search(r" available=(\d+) omitted=(\d+) ", head)
        assert found is not None, head
        heads.append((int(found.group(1)), int(found.group(2))))
        if heads[-1] == (0, 0):
            break
        assert " digest=unavailable " not in head or " messages=0 " not in head, heads
        settle(alpha, answer.headers["read-id"], "handled")
    assert heads[-1] == (0, 0), heads
    assert "[omitted" not in answer.text


def test_summarized_versions_fall_out_of_the_ledger_before_consumed_ones(
    make_server: Callable[..., LiveServer],
) -> None:
    """The ledger's bound keeps versions shown whole before those only summarized: a
    collapse block handled turn after turn does not push a consumed fill out (review)."""
    server = make_server(
        worker={"enabled": False}, tokens=TOKENS, consumption={"max_versions_per_consumer": 12}
    )
    with server.client(ALPHA) as alpha:
        ingest_ok(
            alpha,
            *(
                message_event(f"hb{i:02d}", "HEARTBEAT_OK", author="bot", created_at=at(i, 9))
                for i in range(12)
            ),
            message_event("fill", "FILLED 200 NVDA @ 131.20", created_at=at(1)),
        )
        server.drain()
        for _ in range(3):
            body = feed(alpha, max_chars=6_000)
            assert any(b["kind"] not in ("hard_event", "raw_excerpt") for b in body["digest"])
            assert settle(alpha, body["header"]["read_id"], "handled")["versions"] == 1
        assert ledger(server, "alpha") == {"fill"}
        assert elements(feed(alpha, max_chars=6_000))["fill"] is False


def test_a_304_records_nothing(server: LiveServer, alpha: httpx.Client) -> None:
    seed(server, alpha)
    first = alpha.get("/channel-awareness", params={"channels": "floor"})
    settle(alpha, first.headers["read-id"], "failed")
    again = alpha.get(
        "/channel-awareness",
        params={"channels": "floor"},
        headers={"if-none-match": first.headers["etag"]},
    )
    assert again.status_code == 304
    # the read stays as settled: nothing re-opened it
    assert query(server.settings.db, "SELECT outcome FROM consumption_reads") == [("failed",)]


# --- the property -------------------------------------------------------------------------

COUNTER = itertools.count()


def complete_in(body: dict[str, Any], contents: dict[str, str]) -> set[tuple[str, str]]:
    """What a JSON feed shows complete, judged from the body alone: a raw message without
    ``shown_chars``, a single-message hard event or excerpt not cut whose text is the
    message's content, the trigger."""
    shown = {
        (m["message_id"], m["content_hash"]) for m in body["raw_recent"] if "shown_chars" not in m
    }
    for block in body["digest"]:
        [message_id] = block["source_messages"][:1] or [""]
        if (
            len(block["source_messages"]) == 1
            and block["kind"] in ("hard_event", "raw_excerpt")
            and not block.get("cut")
            and block["text"] == contents[message_id]
        ):
            shown.add((message_id, block["covered_content_hashes"][0]))
    return shown


ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["feed", "feed_only", "tool", "edit"]),
        st.integers(min_value=900, max_value=12_000),
        st.sampled_from(["handled", "failed", "none"]),
        st.integers(min_value=0, max_value=7),
    ),
    min_size=1,
    max_size=8,
)


def counted_collapse(server: LiveServer, channel: str) -> set[tuple[str, str]]:
    """The versions of the channel's one-message collapse blocks (a JSON body counts them in
    ``omitted.collapsed`` without naming them)."""
    rows = query(
        server.settings.db,
        "SELECT s.message_id, s.content_hash FROM recall_blocks AS b JOIN block_sources AS s "
        "ON s.block_seq = b.seq WHERE b.channel_id = ? AND b.kind IN "
        "('telemetry_count', 'low_value_ack', 'decision_repeat') AND "
        "(SELECT count(*) FROM block_sources AS o WHERE o.block_seq = b.seq) = 1",
        channel,
    )
    return {(m, h) for m, h in rows}


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(actions=ACTIONS)
# a summary (the heartbeats' collapse block) shown and handled, then the unconsumed only
@example(actions=[("feed", 12_000, "handled", 0), ("feed_only", 12_000, "handled", 0)])
# two edits of one message whose times came from their lengths went back in time
@example(
    actions=[("edit", 900, "handled", 6), ("edit", 900, "handled", 6), ("feed", 2884, "handled", 0)]
)
def test_a_version_is_consumed_only_if_a_handled_read_showed_it_complete(
    server: LiveServer, actions: list[tuple[str, int, str, int]]
) -> None:
    channel = f"p{next(COUNTER)}"
    contents = {
        f"m{i}": ("FILLED 5 NVDA @ 1.0 " if i % 3 == 0 else "note ") + "x" * (40 + 400 * (i % 4))
        for i in range(8)
    }
    # older chatter, more than six hours before the rest: summarized (rollups, collapse)
    older = {f"o{i}": f"lunch plans {i}, nothing on the book" for i in range(10)}
    older |= {f"h{i}": "HEARTBEAT_OK" for i in range(6)}
    with server.client(ALPHA) as client:
        ingest_ok(
            client,
            *(
                message_event(m, text, channel=channel, created_at=at(i))
                for i, (m, text) in enumerate(contents.items())
            ),
            *(
                message_event(m, text, channel=channel, created_at=at(i, 9), author=m[0] + "-bot")
                for i, (m, text) in enumerate(older.items())
            ),
        )
        contents |= older
        server.drain()
        allowed: set[tuple[str, str]] = set()
        in_summaries: set[tuple[str, str]] = set()
        edits = 0
        for action, max_chars, outcome, pick in actions:
            if action == "edit":
                edits += 1
                message_id = f"m{pick}"
                contents[message_id] += " edited"
                ingest_ok(
                    client,
                    message_event(
                        message_id,
                        contents[message_id],
                        channel=channel,
                        created_at=at(pick),
                        # each edit later than the last, so the newest text is current (a
                        # time from the text's length went back: the older edit stayed current)
                        edited_at=at(30 + edits),
                    ),
                )
                server.drain()
                continue
            summary: set[tuple[str, str]] = set()
            if action == "tool":
                result = client.post(
                    "/v1/tools/get_channel_messages", json={"channels": [channel], "limit": 3}
                ).json()
                read_id = result["read_id"]
                shown = {
                    (m["message_id"], m["content_hash"])
                    for m in result["messages"]
                    if m["content"] is not None
                }
            else:
                params: dict[str, Any] = {"max_chars": max_chars}
                if action == "feed_only":
                    params["unconsumed"] = "only"
                body = feed(client, channel, **params)
                read_id = body["header"]["read_id"]
                shown = complete_in(body, contents)
                # everything the body shows, whole or in part (a summary, a cut), and the
                # messages only counted in a note (one-message collapse blocks)
                summary = {
                    (m, h)
                    for b in body["digest"]
                    for m, h in zip(b["source_messages"], b["covered_content_hashes"], strict=True)
                }
                summary |= {(m["message_id"], m["content_hash"]) for m in body["raw_recent"]}
                if body.get("collapsed"):
                    summary |= counted_collapse(server, channel)
            if outcome != "none":
                settled = client.post(
                    "/v1/consumption", json={"read_id": read_id, "outcome": outcome}
                )
                assert settled.status_code in (200, 409)
                if settled.status_code == 200 and settled.json()["outcome"] == "handled":
                    allowed |= shown
                    in_summaries |= summary
        consumed = set(
            query(
                server.settings.db,
                "SELECT message_id, content_hash FROM consumed_versions "
                "WHERE consumer = 'alpha' AND channel_id = ? AND whole = 1",
                channel,
            )
        )
        assert consumed <= allowed
        # a version the ledger holds as summarized was shown in part by a handled read
        summarized = set(
            query(
                server.settings.db,
                "SELECT message_id, content_hash FROM consumed_versions "
                "WHERE consumer = 'alpha' AND channel_id = ? AND whole = 0",
                channel,
            )
        )
        assert summarized <= in_summaries - allowed
