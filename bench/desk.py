"""How the feed serves the synthetic busy desk (``channel_memory.synthetic_desk``).

Run ``python bench/desk.py`` for the report: characters served at several
budgets, the reduction against the raw window, and the share of hard events
whose decision-bearing lines appear verbatim.
"""

from __future__ import annotations

import asyncio
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from channel_memory.auth import Principal
from channel_memory.config import Settings
from channel_memory.feed import candidates
from channel_memory.feed.candidates import FeedQuery
from channel_memory.feed.layout import render
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.store import Store
from channel_memory.synthetic_desk import (
    DAY_US,
    END,
    decisions_kept,
    desk_events,
    hard_events,
    raw_window_chars,
)
from channel_memory.worker.rules import default_rules
from channel_memory.worker.runner import Worker


async def build(
    path: Path, events: list[dict[str, Any]], llm_api_base: str | None = None
) -> tuple[Store, int]:
    """Ingest and derive the desk; with ``llm_api_base``, also run one LLM pass against the
    OpenAI-compatible server there. Returns the store and the LLM calls made."""
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
    worker = Worker(store, settings, lambda: END)
    await worker.prepare()
    batch = IngestBatch.model_validate({"events": events})
    await ingest(store, ["desk"], native_commands(batch.events), now_us=END, derive=worker.hook)
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
    events = desk_events()
    started = time.perf_counter()
    rows = asyncio.run(report())
    print(
        f"synthetic desk: {len(events)} messages, {raw_window_chars(events):,} characters "
        f"in the raw 24h window ({time.perf_counter() - started:.1f} s to build and serve)"
    )
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")  # fmt: skip
    print("LLM rollups off (deterministic blocks only):")
    _print(rows)
    if "--no-llm" not in sys.argv:
        # imported here: the fake provider lives with the tests
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from tests.fake_provider import FakeProvider

        with FakeProvider() as provider:
            with_llm = asyncio.run(report((8192, 12000), provider.api_base))
        print(
            f"LLM rollups on (a local fake provider answering short summaries; "
            f"{with_llm[0]['llm_calls']} calls):"
        )
        _print(with_llm)
    if "--feed" in sys.argv:
        print()
        print(asyncio.run(_text(int(sys.argv[-1]) if sys.argv[-1].isdigit() else 8192)))


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
