"""The stop in force: when the feed cannot show every hard event, a stop or target change
that a newer one replaces on the same instrument does not take the place of the newer
one (a new user's trial saw "raising USDJPY stop to 151.60" shown and the newer "stop
USDJPY moved to 152.00" left out, the ranker being surer of the older line). As many hard
events are shown; nothing is silent."""

from __future__ import annotations

from dataclasses import replace

from channel_memory.feed.layout import render
from tests.conftest import HARD_LINE
from tests.test_feed_echoes import _hard, _shown, _window

OLDER = _hard("s1", 10, "stop_or_target_change", "raising USDJPY stop to 151.60", 0.89)
NEWER = _hard("s2", 40, "stop_or_target_change", "stop USDJPY moved to 152.00", 0.63)
OTHERS = [
    _hard("f1", 20, "trade_fill", "lifted 15k AAPL 262.18 on the open print", 0.7),
    _hard("f2", 30, "trade_fill", "sold 20 BTC @ 88,410 on the screen, done", 0.7),
    _hard("f3", 50, "trade_fill", "bought 30 FGBL 131.42 in the auction", 0.7),
    _hard("l1", 55, "risk_limit", "gross cut to 40m until the CPI print, no new risk", 0.75),
]


def _budgets(items: list[object]) -> list[tuple[set[str], int]]:
    """What each budget shows of ``items`` and how many hard events it shows in all;
    every hard event is shown, named or counted."""
    hard = list(items)
    window = _window(hard)  # type: ignore[arg-type]
    full = len(render(window, 100_000, "text").content)
    seen = []
    for budget in range(full, 600, -5):
        body = render(window, budget, "text")
        assert len(body.content) <= budget
        shown = _shown(body.content, hard)  # type: ignore[arg-type]
        named, more = body.numbers["omitted_hard_events"], body.numbers["more_hard_events"]
        assert isinstance(named, list) and isinstance(more, int)
        assert len(shown) + len(named) + more == len(hard)
        seen.append((shown, len(shown)))
    return seen


def test_the_newer_stop_on_an_instrument_is_shown_before_the_one_it_replaced() -> None:
    seen = _budgets([OLDER, NEWER, *OTHERS])
    one = [shown for shown, _ in seen if len(shown & {"s1", "s2"}) == 1]
    assert one and all("s2" in shown for shown in one)
    assert all("s2" in shown for shown, _ in seen if "s1" in shown)


def test_as_many_hard_events_are_shown_as_by_score_alone() -> None:
    # the same two stops on different instruments replace nothing: what each budget
    # shows then is what score per character picks; with one instrument no budget shows
    # fewer (the newer line is no longer than the older: it may leave room for one more)
    other = replace(NEWER, text="stop EURUSD moved to 1.0850")
    by_score = _budgets([OLDER, other, *OTHERS])
    in_force = _budgets([OLDER, NEWER, *OTHERS])
    assert len(by_score) == len(in_force)
    assert all(n >= m for (_, n), (_, m) in zip(in_force, by_score, strict=True))
    # by score alone the older (surer) line goes first
    assert any(shown & {"s1", "s2"} == {"s1"} for shown, _ in by_score)


def test_only_a_newer_change_in_the_same_channel_replaces() -> None:
    # a feed of two channels: the newer USDJPY stop of desk-b replaces nothing of floor
    elsewhere = replace(NEWER, handle="desk-b/s2", covers=frozenset({"desk-b/s2"}))
    hard = [OLDER, elsewhere, *OTHERS]
    window = replace(_window(hard), channels=("desk-b", "floor"))
    full = len(render(window, 100_000, "text").content)
    older_alone = False
    for budget in range(full, 600, -5):
        body = render(window, budget, "text")
        shown = set(HARD_LINE.findall(body.content)) & {"floor/s1", "desk-b/s2"}
        older_alone = older_alone or shown == {"floor/s1"}
    assert older_alone
    # a newer change that names no instrument the older one names replaces nothing
    unnamed = replace(NEWER, text="stop moved to 152.00 on the yen")
    seen = _budgets([OLDER, unnamed, *OTHERS])
    assert any(shown & {"s1", "s2"} == {"s1"} for shown, _ in seen)
    # nor one that shares only a word in capitals that names no instrument
    card = replace(OLDER, text="TRADE CARD #0417 | BUY 300 FEF | stop: 92.60")
    status = replace(NEWER, text="CARD #0418 STATUS: ACTIVE stop=4.68")
    seen = _budgets([card, status, *OTHERS])
    assert any(shown & {"s1", "s2"} == {"s1"} for shown, _ in seen)
    # nor a newer one less sure of being a decision than not that names no new level (a
    # restatement)
    unsure = replace(NEWER, text="stop USDJPY still 151.60", score=0.3)
    seen = _budgets([OLDER, unsure, *OTHERS])
    assert any(shown & {"s1", "s2"} == {"s1"} for shown, _ in seen)


