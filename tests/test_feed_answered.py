"""Answered hard events: a decision someone replied to ranks before one nobody answered
when the feed cannot show every hard event (a proposal approved, a fill acknowledged, a
limit questioned), unless it is too new to have been answered yet; nothing is dropped
silently."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace

import pytest

from bench.answered import counts
from bench.training_desks import RANK_DESKS
from channel_memory.feed.layout import (
    ANSWER_WAIT_US,
    ANSWERED_ODDS,
    UNANSWERED_ODDS,
    FeedItem,
    Trigger,
    render,
)
from channel_memory.inspector.feedview import served_items
from channel_memory.kernel.timefmt import parse_rfc3339
from tests.conftest import LiveServer, at, ingest_ok, message_event
from tests.test_feed_echoes import _hard, _scan, _shown, _window

# two decisions of the same size and score each: without replies the newer one of a pair
# goes first (the tie-breaker); answered, the older one does
PAIRS = [
    (
        _hard("a1", 10, "trade_proposal", "proposal: buy 20 FGBL at 131.40, stop 131.10", 0.6),
        _hard("b1", 11, "trade_proposal", "proposal: sell 30 FOAT at 124.20, stop 124.55", 0.6),
    ),
    (
        _hard("a2", 20, "trade_fill", "lifted 15k AAPL 262.18 on the open print", 0.6),
        _hard("b2", 21, "trade_fill", "sold 20 BTC @ 88,410 on the screen, done", 0.6),
    ),
]
OLDER = {a.key for a, _ in PAIRS}
NEWER = {b.key for _, b in PAIRS}
ITEMS = [item for pair in PAIRS for item in pair]


def test_being_answered_raises_the_odds_and_going_unanswered_lowers_them() -> None:
    assert 0 < UNANSWERED_ODDS < 1 < ANSWERED_ODDS and ANSWER_WAIT_US > 0


def test_an_answered_decision_goes_before_an_unanswered_one() -> None:
    # nobody answered: equal density, the newer of each pair first
    plain = _scan(ITEMS)
    partial = [shown for shown, _ in plain if 0 < len(shown) < len(ITEMS)]
    assert partial and all(len(shown & NEWER) >= len(shown & OLDER) for shown in partial)
    # the older ones answered: they go first, and everything is still named or counted
    window = replace(_window(ITEMS), answered=frozenset(f"floor/{k}" for k in OLDER))
    full = len(render(window, 100_000, "text").content)
    seen = []
    for budget in range(full, 700, -10):
        body = render(window, budget, "text")
        assert len(body.content) <= budget
        shown = _shown(body.content, ITEMS)
        named, more = body.numbers["omitted_hard_events"], body.numbers["more_hard_events"]
        assert isinstance(named, list) and isinstance(more, int)
        assert len(shown) + len(named) + more == len(ITEMS)
        if 0 < len(shown) < len(ITEMS):
            seen.append(shown)
            assert len(shown & OLDER) >= len(shown & NEWER), shown
    assert any(shown <= OLDER for shown in seen)


def test_a_decision_too_new_to_be_answered_is_not_held_back() -> None:
    # an older fill and a newer, less surely scored one of the same size, nobody answered:
    # read long after both, the newer one's lower odds leave it behind; read within
    # ANSWER_WAIT_US of it, it has had no time to be answered and goes first
    older = _hard("x1", 0, "trade_fill", "lifted 15k AAPL 262.18 on the open print", 0.6)
    newer = _hard("y1", 50, "trade_fill", "lifted 25k MSFT 411.05 on the open print", 0.55)
    others = [
        _hard(f"z{n}", 10 * n, "trade_fill", f"sold {n}1 lots CLZ6 7{n}.15 at the settle", 0.05)
        for n in range(1, 5)
    ]
    items = [older, newer, *others]
    for to_us, first in (
        (newer.last_us + 4 * ANSWER_WAIT_US, "x1"),
        (newer.last_us + ANSWER_WAIT_US // 2, "y1"),
    ):
        window = replace(_window(items), to_us=to_us)
        full = len(render(window, 100_000, "text").content)
        alone = [
            shown
            for budget in range(full, 700, -5)
            if len(shown := _shown(render(window, budget, "text").content, [older, newer])) == 1
        ]
        assert alone and all(shown == {first} for shown in alone), (first, alone)


CARD = "proposal: buy 20 FGBL at 131.40, stop 131.10, target 132.20"
CARDS = ["p0", "p1", "p2", "p3"]
"""The same proposal posted four times an hour apart (no echoes of each other): one
score and one size, so without replies the newer goes first."""


def _shown_by_budget(
    client: object, channels: str, top: int = 1_600, **extra: str
) -> list[set[str]]:
    """The proposals each budget from ``top`` down to 500 shows (the header alone counts
    them at the smallest; in a feed of several channels, as ``channel/message``); nothing
    is silent."""
    every = len(CARDS) * len(channels.split(","))
    seen = []
    for budget in range(top, 500, -5):
        text = client.get(  # type: ignore[attr-defined]
            "/channel-awareness", params={"channels": channels, "max_chars": budget, **extra}
        ).text
        assert len(text) <= budget
        shown = set(re.findall(r"^\[\d\d:\d\d proposal ((?:desk-[ab]/)?p\d)", text, re.M))
        if 0 < len(shown) < every:
            assert re.search(r"^\[omitted [^\n]*hard events", text, re.M)  # named or counted
        seen.append(shown)
    return seen


def test_answered_decisions_through_the_worker_and_the_http_feed(
    make_server: Callable[..., LiveServer],
) -> None:
    """The same four proposals (12:00 to 15:00) in two channels, the feed read at 20:00; in
    ``desk-a`` someone asked about the two older ones at 17:00, in ``desk-b`` nobody
    answered. At every budget where both show some but not all, ``desk-a`` shows at
    least as many of the answered proposals as ``desk-b`` does of the same two, and at
    some budget more; as of 16:59,
    before anyone answered, the two channels are served alike."""
    server = make_server(worker={"enabled": False})
    events = []
    for channel in ("desk-a", "desk-b"):
        for n, message in enumerate(CARDS):
            events.append(message_event(message, CARD, channel=channel, created_at=at(0, 12 + n)))
    for n in (0, 1):
        events.append(
            message_event(
                f"q{n}", "which account?", channel="desk-a", created_at=at(n, 17), reply_to=f"p{n}"
            )
        )
    older = {"p0", "p1"}
    with server.client() as client:
        ingest_ok(client, *events)
        server.drain()
        for extra in ({}, {"as_of": at(30, 17)}):
            answered = _shown_by_budget(client, "desk-a", **extra)
            plain = _shown_by_budget(client, "desk-b", **extra)
            # where both show some but not all (the replies make desk-a's header and
            # window a little longer, so where everything just fits differs)
            pairs = [
                (a, b)
                for a, b in zip(answered, plain, strict=True)
                if 0 < len(a) < len(CARDS) and 0 < len(b) < len(CARDS)
            ]
            assert pairs and all(len(a & older) >= len(b & older) for a, b in pairs)
            assert any(len(a & older) > len(b & older) for a, b in pairs)
        before = {"as_of": at(59, 16)}
        assert _shown_by_budget(client, "desk-a", **before) == _shown_by_budget(
            client, "desk-b", **before
        )


@pytest.mark.tuned_on  # a measurement of the training desks (make floors, ADR 0066)
def test_the_odds_are_what_the_rankers_training_desks_say() -> None:
    # bench/answered.py counts them; a change of rules or model that moves them far
    # means measuring again (ADR 0049)
    found = counts(RANK_DESKS)
    decisions = found[(True, False)] + found[(True, True)]
    others = found[(False, False)] + found[(False, True)]

    def ratio(answered: bool) -> float:
        return (found[(True, answered)] / decisions) / (found[(False, answered)] / others)

    assert abs(ratio(True) - ANSWERED_ODDS) < 0.5
    assert abs(ratio(False) - UNANSWERED_ODDS) < 0.05


def _both(client: object, **extra: str) -> list[set[str]]:
    """The proposals a feed of both channels shows at each budget that shows some but not
    all of them."""
    seen = [
        shown
        for shown in _shown_by_budget(client, "desk-a,desk-b", 2_400, **extra)
        if 0 < len(shown) < 2 * len(CARDS)
    ]
    assert seen
    return seen


def test_answers_across_channels_and_answers_deleted(
    make_server: Callable[..., LiveServer],
) -> None:
    """One feed of both channels (the proposals two hours apart, ``desk-b``'s an hour
    after ``desk-a``'s, so that none echoes another): the two answered proposals of
    ``desk-a`` go before the six nobody answered. Once the answers are deleted (at 18:00)
    they no longer count, also as of 17:30 (the view shows a message deleted since as
    deleted, and its class no longer reads a parent)."""
    server = make_server(worker={"enabled": False})
    events = [
        message_event(message, CARD, channel=channel, created_at=at(0, 8 + 2 * n + shift))
        for shift, channel in enumerate(("desk-a", "desk-b"))
        for n, message in enumerate(CARDS)
    ]
    events += [
        message_event(
            f"q{n}", "which account?", channel="desk-a", created_at=at(n, 17), reply_to=f"p{n}"
        )
        for n in (0, 1)
    ]
    answered = {"desk-a/p0", "desk-a/p1"}

    def first(seen: list[set[str]]) -> bool:
        """Whether no budget shows another proposal before both answered ones."""
        return all(answered <= shown or shown <= answered for shown in seen)

    with server.client() as client:
        ingest_ok(client, *events)
        server.drain()
        assert first(_both(client))
        deletions = [
            {
                "type": "delete",
                "channel_id": "desk-a",
                "message_id": f"q{n}",
                "deleted_at": at(0, 18),
            }
            for n in (0, 1)
        ]
        ingest_ok(client, *deletions)
        server.drain()
        assert not first(_both(client))
        assert not first(_both(client, as_of=at(30, 17)))


def test_a_bare_verdict_is_shown_with_the_proposal_it_answers_or_not_at_all() -> None:
    # a new user's trial: at 800 to 1,500 characters "yes, go" was shown and the proposal it
    # approves was not; a short verdict is dense, its long proposal is not
    proposal = _hard(
        "p1",
        10,
        "trade_proposal",
        "proposal: buy 500 AAPL at 189.40 into the close, stop 186.90, target 195 — the"
        " earnings drift has held three quarters running and the book is light tech",
        0.6,
    )
    verdict = replace(_hard("v1", 40, "trade_approval", "yes, go", 0.95), answers="floor/p1")
    others = [
        _hard(f"f{n}", 20 + n, "trade_fill", f"sold {n}0 ES at 67{n}0.25", 0.6) for n in range(6)
    ]
    items = [proposal, verdict, *others]
    seen = []
    for shown, numbers in _scan(items):
        named, more = numbers["omitted_hard_events"], numbers["more_hard_events"]
        assert isinstance(named, list) and isinstance(more, int)
        assert len(shown) + len(named) + more == len(items)  # nothing silent
        assert "v1" not in shown or "p1" in shown, shown
        seen.append(shown)
    assert any("v1" in s for s in seen) and any("v1" not in s and s for s in seen)


def _with_json(item: FeedItem) -> FeedItem:
    """The item with the JSON object a block of one message has (its ``source_handles``)."""
    return replace(item, json_object={"source_handles": [item.handle], "text": item.text})


def test_a_proposal_shown_without_its_verdict_names_it() -> None:
    """A new user's trial: at 1,000 to 3,000 characters a proposal was shown and the
    "no" under it was not, so it read as pending. Shown without any of its verdicts by
    reply, a hard event's line names the newest one (``decided:``; JSON ``decided_by``, a
    list as the tools write it); shown with one, it names none. Within the budget at
    every size, and read back its author is still its author."""
    proposal = _hard(
        "p1", 10, "trade_proposal", "proposal: buy 500 AAPL at 189.40 into the close, ok?", 0.95
    )
    first = replace(
        _hard("v1", 30, "trade_approval", "no — the book is long enough tech already, pass", 0.1),
        answers="floor/p1",
    )
    second = replace(
        _hard("v2", 50, "trade_approval", "ok, changed my mind: approved at half size", 0.1),
        answers="floor/p1",
    )
    others = [
        _hard(f"f{n}", 20 + n, "trade_fill", f"sold {n}0 ES at 67{n}0.25 on the screen", 0.5)
        for n in range(8)
    ]
    items = [_with_json(i) for i in (proposal, first, second, *others)]
    window = _window(items)
    full = len(render(window, 100_000, "text").content)
    alone = {"text": 0, "json": 0}
    for budget in range(full, 700, -10):
        for fmt in ("text", "json"):
            body = render(window, budget, fmt)
            assert len(body.content) <= budget
            if fmt == "json":
                digest = json.loads(body.content)["digest"]
                by_id = {d["source_handles"][0]: d for d in digest}
                shown = {h.removeprefix("floor/") for h in by_id}
                marked = by_id.get("floor/p1", {}).get("decided_by")
            else:
                shown = _shown(body.content, items)
                line = re.search(r"^\[[^\]]* p1 [^\]]*\]$", body.content, re.MULTILINE)
                found = re.search(r"decided:(\w+)", line.group(0)) if line else None
                marked = ["floor/" + found.group(1)] if found else None
            if "p1" not in shown:
                continue
            if shown & {"v1", "v2"}:
                assert marked is None, (budget, fmt)
            else:
                assert marked == ["floor/v2"], (budget, fmt)
                alone[fmt] += 1
                if fmt == "text":  # read back, the line's author is still its author
                    authors = [i.author for i in served_items(body.content) if i.message_id == "p1"]
                    assert authors == ["desk"]
    assert alone["text"] and alone["json"]  # some budget shows the proposal alone, each way
    # a verdict names no verdict of its own; a fill nobody decided on names nothing
    assert "decided:" not in render(_window(others), 100_000, "text").content
    # the trigger a verdict: what it answers is answered where the body shows it, however
    # old the verdicts the hard events hold (never an older one named in its stead)
    trigger = Trigger(
        handle="floor/t1", created_us=parse_rfc3339(at(55, 9)), author="lead",
        trust="unverified", role="user", new=True, text="ok fine, approved, full size",
        version=("floor", "t1", "h"), in_window=False, reply_to="p1", message_object={},
    )  # fmt: skip
    woken = replace(_window([proposal, first, *others]), trigger=trigger)
    for budget in range(len(render(woken, 100_000, "text").content), 900, -10):
        body = render(woken, budget, "text").content
        assert "decided:" not in body, budget
