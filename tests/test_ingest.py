"""POST /v1/ingest over a real HTTP server: versions, idempotency, deletes, gaps, atomicity."""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from channel_memory.ingest.commands import compute_content_hash
from channel_memory.kernel.models import MessageKey
from tests.conftest import LiveServer, message_event, query


def post(client: httpx.Client, *events: dict[str, Any]) -> httpx.Response:
    return client.post("/v1/ingest", json={"events": list(events)})


def current(client: httpx.Client, *ids: str, history: bool = False) -> dict[str, Any]:
    response = client.post(
        "/source-messages",
        json={"channel_id": "floor", "message_ids": list(ids), "include_history": history},
    )
    assert response.status_code == 200
    result: dict[str, Any] = response.json()
    return result


def test_message_is_stored_with_computed_hash(client: httpx.Client) -> None:
    response = post(client, message_event("1301", "FILLED 200 NVDA @ 131.20"))
    assert response.status_code == 200
    body = response.json()
    expected_hash = compute_content_hash(
        MessageKey("discord", "floor", "1301"), "FILLED 200 NVDA @ 131.20", False
    )
    assert body["inserted"] == 1 and body["duplicates"] == 0
    assert body["results"] == [
        {
            "index": 0,
            "type": "message",
            "source_handle": "floor/1301",
            "content_hash": expected_hash,
            "observed_seq": 1,
            "inserted": True,
            "current": True,
        }
    ]
    [stored] = current(client, "1301")["messages"]
    assert stored["content"] == "FILLED 200 NVDA @ 131.20"
    assert stored["source_handle"] == "floor/1301"
    assert stored["created_at"] == "2026-05-21T16:00:00Z"


def test_resend_is_idempotent(client: httpx.Client, server: LiveServer) -> None:
    event = message_event("1", "stop moved to 408")
    first = post(client, event).json()["results"][0]
    again = post(client, event).json()
    assert again["inserted"] == 0 and again["duplicates"] == 1
    assert again["results"][0]["inserted"] is False
    assert again["results"][0]["observed_seq"] == first["observed_seq"] == 1
    assert query(server.settings.db, "SELECT count(*) FROM source_messages") == [(1,)]


def test_edit_creates_version_two_and_current_read_returns_it(client: httpx.Client) -> None:
    post(client, message_event("1", "stop moved to 408"))
    edit = message_event("1", "stop moved to 410", edited_at="2026-05-21T16:05:00Z")
    result = post(client, edit).json()["results"][0]
    assert result["observed_seq"] == 2 and result["inserted"] and result["current"]
    [now] = current(client, "1")["messages"]
    assert now["content"] == "stop moved to 410" and now["observed_seq"] == 2
    history = current(client, "1", history=True)["messages"]
    assert [(m["observed_seq"], m["is_current"], m["superseded_by"]) for m in history] == [
        (1, False, 2),
        (2, True, None),
    ]


def test_edit_back_makes_the_old_version_current_without_a_new_row(
    client: httpx.Client, server: LiveServer
) -> None:
    post(client, message_event("1", "A"))
    post(client, message_event("1", "B", edited_at="2026-05-21T16:05:00Z"))
    back = post(client, message_event("1", "A", edited_at="2026-05-21T16:09:00Z")).json()
    assert back["results"][0] == back["results"][0] | {
        "observed_seq": 1,
        "inserted": False,
        "current": True,
    }
    [now] = current(client, "1")["messages"]
    assert now["content"] == "A"
    history = current(client, "1", history=True)["messages"]
    assert [(m["observed_seq"], m["superseded_by"]) for m in history] == [(1, None), (2, 1)]
    # the same edit-back with an older time changes nothing
    stale = post(client, message_event("1", "B", edited_at="2026-05-21T16:05:00Z")).json()
    assert stale["results"][0]["current"] is False
    assert query(server.settings.db, "SELECT count(*) FROM source_messages") == [(2,)]


def test_older_edit_arriving_late_does_not_become_current(client: httpx.Client) -> None:
    post(client, message_event("1", "newest", edited_at="2026-05-21T16:10:00Z"))
    late = post(client, message_event("1", "older", edited_at="2026-05-21T16:05:00Z")).json()
    assert late["results"][0]["inserted"] is True and late["results"][0]["current"] is False
    assert current(client, "1")["messages"][0]["content"] == "newest"


