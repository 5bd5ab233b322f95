"""A block's release in force: when the feed cannot show every hard event, an entry block,
a halt or a temporary override that a later hard event releases does not take the
place of its release (a new user's trial read "new entries blocked on GBP" at a tight
budget, its later "Entry block released" left out). As many hard events are shown when the
release is no longer than its block (one fewer at some budgets when it is longer, as for a
stop's newer change, ADR 0069); nothing is silent."""

from __future__ import annotations

from dataclasses import replace

import pytest

from channel_memory.feed.layout import _releases
from tests.test_feed_echoes import _hard
from tests.test_feed_in_force import OTHERS, _budgets

BLOCK = _hard("b1", 10, "risk_limit", "NEW ENTRIES BLOCKED on GBP books until var < 100%", 0.95)
RELEASE = _hard("b2", 45, "risk_limit", "GBP entry block lifted, normal limits apply", 0.62)


def _pairs(items: list[object]) -> dict[str, str]:
    """Which block each release stands in for."""
    out = _releases(items, frozenset())  # type: ignore[arg-type]
    return {block: newer[0].key for block, newer in out.items()}


def test_the_release_of_a_block_is_shown_before_the_block_it_lifts() -> None:
    seen = _budgets([BLOCK, RELEASE, *OTHERS])
    one = [shown for shown, _ in seen if len(shown & {"b1", "b2"}) == 1]
    assert one and all("b2" in shown for shown in one)
    assert all("b2" in shown for shown, _ in seen if "b1" in shown)


def test_as_many_hard_events_are_shown_as_without_the_pairing() -> None:
    # a release of another book lifts nothing here: score per character alone shows the
    # surer block first; with the pairing no budget shows fewer hard events (the release is
    # shorter than its block)
    other = replace(RELEASE, text="JPY entry block lifted, normal limits apply")
    by_score = _budgets([BLOCK, other, *OTHERS])
    in_force = _budgets([BLOCK, RELEASE, *OTHERS])
    assert len(by_score) == len(in_force)
    assert all(n >= m for (_, n), (_, m) in zip(in_force, by_score, strict=True))
    assert any(shown & {"b1", "b2"} == {"b1"} for shown, _ in by_score)


def test_a_longer_release_costs_at_most_one_hard_event_at_a_budget() -> None:
    # the review's case: a release longer than its block takes more room; a budget may then
    # show one hard event fewer, never two; it stands in for the block wherever it fits (the
    # block alone only where it does not)
    text = "GBP entry block lifted at 14:05 after the recon, normal limits apply again"
    longer = replace(RELEASE, text=text)
    other = replace(longer, text=text.replace("GBP", "JPY"))
    by_score = _budgets([BLOCK, other, *OTHERS])
    in_force = _budgets([BLOCK, longer, *OTHERS])
    assert all(n >= m - 1 for (_, n), (_, m) in zip(in_force, by_score, strict=True))
    assert any(shown & {"b1", "b2"} == {"b2"} for shown, _ in in_force)


@pytest.mark.parametrize(
    ("block", "release"),
    [
        ("NEW ENTRIES BLOCKED on GBP books until var < 100%", "GBP entry block lifted"),
        ("no new EM risk until I say, blocking entries", "lifting the EM new-entry block now"),
        ("ENTRY BLOCK sector=ENERGY_EQ until the recon is done", "ENTRY BLOCK LIFTED"),
        (
            "OVERRIDE applied: gold delta limit 3,000 → 3,400 oz, expires 19:00Z, ref OVR-0916-01",
            "OVERRIDE OVR-0916-01 EXPIRED 19:00:00Z. gold delta limit reverted 3,400 → 3,000",
        ),
        ("trading halted in XAUUSD while the feed is down", "XAUUSD halt off, trade as normal"),
        ("reduce-only on crude, no new crude risk", "crude is back to normal limits"),
        # the round's review: more ways to say it, after words that make no release in
        # another sentence
        (BLOCK.text, "GBP entry block removed"),
        (BLOCK.text, "GBP block lifted by risk"),
        ("GBP book frozen until the recon", "GBP book unfrozen, trading resumed"),
        ("trading halted in XAUUSD", "XAUUSD halt is over"),
        (BLOCK.text, "as discussed when we spoke: GBP block lifted"),
        (BLOCK.text, "if you missed it: GBP entry block lifted"),
        (
            "WINDOW PCE-0731 21:15-22:15: XAUUSD cap 40k→25k oz | new-entry block",
            "WINDOW PCE-0731 expired 22:15 → XAUUSD cap 25k→40k oz | new-entry block OFF",
        ),
        ("EM entries blocked till the print", "EM entry block lifted"),
        # the second review's: more words, after words that make none in another sentence
        (BLOCK.text, "lift the GBP block"),
        (BLOCK.text, "unblocking GBP entries"),
        ("GBP trading halted", "GBP trading resumes"),
        ("GBP entry ban", "GBP ban lifted"),
        (BLOCK.text, "GBP blocks are off"),
        (BLOCK.text, "GBP block cancelled"),
        (BLOCK.text, "I can confirm the GBP block is lifted"),
        ("CRO: JPY entries blocked", "CRO: JPY block lifted"),
        # the round's new-user trial: a block in so many words, lifted by a window's end
        (
            "Risk: no new USDJPY entries until I say otherwise",
            "USDJPY block released, normal limits apply",
        ),
        (
            "no new positions in USD crosses between 13:20 and 13:45",
            "USD window is over, new positions OK again.",
        ),
    ],
)
def test_a_release_lifts_the_block_it_names(block: str, release: str) -> None:
    items = [replace(BLOCK, text=block), replace(RELEASE, text=release), *OTHERS]
    assert _pairs(items) == {"b1": "b2"}


