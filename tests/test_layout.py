"""The feed's layout, as pure functions: ``select`` and ``render`` over candidates built
directly (no store, no HTTP), so every budget decision is checked where it is made."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from channel_memory.feed.layout import (
    BudgetTooSmall,
    Candidates,
    FeedItem,
    Format,
    Sizes,
    gaps_not_shown,
    header_line,
    item_json,
    item_text,
    render,
    select,
    short_omission_note,
    style_of,
)

HOUR_US = 3_600_000_000
DAY_US = 24 * HOUR_US
TO_US = 1_780_000_000_000_000 // HOUR_US * HOUR_US + 20 * HOUR_US  # some day, 20:00 UTC
MINUTE_US = 60_000_000


def item(
    key: str,
    minute: int,
    text: str,
    *,
    kind: str = "raw_excerpt",
    handles: int = 1,
    cut_text: str | None = None,
    event_type: str | None = None,
) -> FeedItem:
    first = TO_US - (600 - minute) * MINUTE_US
    covered = frozenset(f"floor/{key}{n}" for n in range(handles))
    return FeedItem(
        key=key,
        kind=kind,
        event_type=event_type,
        handle=f"floor/{key}0",
        handles=handles,
        first_us=first,
        last_us=first + (handles - 1) * MINUTE_US,
        author="dana",
        trust="unverified",
        text=text,
        cut_text=cut_text,
        covers=covered,
        block_id=f"b{key}",
        processor="deterministic",
        generated_us=first,
        json_object={"id": f"b{key}", "kind": kind, "text": text},
        whole=handles == 1,
        versions=tuple(("floor", f"{key}{n}", "h" * 8) for n in range(handles)),
    )


def hard(key: str, minute: int, text: str, cut_text: str | None = None) -> FeedItem:
    return item(
        key, minute, text, kind="hard_event", cut_text=cut_text, event_type="trade_approval"
    )


def window(
    *,
    hard_items: list[FeedItem] | None = None,
    raw: list[FeedItem] | None = None,
    sparse: list[FeedItem] | None = None,
    older: list[FeedItem] | None = None,
) -> Candidates:
    """A digest window; lists newest first, as the readers offer them."""
    hard_items, raw, sparse, older = hard_items or [], raw or [], sparse or [], older or []
    covered = {h for tier in (hard_items, raw, sparse, older) for i in tier for h in i.covers}
    return Candidates(
        kind="raw_window+digest",
        channels=("floor",),
        since_us=DAY_US,
        from_us=TO_US - 12 * HOUR_US,
        to_us=TO_US,
        raw_recent_us=2 * HOUR_US,
        available=len(covered),
        range_us=(TO_US - 12 * HOUR_US, TO_US),
        status="ok",
        coverage_gaps=0,
        hard=hard_items,
        hard_total=len(hard_items),
        hard_more_handles=[],
        raw=raw,
        sparse=sparse,
        older=older,
        older_total=sum(i.handles for i in older),
        limit=50,
    )


def header(content: str) -> dict[str, str]:
    line = content.split("\n", 1)[0]
    return dict(part.split("=", 1) for part in line.split(" ")[1:])


def shown(content: str, key: str) -> bool:
    """Whether the item with this key has a metadata line (not only a mention in a note)."""
    # a feed of one channel names its items by message id
    return (
        re.search(rf"^\[\d\d:\d\d[^\n]* (?:floor/)?{key}0[ +\]]", content, re.MULTILINE) is not None
    )


# --- priorities -----------------------------------------------------------------------------


def test_hard_events_are_served_before_raw_and_sparse() -> None:
    hards = [hard(f"h{n}", 500 + n, f"approved {n} " + "x" * 80) for n in range(3)]
    raws = [item(f"r{n}", 590 - n, "chatter " + "y" * 200) for n in range(4)]
    sparse = [item("s", 100, "summary " + "z" * 200, kind="topic_rollup", handles=3)]
    c = window(hard_items=hards, raw=raws, sparse=sparse)
    everything = len(render(c, 100_000, "text").content)
    alone = len(render(window(hard_items=hards), 100_000, "text").content)
    assert alone < everything - 300
    body = render(c, alone + 150, "text")
    assert all(shown(body.content, f"h{n}") for n in range(3))
    assert not any(shown(body.content, f"r{n}") for n in range(4))
    assert not shown(body.content, "s")
    assert body.numbers["more_hard_events"] == 0 and body.numbers["omitted_hard_events"] == []


def test_an_overshoot_from_a_lower_tier_never_drops_the_hard_events() -> None:
    # a budget with room for the hard events and some raw messages: the raw tier's section
    # line is in no item's size, so the first fitting pass overshoots by it; shrinking the
    # budget by the whole overshoot once left too little for the three hard events beside
    # their notes and served none of them (a 900-character feed of the inspector's desk)
    hards = [hard(f"h{n}", 500 + n, f"approved {n} " + "x" * 80) for n in range(3)]
    raws = [item(f"r{n}", 590 - n, "chatter " + "y" * 200) for n in range(4)]
    c = window(hard_items=hards, raw=raws)
    everything = len(render(c, 100_000, "text").content)
    alone = len(render(window(hard_items=hards), 100_000, "text").content)
    for budget in range(alone + 160, everything, 3):
        body = render(c, budget, "text")
        assert len(body.content) <= budget
        assert all(shown(body.content, f"h{n}") for n in range(3)), budget


def test_hard_events_are_cut_before_any_is_omitted() -> None:
    texts = [
        (f"FILLED {n} ES @ 6700\n" + "context " * 20, f"FILLED {n} ES @ 6700 …") for n in range(4)
    ]
    hards = [hard(f"h{n}", 500 + n, whole, cut) for n, (whole, cut) in enumerate(texts)][::-1]
    c = window(hard_items=hards)
    whole = len(render(c, 100_000, "text").content)
    cut_all = select(c, 100_000, "text")
    assert cut_all.cut == set()  # room enough: nothing is cut
    budget = whole - 200  # too small for every whole text, plenty for every cut one
    body = render(c, budget, "text")
    assert len(body.content) <= budget
    assert all(shown(body.content, f"h{n}") for n in range(4))
    assert body.numbers["omitted_hard_events"] == [] and body.numbers["more_hard_events"] == 0
    assert "@ 6700 …\n" in body.content  # some are shown cut, "…" where text is left out
    # a hard event shown cut is not shown complete
    assert len(body.complete) < 4


@pytest.mark.parametrize("newer", ["ha", "hb"])
def test_equally_dense_hard_events_tie_by_the_newer_message_not_the_block_id(newer: str) -> None:
    # a block id hashes the rules' text: a tie broken by it would move with any rewording
    # of the rules that matches the same messages
    older = "hb" if newer == "ha" else "ha"
    hards = [hard(older, 500, "approved " + "x" * 300), hard(newer, 501, "approved " + "y" * 300)]
    c = window(hard_items=hards)
    both = len(render(c, 100_000, "text").content)
    one = [
        b
        for b in (render(c, budget, "text") for budget in range(both - 400, both, 10))
        if shown(b.content, "ha") != shown(b.content, "hb")
    ]
    assert one  # some budget shows exactly one of the two
    assert all(shown(b.content, newer) and not shown(b.content, older) for b in one)


def test_hard_events_omitted_are_named_newest_first() -> None:
    hards = [hard(f"h{n}", 500 + n, f"approved {n} " + "x" * 300) for n in range(6)][::-1]
    body = render(window(hard_items=hards), 1500, "text")
    assert len(body.content) <= 1500
    named = body.numbers["omitted_hard_events"]
    assert named and named == sorted(named, reverse=True)  # h5 is the newest
    assert (
        len(named)
        + body.numbers["more_hard_events"]
        + sum(shown(body.content, f"h{n}") for n in range(6))
        == 6
    )


def test_single_message_collapses_are_counted_on_one_line() -> None:
    sparse = [
        item("a", 10, "1 acknowledgement collapsed", kind="low_value_ack"),
        item("b", 20, "1 acknowledgement collapsed", kind="low_value_ack"),
        item("c", 30, "3 status messages collapsed", kind="telemetry_count", handles=3),
    ]
    body = render(window(sparse=sparse), 4000, "text")
    assert "[also collapsed, one message each: 2 acknowledgements]\n" in body.content
    assert not shown(body.content, "a") and not shown(body.content, "b")
    assert shown(body.content, "c")  # three messages: a line of its own
    assert body.numbers["digest_blocks"] == 3 and body.numbers["omitted"] == 0
    assert body.numbers["digest_source_messages"] == 5
    data = json.loads(render(window(sparse=sparse), 4000, "json").content)
    assert data["collapsed"] == {"low_value_ack": 2}


# --- the header describes the body ----------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_header_numbers_are_the_bodys(fmt: Format) -> None:
    hards = [hard("h0", 400, "approved 5 ES")]
    raws = [item(f"r{n}", 590 - n, f"line {n} " + "y" * 100) for n in range(3)]
    older = [item(f"o{n}", 100 + n, f"old {n} " + "q" * 100) for n in range(3)]
    body = render(window(hard_items=hards, raw=raws, older=older), 100_000, fmt)
    numbers = body.numbers
    if fmt == "text":
        assert body.content.startswith(header_line(numbers))
        digest, _, raw_part = body.content.partition("[raw recent;")
        raw_text = "[raw recent;" + raw_part
        digest_text = digest[digest.index("[digest;") :]
        assert numbers["raw_bytes"] == len(raw_text)
        assert numbers["digest_bytes"] == len(digest_text)
        assert header(body.content)["messages"] == "3"
    else:
        data = json.loads(body.content)
        assert data["header"]["raw_bytes"] == numbers["raw_bytes"]
        raw_json = json.dumps(data["raw_recent"], separators=(",", ":"), ensure_ascii=False)
        assert numbers["raw_bytes"] == len(raw_json) - 2  # the items, not the brackets
        digest_json = json.dumps(data["digest"], separators=(",", ":"), ensure_ascii=False)
        assert numbers["digest_bytes"] == len(digest_json) - 2
        assert len(data["raw_recent"]) == numbers["messages"] == 3
        assert len(data["digest"]) == numbers["digest_blocks"] == 4
    assert numbers["available"] == 7 and numbers["omitted"] == 0
    assert numbers["digest_source_messages"] == 4


def test_an_empty_json_section_counts_no_characters() -> None:
    """A JSON body with no raw message says ``raw_bytes`` 0, as the text body does (not
    the 2 characters of its empty array)."""
    hards = [hard("h0", 400, "approved 5 ES")]
    formats: tuple[Format, ...] = ("json", "text")
    for fmt in formats:
        body = render(window(hard_items=hards), 100_000, fmt)
        assert body.numbers["messages"] == 0 and body.numbers["raw_bytes"] == 0
        assert body.numbers["digest_bytes"] > 0
    empty = render(window(), 100_000, "json")
    assert (empty.numbers["raw_bytes"], empty.numbers["digest_bytes"]) == (0, 0)


def test_omitted_counts_what_the_budget_left_out() -> None:
    raws = [item(f"r{n}", 590 - n, f"line {n} " + "y" * 150) for n in range(6)]
    body = render(window(raw=raws), 900, "text")
    served = sum(shown(body.content, f"r{n}") for n in range(6))
    assert 0 < served < 6
    assert body.numbers["messages"] == served
    assert body.numbers["omitted"] == 6 - served
    # the raw tier short of its limit with room left: the next message did not fit
    messages = "1 message" if served == 5 else f"{6 - served} messages"
    assert f"[omitted {messages} due to max_chars;" in body.content
    # … but full to its limit with room left, the limit left the rest out
    limited = render(replace(window(raw=raws), limit=2, kind="raw_window"), 100_000, "text")
    assert "[omitted 4 messages due to limit;" in limited.content


def test_counts_in_the_omission_line_are_grammatical() -> None:
    hard = item("h1", 589, "FILLED 200 NVDA @ 131.20", kind="hard_event", event_type="trade_fill")
    c = window(raw=[item("r", 590, "hello " * 20)], hard_items=[hard])
    needed = len(render(c, 100_000, "text").content.split("\n", 1)[0]) + 1
    one = render(window(raw=[item("r", 590, "hello " * 200)]), needed + 120, "text")
    assert "\n[omitted 1 message due to max_chars; retrieve" in one.content
    both = render(c, needed + 140, "text")
    assert "[omitted 2 messages due to max_chars, 1 of them a hard event, newest first: " in (
        both.content
    )


def test_a_budget_with_room_for_the_header_alone_still_counts_what_it_leaves_out() -> None:
    """Where the whole omission line does not fit beside the header, a shorter one says
    how many messages and hard events were left out and where to read them; only where
    that does not fit either is the header alone."""
    hard = item("h1", 589, "FILLED 200 NVDA @ 131.20", kind="hard_event", event_type="trade_fill")
    c = window(raw=[item("r", 590, "hello " * 20)], hard_items=[hard])
    short = "[omitted 2 messages (1 hard event); get_channel_messages]\n"
    body = render(c, 490, "text")  # the header takes 422
    assert body.content.endswith("\n" + short) and len(body.content) <= 490
    assert body.content.count("\n") == 2 and body.numbers["omitted"] == 2
    header = body.content.split("\n", 1)[0] + "\n"  # the header of the empty selection
    assert render(c, len(header) + len(short), "text").content == header + short
    bare = render(c, len(header) + len(short) - 1, "text")
    assert bare.content == header and bare.numbers["omitted"] == 2


def test_the_gaps_not_shown_are_counted_grammatically() -> None:
    assert gaps_not_shown(1, True) == "[1 more coverage gap not shown]\n"
    assert gaps_not_shown(3, True) == "[3 more coverage gaps not shown]\n"
    assert gaps_not_shown(2, False) == "[2 coverage gaps not shown]\n"  # none shown: no "more"


def test_the_short_omission_line_says_each_count_it_has() -> None:
    assert (
        short_omission_note(2, 1) == "[omitted 2 messages (1 hard event); get_channel_messages]\n"
    )
    assert short_omission_note(1, 0) == "[omitted 1 message; get_channel_messages]\n"
    assert short_omission_note(0, 3) == "[omitted 3 hard events; get_channel_messages]\n"
    assert short_omission_note(0, 0) == ""


def test_a_budget_below_the_header_is_refused() -> None:
    with pytest.raises(BudgetTooSmall) as error:
        render(window(raw=[item("r", 590, "hello")]), 50, "text")
    assert error.value.needed > 50


# --- the budget, as a property --------------------------------------------------------------

_texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=400)


@st.composite
def windows(draw: st.DrawFn) -> Candidates:
    def items(prefix: str, count: int, kind: str | None = None) -> list[FeedItem]:
        out = []
        for n in range(count):
            text = draw(_texts)
            cut = draw(st.none() | _texts)
            handles = draw(st.integers(1, 3)) if kind not in (None, "hard_event") else 1
            out.append(
                item(
                    f"{prefix}{n}",
                    590 - n,
                    text,
                    kind=kind or "raw_excerpt",
                    handles=handles,
                    cut_text=cut if kind == "hard_event" else None,
                    event_type="trade_fill" if kind == "hard_event" else None,
                )
            )
        return out

    return window(
        hard_items=items("h", draw(st.integers(0, 5)), "hard_event"),
        raw=items("r", draw(st.integers(0, 5))),
        sparse=items(
            "s", draw(st.integers(0, 3)), draw(st.sampled_from(["topic_rollup", "low_value_ack"]))
        ),
        older=items("o", draw(st.integers(0, 4))),
    )


@settings(max_examples=150, deadline=None)
@given(c=windows(), max_chars=st.integers(300, 5000), fmt=st.sampled_from(["text", "json"]))
def test_the_body_never_exceeds_max_chars(c: Candidates, max_chars: int, fmt: Format) -> None:
    try:
        body = render(c, max_chars, fmt)
    except BudgetTooSmall as error:
        assert error.needed > max_chars
        return
    assert len(body.content) <= max_chars
    if fmt == "json":
        json.loads(body.content)
    # every message is shown or counted as omitted, never both, never neither
    assert 0 <= body.numbers["omitted"] <= body.numbers["available"]


def test_sizes_are_not_shared_between_layouts() -> None:
    """Two windows whose items share keys but not texts lay out independently."""
    short = window(raw=[item(f"r{n}", 590 - n, "ok") for n in range(5)])
    long = window(raw=[replace(i, text="y" * 400) for i in short.raw])
    render(short, 2000, "text")
    body = render(long, 2000, "text")
    assert len(body.content) <= 2000
    assert body.numbers["messages"] < 5


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_sizes_are_each_items_rendered_length(fmt: Format) -> None:
    hards = [hard(f"h{n}", 500 + n, "FILLED " + "x" * (10 * n), "FILLED") for n in range(3)]
    raws = [item(f"r{n}", 590 - n, "y" * (50 * n + 1)) for n in range(3)]
    c = window(hard_items=hards, raw=raws)
    style = style_of(c)
    sizes = Sizes(fmt, style)
    for _ in range(2):  # asked again, the memo answers the same
        for i in [*hards, *raws]:
            for cut in (False, True):
                for raw_tier in (False, True):
                    expected = (
                        len(item_json(i, cut, raw_tier)) + 1
                        if fmt == "json"
                        else len(item_text(i, cut, style, raw_tier))
                    )
                    assert sizes.of(i, cut, raw_tier) == expected
