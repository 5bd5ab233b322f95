"""The worker: recall blocks per message and per group, kept true as sources change."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.kernel.config import ConfigError, load_settings
from channel_memory.kernel.timefmt import parse_rfc3339
from channel_memory.store import Store
from channel_memory.store import blocks as block_store
from channel_memory.worker.runner import Worker, _failure
from tests.conftest import FakeClock, LiveServer, at, ingest_ok, message_event, query

REVIEW = (
    "Market review: Position: flat. Risk view: balanced into CPI. "
    "Watching NVDA 130 and the 2y into the auction."
)


@pytest.fixture
def desk(make_server: Callable[..., LiveServer]) -> Iterator[tuple[LiveServer, httpx.Client]]:
    """A server whose worker only runs when the test drains it."""
    server = make_server(worker={"enabled": False})
    with server.client() as client:
        yield server, client


def digest(client: httpx.Client, **body: Any) -> dict[str, Any]:
    response = client.post("/digest", json={"channel_ids": ["floor"], "since": "24h", **body})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def blocks_of(server: LiveServer, message_id: str) -> list[tuple[str, int]]:
    """(kind, sparse) of every block citing a message."""
    return query(
        server.settings.db,
        "SELECT b.kind, b.sparse FROM recall_blocks b JOIN block_sources s ON s.block_seq = b.seq "
        "WHERE s.message_id = ? ORDER BY b.kind",
        message_id,
    )


def test_proposal_is_one_faithful_hard_event_then_tombstone_then_nothing(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    text = "[PROPOSED] buy 200 NVDA at 131.20, stop 128"
    ingest_ok(client, message_event("1", text, created_at=at(0)))
    server.drain()
    [block] = digest(client)["blocks"]
    assert (block["kind"], block["event_type"], block["sparse"]) == (
        "hard_event",
        "trade_proposal",
        False,
    )
    assert block["text"] == text
    assert block["source_handles"] == ["floor/1"]
    assert block["processor"] == "deterministic" and block["trust"] == "unverified"

    ingest_ok(client, {"type": "delete", "channel_id": "floor", "message_id": "1"})
    assert digest(client)["status"] == "stale"  # the change is not processed yet
    server.drain()
    [tombstone] = digest(client)["blocks"]
    assert tombstone["kind"] == "tombstone" and tombstone["sparse"] is True
    assert "NVDA" not in tombstone["text"] and "desk-lead" in tombstone["text"]
    assert blocks_of(server, "1") == [("tombstone", 1)]

    ingest_ok(client, {"type": "forget", "channel_id": "floor", "message_ids": ["1"]})
    # no drain: the forget itself removed every block citing the message
    assert blocks_of(server, "1") == []
    body = digest(client)
    assert body["status"] == "unavailable" and body["blocks"] == []


def test_heartbeats_collapse_into_one_telemetry_count(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(
        client,
        *(
            message_event(str(i), "HEARTBEAT_OK", created_at=at(10 * i), author="bot")
            for i in range(3)
        ),
    )
    server.drain()
    [block] = digest(client)["blocks"]
    assert block["kind"] == "telemetry_count" and block["sparse"] is True
    assert block["source_messages"] == ["0", "1", "2"]
    assert block["text"].startswith("3 runtime/status messages")


def test_short_acknowledgements_collapse_but_meaningful_ones_stay(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", "ok", created_at=at(1), author="a"),
        message_event("2", "Thanks!", created_at=at(2), author="b"),
        message_event("3", "got it.", created_at=at(3), author="a"),
        message_event("4", "ok ACME level still matters", created_at=at(4), author="c"),
    )
    server.drain()
    kinds = {b["kind"]: b for b in digest(client)["blocks"]}
    assert set(kinds) == {"low_value_ack", "raw_excerpt"}
    ack = kinds["low_value_ack"]
    assert ack["source_messages"] == ["1", "2", "3"]
    assert ack["event_type"] == "low_value_acknowledgement"
    assert ack["text"].startswith("3 short acknowledgements from 2 authors")
    assert kinds["raw_excerpt"]["text"] == "ok ACME level still matters"


def test_repeated_no_change_conclusions_collapse_per_author(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event(
            "1",
            "Same conclusion as 09:30: no trade, NVDA inside the range.",
            created_at=at(30, 9),
            author="analyst-a",
        ),
        message_event(
            "2",
            "Same conclusion as 10:15: no trade, NVDA inside the range.",
            created_at=at(15, 10),
            author="analyst-a",
        ),
        message_event(
            "3",
            "Same conclusion as 10:15: no trade, NVDA inside the range.",
            created_at=at(20, 10),
            author="analyst-b",
        ),
    )
    server.drain()
    blocks = digest(client)["blocks"]
    repeat = [b for b in blocks if b["kind"] == "decision_repeat"]
    assert len(repeat) == 1
    assert repeat[0]["source_messages"] == ["1", "2"]
    assert repeat[0]["event_type"] == "repeated_decision"
    assert "analyst-a repeated a no-change conclusion 2 times" in repeat[0]["text"]
    raw = [b for b in blocks if b["kind"] == "raw_excerpt"]
    assert [b["source_messages"] for b in raw] == [["3"]]
    # the group shrinking back to one makes the survivor a raw excerpt again
    ingest_ok(client, {"type": "delete", "channel_id": "floor", "message_id": "2"})
    server.drain()
    kinds = sorted((b["kind"], b["source_messages"]) for b in digest(client)["blocks"])
    assert kinds == [("raw_excerpt", ["1"]), ("raw_excerpt", ["3"]), ("tombstone", ["2"])]


def test_stop_statement_is_a_hard_event_but_a_market_review_is_not(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", "Stop remains 610 until invalidation changes.", created_at=at(1)),
        message_event("2", REVIEW, created_at=at(2)),
    )
    server.drain()
    kinds = {
        b["source_messages"][0]: (b["kind"], b["event_type"]) for b in digest(client)["blocks"]
    }
    assert kinds == {
        "1": ("hard_event", "stop_or_target_change"),
        "2": ("raw_excerpt", None),
    }


def test_bridge_tags_make_hard_events(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    ingest_ok(client, message_event("1", "card", created_at=at(1), tags=["trade_fill"]))
    server.drain()
    [block] = digest(client)["blocks"]
    assert (block["kind"], block["event_type"]) == ("hard_event", "trade_fill")


def test_long_hard_event_keeps_decision_lines_and_marks_the_gaps_between(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    filler = [
        f"context line {i} about the tape and flows, nothing decided here." for i in range(20)
    ]
    text = "\n".join(["Desk update", *filler[:10], "stop moved to 408", *filler[10:]])
    ingest_ok(client, message_event("1", text, created_at=at(1)))
    server.drain()
    [block] = digest(client)["blocks"]
    assert block["kind"] == "hard_event" and block["sparse"] is False
    assert block["text"].split("\n") == [  # each run left out marked where it was
        "Desk update",
        "[… 10 lines elided]",
        "stop moved to 408",
        "[… 10 lines elided]",
    ]


def test_sequence_rollup_covers_older_ordinary_chatter(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    chatter = [
        message_event(
            str(i),
            f"note {i}: flows look two-way around {100 + i}",
            created_at=at(i * 2, 10),
            author=f"a{i % 3}",
        )
        for i in range(25)
    ]
    ingest_ok(client, *chatter)
    server.drain()
    rollups = query(
        server.settings.db,
        "SELECT b.id, count(s.message_id) FROM recall_blocks b JOIN block_sources s "
        "ON s.block_seq = b.seq WHERE b.kind = 'sequence_rollup' GROUP BY b.id "
        "ORDER BY min(b.from_us)",
    )
    assert [count for _, count in rollups] == [20, 5]
    raw = digest(client)
    assert raw["coverage"]["raw_recent_messages"] == 25
    assert {b["kind"] for b in raw["blocks"]} == {"raw_excerpt"}
    # with raw_recent, everything older is served by the rollups instead
    rolled = digest(client, budget={"raw_recent": "1h"})
    assert [b["kind"] for b in rolled["blocks"]] == ["sequence_rollup", "sequence_rollup"]
    assert rolled["coverage"]["older_raw_messages"] == 0
    first = rolled["blocks"][0]
    assert first["text"].startswith("sequence of 20 messages 10:00-10:38 by ")
    assert len(first["source_handles"]) == 20


def test_thread_replies_get_a_topic_rollup(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", "what is the view on the 2y?", created_at=at(1)),
        message_event("2", "rich vs 5s by 3bp", created_at=at(2), reply_to="1", author="b"),
        message_event(
            "3", "agree, waiting for the auction", created_at=at(3), reply_to="1", author="c"
        ),
    )
    server.drain()
    [topic] = query(
        server.settings.db,
        "SELECT b.text FROM recall_blocks b WHERE b.kind = 'topic_rollup'",
    )
    assert topic[0].startswith("thread of 2 messages 16:02-16:03 by b (1), c (1)")


def test_edit_marks_blocks_dirty_until_recomputed(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    ingest_ok(client, message_event("1", "watching 2y", created_at=at(1)))
    server.drain()
    [before] = digest(client)["blocks"]
    ingest_ok(client, message_event("1", "watching 5y", created_at=at(1), edited_at=at(5)))
    assert query(server.settings.db, "SELECT dirty FROM recall_blocks") == [(1,)]
    stale = digest(client)
    assert stale["status"] == "stale" and stale["blocks"] == []
    server.drain()
    [after] = digest(client)["blocks"]
    assert after["text"] == "watching 5y" and after["id"] != before["id"]
    assert query(server.settings.db, "SELECT count(*) FROM recall_blocks") == [(1,)]


def test_unchanged_blocks_keep_their_id_and_generated_at(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(client, message_event("1", "route: NVDA to desk B", created_at=at(1)))
    server.drain()
    [first] = digest(client)["blocks"]
    server.clock.advance(600)
    ingest_ok(client, message_event("2", "unrelated", created_at=at(9)))
    ingest_ok(client, message_event("1", "route: NVDA to desk B", created_at=at(1)))  # duplicate
    server.drain()
    again = {b["id"]: b for b in digest(client)["blocks"]}
    assert again[first["id"]]["generated_at"] == first["generated_at"]


def test_author_forget_removes_the_name_from_derived_text(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(
        client,
        *(
            message_event(
                str(i),
                # plainly ordinary: "chatter 2 on the curve" reads as a decision to the model
                f"chatter about the weather, day {i}",
                created_at=at(i),
                author="leaker" if i % 2 else "stays",
            )
            for i in range(6)
        ),
        message_event("9", "ok", created_at=at(9), author="leaker"),
    )
    server.drain()
    assert query(
        server.settings.db, "SELECT count(*) FROM recall_blocks WHERE text LIKE '%leaker%'"
    ) != [(0,)]
    ingest_ok(client, {"type": "forget", "channel_id": "floor", "author_id": "u-leaker"})
    assert query(
        server.settings.db, "SELECT count(*) FROM recall_blocks WHERE text LIKE '%leaker%'"
    ) == [(0,)]
    [rollup] = query(
        server.settings.db, "SELECT text FROM recall_blocks WHERE kind = 'sequence_rollup'"
    )
    assert rollup[0].startswith("sequence of 3 messages")


def test_coverage_gap_makes_digest_say_so(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    ingest_ok(client, message_event("1", "stop moved to 408", created_at=at(1)))
    ingest_ok(
        client,
        {"type": "coverage_gap", "channel_id": "floor", "from": at(0, 10), "to": at(30, 10)},
    )
    server.drain()
    body = digest(client)
    assert body["status"] == "coverage_gap"
    assert [g["id"] for g in body["coverage"]["gaps"]] == [1]
    ingest_ok(client, {"type": "coverage_gap_resolved", "channel_id": "floor", "gap_id": 1})
    assert digest(client)["status"] == "ok"


def test_deleting_every_block_and_rerunning_reproduces_them(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", "FILLED 200 NVDA @ 131.20", created_at=at(1)),
        *(
            message_event(
                str(10 + i), f"flow note {i} {i * 7}", created_at=at(2 + i), author=f"x{i % 2}"
            )
            for i in range(5)
        ),
        message_event("20", "HEARTBEAT_OK", created_at=at(20), author="bot"),
        message_event("21", "thx", created_at=at(21)),
        message_event("22", "reply", created_at=at(22), thread_id="t1"),
        message_event("23", "reply two", created_at=at(23), thread_id="t1"),
    )
    ingest_ok(client, {"type": "delete", "channel_id": "floor", "message_id": "11"})
    server.drain()
    snapshot = "SELECT id, kind, text, from_us, to_us FROM recall_blocks ORDER BY id"
    provenance = (
        "SELECT b.id, s.message_id, s.content_hash FROM block_sources s "
        "JOIN recall_blocks b ON b.seq = s.block_seq ORDER BY 1, 2"
    )
    before = query(server.settings.db, snapshot), query(server.settings.db, provenance)

    async def wipe() -> None:
        async with server.app.state.ctx.store.write() as conn:
            seqs = [seq for (seq,) in await conn.execute_fetchall("SELECT seq FROM recall_blocks")]
            await block_store.delete_blocks(conn, seqs)  # with their full-text rows
            await conn.execute("DELETE FROM derived_messages")
            await conn.execute("DELETE FROM worker_state")

    server.run(wipe())
    assert query(server.settings.db, "SELECT count(*) FROM recall_blocks") == [(0,)]
    server.run(server.app.state.worker.prepare())
    server.drain()
    assert (query(server.settings.db, snapshot), query(server.settings.db, provenance)) == before


def test_ingest_wakes_the_in_process_worker(make_server: Callable[..., LiveServer]) -> None:
    server = make_server()
    worker = server.app.state.worker
    with server.client() as client:
        ingest_ok(client, message_event("1", "FILLED 200 NVDA @ 131.20", created_at=at(1)))
        server.run(asyncio.wait_for(worker.wait_idle(), timeout=30))
        [block] = digest(client)["blocks"]
    assert block["kind"] == "hard_event"
    assert query(server.settings.db, "SELECT count(*) FROM dirty_messages") == [(0,)]


@pytest.mark.anyio
async def test_only_one_worker_holds_the_lease(tmp_path: Path) -> None:
    clock = FakeClock()
    settings = load_settings(None, db=tmp_path / "cm.db")
    store = await Store.open(settings.db)
    try:
        first = Worker(store, settings, clock, holder="first")
        second = Worker(store, settings, clock, holder="second")
        assert await first._holds_lease()
        assert not await second._holds_lease()
        assert await first._holds_lease()  # renewal
        clock.advance(31)  # the first holder stopped renewing
        assert await second._holds_lease()
        assert not await first._holds_lease()
        stop = asyncio.Event()
        stop.set()
        await second.run_forever(stop)  # releases on the way out
        assert await first._holds_lease()
    finally:
        await store.close()


@pytest.mark.anyio
async def test_the_worker_says_when_it_derives_and_when_it_stands_by(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker process logs taking the lease, each drain that found work (counts and
    time, no content) and standing by while another holds the lease — once per change."""
    clock = FakeClock()
    settings = load_settings(None, db=tmp_path / "cm.db")
    store = await Store.open(settings.db)
    secret = "FILLED 200 NVDA @ 131.20"
    try:
        first = Worker(store, settings, clock, holder="first")
        second = Worker(store, settings, clock, holder="second")
        batch = IngestBatch.model_validate({"events": [message_event("1", secret)]})
        await ingest(
            store, ["floor"], native_commands(batch.events), now_us=clock(), derive=first.hook
        )
        await first.prepare()
        caplog.set_level("INFO", logger="channel_memory.worker")
        assert await first._holds_lease()
        stop = asyncio.Event()

        async def once(worker: Worker) -> None:
            async def stop_soon() -> None:
                await worker.wait_idle() if worker is first else None
                stop.set()

            stop.clear()
            await asyncio.gather(worker.run_forever(stop), stop_soon())

        await once(second)  # the first holds the lease: the second stands by
        await once(second)  # said once, not per poll
        lines = [r.getMessage() for r in caplog.records]
        assert lines == ["standing by: another process holds the derivation lease"]
        caplog.clear()
        await once(first)
        lines = [r.getMessage() for r in caplog.records]
        assert lines[0] == "holding the derivation lease: deriving (holder first)"
        assert lines[1].startswith("derived 1 message(s), 1 block(s) written, in ")
        assert all(secret not in line and "NVDA" not in line for line in lines)
    finally:
        await store.close()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("worker", "lifetime"),
    [
        ({"lease_ttl": "10s"}, 10),
        ({"lease_ttl": "5s", "poll_interval": "4s"}, 12),  # never under three polls
    ],
)
async def test_the_lease_lives_as_long_as_configured(
    tmp_path: Path, worker: dict[str, str], lifetime: int
) -> None:
    clock = FakeClock()
    settings = load_settings(None, db=tmp_path / "cm.db", worker=worker)
    store = await Store.open(settings.db)
    try:
        first = Worker(store, settings, clock, holder="first")
        second = Worker(store, settings, clock, holder="second")
        assert await first._holds_lease()
        clock.advance(lifetime - 1)
        assert not await second._holds_lease()
        clock.advance(2)
        assert await second._holds_lease()
    finally:
        await store.close()


