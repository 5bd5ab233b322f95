"""A synthetic busy trading desk: one channel's last 24 hours, deterministic for a seed.

``desk_events()`` builds ~200 messages (~80,000 characters in the bridge's raw
line format ``[HH:MM] author: content``): long agent market reports, long
reports that carry a decision, 40+ hard events (fills, stop and target
changes, routes, approvals, risk limits, position changes), chatter, repeats,
acknowledgements and telemetry. The demo and the benchmarks serve it.
"""

from __future__ import annotations

import random
from typing import Any

from channel_memory.kernel.timefmt import MICROS_PER_DAY, format_rfc3339, parse_rfc3339
from channel_memory.worker.rules import RuleSet

END = parse_rfc3339("2026-05-21T20:00:00Z")
DAY_US = MICROS_PER_DAY
"""The span the desk covers: one day, ending at ``END``."""
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


def hard_events(events: list[dict[str, Any]], rules: RuleSet) -> dict[str, str]:
    """Handle -> content of the desk's messages a rule set makes hard events."""
    return {
        f"{e['channel_id']}/{e['message']['id']}": e["message"]["content"]
        for e in events
        if rules.first_match(e["message"]["content"])
    }


def decisions_kept(body: str, hard: dict[str, str], rules: RuleSet) -> tuple[int, int]:
    """``(hard events with every decision-bearing line verbatim in body, others named)``."""
    verbatim = named = 0
    for handle, content in hard.items():
        decisive = rules.decision_lines(content)
        lines = [line for line, keep in zip(content.split("\n"), decisive, strict=True) if keep]
        if all(f"> {line}\n" in body for line in lines):
            verbatim += 1
        elif handle in body:
            named += 1
    return verbatim, named
