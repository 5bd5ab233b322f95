"""The feed on an independent desk: decisions written and labelled by someone who never
read the rules (``bench/data/desk_independent.jsonl``), measured through the real ingest,
worker and feed by the same code as ``python bench/desk.py``.

The target: every labelled decision becomes a hard event; every decision is served
verbatim at 12,000 and 8,192 characters and at least 90% at 6,000. Today's figures are
held as floors below; the feed keeps its budget and accounts for every hard event it
does not show.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.data.check_desk import TYPES as CHECKED_TYPES
from bench.data.check_desk import check as check_desk
from bench.desk import (
    INDEPENDENT_CHANNEL,
    INDEPENDENT_END,
    independent_events,
    independent_report,
    kept_verbatim,
    load_independent,
    required_lines,
    served_items,
    shows_span,
)
from bench.training_desks import READ_DESKS, RUNS_DESKS
from channel_memory.demo.synthetic_desk import DAY_US
from channel_memory.ingest.events import IngestBatch
from channel_memory.kernel.timefmt import parse_rfc3339
from channel_memory.worker.model import DECISION_TYPES
from channel_memory.worker.rules import parse_rules


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return asyncio.run(independent_report())


def _budget(report: dict[str, Any], max_chars: int) -> dict[str, Any]:
    row: dict[str, Any] = next(r for r in report["budgets"] if r["max_chars"] == max_chars)
    return row


# --- the data and the instrument (these hold whatever the rules and the feed do) ----------


def test_the_data_is_the_labelled_day_the_readme_describes() -> None:
    rows = load_independent()
    assert len(rows) == 218
    assert len({r["id"] for r in rows}) == 218
    labels = Counter(r["decision"] for r in rows if r["decision"] is not None)
    assert labels == {
        "trade_proposal": 7,
        "trade_approval": 8,
        "trade_confirmation": 4,
        "trade_fill": 10,
        "stop_or_target_change": 6,
        "route_decision": 5,
        "risk_limit": 5,
        "position_change": 5,
        "thesis_change": 3,
    }
    times = [parse_rfc3339(r["created_at"]) for r in rows]
    assert times == sorted(times)
    assert times[0] >= INDEPENDENT_END - DAY_US and times[-1] < INDEPENDENT_END
    earlier: set[str] = set()
    for row in rows:
        assert row["reply_to"] is None or row["reply_to"] in earlier
        earlier.add(row["id"])


def test_every_decision_has_its_labelled_span_in_its_text() -> None:
    rows = load_independent()
    for row in rows:
        span = row["decision_text"]
        assert (span is None) == (row["decision"] is None), row["id"]
        if span is not None:
            assert span and span == span.strip() and span in row["content"], row["id"]


def test_a_span_counts_only_whole_and_under_its_own_handle() -> None:
    items = {"d/m1": [["… we sold 5 ES at 6700. …", "stop to BE"]], "d/m2": [["sold 5"]]}
    assert shows_span(items, "d/m1", "we sold 5 ES at 6700.")
    assert shows_span(items, "d/m1", "6700. …\nstop to BE")  # across the item's lines
    assert not shows_span(items, "d/m2", "we sold 5 ES at 6700.")  # another message
    assert not shows_span(items, "d/m1", "we sold 5 ES at 6700. More")  # not whole


def test_events_are_native_messages_without_the_labels() -> None:
    rows = load_independent()
    events = independent_events(rows)
    batch = IngestBatch.model_validate({"events": events})  # the ingest endpoint's model
    assert len(batch.events) == 218
    assert {e["channel_id"] for e in events} == {INDEPENDENT_CHANNEL}
    assert all("decision" not in e["message"] for e in events)
    assert all("decision_text" not in e["message"] for e in events)
    replies = {
        e["message"]["id"]: e["message"]["reply_to"] for e in events if "reply_to" in e["message"]
    }
    assert replies == {r["id"]: r["reply_to"] for r in rows if r["reply_to"]}
    assert len(replies) == 54
    kinds = Counter(e["message"]["author_kind"] for e in events)
    assert kinds == {"human": 156, "app": 38, "agent": 24}


def test_a_message_counts_verbatim_only_whole_and_under_its_own_handle() -> None:
    body = (
        "[channel-awareness] kind=raw_window+digest retained=218/since-24h0m0s\n"
        "[omitted 12 messages due to max_chars, 4 of them hard events, newest first: "
        "d/m9 and 3 more; retrieve with get_channel_messages]\n"
        "[digest; channel d, trust unverified, role user, new unless marked]\n"
        "[10:00 fill m1 OMS trusted]\n"
        "> FILLED 5 ES @ 6700\n"
        "> venue CME\n"
        "[10:05 proposal m2 signals]\n"
        "> signal-1 | ES | LONG\n"
        "> [… 2 lines elided]\n"
        "[10:10 sequence m3+4 id=b1]\n"
        "> - Lena: stop to BE\n"
        "[raw recent; trust unverified, role user, new unless marked]\n"
        "[10:20 d/m5 Lena]\n"
        "> stop to BE\n"
        "> [10:21 m6 Lena]\n"
        "[10:22 e/m5 Lena]\n"
        "> stop to 6690\n"
    )
    items = served_items(body)
    assert items == {  # a note naming handles shows no item
        "d/m1": [["FILLED 5 ES @ 6700", "venue CME"]],
        "d/m2": [["signal-1 | ES | LONG", "[… 2 lines elided]"]],
        "d/m5": [["stop to BE", "[10:21 m6 Lena]"]],  # quoted content is data
        "e/m5": [["stop to 6690"]],  # a feed of several channels: whole handles
    }
    assert kept_verbatim(items, "d/m1", ["FILLED 5 ES @ 6700", "venue CME"], True)
    assert not kept_verbatim(items, "d/m1", ["venue CME", "FILLED 5 ES @ 6700"], True)
    # a short message served cut is not verbatim
    assert not kept_verbatim(
        items, "d/m2", ["signal-1 | ES | LONG", "entry 6700", "stop 6650"], True
    )
    # the same words under another message's handle, or inside a rollup, do not count
    assert not kept_verbatim(items, "d/m6", ["stop to BE"], True)
    assert not kept_verbatim(items, "d/m3", ["- Lena: stop to BE"], True)
    assert kept_verbatim(items, "d/m5", ["stop to BE"], True)
    # decision-bearing lines of a long message: each one, in any order
    assert kept_verbatim(items, "d/m1", ["venue CME", "FILLED 5 ES @ 6700"], False)
    assert not kept_verbatim(items, "d/m1", ["venue CME", "stop 6650"], False)


def test_long_messages_need_their_decision_lines_or_their_whole_text() -> None:
    rules = parse_rules(
        '[[rule]]\nname = "fill"\nevent_type = "trade_fill"\npatterns = ["^FILLED "]\n', "test"
    )
    short = "review\nFILLED 5 ES @ 6700"
    assert required_lines(short, rules, 600) == (["review", "FILLED 5 ES @ 6700"], True)
    long = "review\n" + "x" * 700 + "\nFILLED 5 ES @ 6700\nnext update later"
    assert required_lines(long, rules, 600) == (["FILLED 5 ES @ 6700"], False)
    undecided = "review\n" + "x" * 700 + "\nbought 5 ES"
    assert required_lines(undecided, rules, 600) == (undecided.split("\n"), True)


# --- the acceptance figures (through the real ingest, worker and feed) -------------------


# The issue's target is every decision recognised, every one verbatim at 12,000 and
# 8,192 and nine in ten at 6,000. Not met yet: the rules still make about 70 of the 165
# ordinary messages hard events, and those crowd the budget. A decision counts verbatim
# when its labelled span (``decision_text``, chosen by the labeller) appears whole in an
# item showing its message. These floors are the figures measured with today's rules, model
# and feed (one below, for the last digit of a score), so that neither can regress unnoticed.
RECOGNISED_FLOOR = 53
# with the decision model (trained on this desk), hard events by score per character,
# echoes after first reports, the clause selector and replies ranked by their reply rule:
# 34, 43, 51; the same with the learned ranker (ADR 0034); 35, 45, 52 with item lines
# naming messages by id (ADR 0037); 36, 46, 52 with the best clause shown among those a
# rule matched; 35, 45, 50 with the desk reading among the ranker's features (ADR 0038);
# 34, 43, 50 with the desk reading trained on forty desks (ADR 0039); 34, 44, 50 with
# authors many items name written by an alias and a flat reserve for the notes (ADR 0040);
# 33, 44, 51 with the desk reading learning Chinese, Japanese and Korean (ADR 0042); 35, 43,
# 51 with a proposal's trade line and a verdict's word kept in a cut (ADR 0048); 36, 42, 51
# with hard events someone answered ranked first (ADR 0049); 36, 41, 49 with the desk reading,
# the selector and the ranker trained on the fifty-four earlier development desks besides
# (ADR 0073: this desk weighs less among more; floors lowered, disclosed); 35, 42, 48 with
# the clause selector as monotone trees (ADR 0074: the floor at 12,000 lowered, disclosed)
VERBATIM_FLOOR = {6_000: 33, 8_192: 41, 12_000: 48}


def test_labelled_decisions_become_hard_events(report: dict[str, Any]) -> None:
    by_type = {t: f"{n['kept']}/{n['labelled']}" for t, n in report["recognised_by_type"].items()}
    assert report["decisions"] == 53
    assert report["recognised"] >= RECOGNISED_FLOOR, by_type


@pytest.mark.parametrize("max_chars", [6_000, 8_192, 12_000])
def test_decisions_served_verbatim(report: dict[str, Any], max_chars: int) -> None:
    row = _budget(report, max_chars)
    missed = [(m["id"], m["type"]) for m in row["missed"]]
    assert row["verbatim"] >= VERBATIM_FLOOR[max_chars], missed


@pytest.mark.parametrize("max_chars", [6_000, 8_192, 12_000])
def test_the_feed_keeps_its_budget_and_accounts_for_every_hard_event(
    report: dict[str, Any], max_chars: int
) -> None:
    row = _budget(report, max_chars)
    assert row["served"] <= max_chars
    assert row["within_budget"]
    assert row["hard_events_accounted"], row


# --- the held-out desks ---------------------------------------------------------------------

DATA = Path(__file__).resolve().parent.parent / "bench" / "data"
HELDOUT_DESK = DATA / "desk_heldout.jsonl"


def test_the_heldout_desk_is_a_labelled_day_with_spans() -> None:
    rows = load_independent(HELDOUT_DESK)
    assert len(rows) == 220 and sum(1 for r in rows if r["decision"]) == 60
    for row in rows:
        span = row["decision_text"]
        assert (span is None) == (row["decision"] is None) and (
            span is None or span in row["content"]
        )


def _keeps_budget_and_floors(report: dict[str, Any], floors: dict[int, int]) -> None:
    """Every budget is kept, every hard event accounted for, and the decisions shown
    verbatim at each budget reach its floor."""
    for row in report["budgets"]:
        assert row["served"] <= row["max_chars"] and row["hard_events_accounted"], row
        assert row["verbatim"] >= floors[row["max_chars"]], row["max_chars"]


# Each desk by another hand; floors one below the figures measured at the end of the
# fourth round, so that neither recognition nor density regresses: (file, messages, decisions,
# recognised floor, verbatim floor at 6,000 / 8,192 / 12,000). From the eighth round the
# desk reading and the ranker learn from desk_heldout1-20 (ADR 0038): their figures rose
# since (in-sample) and their floors were left as they were; desk_heldout21 on are not
# trained on, and their floors follow the figures measured with the desk reading. In the
# fourteenth round the desk reading, selector and ranker learned from desk_heldout21-40 too
# and a cut item kept a card's headline (ADR 0039). In the fifteenth round item lines wrote
# authors many items name by an alias (ADR 0040): every floor below is the figure measured
# once on that code (the comments give earlier figures).
MEASURED_DESKS = [
    # The fortieth round's rules (ADR 0065; the model trained again) and feed (a bare verdict
    # shown with its proposal or not at all) lowered the floors of nine desks by 1 or 2
    # decisions at a budget, none in recognition: the development 198 (6,000 and 12,000) and
    # 203 (6,000 and 8,192), and seven held out: 170, 189 and 194 at 6,000, 188 at 8,192 (by
    # 2), 201 at 6,000 (by 2) and 8,192, 202 at 8,192, and 213 at 6,000 (below its arrival
    # figure); the ninety-six held-out desks measured before went
    # from 5,899; 3,091, 3,950, 4,852 to 5,899; 3,083, 3,944, 4,855, the three of the
    # thirty-ninth round from 187; 87, 120, 155 to 187; 89, 120, 155, the three of this round
    # from 181; 90, 117, 146 on arrival to 181; 89, 117, 147. The round's development desks
    # take their final figures.
    # The thirty-ninth round's rules (ADR 0064; the model trained again) lowered the floor
    # of one desk by 1 decision at one budget, none in recognition: the held-out 176 at
    # 6,000; the ninety-three held-out desks measured before went from 5,709; 2,998, 3,827,
    # 4,700 to 5,714; 3,002, 3,830, 4,703, the three of the thirty-eighth round stayed at
    # 185; 89, 120, 149, the three of this round from 187; 86, 120, 155 on arrival to 187;
    # 87, 120, 155. The round's development desks take their final figures.
    # The thirty-eighth round's rules (ADR 0063; the model trained again) and feed (a
    # future's contract linked to its root) lowered the floors of four desks by 1 decision
    # at a budget, none in recognition: the development 192 at every budget, and three
    # held out: 166 and 176 at 12,000, 200 at 6,000 (below its arrival figure); the ninety
    # held-out desks measured before went from 5,534; 2,916, 3,723, 4,571 to 5,534; 2,916,
    # 3,725, 4,567, the three of the thirty-seventh round from 175; 80, 102, 133 to 175; 82,
    # 102, 133, the three of this round from 185; 90, 120, 149 on arrival to 185; 89, 120,
    # 149. The round's development desks take their final figures.
    # The thirty-seventh round's rules (ADR 0062; the model trained again) and feed (a
    # future's two-letter root an instrument to the stop in force) lowered the floors of
    # three desks by 1 decision at a budget, none in recognition: the development 180 and
    # 192 at 12,000 and the held-out 189 at 8,192; the seventy-eight held-out desks measured
    # before went from 4,804; 2,549, 3,249, 3,981 to 4,804; 2,547, 3,252, 3,980, the twelve
    # of the thirty-third to thirty-sixth rounds from 730; 367, 469, 589 to 730; 369, 471,
    # 591, the three of this round from 175; 79, 102, 133 on arrival to 175; 80, 102, 133.
    # The round's development desks take their final figures.
    # The thirty-sixth round's rules (ADR 0061; the model trained again) and feed (the stop
    # in force) lowered the floors of five desks by 1 decision at a budget, none in
    # recognition: the development 185 at 6,000 and 191 at 6,000 (below its arrival
    # figure), and three held out: 182 at 8,192 and 12,000, 188 and 189 at 12,000 (below
    # their arrival figures); the seventy-eight held-out desks measured before went from
    # 4,804; 2,549, 3,248, 3,977 to 4,804; 2,549, 3,249, 3,981, the nine of the thirty-third
    # to thirty-fifth rounds from 543; 263, 345, 438 to 543; 265, 343, 437, the three of this
    # round from 187; 102, 126, 154 on arrival to 187; 102, 126, 152. The round's
    # development desks take their final figures.
    # The thirty-fifth round's rules (ADR 0060; the model trained again) and feed (a long
    # decision marks its elided lines where they stood) lowered the floors of three desks by
    # 1 decision at a budget, none in recognition: 8 at 12,000 and 149 at 6,000 (trained-on
    # and development) and the held-out 183 at 6,000 and 8,192 (the ranker trained on the
    # final rules); the seventy-eight held-out desks measured before went from 4,804; 2,543,
    # 3,251, 3,979 to 4,804; 2,549, 3,248, 3,977, the six of the thirty-third and
    # thirty-fourth rounds from 363; 181, 235, 294 to 363; 182, 236, 296, the three of this
    # round from 180; 82, 110, 142 on arrival to 180; 81, 109, 142. The round's development
    # desks take their final figures.
    # The thirty-fourth round's feed (a cut says so in its text; "stop", "limit", "verdict";
    # ADR 0059) and rules (the model trained again) lowered the floors of three held-out
    # desks by 1 decision at a budget, none in recognition (102 at 6,000, 158 at 8,192 and
    # 12,000, 177 at 12,000); the round's development desks take their final figures (181 at
    # 6,000 one below its arrival figure); the seventy-eight held-out desks measured before
    # went from 4,804; 2,497, 3,207, 3,949 to 4,804; 2,543, 3,251, 3,979, the three of the
    # thirty-third round from 180; 91, 117, 145 to 180; 93, 117, 146, the three of this round
    # from 183; 88, 115, 149 on arrival to 183; 88, 118, 148.
    # The thirty-third round's rules (a go assented to, "rather than waiting" no hedge, an
    # override put on a risk measure; ADR 0058; the model trained again) and feed notes (one
    # omission line) lowered the floors of seven desks by 1 decision at a budget or in
    # recognition: four development or trained-on desks (10, 162, 167, 169) and 173 below its
    # arrival figure at 6,000, and two held out (58 in recognition, 61 to 60; 164 at 8,192);
    # the seventy-eight held-out desks measured before went from 4,805; 2,469, 3,183, 3,941 to
    # 4,804; 2,497, 3,207, 3,949, the three of the round from 180; 90, 114, 143 on arrival to
    # 180; 91, 117, 145.
    # The thirty-second round's rules (orders dealt one way and not another, guard exemptions;
    # ADR 0057; the model trained again) lowered the floors of three desks by 1 decision at a
    # budget, none in recognition: two development desks (155, 163) and one held out (147 at
    # 6,000, below its arrival figure); the seventy-five held-out desks measured before went
    # from 4,616; 2,374, 3,051, 3,773 to 4,617; 2,371, 3,050, 3,779, the three of the round
    # from 188; 98, 133, 162 on arrival to the same.
    # The thirty-first round's rules (the last review's look-alikes, verdicts split between
    # names, orders given to dealers by name; ADR 0056; the model trained again) lowered the
    # floors of two held-out desks by 1 decision at a budget, none in recognition (153 at
    # 8,192; 158 at 6,000, below its arrival figure); the seventy-two held-out desks measured
    # before went from 4,428; 2,287, 2,936, 3,630 to 4,430; 2,288, 2,936, 3,630, the three of
    # the round from 186; 87, 114, 143 on arrival to 186; 86, 115, 143.
    # The thirtieth round's ranker (five seeds' ensembles averaged; ADR 0055) and rules (the
    # twenty-ninth round's narrowed, more verdicts and desk speech; the model trained again)
    # lowered the floors of five desks by 1 decision at a budget, none in recognition: three
    # trained-on or development desks (17, 144, 150) and two held out (123, and 147 below its
    # arrival figure at 8,192); the sixty-nine held-out desks measured before went from 4,242;
    # 2,202, 2,826, 3,501 to 4,244; 2,203, 2,829, 3,498, the three of the round from 184; 82,
    # 107, 132 on arrival to 184; 84, 107, 132.
    # The twenty-ninth round's verdict reading and rules (ADR 0054; the model and its
    # ranker's trees trained again) lowered the floors of five desks by 1 decision at a
    # budget, none in recognition: four development desks (132, 138, 139, 144) and one held
    # out (102); the sixty-six held-out desks measured before went from 4,051; 2,102, 2,695,
    # 3,343 to 4,056; 2,102, 2,698, 3,343, the three of the round from 186; 100, 127, 157 on
    # arrival to 186; 100, 128, 158.
    # The twenty-eighth round's ranker (gradient-boosted trees in place of a logistic
    # regression; ADR 0053) lowered the floors of eleven desks by 1 decision at a budget (one
    # by 2), none in recognition: five trained-on or development desks (38, 47, 131, 137,
    # 139; 38 trained on) and six held out (55, 65, 102, 128, and the round's 141 and 142
    # below their arrival figures: 142 by 2 at 6,000); the sixty-three held-out desks
    # measured before went from 3,863; 1,960, 2,539, 3,144 to 3,863; 2,010, 2,578, 3,198,
    # the three of the round from 188; 90, 114, 144 on arrival to 188; 92, 117, 145.
    # The twenty-seventh round's rules (desk speech read from three development desks,
    # everyday senses left ordinary, the model trained again; ADR 0052) lowered no floor;
    # the sixty held-out desks measured before went from 3,679; 1,877, 2,429, 3,004 to
    # 3,681; 1,879, 2,430, 3,002, the three of the round from 182; 81, 109, 141 on arrival
    # to 182; 81, 109, 142.
    # The twenty-sixth round's cuts and rules (a proposal card keeps its terms and finds its
    # trade line in more forms, desk speech read from three development desks, the model
    # trained again; ADR 0051) lowered the floors of five desks by 1 or 2 decisions at a
    # budget, none in recognition: two trained-on or development desks (10, 125) and three
    # held out (102, 105, 123); the fifty-seven held-out desks measured before went from
    # 3,486; 1,766, 2,283, 2,824 to 3,487; 1,786, 2,306, 2,853, the three of the round from
    # 192; 90, 121, 149 on arrival to 192; 91, 123, 151.
    # The twenty-fifth round's cuts and rules (a card's side keeps its instrument, no second
    # unruled clause, desk speech read from three development desks, the model trained
    # again; ADR 0050) lowered the floors of twelve desks by 1 to 3 decisions at a budget,
    # none in recognition: nine trained-on or development desks (5, 7, 21, 22, 29, 35, 38, 43,
    # 47) and three held out (60, 61, 106); the fifty-four held-out desks measured before went
    # from 3,304; 1,677, 2,168, 2,674 to 3,304; 1,690, 2,180, 2,687, the three of the round
    # from 182; 75, 102, 132 on arrival to 182; 76, 103, 137.
    # The twenty-fourth round's ranking of hard events someone answered first (ADR 0049)
    # lowered the floors of twenty-eight desks by 1 to 4 decisions at a budget, none in
    # recognition: sixteen trained-on or development desks (10, 12, 18, 21, 22, 23, 25, 27,
    # 28, 33, 39, 43, 48, 51, 111, 118) and twelve held out (63, 64, 68, 73, 77, 87, 90, 94,
    # 100, 102, 106, 119); the fifty-one held-out desks measured before went from 3,115;
    # 1,566, 1,998, 2,489 to 3,115; 1,584, 2,047, 2,523, the three of the round from 189; 87,
    # 116, 143 on arrival to 189; 93, 121, 151.
    # The twenty-third round's cuts (a proposal's trade line, a verdict's word, ADR 0048)
    # lowered the floors of ten desks by 1 or 2 decisions at a budget, none in recognition:
    # five development desks (17, 32, 33, 36, 98) and five held out (57, 62, 68, 87, 101);
    # the forty-eight held-out desks measured before went from 2,931; 1,470, 1,871, 2,321 to
    # 2,931; 1,483, 1,890, 2,355.
    # The twenty-second round's rules (ADR 0047) lowered one floor, desk_heldout102's (held
    # out, Italian) by 1 at 8,192; the forty-five held-out desks measured before went from
    # 2,757; 1,381, 1,767, 2,184 to 2,758; 1,381, 1,767, 2,187.
    # The twenty-first round's rules (Chinese, Korean and Italian, ADRs 0045 and 0046) and
    # model lowered the floors of three development desks by 1 at a budget (desk_heldout51
    # and 97 at 6,000, 98 at 8,192) and raised the recognition floors of four whose misses
    # became rules (91, 92, 97, 99); no held-out floor went down. The forty held-out desks
    # measured before (54 to 90, 93 to 95) went from 2,465; 1,260, 1,609, 1,981 to 2,466;
    # 1,260, 1,612, 1,985.
    # The twentieth round's model (the clause selector and the ranker weigh text read as
    # runs apart and learn from three development desks in those languages, ADR 0044)
    # lowered 23 floors below by 1 or 2 decisions at a budget, none in recognition: sixteen
    # development desks of 8 to 49 and seven held-out desks. The thirty-seven held-out desks
    # 54 to 90 went from 2,273; 1,157, 1,479, 1,838 to 2,273; 1,180, 1,503, 1,851.
    # The nineteenth round's model (text holding runs read by a classifier of its own, the
    # vocabulary's weights counted on the decision model's own lines, ADR 0043) lowered the
    # floors of 22 desks below by 1 to 4 at a budget or in recognition: nine development
    # desks of 2 to 40, by 1 (desk_heldout37: 60 of 61 recognised); desk_heldout66's floors
    # 61 → 59 recognised, 46 → 42 at 12,000; desk_heldout79's 42 → 38 at 8,192 while it
    # recognises 64 where it recognised 54 (its recognition floor, and those of
    # desk_heldout75, 85 and 86, which rose by 3 to 19, raised to the new figures). The
    # thirty-four held-out desks 54 to 87 went
    # from 2,053; 1,092, 1,397, 1,700 to 2,088; 1,092, 1,391, 1,716.
    # The floors below are each desk's figures when measured, lowered where the eighteenth
    # round's model (its vocabulary and desk reading learning the Chinese, Japanese and
    # Korean development sets, ADR 0042) reads a desk lower: 18 held-out desks (and 22 of
    # the development desks above them) moved down by 1 to 3
    # at a budget or in recognition while all thirty-one (54 to 84) rose from 1,888; 1,006,
    # 1,293, 1,581 to 1,891; 1,018, 1,305, 1,583.
    # Each floor is the figure on the eleventh round's final detection (three fell by one
    # decision at one budget against the tenth round's: desk_heldout40 at 6,000, 41 at
    # 12,000, 46 at 6,000 — the cut and the ranking moved; the round's other changes raised
    # forty-three floors).
    # Measured once when the rules were final (52 of 60 recognised; 18, 25 and 38
    # verbatim); never trained on. With the decision model: 59; 18, 28, 39; with the
    # second round (score per character, echoes, three more desks trained on): 24, 33, 41;
    # with the third: 24, 34, 45; with the fourth (the learned ranker): 27, 34, 46.
    # With item lines naming messages by id (sixth round): 59; 30, 36, 46.
    # With the best clause shown among those a rule matched (seventh round): 59; 29, 36, 46.
    # With the card's headline kept beside a rule's clause (seventh round): 59; 29, 36, 47.
    ("desk_heldout.jsonl", 220, 60, 59, (33, 41, 51)),
    # Measured on the rules with the decision model, never trained on: 58 of 61 recognised
    # (the rules alone: 53); 18, 28, 37 (the rules alone: 18, 25, 37). Since then a
    # development desk (its misses were read; never trained on): 61 recognised; 31, 38, 44
    # after the second round, 30, 43, 50 after the third; 30, 41, 49 after the fourth (its
    # guard fixes and the retrained model cost it a decision at 8,192 and one at 12,000);
    # with the learned ranker: 35, 42, 52.
    # With item lines naming messages by id (sixth round): 61; 36, 44, 52.
    # With the best clause shown among those a rule matched (seventh round): 61; 36, 44, 53.
    ("desk_heldout2.jsonl", 222, 61, 61, (39, 50, 57)),
    # Written for the second round and held out: never read line by line, never trained on
    # or tuned against. On arrival (score per character and echoes in, the model not yet
    # trained on the other three new desks): 58 of 62 recognised, 95 ordinary messages made
    # hard events; 24, 33, 40. After the round (the model trained on them and the
    # short-chatter set, threshold 0.45 by leave-one-writer-out): 59, 81; 28, 34, 43. After
    # the third round (the clause selector, replies ranked by their reply rule, three more
    # desks trained on): 59, 79; 32, 43, 48. After the fourth (guard words beside a change):
    # 61, 79; 31, 44, 52; with the learned ranker, 62; 36, 44, 53.
    # With item lines naming messages by id (sixth round): 62; 38, 45, 55.
    # With the best clause shown among those a rule matched (seventh round): 62; 39, 46, 56.
    # With the card's headline kept beside a rule's clause (seventh round): 62; 39, 46, 55.
    ("desk_heldout3.jsonl", 229, 62, 62, (38, 50, 61)),
    # Written after the second round's last change and measured once, on its final code:
    # 63 of 63 recognised, 78 ordinary messages made hard events; 35, 45, 52. After the
    # third round: 63, 76; 35, 46, 56. After the fourth (the learned ranker): 34, 46, 55.
    # With item lines naming messages by id (sixth round): 63; 38, 48, 56.
    # With the best clause shown among those a rule matched (seventh round): 63; 39, 49, 57.
    ("desk_heldout4.jsonl", 228, 63, 63, (43, 54, 62)),
    # Written for the third round, never read line by line, never trained or tuned on, and
    # measured once before the round's review fixes: 62 of 63 recognised, 69 ordinary
    # messages made hard events; 24, 31, 44 (the code at the start of the round, in the
    # same sitting: 61, 71; 22, 31, 41). The same after the fixes. Read in the fourth round
    # (its misses), since then a development desk: 63, 69; 24, 33, 45; with the learned
    # ranker 26, 34, 46.
    # With item lines naming messages by id (sixth round): 63; 29, 37, 48.
    # With the best clause shown among those a rule matched (seventh round): 63; 30, 38, 49.
    # With the card's headline kept beside a rule's clause (seventh round): 63; 30, 39, 50.
    ("desk_heldout5.jsonl", 222, 63, 63, (30, 41, 53)),
    # Written after the third round's last change, never read line by line, never trained
    # or tuned on, measured once on the final code: 59 of 62 recognised, 72 ordinary
    # messages made hard events; 32, 39, 49 (the code at the start of the round, in the
    # same sitting: 60, 72; 28, 34, 47). Read in the fourth round (its misses), since then a
    # development desk: 62, 71; 35, 42, 49; with the learned ranker 33, 41, 49.
    # With item lines naming messages by id (sixth round): 62; 33, 44, 52.
    # With sizes in a currency ("closed the $40m short") and the model trained again on
    # those rules: 62; 33, 41, 53 (its ranks moved; none of its decisions is such a size).
    # With the best clause shown among those a rule matched (seventh round): 62; 34, 44, 52.
    # With the card's headline kept beside a rule's clause (seventh round): 62; 34, 44, 54.
    ("desk_heldout6.jsonl", 237, 62, 62, (39, 48, 57)),
    # Written for the fourth round, never read line by line, never trained or tuned on,
    # measured once (on the round's first rule changes and on the code before the round,
    # the same): 57 of 62 recognised, 71 ordinary messages made hard events; 29, 39, 48.
    # Then its misses were read: a development desk; with the learned ranker 61; 32, 40, 50.
    # With item lines naming messages by id (sixth round): 61; 34, 42, 52.
    # With the best clause shown among those a rule matched (seventh round): 61; 32, 40, 49.
    # With the card's headline kept beside a rule's clause (seventh round): 61; 34, 42, 51.
    ("desk_heldout7.jsonl", 224, 62, 61, (37, 48, 55)),
    # Likewise: measured once, 59 of 61 recognised, 76; 32, 38, 52. Then read; with the
    # learned ranker 61; 33, 43, 54.
    # With item lines naming messages by id (sixth round): 61; 35, 45, 56.
    # With the best clause shown among those a rule matched (seventh round): 61; 36, 45, 56.
    ("desk_heldout8.jsonl", 228, 61, 61, (41, 51, 59)),
    # Written for the fourth round after desk_heldout7 and 8 were read, never read line by
    # line, never trained or tuned on; each measured once on the round's final code (the
    # code before the round in the same sitting in brackets): 62 of 62 recognised, 65
    # ordinary messages made hard events; 28, 38, 49 (62; 28, 36, 48). A shorter day
    # (54,664 characters, many short messages).
    # Read in the fifth round (it had no miss), since then a development desk.
    # With item lines naming messages by id (sixth round): 62; 31, 39, 52.
    # With the best clause shown among those a rule matched (seventh round): 62; 32, 39, 53.
    # With the card's headline kept beside a rule's clause (seventh round): 62; 33, 40, 53.
    ("desk_heldout9.jsonl", 210, 62, 62, (38, 49, 60)),
    # 57 of 62, 72; 30, 38, 48 (57; 30, 36, 47). Read in the fifth round (its five misses
    # written as shapes), since then a development desk: 62; 31, 39, 49.
    # With item lines naming messages by id (sixth round): 62; 33, 41, 52.
    # With the best clause shown among those a rule matched (seventh round): 62; 33, 42, 51.
    ("desk_heldout10.jsonl", 225, 62, 62, (38, 48, 57)),
    # 57 of 61, 82; 26, 33, 40 (56; 28, 35, 42); after the review's fixes 26, 33, 39. Read
    # in the fifth round, since then a development desk: 61, 82; 28, 37, 42.
    # With item lines naming messages by id (sixth round): 61; 30, 37, 45.
    # With the best clause shown among those a rule matched (seventh round): 61; 30, 38, 46.
    # With the card's headline kept beside a rule's clause (seventh round): 61; 30, 37, 46.
    ("desk_heldout11.jsonl", 226, 61, 61, (37, 48, 55)),
    # Written for the fifth round by three more hands, never read line by line, never
    # trained or tuned on; each measured once on the round's final code (the code before
    # the round in the same sitting in brackets): 62 of 64 recognised, 53 ordinary messages
    # made hard events; 31, 38, 49 (61, 52; 31, 37, 49). Its writer's day ran 8 minutes
    # over 24 hours: its last four messages (after 21:00Z, none a decision, none answered)
    # were left out before it was measured. Read at the end of the fifth round (its two
    # misses written as shapes), since then a development desk: 64; 32, 40, 50.
    # With item lines naming messages by id (sixth round): 64; 34, 41, 52.
    # With the best clause shown among those a rule matched (seventh round): 64; 35, 43, 55.
    # With the card's headline kept beside a rule's clause (seventh round): 64; 34, 42, 55.
    ("desk_heldout12.jsonl", 229, 64, 64, (40, 49, 59)),
    # 60 of 63, 49; 33, 40, 48 (59, 49; 33, 40, 49). Its last eight messages (after 06:00Z,
    # none a decision, none answered) left out likewise.
    # Read likewise: 63; 33, 42, 51.
    # With item lines naming messages by id (sixth round): 63; 36, 44, 52.
    # With the best clause shown among those a rule matched (seventh round): 63; 36, 46, 54.
    ("desk_heldout13.jsonl", 226, 63, 63, (41, 52, 58)),
    # 61 of 63, 62; 30, 38, 46 (61, 62; 30, 37, 46). The round's review fixes came after
    # the three measurements; re-run after them, the three desks measured the same. Read
    # likewise: 63; 30, 38, 48 (29 at 6,000 once the route lexicon named every dealer).
    # With item lines naming messages by id (sixth round): 63; 32, 40, 49.
    # With the best clause shown among those a rule matched (seventh round): 63; 33, 41, 50.
    ("desk_heldout14.jsonl", 231, 63, 63, (42, 50, 59)),
    # Written for the end of the fifth round by three more hands, after desk_heldout12-14
    # were read; never read line by line, never trained or tuned on; each measured once on
    # the round's final code, and in the same sitting on the code before the last changes
    # and on the code before the round (in brackets, where it differs): 62 of 64
    # recognised, 70 ordinary messages made hard events; 30, 36, 49.
    # With item lines naming messages by id (sixth round): 62; 32, 38, 51.
    # With the best clause shown among those a rule matched (seventh round): 62; 34, 40, 53.
    ("desk_heldout15.jsonl", 233, 64, 64, (45, 55, 62)),
    # 63 of 64, 56; 24, 30, 43 (the same on all three).
    # With item lines naming messages by id (sixth round): 63; 24, 32, 44.
    # With the best clause shown among those a rule matched (seventh round): 63; 26, 33, 46.
    ("desk_heldout16.jsonl", 233, 64, 63, (38, 48, 58)),
    # 64 of 64, 67; 34, 40, 52 (before the round: 33, 42, 52).
    # With item lines naming messages by id (sixth round): 64; 37, 45, 54.
    # With the best clause shown among those a rule matched (seventh round): 64; 37, 45, 53.
    ("desk_heldout17.jsonl", 226, 64, 64, (41, 52, 59)),
    # Written for the sixth round by three more hands, never read line by line, never
    # trained or tuned on; each measured once on the round's final code (the code before
    # the round in the same sitting in brackets): 62 of 65 recognised, 67 ordinary messages
    # made hard events; 31, 40, 50 (62, 67; 28, 38, 47).
    # Then its three misses read: two were a size in a currency ("Closed the $40m USD/CNH
    # 1m short", "Dealt $15m at 87.21 with SCB") and became shapes: 64; 32, 41, 51; the
    # third a block lifted ("Lifting the new-entry block on Asia FX"), a shape too: 65.
    # With the best clause shown among those a rule matched (seventh round): 65; 32, 41, 52.
    # Twelfth round (the model retrained with the round's words; the desk's readings
    # unchanged): 65; 42, 52, 59 (were 65; 42, 53, 59).
    ("desk_heldout18.jsonl", 234, 65, 65, (42, 52, 61)),
    # 55 of 60, 53; 31, 38, 46 (55, 53; 30, 36, 44).
    # Its miss "RESUME | … action=NEW_ORDERS_ENABLED" (a halt lifted) read at the round's
    # end with desk_heldout18's lifted block: 56.
    # With the best clause shown among those a rule matched (seventh round): 56; 32, 38, 47.
    # Its miss "Cerrada la protección … estamos planos en Crossover" a shape in the seventh
    # round (flat in Spanish, read with desk_heldout21-23's misses): 57.
    # With the card's headline kept beside a rule's clause (seventh round): 57; 31, 38, 49.
    ("desk_heldout19.jsonl", 229, 60, 59, (41, 51, 56)),
    # 61 of 64, 69; 30, 40, 53 (61, 69; 29, 36, 52). Its writer's day began 12 minutes
    # before the 24 hours ending on the whole hour after its last message: its first four
    # messages (before 06:00Z, none a decision, none answered) were left out before it was
    # measured.
    # With the best clause shown among those a rule matched (seventh round): 61; 30, 41, 53.
    ("desk_heldout20.jsonl", 229, 64, 63, (42, 53, 55)),
    # Written for the seventh round by three more hands, never read line by line, never
    # trained or tuned on; each measured once on the round's first change (the best clause
    # among those a rule matched), the code before the round in the same sitting in
    # brackets: 62 of 64 recognised, 60 ordinary messages made hard events; 34, 44, 54 (62,
    # 60; 33, 43, 53). Its writer's day ran 18 minutes over the 24 hours ending on the
    # whole hour after its last message, its third message a decision: every time was
    # moved 18 minutes later before it was measured (no text changed).
    # Then its two misses read: "Cierro todo: recompré las 250 harina, quedo plana" a shape
    # (flat in Spanish): 63; 34, 44, 55.
    # With the card's headline kept beside a rule's clause (seventh round): 63; 35, 45, 55.
    # With the desk reading among the ranker's features (eighth round): 63; 36, 46, 57.
    ("desk_heldout21.jsonl", 235, 64, 63, (42, 55, 61)),
    # 60 of 63, 60; 30, 40, 50 (60, 60; 30, 40, 51). Its first three messages (before
    # 06:00Z the day before, none a decision, none answered) were left out before it was
    # measured.
    # Then its three misses read: a halted auto-hedger's record and the dealer a trade is
    # done with ("je le fais avec BNP Paribas, pas JPM") became shapes: 62; 30, 40, 51.
    # With the card's headline kept beside a rule's clause (seventh round): 62; 31, 39, 53.
    # With the desk reading among the ranker's features (eighth round): 62; 35, 44, 56.
    ("desk_heldout22.jsonl", 229, 63, 62, (38, 50, 61)),
    # 61 of 63, 64; 35, 48, 53 (61, 64; 35, 47, 52).
    # Then its two misses read: a status record's "entries UNBLOCKED" and an argument
    # "vom Tisch" became shapes: 63; 35, 48, 55. A review then found the status shape made
    # every periodic snapshot that says "entries unblocked" a decision; it was taken back:
    # 62; 35, 48, 53.
    # With the card's headline kept beside a rule's clause (seventh round): 62; 35, 48, 54.
    # With the desk reading among the ranker's features (eighth round): 62; 38, 48, 55.
    # Twelfth round (the model retrained; one message read with another type):
    # 62; 39, 48, 56 (were 62; 38, 48, 56).
    ("desk_heldout23.jsonl", 229, 63, 62, (40, 52, 59)),
    # Written at the end of the seventh round by three more hands, after desk_heldout21-23
    # were read; never read line by line, never trained or tuned on; each measured once on
    # the round's final detection (c6c8485), the code before the round in the same sitting
    # in brackets: 59 of 63 recognised, 53 ordinary messages made hard events; 30, 36, 49
    # (59, 53; 30, 35, 47).
    # Then its four misses read: "110 CGBU5 rachetés", "cut 300kb of the Jul diff" and a
    # record's NEW_ENTRIES_BLOCKED became shapes (the venue of "doing the WCS on ICE" did
    # not: "doing the review on screen" reads the same): 62; 31, 36, 50.
    # With the card's headline kept beside a rule's clause (seventh round): 62; 31, 36, 50.
    # With the desk reading among the ranker's features (eighth round): 62; 32, 42, 53.
    ("desk_heldout24.jsonl", 233, 63, 62, (39, 50, 57)),
    # 60 of 63, 66; 30, 34, 46 (60, 66; 29, 34, 44).
    # Then its three misses read: "Ma thèse … n'est plus valable" and "J'ai racheté 20k oz
    # …, stop inchangé" became shapes ("XAG über Nacht max. 10k oz" did not): 62; 31, 36, 46.
    # With the card's headline kept beside a rule's clause (seventh round): 62; 31, 35, 46.
    # With the desk reading among the ranker's features (eighth round): 62; 31, 40, 51.
    ("desk_heldout25.jsonl", 233, 63, 63, (42, 51, 61)),
    # 60 of 60, 52; 34, 40, 52 (60, 52; 33, 40, 52). Its writer's day ran 22 minutes over
    # the 24 hours ending on the whole hour after its last message, its fifth message a
    # decision: every time was moved 22 minutes later before it was measured.
    # With the card's headline kept beside a rule's clause (seventh round): 60; 34, 42, 52.
    # With the desk reading among the ranker's features (eighth round): 60; 34, 42, 53.
    ("desk_heldout26.jsonl", 230, 60, 60, (39, 50, 56)),
    # Written at the end of the seventh round by three more hands, after desk_heldout24-26
    # were read; never read line by line, never trained or tuned on; each measured once on
    # the round's final code (3925900), the code before the round in the same sitting in
    # brackets: 61 of 65 recognised, 56 ordinary messages made hard events; 39, 46, 54
    # (61, 56; 39, 46, 53).
    # Its misses read at the round's end: "Stop del resto: lo subo a -1.05" (a stop moved in
    # the present, Spanish) became a shape: 62; 39, 46, 55.
    # With the desk reading among the ranker's features (eighth round): 62; 37, 49, 59.
    ("desk_heldout27.jsonl", 232, 65, 64, (44, 57, 63)),
    # 57 of 61, 67; 33, 41, 49 (57, 67; 32, 40, 49).
    # Read likewise: "muevo el objetivo del asw a +34" a shape: 58; 33, 41, 50.
    # With the desk reading among the ranker's features (eighth round): 58; 40, 46, 51.
    ("desk_heldout28.jsonl", 234, 61, 60, (44, 56, 58)),
    # 61 of 64, 58; 34, 43, 58 (61, 58; 32, 42, 54).
    # Read likewise: "Ich genehmige eine befristete Überschreitung" a shape: 62; 34, 43, 58.
    # With the desk reading among the ranker's features (eighth round): 62; 35, 46, 54.
    # Twelfth round: ties between equally dense hard events broken by the message (the
    # newer first), not by the block id: a route by reply and a proposal of the same size
    # trade places in the restoration: 64; 34, 46, 54.
    ("desk_heldout29.jsonl", 234, 64, 64, (41, 52, 62)),
    # Written for the eighth round by three more hands (asked for at its start), never read
    # line by line, never trained or tuned on; each measured once on the round's final
    # code, the code before the round (in brackets) measured on arrival:
    # 58 of 62 recognised, 67 ordinary messages made hard events; 35, 43, 52 (58, 67; 35,
    # 42, 52). Then its misses read: "last 20" before lots left the standing-state guard
    # (a proposal and a flattened book): 60; 36, 45, 54. A market's lunch a time of day
    # ("too thin at London lunch"): 61. An order said to be in at its price ("100 ymm5 bid
    # at 96.15 is in, GTC", ninth round): 62; 36, 45, 55.
    ("desk_heldout30.jsonl", 233, 62, 62, (42, 51, 57)),
    # 60 of 64, 58; 35, 44, 47 (60, 58; 28, 39, 49). Its writer's day began 8 minutes
    # before the 24 hours ending on the whole hour after its last message: its first three
    # messages (none a decision, none answered) were left out before it was measured.
    # Its misses read (ninth round): "full stop" no longer a guard, "nobody opens a new
    # nickel short" a block, a cap without a verb ("max net 60 lots GC until 13:00Z"), an
    # Italian route and broker's confirmation: 64; 36, 46, 49.
    ("desk_heldout31.jsonl", 231, 64, 64, (41, 52, 61)),
    # 64 of 64, 83; 35, 46, 58 (64, 84; 32, 45, 55). Its first message (2 minutes early,
    # not a decision, not answered) left out likewise.
    ("desk_heldout32.jsonl", 231, 64, 64, (36, 50, 60)),
    # Written for the ninth round by three more hands (asked for at its start), never read
    # line by line, never trained on; each measured on arrival on the code before the round
    # (in brackets) and once on the round's detection at 4a07b56, before its misses were
    # read: 54 of 65 recognised, 60 ordinary messages made hard events; 34, 42, 50 (54, 60;
    # 34, 42, 50). Its misses read: Swedish and Norwegian desk words: 63; 37, 44, 55.
    ("desk_heldout33.jsonl", 233, 65, 63, (42, 53, 59)),
    # 53 of 61, 62; 31, 39, 46 (the same). Its eight misses are in Japanese: none a shape.
    ("desk_heldout34.jsonl", 231, 61, 61, (40, 52, 57)),
    # 54 of 61, 49; 35, 44, 48 (54, 49; 35, 43, 49). Its writer's day began 8 minutes
    # before the 24 hours: its first message (not a decision, not answered) was left out.
    # Its misses read: Portuguese desk words, a stop moved by reply, a view scrapped: 60;
    # 35, 43, 52.
    ("desk_heldout35.jsonl", 232, 61, 60, (42, 52, 55)),
    # Written at the end of the ninth round and for the tenth (asked for at its start) by
    # six more hands, never read line by line, never trained on; each measured on arrival
    # (in brackets: the ninth round's final detection for the first three, the code before
    # the tenth round for the others) and once on the tenth round's detection at 7e19d61,
    # before its misses were read. Then its misses read (the round's shapes); the floors
    # are the figures after that.
    # 61 of 64, 56; 32, 41, 51 (60, 56; 33, 42, 52). Its day began 12 minutes early, a
    # decision among the early messages: every time moved 12 minutes later.
    ("desk_heldout36.jsonl", 234, 64, 64, (40, 51, 62)),
    # 57 of 61, 51; 39, 48, 53 (52, 52; 39, 47, 49).
    ("desk_heldout37.jsonl", 230, 61, 60, (45, 55, 57)),
    # 62 of 64, 77; 39, 48, 55 (57, 75; 39, 49, 54).
    ("desk_heldout38.jsonl", 233, 64, 64, (46, 58, 61)),
    # 59 of 63, 58; 35, 45, 55 (the same).
    # Twelfth round (the model retrained with the round's words; the desk's readings
    # unchanged): 63; 37, 46, 57 (were 63; 37, 46, 58).
    ("desk_heldout39.jsonl", 234, 63, 63, (38, 49, 60)),
    # 60 of 64, 55; 34, 44, 53 (57, 53; 33, 42, 51). Its day began 12 minutes early (four
    # messages, none a decision, one answered): every time moved 12 minutes later.
    # Twelfth round (the model retrained with the round's words; the desk's readings
    # unchanged): 64; 35, 45, 55 (were 64; 34, 45, 55).
    ("desk_heldout40.jsonl", 234, 64, 64, (41, 50, 60)),
    # 58 of 64, 55; 36, 41, 51 (58, 56; 36, 41, 51).
    ("desk_heldout41.jsonl", 234, 64, 64, (39, 47, 56)),
    # Three more, asked for after those were measured, each measured once on the round's
    # detection at b337cdc before its misses were read (in brackets: the code before the
    # round, in the same sitting); then read (Korean desk words among the shapes):
    # 57 of 64, 58; 40, 48, 55 (57, 58; 40, 48, 56).
    ("desk_heldout42.jsonl", 231, 64, 64, (42, 52, 63)),
    # 60 of 64, 51; 37, 45, 53 (the same).
    ("desk_heldout43.jsonl", 233, 64, 64, (37, 47, 56)),
    # 61 of 63, 57; 38, 45, 56 (61, 57; 38, 46, 56).
    ("desk_heldout44.jsonl", 232, 63, 63, (40, 48, 58)),
    # Three more, asked for after those were measured, each measured once on the round's
    # detection at 2543c00, then read:
    # 61 of 62, 52; 34, 43, 51 (61, 52; 34, 42, 50).
    ("desk_heldout45.jsonl", 232, 62, 62, (38, 46, 55)),
    # 57 of 58, 72; 29, 40, 51 (58, 78; 29, 40, 51).
    ("desk_heldout46.jsonl", 234, 58, 58, (31, 42, 52)),
    # 60 of 63, 58; 37, 44, 53 (56, 58; 36, 44, 51). Its first two messages (up to 8
    # minutes early, none a decision, none answered) were left out before measuring.
    ("desk_heldout47.jsonl", 232, 63, 63, (39, 49, 58)),
    # Held out: three more, asked for at the end of the tenth round, measured once on its
    # final code (0c79e27) and never read; the code before the round, in the same sitting,
    # in brackets: 56 of 64, 59; 33, 43, 50 (56, 59; 33, 42, 50).
    ("desk_heldout48.jsonl", 230, 64, 63, (34, 45, 56)),
    # 59 of 61, 50; 35, 43, 56 (the same).
    ("desk_heldout49.jsonl", 234, 61, 60, (37, 48, 58)),
    # 62 of 63, 62; 33, 39, 51 (62, 63; 33, 40, 51). Its first three messages (up to 12
    # minutes early, none a decision, none answered) were left out before measuring.
    ("desk_heldout50.jsonl", 231, 63, 62, (34, 42, 55)),
    # Read in the eleventh round (development desks since). Desk words for Hindi and Hebrew,
    # written before they were read, took 48 to 61 of 64 and 49 to 60 of 61; after reading,
    # the floors above.
    # Written for the eleventh round by three more hands (asked for at its start), measured
    # once on its detection before their misses were read (5892d60's rules before the
    # trio's shapes), the code before the round on arrival in brackets: 58 of 63, 65; 34,
    # 46, 50 (54, 63; 34, 44, 50). Its first two messages (up to 8 minutes early, none a
    # decision, none answered) were left out before measuring. Then read.
    ("desk_heldout51.jsonl", 231, 63, 63, (38, 48, 58)),
    # 64 of 64, 61; 40, 49, 56 (64, 61; 40, 49, 56). Then read.
    ("desk_heldout52.jsonl", 231, 64, 63, (42, 52, 60)),
    # 60 of 62, 54; 30, 40, 50 (60, 54; 30, 41, 51). Then read.
    ("desk_heldout53.jsonl", 234, 62, 61, (32, 43, 52)),
    # Held out: three more, asked for at the round's start, measured once on its final
    # code (5892d60) and never read; on arrival, the code before the round, in brackets:
    # 60 of 61, 64; 36, 45, 54 (55, 62; 36, 44, 50).
    ("desk_heldout54.jsonl", 231, 61, 61, (35, 46, 53)),
    # 60 of 64, 54; 39, 50, 57 (60, 54; 39, 50, 57).
    ("desk_heldout55.jsonl", 232, 64, 60, (42, 51, 57)),
    # 54 of 59, 47; 34, 42, 49 (39, 43; 29, 37, 37).
    ("desk_heldout56.jsonl", 235, 59, 53, (35, 45, 53)),
    # Held out: five more by five hands (asked for at the twelfth round's start: Hungarian
    # and Romanian; Finnish and Estonian; Taglish and Thai; Swahili, Nigerian Pidgin and
    # Afrikaans; English only), never trained or tuned on; measured once on the round's
    # detection with all its words (recognised, look-alikes kept; verbatim at 6,000,
    # 8,192, 12,000), before a review dropped words that are ordinary in other languages;
    # a rule-level diff then printed 45 of their messages, cut to 160 characters (nothing
    # was changed for them); the floors were the final code's figures until the
    # fourteenth round:
    # 60 of 64, 81; 19, 29, 38 (on arrival, a8bd2cc: 53, 80; 19, 25, 32);
    # final code: 60, 80; 19, 29, 36.
    ("desk_heldout57.jsonl", 238, 64, 60, (22, 29, 40)),
    # 60 of 63, 83; 28, 39, 50 (on arrival, a8bd2cc: 52, 80; 25, 36, 44);
    # final code: 61, 82; 30, 40, 51.
    ("desk_heldout58.jsonl", 238, 63, 60, (30, 39, 52)),
    # 55 of 65, 91; 28, 33, 39 (on arrival, a8bd2cc: 55, 94; 28, 32, 39);
    # final code: 55, 91; 28, 33, 39.
    ("desk_heldout59.jsonl", 240, 65, 55, (27, 35, 42)),
    # 62 of 64, 80; 30, 35, 44 (on arrival, a8bd2cc: 60, 79; 29, 36, 44);
    # final code: 62, 80; 30, 35, 44.
    ("desk_heldout60.jsonl", 239, 64, 62, (33, 39, 46)),
    # 64 of 64, 78; 35, 44, 52 (on arrival, a8bd2cc: 64, 78; 35, 44, 52);
    # final code: 64, 78; 35, 44, 52. The fifty-second round's final code: 54 at 12,000
    # (its floor lowered by 1, measured once, never read; ADR 0077).
    ("desk_heldout61.jsonl", 240, 64, 64, (35, 44, 54)),
    # Held out: five more by five hands (asked for at the thirteenth round's start: a
    # London/Houston energy and agricultural desk, English; a Frankfurt/Paris/Madrid rates
    # and credit desk, some German, French and Spanish; a crypto desk, English; a New
    # York/Chicago equity derivatives desk, English; a Singapore/Tokyo/Mumbai Asian FX and
    # rates desk, some Japanese, Hinglish and Chinese), never read, never trained or tuned
    # on; measured once on the round's final detection (740477c, whose readings are
    # 2a0440c's), the floors were those figures until the fourteenth round:
    # 61 of 65, 80; 30, 36, 45.
    ("desk_heldout62.jsonl", 240, 65, 61, (30, 38, 48)),
    # 62 of 64, 75; 29, 35, 47.
    ("desk_heldout63.jsonl", 238, 64, 62, (28, 34, 42)),
    # 64 of 65, 90; 28, 35, 45.
    ("desk_heldout64.jsonl", 239, 65, 64, (27, 35, 46)),
    # 64 of 65, 96; 29, 40, 48.
    ("desk_heldout65.jsonl", 238, 65, 64, (29, 41, 49)),
    # 61 of 65, 104; 28, 36, 43.
    ("desk_heldout66.jsonl", 240, 65, 59, (26, 36, 42)),
    # Held out: three more by three hands (asked for at the thirteenth round's end: a
    # Warsaw/Prague/London CEE desk, some Polish and Czech; a São Paulo/Mexico City/New
    # York Latin American desk, some Brazilian Portuguese and Mexican Spanish; a
    # Seoul/Taipei/Hong Kong North Asian desk, some Korean and Traditional Chinese), never
    # read, never trained or tuned on; measured once on arrival at the fourteenth round's
    # start (cd5974e), the floors were those figures until the round's change:
    # 61 of 65, 74; 31, 40, 49.
    ("desk_heldout67.jsonl", 239, 65, 61, (32, 38, 49)),
    # 61 of 65, 77; 32, 38, 45.
    ("desk_heldout68.jsonl", 240, 65, 61, (30, 38, 47)),
    # 63 of 65, 90; 28, 35, 44.
    ("desk_heldout69.jsonl", 238, 65, 63, (26, 36, 46)),
    # Held out: three more by three hands (asked for at the fifteenth round's start: a
    # Sydney/Auckland/Jakarta desk, Australian and New Zealand slang, some Indonesian; a
    # Zurich/Geneva Swiss franc desk, some Swiss German and French; a Dubai/Riyadh/Istanbul
    # desk, some Arabic and Turkish), never read, never trained or tuned on; measured once
    # on arrival on the fourteenth round's code (d20c685): the floors are those figures.
    ("desk_heldout70.jsonl", 237, 65, 61, (34, 46, 55)),
    ("desk_heldout71.jsonl", 239, 65, 60, (32, 43, 55)),
    ("desk_heldout72.jsonl", 238, 66, 63, (40, 46, 57)),
    # Held out: three more by three hands, asked for during the fifteenth round (a
    # Lisbon/Madrid/Buenos Aires desk, some European Portuguese and Rioplatense Spanish; a
    # Chicago/New York equities and index-options desk, English, terse, emoji and bots; a
    # Tokyo/Osaka rates and yen desk, much of it in Japanese), never read, never trained or
    # tuned on; measured once on arrival on the round's code (d9cedc5): the floors are those
    # figures (on the code before the round, d20c685, the same sitting: 175 of 193; 99, 124,
    # 153 in all).
    ("desk_heldout73.jsonl", 236, 65, 61, (35, 44, 53)),
    ("desk_heldout74.jsonl", 239, 64, 64, (36, 48, 58)),
    # measured again on the sixteenth round's Japanese rules (written against two Japanese
    # phrasing sets, not this desk): 50 → 55 of 64; 26, 33, 42 → 27, 35, 45
    ("desk_heldout75.jsonl", 239, 64, 60, (25, 35, 44)),
    # Held out: three more by three hands that read nothing of the project (Mumbai/Singapore
    # Indian markets with Hinglish and Hindi; a round-the-clock crypto market-making desk;
    # Frankfurt/Milan/Paris euro rates and credit in English, German, Italian and French),
    # asked for at the sixteenth round's start and measured once on arrival on the code
    # before the round (8e40674): 186 of 196; 106, 137, 162 in all. Never read.
    ("desk_heldout76.jsonl", 239, 65, 62, (34, 44, 54)),
    ("desk_heldout77.jsonl", 238, 66, 63, (36, 46, 52)),
    ("desk_heldout78.jsonl", 236, 65, 61, (33, 43, 52)),
    # Held out: three more by three hands that read nothing of the project (a Tokyo
    # equities desk, most of it in Japanese; a Nordic desk in Swedish, Norwegian, Danish and
    # English; a London metals and energy desk, English), asked for near the sixteenth
    # round's end and measured once on arrival on its final code (c9a0559), and in the same
    # sitting on the code before the round (8e40674, in brackets): 179 of 195; 94, 131, 160
    # (176; 92, 124, 152). Never read.
    ("desk_heldout79.jsonl", 240, 66, 64, (28, 38, 49)),
    ("desk_heldout80.jsonl", 235, 64, 58, (32, 39, 49)),
    ("desk_heldout81.jsonl", 239, 65, 64, (33, 47, 60)),
    # Held out: three more by three hands that read nothing of the project (a Hong Kong/
    # Seoul desk in English, Cantonese, Mandarin and Korean; a Chicago agricultural desk in
    # English, Brazilian Portuguese and Argentine Spanish; a Dubai/Riyadh desk in English
    # and Arabic), asked for at the seventeenth round's start and measured once on arrival
    # on the code before it (d821896; the round changed no reading): 185 of 196; 95, 125,
    # 152. Never read.
    ("desk_heldout82.jsonl", 236, 65, 62, (27, 37, 45)),
    ("desk_heldout83.jsonl", 235, 66, 64, (34, 46, 53)),
    ("desk_heldout84.jsonl", 239, 65, 59, (33, 42, 53)),
    # Held out: three more by three hands that read nothing of the project (a Shanghai/
    # Beijing onshore China desk, mostly Simplified Chinese; a Seoul KOSPI 200 and KRW desk,
    # mostly Korean; a London/New York FX options desk, English), asked for at the
    # eighteenth round's start and measured once on arrival on the code before it
    # (2c5a569): 159 of 196; 69, 88, 114. On the round's final code: 162; 74, 92, 117.
    # Never read.
    ("desk_heldout85.jsonl", 240, 65, 57, (22, 27, 32)),
    ("desk_heldout86.jsonl", 240, 66, 64, (20, 25, 33)),
    ("desk_heldout87.jsonl", 237, 65, 63, (30, 38, 49)),
    # Held out: three more by three hands that read nothing of the project (a Seoul Korean
    # rates desk, mostly Korean; a Taipei/Hong Kong desk in Taiwan Mandarin and Cantonese; a
    # New York/Chicago US rates desk, English), asked for at the nineteenth round's start
    # and measured once on arrival on the code before it (d6a6cc4): 172 of 196; 70, 88, 122.
    # On the round's final code (the floors): 185; 65, 88, 122. Never read.
    ("desk_heldout88.jsonl", 240, 66, 62, (20, 29, 40)),
    ("desk_heldout89.jsonl", 240, 65, 61, (20, 26, 36)),
    ("desk_heldout90.jsonl", 235, 65, 62, (25, 32, 45)),
    # Development desks asked for in the nineteenth round to choose the threshold of the
    # reading of text holding runs (ADR 0043): measured, not read; 109 of 130 and 49, 63, 78
    # on the code before the round. From the twentieth round the clause selector and the
    # ranker learn from them (ADR 0044).
    ("desk_heldout91.jsonl", 233, 65, 64, (23, 30, 41)),
    ("desk_heldout92.jsonl", 236, 65, 62, (27, 32, 38)),
    # Held out: written for the twentieth round (a Tokyo JGB, Nikkei and yen desk, mostly
    # Japanese; a crypto desk, English, many bots; a Frankfurt/Paris/Madrid desk in German,
    # French and Spanish), asked for at its start and measured once on arrival on the code
    # before it (ce346cc): 192 of 195; 81, 105, 129. On the round's final code (the
    # floors): 192; 80, 106, 130. Never read.
    ("desk_heldout93.jsonl", 240, 65, 62, (25, 37, 43)),
    ("desk_heldout94.jsonl", 237, 65, 65, (28, 36, 45)),
    ("desk_heldout95.jsonl", 238, 65, 65, (25, 33, 42)),
    # Development desks written in the twentieth round, mostly Japanese, Simplified and
    # Traditional Chinese: on arrival (ce346cc) 179 of 198; 63, 83, 105. desk_heldout96 is
    # trained on by the clause selector and the ranker (ADR 0044); 97 and 98 are not: they
    # measure it (37, 50, 65 on arrival; 44, 55, 68 on the round's final code).
    ("desk_heldout96.jsonl", 240, 66, 64, (29, 37, 43)),
    ("desk_heldout97.jsonl", 240, 66, 65, (19, 23, 29)),
    ("desk_heldout98.jsonl", 236, 66, 63, (23, 30, 39)),
    # A development desk written at the twentieth round's end (a Seoul USD/KRW, KTB and
    # Korean credit desk, mostly Korean), never trained on: on arrival (2a5e57d) 60 of 65;
    # 33, 41, 47.
    ("desk_heldout99.jsonl", 236, 65, 63, (33, 41, 47)),
    # Held out: written for the twenty-first round by hands that read nothing of the
    # project (a London gilts and sterling desk, English; a New York agency execution desk,
    # English, heavy bot output; a Milan/Rome desk, mostly Italian; a Beijing/Shanghai rates
    # and credit desk, mostly Chinese; a Seoul KOSPI 200 options desk, mostly Korean), the
    # first three asked for at its start, the last two to measure its Chinese and Korean
    # rules; measured once on arrival on the code before it (d1072eb): 290 of 326; 121, 153,
    # 199. On the round's code before its reviews: 293; 120, 155, 204; on its final code (the
    # floors): 291; 121, 155, 199. Never read.
    ("desk_heldout100.jsonl", 236, 65, 61, (26, 32, 43)),
    ("desk_heldout101.jsonl", 235, 65, 61, (17, 24, 35)),
    ("desk_heldout102.jsonl", 240, 64, 52, (23, 31, 39)),
    ("desk_heldout103.jsonl", 237, 66, 55, (21, 27, 36)),
    ("desk_heldout104.jsonl", 240, 66, 62, (27, 35, 46)),
    # Held out: written for the twenty-second round by hands that read nothing of the
    # project (a Madrid/Mexico City desk, mostly Spanish; a Chicago/London electronic futures
    # desk, English, heavy bot output; a Frankfurt/Munich desk, mostly German), asked for at
    # its start; measured on arrival on the code before it (864e5d1): 173 of 193; 89, 104,
    # 134, and the same on its final code (the floors). Never read.
    ("desk_heldout105.jsonl", 237, 65, 60, (24, 29, 38)),
    ("desk_heldout106.jsonl", 239, 63, 59, (32, 40, 49)),
    ("desk_heldout107.jsonl", 240, 65, 54, (29, 34, 43)),
    # Development desks of the twenty-second round (ADR 0047), never trained on: a New
    # York/London program-trading desk (English, very heavy order-system output), a
    # Milan/Turin desk (Italian), a Frankfurt/Zurich/Vienna desk (German), a
    # Madrid/Bogotá/Santiago desk (Spanish), their misses read and written as rules (on
    # arrival: 63, 57, 58 and 58), and a Milan/Rome desk (Italian) left unread to measure the
    # Italian shapes (54 on arrival and after them).
    ("desk_heldout108.jsonl", 239, 66, 65, (26, 35, 46)),
    ("desk_heldout109.jsonl", 231, 65, 62, (23, 32, 43)),
    ("desk_heldout110.jsonl", 240, 65, 61, (27, 36, 42)),
    ("desk_heldout111.jsonl", 236, 65, 64, (29, 31, 39)),
    ("desk_heldout112.jsonl", 236, 64, 54, (24, 29, 38)),
    # Held out: written for the twenty-third round by hands that read nothing of the project
    # (a Paris desk, mostly French; a São Paulo/Rio desk, mostly Brazilian Portuguese; a
    # Tokyo/Singapore desk, mostly Japanese), asked for at its start; measured on arrival on
    # the code before it (9db3dfc): 184 of 197; 83, 107, 134, and once on its final code (the
    # floors). Never read.
    ("desk_heldout113.jsonl", 238, 66, 64, (30, 39, 46)),
    ("desk_heldout114.jsonl", 239, 66, 57, (22, 30, 40)),
    ("desk_heldout115.jsonl", 236, 65, 63, (29, 39, 48)),
    # Development desks of the twenty-third round (ADR 0048), never trained on: a São Paulo
    # rates desk (Brazilian Portuguese), a Paris/Geneva credit desk (French), a Rio/São
    # Paulo/Lisbon desk (Portuguese), read and their misses written as rules (on arrival: 58,
    # 57 and 61).
    ("desk_heldout116.jsonl", 238, 64, 62, (29, 36, 44)),
    ("desk_heldout117.jsonl", 240, 65, 63, (31, 38, 49)),
    ("desk_heldout118.jsonl", 239, 65, 65, (28, 37, 49)),
    # Held out: written for the twenty-fourth round from the same brief by hands that read
    # nothing of the project but it and its checker (a Seoul equities and KTB/KOSPI 200
    # futures desk, mostly Korean; a Hong Kong macro and equities desk, Cantonese and
    # English; a London macro desk, English), asked for at its start; measured on arrival on
    # the code before it (13b7e13): 189 of 197; 87, 116, 143. Never read.
    ("desk_heldout119.jsonl", 240, 66, 63, (29, 37, 44)),
    ("desk_heldout120.jsonl", 239, 65, 60, (26, 38, 47)),
    ("desk_heldout121.jsonl", 240, 66, 66, (32, 41, 51)),
    # Held out: written for the twenty-fifth round from the same brief (a Sydney/Melbourne
    # desk, Australian English; a crypto derivatives desk, English with heavy bot output; a
    # Geneva/Singapore commodities desk, English with French and Mandarin), asked for at
    # its start; measured on arrival on the code before it (968afb2): 182 of 197; 75, 102,
    # 132. Never read.
    ("desk_heldout122.jsonl", 239, 65, 59, (25, 30, 40)),
    ("desk_heldout123.jsonl", 239, 66, 64, (29, 40, 53)),
    ("desk_heldout124.jsonl", 238, 66, 59, (21, 30, 38)),
    # Development desks of the twenty-fifth round (ADR 0050), never trained on: a Perth/
    # Sydney resources desk, a Houston/London energy desk, a Singapore/Dubai metals and FX
    # desk, all English, read and their misses written as rules (on arrival on fd9262f: 62,
    # 60 and 60).
    ("desk_heldout125.jsonl", 239, 66, 65, (29, 39, 48)),
    ("desk_heldout126.jsonl", 240, 65, 60, (26, 35, 43)),
    ("desk_heldout127.jsonl", 240, 66, 61, (28, 35, 41)),
    # Held out: written for the twenty-sixth round from the same brief (a Toronto/New York
    # desk, English with some Québec French; a Stockholm/Oslo Nordic desk, English with
    # Swedish and Norwegian; a New York multi-manager equity pod, terse American English),
    # asked for at its start; measured on arrival on the code before it (6d54e22): 192 of
    # 197; 90, 121, 149. Never read.
    ("desk_heldout128.jsonl", 239, 66, 63, (31, 40, 48)),
    ("desk_heldout129.jsonl", 239, 66, 65, (35, 44, 52)),
    ("desk_heldout130.jsonl", 239, 65, 64, (24, 37, 45)),
    # Development desks of the twenty-sixth round (ADR 0051), never trained on: a
    # Johannesburg desk (South African English), a Chicago agricultural desk (Midwest
    # English), a Dubai/Riyadh desk (English with Arabic), read and their misses written as
    # rules (on arrival on 6d54e22: 57, 63 and 62; 34 / 40 / 50, 28 / 35 / 47, 33 / 44 /
    # 54), their floors the round's final figures.
    ("desk_heldout131.jsonl", 239, 65, 62, (35, 43, 54)),
    ("desk_heldout132.jsonl", 238, 65, 65, (27, 36, 48)),
    ("desk_heldout133.jsonl", 240, 66, 65, (33, 44, 56)),
    # Held out: written for the twenty-seventh round from the same brief (a Warsaw/Prague/
    # Budapest desk, English with Polish, Czech and Hungarian; a Mumbai desk, Indian English
    # with Hindi; a New York rates desk, terse US rates jargon), asked for at its start;
    # measured on arrival on the code before it (a961c98): 182 of 197; 81, 109, 141. Never
    # read.
    ("desk_heldout134.jsonl", 239, 66, 63, (27, 36, 48)),
    ("desk_heldout135.jsonl", 235, 66, 60, (23, 33, 46)),
    ("desk_heldout136.jsonl", 240, 65, 59, (29, 39, 47)),
    # Development desks of the twenty-seventh round (ADR 0052), never trained on: an
    # Istanbul desk (English with Turkish), an Amsterdam options market-making desk
    # (Dutch-English floor slang), a Taipei/Hong Kong semiconductor desk (Traditional
    # Chinese and English), read and their misses written as rules (on arrival on a961c98:
    # 60, 63 and 64; 29 / 38 / 52, 30 / 38 / 46, 31 / 43 / 54), their floors the round's
    # final figures.
    ("desk_heldout137.jsonl", 240, 66, 63, (29, 40, 55)),
    ("desk_heldout138.jsonl", 239, 66, 65, (31, 38, 47)),
    ("desk_heldout139.jsonl", 239, 66, 65, (31, 42, 53)),
    # Held out: written for the twenty-eighth round from the same brief (a Jakarta/Kuala
    # Lumpur/Bangkok desk, English with Bahasa Indonesia, Malay and Thai; a London equity
    # long/short desk, British English with prime-broker and order-system output; a
    # Chicago/New York volatility desk, terse American English with risk-bot output), asked
    # for at its start; measured on arrival on the code before it (5e53e96): 188 of 197;
    # 90, 114, 144. Never read.
    ("desk_heldout140.jsonl", 240, 65, 64, (31, 40, 52)),
    ("desk_heldout141.jsonl", 240, 66, 62, (26, 36, 45)),
    ("desk_heldout142.jsonl", 238, 66, 62, (31, 38, 46)),
    # Development desks of the twenty-eighth round (ADR 0053), never trained on: a Tel Aviv
    # desk (English with Hebrew), a Zurich/Geneva private-bank execution desk (English with
    # Swiss German and French), a Lagos/Nairobi frontier-markets desk (English with Nigerian
    # Pidgin and Swahili); measured on arrival on 5e53e96 (56, 63 and 58; 30 / 35 / 42,
    # 25 / 38 / 49, 32 / 40 / 48), their floors the round's final figures; their misses
    # read, none written as a rule yet.
    ("desk_heldout143.jsonl", 240, 65, 56, (29, 37, 44)),
    ("desk_heldout144.jsonl", 236, 66, 63, (26, 37, 49)),
    ("desk_heldout145.jsonl", 239, 65, 58, (32, 42, 50)),
    # Held out: written for the twenty-ninth round from the same brief (a Hamburg/Copenhagen
    # shipping and freight desk, English with German and Danish; a Buenos Aires/Santiago/Lima
    # desk, Spanish with English; a London power and carbon desk, British English with
    # trading-system and scheduling-bot output), asked for at its start; measured on arrival
    # on the code before it (3e7c82e): 186 of 197; 100, 127, 157. Never read.
    ("desk_heldout146.jsonl", 240, 65, 63, (35, 43, 53)),
    ("desk_heldout147.jsonl", 240, 66, 60, (29, 40, 51)),
    ("desk_heldout148.jsonl", 240, 66, 63, (33, 43, 52)),
    # Development desks of the twenty-ninth round (ADR 0054), never trained on: a New York
    # municipal bond desk, a Manila/Ho Chi Minh City desk (English with Tagalog and
    # Vietnamese), an Athens/Nicosia desk (English with Greek); measured on arrival on
    # 3e7c82e (61, 59 and 65; 28 / 35 / 44, 30 / 39 / 48, 30 / 40 / 52), their floors the
    # round's final figures; their misses read, some written as rules.
    ("desk_heldout149.jsonl", 238, 66, 63, (28, 38, 46)),
    ("desk_heldout150.jsonl", 240, 66, 62, (30, 38, 47)),
    ("desk_heldout151.jsonl", 238, 66, 66, (31, 40, 52)),
    # Held out: written for the thirtieth round from the same brief (a Mexico City desk,
    # Mexican Spanish with English; a Frankfurt equity-derivatives and convertible-bond desk,
    # English with German; a Milan/Vienna desk, English with Italian and German), asked for
    # at its start; measured on arrival on the code before it (86ad1cf): 184 of 198; 82,
    # 107, 132. Never read.
    ("desk_heldout152.jsonl", 238, 66, 60, (27, 34, 43)),
    ("desk_heldout153.jsonl", 239, 66, 62, (29, 38, 49)),
    ("desk_heldout154.jsonl", 240, 66, 62, (26, 33, 39)),
    # Development desks of the thirtieth round, never trained on: a New York high-yield and
    # leveraged-loan desk, a Shanghai/Shenzhen onshore desk (English with Mandarin), a
    # Madrid/Lisbon desk (English with Spanish and Portuguese); measured on arrival on
    # 86ad1cf (61, 62 and 62; 24 / 30 / 41, 32 / 41 / 51, 35 / 45 / 53), their floors the
    # round's final figures; their misses read, some written as rules.
    ("desk_heldout155.jsonl", 237, 66, 62, (24, 31, 41)),
    ("desk_heldout156.jsonl", 240, 66, 64, (32, 42, 52)),
    ("desk_heldout157.jsonl", 240, 65, 62, (35, 45, 54)),
    # Held out: written for the thirty-first round from the same brief (a Singapore/Hong Kong
    # Asian credit desk, English with Cantonese and Singlish; a London emerging-markets
    # sovereign desk; a Stamford/Greenwich systematic macro execution desk, terse American
    # English with model and execution-bot output), asked for at its start; measured on
    # arrival on the code before it (a0501e3): 186 of 196; 87, 114, 143; on the round's final
    # code 186; 86, 115, 143 (desk_heldout158 one below its arrival figure at 6,000). Never read.
    ("desk_heldout158.jsonl", 240, 66, 64, (31, 41, 50)),
    ("desk_heldout159.jsonl", 239, 65, 60, (30, 39, 49)),
    ("desk_heldout160.jsonl", 239, 65, 62, (24, 32, 42)),
    # Development desks of the thirty-first round, never trained on: a Tokyo/Singapore FX desk
    # (English with Japanese), a Copenhagen/Helsinki desk (English with Danish and Finnish), a
    # Zurich/New York structured-products hedging desk (English with Swiss German); measured
    # on arrival on a0501e3 (63, 65 and 63; 34 / 44 / 53, 29 / 37 / 50, 30 / 42 / 54), their
    # floors the round's final figures; their misses read, some written as rules.
    ("desk_heldout161.jsonl", 239, 66, 66, (33, 45, 55)),
    ("desk_heldout162.jsonl", 240, 66, 66, (28, 37, 50)),
    ("desk_heldout163.jsonl", 239, 65, 64, (30, 42, 55)),
    # Held out: written for the thirty-second round from the same brief (a Montreal/Toronto
    # Canadian fixed-income and FX desk, English with Québécois French; a London/New York
    # merger-arbitrage desk; a Cairo/Casablanca/Dubai desk, English with Arabic and French),
    # asked for at its start; measured on arrival on the code before it (c80ebfd): 188 of
    # 196; 98, 133, 162. Never read.
    ("desk_heldout164.jsonl", 239, 66, 65, (29, 42, 55)),
    ("desk_heldout165.jsonl", 240, 65, 62, (35, 49, 56)),
    ("desk_heldout166.jsonl", 240, 65, 61, (34, 40, 50)),
    # Development desks of the thirty-second round: a New York investment-grade credit desk,
    # a Dublin/London bank treasury desk, a Karachi/Colombo/Dhaka frontier desk (English with
    # Urdu and Sinhala); measured on arrival on c80ebfd (59, 57 and 60; 33 / 37 / 47,
    # 30 / 36 / 43, 29 / 41 / 52), their floors the round's final figures; their misses read,
    # some written as rules (ADR 0057).
    ("desk_heldout167.jsonl", 239, 66, 63, (33, 38, 48)),
    ("desk_heldout168.jsonl", 235, 65, 63, (31, 39, 47)),
    ("desk_heldout169.jsonl", 240, 66, 61, (29, 39, 52)),
    # Held out: written for the thirty-third round from the same brief (a New York agency MBS
    # and securitized-products desk; a London inflation desk; an Athens/Istanbul desk, English
    # with Greek and Turkish), asked for at its start; measured on arrival on the code before
    # it (551ae0a): 180 of 196; 90, 114, 143. Never read.
    ("desk_heldout170.jsonl", 239, 66, 63, (30, 38, 47)),
    ("desk_heldout171.jsonl", 239, 65, 56, (30, 38, 48)),
    ("desk_heldout172.jsonl", 238, 65, 61, (29, 38, 48)),
    # Development desks of the thirty-third round: a Singapore/Perth bulk-commodities desk
    # (English with some Mandarin), a New York ETF market-making desk, a Wellington/Sydney
    # desk (English with some Māori); measured on arrival on 551ae0a (64, 64 and 63;
    # 27 / 35 / 48, 23 / 36 / 46, 27 / 37 / 48), their floors the round's final figures; their
    # misses read, some written as rules (ADR 0058).
    ("desk_heldout173.jsonl", 239, 66, 64, (26, 35, 48)),
    ("desk_heldout174.jsonl", 239, 66, 65, (24, 37, 47)),
    ("desk_heldout175.jsonl", 240, 66, 65, (27, 37, 50)),
    # Held out: written for the thirty-fourth round from the same brief (a Toronto/Calgary
    # Canadian equities and energy desk; an Edinburgh asset manager's multi-asset dealing
    # desk; a Tokyo desk, English with Japanese), asked for at its start; measured on arrival
    # on the code before it (dc249e3): 183 of 197; 88, 115, 149. Never read.
    ("desk_heldout176.jsonl", 238, 65, 60, (31, 41, 51)),
    ("desk_heldout177.jsonl", 240, 66, 62, (23, 33, 42)),
    ("desk_heldout178.jsonl", 240, 66, 61, (33, 41, 54)),
    # Development desks of the thirty-fourth round: a Warsaw/Prague Central-European desk
    # (English with Polish and Czech), a Boston/New York asset manager's fixed-income dealing
    # desk, a Chicago single-stock options market-making desk; measured on arrival on dc249e3
    # (63, 57 and 63; 29 / 37 / 46, 22 / 30 / 35, 31 / 36 / 47), their floors the round's
    # final figures; their misses read, some written as rules (ADR 0059).
    ("desk_heldout179.jsonl", 239, 65, 63, (29, 37, 46)),
    ("desk_heldout180.jsonl", 238, 66, 62, (23, 33, 38)),
    ("desk_heldout181.jsonl", 238, 65, 64, (30, 36, 48)),
    # Held out: written for the thirty-fifth round from the same brief (a New York/London
    # soft-commodities desk; a London/New York interest-rate options desk; a Budapest/
    # Bucharest desk, English with Hungarian and Romanian), asked for at its start; measured
    # on arrival on the code before it (11d0247): 180 of 197; 82, 110, 142. Never read.
    ("desk_heldout182.jsonl", 239, 66, 60, (26, 36, 45)),
    ("desk_heldout183.jsonl", 238, 66, 61, (33, 40, 51)),
    ("desk_heldout184.jsonl", 238, 65, 59, (20, 30, 43)),
    # Development desks of the thirty-fifth round: a Bermuda/Zurich insurance-linked
    # securities desk, a Luxembourg/Dublin fund-services FX hedging desk, a San Francisco/
    # Sacramento environmental-markets desk; measured on arrival on 11d0247 (57, 56 and 64;
    # 32 / 38 / 42, 25 / 32 / 37, 31 / 42 / 49), their floors the round's final figures (185
    # and 187 at 6,000 one below their arrival figures); their misses read, some written as
    # rules (ADR 0060).
    ("desk_heldout185.jsonl", 237, 65, 61, (31, 40, 45)),
    ("desk_heldout186.jsonl", 240, 65, 61, (25, 34, 41)),
    ("desk_heldout187.jsonl", 240, 66, 66, (30, 40, 50)),
    # Held out: written for the thirty-sixth round from the same brief (a Chicago/Kansas
    # City grain and oilseed desk; a Doha/Kuwait City Gulf desk, English with Arabic; a
    # London pension-fund liability-driven investment desk), asked for at its start;
    # measured on arrival on the code before it (3c93091): 187 of 198; 102, 126, 154.
    # Never read.
    ("desk_heldout188.jsonl", 235, 66, 64, (36, 45, 53)),
    ("desk_heldout189.jsonl", 238, 66, 62, (30, 40, 50)),
    ("desk_heldout190.jsonl", 239, 66, 61, (33, 38, 47)),
    # Development desks of the thirty-sixth round: a Vancouver/Toronto battery-metals and
    # mining desk, a Geneva/Zurich family office's execution desk (English with Swiss
    # French and Swiss German), a Tbilisi/Almaty Caucasus and Central Asia frontier desk
    # (English with Russian and Georgian); measured on arrival on 3c93091 (64, 58 and 60;
    # 31 / 41 / 50, 29 / 36 / 46, 37 / 43 / 51), their floors the round's final figures
    # (191 at 6,000 one below its arrival figure); their misses read, some written as rules
    # (ADR 0061).
    ("desk_heldout191.jsonl", 240, 66, 64, (30, 41, 50)),
    ("desk_heldout192.jsonl", 238, 66, 60, (26, 34, 44)),
    ("desk_heldout193.jsonl", 239, 66, 63, (38, 46, 53)),
    # Held out: written for the thirty-seventh round from the same brief (a Singapore/
    # Rotterdam marine-fuel desk; a New York Treasury basis and repo financing desk; a Hong
    # Kong/Singapore prime-brokerage securities-lending desk, English with Cantonese), asked
    # for at its start; measured on arrival on the code before it (37ad9a9): 175 of 198; 79,
    # 102, 133. Never read.
    ("desk_heldout194.jsonl", 240, 66, 60, (29, 38, 52)),
    ("desk_heldout195.jsonl", 234, 66, 63, (28, 37, 46)),
    ("desk_heldout196.jsonl", 239, 66, 52, (21, 26, 35)),
    # Development desks of the thirty-seventh round: a Houston/Austin ERCOT power and
    # renewables desk, a Tokyo retail-FX broker's dealing desk (English with Japanese), a
    # Kyiv/Warsaw desk (English with Ukrainian and Polish); measured on arrival on 37ad9a9
    # (62, 65 and 58; 35 / 44 / 50, 31 / 44 / 52, 36 / 46 / 54), their floors the round's
    # final figures; their misses read, some written as rules (ADR 0062).
    ("desk_heldout197.jsonl", 240, 66, 66, (35, 43, 53)),
    ("desk_heldout198.jsonl", 238, 66, 65, (32, 43, 51)),
    ("desk_heldout199.jsonl", 240, 65, 64, (36, 46, 57)),
    # Held out: written for the thirty-eighth round from the same brief (a Kuala Lumpur/
    # Singapore palm-oil and rubber desk, English with Malay and Mandarin; a New York
    # leveraged-loan and high-yield desk; a Lisbon/Madrid Iberian desk, English with
    # Spanish and Portuguese), asked for at its start; measured on arrival on the code
    # before it (574353c): 185 of 198; 90, 120, 149. Never read.
    ("desk_heldout200.jsonl", 238, 66, 62, (29, 41, 50)),
    ("desk_heldout201.jsonl", 240, 66, 61, (28, 37, 46)),
    ("desk_heldout202.jsonl", 240, 66, 62, (29, 40, 50)),
    # Development desks of the thirty-eighth round: a London LME base-metals desk, a Chicago
    # livestock and dairy desk, a Bogota/Lima/Santiago Andean desk (English with Spanish);
    # measured on arrival on 574353c (61, 62 and 64; 31 / 40 / 52, 33 / 44 / 52, 38 / 50 /
    # 58), their floors the round's final figures; their misses read.
    ("desk_heldout203.jsonl", 238, 65, 61, (30, 40, 51)),
    ("desk_heldout204.jsonl", 237, 65, 63, (31, 44, 51)),
    ("desk_heldout205.jsonl", 236, 66, 64, (37, 50, 58)),
    # Held out: written for the thirty-ninth round from the same brief (a Chicago/London
    # weather and natural-gas desk; an Oslo/Bergen seafood desk, English with Norwegian; a
    # Tel Aviv desk, English with Hebrew), asked for at its start; measured on arrival on
    # the code before it (5821af7): 187 of 198; 86, 120, 155. Never read.
    ("desk_heldout206.jsonl", 234, 66, 63, (27, 36, 47)),
    ("desk_heldout207.jsonl", 240, 66, 61, (25, 38, 51)),
    ("desk_heldout208.jsonl", 240, 66, 63, (34, 46, 56)),
    # Development desks of the thirty-ninth round: a London/Singapore dry-bulk freight desk,
    # a Paris/Frankfurt merger-arbitrage desk (English with French and German), a
    # Seattle/Vancouver lumber and pulp desk; measured on arrival on 5821af7 (63, 55 and 63;
    # 28 / 36 / 46, 30 / 32 / 41, 35 / 45 / 53), their floors the round's final figures;
    # their misses read.
    ("desk_heldout209.jsonl", 239, 66, 65, (27, 37, 44)),
    ("desk_heldout210.jsonl", 237, 65, 59, (31, 36, 45)),
    ("desk_heldout211.jsonl", 239, 66, 65, (37, 45, 54)),
    # Held out: written for the fortieth round from the same brief (a São Paulo/New York
    # orange-juice and softs desk, English with Brazilian Portuguese; a Riyadh/Dubai Gulf
    # desk, English with Arabic; a Bermuda/London insurance-linked securities desk), asked
    # for at its start; measured on arrival on the code before it (6814646): 181 of 198;
    # 90, 117, 146. Never read.
    ("desk_heldout212.jsonl", 238, 66, 60, (31, 42, 52)),
    ("desk_heldout213.jsonl", 240, 66, 60, (25, 33, 43)),
    ("desk_heldout214.jsonl", 240, 66, 61, (32, 40, 48)),
    # Development desks of the fortieth round: a Johannesburg/London platinum-group metals
    # desk, a Frankfurt/Amsterdam carbon and power desk (English with German and Dutch), a
    # New York/Greenwich volatility desk; measured on arrival on 6814646 (61, 62 and 61;
    # 35 / 41 / 50, 30 / 40 / 50, 28 / 40 / 50), their floors the round's final figures;
    # their misses read.
    ("desk_heldout215.jsonl", 239, 65, 63, (35, 43, 52)),
    ("desk_heldout216.jsonl", 238, 65, 63, (29, 39, 49)),
    ("desk_heldout217.jsonl", 239, 66, 63, (28, 39, 51)),
    # Held out: written for the forty-second round from the same brief (a Chicago/
    # Minneapolis grains and oilseed-crush desk; a Seoul/Hong Kong structured-products hedging
    # desk, English with Korean and some Cantonese; a Mexico City/Santiago rates desk in
    # Spanish with English), asked for during it; measured on arrival on its code before its
    # rules changes (bc8fb6e): 183 of 196; 96, 118, 149; on its final code 183; 97, 119, 148.
    # Never read.
    ("desk_heldout218.jsonl", 240, 66, 64, (33, 41, 50)),
    ("desk_heldout219.jsonl", 239, 65, 65, (31, 37, 51)),
    ("desk_heldout220.jsonl", 239, 65, 54, (31, 40, 46)),
    # Development desks of the forty-second round: a Houston crude and refined-products desk,
    # a Stockholm/Copenhagen covered-bond and krona desk (English with Swedish and Danish), a
    # Singapore crypto-derivatives desk; measured on arrival on bc8fb6e (64, 62 and 63;
    # 24 / 33 / 47, 32 / 41 / 50, 34 / 41 / 51), their floors the round's final figures;
    # their misses read. The round's second training lowered by one at one budget the
    # floors of six earlier held-out desks, of 209 and 217 and of these two (222 by two at
    # 12,000; ADR 0067).
    ("desk_heldout221.jsonl", 235, 66, 64, (23, 32, 46)),
    ("desk_heldout222.jsonl", 240, 66, 63, (31, 41, 49)),
    ("desk_heldout223.jsonl", 239, 65, 63, (30, 40, 51)),
    # Held-out desks of the forty-third round, written from bench/data/WRITING_BRIEF.md by
    # hands that read nothing of the project but the brief and its checker (an Auckland/
    # Sydney dairy and wool desk, New Zealand and Australian English with some te reo Maori;
    # an Istanbul/London Turkish markets desk, English with Turkish; a Chicago/Kansas City
    # livestock desk), asked for at its start; measured on arrival on its code before its
    # rules changes (f9f0cb1): 188 of 197; 86, 102, 136; on its final code 188; 86, 103,
    # 136. Never read.
    ("desk_heldout224.jsonl", 239, 66, 64, (27, 32, 45)),
    ("desk_heldout225.jsonl", 240, 65, 62, (34, 40, 49)),
    ("desk_heldout226.jsonl", 238, 66, 62, (24, 30, 41)),
    # Development desks of the forty-third round: a Tokyo/Osaka power and LNG desk (English
    # with Japanese), a Milan/Zurich convertible-bond arbitrage desk (English with Italian
    # and Swiss German), a Toronto/Calgary energy and financials desk; measured on arrival on
    # f9f0cb1 (62, 60 and 64; 33 / 41 / 51, 29 / 40 / 50, 32 / 40 / 49), their floors the
    # round's final figures; their misses read (ADR 0068).
    ("desk_heldout227.jsonl", 237, 66, 63, (32, 40, 48)),
    ("desk_heldout228.jsonl", 239, 66, 62, (28, 40, 51)),
    ("desk_heldout229.jsonl", 239, 66, 65, (30, 40, 48)),
    # Held-out desks of the forty-fourth round, written from bench/data/WRITING_BRIEF.md by
    # hands that read nothing of the project but the brief and its checker (a Houston/Calgary
    # natural-gas-liquids and midstream desk; a Hong Kong/Shanghai Chinese onshore bond desk,
    # English with Mandarin; a Dublin/London airline and aircraft-finance desk), asked for at
    # its start; measured on arrival on its first code (28dcc3d): 188 of 197; 99, 130, 156;
    # on its final code 188; 99, 129, 155. Never read. The round's choice of the stop in force
    # (a stop's change stands for the newest of its stop that fits, longer or not; ADR 0069)
    # lowered the floors of five held-out desks, disclosed: 113 by one at 6,000; 147 by one
    # at 6,000 and 12,000; 158 by one at 6,000 and 8,192; 184 by one, two and one; 231 by one
    # at 8,192 and 12,000; and of three development desks: 197 by one at 6,000 and 8,192, 199
    # by one at 8,192, 209 by two at 12,000.
    ("desk_heldout230.jsonl", 237, 66, 61, (39, 50, 57)),
    ("desk_heldout231.jsonl", 240, 65, 63, (30, 36, 46)),
    ("desk_heldout232.jsonl", 239, 66, 64, (29, 42, 52)),
    # Development desks of the forty-fourth round: a London/Abidjan cocoa origin desk
    # (English with West African French), a Geneva/Zug battery-metals desk (English with
    # French and Swiss German), a New York/Chicago Treasury basis and repo desk; measured on
    # arrival on 28dcc3d (62, 63 and 61; 34 / 40 / 50, 28 / 39 / 48, 29 / 39 / 50), their
    # floors the round's final figures; their misses read (ADR 0069).
    ("desk_heldout233.jsonl", 238, 66, 64, (35, 40, 52)),
    ("desk_heldout234.jsonl", 237, 66, 64, (29, 39, 49)),
    ("desk_heldout235.jsonl", 240, 65, 65, (29, 40, 53)),
    # Held-out desks of the forty-fifth round, written from bench/data/WRITING_BRIEF.md by
    # hands that read nothing of the project but the brief and its checker (a New York/Boston
    # biotech event-driven equity desk; a Geneva/Singapore tanker-freight desk, English with
    # Greek shipbroker slang; a Philadelphia/Chicago US eastern power desk), asked for at its
    # start; measured on arrival on its first code (5da8393): 187 of 197; 96, 120, 152; on
    # its final code 187; 96, 119, 153. Never read.
    ("desk_heldout236.jsonl", 237, 66, 61, (29, 36, 45)),
    ("desk_heldout237.jsonl", 240, 65, 62, (31, 40, 50)),
    ("desk_heldout238.jsonl", 238, 66, 64, (34, 42, 55)),
    # Development desks of the forty-fifth round: a New York/London emerging-market sovereign
    # credit desk, a Vancouver/Toronto junior-mining equity desk, a Frankfurt/Paris/Milan euro
    # inflation-linked bond desk (English with German, French and Italian); measured on
    # arrival on 5da8393 (61, 66 and 62; 33 / 45 / 54, 27 / 35 / 45, 32 / 40 / 48), their
    # floors the round's final figures; their misses read (ADR 0070).
    ("desk_heldout239.jsonl", 240, 65, 64, (32, 44, 55)),
    ("desk_heldout240.jsonl", 238, 66, 66, (27, 35, 45)),
    ("desk_heldout241.jsonl", 239, 66, 63, (31, 39, 49)),
    # Held-out desks of the forty-sixth round, written from bench/data/WRITING_BRIEF.md by
    # hands that read nothing of the project but the brief and its checker (a New York/London
    # merger-arbitrage desk; a Mumbai/Singapore Indian equity-derivatives desk, Indian English
    # with Hindi words; a Chicago/Kansas City livestock desk), asked for at its start;
    # measured on arrival on its first code (68a3c60): 184 of 197; 95, 119, 142; on its
    # final code 184; 96, 119, 142. Never read. The round's trimming of a decision's
    # reasons after a dash (ADR 0071) lowered floors by one decision at a budget: of six
    # held-out desks, 113 (6,000), 166 (8,192), 208 (12,000), 224 (each budget), 236
    # (8,192 and 12,000) and 237 (12,000); of eight development desks, 149, 180, 192, 209,
    # 221, 222, 227 and 241; of two trained on, 15 and 40 (12,000). The hundred and fourteen
    # held-out desks measured before went from 3,623 / 4,627 / 5,736 to 3,704 / 4,698 /
    # 5,768 (3,703 at 6,000 once the Nikkei and JGB roots were names, desk 79 by one).
    ("desk_heldout242.jsonl", 239, 66, 63, (26, 36, 43)),
    ("desk_heldout243.jsonl", 239, 66, 61, (37, 44, 50)),
    ("desk_heldout244.jsonl", 239, 65, 60, (27, 38, 47)),
    # Development desks of the forty-sixth round: a Singapore/Kuala Lumpur/Jakarta palm-oil
    # desk (English with Malay and Indonesian), a Zurich/New York volatility-arbitrage desk, a
    # Toronto/New York bank-capital desk; measured on arrival on 68a3c60 (63, 64 and 61;
    # 32 / 40 / 49, 29 / 40 / 50, 30 / 36 / 47), their floors the round's final figures;
    # their misses read (ADR 0071).
    ("desk_heldout245.jsonl", 240, 66, 63, (32, 41, 49)),
    ("desk_heldout246.jsonl", 238, 65, 64, (29, 40, 50)),
    ("desk_heldout247.jsonl", 237, 66, 61, (31, 37, 48)),
    # Held-out desks of the forty-seventh round, written from bench/data/WRITING_BRIEF.md by
    # hands that read nothing of the project but the brief and its checker (a Perth/Singapore
    # iron-ore desk; a New York municipal-bond desk; a Lagos/Nairobi/Johannesburg African
    # frontier-markets desk, English with Nigerian Pidgin and Swahili), asked for at its
    # start; measured on arrival on its first code (5948424): 186 of 195; 100, 121, 145; on
    # its final code 186; 98, 118, 146. Never read. The round's cuts (reasons after a comma,
    # a short clause or a retraction after a kept one) and its stop rule (ADR 0072), measured
    # once on the held-out desks on the final code, lowered floors: of eight held-out desks,
    # 147 (6,000), 194 (8,192), 202 (12,000), 236 (6,000, by 2), 244 (6,000 by 2, and
    # 8,192), 248 (8,192), 249 (6,000 and 8,192) and 250 (6,000 and 8,192); of five
    # development desks, 192 (6,000 and 8,192), 217 (12,000), 239 and 241 (6,000). The
    # hundred and seventeen held-out desks measured before went from 3,799 / 4,817 / 5,910
    # to 3,777 / 4,820 / 5,916.
    ("desk_heldout248.jsonl", 240, 65, 64, (35, 44, 54)),
    ("desk_heldout249.jsonl", 240, 65, 60, (30, 34, 41)),
    ("desk_heldout250.jsonl", 240, 65, 62, (33, 40, 50)),
    # Development desks of the forty-seventh round: a Sydney/Melbourne Australian rates desk,
    # a Paris/London index-arbitrage and dividend desk (English with French), a New
    # York/Chicago equity-options flow desk; measured on arrival on 5948424 (64, 64 and 60;
    # 37 / 47 / 56, 27 / 37 / 47, 29 / 40 / 47), their floors the round's final figures;
    # their misses read (ADR 0072).
    ("desk_heldout251.jsonl", 239, 66, 64, (36, 46, 54)),
    ("desk_heldout252.jsonl", 240, 66, 64, (27, 36, 46)),
    ("desk_heldout253.jsonl", 238, 65, 60, (29, 38, 47)),
    # Held-out desks asked for at the end of the forty-seventh round, written from
    # bench/data/WRITING_BRIEF.md by hands that read nothing of the project but the brief and
    # its checker (a London/Oslo North Sea oil desk; a Warsaw/Budapest/Prague central-European
    # equity desk, English with Polish and Hungarian; a Singapore/Jakarta Asian high-yield
    # desk, English with Bahasa Indonesia); measured once on arrival on the round's final code
    # (63759e1): 185 of 197; 98, 127, 155. Never read.
    ("desk_heldout254.jsonl", 240, 66, 64, (30, 38, 50)),
    ("desk_heldout255.jsonl", 239, 66, 63, (37, 46, 54)),
    ("desk_heldout256.jsonl", 239, 65, 58, (30, 41, 47)),
    # Development desks asked for with them (a Chicago/Minneapolis US rate-options desk; a
    # Madrid/Lisbon Iberian power and gas desk, English with Spanish and Portuguese; a
    # Dubai/Mumbai precious-metals and FX desk, English with Hindi and Arabic words);
    # measured on arrival on 63759e1 (61, 59 and 60; 31 / 40 / 47, 29 / 40 / 50, 26 / 37 /
    # 48); their misses read in the forty-eighth round.
    ("desk_heldout257.jsonl", 239, 65, 61, (31, 40, 47)),
    ("desk_heldout258.jsonl", 239, 65, 59, (29, 40, 50)),
    ("desk_heldout259.jsonl", 240, 66, 60, (26, 37, 44)),
    # Held-out desks asked for at the start of the forty-eighth round, written from
    # bench/data/WRITING_BRIEF.md by hands that read nothing of the project but the brief and
    # its checker (a Bermuda/London insurance-linked securities desk; a Hamburg/Rotterdam
    # container-freight and shipping-equity desk, English with German and Dutch; a New York
    # SPAC-arbitrage desk); measured once on arrival on the forty-seventh round's final code
    # (f087046): 179 of 197; 110, 127, 146; on the round's final code 179; 114, 135, 149
    # (their floors). Never read. Measured on the forty-eighth round's final code (ADR 0073;
    # twice: 332e727, then 11da92a with the unanswered odds measured again), lowered floors
    # of held-out desks: 73 (8,192), 78 (12,000, by 2), 130 (12,000, by 2), 136 (6,000 by 2,
    # and 8,192), 153 (8,192), 212 (8,192, and 12,000 by 3), 213 (8,192), 220 (6,000), 243
    # (6,000, by 2), 244 (6,000 by 2, and 12,000), 254 (12,000), 255 (8,192 and 12,000), 256
    # (6,000 and 12,000) and 260 (12,000). The hundred and twenty-three measured before went
    # from 3,973 / 5,065 / 6,217 to 4,059 / 5,184 / 6,298, then 4,065 / 5,187 / 6,308.
    ("desk_heldout260.jsonl", 239, 65, 59, (40, 44, 47)),
    ("desk_heldout261.jsonl", 237, 66, 59, (39, 48, 53)),
    ("desk_heldout262.jsonl", 238, 66, 61, (33, 41, 48)),
    # Development desks asked for with them (a Tel Aviv/New York Israeli equities and shekel
    # desk, English with Hebrew; a Geneva/Sao Paulo sugar and ethanol desk, English with
    # Brazilian Portuguese; a Denver/Toronto uranium desk); measured on arrival on f087046
    # (63, 62 and 64; 36 / 45 / 55, 30 / 39 / 51, 30 / 39 / 49), their floors the round's
    # final figures; their misses read (ADR 0073). At the forty-eighth round's final code
    # (the desk reading, the selector and the ranker trained on the fifty-four development
    # desks up to 181, ADR 0073), lowered floors of tuned-on desks: development 187 (8,192),
    # 192, 198 (8,192, 12,000), 199 (12,000), 210 (6,000), 215 (6,000), 216 (8,192), 223
    # (6,000, by 3), 227
    # (8,192, 12,000), 229, 251, 252 (12,000), 253 and 259 (12,000, by 4); trained on 3, 4,
    # 6, 9, 11, 20 (12,000, by 3), 23, 38 and 40.
    ("desk_heldout263.jsonl", 240, 66, 64, (36, 45, 56)),
    ("desk_heldout264.jsonl", 238, 66, 62, (30, 40, 50)),
    ("desk_heldout265.jsonl", 239, 66, 64, (29, 39, 50)),
    # Held-out desks asked for at the start of the forty-ninth round, written from
    # bench/data/WRITING_BRIEF.md by hands that read nothing of the project but the brief and
    # its checker (a Calgary/Houston Canadian heavy-crude desk; a London/Edinburgh wealth
    # manager's dealing desk; a Santiago/Lima copper and lithium desk, English with Chilean
    # and Peruvian Spanish); measured once on arrival on the forty-eighth round's final code
    # (c75cb8e): 188 of 197; 101, 129, 157; on the round's final code 188; 101, 131, 155.
    # Never read. At the forty-ninth round's final code (the clause selector as monotone
    # trees, ADR 0074; measured on 2b19245, then on 3b4c900 after a review's mends, both
    # disclosed), held-out floors lowered by a decision or two at 12,000: 189, 244, 255,
    # 262, 266 (by 2) and 267.
    ("desk_heldout266.jsonl", 236, 66, 63, (33, 41, 49)),
    ("desk_heldout267.jsonl", 233, 66, 60, (30, 41, 50)),
    ("desk_heldout268.jsonl", 240, 65, 65, (37, 47, 55)),
    # Development desks asked for with them (an Amsterdam/Brussels European gas-storage and
    # LNG desk, English with Dutch and some French; a Washington/New York US Treasury
    # primary-dealer desk; an Istanbul/London Turkish lira and Eurobond desk, English with
    # Turkish); measured on arrival on c75cb8e (59, 61 and 62; 33 / 43 / 52, 28 / 37 / 45,
    # 37 / 43 / 47); their floors the round's final figures (ADR 0074). At the forty-ninth
    # round's final code (the clause selector as monotone trees, ADR 0074), lowered floors
    # of tuned-on desks: development 216 and 239 (12,000); trained on 3 (12,000) and 21
    # (6,000).
    ("desk_heldout269.jsonl", 240, 65, 59, (33, 43, 53)),
    ("desk_heldout270.jsonl", 239, 66, 61, (32, 42, 49)),
    ("desk_heldout271.jsonl", 240, 66, 62, (36, 43, 48)),
    # Held-out desks asked for at the start of the fiftieth round, written from
    # bench/data/WRITING_BRIEF.md by hands that read nothing of the project but the brief and
    # its checker (a Buenos Aires/New York Argentine sovereign-bond and peso desk, English with
    # Rioplatense Spanish; a Frankfurt/London euro-rates futures desk, English with German; a
    # Hong Kong/Singapore Asian equity long-short fund's execution desk, English with
    # Cantonese); measured once on arrival on the forty-ninth round's final code (9f53273):
    # 185 of 198; 104, 132, 152. Never read. At the fiftieth round's final code (an echo
    # weighed 0.6, an order put one way; ADR 0075; measured on ae2145c, then on b98627e with
    # the model trained again, both disclosed), held-out floors lowered: 188 (12,000), 262
    # (6,000 and 8,192, by 2), 273 (6,000), 274 (8,192), and on the second 266 (6,000).
    ("desk_heldout272.jsonl", 240, 66, 62, (32, 42, 50)),
    ("desk_heldout273.jsonl", 237, 66, 62, (36, 47, 54)),
    ("desk_heldout274.jsonl", 239, 66, 61, (35, 42, 48)),
    # Development desks asked for with them (an Oslo/Stockholm Nordic power desk, English with
    # Norwegian and Swedish; a Seoul/Hong Kong Korean rates and won desk, English with Korean;
    # a Rio de Janeiro/São Paulo Brazilian rates and real desk, English with Brazilian
    # Portuguese); measured on arrival on 9f53273 (62, 60 and 64; 37 / 46 / 52, 32 / 42 / 51,
    # 36 / 44 / 55); their floors the round's final figures (ADR 0075). At the fiftieth
    # round's final code (the model trained again on its rules, ADR 0075), lowered floors of
    # development desks: 251 (12,000), 269 (6,000 and 8,192), 270 (6,000).
    ("desk_heldout275.jsonl", 238, 66, 62, (38, 46, 53)),
    ("desk_heldout276.jsonl", 239, 65, 62, (33, 45, 52)),
    ("desk_heldout277.jsonl", 239, 66, 64, (37, 46, 55)),
    # Held-out desks asked for at the start of the fifty-first round, written from
    # bench/data/WRITING_BRIEF.md by hands that read nothing of the project but the brief and
    # its checker (a Mumbai/Singapore Indian rupee and government-bond desk, English with
    # Hinglish; a London/New York leveraged-loan and CLO warehouse desk, terse English; a
    # Johannesburg/London platinum-group metals and rand desk, English with Afrikaans);
    # measured once on arrival on the fiftieth round's final code (63311e1): 184 of 197;
    # 108, 141, 164. Never read. The same on the fifty-first round's final code (344ba75;
    # ADR 0076).
    ("desk_heldout278.jsonl", 239, 66, 62, (38, 51, 58)),
    ("desk_heldout279.jsonl", 238, 65, 58, (34, 43, 51)),
    ("desk_heldout280.jsonl", 240, 66, 64, (36, 47, 55)),
    # Development desks asked for with them (a Paris/London EU carbon desk, English with
    # French; a Houston/Calgary natural-gas-liquids desk, Texan and Canadian English; a
    # Ho Chi Minh City/Singapore Vietnamese equities and dong desk, English with Vietnamese);
    # measured on arrival on 63311e1 (63, 61 and 61; 32 / 43 / 53, 39 / 47 / 57,
    # 34 / 41 / 50); their floors the round's final figures (ADR 0076).
    ("desk_heldout281.jsonl", 232, 66, 63, (32, 43, 53)),
    ("desk_heldout282.jsonl", 237, 66, 64, (40, 50, 60)),
    ("desk_heldout283.jsonl", 237, 65, 63, (34, 44, 52)),
    # Held-out desks asked for at the end of the fifty-first round, written from
    # bench/data/WRITING_BRIEF.md by hands that read nothing of the project but the brief and
    # its checker (a Mexico City/New York Mexican peso and rates desk, English with Mexican
    # Spanish; a Rotterdam/Geneva biofuels desk, English with Dutch and French; a Cairo/Dubai
    # Egyptian pound and T-bill carry desk, English with Egyptian Arabic); measured once on
    # arrival at the start of the fifty-second round on the fifty-first round's final code
    # (befb4ed): 183 of 198; 107, 132, 163. Never read. On the round's final code (measured
    # once): 183; 107, 131, 163 — 284 one fewer at 8,192 and at 12,000 (its floors lowered,
    # ADR 0077).
    ("desk_heldout284.jsonl", 239, 66, 63, (34, 42, 57)),
    ("desk_heldout285.jsonl", 240, 66, 58, (37, 45, 51)),
    ("desk_heldout286.jsonl", 240, 66, 62, (36, 44, 54)),
    # Development desks asked for with them (a Stamford/London weather-derivatives desk; a
    # Riyadh/Dubai Gulf equities desk, English with Gulf Arabic; a Chicago/Omaha livestock
    # futures desk); measured on arrival on befb4ed (59, 65 and 57; 39 / 46 / 52,
    # 28 / 39 / 48, 31 / 36 / 46); their floors the round's final figures (ADR 0077).
    ("desk_heldout287.jsonl", 240, 66, 65, (40, 50, 57)),
    ("desk_heldout288.jsonl", 240, 66, 65, (28, 39, 48)),
    ("desk_heldout289.jsonl", 240, 66, 65, (32, 40, 52)),
]


# The desks the rules are tuned on (the development desks, whose misses are read each round)
# and those the decision model, the desk reading and the ranker learn from: their floors
# run under `make floors` (pytest -m tuned_on), with every change of the rules, the model or
# the feed, and `make test` keeps the floors of the hundred and thirty-eight desks nobody tunes on
# (ADR 0066). A new round's desks go in one set or the other. The development desks up to
# desk_heldout181 are trained on since ADR 0073 (bench/training_desks.py); those after it
# are not.
DEVELOPMENT = frozenset(n for start in range(185, 290, 6) for n in range(start, start + 3))


def _desk_number(name: str) -> int:
    return int(name.removeprefix("desk_heldout").removesuffix(".jsonl") or 1)


# the measured desks among those the trainer learns from (bench/training_desks.py)
TRAINED_ON = frozenset(_desk_number(p.name) for p in (*READ_DESKS, *RUNS_DESKS))


def test_every_measured_desk_is_held_out_developed_on_or_trained_on() -> None:
    numbers = [_desk_number(d[0]) for d in MEASURED_DESKS]
    assert sorted(numbers) == list(range(1, 290))
    held_out = set(numbers) - DEVELOPMENT - TRAINED_ON
    assert not DEVELOPMENT & TRAINED_ON
    assert (len(held_out), len(DEVELOPMENT), len(TRAINED_ON)) == (138, 54, 97)
    assert {
        284,
        285,
        286,
        278,
        279,
        280,
        272,
        273,
        274,
        266,
        260,
        254,
        248,
        230,
        119,
        54,
    } <= held_out
    assert {287, 288, 289, 281, 282, 283, 275, 277, 269, 263, 257, 251, 233, 185} <= DEVELOPMENT
    assert {41, 53, 97, 118, 125, 181, 2, 40, 91} <= TRAINED_ON


@pytest.mark.parametrize(
    ("name", "messages", "decisions", "recognised", "verbatim"),
    [
        pytest.param(*desk, marks=pytest.mark.tuned_on)
        if _desk_number(desk[0]) in DEVELOPMENT | TRAINED_ON
        else desk
        for desk in MEASURED_DESKS
    ],
)
def test_a_heldout_desk_keeps_its_measured_figures(
    name: str, messages: int, decisions: int, recognised: int, verbatim: tuple[int, int, int]
) -> None:
    rows = load_independent(DATA / name)
    assert len(rows) == messages and sum(1 for r in rows if r["decision"]) == decisions
    assert all((r["decision_text"] or "") in r["content"] for r in rows)
    report = asyncio.run(independent_report(path=DATA / name))
    assert report["decisions"] == decisions
    assert report["recognised"] >= recognised
    _keeps_budget_and_floors(report, dict(zip((6_000, 8_192, 12_000), verbatim, strict=True)))


# --- the labelled desks ------------------------------------------------------------------------

LABELLED_DESKS = [
    ("desk_train2.jsonl", 230, 61),
    ("desk_train3.jsonl", 229, 62),
    ("desk_train4.jsonl", 229, 62),
    ("desk_heldout3.jsonl", 229, 62),
    ("desk_heldout4.jsonl", 228, 63),
    ("desk_train5.jsonl", 226, 62),
    ("desk_train6.jsonl", 232, 62),
    ("desk_train7.jsonl", 229, 62),
    ("desk_heldout5.jsonl", 222, 63),
    ("desk_heldout6.jsonl", 237, 62),
    ("desk_heldout7.jsonl", 224, 62),
    ("desk_heldout8.jsonl", 228, 61),
    ("desk_heldout9.jsonl", 210, 62),
    ("desk_heldout10.jsonl", 225, 62),
    ("desk_heldout11.jsonl", 226, 61),
    ("desk_heldout12.jsonl", 229, 64),
    ("desk_heldout13.jsonl", 226, 63),
    ("desk_heldout15.jsonl", 233, 64),
    ("desk_heldout16.jsonl", 233, 64),
    ("desk_heldout17.jsonl", 226, 64),
    ("desk_heldout18.jsonl", 234, 65),
    ("desk_heldout19.jsonl", 229, 60),
    ("desk_heldout20.jsonl", 229, 64),
    ("desk_heldout21.jsonl", 235, 64),
    ("desk_heldout22.jsonl", 229, 63),
    ("desk_heldout23.jsonl", 229, 63),
    ("desk_heldout24.jsonl", 233, 63),
    ("desk_heldout25.jsonl", 233, 63),
    ("desk_heldout26.jsonl", 230, 60),
    ("desk_heldout27.jsonl", 232, 65),
    ("desk_heldout28.jsonl", 234, 61),
    ("desk_heldout29.jsonl", 234, 64),
    ("desk_heldout30.jsonl", 233, 62),
    ("desk_heldout31.jsonl", 231, 64),
    ("desk_heldout32.jsonl", 231, 64),
    ("desk_heldout33.jsonl", 233, 65),
    ("desk_heldout35.jsonl", 232, 61),
    ("desk_heldout36.jsonl", 234, 64),
    ("desk_heldout37.jsonl", 230, 61),
    ("desk_heldout38.jsonl", 233, 64),
    ("desk_heldout39.jsonl", 234, 63),
    ("desk_heldout40.jsonl", 234, 64),
    ("desk_heldout41.jsonl", 234, 64),
    ("desk_heldout42.jsonl", 231, 64),
    ("desk_heldout43.jsonl", 233, 64),
    ("desk_heldout44.jsonl", 232, 63),
    ("desk_heldout45.jsonl", 232, 62),
    ("desk_heldout46.jsonl", 234, 58),
    ("desk_heldout47.jsonl", 232, 63),
    ("desk_heldout48.jsonl", 230, 64),
    ("desk_heldout49.jsonl", 234, 61),
    ("desk_heldout50.jsonl", 231, 63),
    ("desk_heldout51.jsonl", 231, 63),
    ("desk_heldout52.jsonl", 231, 64),
    ("desk_heldout54.jsonl", 231, 61),
    ("desk_heldout55.jsonl", 232, 64),
    ("desk_heldout56.jsonl", 235, 59),
    ("desk_heldout57.jsonl", 238, 64),
    ("desk_heldout58.jsonl", 238, 63),
    ("desk_heldout59.jsonl", 240, 65),
    ("desk_heldout60.jsonl", 239, 64),
    ("desk_heldout61.jsonl", 240, 64),
    ("desk_heldout62.jsonl", 240, 65),
    ("desk_heldout63.jsonl", 238, 64),
    ("desk_heldout65.jsonl", 238, 65),
    ("desk_heldout67.jsonl", 239, 65),
    ("desk_heldout68.jsonl", 240, 65),
    ("desk_heldout69.jsonl", 238, 65),
    ("desk_heldout70.jsonl", 237, 65),
    ("desk_heldout71.jsonl", 239, 65),
    ("desk_heldout72.jsonl", 238, 66),
    ("desk_heldout73.jsonl", 236, 65),
    ("desk_heldout74.jsonl", 239, 64),
    ("desk_heldout75.jsonl", 239, 64),
    ("desk_heldout76.jsonl", 239, 65),
    ("desk_heldout77.jsonl", 238, 66),
    ("desk_heldout78.jsonl", 236, 65),
    ("desk_heldout79.jsonl", 240, 66),
    ("desk_heldout80.jsonl", 235, 64),
    ("desk_heldout81.jsonl", 239, 65),
    ("desk_heldout82.jsonl", 236, 65),
    ("desk_heldout83.jsonl", 235, 66),
    ("desk_heldout84.jsonl", 239, 65),
    ("desk_heldout85.jsonl", 240, 65),
    ("desk_heldout86.jsonl", 240, 66),
    ("desk_heldout87.jsonl", 237, 65),
    ("desk_heldout88.jsonl", 240, 66),
    ("desk_heldout89.jsonl", 240, 65),
    ("desk_heldout90.jsonl", 235, 65),
    ("desk_heldout91.jsonl", 233, 65),
    ("desk_heldout92.jsonl", 236, 65),
    ("desk_heldout93.jsonl", 240, 65),
    ("desk_heldout94.jsonl", 237, 65),
    ("desk_heldout95.jsonl", 238, 65),
    ("desk_heldout96.jsonl", 240, 66),
    ("desk_heldout97.jsonl", 240, 66),
    ("desk_heldout98.jsonl", 236, 66),
    ("desk_heldout99.jsonl", 236, 65),
    ("desk_heldout100.jsonl", 236, 65),
    ("desk_heldout101.jsonl", 235, 65),
    ("desk_heldout103.jsonl", 237, 66),
    ("desk_heldout104.jsonl", 240, 66),
    ("desk_heldout105.jsonl", 237, 65),
    ("desk_heldout106.jsonl", 239, 63),
    ("desk_heldout107.jsonl", 240, 65),
    ("desk_heldout108.jsonl", 239, 66),
    ("desk_heldout110.jsonl", 240, 65),
    ("desk_heldout111.jsonl", 236, 65),
    ("desk_heldout112.jsonl", 236, 64),
    ("desk_heldout113.jsonl", 238, 66),
    ("desk_heldout114.jsonl", 239, 66),
    ("desk_heldout115.jsonl", 236, 65),
    ("desk_heldout116.jsonl", 238, 64),
    ("desk_heldout117.jsonl", 240, 65),
    ("desk_heldout118.jsonl", 239, 65),
    ("desk_heldout119.jsonl", 240, 66),
    ("desk_heldout120.jsonl", 239, 65),
    ("desk_heldout121.jsonl", 240, 66),
    ("desk_heldout122.jsonl", 239, 65),
    ("desk_heldout123.jsonl", 239, 66),
    ("desk_heldout126.jsonl", 240, 65),
    ("desk_heldout128.jsonl", 239, 66),
    ("desk_heldout130.jsonl", 239, 65),
    ("desk_heldout133.jsonl", 240, 66),
    ("desk_heldout135.jsonl", 235, 66),
    ("desk_heldout136.jsonl", 240, 65),
    ("desk_heldout138.jsonl", 239, 66),
    ("desk_heldout139.jsonl", 239, 66),
    ("desk_heldout141.jsonl", 240, 66),
    ("desk_heldout142.jsonl", 238, 66),
    ("desk_heldout144.jsonl", 236, 66),
    ("desk_heldout145.jsonl", 239, 65),
    ("desk_heldout146.jsonl", 240, 65),
    ("desk_heldout147.jsonl", 240, 66),
    ("desk_heldout148.jsonl", 240, 66),
    ("desk_heldout149.jsonl", 238, 66),
    ("desk_heldout151.jsonl", 238, 66),
    ("desk_heldout152.jsonl", 238, 66),
    ("desk_heldout155.jsonl", 237, 66),
    ("desk_heldout156.jsonl", 240, 66),
    ("desk_heldout158.jsonl", 240, 66),
    ("desk_heldout159.jsonl", 239, 65),
    ("desk_heldout160.jsonl", 239, 65),
    ("desk_heldout162.jsonl", 240, 66),
    ("desk_heldout163.jsonl", 239, 65),
    ("desk_heldout165.jsonl", 240, 65),
    ("desk_heldout166.jsonl", 240, 65),
    ("desk_heldout167.jsonl", 239, 66),
    ("desk_heldout168.jsonl", 235, 65),
    ("desk_heldout169.jsonl", 240, 66),
    ("desk_heldout170.jsonl", 239, 66),
    ("desk_heldout171.jsonl", 239, 65),
    ("desk_heldout174.jsonl", 239, 66),
    ("desk_heldout175.jsonl", 240, 66),
    ("desk_heldout177.jsonl", 240, 66),
    ("desk_heldout178.jsonl", 240, 66),
    ("desk_heldout179.jsonl", 239, 65),
    ("desk_heldout180.jsonl", 238, 66),
    ("desk_heldout181.jsonl", 238, 65),
    ("desk_heldout182.jsonl", 239, 66),
    ("desk_heldout183.jsonl", 238, 66),
    ("desk_heldout184.jsonl", 238, 65),
    ("desk_heldout185.jsonl", 237, 65),
    ("desk_heldout186.jsonl", 240, 65),
    ("desk_heldout187.jsonl", 240, 66),
    ("desk_heldout188.jsonl", 235, 66),
    ("desk_heldout189.jsonl", 238, 66),
    ("desk_heldout190.jsonl", 239, 66),
    ("desk_heldout191.jsonl", 240, 66),
    ("desk_heldout192.jsonl", 238, 66),
    ("desk_heldout193.jsonl", 239, 66),
    ("desk_heldout195.jsonl", 234, 66),
    ("desk_heldout196.jsonl", 239, 66),
    ("desk_heldout197.jsonl", 240, 66),
    ("desk_heldout198.jsonl", 238, 66),
    ("desk_heldout199.jsonl", 240, 65),
    ("desk_heldout200.jsonl", 238, 66),
    ("desk_heldout201.jsonl", 240, 66),
    ("desk_heldout202.jsonl", 240, 66),
    ("desk_heldout204.jsonl", 237, 65),
    ("desk_heldout205.jsonl", 236, 66),
    ("desk_heldout206.jsonl", 234, 66),
    ("desk_heldout207.jsonl", 240, 66),
    ("desk_heldout208.jsonl", 240, 66),
    ("desk_heldout210.jsonl", 237, 65),
    ("desk_heldout211.jsonl", 239, 66),
    ("desk_heldout212.jsonl", 238, 66),
    ("desk_heldout214.jsonl", 240, 66),
    ("desk_heldout216.jsonl", 238, 65),
    ("desk_heldout217.jsonl", 239, 66),
    ("desk_heldout218.jsonl", 240, 66),
    ("desk_heldout219.jsonl", 239, 65),
    ("desk_heldout220.jsonl", 239, 65),
    ("desk_heldout221.jsonl", 235, 66),
    ("desk_heldout222.jsonl", 240, 66),
    ("desk_heldout223.jsonl", 239, 65),
    ("desk_heldout224.jsonl", 239, 66),
    ("desk_heldout225.jsonl", 240, 65),
    ("desk_heldout227.jsonl", 237, 66),
    ("desk_heldout229.jsonl", 239, 66),
    ("desk_heldout230.jsonl", 237, 66),
    ("desk_heldout231.jsonl", 240, 65),
    ("desk_heldout232.jsonl", 239, 66),
    ("desk_heldout233.jsonl", 238, 66),
    ("desk_heldout234.jsonl", 237, 66),
    ("desk_heldout235.jsonl", 240, 65),
    ("desk_heldout236.jsonl", 237, 66),
    ("desk_heldout237.jsonl", 240, 65),
    ("desk_heldout239.jsonl", 240, 65),
    ("desk_heldout240.jsonl", 238, 66),
    ("desk_heldout243.jsonl", 239, 66),
    ("desk_heldout245.jsonl", 240, 66),
    ("desk_heldout246.jsonl", 238, 65),
    ("desk_heldout248.jsonl", 240, 65),
    ("desk_heldout249.jsonl", 240, 65),
    ("desk_heldout251.jsonl", 239, 66),
    ("desk_heldout252.jsonl", 240, 66),
    ("desk_heldout253.jsonl", 238, 65),
    ("desk_heldout254.jsonl", 240, 66),
    ("desk_heldout255.jsonl", 239, 66),
    ("desk_heldout257.jsonl", 239, 65),
    ("desk_heldout259.jsonl", 240, 66),
    ("desk_heldout260.jsonl", 239, 65),
    ("desk_heldout262.jsonl", 238, 66),
    ("desk_heldout263.jsonl", 240, 66),
    ("desk_heldout264.jsonl", 238, 66),
    ("desk_heldout265.jsonl", 239, 66),
    ("desk_heldout266.jsonl", 236, 66),
    ("desk_heldout268.jsonl", 240, 65),
    ("desk_heldout270.jsonl", 239, 66),
    ("desk_heldout272.jsonl", 240, 66),
    ("desk_heldout273.jsonl", 237, 66),
    ("desk_heldout274.jsonl", 239, 66),
    ("desk_heldout276.jsonl", 239, 65),
    ("desk_heldout278.jsonl", 239, 66),
    ("desk_heldout279.jsonl", 238, 65),
    ("desk_heldout280.jsonl", 240, 66),
    ("desk_heldout281.jsonl", 232, 66),
    ("desk_heldout282.jsonl", 237, 66),
    ("desk_heldout283.jsonl", 237, 65),
    ("desk_heldout284.jsonl", 239, 66),
    ("desk_heldout288.jsonl", 240, 66),
    ("desk_heldout289.jsonl", 240, 66),
    # desk_heldout14 is left out here: one of its approvals answers an agent's message its
    # writer did not label a proposal (left as written: the desk is held out); so is
    # desk_heldout34, where one approval answers a trader's reply to an agent's card, and
    # desk_heldout53, where one answers a message its writer labelled a change of view;
    # desk_heldout64 (two) and desk_heldout66 (one) have approvals that answer a message
    # their writers did not label a proposal (counted, not read: the desks are held out);
    # so does one approval of desk_heldout102 (counted likewise), one of desk_heldout124
    # (likewise), one of desk_heldout129 (likewise), one of desk_heldout134 (likewise),
    # one of desk_heldout140 (likewise), one of desk_heldout153 and one of desk_heldout154
    # (likewise), one of desk_heldout164, one of desk_heldout172 and one of desk_heldout176
    # (likewise), one of desk_heldout194 (likewise), one of each of
    # the development desks desk_heldout109, 125, 127, 131, 132, 150, 157, 161, 173, 203,
    # 209 and 215, one of desk_heldout213 (held out: counted, not read), one of
    # desk_heldout226 (likewise) and one of the development desk desk_heldout228,
    # and three of desk_heldout137 and of desk_heldout143; one of desk_heldout238 (held
    # out: counted, not read) answers a message its writer did not label a proposal, and
    # one of the development desk desk_heldout241 a message its writer labelled a change
    # of view; one each of desk_heldout242 and 244 (held out: counted, not read) and of the
    # development desk desk_heldout247 answers a message its writer did not label a proposal;
    # one of desk_heldout250 (held out: counted, not read) a message labelled a change of view;
    # one of desk_heldout256 (held out: counted, not read) and two of the development desk
    # desk_heldout258 answer a message their writers did not label a proposal; two of
    # desk_heldout261 (held out: counted, not read) likewise; three of desk_heldout267 (held
    # out: counted, not read) and one each of the development desks desk_heldout269 and 271
    # likewise; one each of the development desks desk_heldout275 and 277 likewise; one of
    # desk_heldout285 and two of desk_heldout286 (held out: counted, not read) and one of the
    # development desk desk_heldout287 likewise
]


@pytest.mark.parametrize("number", range(113, 290))
def test_the_desks_written_from_the_brief_pass_its_checker(number: int) -> None:
    # desk_heldout113 to 289 were written from bench/data/WRITING_BRIEF.md, their writers
    # running bench/data/check_desk.py until it printed OK; an edit that breaks its format,
    # its labels or its 24 hours fails here
    rows = load_independent(DATA / f"desk_heldout{number}.jsonl")
    assert check_desk(rows) == []
    assert set(DECISION_TYPES) == CHECKED_TYPES  # the checker's copy of the nine types
    broken = [dict(row) for row in rows]
    decided = next(i for i, row in enumerate(rows) if row["decision"] and i > 0)
    broken[decided]["decision_text"] = "not in the message"
    broken[-1]["created_at"] = broken[0]["created_at"]
    assert [error.split(":")[0] for error in check_desk(broken)] == [
        rows[decided]["id"],
        rows[-1]["id"],
    ]


@pytest.mark.parametrize(("name", "messages", "decisions"), LABELLED_DESKS)
def test_the_new_desks_are_labelled_days_with_spans(
    name: str, messages: int, decisions: int
) -> None:
    rows = load_independent(DATA / name)
    assert len(rows) == messages and sum(1 for r in rows if r["decision"]) == decisions
    by_id = {r["id"]: r for r in rows}
    for row in rows:
        span = row["decision_text"]
        assert (span is None) == (row["decision"] is None) and (
            span is None or span in row["content"]
        )
        if row["decision"] == "trade_approval":  # an approval answers a proposal
            assert by_id[row["reply_to"]]["decision"] == "trade_proposal"
