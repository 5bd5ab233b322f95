"""The feed's decisions, as pure functions: what to serve under a budget, and how it reads.

Input is a :class:`Candidates` (what the window holds, in priority tiers, newest
first); output is the body, text or JSON, never longer than ``max_chars`` code
points. Priority: the header, then coverage gaps (at most a quarter of the body),
then hard events, then the raw recent tier (a contiguous newest-first run), then
sparse blocks, then older raw excerpts. Each message appears at most once;
sections are chronological.

Hard events are cut to their decision lines (the ones that save the most first)
before any is omitted. When even cut they do not all fit, as many as fit are
served, by the rule's score per character (a greedy knapsack), so a long report
that merely mentions an action does not push out several short decisions, and an
echo (the same event reported again, :mod:`channel_memory.feed.echoes`), its score
weighed down, after a first report about as sure; the room left then restores whole
texts, the smallest restorations first. The omitted ones are named by handle, newest
first, then counted ("and K more").

The raw recent tier is served whole when it fits. When it does not, a message
larger than a third of the room left (and than ``RAW_CUT_MIN``) is shown cut, its
metadata saying how many characters are shown of how many and how to read the
rest, so one oversized message never empties the tier.

The text body, per item, is one metadata line then the content, every line after
``> `` with its characters unchanged::

    [HH:MM[-HH:MM] [kind] handle[+N] [re:message] [decided:message] [author] [id=block]
     [trust] [role] [new|seen]]

- ``kind``: a hard event's type by its short name (:data:`HARD_LABELS`: ``fill``,
  ``stop``, …; a rules-defined type is written ``hard:<type>``), a rollup's
  short name (:data:`KIND_LABELS`), or nothing for a message shown verbatim;
- ``handle``: ``channel/message``; in a feed of one channel the message id alone, the
  section lines naming the channel (``channel floor``);
- ``+N``: the block covers N more messages (its ``id=`` expands it);
- ``re:``: the proposal a reply decision answers (a message id of the same channel);
- ``decided:``: a hard event decided on by reply whose verdict the body does not show (the
  newest verdict's message id): a proposal shown without its "no, pass" is not pending;
- ``author``: as given; JSON-quoted when it holds anything but letters, digits and
  ``._@'-``, or reads like a trust word or one of the body's aliases (so a name can never
  forge a line or a field); or an alias read from the name (``MOj3``) for an author many
  items name under a long name (:func:`aliases`), the body's one ``[authors: MOj3 = "Name",
  …]`` line, before the sections, naming each as given;
- ``trust`` and ``role``: only when not the default the section line states;
- ``new`` / ``seen``: whether the consumer has consumed the version(s) the item shows,
  written only when it differs from the section's default (``, new`` in the section
  line: items are new unless marked ``seen``; otherwise seen unless marked ``new``).

A feed naming a trigger (the message that woke the agent) shows it first, in its own
``[trigger]`` section right after the header, complete and never cut, outside
``max_chars``; no other item shows it alone. The header's ``trigger_chars`` is what
that section adds to the body, so ``len(body) - trigger_chars <= max_chars``.

The body names, by ``read_id``, the message versions it shows *complete*
(:func:`complete_versions`): the trigger, hard events shown whole, raw messages shown
uncut, single-message verbatim blocks and tombstones. A hard event cut to its decision
clauses or stored with lines elided, a message inside a rollup or summary, and a
message shown cut are partial and never part of a read.

A window crossing a UTC midnight gets a ``[day YYYY-MM-DD]`` line wherever the day
changes within a section (and before its first item). Collapse blocks (status,
acknowledgement, repeat) that stand for a single message get no line of
their own: one ``[also collapsed, …]`` line counts them.

The header describes the final body, so the layout is fitted iteratively: the
body budget shrinks by any overshoot until header and body fit together.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal

from channel_memory.feed.echoes import ECHO_WEIGHT, READINGS_CACHED, echo_keys
from channel_memory.kernel.jsonfmt import compact
from channel_memory.kernel.models import (
    DECISION_REPEAT,
    HARD_EVENT_BLOCK,
    LOW_VALUE_ACK,
    MESSAGE_SUMMARY,
    RAW_EXCERPT,
    ROLLUP_KINDS,
    SEQUENCE_ROLLUP,
    TELEMETRY_COUNT,
    TOMBSTONE_BLOCK,
    TOPIC_ROLLUP,
)
from channel_memory.kernel.timefmt import format_generated, format_go_duration, format_rfc3339

Format = Literal["text", "json"]


class BudgetTooSmall(Exception):
    """``max_chars`` cannot hold even the header."""

    def __init__(self, needed: int) -> None:
        super().__init__(f"max_chars must be at least {needed} for this header")
        self.needed = needed


ANSWERED_ODDS = 5.9
"""What a hard event's odds of being a decision are multiplied by when some message
answers it (a reply short enough for its class to read it: ``derived_messages.parent_id``),
when the feed orders hard events: on the labelled desks the ranker learns from, two
decisions in five were answered and one look-alike in fourteen (``bench/answered.py``, the
hundred and four desks of ADR 0073: 41.3% against 7.0%, a ratio of 5.93; on the
forty-seven before it, 33.9% against 5.8%, 5.87). The ranker reads each message alone; a
reply is what the channel said of it afterwards (ADR 0049)."""
UNANSWERED_ODDS = 0.63
"""The same for a hard event no message answers, once it has had time to be answered
(:data:`ANSWER_WAIT_US`): 58.7% of the decisions, 93.0% of the look-alikes (0.7 until the
ranker learnt the earlier development desks: 66.1% and 94.2%, ADR 0073)."""
ANSWER_WAIT_US = 30 * 60 * 1_000_000
"""How old a hard event must be before going unanswered counts against it: a decision
made minutes before the feed is read has had no time to be answered."""


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One servable thing: a block or a source message, with what it covers."""

    key: str
    """Unique: the block id, or ``source:<handle>`` for a message rendered from its source."""
    kind: str
    event_type: str | None
    handle: str
    handles: int
    """How many messages it covers (for the ``+N`` in the text line)."""
    first_us: int
    last_us: int
    author: str | None
    trust: str
    text: str
    cut_text: str | None
    covers: frozenset[str]
    """Handles of available (current, readable) window messages this item covers."""
    block_id: str | None
    processor: str
    generated_us: int | None
    json_object: dict[str, Any]
    """The item's JSON form in the digest (a block object)."""
    message_object: dict[str, Any] | None = None
    """The JSON form in the raw recent tier (a source message object with origin and trust)."""
    score: float = 0.5
    """The block's importance (hard events: the rule's score); orders hard events."""
    answers: str | None = None
    """A reply decision: the handle of the proposal it answers."""
    role: str = "other"
    """Who wrote it relative to the consumer: ``user``, ``assistant`` or ``other``."""
    new: bool = False
    """The consumer has not consumed some version this item shows."""
    versions: tuple[tuple[str, str, str], ...] = ()
    """The exact versions ``(channel_id, message_id, content_hash)`` the item shows."""
    whole: bool = False
    """Shown uncut, the item shows its one message's whole version (it can be consumed)."""

    @property
    def order(self) -> tuple[int, int, str]:
        return (self.first_us, self.last_us, self.key)


@dataclass(frozen=True, slots=True)
class Gap:
    """An open coverage gap overlapping the window: the bridge may have missed messages."""

    channel: str
    from_us: int
    to_us: int
    reason: str | None


@dataclass(frozen=True, slots=True)
class Trigger:
    """The message that woke the agent: shown complete before everything else."""

    handle: str
    created_us: int
    author: str | None
    trust: str
    role: str
    new: bool
    text: str
    version: tuple[str, str, str]
    in_window: bool
    """A current message of the window: it counts as shown, never as omitted."""
    reply_to: str | None
    """The message id it replies to (of its channel), if any: ``re:`` on its line."""
    message_object: dict[str, Any]
    """Its JSON form (a source message object with origin, trust, role and new)."""


@dataclass(frozen=True, slots=True)
class Candidates:
    """What a window offers, per tier, newest first, plus the window's numbers."""

    kind: Literal["raw_window+digest", "raw_window"]
    channels: tuple[str, ...]
    since_us: int
    from_us: int
    to_us: int
    raw_recent_us: int
    available: int
    range_us: tuple[int, int] | None
    status: str
    coverage_gaps: int
    hard: Sequence[FeedItem]
    hard_total: int
    hard_more_handles: Sequence[str]
    """Handles of hard events beyond ``hard`` (newest first), for naming omissions."""
    raw: Sequence[FeedItem]
    sparse: Sequence[FeedItem]
    older: Sequence[FeedItem]
    older_total: int
    """Ordinary messages of the window older than the raw recent window."""
    limit: int
    truncated: bool = False
    """Some tier was read only up to its limit: a deeper read could offer more."""
    llm: str | None = None
    """The LLM processor's state (``ok``, ``capped``, ``failing``); None when LLM is off."""
    gaps: Sequence[Gap] = ()
    """Open coverage gaps overlapping the window, oldest first (``coverage_gaps`` of them)."""
    trigger: Trigger | None = None
    """The trigger, when the feed names one; no tier holds an item showing it alone."""
    answered: frozenset[str] = frozenset()
    """Handles of the hard events some message of the channel answers (see
    :func:`~channel_memory.store.windows.answered`)."""


@dataclass(slots=True)
class Selection:
    gaps: list[Gap] = field(default_factory=list)
    hard: list[FeedItem] = field(default_factory=list)
    cut: set[str] = field(default_factory=set)
    hard_named: list[str] = field(default_factory=list)
    hard_unnamed: int = 0
    omission_cause: str = "max_chars"
    """Why the omission line's messages were left out: the budget, or ``limit``."""
    raw: list[FeedItem] = field(default_factory=list)
    raw_cut: dict[str, int] = field(default_factory=dict)
    """Raw-tier items shown cut: key -> characters of content shown."""
    digest_rest: list[FeedItem] = field(default_factory=list)
    counted: list[FeedItem] = field(default_factory=list)
    """Single-message collapse blocks: served as a count, not a line each."""


@dataclass(frozen=True, slots=True)
class Body:
    content: str
    media_type: str
    numbers: dict[str, Any]
    """What the header states (sizes included): the telemetry reports these, not a recount."""
    used_up: bool = False
    """Some tier had every candidate it was offered served: it might have taken more."""
    complete: tuple[tuple[str, str, str], ...] = ()
    """The versions the body shows complete: what its ``read_id`` names."""
    summarized: tuple[tuple[str, str, str], ...] = ()
    """The versions it shows only in part (in summaries, counted, cut): the read names them
    apart; handled, under ``unconsumed=only`` they are not served again (ADR 0068)."""

    def with_read_id(self, read_id: str) -> Body:
        """The body with its read id in place of :data:`READ_ID_PLACEHOLDER` (same length)."""
        assert len(read_id) == len(READ_ID_PLACEHOLDER)
        # the header comes first, so the first occurrence is the header's
        content = self.content.replace(READ_ID_PLACEHOLDER, read_id, 1)
        return replace(self, content=content, numbers={**self.numbers, "read_id": read_id})


