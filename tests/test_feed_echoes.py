"""Echoes: the same event reported twice (a trader's fill, then the order system's record
of it) — the first report keeps its place, the restatement ranks after it when the feed
cannot show every hard event; nothing is dropped silently."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from channel_memory.feed import layout
from channel_memory.feed.echoes import ECHO_WINDOW_US, echo_keys, numbers, readings
from channel_memory.feed.layout import Candidates, FeedItem, render
from channel_memory.kernel.timefmt import parse_rfc3339
from tests.conftest import HARD_LINE, LiveServer, at, ingest_ok, message_event
from tests.test_feed_density import _window as empty_window


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("lifted 15k AAPL", "BOT 15,000 AAPL"),
        ("auf 68,20 gezogen", "STP 68.20"),
        ("LMT 1.16280", "at 1.1628"),
        ("bei 4.180 gestrichen", "LMT 4,180.0"),
        ("35m EURUSD", "SELL 35,000,000 EURUSD"),
        ("qty=15,000,000", "15 000 000".replace(" ", ",")),
    ],
)
def test_numbers_are_read_as_values_in_every_notation(a: str, b: str) -> None:
    [one], [other] = readings(a), readings(b)
    assert one & other


def test_clock_times_dates_and_identifiers_are_not_numbers() -> None:
    text = "ORD-88213 at 07:41:02 on 2026-10-22, ticket OPS-5519, ES-Z6"
    assert numbers(text) == frozenset()
    assert numbers("FILL | ORD-88213 | BOT 40,000,000 avg 2,841.5") == {40e6, 2_841.5}


def test_reading_numbers_is_linear_in_a_long_digit_run() -> None:
    # every repetition in the number pattern is bounded: a run of 200,000 digits (a
    # pasted blob) is a linear scan; an unbounded pattern backtracked quadratically
    assert readings("7" * 200_000 + "x") == frozenset()
    # a run longer than any size or price is not a number; the price after it still is
    assert readings("sold " + "7" * 40 + " at 1.0850") == {frozenset({1.085})}


def test_many_reports_of_the_same_numbers_are_compared_with_a_few_recent_ones() -> None:
    # 3,000 fills of 100 lots at 42.5 within minutes: each one after the first is an
    # echo, found among the latest reports of its values, not by comparing every pair
    items = [
        Report(f"k{n:04d}", "trade_fill", n * 50_000, "FILL | BOT 100 avg 42.5")
        for n in range(3_000)
    ]
    found = echo_keys(items)
    assert found == {r.key for r in items[1:]}


def test_a_number_that_reads_both_ways_is_both_but_counts_once() -> None:
    # a Schatz price with three decimals, or a German thousands separator
    assert numbers("px=107.120") == {107.12, 107_120.0}
    assert numbers("bei 107,12") == {107.12}
    # one ambiguous number matching both readings is still one shared number
    items = [
        Report("a", "trade_fill", 0, "bought 4.180 lots"),
        Report("b", "trade_fill", MINUTE, "FILL | 4.180 | DONE"),
    ]
    assert echo_keys(items) == frozenset()


@dataclass(frozen=True)
class Report:
    key: str
    event_type: str | None
    first_us: int
    text: str


MINUTE = 60_000_000


def test_a_restatement_of_an_earlier_report_is_its_echo() -> None:
    items = [
        Report("trader", "trade_fill", 0, "lifted 15k AAPL 262.18 on the open print"),
        Report("oms", "trade_fill", MINUTE, "FILL | ORD-1 | AAPL BOT 15,000 avg 262.18 | DONE"),
        # another kind of event with the same numbers: the broker's confirm is no echo
        Report("confirm", "trade_confirmation", 2 * MINUTE, "CONFIRM | AAPL 15,000 @ 262.18"),
        # a position change and a fill report the same kind of event
        Report("cut", "position_change", 3 * MINUTE, "sold 20 BTC @ 88,410, 65 left"),
        Report("cut-oms", "trade_fill", 4 * MINUTE, "FILL | BTC SLD 20 avg 88,410"),
        # too late to be a restatement; a report sharing one number only; a long report
        Report("late", "trade_fill", 40 * MINUTE, "FILL | AAPL BOT 15,000 avg 262.18"),
        Report("one", "trade_fill", 5 * MINUTE, "FILL | MSFT BOT 15,000 avg 411.20"),
        Report("long", "trade_fill", 6 * MINUTE, "AAPL 15k at 262.18. " + "context " * 60),
    ]
    assert echo_keys(items) == {"oms", "cut-oms"}
    assert echo_keys(list(reversed(items))) == {"oms", "cut-oms"}


kinds = st.sampled_from(["trade_fill", "position_change", "stop_or_target_change", None])
reports = st.lists(
    st.builds(
        Report,
        key=st.text("abcdef", min_size=1, max_size=4),
        event_type=kinds,
        first_us=st.integers(0, 3 * ECHO_WINDOW_US),
        text=st.lists(st.sampled_from(["15k", "15,000", "262.18", "88,410", "FILL", "AAPL"])).map(
            " ".join
        ),
    ),
    max_size=12,
    unique_by=lambda r: r.key,
)


@given(reports, st.randoms())
def test_echoes_do_not_depend_on_order_and_the_first_report_is_never_one(
    items: list[Report], random: object
) -> None:
    found = echo_keys(items)
    shuffled = list(items)
    random.shuffle(shuffled)  # type: ignore[attr-defined]
    assert echo_keys(shuffled) == found
    if items:
        first = min(items, key=lambda r: (r.first_us, r.key))
        assert first.key not in found
    for key in found:
        [echo] = [r for r in items if r.key == key]
        kind = "trade_fill" if echo.event_type == "position_change" else echo.event_type
        assert any(
            r.first_us <= echo.first_us
            and echo.first_us - r.first_us <= ECHO_WINDOW_US
            and ("trade_fill" if r.event_type == "position_change" else r.event_type) == kind
            and sum(1 for read in readings(echo.text) if read & numbers(r.text)) >= 2
            for r in items
            if r.key != key
        )


# --- in the feed ------------------------------------------------------------------------------


def _hard(key: str, minute: int, event_type: str, text: str, score: float) -> FeedItem:
    first = parse_rfc3339(at(minute, 9))
    return FeedItem(
        key=key, kind="hard_event", event_type=event_type, handle=f"floor/{key}", handles=1,
        first_us=first, last_us=first, author="desk", trust="unverified", text=text,
        cut_text=None, covers=frozenset({f"floor/{key}"}), block_id=key,
        processor="deterministic", generated_us=first, json_object={}, score=score,
    )  # fmt: skip


def _window(hard: list[FeedItem]) -> Candidates:
    """A window of these hard events (newest first, as the reader offers them)."""
    newest = sorted(hard, key=lambda i: i.first_us, reverse=True)
    return replace(empty_window([]), hard=newest, hard_total=len(hard), available=len(hard))


FIRST_REPORTS = [
    _hard("t1", 10, "trade_fill", "lifted 15k AAPL 262.18 on the open print, starter", 0.8),
    _hard("t2", 20, "stop_or_target_change", "Stopp im CLZ6-Short auf 68,20, vorher 69,10", 0.8),
    _hard("t3", 30, "trade_fill", "sold 20 BTC @ 88,410 on the screen", 0.8),
]
ECHOES = [
    _hard("e1", 11, "trade_fill", "FILL | AAPL BOT 15,000 avg 262.18 | DONE", 0.99),
    _hard("e2", 21, "stop_or_target_change", "REPLACE | CLZ6 STP 69.10 → 68.20 | ACK", 0.99),
    _hard("e3", 31, "trade_fill", "FILL | BTC SLD 20 avg 88,410 | DONE", 0.99),
]


def _shown(body: str, items: list[FeedItem]) -> set[str]:
    """The items ``body`` shows (a metadata line of their own, not a name in a note)."""
    lined = set(HARD_LINE.findall(body))  # a feed of one channel: message ids
    return {i.key for i in items if i.key in lined}


def _scan(items: list[FeedItem]) -> list[tuple[set[str], dict[str, object]]]:
    """What each budget from everything down to a few items shows, and its numbers."""
    window = _window(items)
    full = len(render(window, 100_000, "text").content)
    seen = []
    for budget in range(full, 700, -10):
        body = render(window, budget, "text")
        assert len(body.content) <= budget
        seen.append((_shown(body.content, items), body.numbers))
    return seen


def test_under_a_tight_budget_first_reports_go_before_their_echoes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The order system's records are shorter and surer than the traders' lines, so by
    score per character alone they would take the room; as echoes (their score weighed by
    ECHO_WEIGHT) they come after first reports about as sure."""
    firsts = {i.key for i in FIRST_REPORTS}
    echoes = {i.key for i in ECHOES}
    with monkeypatch.context() as patched:
        patched.setattr(layout, "ECHO_WEIGHT", 1.0)  # unweighed, an echo goes first
        assert any(
            len(shown & echoes) > len(shown & firsts)
            for shown, _ in _scan([*FIRST_REPORTS, *ECHOES])
        )
    scans = _scan([*FIRST_REPORTS, *ECHOES])
    assert scans[0][0] == firsts | echoes  # with room for everything, echoes are served too
    for shown, figures in scans:
        # an echo takes only room no first report was left out of (or fits in)
        assert len(shown & firsts) >= len(shown & echoes), shown
        # nothing silent: what is not shown is named or counted
        named, more = figures["omitted_hard_events"], figures["more_hard_events"]
        assert isinstance(named, list) and isinstance(more, int)
        assert len(shown) + len(named) + more == 6
    assert any(len(shown & firsts) > len(shown & echoes) for shown, _ in scans)


