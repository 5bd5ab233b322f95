"""Properties: out-of-order, duplicated delivery converges to the in-order result."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from channel_memory.config import Settings
from channel_memory.ingest.commands import (
    DeleteMessage,
    MessageCommand,
    PutMessage,
    compute_content_hash,
)
from channel_memory.ingest.service import ingest
from channel_memory.ingest.versions import apply_commands
from channel_memory.models import MessageKey, MessageState
from channel_memory.store import Store, sources
from channel_memory.worker.runner import derive_hook, derive_settings

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
            async with conn.execute(
                "SELECT rowid FROM source_fts WHERE source_fts MATCH 'A OR B OR C OR D'"
            ) as cursor:
                indexed = [row[0] async for row in cursor]
            dirty = await (await conn.execute("SELECT count(*) FROM dirty_messages")).fetchone()
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
