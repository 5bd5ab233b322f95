"""Model-assisted detection: real litellm calls to a fake provider over real HTTP promote
ordinary messages to verbatim hard events, within the rollups' cache, caps and breaker."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from channel_memory.worker.llm import PassReport
from channel_memory.worker.llm_detect import DECISION_TYPES, Detection, check_detection
from channel_memory.worker.llm_rollups import Rejected, Window
from tests.conftest import FakeClock, LiveServer, at, ingest_ok, message_event, query
from tests.fake_provider import FakeProvider, Reply, sources_document, summarise
from tests.test_forget import found_anywhere
from tests.test_llm import CHATTER, MODEL, chatter, llm

ADMIN = "admin-token-0123456789a"
TOKENS = [{"token": ADMIN, "scopes": ["admin"], "agent_id": "ops"}]
DECIDED = "m2"
"""The chatter message the fake model says carries a decision (no rule matches it)."""
MODEL_PROSE = "Narwhalprose5521"
"""Words the fake model adds to its answers: they must never be stored or served."""


def is_detect(request: dict[str, Any]) -> bool:
    return "You find decisions" in str(request["messages"][0]["content"])


def detect_requests(provider: FakeProvider) -> list[dict[str, Any]]:
    return [r for r in provider.requests if is_detect(r)]


def decisions(*entries: Any) -> Reply:
    return Reply(json.dumps({"decisions": list(entries), "reasoning": MODEL_PROSE}))


def finds(message_id: str, event_type: str = "thesis_change") -> Callable[..., Reply]:
    """A responder: detection names ``message_id`` when the window holds it; rollups summarise."""

    def respond(request: dict[str, Any]) -> Reply:
        if not is_detect(request):
            return summarise(request)
        ids = [m["id"] for m in sources_document(request)["messages"]]
        if message_id in ids:
            return decisions({"id": message_id, "type": event_type, "why": MODEL_PROSE})
        return decisions()

    return respond


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider(finds(DECIDED)) as fake:
        yield fake


@pytest.fixture
def desk(
    make_server: Callable[..., LiveServer], provider: FakeProvider
) -> Callable[..., LiveServer]:
    def make(**llm_overrides: Any) -> LiveServer:
        return make_server(
            worker={"enabled": False},
            tokens=TOKENS,
            llm=llm(provider.api_base, detect=True, **llm_overrides),
        )

    return make


def llm_pass(server: LiveServer) -> PassReport:
    server.drain()
    report: PassReport = server.run(server.app.state.worker.llm.run_once())
    server.drain()  # the promotions queued their messages for derivation
    return report


def own_block(db: Path, message_id: str) -> tuple[Any, ...]:
    [row] = query(
        db,
        "SELECT kind, event_type, text, processor, sparse, sources FROM recall_blocks "
        "WHERE group_key = ?",
        f"m:{message_id}",
    )
    return row


def promotions(db: Path) -> list[tuple[Any, ...]]:
    return query(
        db,
        "SELECT message_id, content_hash, event_type, processor FROM llm_promotions "
        "ORDER BY message_id",
    )


def edit(message_id: str, content: str, minute: int) -> dict[str, Any]:
    index = int(message_id[1:])
    message = dict(chatter("m", 8)[index]["message"], content=content, edited_at=at(minute, 9))
    return {"type": "message", "channel_id": "floor", "message": message}


# --- promotion ---------------------------------------------------------------------------------


def test_a_promoted_message_is_a_verbatim_hard_event_of_the_detecting_model(
    desk: Callable[..., LiveServer], provider: FakeProvider, db_path: Path
) -> None:
    server = desk()
    with server.client(ADMIN) as client:
        ingest_ok(client, *chatter("m", 8))
        server.drain()
        assert own_block(db_path, DECIDED)[:4] == ("raw_excerpt", None, CHATTER[2], "deterministic")
        report = llm_pass(server)
        assert (report.detect_windows, report.promoted, report.calls) == (1, 1, 1)
        # the window held the promoted message: its rollup waits for the new window
        assert report.windows == 0
        [request] = provider.requests
        assert is_detect(request)
        document = sources_document(request)
        assert [m["content"] for m in document["messages"]] == CHATTER
        assert "Never follow" in request["messages"][0]["content"]

        [(message_id, content_hash, event_type, processor)] = promotions(db_path)
        assert (message_id, event_type, processor) == (
            DECIDED, "thesis_change", f"llm-detect:{MODEL}"
        )  # fmt: skip
        kind, etype, text, block_processor, sparse, sources = own_block(db_path, DECIDED)
        assert (kind, etype, text, block_processor, sparse) == (
            "hard_event", "thesis_change", CHATTER[2], f"llm-detect:{MODEL}", 0
        )  # fmt: skip
        assert json.loads(sources) == [[DECIDED, content_hash]]
        # the deterministic sequence rollup no longer covers it
        [(rollup_sources,)] = query(
            db_path, "SELECT sources FROM recall_blocks WHERE kind = 'sequence_rollup'"
        )
        assert DECIDED not in [m for m, _ in json.loads(rollup_sources)]

        # served as a hard event: its own text; the model's words never appear anywhere
        body = client.get("/channel-awareness", params={"channels": "floor"}).text
        assert CHATTER[2] in body and MODEL_PROSE not in body
        assert not found_anywhere(db_path, MODEL_PROSE)

        # a second pass: detection is answered by the cache (no new detection call); the
        # rollup of the window's ordinary messages is bought now, without the promoted one
        again = llm_pass(server)
        assert (again.detect_cached, again.promoted, again.calls, again.written) == (1, 0, 1, 1)
        assert len(detect_requests(provider)) == 1
        [rollup_request] = [r for r in provider.requests if not is_detect(r)]
        assert DECIDED not in sources_document(rollup_request)["cite_exactly"]
        third = llm_pass(server)
        assert (third.calls, third.detect_cached) == (0, 1)


def test_stats_and_metrics_count_promotions(desk: Callable[..., LiveServer], db_path: Path) -> None:
    server = desk()
    with server.client(ADMIN) as client:
        ingest_ok(client, *chatter("m", 8), *chatter("d", 8, channel="desk"))
        report = llm_pass(server)
        assert report.promoted == 1  # only "m2": the desk channel's ids are d0..d4
        stats = client.get("/v1/stats").json()
        by_channel = {c["channel_id"]: c["llm"]["promotions"] for c in stats["channels"]}
        assert by_channel == {"floor": 1, "desk": 0}
        assert stats["llm"]["promotions"] == 1
        metrics = client.get("/metrics").text
        assert "channel_memory_llm_promotions_total 1.0" in metrics


# --- what the model answers --------------------------------------------------------------------


def window(*ids: str) -> Window:
    return Window("floor", "chat", "detect", "d:0:0", tuple((m, "h") for m in ids))


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        ("APPROVED", Rejected("not_json")),
        ('["m1"]', Rejected("wrong_shape")),
        ('{"decisions": {"m1": "trade_fill"}}', Rejected("wrong_shape")),
        ('```json\n{"decisions": []}\n```', Detection(())),
        (
            json.dumps(
                {
                    "decisions": [
                        {"id": "m2", "type": "trade_fill"},
                        {"id": "m2", "type": "trade_proposal"},
                        {"id": "fill", "type": "trade_fill"},
                        {"id": "m1", "type": "lunch_order"},
                        {"id": 1, "type": "trade_fill"},
                        "m1",
                        {"id": "m1", "type": "risk_limit", "text": "ignored prose"},
                    ]
                }
            ),
            Detection(
                (("m1", "risk_limit"), ("m2", "trade_fill")),
                {"duplicate_ids": 1, "other_ids": 1, "unknown_type": 1, "wrong_shape": 2},
            ),
        ),
    ],
)
def test_only_known_ids_and_types_are_accepted(raw: str, outcome: Any) -> None:
    assert check_detection(raw, window("m1", "m2")) == outcome


def test_every_decision_type_is_accepted() -> None:
    ids = [f"m{i}" for i in range(len(DECISION_TYPES))]
    entries = [{"id": m, "type": t} for m, t in zip(ids, DECISION_TYPES, strict=True)]
    raw = json.dumps({"decisions": entries})
    result = check_detection(raw, window(*ids))
    assert isinstance(result, Detection) and len(result.found) == len(DECISION_TYPES)


def test_bad_output_promotes_nothing_is_counted_and_not_bought_again(
    desk: Callable[..., LiveServer], provider: FakeProvider, db_path: Path
) -> None:
    bad = decisions(
        {"id": "fill-999", "type": "trade_fill"},  # not in the window
        {"id": "m1", "type": "approve_everything"},  # not a known type
    )
    provider.responder = lambda r: bad if is_detect(r) else summarise(r)
    server = desk()
    with server.client(ADMIN) as client:
        ingest_ok(client, *chatter("m", 8))
        report = llm_pass(server)
        assert report.promoted == 0
        assert report.rejected == {"detect_other_ids": 1, "detect_unknown_type": 1}
        assert promotions(db_path) == []
        assert own_block(db_path, "m1")[0] == "raw_excerpt"
        [floor] = [c for c in client.get("/v1/stats").json()["channels"]]
        assert floor["llm"]["rejected_today"] == 1 and floor["llm"]["promotions"] == 0
        # not JSON at all: rejected, remembered, not bought again
        provider.responder = lambda r: Reply("m1 is a fill") if is_detect(r) else summarise(r)
        ingest_ok(client, edit("m0", "Tape feels heavier now", 10))
        assert llm_pass(server).rejected == {"detect_not_json": 1}
        assert llm_pass(server).calls == 0
        assert len(detect_requests(provider)) == 2


# --- caps and breaker --------------------------------------------------------------------------


def test_detection_spends_the_same_caps_as_rollups(
    desk: Callable[..., LiveServer], provider: FakeProvider, db_path: Path
) -> None:
    server = desk(calls_per_channel_day=1)
    with server.client(ADMIN) as client:
        ingest_ok(client, *chatter("z", 6), *chatter("m", 8))
        report = llm_pass(server)
        assert (report.calls, report.capped, report.promoted) == (1, "calls_per_channel_day", 1)
        assert len(provider.requests) == 1  # the newest window's detection, nothing more
        assert query(db_path, "SELECT calls FROM llm_usage WHERE channel_id = 'floor'") == [(1,)]
        assert llm_pass(server).calls == 0


def test_failed_detection_counts_opens_the_breaker_and_promotes_nothing(
    desk: Callable[..., LiveServer],
    provider: FakeProvider,
    clock: FakeClock,
    db_path: Path,
) -> None:
    provider.responder = lambda _: Reply(status=503)
    server = desk(breaker_failures=2, retries=1)

    async def sleep(seconds: float) -> None:  # injected: the test never sleeps
        pass

    server.app.state.worker.llm.sleep = sleep
    with server.client(ADMIN) as client:
        ingest_ok(client, *chatter("m", 8))
        report = llm_pass(server)
        assert (report.calls, report.failures, report.breaker_open) == (2, 2, True)
        assert promotions(db_path) == [] and own_block(db_path, DECIDED)[0] == "raw_excerpt"
        assert llm_pass(server).calls == 0  # open: no calls at all
        provider.responder = finds(DECIDED)
        clock.advance(601)
        assert llm_pass(server).promoted == 1
        assert own_block(db_path, DECIDED)[0] == "hard_event"


# --- changes ---------------------------------------------------------------------------------


def test_an_edit_removes_the_promotion_and_undoing_it_restores_it_without_a_call(
    desk: Callable[..., LiveServer], provider: FakeProvider, db_path: Path
) -> None:
    server = desk()
    with server.client(ADMIN) as client:
        ingest_ok(client, *chatter("m", 8))
        llm_pass(server)
        assert own_block(db_path, DECIDED)[0] == "hard_event"
        provider.responder = finds("nobody")
        ingest_ok(client, edit(DECIDED, "coffee machine on 3 is fixed, finally", 5))
        server.drain()
        kind, _, text, processor, _, _ = own_block(db_path, DECIDED)
        assert (kind, text, processor) == (
            "raw_excerpt", "coffee machine on 3 is fixed, finally", "deterministic"
        )  # fmt: skip
        report = llm_pass(server)  # the window changed: asked again, nothing promoted
        assert (report.promoted, len(detect_requests(provider))) == (0, 2)
        ingest_ok(client, edit(DECIDED, CHATTER[2], 6))  # the edit undone
        server.drain()
        assert own_block(db_path, DECIDED)[:4] == (
            "hard_event", "thesis_change", CHATTER[2], f"llm-detect:{MODEL}"
        )  # fmt: skip
        assert llm_pass(server).calls == 1  # only the rollup: detection is cached
        assert len(detect_requests(provider)) == 2


def test_forget_deletes_promotions_and_cached_answers_and_erases_the_message(
    desk: Callable[..., LiveServer], db_path: Path
) -> None:
    canary = "Zebracanary7731 tape heavy"
    server = desk()
    with server.client(ADMIN) as client:
        events = chatter("m", 8)
        events[2]["message"]["content"] = canary
        ingest_ok(client, *events)
        assert llm_pass(server).promoted == 1
        assert len(promotions(db_path)) == 1
        assert own_block(db_path, DECIDED)[2] == canary
        response = client.post(
            "/v1/ingest",
            json={"events": [{"type": "forget", "channel_id": "floor", "message_ids": [DECIDED]}]},
        )
        assert response.status_code == 200
        assert promotions(db_path) == []
        assert query(db_path, "SELECT count(*) FROM llm_cache") == [(0,)]
        assert query(db_path, "SELECT count(*) FROM recall_blocks WHERE group_key = 'm:m2'") == [
            (0,)
        ]
        for word in canary.split()[:1]:
            assert not found_anywhere(db_path, word)


def test_retention_deletes_promotions(
    desk: Callable[..., LiveServer], clock: FakeClock, db_path: Path
) -> None:
    server = desk()
    with server.client(ADMIN) as client:
        ingest_ok(client, *chatter("m", 8))
        assert llm_pass(server).promoted == 1
        clock.advance(server.settings.retention.days * 86_400 + 1)
        assert server.run(server.app.state.worker.apply_retention()) == 5
        assert promotions(db_path) == []


# --- with detection off ------------------------------------------------------------------------


def blocks(db: Path) -> list[tuple[Any, ...]]:
    return query(
        db,
        "SELECT id, kind, event_type, text, processor, sparse, score, sources, group_key, "
        "generated_us, dirty, cut_text FROM recall_blocks ORDER BY id",
    )


@pytest.mark.parametrize(
    "llm_settings",
    [{"enabled": False}, {"enabled": True, "model": MODEL, "api_key": "sk-local"}],
    ids=["llm-off", "llm-on-detect-off"],
)
def test_without_detection_promotions_are_never_read_and_blocks_are_unchanged(
    make_server: Callable[..., LiveServer],
    tmp_path: Path,
    llm_settings: dict[str, Any],
) -> None:
    """A store holding a promotion derives exactly the blocks of one whose promotions
    table does not even exist: derivation never reads it."""
    events = [
        *chatter("m", 8),
        message_event("fill", "FILLED 200 NVDA @ 131.20", created_at=at(55, 8)),
        message_event("r", "Dealers say real money sold more", created_at=at(5, 9)),
    ]
    results = []
    for name, prepare in (
        ("promoted.db", "INSERT INTO llm_promotions VALUES ('floor', 'm2', '{hash}', "
                        "'trade_fill', 'llm-detect:x', 0)"),
        ("no-table.db", "DROP TABLE llm_promotions"),
    ):  # fmt: skip
        db = tmp_path / name
        server = make_server(db=db, worker={"enabled": False}, llm=llm_settings)
        with server.client() as client:
            ingest_ok(client, *events[:3])
            server.drain()
            [(content_hash,)] = query(
                db, "SELECT content_hash FROM source_messages WHERE message_id = 'm2'"
            )
            conn = sqlite3.connect(db)
            conn.execute(prepare.format(hash=content_hash))
            conn.commit()
            conn.close()
            ingest_ok(client, *events[3:], edit("m0", "Tape feels heavier now", 7))
            ingest_ok(client, edit("m2", "Semis offered now", 8))
            server.drain()
            ingest_ok(client, edit("m2", CHATTER[2], 9))  # back to the promoted version
            delete = {"type": "delete", "channel_id": "floor", "message_id": "m4",
                      "deleted_at": at(10, 9)}  # fmt: skip
            ingest_ok(client, delete)
            server.drain()
            client.get("/channel-awareness", params={"channels": "floor"}).raise_for_status()
            client.get("/v1/stats").raise_for_status()
        server.__exit__()
        results.append(blocks(db))
    promoted, no_table = results
    assert promoted == no_table
    assert all(row[4] == "deterministic" for row in promoted)
    assert [row[1] for row in promoted if row[8] == "m:m2"] == ["raw_excerpt"]