def test_records_that_restate_nothing_keep_their_rank() -> None:
    """The same items with the records' numbers changed (other trades): no echoes, so the
    surer, shorter records go first."""
    others = [
        replace(ECHOES[0], text="FILL | AAPL BOT 9,000 avg 251.10 | DONE"),
        replace(ECHOES[1], text="REPLACE | CLZ6 STP 70.40 → 70.10 | ACK"),
        replace(ECHOES[2], text="FILL | BTC SLD 7 avg 87,990 | DONE"),
    ]
    firsts = {i.key for i in FIRST_REPORTS}
    records = {i.key for i in others}
    scans = _scan([*FIRST_REPORTS, *others])
    assert any(len(shown & records) > len(shown & firsts) for shown, _ in scans)


PAIRS = [
    (
        "lifted 15k AAPL 262.18 on the open print",
        "FILL | ORD-1 | AAPL BOT 15,000 avg 262.18 | DONE",
    ),
    ("sold 20 BTC @ 88,410 on the screen", "FILL | ORD-2 | BTC SLD 20 avg 88,410 | DONE"),
    ("bought 300 ESZ6 at 6,938.25 for the book", "FILL | ORD-3 | ESZ6 BOT 300 avg 6,938.25 | DONE"),
]
"""A trader's line, then the order system's record of it."""


