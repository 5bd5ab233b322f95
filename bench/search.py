"""Search benchmark: does ``search_channel_context`` find the turn that answers a question?

Recall: ``bench/data/conversations.jsonl`` holds multi-session conversations between
two people (one ``turn`` per line) and questions about them, each labelled with the
turns that hold its answer, phrased as people ask (not with the answer's words). Each
conversation is ingested into its own channel of a fresh store, the worker derives its
blocks, and every question is asked, as written, through the tool
(``tools.search``, the function the HTTP and MCP tools call). A question counts as
found at k when one of its evidence turns is among the first k hits (a block hit
counts for the messages it covers). Beside it, in the same run and over the same
messages: a plain Okapi BM25 (k1 1.2, b 0.75, every word of the question, lower-cased,
no stemming, no stop list) and SQLite's own FTS5 ``bm25()`` over an in-memory table
(every word of the question, OR).

Latency: the tool in process on the 1,000,000-message store ``bench/feed.py`` builds
(the queried channel holds 100,000 messages over 30 days) for a word in most
messages, a rare word, a question of several words, a phrase, and newest-first.

Run: ``python bench/search.py [--large N] [--cache DIR] [--rounds N] [--no-latency]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from channel_memory.cli import tune_gc
from channel_memory.http.api import AppContext
from channel_memory.http.auth import TokenTable
from channel_memory.http.telemetry import Telemetry
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.kernel.config import Settings
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import parse_rfc3339
from channel_memory.store import Store, sources
from channel_memory.store.sources import literal_match
from channel_memory.tools import retrieval as tools
from channel_memory.worker.runner import Worker, derive_hook, derive_settings

DATA = Path(__file__).parent / "data" / "conversations.jsonl"
EVERYONE = Principal("bench", frozenset({"read"}), frozenset({"*"}))
KS = (1, 5, 10)


def load() -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    turns: dict[str, list[dict[str, Any]]] = {}
    questions = []
    for line in DATA.read_text().splitlines():
        row = json.loads(line)
        if row["type"] == "turn":
            turns.setdefault(row["conversation"], []).append(row)
        else:
            questions.append(row)
    return turns, questions


def _context(store: Store, settings: Settings, now_us: int) -> AppContext:
    return AppContext(
        store, settings, TokenTable(settings), lambda: now_us,
        derive_hook(derive_settings(settings)), lambda: None, Telemetry(),
    )  # fmt: skip


# --- the baselines ----------------------------------------------------------------------

_WORD = re.compile(r"\w+")


class PlainBM25:
    """Okapi BM25 over one conversation's turns, every query word, no stemming."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.ids = [t["id"] for t in turns]
        self.docs = [Counter(_WORD.findall(t["text"].lower())) for t in turns]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / len(self.lengths)
        self.df: Counter[str] = Counter()
        for doc in self.docs:
            self.df.update(doc.keys())

    def rank(self, question: str) -> list[str]:
        words = _WORD.findall(question.lower())
        n = len(self.docs)
        scored = []
        for i, doc in enumerate(self.docs):
            score = 0.0
            for word in words:
                tf = doc.get(word, 0)
                if tf:
                    idf = math.log(1 + (n - self.df[word] + 0.5) / (self.df[word] + 0.5))
                    norm = 1.2 * (1 - 0.75 + 0.75 * self.lengths[i] / self.avg)
                    score += idf * tf * 2.2 / (tf + norm)
            if score > 0:
                scored.append((-score, -i, self.ids[i]))
        return [s[2] for s in sorted(scored)]


