"""Properties: delivery order never matters, and derived blocks stay true to the sources."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from channel_memory.feed import candidates
from channel_memory.feed.candidates import FeedQuery
from channel_memory.feed.layout import BudgetTooSmall, hard_label, render
from channel_memory.feed.peer import select_blocks
from channel_memory.ingest.commands import (
    DeleteMessage,
    MessageCommand,
    PutMessage,
    compute_content_hash,
)
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.ingest.versions import apply_commands
from channel_memory.kernel.config import Settings
from channel_memory.kernel.models import PRIMARY_KINDS, MessageKey, MessageState
from channel_memory.kernel.principal import Principal
from channel_memory.store import Store, sources
from channel_memory.store import blocks as block_store
from channel_memory.worker.rules import default_rules
from channel_memory.worker.runner import Worker, derive_hook, derive_settings
from tests.conftest import message_event

KEY = MessageKey("discord", "floor", "1301")
DERIVE = derive_hook(derive_settings(Settings()))
BASE_US = 1_779_379_200_000_000  # 2026-05-21T16:00:00Z
RECEIVED_US = BASE_US + 86_400_000_000


def put(content: str, minute: int) -> PutMessage:
    return PutMessage(
        key=KEY,
        content=content,
        content_hash=compute_content_hash(KEY, content, False),
        deleted=False,
        author_id="u42",
        author_name="desk-lead",
        author_kind="human",
        origin="human",
        created_us=BASE_US,
        edited_us=None if minute == 0 else BASE_US + minute * 60_000_000,
    )


@st.composite
def histories(draw: st.DrawFn) -> list[MessageCommand]:
    """A message's life in order: a create, edits (possibly back to old content), maybe a delete."""
    contents = draw(st.lists(st.sampled_from(["A", "B", "C", "D"]), min_size=1, max_size=6))
    minutes = sorted(
        draw(st.sets(st.integers(1, 500), min_size=len(contents), max_size=len(contents)))
    )
    events: list[MessageCommand] = [put(contents[0], 0)]
    events += [put(c, m) for c, m in zip(contents[1:], minutes[1:], strict=True)]
    if draw(st.booleans()):
        at = draw(st.integers(0, 600))
        events.insert(
            draw(st.integers(0, len(events))),
            DeleteMessage(KEY, BASE_US + at * 60_000_000 + 30_000_000),
        )
    return events


def deliveries(history: list[MessageCommand]) -> st.SearchStrategy[list[MessageCommand]]:
    """Any shuffle of the history with any events delivered more than once."""
    return st.lists(st.sampled_from(history), max_size=len(history)).flatmap(
        lambda extra: st.permutations(history + extra)
    )


def final_state(state: MessageState) -> Any:
    """What must not depend on delivery order (not observed_seq, which is arrival order)."""
    by_seq = {v.observed_seq: v.content_hash for v in state.versions}
    return sorted(
        (
            v.content_hash,
            v.content,
            v.deleted,
            v.event_us,
            v.is_current,
            by_seq.get(v.superseded_by) if v.superseded_by else None,
            v.author_name,
            v.created_us,
        )
        for v in state.versions
    )


@given(st.data())
def test_pure_version_logic_converges(data: st.DataObject) -> None:
    history = data.draw(histories())
    shuffled = data.draw(deliveries(history))
    in_order = apply_commands({}, history, RECEIVED_US, 1).states[KEY]
    chunks = data.draw(st.lists(st.integers(1, 4), min_size=len(shuffled), max_size=len(shuffled)))
    state: dict[MessageKey, MessageState] = {}
    position, next_id, step = 0, 1, 0
    while position < len(shuffled):
        batch = shuffled[position : position + chunks[step]]
        outcome = apply_commands(state, batch, RECEIVED_US, next_id)
        state = outcome.states
        next_id += len(outcome.changes.inserted)
        position += len(batch)
        step += 1
    assert final_state(state[KEY]) == final_state(in_order)
    assert sum(v.is_current for v in state[KEY].versions) == 1