@dataclass(frozen=True, slots=True)
class Style:
    """How every item of one body reads: fixed before selection, so sizes are stable (a
    body is drawn with those of its aliases that pay in it, :func:`_body_style`)."""

    trust: str
    """The sections' default trust, written once in each section line."""
    role: str
    """The digest section's default role, written once in its section line."""
    new: bool
    """Whether digest items are new unless marked (``seen``), or seen unless marked."""
    days: bool
    """The window crosses a UTC midnight: day lines mark where the day changes."""
    raw_role: str = "user"
    """The raw recent section's default role."""
    raw_new: bool = True
    """Whether raw recent items are new unless marked."""
    channel: str | None = None
    """The one channel the feed serves: its items' handles are written as the message id
    alone (each section line names the channel); None when it serves several."""
    aliases: tuple[tuple[str, str], ...] = ()
    """(author, alias) for the authors written by an alias (``MOj3`` for "Margo Okafor
    (desk lead)"): those many items name under a long name; the body's ``[authors: …]``
    line names each as given."""

    def alias(self, author: str | None) -> str | None:
        """The author's alias, or None when written by name."""
        return next((alias for name, alias in self.aliases if name == author), None)

    def name_token(self, author: str | None) -> str:
        """The author written by name: :func:`author_token`, also quoted when it is
        spelled like one of the body's aliases, so it never reads as one."""
        token = author_token(author)
        if any(token == alias for _, alias in self.aliases):
            return json_quote(token)
        return token

    def role_of(self, in_raw_tier: bool) -> str:
        return self.raw_role if in_raw_tier else self.role

    def new_of(self, in_raw_tier: bool) -> bool:
        return self.raw_new if in_raw_tier else self.new


def _used_up(c: Candidates, chosen: Selection) -> bool:
    served = {i.key for i in chosen.raw + chosen.digest_rest + chosen.counted}
    rest = [*c.sparse, *c.older]
    return bool(rest) and all(i.key in served for i in rest)


# --- rendering one item -------------------------------------------------------------------

TRUST_WORDS = ("unverified", "authorized", "trigger", "self", "system")
ROLE_WORDS = ("user", "assistant", "other")
HARD_LABELS = {
    "trade_proposal": "proposal",
    "trade_approval": "verdict",
    "trade_confirmation": "confirm",
    "trade_fill": "fill",
    "stop_or_target_change": "stop",
    "route_decision": "route",
    "risk_limit": "limit",
    "position_change": "position",
    "thesis_change": "thesis",
}
"""Short names of the built-in hard-event types in the text body (JSON keeps the full ones)."""
KIND_LABELS = {
    TELEMETRY_COUNT: "status",
    LOW_VALUE_ACK: "acks",
    DECISION_REPEAT: "repeats",
    SEQUENCE_ROLLUP: "sequence",
    TOPIC_ROLLUP: "thread",
    MESSAGE_SUMMARY: "summary",
}
"""Short names of the block kinds in the text body; a verbatim message has none."""
COLLAPSE_NOUNS = {
    TELEMETRY_COUNT: ("status message", "status messages"),
    LOW_VALUE_ACK: ("acknowledgement", "acknowledgements"),
    DECISION_REPEAT: ("repeated conclusion", "repeated conclusions"),
}
"""Collapse kinds: a block of one of these standing for a single message is only counted."""
KIND_WORDS = frozenset((*HARD_LABELS.values(), *KIND_LABELS.values(), TOMBSTONE_BLOCK))
"""Every kind a metadata line writes bare (a rules file's own type: ``hard:<type>``)."""
_BARE = re.compile(r"[\w.@'-]+")
_RESERVED = frozenset((*TRUST_WORDS, *ROLE_WORDS, *KIND_WORDS, "unknown", "cut", "new", "seen"))
"""Words a metadata line gives a meaning: an author named so is quoted, and a message so
named keeps its channel in the handle, so neither reads as a kind or a marker."""


def counted(n: int, kind: str) -> str:
    """``n`` collapsed messages of a kind, grammatically: "1 acknowledgement", "2 …s"."""
    one, many = COLLAPSE_NOUNS[kind]
    return f"{n} {one if n == 1 else many}"


def is_counted(item: FeedItem) -> bool:
    """A collapse block standing for a single message: counted, never given a line."""
    return item.kind in COLLAPSE_NOUNS and item.handles <= 1


def hard_label(event_type: str | None) -> str:
    """A hard event's kind: the short name of a built-in type (``fill``), else
    ``hard:<type>`` (a rules-defined type, or ``hard:event`` without one), so a rules
    file's own type never reads as a built-in one nor as a rollup."""
    label = HARD_LABELS.get(event_type or "")
    return label if label is not None else "hard:" + (event_type or "event")


def is_kind(token: str) -> bool:
    """Whether a metadata line's token after its time is a kind: a handle holds a ``/``,
    and a message id spelled like a kind keeps its channel (:func:`_handle`)."""
    return "/" not in token and (token in KIND_WORDS or token.startswith("hard:"))


def _handle(handle: str, style: Style) -> str:
    """A handle as an item line writes it: the message id alone in a feed of one channel
    (its section lines name the channel), else ``channel/message`` — also when the id
    could read as something else (a kind, a marker, ``re:…``, ``hard:…``)."""
    if style.channel is not None and handle.startswith(style.channel + "/"):
        message = handle[len(style.channel) + 1 :]
        if ":" not in message and message.lower() not in _RESERVED:
            return message
    return handle


def handle_quote(handle: str) -> str:
    """A handle as a JSON string a reader copies into a tool call as it stands: a handle is
    letters, digits and ``-_.:/`` (ids are validated), so only its quotes are added — not
    ``\\/`` (a new user copied ``"eqd\\/m204"`` and got a handle that does not exist)."""
    return json.dumps(handle, ensure_ascii=False)


def json_quote(text: str) -> str:
    """``text`` as a JSON string on one line: quotes, backslashes, ``/``, and every
    non-printable character (newlines, line and paragraph separators) escaped."""
    out = ['"']
    for ch in text:
        if ch in '"\\/':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(json.dumps(ch)[1:-1])
    out.append('"')
    return "".join(out)


def author_token(name: str | None) -> str:
    """An author name as given: bare when it is one plain word, else JSON-quoted."""
    if name is None:
        return "unknown"
    if _BARE.fullmatch(name) and name not in _RESERVED:
        return name
    return json_quote(name)


def _author(item: FeedItem, style: Style) -> str:
    """The author as an item line writes it: its alias when it has one, else its name."""
    return style.alias(item.author) or style.name_token(item.author)


def _names_author(item: FeedItem, in_raw_tier: bool) -> bool:
    """Whether the item's line names its author: one message, verbatim or a hard event."""
    return item.handles == 1 and (in_raw_tier or item.kind in (HARD_EVENT_BLOCK, RAW_EXCERPT))


def _day(micros: int) -> str:
    return format_rfc3339(micros)[:10]


