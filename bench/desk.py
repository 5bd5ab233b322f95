"""How the feed serves a busy trading desk: the synthetic one and an independent one.

Run ``python bench/desk.py`` for the report. The synthetic desk
(``channel_memory.demo.synthetic_desk``): characters served at several budgets, the
reduction against the raw window, and the share of hard events whose
decision-bearing lines appear verbatim, with LLM rollups off and on.

The independent desk (``bench/data/desk_independent.jsonl``, written by hand without
reading this project's rules, every decision labelled): the same figures measured
against the labels, not against the rules: how many labelled decisions the worker
made hard events (per type), how many the feed serves verbatim at each budget, how
many it names as omitted, and how many ordinary messages became hard events.

Options: ``--no-llm`` skips the LLM pass; ``--independent`` measures the independent
desk alone; ``--desk FILE`` measures another labelled desk in the same format
instead (``bench/data/README.md`` lists them and how each was used, the held-out
ones among them); ``--show-misses`` lists the missed decisions
(ids and types, never content);
``--json`` prints every figure as one JSON object instead of text; ``--feed [N]``
prints the synthetic desk's feed at ``N`` characters.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from channel_memory.demo.synthetic_desk import (
    DAY_US,
    END,
    decisions_kept,
    desk_events,
    hard_events,
    raw_window_chars,
)
from channel_memory.feed import candidates
from channel_memory.feed.candidates import FeedQuery
from channel_memory.feed.layout import render
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.inspector.feedview import served_items as read_items
from channel_memory.kernel.config import FeedSettings, Settings
from channel_memory.kernel.models import HARD_EVENT_BLOCK, source_handle
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import parse_rfc3339
from channel_memory.store import Store
from channel_memory.store.blocks import all_blocks
from channel_memory.worker.rules import RuleSet, default_rules
from channel_memory.worker.runner import Worker


async def build(
    path: Path,
    events: list[dict[str, Any]],
    llm_api_base: str | None = None,
    now_us: int = END,
) -> tuple[Store, int]:
    """Ingest and derive the desk with the clock at ``now_us``; with ``llm_api_base``, also
    run one LLM pass against the OpenAI-compatible server there. Returns the store and the
    LLM calls made."""
    store = await Store.open(path)
    llm: dict[str, Any] = {}
    if llm_api_base is not None:
        llm = {
            "enabled": True,
            "model": "openai/fake-summariser",
            "api_base": llm_api_base,
            "api_key": "sk-local",
            "calls_per_channel_day": 100,
            "calls_per_day": 100,
        }
    settings = Settings(db=path, retention={"days": 100_000}, llm=llm)
    worker = Worker(store, settings, lambda: now_us)
    await worker.prepare()
    batch = IngestBatch.model_validate({"events": events})
    channels = sorted({e["channel_id"] for e in events})
    await ingest(store, channels, native_commands(batch.events), now_us=now_us, derive=worker.hook)
    await worker.drain()
    calls = 0
    if worker.llm is not None:
        calls = (await worker.llm.run_once()).calls
        await worker.aclose()
    return store, calls


async def report(
    budgets: tuple[int, ...] = (6000, 8192, 12000), llm_api_base: str | None = None
) -> list[dict[str, Any]]:
    events = desk_events()
    rules = default_rules()
    hard = hard_events(events, rules)
    raw = raw_window_chars(events)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        store, calls = await build(Path(folder) / "desk.db", events, llm_api_base)
        try:
            principal = Principal("bench", frozenset({"read"}), frozenset({"*"}))
            for budget in budgets:
                query = FeedQuery(
                    ("desk",), "raw_window+digest", DAY_US, END, False, 10, budget, "text",
                    21_600_000_000,
                )  # fmt: skip
                async with store.read() as conn:
                    body = render(await candidates.live(conn, query, principal), budget, "text")
                verbatim, named = decisions_kept(body.content, hard, rules)
                rows.append(
                    {
                        "max_chars": budget,
                        "served": len(body.content),
                        "raw": raw,
                        "reduction": raw / len(body.content),
                        "hard_events": len(hard),
                        "verbatim": verbatim,
                        "named": named,
                        "omitted_count": body.numbers["omitted"],
                        "llm_calls": calls,
                        "deterministic_only": body.numbers["deterministic_only"],
                    }
                )
        finally:
            await store.close()
    return rows


# --- the independent desk ------------------------------------------------------------------

INDEPENDENT_DATA = Path(__file__).resolve().parent / "data" / "desk_independent.jsonl"
INDEPENDENT_CHANNEL = "indep"
INDEPENDENT_END = parse_rfc3339("2026-03-10T20:00:00Z")
"""The end of the independent desk's 24 hours (20:00Z to 20:00Z; its last message is at 19:59Z)."""
BUDGETS = (6000, 8192, 12000)


