"""The feed's decisions, as pure functions: what to serve under a budget, and how it reads.

Input is a :class:`Candidates` (what the window holds, in priority tiers, newest
first); output is the body, text or JSON, never longer than ``max_chars`` code
points. Priority: the header, then hard events (cut to their decision lines
before any is omitted, then the newest that fit, the rest named), then the raw
recent tier (a contiguous newest-first run), then sparse blocks, then older raw
excerpts. Each message appears at most once; sections are chronological.

The header describes the final body, so the layout is fitted iteratively: the
body budget shrinks by any overshoot until header and body fit together.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from channel_memory.models import ROLLUP_KINDS
from channel_memory.timefmt import format_generated, format_go_duration, format_rfc3339

Format = Literal["text", "json"]
Tier = Literal["hard", "raw", "sparse", "older"]


class BudgetTooSmall(Exception):
    """``max_chars`` cannot hold even the header."""

    def __init__(self, needed: int) -> None:
        super().__init__(f"max_chars must be at least {needed} for this header")
        self.needed = needed


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One servable thing: a block or a source message, with what it covers."""

    key: str
    """Unique: the block id, or ``source:<handle>`` for a message rendered from its source."""
    tier: Tier
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

    @property
    def order(self) -> tuple[int, int, str]:
        return (self.first_us, self.last_us, self.key)


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


@dataclass(slots=True)
class Selection:
    hard: list[FeedItem] = field(default_factory=list)
    cut: set[str] = field(default_factory=set)
    hard_named: list[str] = field(default_factory=list)
    hard_unnamed: int = 0
    raw: list[FeedItem] = field(default_factory=list)
    digest_rest: list[FeedItem] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Body:
    content: str
    media_type: str
    numbers: dict[str, Any]
    """What the header states (sizes included): the telemetry reports these, not a recount."""
    used_up: bool = False
    """Some tier had every candidate it was offered served: it might have taken more."""


def _used_up(c: Candidates, chosen: Selection) -> bool:
    served = {i.key for i in chosen.raw + chosen.digest_rest}
    rest = [*c.sparse, *c.older]
    return bool(rest) and all(i.key in served for i in rest)


# --- rendering one item -------------------------------------------------------------------

_UNSAFE = re.compile(r"[^\w.@:-]+")


def _safe(name: str | None) -> str:
    """An author name fit for a metadata line: no spaces or brackets, at most 32 chars."""
    return _UNSAFE.sub("_", name or "unknown")[:32] or "unknown"


