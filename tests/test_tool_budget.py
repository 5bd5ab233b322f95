"""The tools' result budget, as pure functions: the largest prefix of items that fits,
and the longest fragment of a message whose result fits, measured on the JSON as sent."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from channel_memory.tools.budget import compact, fitting_prefix, fragment_length


def test_compact_is_the_json_as_sent() -> None:
    data = {"a": [1, 2], "text": "café — ✓", "q": 'say "hi"\n'}
    assert compact(data) == '{"a":[1,2],"text":"café — ✓","q":"say \\"hi\\"\\n"}'
    assert json.loads(compact(data)) == data


def test_the_prefix_fills_the_budget_exactly() -> None:
    envelope = {"messages": [], "next_cursor": "c" * 10}
    items = [{"id": n, "text": "x" * 20} for n in range(5)]
    for count in range(6):
        exact = len(compact({**envelope, "messages": items[:count]}))
        assert fitting_prefix(envelope, "messages", items, exact) == count
        assert fitting_prefix(envelope, "messages", items, exact - 1) == max(0, count - 1)


def test_the_prefix_stops_at_the_first_item_that_does_not_fit() -> None:
    envelope: dict[str, object] = {"results": []}
    items = [{"t": "a"}, {"t": "b" * 100}, {"t": "c"}]
    # the third would fit on its own, but results are a prefix: never skip an item
    budget = len(compact({"results": [items[0], items[2]]}))
    assert fitting_prefix(envelope, "results", items, budget) == 1


def test_an_envelope_over_budget_fits_nothing() -> None:
    assert fitting_prefix({"results": [], "pad": "p" * 50}, "results", [{"a": 1}], 20) == 0


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(max_size=40), max_size=8),
    budget=st.integers(0, 400),
)
def test_the_prefix_is_the_largest_that_fits(texts: list[str], budget: int) -> None:
    envelope: dict[str, object] = {"results": [], "cursor": None}
    items = [{"text": t} for t in texts]
    count = fitting_prefix(envelope, "results", items, budget)
    size = len(compact({**envelope, "results": items[:count]}))
    if count:
        assert size <= budget
    if count < len(items):
        assert len(compact({**envelope, "results": items[: count + 1]})) > budget


def _measure(piece: str) -> int:
    return len(compact({"content": piece, "offset": 0, "next_cursor": "c" * 20}))


@settings(max_examples=200, deadline=None)
@given(
    content=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=300),
    offset=st.integers(0, 50),
    budget=st.integers(0, 600),
)
def test_the_fragment_is_the_longest_that_fits(content: str, offset: int, budget: int) -> None:
    offset = min(offset, len(content))
    length = fragment_length(content, offset, _measure, budget)
    assert 0 <= length <= len(content) - offset
    if length:
        assert _measure(content[offset : offset + length]) <= budget
    if length < len(content) - offset:
        assert _measure(content[offset : offset + length + 1]) > budget


def test_escaping_is_measured_not_guessed() -> None:
    plain = "a" * 100
    quoted = '"' * 100  # each escaped to two characters
    budget = _measure("") + 40
    assert fragment_length(plain, 0, _measure, budget) == 40
    assert fragment_length(quoted, 0, _measure, budget) == 20
    assert fragment_length("é" * 100, 0, _measure, budget) == 40  # not escaped: one each
