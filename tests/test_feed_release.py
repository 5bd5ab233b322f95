"""A block's release in force: when the feed cannot show every hard event, an entry block,
a halt or a temporary override that a later risk-limit event releases does not take the
place of its release (a new user's trial read "new entries blocked on GBP" at a tight
budget, its later "Entry block released" left out). As many hard events are shown; nothing
is silent."""

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
    # surer block first; with the pairing no budget shows fewer hard events
    other = replace(RELEASE, text="JPY entry block lifted, normal limits apply")
    by_score = _budgets([BLOCK, other, *OTHERS])
    in_force = _budgets([BLOCK, RELEASE, *OTHERS])
    assert len(by_score) == len(in_force)
    assert all(n >= m for (_, n), (_, m) in zip(in_force, by_score, strict=True))
    assert any(shown & {"b1", "b2"} == {"b1"} for shown, _ in by_score)


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
    ],
)
def test_what_is_no_release_of_that_block(block: str, release: str) -> None:
    items = [replace(BLOCK, text=block), replace(RELEASE, text=release), *OTHERS]
    assert _pairs(items) == {}


def test_a_release_lifts_one_block_the_newest_of_its_channel() -> None:
    older = replace(BLOCK, key="b0", handle="floor/b0", first_us=BLOCK.first_us - 60_000_000)
    older = replace(older, last_us=older.first_us)
    assert _pairs([older, BLOCK, RELEASE]) == {"b1": "b2"}
    elsewhere = replace(BLOCK, handle="desk-b/b1", covers=frozenset({"desk-b/b1"}))
    assert _pairs([elsewhere, RELEASE]) == {}
    # an echo, or a release the ranker thinks no decision, lifts nothing
    assert _releases([BLOCK, RELEASE], frozenset({"b2"})) == {}
    assert _pairs([BLOCK, replace(RELEASE, score=0.3)]) == {}
    # a release is never itself the block another release lifts
    again = replace(RELEASE, key="b3", handle="floor/b3", first_us=RELEASE.first_us + 60_000_000)
    again = replace(again, last_us=again.first_us)
    assert _pairs([BLOCK, RELEASE, again]) == {"b1": "b2"}