def test_delete_hides_the_message_from_current_reads(client: httpx.Client) -> None:
    post(client, message_event("1", "route: NVDA to desk B"))
    response = post(
        client,
        {
            "type": "delete",
            "channel_id": "floor",
            "message_id": "1",
            "deleted_at": "2026-05-21T16:30:00Z",
        },
    )
    assert response.status_code == 200
    assert response.json()["results"][0]["current"] is True
    body = current(client, "1")
    assert body["messages"] == []
    assert body["not_found"] == [
        {"source_kind": "discord", "channel_id": "floor", "message_id": "1"}
    ]
    # a deletion hides the content of every version: history holds the tombstone alone
    history = current(client, "1", history=True)["messages"]
    assert [m["deleted"] for m in history] == [True]
    assert history[0]["content"] == "" and history[0]["author_name"] == "desk-lead"


def test_create_older_than_an_applied_delete_does_not_bring_it_back(
    client: httpx.Client,
) -> None:
    post(
        client,
        {
            "type": "delete",
            "channel_id": "floor",
            "message_id": "9",
            "deleted_at": "2026-05-21T17:00:00Z",
        },
    )
    late = post(client, message_event("9", "opened 100 AAPL", created_at="2026-05-21T16:00:00Z"))
    result = late.json()["results"][0]
    assert (result["observed_seq"], result["inserted"], result["current"]) == (2, True, False)
    assert current(client, "9")["messages"] == []
    # the late create is stored, not current, and hidden from readers with the deletion
    history = current(client, "9", history=True)["messages"]
    assert [(m["observed_seq"], m["deleted"], m["is_current"]) for m in history] == [
        (1, True, True),
    ]
    tombstone = history[0]
    # the tombstone is completed with the message's author and time once it arrives
    assert tombstone["deleted"] and tombstone["author_name"] == "desk-lead"
    assert tombstone["created_at"] == "2026-05-21T16:00:00Z"


def test_delete_defaults_to_receive_time(client: httpx.Client, server: LiveServer) -> None:
    post(client, message_event("1", "hello", created_at="2026-05-21T19:00:00Z"))
    post(client, {"type": "delete", "channel_id": "floor", "message_id": "1"})
    assert current(client, "1")["messages"] == []
    server.clock.advance(60)
    newer_edit = message_event("1", "hello again", edited_at="2026-05-21T19:30:00Z")
    post(client, newer_edit)
    # the clock says 20:00, so the 19:30 edit is older than the delete
    assert current(client, "1")["messages"] == []


@pytest.mark.sqlite_only  # reads the FTS5 table
def test_search_index_follows_the_current_version(client: httpx.Client, server: LiveServer) -> None:
    post(client, message_event("1", "alpha bravo"))
    post(client, message_event("1", "charlie delta", edited_at="2026-05-21T16:05:00Z"))

    def matches(term: str) -> list[tuple[Any, ...]]:
        return query(
            server.settings.db, "SELECT rowid FROM source_fts WHERE source_fts MATCH ?", term
        )

    assert matches("alpha") == [] and len(matches("charlie")) == 1
    post(client, {"type": "delete", "channel_id": "floor", "message_id": "1"})
    assert matches("charlie") == []