def test_echoes_through_the_worker_and_the_http_feed(
    make_server: Callable[..., LiveServer],
) -> None:
    """Traders' lines and the order system's records of them, through the worker and
    ``/channel-awareness``: under a tight budget the traders' lines go first and the
    records are named among the omitted hard events."""
    server = make_server(worker={"enabled": False})
    events = []
    for n, (line, record) in enumerate(PAIRS):
        events.append(message_event(f"t{n}", line, created_at=at(10 * n)))
        events.append(message_event(f"r{n}", record, created_at=at(10 * n + 1), author="oms"))
    with server.client() as client:
        ingest_ok(client, *events)
        server.drain()
        partial = []
        for budget in range(1_400, 500, -5):
            text = client.get(
                "/channel-awareness", params={"channels": "floor", "max_chars": budget}
            ).text
            assert len(text) <= budget
            shown = set(re.findall(r"^\[\d\d:\d\d fill (\w+) ", text, re.M))
            if 0 < len(shown) < 6:
                partial.append(shown)
                # named or counted: nothing silent
                assert re.search(r"^\[omitted [^\n]*hard events", text, re.M)
        assert partial, "no budget shows some but not all"
        for shown in partial:
            traders = {s for s in shown if s.startswith("t")}
            assert len(traders) >= len(shown - traders), shown
        assert any(all(s.startswith("t") for s in shown) for shown in partial)
