"""Pure helpers that read a served text feed back into its items, for the structured view.

The text body is the one the proxy receives; reading its metadata lines (a content line
always starts with ``> ``, so content can never pass for one) gives exactly the items it
holds, in order.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from channel_memory.feed.layout import HARD_LABELS, KIND_LABELS, is_kind
from channel_memory.kernel.models import HARD_EVENT_BLOCK, TOMBSTONE_BLOCK

_ITEM = re.compile(r"^\[(\d\d:\d\d(?:-(?:\d\d-\d\dT)?\d\d:\d\d)?) (.*)\]$")
_SECTION = re.compile(r"^\[[a-z ]+; (?:channel (\S+), )?trust ")
_BLOCK_ID = re.compile(r"^id=([a-z0-9]{1,64})$")
_QUOTED = r'"(?:[^"\\]|\\.)*"'
"""A JSON-quoted string (an author's name, a handle of another channel)."""
_LEGEND = re.compile(r"^\[authors: (.*)\]$")
_TOKEN = re.compile(rf"(?:{_QUOTED}|[^\s\"])+")
_ENTRY = re.compile(rf"(\S+) = ({_QUOTED}|[^\s,]+)(?:, |$)")
_KINDS = {label: kind for kind, label in KIND_LABELS.items()}
_HARD = frozenset(HARD_LABELS.values())


@dataclass(frozen=True, slots=True)
class ServedItem:
    """One item of a served text feed."""

    time: str
    kind: str
    """The block kind (``hard_event``, ``sequence_rollup``…); ``message`` when verbatim."""
    label: str
    """The feed's own kind label (``fill``, ``hard:custom``, ``sequence``) or empty."""
    channel_id: str
    message_id: str
    more: int
    """How many more messages the item covers (the ``+N``)."""
    block_id: str | None
    """The block id the line names (only lines covering several messages carry one)."""
    chars: int
    """Characters the item takes in the body, its metadata line included."""
    content: tuple[str, ...] = ()
    """Its quoted lines, each without the ``> ``."""
    author: str | None = None
    """The author's name as given (an alias read through the ``[authors: …]`` line), for
    an item showing one message; None for a rollup or an author the feed calls unknown."""

    @property
    def handle(self) -> str:
        return f"{self.channel_id}/{self.message_id}"


def served_items(body: str) -> list[ServedItem]:
    """The items of a text feed body, in order."""
    items: list[ServedItem] = []
    lines = body.split("\n")
    channel = ""  # a feed of one channel writes handles as message ids, its sections name it
    names: dict[str, str] = {}  # alias -> author, from the body's [authors: …] line
    for index, line in enumerate(lines):
        section = _SECTION.match(line)
        if section is not None:
            channel = section.group(1) or ""
            continue
        legend = _LEGEND.match(line)
        if legend is not None:
            names = {m.group(1): _name(m.group(2)) for m in _ENTRY.finditer(legend.group(1))}
            continue
        match = _ITEM.match(line)
        if match is None:
            continue
        tokens = _TOKEN.findall(match.group(2))
        # a lone token is a handle, whatever it is spelled like
        label = tokens.pop(0) if len(tokens) > 1 and is_kind(tokens[0]) else ""
        handle, _, more = tokens[0].partition("+")
        channel_id, _, message_id = (
            handle.partition("/") if "/" in handle else (channel, "", handle)
        )
        block_id = None
        if more:
            # only a line covering several messages names its block, and it has no author
            # token that could hold a look-alike
            block_id = next((m.group(1) for t in tokens[1:] if (m := _BLOCK_ID.match(t))), None)
        author = None
        if not more and _kind(label) in (HARD_EVENT_BLOCK, "message"):
            # one message's line: its author follows the handle and any ``re:`` and
            # ``decided:`` reference (an author holding a colon is quoted)
            rest = [t for t in tokens[1:] if not t.startswith(("re:", "decided:"))]
            if rest and rest[0] != "unknown":
                # an alias the legend names (a name spelled like one is quoted)
                author = names.get(rest[0]) or _name(rest[0])
        chars = len(line) + 1
        content = []
        for following in lines[index + 1 :]:
            if not following.startswith("> "):
                break
            chars += len(following) + 1
            content.append(following[2:])
        items.append(
            ServedItem(
                time=match.group(1),
                kind=_kind(label),
                label=label,
                channel_id=channel_id,
                message_id=message_id,
                more=int(more) if more.isdigit() else 0,
                block_id=block_id,
                chars=chars,
                content=tuple(content),
                author=author,
            )
        )
    return items


def _name(token: str) -> str:
    """An author token as written: JSON-quoted, or one bare word."""
    return str(json.loads(token)) if token.startswith('"') else token


def _kind(label: str) -> str:
    if label in _HARD or label.startswith("hard:"):
        return HARD_EVENT_BLOCK
    if label == TOMBSTONE_BLOCK:
        return TOMBSTONE_BLOCK
    return _KINDS.get(label, label or "message")


def datetime_local_to_rfc3339(value: str) -> str:
    """A ``datetime-local`` picker value (``2026-05-21T14:02``, seconds optional), read
    as UTC, as an RFC 3339 time; anything else unchanged (the feed's parser judges it)."""
    if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d", value):
        return value + ":00Z"
    if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?", value):
        return value + "Z"
    return value