def _clock(micros: int) -> str:
    minutes = (micros // 60_000_000) % 1440
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _time(item: FeedItem) -> str:
    time = _clock(item.first_us)
    if item.last_us != item.first_us and item.handles > 1:
        end = _clock(item.last_us)
        if _day(item.last_us) != _day(item.first_us):
            end = _day(item.last_us)[5:] + "T" + end
        if end != time:
            time += "-" + end
    return time


def quoted(text: str) -> str:
    """Content as quoted data: every line after ``> ``, characters unchanged."""
    return "".join(f"> {line}\n" for line in text.split("\n"))


def _quoted_len(text: str) -> int:
    return len(text) + 2 * (text.count("\n") + 1) + 1


def _reference(item: FeedItem, handle: str) -> str:
    """Another message named on ``item``'s line (``re:``, ``decided:``): its id alone in
    the item's own channel, else its quoted handle."""
    channel, _, message = handle.partition("/")
    return message if item.handle.partition("/")[0] == channel else handle_quote(handle)


def _meta(
    item: FeedItem,
    style: Style,
    in_raw_tier: bool,
    shown: int | None = None,
    decided: str | None = None,
) -> str:
    parts = [_time(item)]
    if not in_raw_tier and item.kind == HARD_EVENT_BLOCK:
        parts.append(hard_label(item.event_type))
    elif not in_raw_tier and item.kind != RAW_EXCERPT:
        parts.append(KIND_LABELS.get(item.kind, item.kind))
    parts.append(_handle(item.handle, style) + (f"+{item.handles - 1}" if item.handles > 1 else ""))
    if item.answers:
        parts.append("re:" + _reference(item, item.answers))
    if decided:
        parts.append("decided:" + _reference(item, decided))
    if _names_author(item, in_raw_tier):
        parts.append(_author(item, style))
    if item.handles > 1 and item.block_id:
        parts.append(f"id={item.block_id}")
    if item.trust != style.trust:
        parts.append(item.trust)
    if item.role != style.role_of(in_raw_tier):
        parts.append(item.role)
    if item.new != style.new_of(in_raw_tier):
        parts.append("new" if item.new else "seen")
    if shown is not None:
        parts.append(
            f"cut: first {shown} of {len(item.text)} chars; the rest: get_channel_messages "
            f"source_handles=[{handle_quote(item.handle)}]"
        )
    return "[" + " ".join(parts) + "]\n"


def item_text(
    item: FeedItem, cut: bool, style: Style, in_raw_tier: bool, decided: str | None = None
) -> str:
    body = item.cut_text if cut and item.cut_text is not None else item.text
    # a hard event shown cut says so by its text ("…" where text is left out), not its line
    return _meta(item, style, in_raw_tier, decided=decided) + quoted(body)


def item_json(
    item: FeedItem, cut: bool, in_raw_tier: bool = False, decided: str | None = None
) -> str:
    data = item.json_object
    if in_raw_tier and item.message_object is not None:
        data = item.message_object
    elif cut and item.cut_text is not None:
        data = {**data, "text": item.cut_text, "cut": True}
    if decided:  # a list, as the tools' decided_by is (the feed names the newest only)
        data = {**data, "decided_by": [decided]}
    return compact(data)


def verdicts_not_shown(c: Candidates, chosen: Selection) -> dict[str, str]:
    """Handle of a hard event shown -> its newest verdict by reply among the hard events,
    for those none of whose verdicts the body shows (the line's ``decided:``): a proposal
    shown alone reads as pending, and its "no, pass" may be left out for room (a new
    user's trial: a proposal at 1,000 to 3,000 characters without its rejection). What
    the trigger replies to is answered where the body shows it, in its own section: a
    verdict as the trigger is newer than any the hard events hold."""
    newest: dict[str, FeedItem] = {}
    for item in c.hard:
        if item.answers and (item.answers not in newest or newest[item.answers].order < item.order):
            newest[item.answers] = item
    if not newest:
        return {}
    shown = {i.handle for i in chosen.hard} | {i.handle for i in chosen.raw}
    decided = {v.answers for v in c.hard if v.answers and v.handle in shown}
    trigger_answers = _answered_by_trigger(c)
    if trigger_answers is not None:
        decided.add(trigger_answers)
    return {
        item.handle: newest[item.handle].handle
        for item in chosen.hard
        if item.handle in newest and item.handle not in decided
    }


def _raw_cut_json(item: FeedItem, shown: int) -> str:
    data = item.message_object if item.message_object is not None else item.json_object
    field_name = "content" if "content" in data else "text"
    return compact(
        {
            **data,
            field_name: item.text[:shown],
            "content_chars": len(item.text),
            "shown_chars": shown,
        }
    )


def _raw_cut_text(item: FeedItem, style: Style, shown: int) -> str:
    return _meta(item, style, True, shown) + quoted(item.text[:shown])


def _fit_cut(item: FeedItem, fmt: Format, style: Style, room: int) -> int | None:
    """The most characters of a raw message's content that fit in ``room`` shown cut,
    or None when not even a useful part does (``RAW_CUT_SHOWN_MIN``)."""
    total = len(item.text)
    if fmt == "json":
        low, high = 0, total
        while low < high:  # the largest prefix whose object fits
            mid = (low + high + 1) // 2
            if len(_raw_cut_json(item, mid)) + 1 <= room:
                low = mid
            else:
                high = mid - 1
        fits = len(_raw_cut_json(item, low)) + 1 <= room
        shown = low if fits else -1
    else:
        room -= len(_meta(item, style, True, total))  # the longest the count can be
        shown = -1
        used = 3  # "> " and the last newline
        for index, ch in enumerate(item.text):
            used += 3 if ch == "\n" else 1
            if used > room:
                break
            shown = index + 1
    return shown if shown >= min(RAW_CUT_SHOWN_MIN, total) else None


def gap_text(gap: Gap) -> str:
    """A gap's line: channel and span; its reason (bridge text) as quoted data."""
    span = f"{format_rfc3339(gap.from_us)}..{format_rfc3339(gap.to_us)}"
    line = f"[coverage gap {gap.channel} {span}: messages may be missing"
    if gap.reason is None:
        return line + "]\n"
    reason = gap.reason[:GAP_REASON_CHARS]
    if len(reason) < len(gap.reason):
        return (
            line + f"; reason, first {len(reason)} of {len(gap.reason)} chars:]\n" + quoted(reason)
        )
    return line + "; reason:]\n" + quoted(reason)


def gap_json(gap: Gap) -> str:
    reason = None if gap.reason is None else gap.reason[:GAP_REASON_CHARS]
    return compact(
        {
            "channel_id": gap.channel,
            "from": format_rfc3339(gap.from_us),
            "to": format_rfc3339(gap.to_us),
            "reason": reason,
            "reason_chars": None if gap.reason is None else len(gap.reason),
        }
    )


# --- selection under a budget -------------------------------------------------------------


class Sizes:
    """Items' rendered sizes in one format and style, each computed once: fitting a
    body asks for the same sizes on every pass. One lives for one layout of one
    :class:`Candidates`, whose item keys are unique."""

    def __init__(self, fmt: Format, style: Style) -> None:
        self.fmt = fmt
        self.style = style
        self._known: dict[tuple[str, bool, bool], int] = {}
        self._echoes: frozenset[str] | None = None
        self._newer: dict[str, list[FeedItem]] | None = None

    def echoes(self, hard: Sequence[FeedItem]) -> frozenset[str]:
        """The keys of the hard events that echo an earlier one (computed once: every
        fitting pass offers the same hard events)."""
        if self._echoes is None:
            self._echoes = echo_keys(hard)
        return self._echoes

    def newer_changes(self, hard: Sequence[FeedItem]) -> dict[str, list[FeedItem]]:
        """What stands in for an older hard event, computed once likewise: the newer
        changes of a stop (:func:`_newer_changes`) and the release of a block
        (:func:`_releases`)."""
        if self._newer is None:
            echoes = self.echoes(hard)
            self._newer = {**_newer_changes(hard, echoes), **_releases(hard, echoes)}
        return self._newer

    def of(self, item: FeedItem, cut: bool, raw_tier: bool) -> int:
        """The item's size, shown cut (hard events) or whole, in the raw tier or not."""
        key = (item.key, cut, raw_tier)
        size = self._known.get(key)
        if size is None:
            if self.fmt == "json":
                size = len(item_json(item, cut, raw_tier)) + 1
            else:
                size = len(item_text(item, cut, self.style, raw_tier))
            self._known[key] = size
        return size


CUT_NOTE = "[… marks text left out of a decision; full text: get_channel_messages]\n"
"""Said once when any hard event is shown cut or with lines elided."""
CUT_NOTE_SHORT = "[… marks text left out of a decision]\n"
"""The same after an omission line, which says where full texts are."""


FILLED_SLACK = 160
"""Characters a layout may leave unused and still count as having filled its budget."""


def _count(n: int, noun: str) -> str:
    """``n`` and a noun, grammatically: "1 message", "2 messages" (the feed's notes)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def omission_note(
    omitted: int, named: Sequence[str], unnamed: int, cause: str = "max_chars"
) -> str:
    """The one line saying what was left out: ``omitted`` retained messages and how many of
    them are hard events, named newest first (``named``) as far as the room allowed and the
    rest counted (``unnamed``), why (``cause``: ``max_chars``, or ``limit`` when the body
    had room left, every hard event was shown and the raw tier was full to its limit), and
    where to read them; empty when nothing was left out."""
    hard = len(named) + unnamed
    names = f", newest first: {' '.join(named)}" if named else ""
    more = f" and {unnamed} more" if named and unnamed else ""
    messages = _count(omitted, "message")
    if omitted and hard:
        of_them = "a hard event" if hard == 1 else "hard events"
        what = f"{messages} due to {cause}, {hard} of them {of_them}"
    elif omitted:
        what = f"{messages} due to {cause}"
    elif hard:
        what = f"hard events due to {cause}: {hard}"
    else:
        return ""
    return f"[omitted {what}{names}{more}; retrieve with get_channel_messages]\n"


def gaps_not_shown(count: int, some_shown: bool) -> str:
    """The line counting the coverage gaps left out: "[1 more coverage gap not shown]"
    beside shown ones, "[3 coverage gaps not shown]" when none is."""
    more = "more " if some_shown else ""
    return f"[{_count(count, more + 'coverage gap')} not shown]\n"


def short_omission_note(omitted: int, hard: int) -> str:
    """The omission line when the whole one does not fit beside the header: the counts and
    where to read them, in fewer words (empty when nothing was left out)."""
    hard_events = _count(hard, "hard event")
    if omitted:
        messages = _count(omitted, "message")
        what = f"{messages} ({hard_events})" if hard else messages
    elif hard:  # hard events beyond the window's loaded page (as the whole line says them)
        what = hard_events
    else:
        return ""
    return f"[omitted {what}; get_channel_messages]\n"


HARD_NOTE_RESERVE = 200
"""Room kept toward the notes when not every hard event fits (the fitting passes measure
them whole); omitted hard events are named in whatever room the chosen body leaves, the
rest counted (ADR 0040)."""
RAW_CUT_MIN = 600
"""A raw message is shown cut only when larger than this (and than a third of the room)."""
RAW_CUT_SHOWN_MIN = 80
"""Fewer characters than this of a cut message are not worth its line."""
GAP_REASON_CHARS = 200
"""At most this much of a gap's reason is shown (the rest is counted)."""
COUNT_LINE_RESERVE = 120
"""Room for the one line counting single-message collapse blocks."""


def style_of(c: Candidates) -> Style:
    """The body's style: the most common trust among the candidates (ties: the least
    trusted) is the sections' default; each section's default role and new-ness come
    from its own candidates (the digest's from the hard events when there are any);
    day lines when the window crosses midnight."""
    items = [i for tier in (c.hard, c.raw, c.sparse, c.older) for i in tier]
    trusts = Counter(i.trust for i in items)
    rank = {t: n for n, t in enumerate(TRUST_WORDS)}
    default = min(trusts, key=lambda t: (-trusts[t], rank.get(t, 99), t), default="unverified")
    # role and new: per section, from the items it shows first (hard events lead the digest)
    digest = list(c.hard) or [*c.sparse, *c.older]
    role, new = _defaults(digest)
    raw_role, raw_new = _defaults(c.raw)
    days = _day(c.from_us) != _day(c.to_us)
    channel = c.channels[0] if len(c.channels) == 1 else None
    return Style(default, role, new, days, raw_role, raw_new, channel, aliases(c))


LEGEND_CHARS = len("[authors: ]\n")
"""The legend line's own characters, besides its entries."""
ALIAS_MIN_CHARS = 8
"""An author written in fewer characters keeps their name: the alias is for long names."""
_WORD = re.compile(r"[^\W_]+")


def _alias_core(name: str) -> str:
    """The readable part of an alias: the first letters of the name's first two words (a
    word is a run of letters or digits), or the first two of a one-word name, in
    capitals, two characters at most ("Margo Okafor (desk lead)" -> ``MO``); ``X`` for a
    name with neither letters nor digits."""
    words: list[str] = _WORD.findall(name)
    if not words:
        return "X"
    core = words[0][:2] if len(words) == 1 else words[0][0] + words[1][0]
    return core.upper()[:2]


_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _alias_of(name: str, length: int) -> str:
    """The name's alias: its core and ``length`` characters of a hash of the name, so it
    depends on the name alone (``MOj3`` for "Margo Okafor (desk lead)")."""
    digest = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big")
    tail = ""
    for _ in range(length):
        digest, digit = divmod(digest, 36)
        tail += _BASE36[digit]
    return _alias_core(name) + tail


def _paying(
    uses: Counter[str | None], candidates: Sequence[tuple[str, str]]
) -> tuple[tuple[str, str], ...]:
    """Of ``candidates`` (an author and their alias), those whose alias saves characters:
    written in ``t`` characters and named ``n`` times, an alias of ``a`` saves
    ``n * (t - a)`` and costs its legend entry (``, MOj3 = `` and the name); none when
    together they do not pay for the legend line."""
    kept: list[tuple[str, str]] = []
    saved = 0
    for name, alias in candidates:
        token = len(author_token(name))
        saving = uses[name] * (token - len(alias)) - (token + len(alias) + 5)
        if saving > 0:
            kept.append((name, alias))
            saved += saving
    return tuple(kept) if saved > LEGEND_CHARS else ()


def _uses(items: Sequence[tuple[FeedItem, bool]]) -> Counter[str | None]:
    """How many of ``items`` (each with whether it is in the raw tier) name each author."""
    return Counter(item.author for item, raw in items if _names_author(item, raw))


def aliases(c: Candidates) -> tuple[tuple[str, str], ...]:
    """The authors the candidates name often enough under a long name (at least
    :data:`ALIAS_MIN_CHARS`) that an alias saves characters (:func:`_paying`), the most
    named first (ties: by name). An alias depends on the name alone (:func:`_alias_of`),
    so an author keeps it as messages arrive and budgets change; names among the
    candidates that would share one take longer ones. Fixed before selection, so an
    item's size is the same on every fitting pass."""
    tiers = ((c.hard, False), (c.raw, True), (c.sparse, False), (c.older, False))
    uses = _uses([(item, raw) for tier, raw in tiers for item in tier])
    long = sorted(a for a in uses if a is not None and len(author_token(a)) >= ALIAS_MIN_CHARS)
    alias = {name: _alias_of(name, 2) for name in long}
    for length in range(3, 13):  # names that share an alias take longer ones, until none do
        shared = Counter(alias.values())
        if all(n == 1 for n in shared.values()):
            break
        alias = {n: _alias_of(n, length) if shared[a] > 1 else a for n, a in alias.items()}
    order = sorted(long, key=lambda a: (-uses[a], a))
    return _paying(uses, [(name, alias[name]) for name in order])


def _body_style(style: Style, items: Sequence[tuple[FeedItem, bool]]) -> Style:
    """The style one body is drawn in: of the candidates' aliases, those that save
    characters among the items it shows, each unchanged. An author whose alias does not
    pay in this body is written by name: a longer line than the size it was chosen by,
    a shorter body (the alias and its legend entry would cost more); the legend line, like
    the section lines, is in no item's size — the fitting passes measure the whole body."""
    return replace(style, aliases=_paying(_uses(items), style.aliases))


def legend(style: Style) -> str:
    """The ``[authors: MOj3 = "Name", …]`` line naming a body's aliases as given, or nothing."""
    if not style.aliases:
        return ""
    entries = (f"{alias} = {style.name_token(name)}" for name, alias in style.aliases)
    return "[authors: " + ", ".join(entries) + "]\n"


def _defaults(items: Sequence[FeedItem]) -> tuple[str, bool]:
    """The most common role (ties: user, assistant, other), and whether most are new."""
    roles = Counter(i.role for i in items)
    rank = {r: n for n, r in enumerate(ROLE_WORDS)}
    role = min(roles, key=lambda r: (-roles[r], rank.get(r, 99), r), default="user")
    return role, sum(1 for i in items if i.new) * 2 >= len(items)


def select(
    c: Candidates, budget: int, fmt: Format, style: Style | None = None, sizes: Sizes | None = None
) -> Selection:
    """Choose what to serve within ``budget`` characters of body, by priority (``sizes``:
    a memo kept across the fitting passes of one layout, in ``fmt`` and ``style``)."""
    style = style or style_of(c)
    sizes = sizes or Sizes(fmt, style)
    chosen = Selection()
    left = _select_gaps(c, chosen, budget, fmt)
    if c.kind == "raw_window+digest":
        left = _select_hard(c, chosen, left, sizes)
        if len(chosen.hard) < c.hard_total:
            return chosen  # the hard events took everything; the rest is omitted
    shown: set[str] = set()
    for item in chosen.hard:
        shown |= item.covers
    left = _select_raw(c, chosen, left, fmt, style, sizes)
    for item in chosen.raw:
        shown |= item.covers
    if c.kind == "raw_window":
        return chosen
    in_raw = {i.key for i in chosen.raw}
    not_in_raw_tier = [i for i in c.raw if i.key not in in_raw]
    for tier in (c.sparse, [*not_in_raw_tier, *c.older]):
        for item in tier:
            if item.covers & shown:
                continue
            if is_counted(item):
                cost = 0 if chosen.counted else COUNT_LINE_RESERVE
                if cost <= left:
                    chosen.counted.append(item)
                    shown |= item.covers
                    left -= cost
                continue
            size = sizes.of(item, False, False)
            if size <= left:
                chosen.digest_rest.append(item)
                shown |= item.covers
                left -= size
    return chosen


def _select_gaps(c: Candidates, chosen: Selection, budget: int, fmt: Format) -> int:
    """The newest gaps that fit in a quarter of the body; the rest are counted."""
    room = budget // 4
    for gap in sorted(c.gaps, key=lambda g: (g.to_us, g.from_us), reverse=True):
        size = len(gap_json(gap)) + 1 if fmt == "json" else len(gap_text(gap))
        if size > room:
            break
        chosen.gaps.append(gap)
        room -= size
        budget -= size
    chosen.gaps.sort(key=lambda g: (g.from_us, g.to_us))
    return budget


def _select_raw(
    c: Candidates, chosen: Selection, left: int, fmt: Format, style: Style, sizes: Sizes
) -> int:
    run = list(c.raw[: c.limit])
    whole = [sizes.of(i, False, True) for i in run]
    if sum(whole) <= left:
        chosen.raw = run
        return left - sum(whole)
    cap = max(RAW_CUT_MIN, left // 3)
    for item, size in zip(run, whole, strict=True):
        if size <= min(cap, left):
            chosen.raw.append(item)
            left -= size
            continue
        shown = _fit_cut(item, fmt, style, min(cap, left))
        if shown is None or shown >= len(item.text):
            break  # the recent tier is a contiguous newest-first run
        chosen.raw.append(item)
        chosen.raw_cut[item.key] = shown
        left -= _raw_size(item, fmt, style, shown)
    return left


def _raw_size(item: FeedItem, fmt: Format, style: Style, shown: int) -> int:
    """A raw message's size shown cut to its first ``shown`` characters."""
    if fmt == "json":
        return len(_raw_cut_json(item, shown)) + 1
    return len(_raw_cut_text(item, style, shown))


def _tie(item: FeedItem) -> tuple[int, str, str]:
    """Breaks ties between hard events by the message, not by the block id: the newer
    first, then the handle. A block id hashes the rules' text, so a tie broken by it would
    move whenever the rules were reworded without changing what they match."""
    return (-item.last_us, item.handle, item.key)


def _answered_by_trigger(c: Candidates) -> str | None:
    """The handle of the message the trigger replies to, if any: the hard event covering
    it is chosen first when not every hard event fits ("yes, go" as the trigger, its
    proposal in the feed; a new user's trial saw the proposal left out)."""
    if c.trigger is None or c.trigger.reply_to is None:
        return None
    return c.trigger.handle.split("/", 1)[0] + "/" + c.trigger.reply_to


def _with_odds(score: float, ratio: float) -> float:
    """``score`` (a probability) with its odds multiplied by ``ratio``."""
    if score <= 0 or score >= 1:
        return score
    return score * ratio / (score * ratio + 1 - score)


BARE_VERDICT_CHARS = 40
"""A reply decision this short ("yes, go", "👍 send it", "take it") says nothing of what it
answers: it is shown with the proposal it answers or not at all. Chosen on the development
and trained-on desks (ADR 0065): pairing every reply decision cost 12 and 27 decisions
verbatim at 6,000 characters, pairing these 7 and 10."""


def _select_hard(c: Candidates, chosen: Selection, left: int, sizes: Sizes) -> int:
    items = list(c.hard)
    full = {i.key: sizes.of(i, False, False) for i in items}
    cut = {i.key: sizes.of(i, True, False) for i in items}
    total = sum(full.values())
    everything_loaded = len(items) == c.hard_total
    # Cut the hard events that save the most first, until all of them fit.
    for item in sorted(items, key=lambda i: (cut[i.key] - full[i.key], _tie(i))):
        if total <= left:
            break
        if cut[item.key] < full[item.key]:
            chosen.cut.add(item.key)
            total -= full[item.key] - cut[item.key]
    if everything_loaded and total <= left:
        chosen.hard = items
        return left - total
    # Even cut they do not fit: by score per character (echoes 0.6 of theirs; the score's
    # odds weighed by whether some message answered it), each one that fits.
    chosen.cut = {i.key for i in items}
    left -= HARD_NOTE_RESERVE  # the omission line and the cut note
    # as many as fit, the most decision per character first: the score (the rule's,
    # weighed by how plainly and how surely the message states a decision) over the
    # characters the item takes, so a long report that merely mentions an action does
    # not push out several short decisions, nor a long record two short plain ones; an
    # echo (the same event reported again) after a first report about as sure; a hard event some
    # message answered before one nobody answered once it has had time to be
    echoes = sizes.echoes(c.hard)

    def density(item: FeedItem) -> float:
        weight = ECHO_WEIGHT if item.key in echoes else 1.0
        score = item.score
        if item.handle in c.answered:
            score = _with_odds(score, ANSWERED_ODDS)
        elif c.to_us - item.last_us > ANSWER_WAIT_US:
            score = _with_odds(score, UNANSWERED_ODDS)
        return score * weight / cut[item.key]

    answered = _answered_by_trigger(c)
    # a bare verdict comes with the proposal it answers, or not at all: "yes, go" alone says
    # nothing of what was approved (a new user's trial); one with its reasons stands alone
    by_handle = {i.handle: i for i in items}
    newer_of = sizes.newer_changes(c.hard)
    taken: set[str] = set()
    # a stop's change whose turn comes, and that fits, stands for the newest change of that
    # stop not shown yet that fits: the one in force first, an older one only once the newer
    # ones are in, at the turn the newer one would have had (a longer newer one may leave
    # room for one hard event less: a new user's trial read a stale stop at 1,000 to 3,000
    # characters; 6 / 6 / 4 of the development desks' 5,077 decisions at 6,000 / 8,192 /
    # 12,000, ADR 0069); a block's release stands for the block it lifts likewise (ADR 0076)
    turn_of: dict[str, FeedItem] = {}

    def group_of(item: FeedItem) -> list[FeedItem]:
        # a bare verdict comes with the proposal it answers, or not at all
        answers = item.answers if len(item.text) <= BARE_VERDICT_CHARS else None
        answering = by_handle.get(answers) if answers else None
        if answering is not None and answering.key not in taken:
            return [item, answering]
        return [item]

    for turn in sorted(items, key=lambda i: (answered not in i.covers, -density(i), _tie(i))):
        older = turn
        while older.key in taken and older.key in turn_of:
            older = turn_of.pop(older.key)
        if older.key in taken:
            continue
        own = group_of(older)
        if sum(cut[g.key] for g in own) > left:
            continue  # a newer change waits for its own turn
        stand_ins = [n for n in newer_of.get(older.key, ()) if n.key not in taken]
        group = next(
            (g for g in (group_of(n) for n in stand_ins) if sum(cut[x.key] for x in g) <= left),
            own,
        )
        chosen.hard.extend(group)
        taken.update(g.key for g in group)
        left -= sum(cut[g.key] for g in group)
        if group[0] is not older:
            turn_of[group[0].key] = older
    # what is left restores whole texts, the smallest restorations first
    for item in sorted(chosen.hard, key=lambda i: (full[i.key] - cut[i.key], _tie(i))):
        extra = full[item.key] - cut[item.key]
        if extra <= left:
            chosen.cut.discard(item.key)
            left -= extra
    left = _in_force(chosen, left, (full, cut), newer_of)
    position = {item.key: n for n, item in enumerate(items)}
    chosen.hard.sort(key=lambda i: position[i.key])
    return max(0, left)


_ROOTS = "ES|NQ|YM|CL|GC|HG|ZN|ZB|ZF|ZT|ZC|ZS|ZW|ZL|ZM|RB|KC|SB|BZ|VX|FV|NK|JB"
"""Futures' two-letter roots (CME, ICE; SGX and Osaka's Nikkei "NK", the JGB future "JB")
that are no everyday word in capitals: "ES" is an instrument where "OK", "CT" (Central
Time), "TY" or "HE" (hour ending) is not."""
_NAME = re.compile(
    r"(?:(?<![A-Za-z0-9/])|(?<=/)(?<![A-Za-z0-9]/))"
    r"([A-Z][A-Z0-9]{2,}|[A-Z]{3}/[A-Z]{3}|" + _ROOTS + r")(?![A-Za-z0-9/])"
)
"""A name in capitals ("USDJPY", "USD/JPY", "NVDA", "TSX60", a future's two-letter root
"ES", as a trading platform writes it too: "/ES"), also against text without spaces
("USDJPYの損切り"): what two stop changes both name."""
_CONTRACT = re.compile(r"(" + _ROOTS + r")[FGHJKMNQUVXZ][0-9]{1,2}")
"""A future's contract of one of those roots ("ESZ6", "CLF27"): a stop on it and one on its
root alone ("ES", "/ES") are on one instrument; two months of a root are two ("CLZ5" and
"CLF6", a spread's legs or a roll)."""
_MARKET_WORD = re.compile(
    r"\b(copper|gold|silver|platinum|palladium|aluminium|aluminum|nickel|zinc|crude|brent|wti|"
    r"oil|gasoil|diesel|natgas|corn|wheat|soybeans|soyoil|coffee|cocoa|sugar|cotton|cattle|"
    r"hogs|lumber|bund|gilt|treasuries)s?\b",
    re.IGNORECASE,
)
"""A market named in words rather than capitals ("raise the copper stop to 9,500" after
"copper stop 9,450", a new user's trial): what two stop changes both name, as itself (a
bund is a bund, not ``FGBL``)."""
_ROOT_OF = "~"
"""Marks a contract's root among an item's names: it links only to the root named alone."""
# fmt: off
_NOT_NAMES = frozenset({
    "STOP", "STOPS", "TARGET", "TARGETS", "MOVED", "MOVE", "SET", "NEW", "OLD", "FILL",
    "FILLED", "BUY", "SELL", "LONG", "SHORT", "UPDATE", "ALERT", "RISK", "LIMIT", "ORDER",
    "BOT", "DESK", "EOD", "SOD", "OMS", "EMS", "UTC", "GMT", "CET", "EST", "NYC", "LDN", "AND",
    "THE", "FOR", "NOT", "ALL", "NOW", "ASAP", "FYI", "PNL", "CARD", "TRADE", "IDEA", "STATUS",
    "ACTIVE", "TICKET", "STP", "LMT", "MKT", "ACK", "NAK", "REPLACE", "CANCEL", "AMEND", "GTC",
    "DAY", "IOC", "CPI", "PPI", "NFP", "GDP", "PMI", "FOMC", "FED", "ECB", "BOE", "BOJ", "SNB",
    "RBA", "OPEC", "EIA", "IMF", "CST", "CDT", "EDT", "BST", "JST", "HKT", "SGT", "AEST",
})
# fmt: on
_STOP_WORD = re.compile(r"\b(?:stop|stops|sl|stp|stop[- ]loss)\b", re.IGNORECASE)
_TARGET_WORD = re.compile(r"\b(?:target|targets|tgt|tp\d?|take[- ]profit)\b", re.IGNORECASE)


STOP_CHANGE = "stop_or_target_change"
IN_FORCE_SCORE = 0.5
"""How sure a newer change must be of being a decision to replace an older one: a
restatement ("stop e alvo no sistema como estão") names the instrument too."""


def _channel(item: FeedItem) -> str:
    return item.handle.split("/", 1)[0]


def _names(item: FeedItem) -> frozenset[str]:
    """The names in capitals ``item`` gives, ``~ROOT`` for each contract of a root, and the
    markets it names in words (lower-cased, "copper"; "bunds" as "bund")."""
    return _names_in(item.text)


def _names_in(text: str) -> frozenset[str]:
    """:func:`_names` of a text."""
    found = {market.lower() for market in _MARKET_WORD.findall(text)}
    for name in _NAME.findall(text):
        found.add(name.replace("/", ""))
        contract = _CONTRACT.fullmatch(name)
        if contract is not None:
            found.add(_ROOT_OF + contract.group(1))
    return frozenset(found) - _NOT_NAMES


def _same_instrument(first: frozenset[str], second: frozenset[str]) -> bool:
    """Whether two changes name one instrument: a name both give, or a contract's root
    that the other names alone."""
    if any(not n.startswith(_ROOT_OF) for n in first & second):
        return True
    return any(
        n.startswith(_ROOT_OF) and n[len(_ROOT_OF) :] in other
        for one, other in ((first, second), (second, first))
        for n in one
    )


def _levels(item: FeedItem) -> frozenset[str]:
    """Which levels a change names, as far as English words say: a stop, a target (none:
    written otherwise, "Stopp", "損切り", and read as either)."""
    found = set()
    if _STOP_WORD.search(item.text):
        found.add("stop")
    if _TARGET_WORD.search(item.text):
        found.add("target")
    return frozenset(found)


def _same_level(first: frozenset[str], second: frozenset[str]) -> bool:
    return not first or not second or bool(first & second)


STOPS_WEIGHED = 200
"""The newest stop and target changes a feed weighs against each other (every pair is
compared once per layout); older ones are chosen by score alone: an order system posting a
thousand stop records in a day would otherwise cost a second a feed (a review)."""


def _newer_changes(items: Sequence[FeedItem], echoes: frozenset[str]) -> dict[str, list[FeedItem]]:
    """For each stop or target change, the newer changes of the same stop, newest first:
    of the same channel, naming an instrument it names (a name in capitals both give, not a
    record's word nor a macro release's), changing the same level (a stop for a stop, a
    target for a target, as far as English words say), no echo (a status record repeating an
    order's levels), and more likely a decision than not or naming a level no older change
    of its stop named (a move the ranker is unsure of, not a restatement)."""
    stops = sorted(
        (i for i in items if i.event_type == STOP_CHANGE), key=lambda i: (i.last_us, i.key)
    )[-STOPS_WEIGHED:]
    if len(stops) < 2:
        return {}
    names = {i.key: _names(i) for i in stops}
    levels = {i.key: _levels(i) for i in stops}
    numbers = {i.key: _named_numbers(i.text) for i in stops}

    def same_stop(one: FeedItem, other: FeedItem) -> bool:
        return (
            _channel(one) == _channel(other)
            and _same_instrument(names[one.key], names[other.key])
            and _same_level(levels[one.key], levels[other.key])
        )

    def moves(change: FeedItem) -> bool:
        """Whether ``change`` names one instrument and a level no older change of its stop
        named, near one it named: a move, not a restatement ("NVDA stop 128.40 now" after
        126.80), however unsure the ranker (a report naming several instruments moves no
        one stop; an order record's size and id are no level)."""
        if len({n for n in names[change.key] if not n.startswith(_ROOT_OF)}) != 1:
            return False
        said = set().union(
            *(numbers[o.key] for o in stops if o.last_us < change.last_us and same_stop(o, change))
        )
        # a level near one said before, not a size, an order id or a time
        return any(
            any(0.5 < n / old < 2 for old in said if old > 0) for n in numbers[change.key] - said
        )

    eligible = [i for i in stops if i.key not in echoes and (i.score >= IN_FORCE_SCORE or moves(i))]
    out: dict[str, list[FeedItem]] = {}
    for older in stops:
        newer = [i for i in eligible if i.last_us > older.last_us and same_stop(older, i)]
        if newer:
            out[older.key] = sorted(newer, key=lambda i: (i.last_us, i.key), reverse=True)
    return out


RISK_LIMIT = "risk_limit"
LIMITS_WEIGHED = 200
"""The newest risk-limit events and releases a feed pairs blocks and releases among
(bounded work, as ``STOPS_WEIGHED``)."""
_TRADE_BLOCK = (
    r"(?!\s{1,3}(?:trades?|orders?|offers?|bids?|of|prints?|cross(?:es)?|sales?|purchases?|"
    r"deals?|size|desk)\b)"
)
"""After "block": not a block of shares ("lifted the block offer", "block order released to
the algo", "block trade cleared")."""
_HOLD = (
    rf"blocks?{_TRADE_BLOCK}|halt|halts|freeze|restrictions?|overrides?|temp|temporary|window|"
    r"reduce-only|bans?"
)
_RAISED = r"(?![^\n.;,]{0,25}?(?:\b(?:to|by|from)\b|->|→|\()[^\n.;,\d]{0,6}\d)"
"""After "lifted": no new level ("cap lifted 20m to 60m", "limit lifted to USD 650m",
"temp cap lifted (600m -> 650m)"): a limit raised, no release."""
_GAP = r"(?:(?!\s-\s)[^\n,;:\u2014\u2013]){0,40}?"
"""Words between a hold and its release, in one phrase (not "CPI released, GBP block")."""
_RELEASE = re.compile(
    rf"\b(?:(?:{_HOLD})\b{_GAP}\b(?:lift(?:ed|ing){_RAISED}|releas(?:ed|ing)|unblock(?:ed|ing)|"
    r"cleared|removed|reinstated|lapsed|expired|ended|cancell?ed|withdrawn|rescinded)|"
    rf"(?:lift(?:ed|ing)?|releas(?:ed|ing)|unblock(?:ed|ing)|remov(?:ed|ing)){_GAP}\b(?:{_HOLD})|"
    rf"(?:block|blocks|halt|freeze|restrictions?|ban|window|override){_TRADE_BLOCK}"
    r"(?:\s{1,3}(?:is|are)|[\x27\u2019]s)?\s{1,3}(?:now\s{1,3})?(?:off|over)"
    r"(?!\s{1,3}(?:the|a|an|this|that|next|\d))|"
    r"unfrozen|unblock(?:ed|ing)|(?:trading|entries|new entries)\s{1,3}(?:resumed|resumes|reopened|"
    r"allowed(?:\s{1,3}again)?)|(?:new\s{1,3})?(?:positions|entries|trades)\s{1,3}(?:are\s{1,3})?"
    r"(?:ok|okay|fine|allowed|open)\s{1,3}again|(?:limits?|caps?)\s{1,3}(?:are\s{1,3}|is\s{1,3})?"
    r"(?:back to (?:the\s{1,3})?normal|restored|reverted)|back to (?:the\s{1,3})?normal\s{1,3}"
    r"(?:limits?|caps?))\b",
    re.IGNORECASE,
)
"""A limit's release in English, what is held and its release in one phrase: a block (not
a block of shares), a halt, a freeze, a restriction, a ban, a window, an override or a
temporary limit lifted, released, unblocked, cleared, removed, lapsed, expired, ended,
cancelled, withdrawn or rescinded, or off or over ("ENTRY BLOCK LIFTED", "I'm lifting this
morning's block on option buys", "OVERRIDE … EXPIRED", "halt is over", "USD window is over";
not "block over the CPI print"); trading resumed, a book unfrozen or unblocked, entries
allowed again, new positions OK again; limits back to normal, restored or reverted. A limit
or a cap lifted to a level is raised, no release."""
_PENDING = re.compile(
    r"\b(?:until|till|unless|once|when|if|or|pending|before|will|to be|would|could|"
    r"should|may|might|then|not|never|remains?|stays?|still|no|yet|in place)\b|"
    r"n[\x27\u2019]t\b|\?",
    re.IGNORECASE,
)
"""What makes a release none, in its sentence: awaited ("blocked until released by risk",
"the block will be lifted at 15:00"), denied ("block NOT lifted", "lifted: no, still in
place", "stays blocked") or asked ("block lifted?", "lifted - yes or no")."""
PENDING_CHARS = 40
"""How far back in its sentence, before a release, such a word is read (after it: to the
sentence's end)."""
_ASKED = re.compile(r"\s*(?:is|are|was|were|has|have|had|did|do|does)\b", re.IGNORECASE)
"""A sentence opening as a question ("Is the GBP block lifted yet")."""
_HELD_KIND = re.compile(
    r"\b(?:(un)?(block)(?:s|ed|ing)?|(halt)(?:s|ed)?|(freez)(?:e|es|ing)|(?:un)?(frozen)|"
    r"(restrict)(?:ed|ions?)?|(override)s?|(window)s?|(reduce-only)|(temp)(?:orary|orarily)?|"
    r"(ban)(?:s|ned)?|(resum)(?:ed|es))\b",
    re.IGNORECASE,
)
"""What kind of hold a text names, whole words: a release lifts a hold of a kind it names
("lifting the block on option buys" a block, not an override; an override expiring, not an
entry block); trading resumed lifts a halt or a freeze."""


_NO_NEW = re.compile(
    r"\bno new\s{1,3}(?:[\w/\-]{1,20}\s{1,3}){0,3}?(?:entries|entry|positions?|risk|trades?|"
    r"adds?|longs?|shorts?|buys?|sells?|orders?)\b",
    re.IGNORECASE,
)
"""A block in so many words ("no new USDJPY entries until I say", "no new positions in USD
crosses between 13:20 and 13:45", not "no new info from CRO"): a block, a halt, a freeze, a
restriction, a ban or a window its release names lifts it, when no block of the kind named
is found first (an override expiring lifts an override, not "no new entries")."""
ENTRY_HOLDS = frozenset({"block", "halt", "freez", "restrict", "ban", "window"})
"""The kinds of hold whose release also lifts a block in so many words (not an override's:
"override expired" lifts no "no new entries")."""
LIFTED_BY_OTHERS = frozenset({"block", "freez", "restrict", "ban"})
"""The kinds of hold a release of another type than a risk limit may lift ("AUD freeze
lifted, 5m back on" read as a fill; not "stop override removed", "TWAP window over, filled
3m", "LULD halt lifted, bought 10k")."""
ANY_HOLD = "any"
"""The kind a block in so many words holds (``_NO_NEW``)."""


def _held_kinds(text: str) -> frozenset[str]:
    """The kinds of hold ``text`` names (``_HELD_KIND``; ``ANY_HOLD`` for a block in so many
    words)."""
    kinds: set[str] = {ANY_HOLD} if _NO_NEW.search(text) else set()
    for match in _HELD_KIND.finditer(text):
        kind = next(g for g in match.groups()[1:] if g).lower()
        kinds |= {"halt", "freez"} if kind == "resum" else {"freez" if kind == "frozen" else kind}
    return frozenset(kinds)


RELEASE_HEAD_CHARS = 160
"""A release says so near its start (a report's twentieth line mentioning a lifted block
releases nothing), and a block near its own; the names they share are read there too."""
_BLOCKING = re.compile(
    r"\b(?:block(?:s|ed|ing)?|halt(?:s|ed)?|freez(?:e|es|ing)|frozen|suspend(?:s|ed)?|"
    r"no new|restricted|reduce-only|temporar(?:y|ily)|temp|overrides?|bans?|banned)\b",
    re.IGNORECASE,
)
"""A limit that a later release lifts: entries blocked, trading halted or frozen, a name
restricted, a limit overridden or changed for a while. A release that blocks besides what it
releases ("GBP block lifted; JPY stays blocked", "new block: entries blocked, previous limits
restored") is none: which hold it ends is not plain."""
_LIMIT_WORDS = frozenset({
    "ENTRY", "ENTRIES", "BREACH", "BREACHED", "VAR", "LIMITS", "WARNING", "BLOCK", "BLOCKED",
    "LIFTED", "RELEASED", "CLEARED", "RESTORED", "ORDERS", "POSITIONS", "TEMP", "HALT",
    "HALTED", "BOOK", "BOOKS", "NOTIFIED", "TRADER", "ACTION", "OVERRIDE", "ALLOWED",
    "EXPIRED", "EXPIRES", "LAPSED", "REVERTED", "OFF", "WINDOW", "APPLIED", "REDUCE", "NOTE",
    "URGENT", "PLEASE", "ATTN", "RISK", "NEW", "ALL", "DESK", "REMOVED", "OVER", "ENDED",
    "NOT", "FROZEN", "UNFROZEN", "TRADING", "RESUMED", "BAN", "LIMIT",
})  # fmt: skip
"""Words in capitals a limit record writes that name no book or instrument."""
_BOOK = re.compile(
    r"(?<![A-Za-z0-9])(?!(?:OK|NO|IT|AM|PM|ON|IN|AT|TO|OF|OR|IF|IS|BE|BY|DO|GO|"
    r"ME|MY|SO|UP|WE|HE|AN|AS)\b)[A-Z]{2}(?![A-Za-z0-9])"
)
"""A book named in two capitals ("EM", "FX", "HY", "US")."""
_SENTENCE = re.compile(r"[.!;\n](?:\s|$)")
"""Where a sentence ends, for the words after a release and the names it gives (a label's
colon does not end it: "GBP BOOKS: block lifted" names GBP)."""
_CLAUSE_START = re.compile(r"[.!;:\n](?:\s|$)")
"""Where the words before a release that may make it none begin ("if you missed it: GBP
block lifted" is a release)."""


_RELEASE_WORDS = (
    "lift", "releas", "unblock", "clear", "remov", "laps", "expir", "ended", "cancel",
    "withdrawn", "rescind", "reinstat", "off", "over", "unfrozen", "resum", "reopen", "allowed",
    "again", "normal", "restor", "revert",
)  # fmt: skip
"""Words one of which every release holds: read before ``_RELEASE``, which costs some tens
of microseconds a text, so most hard events are passed over at once."""


def _may_release(head: str) -> bool:
    lowered = head.lower()
    return any(word in lowered for word in _RELEASE_WORDS)


@lru_cache(maxsize=READINGS_CACHED)
def _limit_names(text: str) -> frozenset[str]:
    return (_names_in(text) | frozenset(_BOOK.findall(text))) - _LIMIT_WORDS


@lru_cache(maxsize=READINGS_CACHED)
def _release_reading(head: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """What ``head`` releases: the kinds of hold (empty: limits back to normal or positions
    OK again, any hold of a book it names) and the books or instruments named in the
    sentences that release; None when it releases
    none: no release, only awaited, denied or asked ones ("the block will be lifted", "block
    NOT lifted", "Is the block lifted yet"), or a block of its own beside it."""
    if not _may_release(head):
        return None
    kinds: frozenset[str] | None = None
    named: frozenset[str] = frozenset()
    clause_starts = [m.end() for m in _CLAUSE_START.finditer(head)]
    sentence_ends = [m.start() for m in _SENTENCE.finditer(head)] + [len(head)]
    sentence_starts = [0] + [m.end() for m in _SENTENCE.finditer(head)]
    for m in _RELEASE.finditer(head):
        begin = max([0, *(c for c in clause_starts if c <= m.start())])
        end = next(e for e in sentence_ends if e >= m.end())
        opening = max(s for s in sentence_starts if s <= m.start())
        if _PENDING.search(head, max(begin, m.start() - PENDING_CHARS), end) or _ASKED.match(
            head, opening
        ):
            continue
        kinds = (kinds or frozenset()) | _held_kinds(m.group())
        named |= _limit_names(head[opening:end])
    if kinds is None or _BLOCKING.search(_RELEASE.sub(" ", head)):
        return None
    return kinds, named


def _releases(items: Sequence[FeedItem], echoes: frozenset[str]) -> dict[str, list[FeedItem]]:
    """For each block, the newer hard event that releases it, the block's state in force:
    "ENTRY BLOCK LIFTED" after "NEW ENTRIES BLOCKED desk-wide", "lifting the EM new-entry
    block" after "no new EM risk until I say, blocking entries". A release (see
    :func:`_release_reading`; a hard event of any type; no echo; more likely a decision than
    not) naming books or instruments in the sentences that release releases the older
    risk-limit events of its channel back to its book's previous release that hold a block of
    a kind it lifts and name every one of them ("GBP block will be lifted at 15:00" and the
    block before it; not "CRO: JPY entries blocked" for "CRO: GBP block lifted"); one naming
    none releases the newest holding a kind it lifts; a block in so many words ("no new …
    entries") is released when no block of the kind named is, by a release of a kind in
    ``ENTRY_HOLDS``; limits back to normal release only a book they name. A block is
    released once; a repeat releases nothing. At a budget too tight for both, the release is
    shown at the block's turn, as a stop's newer change is, when it fits (a new user's trial
    read an entry block at 2,000 characters that was lifted later; a release longer than its
    block may leave room for one hard event less, as a longer stop change may, ADR 0069)."""
    # the blocks are risk-limit events; a release may be typed otherwise by its rules ("AUD
    # freeze lifted, 5m back on at 0.6540" read as a fill): it is read by its words
    limits = sorted(
        (
            i
            for i in items
            if i.event_type == RISK_LIMIT
            or _release_reading(i.text[:RELEASE_HEAD_CHARS]) is not None
        ),
        key=lambda i: (i.last_us, i.key),
    )[-LIMITS_WEIGHED:]
    if len(limits) < 2:
        return {}
    heads = {i.key: i.text[:RELEASE_HEAD_CHARS] for i in limits}
    names = {i.key: _limit_names(heads[i.key]) for i in limits}
    held = {i.key: _held_kinds(heads[i.key]) for i in limits}
    releasing: dict[str, tuple[frozenset[str], frozenset[str]]] = {}  # kinds lifted, books named
    for i in limits:
        reading = _release_reading(heads[i.key])
        if reading is not None:
            releasing[i.key] = reading
    out: dict[str, list[FeedItem]] = {}
    for n, release in enumerate(limits):
        if release.key not in releasing or release.key in echoes:
            continue
        if release.score < IN_FORCE_SCORE:
            continue
        kinds, named = releasing[release.key]
        if not kinds and not named:
            continue  # limits back to normal, of no book named: which hold is not plain
        if release.event_type != RISK_LIMIT and not (kinds and kinds <= LIFTED_BY_OTHERS):
            continue
        older = [
            block
            for block in reversed(limits[:n])
            if block.key not in releasing
            and block.event_type == RISK_LIMIT
            and _channel(block) == _channel(release)
            and block.last_us < release.last_us
            and _BLOCKING.search(heads[block.key])
            and named <= names[block.key]
        ]
        # a block of a kind it names first; else a block in so many words, if it lifts a
        # kind that stops entries or a window ("USD window is over" after "no new positions
        # in USD crosses between 13:20 and 13:45"; an override expiring lifts none)
        for loose in (False, True):
            if loose and not (kinds & ENTRY_HOLDS or not kinds):
                break
            found = False
            for block in older:
                holds = held[block.key]
                if kinds and not kinds & holds and not (loose and ANY_HOLD in holds):
                    continue
                if not kinds and not loose and ANY_HOLD in holds:
                    continue
                found = True
                if block.key in out:
                    break  # released before: this release repeats it, or lifts nothing older
                out[block.key] = [release]
                if not named:
                    break  # naming none: the newest block of its kind alone
            if found:
                break
    return out


_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.,:])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![A-Za-z0-9_:]|[.,]\d)"
)
"""A number as a level is written: "128.40", "5,872", "3,200円" (not a time's "14:30", nor
digits inside a word or an id: "Q3", "ESZ6")."""


