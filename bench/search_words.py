"""Search benchmark for text written without spaces: is a message found by a word it holds
inside a run of Japanese, Chinese or Korean?

Messages: the Japanese development phrasing sets (``tests/data/decisions/japanese_dev*.jsonl``,
written by two hands that read nothing of the project; one channel) and the messages
holding such text in the development desks written largely in it (``desk_heldout34``,
``38``, ``42``; a channel each). Held-out data is not read.

Words asked: from each message, the kanji or katakana words inside its runs — a run cut
where hiragana begins and ends, parts of two to six characters that are not the whole run
(the case the index missed): the two longest of each message. Each is asked, as written:

- of ``search_channel_context`` (the function the HTTP and MCP tools call): found when
  the message is among the first 10 hits, and among its hits at all (at most 100; a
  word many messages hold cannot put them all in the first 10);
- of the literal match the peer ``/search`` runs (every word, as written): found when the
  message is among its answers (at most 100);
- beside them, in the same run, of an FTS5 table holding the raw text (``unicode61
  remove_diacritics 2``, how the indexes held it before schema version 9).

Run: ``python bench/search_words.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from channel_memory.http.api import AppContext
from channel_memory.http.auth import TokenTable
from channel_memory.http.telemetry import Telemetry
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.kernel.config import Settings
from channel_memory.kernel.principal import Principal
from channel_memory.store import Store, sources
from channel_memory.store.sources import literal_match
from channel_memory.tools import retrieval as tools
from channel_memory.worker.runner import Worker, derive_hook, derive_settings

ROOT = Path(__file__).parent.parent
SETS = ["japanese_dev", "japanese_dev2"]
DESKS = ["desk_heldout34", "desk_heldout38", "desk_heldout42"]
EVERYONE = Principal("bench", frozenset({"read"}), frozenset({"*"}))
NOW_US = 1_900_000_000_000_000
RUN = re.compile("[\u3005\u3041-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3]+")
PART = re.compile("[\u3041-\u309f]+|[^\u3041-\u309f]+")


def messages() -> dict[str, list[str]]:
    """Channel -> message texts (a message's id is its position)."""
    found: dict[str, list[str]] = {"phrasings": []}
    for name in SETS:
        path = ROOT / "tests" / "data" / "decisions" / f"{name}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            found["phrasings"] += [row["text"]] + ([row["parent"]] if row.get("parent") else [])
    for desk in DESKS:
        rows = (ROOT / "bench" / "data" / f"{desk}.jsonl").read_text(encoding="utf-8")
        texts = [json.loads(line)["content"] for line in rows.splitlines()]
        found[desk] = [t for t in texts if RUN.search(t)]
    return found


def words(text: str) -> list[str]:
    """The two longest kanji or katakana words inside the message's runs."""
    inside: set[str] = set()
    for run in RUN.findall(text):
        for part in PART.findall(run):
            if not ("\u3041" <= part[0] <= "\u309f") and 2 <= len(part) <= 6 and part != run:
                inside.add(part)
    return sorted(inside, key=lambda w: (-len(w), w))[:2]


def raw_index(texts: list[str]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2')")
    conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", list(enumerate(texts)))
    return conn


async def measure(folder: Path) -> dict[str, Any]:
    channels = messages()
    path = folder / "words.db"
    settings = Settings(db=path, retention={"days": 100_000})
    store = await Store.open(path)
    asked = ranked = anywhere = literal = baseline = 0
    try:
        worker = Worker(store, settings, lambda: NOW_US)
        await worker.prepare()
        for channel, texts in channels.items():
            events = [
                {
                    "type": "message",
                    "channel_id": channel,
                    "message": {
                        "id": f"m{i}",
                        "author_id": "u-1",
                        "created_at": "2030-03-17T00:00:00Z",
                        "content": text,
                    },
                }
                for i, text in enumerate(texts)
            ]
            batch = IngestBatch.model_validate({"events": events})
            await ingest(
                store, [channel], native_commands(batch.events), now_us=NOW_US,
                derive=worker.hook,
            )  # fmt: skip
        await worker.drain()
        ctx = AppContext(
            store, settings, TokenTable(settings), lambda: NOW_US,
            derive_hook(derive_settings(settings)), lambda: None, Telemetry(),
        )  # fmt: skip
        for channel, texts in channels.items():
            raw = raw_index(texts)
            for i, text in enumerate(texts):
                for word in words(text):
                    asked += 1
                    body = tools.SearchRequest(channels=[channel], query=word, limit=100)
                    result = await tools.search(ctx, EVERYONE, body)
                    hits = [h["message_id"] for h in result["hits"]]
                    ranked += f"m{i}" in hits[:10]
                    anywhere += f"m{i}" in hits
                    async with store.read() as conn:
                        found = await sources.search_current(
                            conn, channel, literal_match(word), None, 0, 100
                        )
                    literal += any(v.key.message_id == f"m{i}" for v in found)
                    rows = raw.execute("SELECT rowid FROM t WHERE t MATCH ?", (f'"{word}"',))
                    baseline += any(row[0] == i for row in rows)
    finally:
        await store.close()
    return {
        "messages": sum(len(t) for t in channels.values()),
        "asked": asked,
        "ranked": ranked,
        "anywhere": anywhere,
        "literal": literal,
        "baseline": baseline,
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        got = asyncio.run(measure(Path(folder)))
    n = got["asked"]
    print(f"{got['messages']} messages, {n} words asked (words inside runs)")
    for key, what in [
        ("ranked", "search_channel_context, among the first 10 hits"),
        ("anywhere", "search_channel_context, among its hits (at most 100)"),
        ("literal", "literal match (peer /search)"),
        ("baseline", "FTS5 over the raw text (before schema version 9)"),
    ]:
        print(f"  {what}: {got[key]} / {n} ({100 * got[key] / max(n, 1):.1f}%)")


if __name__ == "__main__":
    main()
