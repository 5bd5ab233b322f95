"""Checking one line of a JSON Lines import: what is wrong with it, never what it holds.

The bulk import checks every line before writing anything; the answer for a
bad line names its fields and unknown keys (``<key>`` when a key does not look
like a field name: it may be content) but never a value.
"""

from __future__ import annotations

import re

from pydantic import ValidationError

from channel_memory.ingest.bounds import TimeBounds, content_too_long, first_too_far_ahead
from channel_memory.ingest.events import IngestBatch
from channel_memory.kernel.config import Settings
from channel_memory.kernel.errors import validation_error
from channel_memory.kernel.models import DEFAULT_SOURCE_KIND
from channel_memory.kernel.wire import ErrorDetail

MAX_PROBLEMS = 5
"""Problems listed per line; a line this broken is better read than described."""
_OWN_MESSAGES = frozenset({"value_error", "empty_content"})
"""Error types whose message is one of this project's own texts (never the input)."""


_BATCH = re.compile(r'\s*\{\s*"events"\s*:\s*\[')
"""A line that opens an ingest batch (``{"events": [``) rather than one event."""


def _why(detail: ErrorDetail) -> str:
    if detail.code == "extra_forbidden":
        return "unknown key"
    if detail.code in _OWN_MESSAGES:
        return detail.message.removeprefix("Value error, ")
    return detail.code


def line_problem(line: str, settings: Settings, now_us: int) -> str | None:
    """What is wrong with one native event (one JSON Lines line), or None when it is fine.

    ``"<code>, field <field> (<why>); field <field> (<why>)"``: unknown keys
    first (a misspelt key is the cause, the missing field its consequence).
    Checked as ``POST /v1/ingest`` checks an event: its shape, its content
    length and its times against the clock ``now_us`` plus
    ``ingest.max_future_skew``.
    """
    try:
        batch = IngestBatch.model_validate_json('{"events":[' + line.strip() + "]}")
    except ValidationError as exc:
        error = validation_error(exc, batch_field="events")
        if error.code == "invalid_json":
            return error.code
        if _BATCH.match(line) is not None:
            # a whole POST /v1/ingest body on a line: the import reads one event per line
            return (
                'validation_failed, a {"events": [...]} batch (the body POST /v1/ingest '
                "takes); this import reads one event per line (JSON Lines)"
            )
        details = sorted(error.details, key=lambda d: d.code != "extra_forbidden")
        fields = "; ".join(
            f"field {d.field or 'event'} ({_why(d)})" for d in details[:MAX_PROBLEMS]
        )
        return f"{error.code}, {fields}"
    event = batch.events[0]
    if content_too_long(event, settings.ingest.max_content_chars):
        return "content_too_long, field message.content (longer than ingest.max_content_chars)"
    ahead = first_too_far_ahead(
        [event.to_command(event.source_kind or DEFAULT_SOURCE_KIND)],
        TimeBounds.of(settings, now_us).latest_us,
    )
    if ahead is not None:
        return (
            f"validation_failed, field {ahead[1]} "
            "(more than ingest.max_future_skew ahead of the clock)"
        )
    return None