async def _store_state(path: Path, batches: list[list[MessageCommand]]) -> Any:
    store = await Store.open(path)
    try:
        for batch in batches:
            await ingest(
                store, ["floor"], lambda kinds, b=batch: list(b), now_us=RECEIVED_US, derive=DERIVE
            )
        async with store.read() as conn:
            states = await sources.message_states(conn, [KEY])
            indexed = [
                row[0]
                for row in await conn.execute_fetchall(
                    "SELECT rowid FROM source_fts WHERE source_fts MATCH 'A OR B OR C OR D'"
                )
            ]
            (dirty,) = await conn.execute_fetchall("SELECT count(*) FROM dirty_messages")
        state = states[KEY]
        current = state.current
        expected_index = [current.id] if current and not current.deleted else []
        assert indexed == expected_index
        assert dirty == (1,)
        return final_state(state)
    finally:
        await store.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_store_converges_under_any_delivery_order(data: st.DataObject) -> None:
    history = data.draw(histories())
    shuffled = data.draw(deliveries(history))
    split = data.draw(st.integers(1, max(1, len(shuffled))))
    batches = [shuffled[i : i + split] for i in range(0, len(shuffled), split)]
    with tempfile.TemporaryDirectory() as folder:
        in_order = asyncio.run(_store_state(Path(folder) / "a.db", [history]))
        delivered = asyncio.run(_store_state(Path(folder) / "b.db", batches))
    assert delivered == in_order


# --- derived blocks stay true to the sources --------------------------------------------

TEMPLATES = [
    "stop moved to {n}",  # hard event
    "FILLED {n} NVDA",  # hard event
    "ok",  # acknowledgement
    "HEARTBEAT_OK",  # telemetry
    "Same conclusion as 09:{n}: no trade",  # repeat candidate
    "flows look two-way around {n}",  # ordinary chatter
    "chatter about the curve {n}",  # ordinary chatter
    "On est flat sur le Bund {n}",  # a decision only the decision model finds
    "pitch: long 300 SOL @ {n}, stop 131",  # a proposal, which a reply may decide
    "👍 send it",  # a decision when it replies to a proposal
]
IDS = [str(i) for i in range(12)]


@st.composite
def operations(draw: st.DrawFn) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    for step in range(draw(st.integers(1, 30))):
        message_id = draw(st.sampled_from(IDS))
        action = draw(st.sampled_from(["put", "put", "put", "delete", "forget"]))
        if action == "put":
            template = draw(st.sampled_from(TEMPLATES))
            canary = f"zq{step}x"
            content = template.format(n=10 + step)
            if template not in ("ok", "HEARTBEAT_OK", "👍 send it"):
                content += f" {canary}"
            reply = draw(st.sampled_from(IDS)) if template == "👍 send it" else None
            ops.append(
                {
                    "type": "message",
                    "channel_id": "floor",
                    "message": {
                        "id": message_id,
                        "author_id": draw(st.sampled_from(["u1", "u2"])),
                        "created_at": f"2026-05-21T1{int(message_id) % 3}:{message_id:0>2}:00Z",
                        "edited_at": f"2026-05-21T19:{step:02d}:00Z",
                        "content": content,
                        **({"thread_id": "t"} if draw(st.booleans()) and step % 3 == 0 else {}),
                        **({"reply_to": reply} if reply not in (None, message_id) else {}),
                    },
                }
            )
        elif action == "delete":
            ops.append(
                {
                    "type": "delete",
                    "channel_id": "floor",
                    "message_id": message_id,
                    "deleted_at": f"2026-05-21T19:{step:02d}:30Z",
                }
            )
        else:
            ops.append({"type": "forget", "channel_id": "floor", "message_ids": [message_id]})
    return ops