def _named_numbers(text: str) -> frozenset[float]:
    """The numbers ``text`` names, as values ("5,872" and "5872" are one; "126.80" and
    "126.8" are one)."""
    return frozenset(float(n.replace(",", "")) for n in _NUMBER.findall(text))


def _in_force(
    chosen: Selection,
    left: int,
    sizes: tuple[dict[str, int], dict[str, int]],
    newer_of: dict[str, list[FeedItem]],
) -> int:
    """Shows the stop or target change in force rather than one it replaced: a chosen
    change gives its place to the newest unchosen change of the same stop
    (:func:`_newer_changes`) that fits in the room the older one took and what the
    selection left (whole if it can be, else cut); a chosen block likewise gives its place
    to its release (:func:`_releases`, ADR 0076). As many hard events are shown; only which
    of the two is shown moves (ADR 0061)."""
    full, cut = sizes
    shown = {i.key for i in chosen.hard}
    for n, older in enumerate(chosen.hard):
        room = (cut if older.key in chosen.cut else full)[older.key] + left
        newer = [
            i for i in newer_of.get(older.key, ()) if i.key not in shown and cut[i.key] <= room
        ]
        if not newer:
            continue
        latest = newer[0]
        whole = full[latest.key] <= room
        left = room - (full if whole else cut)[latest.key]
        chosen.cut.discard(older.key)
        if not whole:
            chosen.cut.add(latest.key)
        shown.discard(older.key)
        shown.add(latest.key)
        chosen.hard[n] = latest
    return left


