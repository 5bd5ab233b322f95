"""``channel-memory demo``: the whole path on realistic data, in one command.

Starts the sidecar on a temporary SQLite file and a loopback port, pushes the
synthetic busy desk through the real HTTP ingest, lets the worker derive, reads
the feed as an LLM proxy would, expands one block to its exact sources, shows an
edit, a delete and a forget propagating, and prints the text feed. The clock is
fixed at the desk's last minute, so without ``--llm`` every run prints the same
figures (timings aside). With ``--llm MODEL`` one LLM pass runs against a real
provider (``CHANNEL_MEMORY_LLM__API_BASE`` / ``__API_KEY`` or the provider's
usual key variable).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import httpx
import uvicorn

from channel_memory.demo.synthetic_desk import (
    END,
    decisions_kept,
    desk_events,
    hard_events,
    raw_window_chars,
)
from channel_memory.http.app import create_app
from channel_memory.http.server import listening_socket
from channel_memory.inspector.feedview import served_items
from channel_memory.kernel.config import ConfigError, Settings, load_settings
from channel_memory.kernel.models import TOMBSTONE_BLOCK
from channel_memory.worker.rules import RuleSet, default_rules

CHANNEL = "desk"
BUDGETS = (8192, 12000)
STEPS = 7
LATER = "2026-05-21T19:59:59Z"
"""When the demo's edit and delete happen: after every desk message, before the clock."""


class Progress:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.step = 0
        self.started = time.perf_counter()

    def __call__(self, text: str) -> None:
        self.step += 1
        elapsed = time.perf_counter() - self.started
        self.out.write(f"[{self.step}/{STEPS}] {text} ({elapsed:.1f} s)\n")
        self.out.flush()

    def line(self, text: str = "") -> None:
        self.out.write(("    " + text if text else "") + "\n")