@pytest.mark.parametrize(
    ("block", "release"),
    [
        # awaited, not done
        (BLOCK.text, "GBP block will be lifted at 15:00"),
        (BLOCK.text, "blocked until the GBP block is released by risk"),
        (BLOCK.text, "GBP override runs to 17:30 then it reverts"),
        # a limit raised is no release
        (BLOCK.text, "GBP soft loss limit lifted to -$300k for today"),
        # another book
        (BLOCK.text, "JPY entry block lifted"),
        # naming nothing, another kind of hold: a lifted block releases no override
        ("OVERRIDE: GBP gross limit 600m → 650m until 17:30", "block lifted"),
        # no hold at all before it
        ("GBP gross limit cut to 40m", "GBP block lifted"),
        # a release far down a report releases nothing
        (BLOCK.text, "EOD report\n" + "positions unchanged, " * 10 + "GBP block lifted"),
        # the round's review: a cap or a limit raised, a denial, a new block beside a
        # release, a question, another kind of hold of the same book, a word in capitals
        # that names no book
        (BLOCK.text, "GBP cap lifted 20m to 60m gross for the CPI print"),
        (BLOCK.text, "GBP cap lifted from 40m to 60m"),
        (BLOCK.text, "Risk: GBP block NOT lifted. No new entries."),
        (BLOCK.text, "GBP desk: risk-off, entries blocked"),
        (BLOCK.text, "new GBP block: entries blocked, previous limits restored"),
        (BLOCK.text, "GBP block lifted?"),
        (BLOCK.text, "GBP hedge off, entry block stays"),
        (BLOCK.text, "never lifted the GBP block"),
        (BLOCK.text, "GBP block lifted; JPY stays blocked"),
        (BLOCK.text, "OVERRIDE on GBP expired, gross limit reverted to 600m"),
        (BLOCK.text, "GBP freeze lifted"),
        ("NOTE - entries blocked on GBP", "NOTE - block on JPY lifted"),
        ("EM entries blocked", "FX entry block lifted"),
        # the second review's: a label, a sign-off or a word both give is no shared book;
        # a release word of another sentence; a level after "lifted"; a denial or a
        # question after it; a kind it does not lift
        ("CRO: JPY entries blocked", "CRO: GBP block lifted"),
        ("TRADING HALTED in JPY", "GBP TRADING RESUMED"),
        ("NEW ENTRIES BLOCKED on JPY BOOKS", "GBP BOOKS: block lifted"),
        ("JPY entries blocked - JD", "GBP block lifted - JD"),
        ("GBP entries blocked", "JPY block lifted, GBP unaffected"),
        ("JPY entries blocked", "US block lifted"),
        ("GBP entries blocked", "CPI released, GBP block stays"),
        ("GBP entries blocked", "NFP released - GBP entry block in place till 14:00"),
        ("GBP entries blocked", "GBP entry block over the CPI print"),
        ("XAUUSD trading halted", "XAUUSD trading halt over the weekend"),
        (
            "OVERRIDE: GBP gross limit 600m -> 650m until 17:30",
            "GBP temp cap lifted (600m -> 650m)",
        ),
        ("OVERRIDE: GBP gross limit 600m -> 650m until 17:30", "GBP temp limit lifted to USD 650m"),
        ("GBP entries blocked", "GBP block lifted - not yet, waiting on CRO"),
        ("GBP entries blocked", "GBP block lifted: no, still in place"),
        ("GBP entries blocked", "Is the GBP block lifted yet"),
        ("OVERRIDE: GBP gross limit 600m -> 650m until 17:30", "GBP unblocked"),
        (BLOCK.text, "GBP book unfrozen"),
        ("GBP entries blocked temporarily", "GBP override expired"),
        ("GBP entries blocked, bank holiday", "GBP entry ban lifted"),
    ],
)
def test_what_is_no_release_of_that_block(block: str, release: str) -> None:
    items = [replace(BLOCK, text=block), replace(RELEASE, text=release), *OTHERS]
    assert _pairs(items) == {}