@pytest.mark.parametrize("lease_ttl", ["2s", "25h", "inf"])
def test_a_lease_under_five_seconds_or_over_a_day_is_refused(
    tmp_path: Path, lease_ttl: str
) -> None:
    with pytest.raises(ConfigError, match=r"worker\.lease_ttl"):
        load_settings(None, db=tmp_path / "cm.db", worker={"lease_ttl": lease_ttl})


@pytest.mark.anyio
async def test_retention_drops_old_sources_and_their_blocks(tmp_path: Path) -> None:
    clock = FakeClock("2026-05-21T20:00:00Z")
    settings = load_settings(None, db=tmp_path / "cm.db", retention={"days": 1})
    store = await Store.open(settings.db)
    try:
        worker = Worker(store, settings, clock)
        events = [
            message_event("old", "stop moved to 408", created_at="2026-05-19T10:00:00Z"),
            message_event("new", "stop moved to 410", created_at="2026-05-21T10:00:00Z"),
        ]
        batch = IngestBatch.model_validate({"events": events})
        await ingest(
            store, ["floor"], native_commands(batch.events), now_us=clock(), derive=worker.hook
        )
        await worker.prepare()
        await worker.drain()
        assert await worker.apply_retention() == 1
        assert await worker.drain() == 0
    finally:
        await store.close()
    db = settings.db
    assert query(db, "SELECT message_id FROM source_messages") == [("new",)]
    assert query(db, "SELECT s.message_id FROM block_sources s") == [("new",)]
    assert query(db, "SELECT message_id FROM derived_messages") == [("new",)]
    assert query(db, "SELECT rowid FROM source_fts WHERE source_fts MATCH '408'") == []
    assert query(db, "SELECT channel_id, retained_from_us FROM channel_retention") == [
        ("floor", parse_rfc3339("2026-05-20T20:00:00Z"))
    ]


