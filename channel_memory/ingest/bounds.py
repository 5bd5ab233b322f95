"""Bounds of ingest: content too long and times too far ahead are refused, events past
retention are expired.

Pure functions over events and commands, so every path (native batch, peer
endpoints, the bulk import) applies the same rule with the server's clock and settings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from channel_memory.ingest.commands import (
    AddCoverageGap,
    Command,
    DeleteMessage,
    PutMessage,
)
from channel_memory.kernel.config import Settings
from channel_memory.kernel.timefmt import MICROS_PER_SECOND


@dataclass(frozen=True, slots=True)
class TimeBounds:
    """The times a server accepts at one moment.

    ``expired_before_us``: a message created before this is already past
    retention (the next retention pass would drop it). ``latest_us``: the
    latest time an event may carry (the server clock plus the allowed skew).
    """

    expired_before_us: int
    latest_us: int

    @classmethod
    def of(cls, settings: Settings, now_us: int) -> TimeBounds:
        """The bounds at ``now_us`` of ``retention.days`` and ``ingest.max_future_skew``."""
        return cls(
            expired_before_us=settings.retention.cutoff_us(now_us),
            latest_us=now_us + int(settings.ingest.max_future_skew * MICROS_PER_SECOND),
        )


def content_too_long(event: object, max_chars: int) -> bool:
    """Whether an event's message content is longer than ``max_chars`` Unicode code points.

    ``max_chars`` is ``ingest.max_content_chars``; an event without a message
    (a delete, a forget, a gap) never is.
    """
    content: str = getattr(getattr(event, "message", None), "content", "")
    return len(content) > max_chars


def command_times(command: Command) -> tuple[tuple[str, int], ...]:
    """Each client-given time of a command with the wire field it came from."""
    if isinstance(command, PutMessage):
        times = [("message.created_at", command.created_us)]
        if command.edited_us is not None:
            times.append(("message.edited_at", command.edited_us))
        return tuple(times)
    if isinstance(command, DeleteMessage):
        return () if command.deleted_us is None else (("deleted_at", command.deleted_us),)
    if isinstance(command, AddCoverageGap):
        return (("from", command.from_us), ("to", command.to_us))
    return ()


def first_too_far_ahead(commands: Iterable[Command], latest_us: int) -> tuple[int, str] | None:
    """``(index, field)`` of the first time later than ``latest_us``, else None."""
    for index, command in enumerate(commands):
        for field, at_us in command_times(command):
            if at_us > latest_us:
                return index, field
    return None


def is_expired(command: Command, expired_before_us: int) -> bool:
    """Whether a message or delete event concerns a message already past retention.

    Retention drops a message by its creation time, so a message event is
    expired when its ``created_at`` is (whatever its ``edited_at``), and a
    delete when its ``deleted_at`` is: the message it deletes was created
    earlier still. A delete timed by the receive time never is.
    """
    if isinstance(command, PutMessage):
        return command.created_us < expired_before_us
    if isinstance(command, DeleteMessage):
        return command.deleted_us is not None and command.deleted_us < expired_before_us
    return False