def test_a_longer_newer_change_takes_the_place_and_the_room_left() -> None:
    # the trial's "GBPUSD stop moved to 1.2720 per Sam's note" is longer than the stop it
    # replaces: it is shown in the older one's place wherever the room the selection left
    # holds the difference
    longer = replace(NEWER, text="stop USDJPY moved to 152.00 per Sam's note, hard in the OMS")
    seen = _budgets([OLDER, longer, *OTHERS])
    assert any(shown & {"s1", "s2"} == {"s2"} for shown, _ in seen)
    other = replace(longer, text=longer.text.replace("USDJPY", "EURUSD"))
    by_score = _budgets([OLDER, other, *OTHERS])
    assert not any(shown & {"s1", "s2"} == {"s2"} for shown, _ in by_score)


def test_only_a_change_of_the_same_level_on_the_same_instrument_replaces() -> None:
    # a review with fresh eyes: a macro release or a record's words are no instrument, and
    # a target is not the stop it follows
    cases = [
        ("raising USDJPY stop to 151.60 before NFP", "stop EURUSD moved to 1.0850 before NFP"),
        ("REPLACE | CLZ6 STP 69.10 -> 68.20 | ACK", "REPLACE | NQZ6 STP 21050 -> 21100 | ACK"),
        ("raising USDJPY stop to 151.60", "USDJPY target moved to 155.00"),
        ("raising ES stop to 6,410", "NQ stop moved to 21,050"),
        ("OK, raising stop to 6,410", "OK stop moved to 6,425"),
        ("raising ES stop to 6,410 before 8:30 CT", "NQ stop moved to 21,050 after 8:30 CT"),
        ("raising ES stop to 6,410 before 8:30 CST", "NQ stop moved to 21,050 after 8:30 CST"),
        ("raising ESZ6 stop to 6,410", "NQZ6 stop moved to 21,050"),
        # two months of one future are two instruments (a review: a spread's legs, a roll)
        ("raising CLZ5 stop to 61.10", "CLF6 stop moved to 61.90"),
        ("raising ESZ6 stop to 6,410", "ESH7 stop moved to 6,480"),
        # and ordinary capitals with a month's letter and a digit are no contract
        ("raising USDX5 stop to 1.10", "USD stop moved to 1.12"),
        ("raising ES/NQ spread stop to 3.10", "NQ stop moved to 21,050"),
        ("raising USD/JPY stop to 151.60", "JPY stop moved to 152.00"),
        # two markets named in words are two
        ("copper stop 9,450 on the 3-month", "gold stop moved to 2,410"),
    ]
    for old, new in cases:
        seen = _budgets([replace(OLDER, text=old), replace(NEWER, text=new), *OTHERS])
        assert any(shown & {"s1", "s2"} == {"s1"} for shown, _ in seen), (old, new)
    # a pair written with a slash, or against text without spaces, is the same instrument
    for old, new in (
        ("raising USD/JPY stop to 151.60", "stop USDJPY moved to 152.00"),
        ("USDJPYの損切りを151.60に引き上げ", "USDJPY損切り152.00に変更"),
        # a future's two-letter root is its name (a new user's trial: "ES")
        ("raising ES stop to 6,410", "ES stop moved to 6,425"),
        # as a trading platform writes it, and a contract of that root (a review)
        ("raising /ES stop to 6,410", "ES stop moved to 6,425"),
        ("raising ESZ6 stop to 6,410", "ES stop moved to 6,425"),
        ("stop on all 30 CLZ5 moved to 61.10", "/CL stop up to 61.90 on all 30"),
        # a market named in words (a new user's trial: the newer copper stop left out)
        ("copper stop 9,450 on the 3-month", "raise the copper stop to 9,500"),
        ("Bund stop to 131.20 on all 40", "stop on the bunds to 131.60"),
        # the Nikkei and JGB futures' roots (a new user's trial: the replaced NK stop shown,
        # the new one left out)
        ("raising NK stop to 39,500", "NK stop moved to 39,600"),
        ("raising JBZ6 stop to 143.60", "JB stop moved to 143.45"),
    ):
        seen = _budgets([replace(OLDER, text=old), replace(NEWER, text=new), *OTHERS])
        one = [shown for shown, _ in seen if len(shown & {"s1", "s2"}) == 1]
        assert one and all("s2" in shown for shown in one), (old, new)