@dataclass(frozen=True, slots=True)
class Labelled:
    """One message of the independent desk and its ground truth (``decision`` or None)."""

    id: str
    decision: str | None
    content: str
    decision_text: str | None = None
    """The labelled span that states the decision (a verbatim part of ``content``)."""

    @property
    def handle(self) -> str:
        return source_handle(INDEPENDENT_CHANNEL, self.id)


HOUR_US = 3_600_000_000


def desk_end(rows: Sequence[dict[str, Any]]) -> int:
    """The end of a desk's 24 hours: the first whole hour after its last message."""
    last = max(parse_rfc3339(row["created_at"]) for row in rows)
    return last - last % HOUR_US + HOUR_US


def load_independent(path: Path = INDEPENDENT_DATA) -> list[dict[str, Any]]:
    """The desk's lines as written, oldest first; raises ``ValueError`` if one falls outside
    the 24 hours before :func:`desk_end` (the figures would not be the 24 h feed's)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    end = desk_end(rows)
    for row in rows:
        created = parse_rfc3339(row["created_at"])
        if not end - DAY_US <= created < end:
            raise ValueError(f"message {row['id']} is outside the desk's 24 hours")
    return rows


def independent_events(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Native ingest ``message`` events for the desk's lines (the labels stay out)."""
    fields = ("id", "author_id", "author_name", "author_kind", "created_at", "content")
    events = []
    for row in rows:
        message = {name: row[name] for name in fields}
        if row.get("reply_to"):
            message["reply_to"] = row["reply_to"]
        events.append({"type": "message", "channel_id": INDEPENDENT_CHANNEL, "message": message})
    return events


def labelled(rows: Sequence[dict[str, Any]]) -> list[Labelled]:
    return [
        Labelled(row["id"], row["decision"], row["content"], row.get("decision_text"))
        for row in rows
    ]


def served_items(body: str) -> dict[str, list[list[str]]]:
    """Handle -> the quoted lines of each item of a text feed that shows that one message
    (read back by the inspector's reader; ``handle+N``, a rollup of N+1 messages, is not
    one: only an item showing one message can show it verbatim)."""
    items: dict[str, list[list[str]]] = {}
    for item in read_items(body):
        if item.more == 0:
            items.setdefault(item.handle, []).append(list(item.content))
    return items


def required_lines(content: str, rules: RuleSet, cut_chars: int) -> tuple[list[str], bool]:
    """The lines a served decision must show verbatim, and whether as one contiguous run.

    A message up to the hard-event cut length: all its lines, as a run. A longer one: its
    decision-bearing lines (the lines the feed keeps when it cuts a hard event), each
    somewhere in the item. When the rules find no decision line in a long message,
    nothing short of its whole text proves the decision was kept.
    """
    lines = content.split("\n")
    if len(content) <= cut_chars:
        return lines, True
    keep = rules.decision_lines(content)
    decisive = [line for line, kept in zip(lines, keep, strict=True) if kept]
    return (decisive, False) if decisive else (lines, True)


def kept_verbatim(
    items: dict[str, list[list[str]]], handle: str, lines: list[str], whole: bool
) -> bool:
    """Whether one item showing ``handle`` has ``lines``: as a contiguous run of its lines
    when ``whole``, else each as one of its lines."""
    for shown in items.get(handle, []):
        if whole:
            if any(shown[i : i + len(lines)] == lines for i in range(len(shown) - len(lines) + 1)):
                return True
        elif all(line in shown for line in lines):
            return True
    return False


def shows_span(items: dict[str, list[list[str]]], handle: str, span: str) -> bool:
    """Whether one item showing ``handle`` has ``span`` verbatim in its quoted text."""
    return any(span in "\n".join(shown) for shown in items.get(handle, []))


def decision_kept(
    items: dict[str, list[list[str]]], d: Labelled, rules: RuleSet, cut_chars: int
) -> bool:
    """Whether the feed shows decision ``d`` verbatim: its labelled span when it has one
    (the label, independent of the rules), else the lines :func:`required_lines` names."""
    if d.decision_text:
        return shows_span(items, d.handle, d.decision_text)
    return kept_verbatim(items, d.handle, *required_lines(d.content, rules, cut_chars))


