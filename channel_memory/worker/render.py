"""Pure block rendering: from a plan (kind, group, covered versions) to a recall block.

A block's id is a hash of its channel, kind, group, covered ``message_id@content_hash``
pairs, the derivation fingerprint (rules and rendering settings) and, for a decision
by reply, the decision and the handle it answers, so it is stable while its inputs
are unchanged and can be computed without the content.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from channel_memory.kernel.models import (
    DECISION_REPEAT,
    HARD_EVENT_BLOCK,
    LOW_VALUE_ACK,
    RAW_EXCERPT,
    SPARSE_KINDS,
    TELEMETRY_COUNT,
    TOMBSTONE_BLOCK,
    TOPIC_ROLLUP,
    BlockSource,
    RecallBlock,
    SourceVersion,
)
from channel_memory.kernel.timefmt import format_rfc3339
from channel_memory.worker.classify import telemetry_kind
from channel_memory.worker.rules import TRADE_LINE_TYPES, RuleSet, trade_lines

PROCESSOR = "deterministic"
KEY_LINES = 3
KEY_LINE_CHARS = 160


@dataclass(frozen=True, slots=True)
class BlockPlan:
    """What a block will cover, known before any content is read."""

    kind: str
    group_key: str
    members: tuple[tuple[str, str], ...]
    """``(message_id, content_hash)`` of the covered versions, chronological."""
    event_type: str | None = None
    score: float = 0.5
    stamp: str = ""
    """A hash of what the text shows besides the hashes (times, author names)."""
    answers: str | None = None
    """A decision by reply: the source handle of the message it decides on."""


@dataclass(frozen=True, slots=True)
class RenderSettings:
    rules: RuleSet
    hard_event_max_chars: int
    fingerprint: str


def block_id(channel_id: str, plan: BlockPlan, fingerprint: str) -> str:
    """A URL-safe id, stable while the block's inputs are unchanged."""
    inputs = [channel_id, plan.kind, plan.group_key, fingerprint, plan.stamp]
    if plan.answers is not None:
        # a decision by reply (its type, score and target) depends on a message the
        # block does not cover: that is an input of its own
        inputs.append(f"answers={plan.answers}|{plan.event_type}|{plan.score!r}")
    seed = "\0".join(inputs + [f"{m}@{h}" for m, h in plan.members])
    digest = hashlib.sha256(seed.encode()).digest()[:15]
    return base64.b32encode(digest).decode().lower()


def _clock(micros: int) -> str:
    return format_rfc3339(micros)[11:16]


def _span(versions: Sequence[SourceVersion]) -> str:
    first, last = versions[0].created_us, versions[-1].created_us
    return _clock(first) if _clock(first) == _clock(last) else f"{_clock(first)}-{_clock(last)}"