def test_of_several_changes_of_one_stop_the_newest_are_shown_first() -> None:
    # a new user's trial: at 1,000 characters three ES stops were shown together, the one
    # in force not among them. A change whose turn comes stands for the newest change of
    # its stop not shown yet that fits, longer or not
    stops = [
        _hard("s1", 10, "stop_or_target_change", "ES stop 6,380", 0.95),
        _hard("s2", 15, "stop_or_target_change", "ES stop to 6,395", 0.94),
        _hard("s3", 25, "stop_or_target_change", "ES stop now 6,410 on it", 0.9),
        _hard(
            "s4",
            45,
            "stop_or_target_change",
            "moving the ES stop up to 6,428 now",
            0.6,
        ),
    ]
    seen = _budgets([*stops, *OTHERS])
    for shown, _ in seen:
        # the one in force whenever two changes of the stop are shown (then the newer ones
        # as far as they fit: an older, shorter one may fill what a newer one cannot)
        assert len(shown & {"s1", "s2", "s3", "s4"}) < 2 or "s4" in shown, shown
    assert any({"s1", "s2", "s3", "s4"} & shown == {"s4"} for shown, _ in seen)
    # by score per character alone the older, shorter, surer lines go first
    other = [
        replace(stops[-1], text=stops[-1].text.replace("ES", "NQ")),
        *stops[:-1],
    ]
    by_score = _budgets([*other, *OTHERS])
    assert any("s1" in shown and "s4" not in shown for shown, _ in by_score)


def test_a_newer_change_naming_a_new_level_is_in_force_however_unsure_the_ranker() -> None:
    # a new user's trial: "NVDA stop 128.40 now — final one before the print, won't touch it
    # again" ranked 0.22 and the feed showed older NVDA stops at every budget up to 6,000. A
    # newer change naming one instrument and a level near those its stop named before, but
    # not one of them, is a move: it stands for an older one as a sure change does, longer
    # than it or not
    final = replace(NEWER, text="USDJPY stop 152.40 now, won't touch it again", score=0.22)
    seen = _budgets([OLDER, final, *OTHERS])  # budgets from the largest down
    newer = [n for n, (shown, _) in enumerate(seen) if "s2" in shown]
    older_alone = [n for n, (shown, _) in enumerate(seen) if shown & {"s1", "s2"} == {"s1"}]
    assert newer and any(seen[n][0] & {"s1", "s2"} == {"s2"} for n in newer)
    # the older change is shown without the newer only where the newer no longer fits
    assert all(n > max(newer) for n in older_alone)
    # the same level again is a restatement; a size, an id or a time is no level; a report
    # naming several instruments moves no one stop: none replaces the older change
    for text in (
        "USDJPY stop 151.60 still, won't touch it",
        "USDJPY stop order 88190 for 10 at 09:30, unchanged",
        "wrap: USDJPY stop 152.40, EURUSD stop 1.0850, NVDA stop 128",
    ):
        unsure = replace(NEWER, text=text, score=0.22)
        seen = _budgets([OLDER, unsure, *OTHERS])
        assert any(shown & {"s1", "s2"} == {"s1"} for shown, _ in seen), text