def _clock(micros: int, long_window: bool) -> str:
    if long_window:
        text = format_rfc3339(micros)
        return f"{text[5:10]} {text[11:16]}"
    minutes = (micros // 60_000_000) % 1440
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def quoted(text: str) -> str:
    """Content as quoted data: every line after ``> ``, characters unchanged."""
    return "".join(f"> {line}\n" for line in text.split("\n"))


def item_text(item: FeedItem, cut: bool, long_window: bool, in_raw_tier: bool) -> str:
    time = _clock(item.first_us, long_window)
    if item.last_us != item.first_us and item.handles > 1:
        time += "-" + _clock(item.last_us, long_window)[-5:]
    if in_raw_tier:
        meta = f"[{time} {item.handle} {_safe(item.author)} {item.trust}]"
    elif item.kind == "hard_event":
        meta = f"[{time} hard:{item.event_type} {item.handle} {_safe(item.author)} {item.trust}]"
    elif item.handles == 1:
        who = f" {_safe(item.author)}" if item.kind == "raw_excerpt" else ""
        meta = f"[{time} {item.kind} {item.handle}{who} {item.trust}]"
    else:
        more = f"+{item.handles - 1}"
        meta = f"[{time} {item.kind} {item.handle}{more} id={item.block_id} {item.trust}]"
    body = item.cut_text if cut and item.cut_text is not None else item.text
    return meta + "\n" + quoted(body)


def item_json(item: FeedItem, cut: bool, in_raw_tier: bool = False) -> str:
    data = item.json_object
    if in_raw_tier and item.message_object is not None:
        data = item.message_object
    elif cut and item.cut_text is not None:
        data = {**data, "text": item.cut_text}
    return _compact(data)


def _compact(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


# --- selection under a budget -------------------------------------------------------------


_SIZES: dict[tuple[int, str, bool, bool, bool], int] = {}


def _size(item: FeedItem, fmt: Format, cut: bool, long_window: bool, raw_tier: bool) -> int:
    """An item's rendered size; memoised, since fitting asks for it several times."""
    key = (id(item), fmt, cut, long_window, raw_tier)
    size = _SIZES.get(key)
    if size is None:
        if fmt == "json":
            size = len(item_json(item, cut, raw_tier)) + 1
        else:
            size = len(item_text(item, cut, long_window, raw_tier))
        _SIZES[key] = size
    return size


HARD_NOTE_RESERVE = 200
"""Room kept for the two omission lines when not every hard event fits."""


def select(c: Candidates, budget: int, fmt: Format) -> Selection:
    """Choose what to serve within ``budget`` characters of body, by priority."""
    long_window = c.to_us - c.from_us > 86_400_000_000
    chosen = Selection()
    left = budget
    if c.kind == "raw_window+digest":
        left = _select_hard(c, chosen, left, fmt, long_window)
        if len(chosen.hard) < c.hard_total:
            return chosen  # the hard events took everything; the rest is omitted
    shown: set[str] = set()
    for item in chosen.hard:
        shown |= item.covers
    for item in c.raw[: c.limit]:
        size = _size(item, fmt, False, long_window, True)
        if size > left:
            break  # the recent tier is a contiguous newest-first run
        chosen.raw.append(item)
        shown |= item.covers
        left -= size
    if c.kind == "raw_window":
        return chosen
    in_raw = {i.key for i in chosen.raw}
    not_in_raw_tier = [i for i in c.raw if i.key not in in_raw]
    for tier in (c.sparse, [*not_in_raw_tier, *c.older]):
        for item in tier:
            if item.covers & shown:
                continue
            size = _size(item, fmt, False, long_window, False)
            if size <= left:
                chosen.digest_rest.append(item)
                shown |= item.covers
                left -= size
    return chosen


def _select_hard(
    c: Candidates, chosen: Selection, left: int, fmt: Format, long_window: bool
) -> int:
    items = list(c.hard)
    full = {i.key: _size(i, fmt, False, long_window, False) for i in items}
    cut = {i.key: _size(i, fmt, True, long_window, False) for i in items}
    total = sum(full.values())
    everything_loaded = len(items) == c.hard_total
    # Cut the hard events that save the most first, until all of them fit.
    for item in sorted(items, key=lambda i: (cut[i.key] - full[i.key], i.key)):
        if total <= left:
            break
        if cut[item.key] < full[item.key]:
            chosen.cut.add(item.key)
            total -= full[item.key] - cut[item.key]
    if everything_loaded and total <= left:
        chosen.hard = items
        return left - total
    # Even cut they do not fit: the newest that fit are shown, the rest named.
    chosen.cut = {i.key for i in items}
    left -= HARD_NOTE_RESERVE + min(240, left // 8)  # the note, and a few handles in it
    for item in items:
        if cut[item.key] > left:
            break
        chosen.hard.append(item)
        left -= cut[item.key]
    return max(0, left)


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


def _numbers(c: Candidates, chosen: Selection, raw_chars: int, digest_chars: int) -> dict[str, Any]:
    digest = chosen.hard + chosen.digest_rest
    covered: set[str] = set()
    for item in digest + chosen.raw:
        covered |= item.covers
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
        f"digest_generated_at={n['digest_generated_at'] or 'none'} range={rng}"
        + (f" llm={n['llm']}" if "llm" in n else "")
        + "\n"
    )


Drawn = tuple[str, dict[str, Any]]
"""A body and the numbers its header states (the one source of the feed's telemetry)."""


def _render_text(c: Candidates, chosen: Selection) -> Drawn:
    long_window = c.to_us - c.from_us > 86_400_000_000
    digest = sorted(chosen.hard + chosen.digest_rest, key=lambda i: i.order)
    digest_text = ""
    if digest:
        digest_text = "[digest]\n" + "".join(
            item_text(i, i.key in chosen.cut, long_window, False) for i in digest
        )
    raw_text = ""
    if chosen.raw:
        raw_text = "[raw recent]\n" + "".join(
            item_text(i, False, long_window, True)
            for i in sorted(chosen.raw, key=lambda i: i.order)
        )
    numbers = _numbers(c, chosen, len(raw_text), len(digest_text))
    notes = ""
    if numbers["omitted"]:
        notes += (
            f"[omitted {numbers['omitted']} retained messages due to max_chars; "
            "retrieve with get_channel_messages]\n"
        )
    if chosen.hard_named:
        more = f" and {chosen.hard_unnamed} more" if chosen.hard_unnamed else ""
        notes += (
            f"[omitted hard events, newest first: {' '.join(chosen.hard_named)}{more}; "
            "retrieve with get_channel_messages]\n"
        )
    elif chosen.hard_unnamed:
        notes += (
            f"[omitted hard events: {chosen.hard_unnamed}; retrieve with get_channel_messages]\n"
        )
    return header_line(numbers) + notes + digest_text + raw_text, numbers


def _render_json(c: Candidates, chosen: Selection) -> Drawn:
    digest = sorted(chosen.hard + chosen.digest_rest, key=lambda i: i.order)
    digest_json = "[" + ",".join(item_json(i, i.key in chosen.cut) for i in digest) + "]"
    raw_json = (
        "["
        + ",".join(item_json(i, False, True) for i in sorted(chosen.raw, key=lambda i: i.order))
        + "]"
    )
    numbers = _numbers(c, chosen, len(raw_json), len(digest_json))
    header = {
        k: v for k, v in numbers.items() if k not in ("omitted_hard_events", "more_hard_events")
    }
    omitted = {
        "messages": numbers["omitted"],
        "hard_events": chosen.hard_named,
        "more_hard_events": chosen.hard_unnamed,
    }
    return (
        '{"header":'
        + _compact(header)
        + ',"omitted":'
        + _compact(omitted)
        + ',"digest":'
        + digest_json
        + ',"raw_recent":'
        + raw_json
        + "}"
    ), numbers


def render(c: Candidates, max_chars: int, fmt: Format) -> Body:
    """The body for ``c`` within ``max_chars`` code points, fitted iteratively.

    The body's ``numbers`` are the ones its header states. Raises ``BudgetTooSmall``
    when even the header does not fit.
    """
    _SIZES.clear()  # sizes are memoised by object identity, for this call only
    draw = _render_json if fmt == "json" else _render_text
    media = "application/json" if fmt == "json" else "text/plain; charset=utf-8"
    nothing = Selection(hard_unnamed=c.hard_total if c.kind == "raw_window+digest" else 0)
    minimal, minimal_numbers = draw(c, nothing)
    needed = len(minimal.split("\n", 1)[0]) + 1 if fmt == "text" else len(minimal)
    if needed > max_chars:
        raise BudgetTooSmall(needed)
    if len(minimal) > max_chars:  # the header fits, its notes do not
        return Body(minimal.split("\n", 1)[0] + "\n", media, minimal_numbers)
    # Start from the header alone; any overshoot (notes, longer numbers) shrinks the budget.
    budget = max_chars - needed
    for _ in range(64):
        chosen = select(c, budget, fmt)
        if c.kind == "raw_window+digest":
            chosen.hard_unnamed = c.hard_total - len(chosen.hard)
        content, numbers = draw(c, chosen)
        if len(content) > max_chars:
            budget -= len(content) - max_chars
            continue
        if chosen.hard_unnamed:
            _name_omitted_hard(c, chosen, max_chars - len(content), fmt)
            content, numbers = draw(c, chosen)
            while len(content) > max_chars and chosen.hard_named:
                chosen.hard_named.pop()
                chosen.hard_unnamed += 1
                content, numbers = draw(c, chosen)
        return Body(content, media, numbers, _used_up(c, chosen))
    return Body(minimal, media, minimal_numbers)