async def _derive_and_check(
    path: Path, batches: list[list[dict[str, Any]]], rollup_size: int
) -> None:
    settings = Settings(db=path, worker={"rollup_size": rollup_size})
    store = await Store.open(path)
    clock = iter(range(RECEIVED_US, RECEIVED_US + 10_000_000, 1000))
    try:
        worker = Worker(store, settings, lambda: next(clock))
        await worker.prepare()
        for index, events in enumerate(batches):
            batch = IngestBatch.model_validate({"events": events})
            await ingest(
                store,
                ["floor"],
                native_commands(batch.events),
                now_us=RECEIVED_US + index,
                derive=worker.hook,
            )
            if index % 2:
                await worker.drain()  # some changes land on already-derived blocks
        await worker.drain()
        async with store.read() as conn:
            blocks = await block_store.all_blocks(conn)
            versions = list(
                await conn.execute_fetchall(
                    "SELECT message_id, content_hash, content, is_current, deleted, forgotten_us "
                    "FROM source_messages"
                )
            )
        # incremental derivation gives exactly what deriving from scratch gives
        async with store.write() as conn:
            for table in ("recall_blocks", "block_fts", "derived_messages", "worker_state"):
                await conn.execute(f"DELETE FROM {table}")
        await worker.prepare()
        await worker.drain()
        async with store.read() as conn:
            rebuilt = await block_store.all_blocks(conn)
    finally:
        await store.close()
    content_of = [(b.id, b.kind, b.text, b.sources, b.dirty) for b in blocks]
    assert content_of == [(b.id, b.kind, b.text, b.sources, b.dirty) for b in rebuilt]

    current = {(m, h): c for m, h, c, cur, deleted, forgotten in versions if cur and not deleted}
    live_ids = {m for m, _ in current}
    gone_text = [c for m, h, c, cur, deleted, forgotten in versions if not cur or forgotten]
    rules = default_rules()
    cited: dict[str, set[str]] = {}
    for block in blocks:
        assert not block.dirty
        for source in block.sources:
            cited.setdefault(source.message_id, set()).add(block.kind)
            if block.kind == "tombstone":
                continue
            # only current, non-deleted, non-forgotten versions are cited
            assert (source.message_id, source.content_hash) in current
        for text in gone_text:
            canary = text.rsplit(" ", 1)[-1]
            if canary.startswith("zq"):
                assert canary not in block.text
    served, _, _ = select_blocks(blocks, None, 10_000)
    served_ids = {s.message_id for b in served for s in b.sources}
    # every current message is covered by a served block
    assert live_ids <= served_ids
    for (message_id, _), content in current.items():
        primary = cited[message_id] & PRIMARY_KINDS
        assert len(primary) == 1, (message_id, cited[message_id])
        if rules.first_match(content):
            assert primary == {"hard_event"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations(), st.integers(1, 6), st.sampled_from([2, 3, 20]))
def test_blocks_stay_true_to_the_sources(
    ops: list[dict[str, Any]], size: int, rollup_size: int
) -> None:
    batches = [ops[i : i + size] for i in range(0, len(ops), size)]
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_derive_and_check(Path(folder) / "p.db", batches, rollup_size))


# --- the feed: budget, hard events, determinism -------------------------------------------

FEED_TEMPLATES = [
    "stop moved to {n}",
    "FILLED {n} NVDA @ 131.{n}",
    "Desk report {n}\n"
    + "\n".join(f"context line {i} on flows and the curve" for i in range(12))
    + "\nrouting the NVDA order to desk {n}",
    "ok",
    "HEARTBEAT_OK",
    "chatter about the 2y {n} " + "words " * 20,
    "Same conclusion as 09:{n}: no trade",
]