def _first_line(text: str, limit: int = 72) -> str:
    line = next((part for part in text.split("\n") if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


async def _feed(client: httpx.AsyncClient, max_chars: int, fmt: str = "text") -> str:
    response = await client.get(
        "/channel-awareness",
        params={"channels": CHANNEL, "max_chars": max_chars, "format": fmt},
    )
    response.raise_for_status()
    return response.text


def _header(feed: str) -> dict[str, str]:
    first = feed.split("\n", 1)[0]
    return dict(part.split("=", 1) for part in first.split(" ")[1:] if "=" in part)


async def _settle(app: Any) -> None:
    """Wait until the worker has derived everything it was woken for."""
    await app.state.worker.wait_idle()


async def run_demo(out: TextIO, *, llm_model: str | None = None, feed_chars: int = 8192) -> int:
    """Run the demo, writing its report to ``out``; returns the exit status.

    Raises ``ConfigError`` before starting anything when ``llm_model`` is given on an
    install without the ``llm`` extra (every call would fail, for a reason no report
    would name).
    """
    if llm_model is not None and importlib.util.find_spec("litellm") is None:
        raise ConfigError(
            "--llm needs the llm extra, which is not installed: pip install 'channel-memory[llm]'"
        )
    show = Progress(out)
    out.write("channel-memory demo: a synthetic busy trading desk through the real HTTP API\n")
    with tempfile.TemporaryDirectory(prefix="channel-memory-demo-") as folder:
        overrides: dict[str, Any] = {"db": Path(folder) / "demo.db"}
        if llm_model is not None:
            overrides["llm"] = {"enabled": True, "model": llm_model}
        settings = load_settings(None, **overrides)
        return await _run(out, show, settings, llm_model, feed_chars)


async def _run(
    out: TextIO, show: Progress, settings: Settings, llm_model: str | None, feed_chars: int
) -> int:
    app = create_app(settings, clock=lambda: END)
    sock, url = listening_socket("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            # the socket already listens: requests wait until the lifespan has started
            show(f"sidecar listening on {url}, database {settings.db}")
            await _walkthrough(out, show, client, app, llm_model, feed_chars)
    finally:
        server.should_exit = True
        await serving
        sock.close()
    return 0


async def _walkthrough(
    out: TextIO,
    show: Progress,
    client: httpx.AsyncClient,
    app: Any,
    llm_model: str | None,
    feed_chars: int,
) -> None:
    events = desk_events()
    rules = default_rules()
    for start in range(0, len(events), 50):
        response = await client.post("/v1/ingest", json={"events": events[start : start + 50]})
        response.raise_for_status()
    show(f"pushed {len(events)} messages in {(len(events) + 49) // 50} batches to POST /v1/ingest")

    await _settle(app)
    stats = (await client.get("/v1/stats")).json()
    [channel] = [c for c in stats["channels"] if c["channel_id"] == CHANNEL]
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(channel["blocks"].items(), key=lambda i: -i[1]))
    show(f"the worker derived {sum(channel['blocks'].values())} blocks")
    show.line(f"blocks by kind: {kinds}")
    if llm_model is not None:
        report = await app.state.worker.llm.run_once()
        show.line(
            f"LLM pass with {llm_model}: {report.calls} calls, {report.written} rollups written"
            + (f", capped at {report.capped}" if report.capped else "")
            + (f", {report.failures} failed" if report.failures else "")
        )

    hard = hard_events(events, rules)
    raw = raw_window_chars(events)
    show("read the feed as an LLM proxy does: GET /channel-awareness")
    show.line(f"raw 24h window: {raw:,} characters in {len(events)} messages")
    for budget in BUDGETS:
        body = await _feed(client, budget)
        verbatim, named = decisions_kept(body, hard, rules)
        header = _header(body)
        show.line(
            f"max_chars {budget:>6}: {len(body):>6,} characters ({raw / len(body):.1f}x smaller); "
            f"hard events with every decision line verbatim {verbatim}/{len(hard)}"
            + (f", {named} named" if named else "")
            + f"; {header['omitted']} of {header['available']} messages omitted"
            + f"; deterministic_only={header['deterministic_only']}"
        )

    everything = json.loads(await _feed(client, 200_000, "json"))["digest"]
    block_id = _a_rollup_id(everything)
    expanded = (await client.get(f"/v1/blocks/{block_id}")).json()
    block = expanded
    show(f"one block expanded to its exact sources: GET /v1/blocks/{block_id}")
    show.line(f"{block['kind']}: {_first_line(block['text'], 100)}")
    handles = [p["source_handle"] for p in expanded["provenance"]]
    messages = (
        await client.post("/v1/tools/get_channel_messages", json={"source_handles": handles[:3]})
    ).json()["messages"]
    for source, message in zip(expanded["provenance"], messages, strict=False):
        show.line(
            f"  {source['source_handle']} @ {source['content_hash'][:12]}…  "
            f"{message['author_name']}: {_first_line(message['content'], 60)}"
        )
    if len(handles) > 3:
        show.line(f"  … and {len(handles) - 3} more sources")

    await _changes(show, client, app, events, rules)
    show(f"the text feed at max_chars {feed_chars}, as the proxy receives it:")
    out.write("\n" + await _feed(client, feed_chars))


def _a_rollup_id(blocks: list[dict[str, Any]]) -> str:
    """The id of a block that covers several messages (a rollup or a collapse)."""
    several = [b for b in blocks if len(b["source_messages"]) > 2]
    chosen = several[0] if several else blocks[0]
    return str(chosen["id"])


async def _changes(
    show: Progress,
    client: httpx.AsyncClient,
    app: Any,
    events: list[dict[str, Any]],
    rules: RuleSet,
) -> None:
    show("an edit, a delete and a forget, propagating")
    newest_hard = [e for e in events if rules.first_match(e["message"]["content"]) is not None]
    edit, delete, forget = (newest_hard[-1], newest_hard[-2], newest_hard[-3])
    before = await _feed(client, 12000)

    message = dict(edit["message"])
    old_text = message["content"]
    message.update(content=old_text + " (corrected)", edited_at=LATER)
    await client.post("/v1/ingest", json={"events": [dict(edit, message=message)]})
    await _settle(app)
    after = await _feed(client, 12000)
    show.line(
        f"edit   {CHANNEL}/{message['id']}: {_first_line(old_text, 50)!r} -> "
        f"{_first_line(message['content'], 60)!r}: "
        f"{'the feed shows the new text' if message['content'] in after else 'NOT PROPAGATED'}"
    )

    target = delete["message"]
    await client.post(
        "/v1/ingest",
        json={"events": [{"type": "delete", "channel_id": CHANNEL, "message_id": target["id"],
                          "deleted_at": LATER}]},
    )  # fmt: skip
    await _settle(app)
    after = await _feed(client, 12000)
    tombstone = any(
        item.kind == TOMBSTONE_BLOCK and item.handle == f"{CHANNEL}/{target['id']}"
        for item in served_items(after)
    )
    gone = target["content"] not in after and tombstone
    show.line(
        f"delete {CHANNEL}/{target['id']}: "
        + ("the feed shows a tombstone, never the content" if gone else "NOT PROPAGATED")
    )

    target = forget["message"]
    was_served = target["content"].split("\n")[0] in before
    await client.post(
        "/v1/ingest",
        json={"events": [{"type": "forget", "channel_id": CHANNEL, "message_ids": [target["id"]],
                          "reason": "demo"}]},
    )  # fmt: skip
    await _settle(app)
    after = await _feed(client, 12000)
    found = (
        await client.post(
            "/v1/tools/get_channel_messages", json={"source_handles": [f"{CHANNEL}/{target['id']}"]}
        )
    ).json()["messages"]
    database = app.state.ctx.store.path
    files = [database, Path(f"{database}-wal")]
    traces = sum(f.read_bytes().count(target["content"].encode()) for f in files if f.exists())
    show.line(
        f"forget {CHANNEL}/{target['id']}: served before: {'yes' if was_served else 'no'}; "
        f"in the feed now: {'yes' if target['content'] in after else 'no'}; "
        f"retrievable: {'yes' if found else 'no'}; "
        f"copies of its text in the database files: {traces}"
    )
