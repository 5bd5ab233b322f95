"""The hard-event texts of ``worker/render.py`` as pure functions: clause cuts over given
spans, decision-line cuts, the near-verbatim rule, and grammatical counts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from channel_memory.worker.render import (
    ELLIPSIS,
    RenderSettings,
    clause_cut,
    counted,
    decision_cut,
)
from channel_memory.worker.rules import default_rules

RULES = default_rules()
DECISION = "stop moved to 6650 on NQ"
REPORT = f"Morning all.\nlunch is late today\nweather is nice\n{DECISION}\nsee you"


def _span(content: str, part: str) -> tuple[int, int]:
    start = content.index(part)
    return start, start + len(part)


# --- clause_cut -----------------------------------------------------------------------------


def test_no_clause_means_no_cut() -> None:
    assert clause_cut("anything at all", []) is None


def test_a_clause_inside_a_line_is_marked_where_text_is_left_out() -> None:
    content = "Morning. We buy 5 ES at 6700. Lunch is late."
    cut = clause_cut(content, [_span(content, "We buy 5 ES at 6700.")])
    assert cut == f"{ELLIPSIS} We buy 5 ES at 6700. {ELLIPSIS}"


def test_a_clause_filling_its_line_gets_a_marker_only_for_lines_left_out() -> None:
    content = "buy 5 ES\nsome chatter that goes on for a while\nsell 2 NQ"
    spans = [_span(content, "buy 5 ES"), _span(content, "sell 2 NQ")]
    assert clause_cut(content, spans) == f"buy 5 ES\n{ELLIPSIS} sell 2 NQ"
    content = "buy 5 ES\n\nsell 2 NQ\nsome chatter that goes on for a while"
    spans = [_span(content, "buy 5 ES"), _span(content, "sell 2 NQ")]
    assert clause_cut(content, spans) == f"buy 5 ES\nsell 2 NQ {ELLIPSIS}"


def test_adjacent_clauses_stay_one_run_of_the_original() -> None:
    content = "We buy 5 ES. Stop at 6650. Then lunch, which is a long story really."
    spans = [_span(content, "We buy 5 ES."), _span(content, "Stop at 6650.")]
    assert clause_cut(content, spans) == f"We buy 5 ES. Stop at 6650. {ELLIPSIS}"


def test_separated_clauses_in_one_line_are_joined_by_a_marker() -> None:
    content = "We buy 5 ES. The weather is lovely here. Stop at 6650."
    spans = [_span(content, "We buy 5 ES."), _span(content, "Stop at 6650.")]
    assert clause_cut(content, spans) == f"We buy 5 ES. {ELLIPSIS} Stop at 6650."


def test_a_cut_that_saves_nothing_is_not_made() -> None:
    content = "buy 5 ES"
    assert clause_cut(content, [(0, len(content))]) is None


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.text(st.characters(exclude_characters="\n…"), max_size=30), min_size=1),
    data=st.data(),
)
def test_every_kept_clause_appears_verbatim_and_the_cut_is_shorter(
    lines: list[str], data: st.DataObject
) -> None:
    content = "\n".join(lines)
    picks = sorted(data.draw(st.sets(st.integers(0, len(lines) - 1), max_size=len(lines))))
    spans = []
    offset = 0
    starts = []
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    for n in picks:
        stripped = lines[n].strip()
        if stripped:
            lead = lines[n].index(stripped)
            spans.append((starts[n] + lead, starts[n] + lead + len(stripped)))
    cut = clause_cut(content, spans)
    if cut is None:
        return
    assert len(cut) < len(content)
    kept = [
        line.removeprefix(f"{ELLIPSIS} ").removesuffix(f" {ELLIPSIS}") for line in cut.split("\n")
    ]
    for start, end in spans:
        assert content[start:end] in kept
    # a line left out is marked: every cut that drops a line says so
    if any(line.strip() and n not in picks for n, line in enumerate(lines)):
        assert ELLIPSIS in cut


# --- decision_cut ---------------------------------------------------------------------------


def test_a_decision_cut_marks_each_run_of_lines_left_out_where_it_was() -> None:
    settings_ = RenderSettings(RULES, 20, "t")
    cut = decision_cut(REPORT, settings_)
    # "see you" is shorter than its mark would be: it stays as it was
    assert cut == f"Morning all.\n[… 2 lines elided]\n{DECISION}\nsee you"


def test_lines_left_out_after_the_last_kept_one_are_marked_after_it() -> None:
    tail = "the rest of the morning was quiet on every screen\nlunch is at one as usual"
    content = f"Morning all.\n{DECISION}\n{tail}"
    cut = decision_cut(content, RenderSettings(RULES, 10, "t"))
    assert cut == f"Morning all.\n{DECISION}\n[… 2 lines elided]"


def test_blank_lines_are_neither_counted_nor_marked_and_a_cut_is_never_longer() -> None:
    """Blank lines between kept ones stay as they were; only written lines count; a cut
    that would not be shorter is the message itself (a review: fills a blank line apart
    stored longer than the message)."""
    fills = "\n\n".join(f"filled {n}00 ES @ 67{n}0" for n in range(1, 9))
    content = f"Fills today:\n\n{fills}"
    assert decision_cut(content, RenderSettings(RULES, 10, "t")) == content
    chatter = "the tape was thin all morning and nobody wanted to trade size"
    mixed = f"Morning all.\n\n{chatter}\n\n{chatter}\n\n{DECISION}\n"
    assert decision_cut(mixed, RenderSettings(RULES, 10, "t")) == (
        f"Morning all.\n[… 2 lines elided]\n{DECISION}\n"
    )


def test_nothing_to_elide_adds_no_marker() -> None:
    content = f"Morning all.\n{DECISION}"
    assert decision_cut(content, RenderSettings(RULES, 10, "t")) == content


# --- counts ---------------------------------------------------------------------------------


def test_counts_are_grammatical() -> None:
    assert counted(1, "message") == "1 message"
    assert counted(0, "message") == "0 messages"
    assert counted(2, "author") == "2 authors"