def test_ingest_marks_changed_messages_dirty(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(worker={"enabled": False})  # markers stay until a worker runs
    with server.client() as client:
        _check_dirty_markers(client, server)


def _check_dirty_markers(client: httpx.Client, server: LiveServer) -> None:
    post(client, message_event("1", "x"), message_event("2", "y"))
    rows = query(server.settings.db, "SELECT message_id, seq FROM dirty_messages ORDER BY 1")
    assert [r[0] for r in rows] == ["1", "2"]
    post(client, message_event("1", "x"))  # a duplicate changes nothing
    assert (
        query(server.settings.db, "SELECT message_id, seq FROM dirty_messages ORDER BY 1") == rows
    )
    post(client, message_event("1", "x2", edited_at="2026-05-21T16:01:00Z"))
    remarked = dict(query(server.settings.db, "SELECT message_id, seq FROM dirty_messages"))
    assert remarked["1"] > dict(rows)["2"]


def test_coverage_gap_and_its_resolution(client: httpx.Client, server: LiveServer) -> None:
    gap = {
        "type": "coverage_gap",
        "channel_id": "floor",
        "from": "2026-05-21T10:00:00Z",
        "to": "2026-05-21T10:30:00Z",
        "reason": "bridge restart",
    }
    gap_id = post(client, gap).json()["results"][0]["gap_id"]
    assert gap_id == 1
    # a new user's trial: a batch sent again recorded its gap twice (the feed said it twice)
    assert post(client, gap).json()["results"][0]["gap_id"] == 1
    resolved = post(client, {"type": "coverage_gap_resolved", "channel_id": "floor", "gap_id": 1})
    assert resolved.status_code == 200
    assert query(server.settings.db, "SELECT resolved_us IS NOT NULL FROM coverage_gaps") == [(1,)]
    # the same gap after its resolution is the resolved one, not a new open one
    assert post(client, gap).json()["results"][0]["gap_id"] == 1
    assert query(server.settings.db, "SELECT resolved_us IS NOT NULL FROM coverage_gaps") == [(1,)]
    # another reason, or no reason, is another gap
    other = post(client, {**gap, "reason": "rate limited"}).json()["results"][0]["gap_id"]
    bare = {k: v for k, v in gap.items() if k != "reason"}
    unexplained = post(client, bare).json()["results"][0]["gap_id"]
    assert (other, unexplained, post(client, bare).json()["results"][0]["gap_id"]) == (2, 3, 3)
    unknown = post(client, {"type": "coverage_gap_resolved", "channel_id": "floor", "gap_id": 99})
    assert unknown.status_code == 422
    assert unknown.json()["error"]["details"][0] == unknown.json()["error"]["details"][0] | {
        "index": 0,
        "field": "gap_id",
        "code": "unknown_gap",
    }


def test_channel_keeps_its_source_kind(client: httpx.Client) -> None:
    post(client, message_event("1", "x") | {"source_kind": "slack"})
    clash = post(client, message_event("2", "y") | {"source_kind": "discord"})
    assert clash.status_code == 422
    assert clash.json()["error"]["code"] == "channel_kind_conflict"
    # it says which kind the channel has and what to do (a new user's trial)
    said = clash.json()["error"]["details"][0]["message"]
    assert "source kind slack" in said and "leave source_kind out" in said
    # events that omit source_kind take the channel's
    deleted = post(client, {"type": "delete", "channel_id": "floor", "message_id": "1"})
    assert deleted.json()["results"][0]["source_handle"] == "floor/1"
    assert current(client, "1")["messages"] == []


# --- bad input: a clear 4xx, nothing written, no content echoed --------------------------

CANARY = "CANARYc0ntent"


def _stored_rows(server: LiveServer) -> int:
    return int(query(server.settings.db, "SELECT count(*) FROM source_messages")[0][0])


@pytest.mark.parametrize(
    ("events", "status", "code", "index", "field"),
    [
        ([message_event("1", CANARY), {"type": "nope"}], 422, "validation_failed", 1, "type"),
        (
            [message_event("1", CANARY), message_event("bad/id", CANARY)],
            422,
            "validation_failed",
            1,
            "message.id",
        ),
        (
            [message_event("1", CANARY), message_event("2", CANARY, created_at="yesterday")],
            422,
            "validation_failed",
            1,
            "message.created_at",
        ),
        (
            [message_event("1", CANARY), message_event("2", "")],
            422,
            "validation_failed",
            1,
            "message.content",
        ),
        (
            [message_event("1", CANARY) | {"surprise": CANARY}],
            422,
            "validation_failed",
            0,
            "surprise",
        ),
        (
            [message_event("1", CANARY, reply_to=7)],
            422,
            "validation_failed",
            0,
            "message.reply_to",
        ),
        (
            [message_event("1", CANARY), {"type": "forget", "channel_id": "floor"}],
            422,
            "validation_failed",
            1,
            None,
        ),
        (
            [
                message_event("1", CANARY),
                {
                    "type": "coverage_gap",
                    "channel_id": "floor",
                    "from": "2026-05-21T11:00:00Z",
                    "to": "2026-05-21T10:00:00Z",
                },
            ],
            422,
            "validation_failed",
            1,
            None,
        ),
        (
            [message_event("1", CANARY), message_event("2", "x", content_hash="h" * 129)],
            422,
            "validation_failed",
            1,
            "message.content_hash",
        ),
    ],
)
def test_one_bad_event_rejects_the_whole_batch(
    client: httpx.Client,
    server: LiveServer,
    events: list[dict[str, Any]],
    status: int,
    code: str,
    index: int,
    field: str | None,
) -> None:
    response = post(client, *events)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code
    assert (error["details"][0]["index"], error["details"][0]["field"]) == (index, field)
    assert CANARY not in response.text
    assert _stored_rows(server) == 0


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b'{"events": [', "invalid_json"),
        (b"\xff\xfe not utf-8", "invalid_json"),
        (b"[" * 100_000 + b"]" * 100_000, "invalid_json"),
        (
            b'{"events":[{"type":"message","channel_id":"floor","message":{"id":"1",'
            b'"author_name":"a","created_at":"2026-05-21T16:00:00Z","content":"\\ud800"}}]}',
            "invalid_json",
        ),
        (b'{"events": "CANARYc0ntent"}', "validation_failed"),
        (b'{"events": [{"type": "message", "channel_id": 1e999999}]}', "validation_failed"),
    ],
)
def test_malformed_bodies_get_4xx_and_write_nothing(
    client: httpx.Client, server: LiveServer, body: bytes, code: str
) -> None:
    response = client.post("/v1/ingest", content=body)
    assert 400 <= response.status_code < 500
    assert response.json()["error"]["code"] == code
    assert CANARY not in response.text
    assert _stored_rows(server) == 0


