"""Time: the clock, the units, and the wire formats (RFC 3339, Go-style durations).

Timestamps are held as integer microseconds since the Unix epoch (UTC) so they
compare and sort exactly; they are rendered back as RFC 3339 in UTC with a
fraction only when one is present, as Go's ``time.RFC3339Nano`` does.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICROSECOND = timedelta(microseconds=1)
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_US = {
    "ns": Decimal("0.001"),
    "us": Decimal(1),
    "µs": Decimal(1),
    "μs": Decimal(1),
    "ms": Decimal(1_000),
    "s": Decimal(1_000_000),
    "m": Decimal(60_000_000),
    "h": Decimal(3_600_000_000),
}

MICROS_PER_SECOND = 1_000_000
MICROS_PER_DAY = 86_400 * MICROS_PER_SECOND

Clock = Callable[[], int]
"""Returns the current time in UTC epoch microseconds; injected so tests control time."""


def wall_clock() -> int:
    """The system's current time in UTC epoch microseconds (the production ``Clock``)."""
    return time.time_ns() // 1_000


def utc_day(micros: int) -> int:
    """The start of the UTC day holding ``micros`` (daily LLM caps count per UTC day)."""
    return micros - micros % MICROS_PER_DAY


class TimeFormatError(ValueError):
    """A value is not a valid RFC 3339 time or Go duration."""


def parse_rfc3339(value: str) -> int:
    """Parse an RFC 3339 timestamp (offset required) into UTC epoch microseconds.

    Fractions finer than a microsecond are truncated. Raises ``TimeFormatError``.
    """
    match = _RFC3339.match(value)
    if match is None:
        raise TimeFormatError("must be an RFC 3339 time with a UTC offset")
    fraction, offset = match.group(7), match.group(8)
    text = value[:19].replace("t", "T").replace(" ", "T")
    if fraction:
        text += "." + fraction[:6].ljust(6, "0")
    text += "+00:00" if offset in ("Z", "z") else offset
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise TimeFormatError("must be an RFC 3339 time with a valid date and offset") from exc
    return datetime_to_micros(moment)


def format_rfc3339(micros: int) -> str:
    """Render epoch microseconds as RFC 3339 UTC (``2026-05-21T16:00:00Z``)."""
    moment = _EPOCH + timedelta(microseconds=micros)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += "." + f"{moment.microsecond:06d}".rstrip("0")
    return text + "Z"


def format_generated(micros: int) -> str:
    """A worker's generation time, to the second (``2026-05-21T19:59:58Z``): always the same
    width, so how long a budgeted body's header is never depends on when blocks were made."""
    return format_rfc3339(micros - micros % 1_000_000)


def datetime_to_micros(moment: datetime) -> int:
    """Convert an aware datetime into UTC epoch microseconds."""
    return (moment - _EPOCH) // _ONE_MICROSECOND


def parse_go_duration(value: str) -> int:
    """Parse a Go-style duration (``24h``, ``90m``, ``1h30m``, ``24h0m0s``) into microseconds.

    Negative durations are refused. Raises ``TimeFormatError``.
    """
    text = value.strip()
    if text in ("0", "+0"):
        return 0
    if text.startswith("+"):
        text = text[1:]
    if not text or text.startswith("-"):
        raise TimeFormatError("must be a non-negative Go duration such as 24h or 90m")
    total = Decimal(0)
    position = 0
    for match in _DURATION_PART.finditer(text):
        if match.start() != position:
            break
        total += Decimal(match.group(1)) * _UNIT_US[match.group(2)]
        position = match.end()
    if position != len(text):
        raise TimeFormatError("must be a non-negative Go duration such as 24h or 90m")
    return int(total)


def format_go_duration(micros: int) -> str:
    """Render microseconds the way Go's ``time.Duration.String`` does (``24h0m0s``)."""
    if micros == 0:
        return "0s"
    sign = "-" if micros < 0 else ""
    micros = abs(micros)
    if micros < MICROS_PER_SECOND:
        if micros < 1_000:
            return f"{sign}{micros}µs"
        return f"{sign}{_trim(micros / 1_000)}ms"
    hours, rest = divmod(micros, 3_600 * MICROS_PER_SECOND)
    minutes, rest = divmod(rest, 60 * MICROS_PER_SECOND)
    seconds = _trim(rest / MICROS_PER_SECOND)
    if hours:
        return f"{sign}{hours}h{minutes}m{seconds}s"
    if minutes:
        return f"{sign}{minutes}m{seconds}s"
    return f"{sign}{seconds}s"


def _trim(number: float) -> str:
    text = f"{number:.6f}".rstrip("0").rstrip(".")
    return text or "0"


def parse_since(value: str | None, now_us: int, default: str = "24h") -> int:
    """The start of a window: a Go duration before ``now_us`` or an RFC 3339 time, never
    before the epoch (a window reaching further back starts there: everything retained; a
    start beyond 64-bit microseconds would not bind to a query).

    Raises ``TimeFormatError``.
    """
    text = (value or "").strip() or default
    try:
        return max(0, now_us - parse_go_duration(text))
    except TimeFormatError:
        pass
    try:
        return max(0, parse_rfc3339(text))
    except TimeFormatError:
        raise TimeFormatError(
            "must be a Go duration (24h, 90m) or an RFC 3339 time with its seconds and offset,"
            " such as 2026-12-05T20:00:00Z"
        ) from None
