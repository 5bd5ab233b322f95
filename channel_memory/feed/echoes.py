"""Echoes: the same event reported again — a trader's fill, then the order system's
record of it; a stop moved in chat, then the replace record — ranked after the first
report when the feed cannot show every hard event.

A hard event is an *echo* when an earlier hard event of the same kind (a fill and a
position change count as one kind), at most ``ECHO_WINDOW_US`` before it, shares at least
``ECHO_SHARED_NUMBERS`` of its numbers (sizes and prices, read with thousands separators,
decimal commas and ``k``/``m`` suffixes; clock times, dates and the digits of identifiers
such as ``ORD-88213`` do not count), and it is at most ``ECHO_MAX_CHARS`` long (a report
that recaps a fill among other things is not an echo of it). Pure and deterministic:
the same items give the same echoes on every host.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

ECHO_WINDOW_US = 30 * 60 * 1_000_000
"""How long after a report a restatement of it counts as its echo."""
ECHO_SHARED_NUMBERS = 2
"""How many numbers an echo shares with the report it restates (a size and a price)."""
ECHO_MAX_CHARS = 400
"""The longest message that can be an echo: a record or a one-line restatement."""
ECHO_WEIGHT = 0.25
"""The factor an echo's score gets when the feed orders hard events."""
READINGS_CACHED = 4096
"""Texts whose numbers are kept read: a feed polled again reads the same hard events."""
_KIND = {"position_change": "trade_fill"}
"""Event types that report the same kind of event."""

_CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b|\b\d{4}-\d{2}-\d{2}(?:T[\d:.]{0,15}Z?)?")
_NUMBER = re.compile(
    r"(?<![\w/-])"
    r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d*[.,]?\d+)"
    r"(?:\s?([kKmM])(?![a-zA-Z]))?(?![\w-])"
)
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_EUROPEAN = re.compile(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?")
_AMBIGUOUS = re.compile(r"\d{1,3}[.,]\d{3}")
"""One group of three digits after a single separator: thousands, or three decimals."""


class Reported(Protocol):
    """What echo detection reads of a hard event."""

    @property
    def key(self) -> str: ...
    @property
    def event_type(self) -> str | None: ...
    @property
    def first_us(self) -> int: ...
    @property
    def text(self) -> str: ...


@lru_cache(maxsize=READINGS_CACHED)
def readings(text: str) -> frozenset[frozenset[float]]:
    """The sizes and prices ``text`` states, each as the values it can be read as:
    ``15k`` and ``15,000`` are one number, ``129,40`` and ``129.40`` another; a number
    that reads both ways (``107.120``, ``4.180``: a price with three decimals, or a
    thousands separator) is both; clock times, dates and identifiers' digits are left
    out."""
    found = set()
    for match in _NUMBER.finditer(_CLOCK.sub(" ", text)):
        digits, suffix = match.group(1), match.group(2)
        if _AMBIGUOUS.fullmatch(digits):
            values = [
                float(digits.replace(",", "").replace(".", "")),
                float(digits.replace(",", ".")),
            ]
        elif _THOUSANDS.fullmatch(digits):
            values = [float(digits.replace(",", ""))]
        elif _EUROPEAN.fullmatch(digits):
            values = [float(digits.replace(".", "").replace(",", "."))]
        else:
            values = [float(digits.replace(",", "."))]
        scale = 1 if not suffix else 1_000 if suffix in "kK" else 1_000_000
        # 6 significant digits: 1.16280 and 1.1628 are one value
        read = frozenset(float(f"{value * scale:.6g}") for value in values if value)
        if read:
            found.add(read)
    return frozenset(found)


@lru_cache(maxsize=READINGS_CACHED)
def numbers(text: str) -> frozenset[float]:
    """Every value the numbers of ``text`` can be read as (see :func:`readings`)."""
    return frozenset(value for read in readings(text) for value in read)


def _shared(mine: frozenset[frozenset[float]], theirs: frozenset[float]) -> int:
    """How many of one message's numbers the other states (each number counted once)."""
    return sum(1 for read in mine if read & theirs)


def echo_keys(items: Sequence[Reported]) -> frozenset[str]:
    """The keys of the items that echo an earlier one (see the module docstring)."""
    ordered = sorted(items, key=lambda i: (i.first_us, i.key))
    found: dict[str, frozenset[float]] = {}
    echoes = set()
    for n, later in enumerate(ordered):
        if len(later.text) > ECHO_MAX_CHARS:
            continue
        kind = _KIND.get(later.event_type or "", later.event_type)
        mine = readings(later.text)
        if len(mine) < ECHO_SHARED_NUMBERS:
            continue
        for earlier in reversed(ordered[:n]):
            if later.first_us - earlier.first_us > ECHO_WINDOW_US:
                break
            if _KIND.get(earlier.event_type or "", earlier.event_type) != kind:
                continue
            theirs = found.get(earlier.key)
            if theirs is None:
                theirs = found[earlier.key] = numbers(earlier.text)
            if _shared(mine, theirs) >= ECHO_SHARED_NUMBERS:
                echoes.add(later.key)
                break
    return frozenset(echoes)