@st.composite
def desk_history(draw: st.DrawFn) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, 60))):
        template = draw(st.sampled_from(FEED_TEMPLATES))
        events.append(
            message_event(
                str(i),
                template.format(n=10 + i),
                created_at=f"2026-05-21T{draw(st.integers(0, 19)):02d}:{i % 60:02d}:00Z",
                author=draw(st.sampled_from(["lead", "analyst-b", "bot"])),
            )
        )
    return events


async def _feed_bodies(
    path: Path, events: list[dict[str, Any]], process: int, budgets: list[int]
) -> list[tuple[str, int, Any, Any]]:
    settings = Settings(db=path)
    store = await Store.open(path)
    try:
        worker = Worker(store, settings, lambda: RECEIVED_US)
        await worker.prepare()
        batch = IngestBatch.model_validate({"events": events})
        await ingest(
            store, ["floor"], native_commands(batch.events), now_us=RECEIVED_US, derive=worker.hook
        )
        await worker.run_once(process)  # maybe only part of it: the rest is pending
        principal = Principal("t", frozenset({"read"}), frozenset({"*"}))
        out = []
        for budget in budgets:
            for fmt in ("text", "json", "lean"):  # lean: format=json&detail=lean
                query = FeedQuery(
                    ("floor",), "raw_window+digest", 86_400_000_000, RECEIVED_US, False, 10,
                    budget, "json" if fmt == "lean" else fmt, 21_600_000_000,
                    lean=fmt == "lean",
                )  # fmt: skip
                async with store.read() as conn:
                    found = await candidates.live(conn, query, principal)
                    try:
                        body = await candidates.serve(conn, query, principal)
                    except BudgetTooSmall:
                        continue
                    again = await candidates.serve(conn, query, principal)
                assert again.content == body.content  # deterministic
                assert len(render(found, budget, query.fmt).content) <= budget
                out.append((fmt, budget, body, found))
        return out
    finally:
        await store.close()


def _decision_lines(content: str) -> list[str]:
    lines = content.split("\n")
    keep = default_rules().decision_lines(content)
    return [line for line, kept in zip(lines, keep, strict=True) if kept]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    desk_history(),
    st.sampled_from([1, 5, 1000]),
    st.lists(st.integers(300, 12_000), min_size=1, max_size=4),
)
def test_feed_budget_and_hard_events(
    events: list[dict[str, Any]], process: int, budgets: list[int]
) -> None:
    contents = {f"floor/{e['message']['id']}": e["message"]["content"] for e in events}
    with tempfile.TemporaryDirectory() as folder:
        bodies = asyncio.run(_feed_bodies(Path(folder) / "f.db", events, process, budgets))
    for fmt, budget, body, found in bodies:
        assert len(body.content) <= budget
        numbers = body.numbers
        if fmt == "text":
            shown = [
                i
                for i in found.hard
                if f" {hard_label(i.event_type)} {i.handle.partition('/')[2]} " in body.content
            ]
            named = numbers["omitted_hard_events"]
            # every hard event of the window is shown, named, or counted in the omission line
            assert len(shown) + len(named) + numbers["more_hard_events"] == found.hard_total
            # each decision line whole, marked "…" where lines around it are left out
            quoted = {
                q[2:].removeprefix("… ").removesuffix(" …")
                for q in body.content.split("\n")
                if q.startswith("> ")
            }
            for item in shown:
                for line in _decision_lines(contents[item.handle]):
                    assert line in quoted
        else:
            data = json.loads(body.content)
            shown_json = sum(1 for b in data["digest"] if b["kind"] == "hard_event")
            omitted = data["omitted"]
            assert shown_json + len(omitted["hard_events"]) + omitted["more_hard_events"] == (
                found.hard_total
            )
            if fmt == "lean":  # what a model reads, not what identifies or verifies a block
                for item in [*data["digest"], *data["raw_recent"]]:
                    assert not {"covered_content_hashes", "content_hash", "score"} & set(item)
                for block in data["digest"]:  # an id only where it expands several messages
                    assert ("id" in block) == (len(block["source_handles"]) > 1)
