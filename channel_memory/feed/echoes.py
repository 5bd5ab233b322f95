"""Echoes: the same event reported again — a trader's fill, then the order system's
record of it; a stop moved in chat, then the replace record — its score weighed down
(``ECHO_WEIGHT``) when the feed cannot show every hard event, so it goes after a first
report about as sure.

A hard event is an *echo* when an earlier hard event of the same kind (a fill and a
position change count as one kind), at most ``ECHO_WINDOW_US`` before it, shares at least
``ECHO_SHARED_NUMBERS`` of its numbers (sizes and prices, read with thousands separators,
decimal commas and ``k``/``m`` suffixes; clock times, dates and the digits of identifiers
such as ``ORD-88213`` do not count; a text is read up to ``READ_CHARS``), and it is at
most ``ECHO_MAX_CHARS`` long (a report that recaps a fill among other things is not an
echo of it). Pure and deterministic: the same items give the same echoes on every host
and in any order; the work is bounded (each value is looked up among its
``ECHO_CANDIDATES`` latest reports, every repetition in the number pattern is bounded).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

ECHO_WINDOW_US = 30 * 60 * 1_000_000
"""How long after a report a restatement of it counts as its echo."""
ECHO_SHARED_NUMBERS = 2
"""How many numbers an echo shares with the report it restates (a size and a price)."""
ECHO_MAX_CHARS = 400
"""The longest message that can be an echo: a record or a one-line restatement."""
ECHO_CANDIDATES = 32
"""The most recent reports of each value an echo is looked for among: bounded work."""
READ_CHARS = 2_000
"""How much of a first report its numbers are read from (a long report's head)."""
ECHO_WEIGHT = 0.6
"""The factor an echo's score gets when the feed orders hard events: a quarter until the
ranker and the desk reading learnt echoes as no decision (ADRs 0032 and 0075). On the
forty-eight untrained development desks, a quarter 1,610 / 2,082 / 2,518 of 3,151 decisions
verbatim at 6,000 / 8,192 / 12,000; 0.4 1,615 / 2,099 / 2,542; 0.5 1,620 / 2,110 / 2,539;
0.6 1,629 / 2,110 / 2,542; 0.75 1,633 / 2,106 / 2,542; 1 1,620 / 2,102 / 2,537. Of their
hard events read as echoes, a quarter are labelled decisions (134 of 536; of the first
reports, 2,906 of 6,358)."""
READINGS_CACHED = 4096
"""Texts whose numbers are kept read: a feed polled again reads the same hard events."""
_KIND = {"position_change": "trade_fill"}
"""Event types that report the same kind of event."""

_CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b|\b\d{4}-\d{2}-\d{2}(?:T[\d:.]{0,15}Z?)?")
_NUMBER = re.compile(
    r"(?<![\w/-])"
    r"(\d{1,3}(?:,\d{3}){1,5}(?:\.\d{1,8})?|\d{1,3}(?:\.\d{3}){1,5}(?:,\d{1,8})?"
    r"|\d{0,15}[.,]?\d{1,15})"
    r"(?:\s?([kKmM])(?![a-zA-Z]))?(?![\w-])"
)
"""Every repetition bounded: a run of a million digits costs a linear scan, not a
quadratic backtrack."""
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3}){1,5}(?:\.\d{1,8})?")
_EUROPEAN = re.compile(r"\d{1,3}(?:\.\d{3}){1,5}(?:,\d{1,8})?")
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
    for match in _NUMBER.finditer(_CLOCK.sub(" ", text[:READ_CHARS])):
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


def echo_keys(items: Sequence[Reported]) -> frozenset[str]:
    """The keys of the items that echo an earlier one (see the module docstring).

    Earlier reports are found through the values they state (from each value to the
    ``ECHO_CANDIDATES`` latest reports that state it), so the work grows with the reports
    that share a number, not with every pair of hard events.
    """
    ordered = sorted(items, key=lambda i: (i.first_us, i.key))
    by_value: dict[float, deque[Reported]] = {}
    echoes = set()
    for later in ordered:
        kind = _kind(later)
        if len(later.text) <= ECHO_MAX_CHARS:
            shared: dict[str, int] = {}
            for read in readings(later.text):
                candidates = {
                    earlier.key
                    for value in read
                    for earlier in by_value.get(value, ())
                    if later.first_us - earlier.first_us <= ECHO_WINDOW_US
                    and _kind(earlier) == kind
                }
                for key in candidates:  # each of my numbers counts once per report
                    shared[key] = shared.get(key, 0) + 1
            if any(count >= ECHO_SHARED_NUMBERS for count in shared.values()):
                echoes.add(later.key)
        for value in numbers(later.text):
            recent = by_value.get(value)
            if recent is None:
                recent = by_value[value] = deque(maxlen=ECHO_CANDIDATES)
            recent.append(later)
    return frozenset(echoes)


def _kind(item: Reported) -> str | None:
    return _KIND.get(item.event_type or "", item.event_type)