def _name_omitted_hard(c: Candidates, chosen: Selection, left: int, fmt: Format) -> None:
    """Name omitted hard events newest first as far as ``left`` allows; count the rest."""
    shown = {i.key for i in chosen.hard}
    missing = [i.handle for i in c.hard if i.key not in shown] + list(c.hard_more_handles)
    unnamed = c.hard_total - len(chosen.hard)
    chosen.hard_named = []
    for handle in missing:
        cost = len(handle) + (3 if fmt == "json" else 1)
        if cost > left:
            break
        chosen.hard_named.append(handle)
        left -= cost
    chosen.hard_unnamed = unnamed - len(chosen.hard_named)


# --- the whole body -----------------------------------------------------------------------


READ_ID_PLACEHOLDER = "r_" + "-" * 22
"""Stands for the read id while the body is laid out: a read id has exactly this length,
and which versions it names is only known once the layout is chosen."""
_ELIDED = re.compile(r"^\[… \d+ lines? elided\]$", re.MULTILINE)


def is_elided(text: str) -> bool:
    """A hard event stored cut to its decision lines (a line ``[… N lines elided]`` stands
    where lines are left out): even shown whole, it is not the whole message. A writer who
    types such a line makes their message read as partial: never listed as read, the safe
    side."""
    return _ELIDED.search(text) is not None


