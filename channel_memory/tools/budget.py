"""The result budget of the tools, as pure functions over compact JSON.

Every tool result is at most ``tools.result_budget_chars`` code points as sent:
compact JSON (``,``/``:`` separators, UTF-8, non-ASCII not escaped). Items are
selected before the result is built — the largest prefix that fits — never by
cropping serialized output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from channel_memory.kernel.jsonfmt import compact


def fitting_prefix(envelope: dict[str, Any], field: str, items: Sequence[Any], budget: int) -> int:
    """How many leading ``items`` fit in ``envelope[field]`` within ``budget`` characters.

    ``envelope`` is the whole result with ``field`` empty and every other value
    at its final size (counts and cursors may grow: leave them at their longest).
    """
    used = len(compact({**envelope, field: []}))
    count = 0
    for item in items:
        cost = len(compact(item)) + (1 if count else 0)
        if used + cost > budget:
            break
        used += cost
        count += 1
    return count


def fragment_length(content: str, offset: int, measure: Callable[[str], int], budget: int) -> int:
    """The most code points of ``content[offset:]`` whose result fits ``budget``.

    ``measure(piece)`` is the serialized size of the result holding ``piece``.
    JSON escaping makes that depend on the characters, so the length is found by
    bisection on the actual serialization. Python strings index by code point,
    so a fragment never splits a character.
    """
    # a fragment never holds more code points than the budget: bisect below that
    low, high = 0, min(len(content) - offset, budget)
    while low < high:
        middle = (low + high + 1) // 2
        if measure(content[offset : offset + middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return low
