"""Pure layout of the inspector's server-rendered SVG bar charts (no script, no styles)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH = 640
LABEL_WIDTH = 150
BAR_HEIGHT = 22
GAP = 8
COLOURS = ("#3b6ea5", "#c0504d", "#9bbb59", "#8064a2", "#f79646", "#4bacc6")


@dataclass(frozen=True, slots=True)
class Segment:
    x: int
    width: int
    colour: str
    title: str


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    y: int
    segments: tuple[Segment, ...]
    total: int
    text_x: int


@dataclass(frozen=True, slots=True)
class Chart:
    width: int
    height: int
    bars: tuple[Bar, ...]
    legend: tuple[tuple[str, str], ...]
    """``(colour, name)`` of each series."""


def stacked_bars(
    rows: Sequence[tuple[str, Sequence[int]]], series: Sequence[str], *, scale_to: int = 0
) -> Chart:
    """Horizontal stacked bars, one per ``(label, values per series)`` row, on one scale
    (the largest row total, or ``scale_to`` when larger)."""
    largest = max([scale_to, *(sum(values) for _, values in rows), 1])
    room = WIDTH - LABEL_WIDTH - 90
    bars = []
    for index, (label, values) in enumerate(rows):
        x = LABEL_WIDTH
        segments = []
        for position, value in enumerate(values):
            width = round(value * room / largest)
            colour = COLOURS[position % len(COLOURS)]
            segments.append(Segment(x, width, colour, f"{series[position]}: {value:,}"))
            x += width
        bars.append(
            Bar(label, GAP + index * (BAR_HEIGHT + GAP), tuple(segments), sum(values), x + 6)
        )
    legend = tuple((COLOURS[i % len(COLOURS)], name) for i, name in enumerate(series))
    return Chart(WIDTH, GAP + len(rows) * (BAR_HEIGHT + GAP), tuple(bars), legend)