def complete_versions(c: Candidates, chosen: Selection) -> tuple[tuple[str, str, str], ...]:
    """The versions a selection shows complete, sorted: the trigger, and every item that
    shows one message's whole version and is shown uncut. Partial content (a hard event
    shown cut, a raw message shown cut, a rollup, a summary, a count) is never listed."""
    shown: set[tuple[str, str, str]] = set()
    if c.trigger is not None:
        shown.add(c.trigger.version)
    for item in chosen.hard:
        if item.whole and not (item.key in chosen.cut and item.cut_text is not None):
            shown.update(item.versions)
    for item in chosen.raw:
        if item.whole and item.key not in chosen.raw_cut:
            shown.update(item.versions)
    for item in chosen.digest_rest:
        if item.whole:
            shown.update(item.versions)
    return tuple(sorted(shown))


def is_summary(item: FeedItem) -> bool:
    """A digest item that stands for messages rather than showing one: a rollup, a
    summary, a collapse block (not a hard event, an excerpt or a tombstone, even cut or
    elided: those show their message, in part)."""
    return not item.whole and item.kind not in (HARD_EVENT_BLOCK, RAW_EXCERPT, TOMBSTONE_BLOCK)


def summarized_versions(c: Candidates, chosen: Selection) -> tuple[tuple[str, str, str], ...]:
    """The versions the selection shows only in part, sorted: what its summaries
    (:func:`is_summary`, shown or counted in a note) stand for, and its hard events and raw
    messages shown cut — every version it shows, less what it shows complete."""
    complete = set(complete_versions(c, chosen))
    told: set[tuple[str, str, str]] = set()
    for item in chosen.hard + chosen.digest_rest + chosen.counted + chosen.raw:
        told.update(item.versions)
    return tuple(sorted(told - complete))