@pytest.mark.parametrize("declared", [True, False])
def test_a_body_far_over_the_limit_sent_whole_gets_the_413_not_a_reset(
    make_server: Callable[..., LiveServer], declared: bool
) -> None:
    """A new user's trial: a bridge on ``urllib`` (which sends its whole body before it
    reads) posting 16 MiB saw the connection reset, not the 413 and its code; the rest of
    the body is read and dropped first, with a length declared or streamed in chunks."""
    server = make_server(ingest={"max_body_bytes": 4096})
    body = b'{"events": [' + b" " * (16 * 1024 * 1024) + b"]}"
    data: Any = body if declared else (body[i : i + 65536] for i in range(0, len(body), 65536))
    request = urllib.request.Request(
        server.url + "/v1/ingest",
        data=data,
        method="POST",
        headers={"content-type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 413
    error = json.loads(refused.value.read())["error"]
    assert error["code"] == "body_too_large" and "(4,096 bytes)" in error["message"]
    with server.client() as client:  # and the server answers the next request
        assert client.get("/health").status_code == 200


def test_body_over_the_limit_is_413_before_parsing(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server(ingest={"max_body_bytes": 4096})
    with server.client() as client:
        response = post(client, message_event("1", "x" * 5000))
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "body_too_large"

        def chunks() -> Any:
            yield b'{"events": [' + b" " * 3000
            yield b" " * 3000 + b"]}"

        streamed = client.post("/v1/ingest", content=chunks())
        assert streamed.status_code == 413
    assert _stored_rows(server) == 0


def test_limits_on_events_and_content(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(ingest={"max_events": 2, "max_content_chars": 10})
    with server.client() as client:
        many = post(client, *(message_event(str(i), "x") for i in range(3)))
        assert many.status_code == 422 and many.json()["error"]["code"] == "too_many_events"
        long = post(client, message_event("1", "x"), message_event("2", CANARY * 2))
        assert long.status_code == 422
        assert long.json()["error"]["details"][0]["index"] == 1
        assert CANARY not in long.text
    assert _stored_rows(server) == 0


def test_saturated_writer_answers_503_with_retry_after(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server(ingest={"writer_wait": 0.0})
    with server.client() as client:
        assert client.get("/health").status_code == 200
        store = server.app.state.ctx.store
        # Hold the writer on the server's own loop, as a long batch would.
        holding = store.write()
        server.run(holding.__aenter__())
        try:
            response = post(client, message_event("1", "x"))
        finally:
            server.run(holding.__aexit__(None, None, None))
        assert response.status_code == 503
        assert response.headers["retry-after"] == "1"
        assert response.json()["error"]["code"] == "writer_busy"
        assert post(client, message_event("1", "x")).status_code == 200


class HeldUntil(logging.Handler):
    """Holds the thread emitting a record that contains ``text`` until ``released`` is
    set, at most ``timeout`` seconds: the worst case of the line being written after
    the response was received."""

    def __init__(self, text: str, timeout: float = 2.0) -> None:
        super().__init__()
        self.text = text
        self.released = threading.Event()
        self.timeout = timeout

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.released.wait(self.timeout)


def wait_for_log(caplog: pytest.LogCaptureFixture, text: str, timeout: float = 10.0) -> None:
    """Wait (bounded) for a log line another thread writes: the server logs an unhandled
    error after its 500 has gone out, so the client can hold the answer before the line."""
    deadline = time.monotonic() + timeout
    while text not in caplog.text:
        assert time.monotonic() < deadline, f"no log line {text!r} within {timeout} s"
        time.sleep(0.01)


def test_internal_errors_answer_500_without_content_in_body_or_logs(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from channel_memory.store import sources

    async def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"disk says no while writing {CANARY}")

    monkeypatch.setattr(sources, "write_versions", broken)
    line = "unhandled RuntimeError on /v1/ingest"
    held = HeldUntil(line)
    app_log = logging.getLogger("channel_memory.app")
    app_log.addHandler(held)  # runs before the record reaches caplog's handler on the root
    try:
        with caplog.at_level("DEBUG"):
            response = post(client, message_event("1", CANARY))
            held.released.set()
            wait_for_log(caplog, line)
    finally:
        held.released.set()
        app_log.removeHandler(held)
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"
    assert CANARY not in response.text
    assert CANARY not in caplog.text
    monkeypatch.undo()
    assert post(client, message_event("2", "after")).status_code == 200