def test_worker_command_drains_a_database_served_without_a_worker(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server(worker={"enabled": False})
    with server.client() as client:
        ingest_ok(client, *(message_event(str(i), f"note {i}", created_at=at(i)) for i in range(5)))
    server.__exit__()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "channel_memory",
            "worker",
            "--once",
            "--db",
            str(server.settings.db),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CHANNEL_MEMORY_RETENTION__DAYS": "100000"},
        check=True,
    )
    assert json.loads(result.stdout) == {"processed": 5, "retention_dropped": 0}
    assert query(server.settings.db, "SELECT count(*) FROM dirty_messages") == [(0,)]
    assert query(
        server.settings.db, "SELECT count(*) FROM recall_blocks WHERE kind = 'raw_excerpt'"
    ) == [(5,)]


def test_a_failure_is_logged_by_its_types_and_its_causes_never_its_text() -> None:
    # the worker's and the LLM pass's log lines name what failed and why, without the
    # text (a driver's error text can quote stored content)
    try:
        try:
            raise ConnectionRefusedError("secret stored text")
        except OSError as cause:
            raise RuntimeError("more secret text") from cause
    except RuntimeError as exc:
        assert _failure(exc) == "RuntimeError (ConnectionRefusedError)"
    assert _failure(ValueError("secret")) == "ValueError"