class Fts5BM25:
    """SQLite FTS5 ``bm25()`` over an in-memory table of one conversation, words OR'ed."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, text)")
        self.conn.executemany(
            "INSERT INTO t (id, text) VALUES (?, ?)", [(t["id"], t["text"]) for t in turns]
        )

    def rank(self, question: str) -> list[str]:
        words = _WORD.findall(question.lower())
        if not words:
            return []
        expression = " OR ".join(f'"{w}"' for w in words)
        rows = self.conn.execute(
            "SELECT id FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid DESC", (expression,)
        )
        return [row[0] for row in rows]


# --- recall -----------------------------------------------------------------------------


async def _tool_rankings(
    turns: dict[str, list[dict[str, Any]]], questions: list[dict[str, Any]], folder: Path
) -> list[list[str]]:
    """What the tool answers for each question: message ids in hit order, a block hit
    standing for the messages it covers."""
    path = folder / "conversations.db"
    settings = Settings(db=path, retention={"days": 100_000})
    now_us = max(parse_rfc3339(t["time"]) for ts in turns.values() for t in ts) + 60_000_000
    store = await Store.open(path)
    try:
        worker = Worker(store, settings, lambda: now_us)
        await worker.prepare()
        for conversation, rows in turns.items():
            events = [
                {
                    "type": "message",
                    "channel_id": conversation,
                    "source_kind": "bench",
                    "message": {
                        "id": t["id"],
                        "author_id": t["speaker"].lower(),
                        "author_name": t["speaker"],
                        "author_kind": "human",
                        "created_at": t["time"],
                        "content": t["text"],
                    },
                }
                for t in rows
            ]
            batch = IngestBatch.model_validate({"events": events})
            await ingest(
                store, [conversation], native_commands(batch.events), now_us=now_us,
                derive=worker.hook,
            )  # fmt: skip
        await worker.drain()
        ctx = _context(store, settings, now_us)
        rankings = []
        for q in questions:
            body = tools.SearchRequest(channels=[q["conversation"]], query=q["question"], limit=10)
            try:
                result = await tools.search(ctx, EVERYONE, body)
            except Exception as exc:  # a question of only stop words: nothing found
                if getattr(exc, "status", None) != 422:
                    raise
                rankings.append([])
                continue
            ranked: list[str] = []
            for hit in result["hits"]:
                handles = hit.get("covers") or [hit["source_handle"]]
                ranked += [h.split("/", 1)[1] for h in handles if h.split("/", 1)[1] not in ranked]
            rankings.append(ranked)
        return rankings
    finally:
        await store.close()


def _recall(rankings: list[list[str]], questions: list[dict[str, Any]], k: int) -> float:
    pairs = zip(rankings, questions, strict=True)
    found = sum(1 for ranked, q in pairs if set(ranked[:k]) & set(q["evidence"]))
    return found / len(questions)


def recall(folder: Path) -> list[str]:
    turns, questions = load()
    plain = {c: PlainBM25(ts) for c, ts in turns.items()}
    fts = {c: Fts5BM25(ts) for c, ts in turns.items()}
    systems = {
        "search_channel_context": asyncio.run(_tool_rankings(turns, questions, folder)),
        "plain BM25 (Okapi, in the bench)": [
            plain[q["conversation"]].rank(q["question"]) for q in questions
        ],
        "FTS5 bm25() in memory, words OR": [
            fts[q["conversation"]].rank(q["question"]) for q in questions
        ],
    }
    count = sum(len(ts) for ts in turns.values())
    rows = [
        f"{len(turns)} conversations, {count} turns, {len(questions)} questions",
        f"{'':<34}" + "".join(f"{'recall@' + str(k):>11}" for k in KS),
    ]
    for name, rankings in systems.items():
        rows.append(
            f"{name:<34}" + "".join(f"{_recall(rankings, questions, k):>11.1%}" for k in KS)
        )
    return rows


# --- latency ----------------------------------------------------------------------------

LATENCY_QUERIES = (
    ("a word in most messages", {"query": "flows"}),
    ("a rare word (a price)", {"query": "421"}),
    ("a question, several words", {"query": "what did we decide about the NVDA stop and flows?"}),
    ("a quoted phrase", {"query": '"stop moved to"'}),
    ("newest first, common word", {"query": "flows", "sort": "newest"}),
)


def _p(samples: list[float]) -> str:
    samples = sorted(samples)
    p50 = statistics.median(samples) * 1000
    p99 = samples[max(0, int(len(samples) * 0.99) - 1)] * 1000
    return f"p50 {p50:6.2f} ms  p99 {p99:6.2f} ms"


async def _latency(path: Path, rounds: int, end_us: int) -> list[str]:
    settings = Settings(db=path)
    started = time.perf_counter()
    store = await Store.open(path)  # brings an older store up to the search index
    opened = time.perf_counter() - started
    tune_gc()
    ctx = _context(store, settings, end_us)
    rows = [f"{'open (and migrate, the first time)':<34} {opened:6.1f} s"]
    try:
        for label, asked in LATENCY_QUERIES:
            times = []
            body = tools.SearchRequest(channels=["floor"], limit=20, **asked)
            hits = len((await tools.search(ctx, EVERYONE, body))["hits"])
            for _ in range(rounds):
                began = time.perf_counter()
                await tools.search(
                    ctx, EVERYONE, tools.SearchRequest(channels=["floor"], limit=20, **asked)
                )
                times.append(time.perf_counter() - began)
            rows.append(f"{label:<34} {_p(times)}  ({hits} hits)")
        # baseline, same run: the literal newest-first read the peer /search still does
        # (every match of the channel is read before the newest are taken)
        times = []
        match = literal_match("flows")
        for _ in range(rounds):
            began = time.perf_counter()
            async with store.read() as conn:
                await sources.search_current(conn, "floor", match, None, 0, 21)
            times.append(time.perf_counter() - began)
        rows.append(f"{'baseline: literal newest-first':<34} {_p(times)}  (a word in most)")
    finally:
        await store.close()
    return rows


def latency(large: int, cache: str | None, rounds: int) -> list[str]:
    from feed import END_US, build

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(cache or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        queried = large // 10
        path = folder / f"store-{large}-{queried}-{END_US // 3_600_000_000}.db"
        if not path.exists():
            asyncio.run(build(path, large, queried, 99))
        return asyncio.run(_latency(path, rounds, END_US))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--cache", help="keep the built store in this folder and reuse it")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--no-latency", action="store_true", help="recall only")
    parser.add_argument("--store", help="measure latency on this existing store instead")
    args = parser.parse_args()
    from ingest import machine

    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as scratch:
        for row in recall(Path(scratch)):
            print("  " + row)
    if args.no_latency:
        return
    if args.store:
        from feed import END_US

        rows = asyncio.run(_latency(Path(args.store), args.rounds, END_US))
    else:
        rows = latency(args.large, args.cache, args.rounds)
    print(f"latency, store of {args.large:,} messages (queried channel {args.large // 10:,}):")
    for row in rows:
        print("  " + row)


if __name__ == "__main__":
    main()
