"""RFC 3339 times and Go-style durations."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from channel_memory.kernel.timefmt import (
    TimeFormatError,
    format_go_duration,
    format_rfc3339,
    parse_go_duration,
    parse_rfc3339,
    parse_since,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-05-21T16:00:00Z", "2026-05-21T16:00:00Z"),
        ("2026-05-21T18:00:00+02:00", "2026-05-21T16:00:00Z"),
        ("2026-05-21t16:00:00.120z", "2026-05-21T16:00:00.12Z"),
        ("2026-05-21T16:00:00.123456789Z", "2026-05-21T16:00:00.123456Z"),
        ("1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z"),
    ],
)
def test_rfc3339_round_trip(text: str, expected: str) -> None:
    assert format_rfc3339(parse_rfc3339(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2026-05-21",
        "2026-05-21T16:00:00",
        "2026-02-30T00:00:00Z",
        "yesterday",
        "2026-05-21T16:00:00+25:00",
    ],
)
def test_rfc3339_rejects(text: str) -> None:
    with pytest.raises(TimeFormatError):
        parse_rfc3339(text)


@pytest.mark.parametrize(
    ("text", "micros", "go"),
    [
        ("24h", 86_400_000_000, "24h0m0s"),
        ("24h0m0s", 86_400_000_000, "24h0m0s"),
        ("90m", 5_400_000_000, "1h30m0s"),
        ("1.5h", 5_400_000_000, "1h30m0s"),
        ("6h", 21_600_000_000, "6h0m0s"),
        ("60s", 60_000_000, "1m0s"),
        ("250ms", 250_000, "250ms"),
        ("0", 0, "0s"),
    ],
)
def test_go_durations(text: str, micros: int, go: str) -> None:
    assert parse_go_duration(text) == micros
    assert format_go_duration(micros) == go


@pytest.mark.parametrize("text", ["", "24", "-1h", "h", "1d", "1h 30m"])
def test_go_duration_rejects(text: str) -> None:
    with pytest.raises(TimeFormatError):
        parse_go_duration(text)


@given(st.integers(min_value=0, max_value=10**15))
def test_go_duration_format_parses_back(micros: int) -> None:
    assert parse_go_duration(format_go_duration(micros)) == micros


@given(st.integers(min_value=-(10**16), max_value=4 * 10**16))
def test_rfc3339_format_parses_back(micros: int) -> None:
    assert parse_rfc3339(format_rfc3339(micros)) == micros


def test_a_since_without_its_offset_is_told_it_needs_one() -> None:
    # a new user's trial: the tools' since "2026-12-05T20:00:00" was told only "a Go
    # duration or an RFC 3339 time", as the feed's as_of is told its offset
    with pytest.raises(TimeFormatError, match="with its seconds and offset, such as 2026-"):
        parse_since("2026-12-05T20:00:00", 0)
    assert parse_since("2026-12-05T20:00:00Z", 0) == parse_rfc3339("2026-12-05T20:00:00Z")
