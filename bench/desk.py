"""A synthetic busy trading desk: one channel's 24 hours, and how the feed serves it.

``desk_events()`` builds ~200 messages (~85,000 characters in the bridge's raw
line format ``[HH:MM] author: content``): long agent market reports, long
reports that carry a decision, 40+ hard events (fills, stop and target
changes, routes, approvals, risk limits, position changes), chatter, repeats,
acknowledgements and telemetry. Deterministic for a seed.

Run ``python bench/desk.py`` for the report: characters served at several
budgets, the reduction against the raw window, and the share of hard events
whose decision-bearing lines appear verbatim.
"""

from __future__ import annotations

import asyncio
import os
import platform
import random
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
from channel_memory.timefmt import format_rfc3339, parse_rfc3339
from channel_memory.worker.rules import default_rules
from channel_memory.worker.runner import Worker

END = parse_rfc3339("2026-05-21T20:00:00Z")
DAY_US = 86_400_000_000
TICKERS = ["NVDA", "AAPL", "MSFT", "TSLA", "AMD", "META", "AMZN", "NQ", "ES", "ZN"]
AUTHORS = {
    "desk-lead": ("u-lead", "human"),
    "analyst-alpha": ("a-alpha", "agent"),
    "analyst-beta": ("a-beta", "agent"),
    "execution-bot": ("b-exec", "app"),
    "risk-bot": ("b-risk", "app"),
    "ops-bot": ("b-ops", "app"),
}
REVIEW_LINES = [
    "Tape is two-way; breadth improved into the close but volume stayed light.",
    "Rates: the 2y held the range while 10s bear-steepened by two basis points.",
    "Vol surface: front-month skew flattened, term structure still in contango.",
    "Flows: systematic selling looks done; dealers are long gamma above the strike.",
    "Semis lead the index again; megacap dispersion remains unusually wide.",
    "Credit is quiet: IG spreads unchanged, HY a touch wider on supply.",
    "Macro calendar: CPI tomorrow, then the auction; positioning is light.",
    "Position: flat in the book for this name; no change to the watchlist.",
    "Risk view: balanced, keep gross modest into the print.",
    "Levels to watch: prior day high, the overnight low, and the VWAP band.",
    "Liquidity is thinner than usual at the open; size accordingly.",
    "Correlation across sectors fell again, which favours single-name ideas.",
]


def _decision(rng: random.Random, ticker: str) -> str:
    level = rng.randint(90, 900)
    return rng.choice(
        [
            f"FILLED {rng.randint(1, 20) * 50} {ticker} @ {level}.{rng.randint(0, 99):02d}",
            f"Stop moved to {level} on {ticker}.",
            f"Stop remains {level} until invalidation changes.",
            f"Raising target to {level + 40} on {ticker}.",
            f"Routing the {ticker} order to desk B via VWAP.",
            f"No route for {ticker} today: spread too wide.",
            f"[APPROVED] {ticker} entry, size {rng.randint(1, 9) * 100}.",
            f"[PROPOSED] buy {rng.randint(1, 9) * 100} {ticker} at {level}, stop {level - 12}.",
            f"Risk limit breached on {ticker}: cutting gross by a third.",
            f"Trimmed half of {ticker} into strength.",
            f"Opened {rng.randint(1, 9) * 100} {ticker} on the breakout.",
            f"Thesis invalidated on {ticker}: rates broke out of the range.",
        ]
    )


def _review(rng: random.Random, ticker: str, lines: int, decision: str | None) -> str:
    body = [f"{ticker} market review, session {rng.randint(1, 3)}:"]
    body += [
        rng.choice(REVIEW_LINES) + f" ({ticker} {rng.randint(100, 999)})" for _ in range(lines)
    ]
    if decision is not None:
        body.insert(rng.randint(2, len(body)), "Decision: " + decision)
    body.append("Next update after the print.")
    return "\n".join(body)


def desk_events(seed: int = 7, count: int = 200) -> list[dict[str, Any]]:
    """The desk's last 24 hours as native ingest events, oldest first."""
    rng = random.Random(seed)
    start = END - DAY_US + 180_000_000
    times = sorted(rng.randrange(start, END - 60_000_000) for _ in range(count))
    plan = (
        ["report_decision"] * 14 + ["hard"] * 30 + ["review"] * 46 + ["chatter"] * 56
        + ["ack"] * 22 + ["heartbeat"] * 14 + ["repeat"] * 8 + ["thread"] * 10
    )  # fmt: skip
    rng.shuffle(plan)
    events: list[dict[str, Any]] = []
    for index, (kind, micros) in enumerate(zip(plan[:count], times, strict=False)):
        ticker = rng.choice(TICKERS)
        author = rng.choice(["analyst-alpha", "analyst-beta"])
        extra: dict[str, Any] = {}
        if kind == "report_decision":
            content = _review(rng, ticker, rng.randint(10, 16), _decision(rng, ticker))
        elif kind == "hard":
            author = rng.choice(["desk-lead", "execution-bot", "risk-bot"])
            content = _decision(rng, ticker)
        elif kind == "review":
            content = _review(rng, ticker, rng.randint(10, 16), None)
        elif kind == "chatter":
            author = rng.choice(["desk-lead", "analyst-alpha", "analyst-beta"])
            content = f"{ticker}: {rng.choice(REVIEW_LINES)} {rng.choice(REVIEW_LINES)}"
        elif kind == "ack":
            content = rng.choice(["ok", "thanks!", "got it.", "noted", "+1", "roger"])
            author = "desk-lead"
        elif kind == "heartbeat":
            content, author = "HEARTBEAT_OK", "ops-bot"
        elif kind == "repeat":
            content = f"Same conclusion as {rng.randint(9, 15)}:{rng.randint(10, 59)}: no trade."
            author = "analyst-beta"
        else:
            content = f"{ticker}: agree, waiting for the auction before adding."
            extra["reply_to"] = "thread-root"
        author_id, kind_of = AUTHORS[author]
        events.append(
            {
                "type": "message",
                "channel_id": "desk",
                "message": {
                    "id": f"m{index:04d}",
                    "author_id": author_id,
                    "author_name": author,
                    "author_kind": kind_of,
                    "created_at": format_rfc3339(micros),
                    "content": content,
                    **extra,
                },
            }
        )
    return events


def raw_window_chars(events: list[dict[str, Any]]) -> int:
    """The raw 24 h window in the bridge's line format: ``[HH:MM] author: content``."""
    return sum(
        len(f"[{e['message']['created_at'][11:16]}] {e['message']['author_name']}: ")
        + len(e["message"]["content"])
        + 1
        for e in events
    )


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
    hard = {
        f"desk/{e['message']['id']}": e["message"]["content"]
        for e in events
        if rules.first_match(e["message"]["content"])
    }
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
                verbatim = named = 0
                for handle, content in hard.items():
                    lines = [
                        line
                        for line, keep in zip(
                            content.split("\n"), rules.decision_lines(content), strict=True
                        )
                        if keep
                    ]
                    if all(f"> {line}\n" in body.content for line in lines):
                        verbatim += 1
                    elif handle in body.content:
                        named += 1
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