def trigger_text(trigger: Trigger, style: Style | None = None) -> str:
    """The ``[trigger]`` section: one metadata line (full time, handle, ``re:`` and the
    message it replies to, author by name —
    quoted when spelled like one of the candidates' aliases — trust, role, ``new``), then
    the whole content as quoted data."""
    name = style.name_token(trigger.author) if style else author_token(trigger.author)
    parts = [format_rfc3339(trigger.created_us), trigger.handle]
    if trigger.reply_to:
        parts.append("re:" + trigger.reply_to)  # a "go" says what it answers (an id: no quotes)
    parts.append(name)
    parts += [trigger.trust, trigger.role] + (["new"] if trigger.new else [])
    return "[trigger]\n[" + " ".join(parts) + "]\n" + quoted(trigger.text)


def trigger_json(trigger: Trigger) -> str:
    """The JSON body's ``trigger`` member, with its leading comma (what it adds)."""
    return ',"trigger":' + compact(trigger.message_object)


def _trigger_part(c: Candidates, fmt: Format, style: Style) -> str:
    """The trigger section (``style``: the candidates', the same on every fitting pass)."""
    if c.trigger is None:
        return ""
    return trigger_json(c.trigger) if fmt == "json" else trigger_text(c.trigger, style)


def _numbers(
    c: Candidates, chosen: Selection, raw_chars: int, digest_chars: int, trigger_chars: int = 0
) -> dict[str, Any]:
    digest = chosen.hard + chosen.digest_rest + chosen.counted
    covered: set[str] = set()
    for item in digest + chosen.raw:
        covered |= item.covers
    if c.trigger is not None and c.trigger.in_window:
        covered.add(c.trigger.handle)
    elements = chosen.hard + chosen.digest_rest + chosen.raw
    new = sum(1 for i in elements if i.new) + (1 if c.trigger and c.trigger.new else 0)
    digest_sources: set[str] = set()
    for item in digest:
        digest_sources |= item.covers
    older_handles: set[str] = set()
    for item in c.older:
        older_handles |= item.covers
    older_covered = len(older_handles & covered)
    cutoff = c.to_us - c.raw_recent_us
    for item in digest:
        if item.kind in ROLLUP_KINDS and item.last_us < cutoff:
            older_covered += len(item.covers - older_handles)  # rollups cover ordinary messages
    generated = [i.generated_us for i in digest if i.generated_us is not None]
    status = c.status
    if status == "ok" and not digest and not chosen.raw:
        status = "unavailable"
    return {
        "kind": c.kind,
        "since": format_go_duration(c.since_us),
        "channels": list(c.channels),
        "messages": len(chosen.raw),
        "available": c.available,
        "omitted": c.available - len(covered),
        "retained": c.available,
        "digest": status,
        "raw_bytes": raw_chars,
        "digest_bytes": digest_chars,
        "digest_blocks": len(digest),
        "digest_source_messages": len(digest_sources),
        "coverage_gaps": c.coverage_gaps,
        "deterministic_only": all(i.processor in ("deterministic", "source") for i in digest),
        "digest_raw_recent": format_go_duration(c.raw_recent_us),
        "digest_older_raw_omitted": max(0, c.older_total - older_covered)
        if c.kind == "raw_window+digest"
        else 0,
        "digest_generated_at": format_generated(max(generated)) if generated else None,
        "range": None
        if c.range_us is None
        else {"from": format_rfc3339(c.range_us[0]), "to": format_rfc3339(c.range_us[1])},
        "new": new,
        "read_id": READ_ID_PLACEHOLDER,
        **(
            {}
            if c.trigger is None
            else {"trigger": c.trigger.handle, "trigger_chars": trigger_chars}
        ),
        "omitted_hard_events": chosen.hard_named,
        "more_hard_events": chosen.hard_unnamed,
        **({} if c.llm is None else {"llm": c.llm}),
    }