def _by_type(
    decisions: Sequence[Labelled], hits: set[str], types: Sequence[str]
) -> dict[str, dict[str, int]]:
    return {
        t: {
            "labelled": sum(1 for d in decisions if d.decision == t),
            "kept": sum(1 for d in decisions if d.decision == t and d.id in hits),
        }
        for t in types
    }


ROOT = Path(__file__).resolve().parent.parent


def _shown_path(path: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    full = path.resolve()
    return str(full.relative_to(ROOT)) if full.is_relative_to(ROOT) else str(path)


async def independent_report(
    budgets: Sequence[int] = BUDGETS, path: Path = INDEPENDENT_DATA
) -> dict[str, Any]:
    """Every figure of the independent desk (see the module docstring), as plain data.

    The desk is ingested and derived with the clock at its :func:`desk_end`, and each
    budget is served as ``/channel-awareness`` serves ``since=24h`` in text with the
    defaults.
    """
    rows = load_independent(path)
    end = desk_end(rows)
    messages = labelled(rows)
    decisions = [m for m in messages if m.decision is not None]
    types = sorted({d.decision for d in decisions if d.decision is not None})
    events = independent_events(rows)
    rules = default_rules()
    feed = FeedSettings()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        store, _ = await build(Path(folder) / "indep.db", events, now_us=end)
        try:
            async with store.read() as conn:
                blocks = await all_blocks(conn)
            # the worker's verdict, as stored: a message is a hard event when a hard_event
            # block covers it (by its own rules, a reply rule or a bridge tag)
            hard_blocks = [
                b for b in blocks if b.kind == "hard_event" and b.channel_id == INDEPENDENT_CHANNEL
            ]
            hard = {s.message_id: b.event_type or "" for b in hard_blocks for s in b.sources}
            principal = Principal("bench", frozenset({"read"}), frozenset({"*"}))
            served = []
            for budget in budgets:
                query = FeedQuery(
                    (INDEPENDENT_CHANNEL,), "raw_window+digest", DAY_US, end,
                    False, feed.raw_recent_limit, budget, "text",
                    int(feed.raw_recent_window * 1_000_000),
                )  # fmt: skip
                async with store.read() as conn:
                    body = await candidates.serve(conn, query, principal)
                served.append((budget, body.content, body.numbers))
        finally:
            await store.close()
    elapsed = time.perf_counter() - started
    raw = raw_window_chars(events)
    recognised = {d.id for d in decisions if d.id in hard}
    false_hard = [m.id for m in messages if m.decision is None and m.id in hard]
    report: dict[str, Any] = {
        "path": _shown_path(path),
        "messages": len(messages),
        "decisions": len(decisions),
        "raw": raw,
        "hard_event_max_chars": feed.hard_event_max_chars,
        "seconds": round(elapsed, 2),
        "hard_events": len(hard_blocks),
        "recognised": len(recognised),
        "recognised_by_type": _by_type(decisions, recognised, types),
        "recognised_as_labelled_type": sum(1 for d in decisions if hard.get(d.id) == d.decision),
        "unrecognised": [{"id": d.id, "type": d.decision} for d in decisions if d.id not in hard],
        "false_hard_events": [{"id": i, "as": hard[i]} for i in false_hard],
        "budgets": [],
    }
    for budget, content, numbers in served:
        items = served_items(content)
        kept = {
            d.id for d in decisions if decision_kept(items, d, rules, feed.hard_event_max_chars)
        }
        named_handles = set(numbers["omitted_hard_events"])
        named = {d.id for d in decisions if d.id not in kept and d.handle in named_handles}
        shown_hard = sum(1 for item in read_items(content) if item.kind == HARD_EVENT_BLOCK)
        report["budgets"].append(
            {
                "max_chars": budget,
                "served": len(content),
                "within_budget": len(content) <= budget,
                "reduction": round(raw / len(content), 2),
                "verbatim": len(kept),
                "verbatim_by_type": _by_type(decisions, kept, types),
                "named": len(named),
                "hard_events_shown": shown_hard,
                "hard_events_named": len(named_handles),
                "hard_events_unnamed": numbers["more_hard_events"],
                # every hard event is shown, named or counted: none disappears silently
                "hard_events_accounted": shown_hard
                + len(named_handles)
                + numbers["more_hard_events"]
                == len(hard_blocks),
                "omitted_messages": numbers["omitted"],
                "missed": [
                    {"id": d.id, "type": d.decision, "named": d.id in named}
                    for d in decisions
                    if d.id not in kept
                ],
            }
        )
    return report


def _print_independent(report: dict[str, Any], show_misses: bool) -> None:
    decisions = report["decisions"]
    print(
        f"independent desk ({report['path']}): {report['messages']} messages, "
        f"{decisions} labelled decisions, {report['raw']:,} characters in the raw 24h window "
        f"({report['seconds']:.1f} s to build and serve)"
    )
    print(
        f"decisions recognised as hard events: {report['recognised']}/{decisions} "
        f"({report['recognised_as_labelled_type']} with the labelled type); "
        f"non-decisions made hard events: {len(report['false_hard_events'])}"
    )
    for kind, n in report["recognised_by_type"].items():
        print(f"  {kind:<22} {n['kept']:>2}/{n['labelled']}")
    for row in report["budgets"]:
        print(
            f"max_chars {row['max_chars']:>6}: served {row['served']:>6,} chars "
            f"({row['reduction']:.1f}x smaller), omitted {row['omitted_messages']:>3} messages, "
            f"decisions verbatim {row['verbatim']}/{decisions} "
            f"({100 * row['verbatim'] / decisions:.0f}%), named {row['named']}"
        )
        print(
            "  "
            + ", ".join(
                f"{k} {n['kept']}/{n['labelled']}" for k, n in row["verbatim_by_type"].items()
            )
        )
    if show_misses:
        print("not recognised as hard events:")
        print("  " + (" ".join(f"{m['id']}:{m['type']}" for m in report["unrecognised"]) or "none"))
        print("non-decisions made hard events:")
        print(
            "  " + (" ".join(f"{m['id']}:{m['as']}" for m in report["false_hard_events"]) or "none")
        )
        for row in report["budgets"]:
            print(f"not verbatim at max_chars {row['max_chars']} (* named as omitted):")
            print(
                "  "
                + (
                    " ".join(
                        f"{m['id']}:{m['type']}{'*' if m['named'] else ''}" for m in row["missed"]
                    )
                    or "none"
                )
            )


def _print(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        print(
            f"max_chars {row['max_chars']:>6}: served {row['served']:>6,} chars "
            f"({row['reduction']:.1f}x smaller), omitted {row['omitted_count']:>3} messages, "
            f"hard events with every decision line verbatim "
            f"{row['verbatim']}/{row['hard_events']} "
            f"({100 * row['verbatim'] / row['hard_events']:.0f}%), named {row['named']}"
        )


def main() -> None:
    args = sys.argv[1:]
    machine = (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    figures: dict[str, Any] = {"machine": machine}
    if "--independent" not in args:
        events = desk_events()
        started = time.perf_counter()
        rows = asyncio.run(report())
        figures["synthetic"] = {"messages": len(events), "llm_off": rows}
        if "--json" not in args:
            print(
                f"synthetic desk: {len(events)} messages, {raw_window_chars(events):,} "
                f"characters in the raw 24h window ({time.perf_counter() - started:.1f} s "
                "to build and serve)"
            )
            print(f"machine: {machine}")
            print("LLM rollups off (deterministic blocks only):")
            _print(rows)
        if "--no-llm" not in args:
            # imported here: the fake provider lives with the tests
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
            from tests.fake_provider import FakeProvider

            with FakeProvider() as provider:
                with_llm = asyncio.run(report((8192, 12000), provider.api_base))
            figures["synthetic"]["llm_on"] = with_llm
            if "--json" not in args:
                print(
                    f"LLM rollups on (a local fake provider answering short summaries; "
                    f"{with_llm[0]['llm_calls']} calls):"
                )
                _print(with_llm)
    desk = Path(args[args.index("--desk") + 1]) if "--desk" in args else INDEPENDENT_DATA
    independent = asyncio.run(independent_report(path=desk))
    figures["independent"] = independent
    if "--json" in args:
        print(json.dumps(figures, indent=1))
        return
    print()
    _print_independent(independent, "--show-misses" in args)
    if "--feed" in args:
        print()
        print(asyncio.run(_text(int(args[-1]) if args[-1].isdigit() else 8192)))


async def _text(budget: int) -> str:
    with tempfile.TemporaryDirectory() as folder:
        store, _ = await build(Path(folder) / "desk.db", desk_events())
        try:
            principal = Principal("bench", frozenset({"read"}), frozenset({"*"}))
            query = FeedQuery(
                ("desk",), "raw_window+digest", DAY_US, END, False, 10, budget, "text",
                21_600_000_000,
            )  # fmt: skip
            async with store.read() as conn:
                return render(await candidates.live(conn, query, principal), budget, "text").content
        finally:
            await store.close()


if __name__ == "__main__":
    main()