def counted(n: int, noun: str) -> str:
    """``n`` and the noun, grammatically: "1 message", "2 messages"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _author(version: SourceVersion) -> str:
    return version.author_name or version.author_id or "unknown"


def _first_line(text: str, limit: int = KEY_LINE_CHARS) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


# A token (a run of non-space characters) holding a digit counts once; so does each
# all-caps word of a token without one. The look-behind lets the first branch start at
# the beginning of a token only: without it the branch was retried at every character
# of a long digit-free token, each try scanning to the token's end (quadratic).
_SIGNAL = re.compile(r"(?<!\S)\S*\d\S*|\b[A-Z]{2,}\b")


def signal_count(content: str) -> int:
    """How many numbers and tickers ``content`` holds; linear in its length."""
    return sum(1 for _ in _SIGNAL.finditer(content))


def _informativeness(content: str) -> tuple[int, int]:
    """Numbers and tickers first, then vocabulary: how much a line says."""
    return (signal_count(content), len(set(content.lower().split())))


@dataclass(frozen=True, slots=True)
class ContentFacts:
    """Everything rendering reads from one version's content, computed in one pass.

    Computing it costs time linear in the content's length (the only such cost in
    rendering), so the worker computes it off the event loop and before it takes
    the writer; :func:`render` then only assembles text.
    """

    informativeness: tuple[int, int]
    key_line: str
    """The first non-blank line, cut to ``KEY_LINE_CHARS``."""
    latest_line: str
    """The first non-blank line, cut to 240 characters."""
    hard_text: str | None = None
    """For a hard event: the text as served (verbatim, or cut when too long)."""
    cut_text: str | None = None
    """For a hard event: its decision clauses (see :func:`clause_cut`), else its text."""


def content_facts(
    version: SourceVersion, settings: RenderSettings, hard: bool, event_type: str | None = None
) -> ContentFacts:
    """The facts of ``version`` that rendering needs; ``hard`` adds the hard-event texts
    (cut as a hard event of ``event_type`` is, see :meth:`RuleSet.shown_spans`)."""
    content = version.content
    hard_text = cut = None
    if hard:
        spans = settings.rules.shown_spans(content, event_type)
        long_cut = decision_cut(content, settings, event_type, spans)
        hard_text = content if len(content) <= settings.hard_event_max_chars else long_cut
        cut = clause_cut(content, spans) or hard_text
    return ContentFacts(
        _informativeness(content), _first_line(content), _first_line(content, 240), hard_text, cut
    )


def _authors(versions: Sequence[SourceVersion]) -> str:
    counts = Counter(_author(v) for v in versions)
    return ", ".join(
        f"{name} ({n})" for name, n in sorted(counts.items(), key=lambda i: (-i[1], i[0]))
    )


def _key_lines(versions: Sequence[SourceVersion], facts: Sequence[ContentFacts]) -> list[str]:
    ranked = sorted(
        range(len(versions)),
        key=lambda i: (facts[i].informativeness, -i),
        reverse=True,
    )[:KEY_LINES]
    return [f"- {_author(versions[i])}: {facts[i].key_line}" for i in sorted(ranked)]


def decision_cut(
    content: str,
    settings: RenderSettings,
    event_type: str | None = None,
    spans: Sequence[tuple[int, int]] = (),
) -> str:
    """A hard event cut to its decision-bearing lines, each run of the rest marked elided.

    The first line (for context), every line a rule matches, every line holding one of
    ``spans`` (the clauses its clause cut keeps, :meth:`RuleSet.shown_spans`: what the
    message shows cut, it shows whole too) and, for a proposal, its trade line when no kept
    line is one (:func:`trade_lines`) are kept verbatim, in order; each run of lines left
    out is one line ``[… N lines elided]`` where the lines were (N counting the lines that
    are not blank; a run of blank lines alone, or one no longer than its mark, stays as it
    was), so a reader sees what stood between the kept ones and how much (the item's handle
    reads the whole). A cut no shorter than the message is the message."""
    lines = content.split("\n")
    keep = settings.rules.decision_lines(content)
    keep[0] = True
    line = at = 0
    for start, _ in sorted(spans):  # counted on from the last: linear at any length
        line += content.count("\n", at, start)
        at = start
        keep[line] = True
    if event_type in TRADE_LINE_TYPES:
        trade = trade_lines(content)
        if not any(keep[n] for n in trade):
            for n in trade:
                keep[n] = True
    out: list[str] = []
    run: list[str] = []  # the lines left out since the last kept one

    def close_run() -> None:
        # a run of blank lines alone, or one no longer than its mark ("-- Tom"), stays as
        # it was; any other is one marked line
        written = sum(1 for text in run if text.strip())
        mark = _elision(written)
        short = sum(len(text) + 1 for text in run) <= len(mark) + 1
        out.extend(run if not written or short else [mark])
        run.clear()

    for text, kept in zip(lines, keep, strict=True):
        if not kept:
            run.append(text)
            continue
        close_run()
        out.append(text)
    close_run()
    cut = "\n".join(out)
    return cut if len(cut) < len(content) else content


ELLIPSIS = "…"
"""Marks where a clause cut leaves out part of a line."""


def clause_cut(content: str, spans: Sequence[tuple[int, int]]) -> str | None:
    """A hard event cut to its decision clauses, each verbatim: one line per line of the
    message that holds one, ``…`` where part of that line is left out and where lines are
    left out before, between or after the kept ones (so a cut says it is cut by its text
    alone); None when there is no such clause or the cut would not be shorter.

    Clauses next to each other in a line are kept as one run of the original text, so
    a decision written over two sentences stays whole.
    """
    if not spans:
        return None
    lines: list[str] = []
    line_end = -1
    kept_end = 0  # where the last line kept ends: what lies between is left out
    pieces: list[tuple[int, int]] = []

    def flush() -> None:
        nonlocal kept_end
        if not pieces:
            return
        out = []
        if content[kept_end : pieces[0][0]].strip():
            out.append(ELLIPSIS)
        run_start, run_end = pieces[0]
        for start, end in pieces[1:]:
            if content[run_end:start].strip():
                out.append(content[run_start:run_end])
                out.append(ELLIPSIS)
                run_start = start
            run_end = end
        out.append(content[run_start:run_end])
        if content[run_end:line_end].strip():
            out.append(ELLIPSIS)
        lines.append(" ".join(out))
        kept_end = line_end
        pieces.clear()

    for start, end in spans:
        if start >= line_end:
            flush()
            found = content.find("\n", start)
            line_end = len(content) if found < 0 else found
        pieces.append((start, end))
    flush()
    if content[kept_end:].strip() and not lines[-1].endswith(ELLIPSIS):
        lines[-1] += " " + ELLIPSIS
    cut = "\n".join(lines)
    return cut if len(cut) < len(content) else None


def _elision(count: int) -> str:
    noun = "line" if count == 1 else "lines"
    return f"[… {count} {noun} elided]"


def _text(plan: BlockPlan, versions: Sequence[SourceVersion], facts: Sequence[ContentFacts]) -> str:
    kind = plan.kind
    first = versions[0]
    if kind == HARD_EVENT_BLOCK:
        assert facts[0].hard_text is not None
        return facts[0].hard_text
    if kind == RAW_EXCERPT:
        return first.content
    if kind == TOMBSTONE_BLOCK:
        return f"message by {_author(first)} at {_clock(first.created_us)} was deleted"
    if kind == TELEMETRY_COUNT:
        kinds = Counter(telemetry_kind(v.content) or "status" for v in versions)
        detail = ", ".join(f"{name} {n}" for name, n in sorted(kinds.items()))
        count = counted(len(versions), "runtime/status message")
        return f"{count} {_span(versions)} collapsed ({detail})"
    if kind == LOW_VALUE_ACK:
        authors = counted(len({_author(v) for v in versions}), "author")
        count = counted(len(versions), "short acknowledgement")
        return f"{count} from {authors} {_span(versions)} collapsed"
    if kind == DECISION_REPEAT:
        latest = versions[-1]
        return (
            f"{_author(latest)} repeated a no-change conclusion {_times(len(versions))} "
            f"{_span(versions)}; latest: {facts[-1].latest_line}"
        )
    head = "thread" if kind == TOPIC_ROLLUP else "sequence"
    lines = [
        f"{head} of {counted(len(versions), 'message')} {_span(versions)} by "
        f"{_authors(versions)}; key lines:",
        *_key_lines(versions, facts),
    ]
    return "\n".join(lines)


def render(
    plan: BlockPlan,
    block: str,
    source_kind: str,
    channel_id: str,
    versions: Mapping[str, SourceVersion],
    settings: RenderSettings,
    generated_us: int,
    facts: Mapping[str, ContentFacts] | None = None,
) -> RecallBlock:
    """Build the block a plan describes (its id already computed) from the covered versions.

    ``facts`` (by message id) are the covered versions' precomputed
    :func:`content_facts`; those missing are computed here.
    """
    covered = [versions[message_id] for message_id, _ in plan.members]
    hard = plan.kind == HARD_EVENT_BLOCK
    known = facts or {}
    covered_facts = [
        known[v.key.message_id]
        if v.key.message_id in known and (not hard or known[v.key.message_id].cut_text is not None)
        else content_facts(v, settings, hard, plan.event_type)
        for v in covered
    ]
    text = _text(plan, covered, covered_facts)
    cut = None
    if hard:
        shorter = covered_facts[0].cut_text
        assert shorter is not None
        cut = shorter if len(shorter) < len(text) else None
    return RecallBlock(
        id=block,
        source_kind=source_kind,
        channel_id=channel_id,
        group_key=plan.group_key,
        kind=plan.kind,
        event_type=plan.event_type,
        text=text,
        from_us=min(v.created_us for v in covered),
        to_us=max(v.created_us for v in covered),
        sparse=plan.kind in SPARSE_KINDS,
        score=plan.score,
        generated_us=generated_us,
        processor=PROCESSOR,
        sources=tuple(BlockSource(m, h) for m, h in plan.members),
        cut_text=cut,
        author=_author(covered[0]) if len(covered) == 1 else None,
        origin=covered[0].origin if len({v.origin for v in covered}) == 1 else "mixed",
        trust_authors=tuple(sorted({v.author_id or "" for v in covered if v.origin != "system"})),
        answers=plan.answers,
    )