def header_line(n: dict[str, Any]) -> str:
    """The fixed header: these keys, in this order (proxies parse them)."""
    since = n["since"]
    rng = "none" if n["range"] is None else f"{n['range']['from']}..{n['range']['to']}"
    return (
        f"[channel-awareness] kind={n['kind']} since={since} channels={','.join(n['channels'])} "
        f"messages={n['messages']} available={n['available']} omitted={n['omitted']} "
        f"retained={n['retained']}/since-{since} digest={n['digest']} "
        f"raw_bytes={n['raw_bytes']} digest_bytes={n['digest_bytes']} "
        f"digest_blocks={n['digest_blocks']} "
        f"digest_source_messages={n['digest_source_messages']} "
        f"coverage_gaps={n['coverage_gaps']} "
        f"deterministic_only={'true' if n['deterministic_only'] else 'false'} "
        f"digest_raw_recent={n['digest_raw_recent']} "
        f"digest_older_raw_omitted={n['digest_older_raw_omitted']} "
        f"digest_generated_at={n['digest_generated_at'] or 'none'} range={rng} "
        f"new={n['new']} read_id={n['read_id']}"
        + (f" trigger={n['trigger']} trigger_chars={n['trigger_chars']}" if "trigger" in n else "")
        + (f" llm={n['llm']}" if "llm" in n else "")
        + "\n"
    )


Drawn = tuple[str, dict[str, Any]]
"""A body and the numbers its header states (the one source of the feed's telemetry)."""
Attempt = tuple[Selection, str, dict[str, Any]]
"""A selection for one budget, drawn: its body and numbers."""


def _section(
    name: str, lines: Sequence[tuple[FeedItem, str]], style: Style, raw: bool = False
) -> str:
    """A section line stating the default trust, then its items, oldest first, with a day
    line wherever the day changes when the window crosses midnight."""
    new = ", new" if style.new_of(raw) else ""
    channel = f"channel {style.channel}, " if style.channel is not None else ""
    out = [
        f"[{name}; {channel}trust {style.trust}, role {style.role_of(raw)}{new} unless marked]\n"
    ]
    day = None
    for item, text in lines:
        if style.days and _day(item.first_us) != day:
            day = _day(item.first_us)
            out.append(f"[day {day}]\n")
        out.append(text)
    return "".join(out)


def _counted_line(items: Sequence[FeedItem]) -> str:
    kinds = Counter(i.kind for i in items)
    parts = [counted(kinds[k], k) for k in COLLAPSE_NOUNS if kinds[k]]
    return f"[also collapsed, one message each: {', '.join(parts)}]\n"


def _render_text(c: Candidates, chosen: Selection, style: Style) -> Drawn:
    digest = sorted(chosen.hard + chosen.digest_rest, key=lambda i: i.order)
    trigger = _trigger_part(c, "text", style)
    style = _body_style(style, [*((i, False) for i in digest), *((i, True) for i in chosen.raw)])
    digest_text = ""
    decided = verdicts_not_shown(c, chosen)
    if digest or chosen.counted:
        digest_text = _section(
            "digest",
            [
                (i, item_text(i, i.key in chosen.cut, style, False, decided.get(i.handle)))
                for i in digest
            ],
            style,
        )
        if chosen.counted:
            digest_text += _counted_line(chosen.counted)
    raw_text = ""
    if chosen.raw:
        raw_lines = []
        for item in sorted(chosen.raw, key=lambda i: i.order):
            shown = chosen.raw_cut.get(item.key)
            raw_lines.append(
                (
                    item,
                    item_text(item, False, style, True)
                    if shown is None
                    else _raw_cut_text(item, style, shown),
                )
            )
        raw_text = _section("raw recent", raw_lines, style, raw=True)
    numbers = _numbers(c, chosen, len(raw_text), len(digest_text), len(trigger))
    notes = trigger
    omission = omission_note(
        numbers["omitted"], chosen.hard_named, chosen.hard_unnamed, chosen.omission_cause
    )
    notes += omission
    if any(
        (i.key in chosen.cut and i.cut_text is not None) or is_elided(i.text) for i in chosen.hard
    ):
        # a decision shown cut or stored with lines elided; the omission line, when there
        # is one, already says where full texts are
        notes += CUT_NOTE_SHORT if omission else CUT_NOTE
    notes += "".join(gap_text(g) for g in chosen.gaps)
    if len(chosen.gaps) < c.coverage_gaps:
        notes += gaps_not_shown(c.coverage_gaps - len(chosen.gaps), bool(chosen.gaps))
    notes += legend(style)
    return header_line(numbers) + notes + digest_text + raw_text, numbers


def _render_json(c: Candidates, chosen: Selection, style: Style) -> Drawn:
    digest = sorted(chosen.hard + chosen.digest_rest, key=lambda i: i.order)
    decided = verdicts_not_shown(c, chosen)
    digest_json = (
        "["
        + ",".join(item_json(i, i.key in chosen.cut, False, decided.get(i.handle)) for i in digest)
        + "]"
    )
    raw = sorted(chosen.raw, key=lambda i: i.order)
    raw_json = (
        "["
        + ",".join(
            item_json(i, False, True)
            if i.key not in chosen.raw_cut
            else _raw_cut_json(i, chosen.raw_cut[i.key])
            for i in raw
        )
        + "]"
    )
    trigger = _trigger_part(c, "json", style)
    # each section's characters are its items' (with their separating commas), not the
    # array's brackets: an empty section is 0, as in the text body
    numbers = _numbers(c, chosen, len(raw_json) - 2, len(digest_json) - 2, len(trigger))
    header = {
        k: v for k, v in numbers.items() if k not in ("omitted_hard_events", "more_hard_events")
    }
    omitted = {
        "messages": numbers["omitted"],
        "hard_events": chosen.hard_named,
        "more_hard_events": chosen.hard_unnamed,
        "coverage_gaps": c.coverage_gaps - len(chosen.gaps),
    }
    kinds = Counter(i.kind for i in chosen.counted)
    collapsed = {k: kinds[k] for k in COLLAPSE_NOUNS if kinds[k]}
    read_content = [
        {"source_handle": i.handle, "content_chars": len(i.text)}
        for i in raw
        if i.key in chosen.raw_cut
    ]
    return (
        '{"header":'
        + compact(header)
        + trigger
        + ',"omitted":'
        + compact(omitted)
        + ',"digest":'
        + digest_json
        + ',"raw_recent":'
        + raw_json
        + ',"collapsed":'
        + compact(collapsed)
        + ',"coverage_gaps":['
        + ",".join(gap_json(g) for g in chosen.gaps)
        + '],"read_content":'
        + compact(read_content)
        + "}"
    ), numbers


def render(c: Candidates, max_chars: int, fmt: Format) -> Body:
    """The body for ``c`` within ``max_chars`` code points, fitted iteratively; a trigger
    is shown whole on top of that (the header's ``trigger_chars`` says how much it adds).

    The body's ``numbers`` are the ones its header states, and its ``complete`` the
    versions it shows complete. The header holds :data:`READ_ID_PLACEHOLDER` until
    :meth:`Body.with_read_id`. Raises ``BudgetTooSmall`` when even the header does not fit.
    """
    style = style_of(c)
    sizes = Sizes(fmt, style)  # fitting passes ask for the same sizes again
    drawer = _render_json if fmt == "json" else _render_text
    extra = len(_trigger_part(c, fmt, style))
    limit = max_chars + extra  # the trigger is never cut and never counted

    def draw(chosen: Selection) -> Drawn:
        return drawer(c, chosen, style)

    media = "application/json" if fmt == "json" else "text/plain; charset=utf-8"
    nothing = Selection(hard_unnamed=c.hard_total if c.kind == "raw_window+digest" else 0)
    minimal, minimal_numbers = draw(nothing)
    minimal_complete = complete_versions(c, nothing)
    needed = len(minimal.split("\n", 1)[0]) + 1 if fmt == "text" else len(minimal) - extra
    if needed > max_chars:
        raise BudgetTooSmall(needed)
    if len(minimal) > limit:  # the header fits, its notes do not: the counts, if they fit
        # (only text: a JSON body's counts are part of the header it needs)
        head = minimal.split("\n", 1)[0] + "\n" + _trigger_part(c, fmt, style)
        short = short_omission_note(minimal_numbers["omitted"], nothing.hard_unnamed)
        if len(head) + len(short) <= limit:
            head += short
        return Body(head, media, minimal_numbers, complete=minimal_complete)

    def attempt(budget: int) -> Attempt:
        """The selection for ``budget``, drawn."""
        chosen = select(c, budget, fmt, style, sizes)
        if c.kind == "raw_window+digest":
            chosen.hard_unnamed = c.hard_total - len(chosen.hard)
        content, numbers = draw(chosen)
        return chosen, content, numbers

    # Start from the header alone. An overshoot (notes, section lines, longer numbers)
    # shrinks the budget by itself; when that still overshoots (a selection's sizes
    # leave out the section lines, so the same selection can overshoot again), search
    # for the largest budget that fits: shrinking one overshoot at a time could take
    # hundreds of passes.
    budget = max_chars - needed
    trial = attempt(budget)
    top, first_hard = budget - 1, len(trial[0].hard)
    if len(trial[1]) > limit:
        budget -= len(trial[1]) - limit
        trial = attempt(budget)
    found = trial if len(trial[1]) <= limit else None

    def largest(low: int, high: int, found: Attempt | None) -> Attempt | None:
        """The attempt at the largest budget from ``low`` to ``high`` that fits, else ``found``."""
        while low <= high:
            middle = (low + high) // 2
            trial = attempt(middle)
            if len(trial[1]) > limit:
                high = middle - 1
            else:
                found, low = trial, middle + 1
        return found

    if found is not None and budget < top and len(found[0].hard) < first_hard:
        # The overshoot may come from a section a lower tier opened (its line is in no
        # item's size): shrinking by all of it can drop hard events that fit beside the
        # notes. Then the largest budget between that fits is the body.
        found = largest(budget + 1, top, found)
    if found is None:
        found = largest(0, budget - 1, None)
    if found is None:
        return Body(minimal, media, minimal_numbers, complete=minimal_complete)
    chosen, content, numbers = found
    if chosen.hard_unnamed:
        _name_omitted_hard(c, chosen, limit - len(content), fmt)
        content, numbers = draw(chosen)
        while len(content) > limit and chosen.hard_named:
            chosen.hard_named.pop()
            chosen.hard_unnamed += 1
            content, numbers = draw(chosen)
    unfilled = len(content) + FILLED_SLACK < limit
    omitted_hard = chosen.hard_named or chosen.hard_unnamed
    at_limit = len(chosen.raw) >= c.limit
    if fmt == "text" and numbers["omitted"] and unfilled and at_limit and not omitted_hard:
        # every hard event shown, the raw tier full to its limit and room left: the limit
        # left the messages out, not the budget (a raw tier short of its limit with room
        # left is short because its next message did not fit)
        chosen.omission_cause = "limit"
        content, numbers = draw(chosen)
    return Body(
        content,
        media,
        numbers,
        _used_up(c, chosen),
        complete_versions(c, chosen),
        summarized_versions(c, chosen),
    )