def test_a_release_typed_otherwise_by_its_rules_still_lifts_its_block() -> None:
    # the trial's "AUD freeze lifted, 5m back on" was read as a fill: a release is read by
    # its words whatever its type; a block must be a risk-limit event
    freeze = replace(BLOCK, text="Freeze on AUD adds until the RBA minutes are out")
    lifted = replace(RELEASE, event_type="trade_fill", text="AUD freeze lifted, 5m back on")
    assert _pairs([freeze, lifted]) == {"b1": "b2"}
    assert _pairs([replace(freeze, event_type="thesis_change"), lifted]) == {}
    seen = _budgets([freeze, lifted, *OTHERS])
    assert all("b2" in shown for shown, _ in seen if "b1" in shown)


@pytest.mark.parametrize(
    ("event_type", "text"),
    [
        # the third review's: a block of shares, an order's window or override, an exchange
        # halt, trades open again — trading words in a fill, a route, a stop or a proposal
        ("trade_fill", "lifted the block offer, 2m EURUSD @ 1.0842"),
        ("trade_fill", "lifted a block of 500k EURUSD at 1.0842"),
        ("route_decision", "block order released to the algo, EURUSD 300k"),
        ("stop_or_target_change", "stop override removed, back to 1.0850 EURUSD"),
        ("route_decision", "execution window ended, 80% done on EURUSD"),
        ("trade_proposal", "EURUSD: trades open again after NFP, propose long 5m"),
        ("trade_fill", "EURUSD LULD halt lifted, bought 10m"),
        ("trade_fill", "TWAP window over, filled 3m EURUSD"),
        ("trade_fill", "bought 10m at 1.0842 after the halt ended"),
    ],
)
def test_trading_words_in_other_hard_events_lift_no_block(event_type: str, text: str) -> None:
    blocks = [
        replace(BLOCK, text="NEW ENTRIES BLOCKED on EURUSD until var < 100%"),
        replace(BLOCK, key="b0", handle="floor/b0", text="Risk: no new EURUSD entries until I say"),
    ]
    assert _pairs([*blocks, replace(RELEASE, event_type=event_type, text=text)]) == {}


def test_a_block_in_so_many_words_is_lifted_after_a_block_of_the_kind_named() -> None:
    # an override expiring lifts the override, not the entry block written after it; "no
    # new info" is no block
    override = replace(
        BLOCK, key="b0", handle="floor/b0", text="OVERRIDE applied: gold delta 3,000 -> 3,400"
    )
    entries = replace(BLOCK, text="Risk: no new entries until I say otherwise")
    expired = replace(RELEASE, text="override expired")
    assert _pairs([override, entries, expired]) == {"b0": "b2"}
    assert _pairs([entries, expired]) == {}
    info = replace(BLOCK, text="GBP override to 650m until 17:30, no new info from CRO")
    assert _pairs([info, replace(RELEASE, text="GBP block lifted")]) == {}


def test_a_release_lifts_the_blocks_of_its_book_since_its_previous_release() -> None:
    older = replace(BLOCK, key="b0", handle="floor/b0", first_us=BLOCK.first_us - 60_000_000)
    older = replace(older, last_us=older.first_us)
    assert _pairs([older, BLOCK, RELEASE]) == {"b0": "b2", "b1": "b2"}
    # naming no book, the newest block of its kind alone
    unnamed = replace(RELEASE, text="entry block lifted")
    assert _pairs([older, BLOCK, unnamed]) == {"b1": "b2"}
    elsewhere = replace(BLOCK, handle="desk-b/b1", covers=frozenset({"desk-b/b1"}))
    assert _pairs([elsewhere, RELEASE]) == {}
    # an echo, or a release the ranker thinks no decision, lifts nothing
    assert _releases([BLOCK, RELEASE], frozenset({"b2"})) == {}
    assert _pairs([BLOCK, replace(RELEASE, score=0.3)]) == {}
    # a repeat of a release lifts no older block of that book
    repeat = replace(RELEASE, key="b4", handle="floor/b4", text="confirming: GBP block lifted")
    repeat = replace(repeat, first_us=RELEASE.first_us + 120_000_000)
    repeat = replace(repeat, last_us=repeat.first_us)
    assert _pairs([older, BLOCK, RELEASE, repeat]) == {"b0": "b2", "b1": "b2"}
    # an update repeating the block is released with it: the release stands for both
    update = replace(BLOCK, key="b5", handle="floor/b5", text="GBP block will be lifted at 15:00")
    update = replace(update, first_us=BLOCK.first_us + 60_000_000)
    update = replace(update, last_us=update.first_us)
    assert _pairs([BLOCK, update, RELEASE]) == {"b1": "b2", "b5": "b2"}
    # a release is never itself the block another release lifts
    again = replace(RELEASE, key="b3", handle="floor/b3", first_us=RELEASE.first_us + 60_000_000)
    again = replace(again, last_us=again.first_us)
    assert _pairs([BLOCK, RELEASE, again]) == {"b1": "b2"}
