"""Ingest integrity: the server decides version identity, empty content is only a deletion,
events past retention are answered ``expired``, times too far ahead are refused, and the
bulk import names the line and the offending field."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from channel_memory.ingest.commands import Command, PutMessage, compute_content_hash
from channel_memory.ingest.service import ingest
from channel_memory.ingest.versions import MessageResult, apply_commands, choose_label
from channel_memory.kernel.config import Settings, load_settings
from channel_memory.kernel.models import MessageKey, MessageState
from channel_memory.kernel.timefmt import format_rfc3339
from channel_memory.store import Store, sources
from channel_memory.worker.runner import derive_hook, derive_settings
from tests.conftest import LiveServer, ingest_ok, message_event, query

CANARY = "Okapisecret5521"
KEY = MessageKey("discord", "floor", "p5")


def peer(message_id: str, content: str | None, **message: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": message_id,
        "author_id": "u42",
        "author_name": "desk-lead",
        "created_at": "2026-05-21T16:00:00Z",
        **message,
    }
    if content is not None:
        body["content"] = content
    return {"channel_id": "floor", "message": body, "source": {"kind": "discord"}}


def history(client: httpx.Client, message_id: str) -> list[tuple[str, str, bool]]:
    """``(content, content_hash, is_current)`` of every stored version, in ``observed_seq``."""
    body = client.post(
        "/source-messages",
        json={"channel_id": "floor", "message_ids": [message_id], "include_history": True},
    ).json()
    return [(m["content"], m["content_hash"], m["is_current"]) for m in body["messages"]]


def rows(server: LiveServer, table: str = "source_messages") -> int:
    return int(query(server.settings.db, f"SELECT count(*) FROM {table}")[0][0])


# --- 1. version identity: the server's digest, never the client's hash -------------------------


def test_peer_edit_with_a_stale_client_hash_is_a_new_version(client: httpx.Client) -> None:
    first = client.post("/ingest", json=peer("p5", "stop at 610", content_hash="sha256:deadbeef"))
    assert first.status_code == 202 and first.json()["inserted"] is True
    assert first.json()["content_hash"] == "sha256:deadbeef"  # a consistent label is echoed
    edit = client.post(
        "/ingest",
        json=peer(
            "p5",
            "stop moved to 604",
            content_hash="sha256:deadbeef",
            edited_at="2026-05-21T16:05:00Z",
        ),
    )
    assert edit.status_code == 202
    answer = edit.json()
    assert answer["inserted"] is True and answer["current"] is True and answer["observed_seq"] == 2
    # the label is taken by the other content: the server's own digest names this one
    assert answer["content_hash"] == compute_content_hash(KEY, "stop moved to 604", False)
    assert history(client, "p5") == [
        ("stop at 610", "sha256:deadbeef", False),
        ("stop moved to 604", answer["content_hash"], True),
    ]


def test_native_edit_with_the_same_client_hash_is_a_new_version(client: httpx.Client) -> None:
    ingest_ok(client, message_event("p5", "stop at 610", content_hash="h-1"))
    edited = ingest_ok(
        client,
        message_event(
            "p5", "stop moved to 604", content_hash="h-1", edited_at="2026-05-21T16:05:00Z"
        ),
    )
    assert edited["inserted"] == 1 and edited["duplicates"] == 0
    assert edited["results"][0]["current"] is True
    assert [content for content, _, _ in history(client, "p5")] == [
        "stop at 610",
        "stop moved to 604",
    ]


def test_consistent_client_labels_are_echoed_and_same_content_is_a_duplicate(
    client: httpx.Client,
) -> None:
    client.post("/ingest", json=peer("7", "first", content_hash="sha256:first"))
    second = client.post(
        "/ingest",
        json=peer("7", "second", content_hash="sha256:second", edited_at="2026-05-21T16:01:00Z"),
    )
    assert second.json()["content_hash"] == "sha256:second"
    assert second.json()["inserted"] is True
    # the same content is the same version whatever hash comes with it
    for sent in ("sha256:second", "sha256:other", None):
        extra = {} if sent is None else {"content_hash": sent}
        again = client.post(
            "/ingest", json=peer("7", "second", edited_at="2026-05-21T16:01:00Z", **extra)
        )
        assert again.json()["inserted"] is False
        assert again.json()["content_hash"] == "sha256:second"
    assert history(client, "7") == [
        ("first", "sha256:first", False),
        ("second", "sha256:second", True),
    ]


def test_a_client_label_holding_another_contents_digest_never_merges_them(
    client: httpx.Client,
) -> None:
    b_digest = compute_content_hash(MessageKey("discord", "floor", "9"), "B", False)
    ingest_ok(client, message_event("9", "A", content_hash=b_digest))
    later = ingest_ok(client, message_event("9", "B", edited_at="2026-05-21T16:02:00Z"))
    assert later["inserted"] == 1
    assert later["results"][0]["content_hash"] == b_digest + "~2"
    assert [(c, h) for c, h, _ in history(client, "9")] == [("A", b_digest), ("B", b_digest + "~2")]


def test_choose_label() -> None:
    assert choose_label(None, "sha256:d", set()) == "sha256:d"
    assert choose_label("mine", "sha256:d", {"other"}) == "mine"
    assert choose_label("mine", "sha256:d", {"mine"}) == "sha256:d"
    assert choose_label("mine", "sha256:d", {"mine", "sha256:d", "sha256:d~2"}) == "sha256:d~3"


# --- the property: every distinct content is its own version, whatever hashes are sent -------

BASE_US = 1_779_379_200_000_000  # 2026-05-21T16:00:00Z
CONTENTS = ["A", "B", "C", "D", ""]
Event = tuple[str, bool, str | None]
"""``(content, deleted, client hash)``; an empty content is a deletion marker."""


def _put(position: int, event: Event) -> PutMessage:
    content, deleted, label = event
    return PutMessage(
        key=KEY,
        content=content,
        content_hash=label,
        deleted=deleted,
        author_id="u42",
        author_name="desk-lead",
        author_kind="human",
        origin="human",
        created_us=BASE_US,
        edited_us=BASE_US + position * 1_000_000,
    )


@st.composite
def message_events(draw: st.DrawFn) -> list[Event]:
    """A message's events with changing content and hashes chosen by a hostile client:
    none, one hash for everything, a few reused across contents, or other contents'
    server digests."""
    contents = draw(st.lists(st.sampled_from(CONTENTS), min_size=1, max_size=8))
    digests = [compute_content_hash(KEY, c, c == "") for c in CONTENTS]
    hashes = st.one_of(
        st.none(), st.sampled_from(["h", "h2", "sha256:same"]), st.sampled_from(digests)
    )
    same_for_all = draw(st.booleans())
    fixed = draw(hashes)
    return [(c, c == "", fixed if same_for_all else draw(hashes)) for c in contents]


def _check_versions(state: MessageState, events: list[Event]) -> None:
    live = [v for v in state.versions if v.forgotten_us is None]
    assert sorted((v.content, v.deleted) for v in live) == sorted({(c, d) for c, d, _ in events})
    assert len({v.content_hash for v in live}) == len(live)  # labels name one version each
    assert sum(v.is_current for v in live) == 1


@settings(max_examples=300)
@given(message_events(), st.data())
def test_every_distinct_content_is_its_own_version(events: list[Event], data: Any) -> None:
    cuts = data.draw(st.lists(st.integers(1, 3), min_size=len(events), max_size=len(events)))
    stored: dict[MessageKey, MessageState] = {}
    position, next_id = 0, 1
    for size in cuts:
        chunk = events[position : position + size]
        if not chunk:
            break
        outcome = apply_commands(
            stored, [_put(position + i, e) for i, e in enumerate(chunk)], BASE_US, next_id
        )
        for (content, deleted, _), result in zip(chunk, outcome.results, strict=True):
            assert isinstance(result, MessageResult)
            reported = [
                v for v in outcome.states[KEY].versions if v.content_hash == result.content_hash
            ]
            # the answer names the version holding exactly what was sent
            assert [(v.content, v.deleted) for v in reported] == [(content, deleted)]
        stored = outcome.states
        next_id += len(outcome.changes.inserted)
        position += len(chunk)
    _check_versions(stored[KEY], events)


DERIVE = derive_hook(derive_settings(Settings()))


def _one(command: Command) -> Callable[[dict[str, str]], list[Command]]:
    """A batch builder of one command."""
    return lambda kinds: [command]


async def _through_the_store(path: Path, events: list[Event]) -> MessageState:
    store = await Store.open(path)
    try:
        for position, event in enumerate(events):
            await ingest(
                store, ["floor"], _one(_put(position, event)), now_us=BASE_US, derive=DERIVE
            )
        async with store.read() as conn:
            return (await sources.message_states(conn, [KEY]))[KEY]
    finally:
        await store.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message_events())
def test_every_distinct_content_is_stored_as_its_own_row(events: list[Event]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        state = asyncio.run(_through_the_store(Path(folder) / "p.db", events))
    _check_versions(state, events)


# --- 2. empty content is only a deletion ------------------------------------------------------


def test_peer_message_without_content_is_refused(client: httpx.Client, server: LiveServer) -> None:
    for body in (peer("1", None), peer("1", "")):
        response = client.post("/ingest", json=body)
        assert response.status_code == 422
        error = response.json()["error"]
        assert error["code"] == "validation_failed"
        assert error["details"][0]["field"] == "message.content"
    assert rows(server) == 0
    deleted = client.post("/ingest", json=peer("1", None, deleted=True))
    assert deleted.status_code == 202 and deleted.json()["inserted"] is True


def test_native_empty_content_names_the_field(client: httpx.Client, server: LiveServer) -> None:
    response = client.post(
        "/v1/ingest", json={"events": [message_event("1", CANARY), message_event("2", "")]}
    )
    assert response.status_code == 422
    detail = response.json()["error"]["details"][0]
    assert (detail["index"], detail["field"]) == (1, "message.content")
    assert CANARY not in response.text and rows(server) == 0
    ingest_ok(client, message_event("2", "", deleted=True))


# --- 3. time bounds: expired past retention, refused too far ahead ------------------------------
# The server clock is 2026-05-21T20:00:00Z; retention.days defaults to 30.


def test_a_message_past_retention_is_expired_and_not_stored(
    client: httpx.Client, server: LiveServer
) -> None:
    answer = ingest_ok(
        client,
        message_event("old", CANARY, channel="archive", created_at="2026-04-21T19:59:59Z"),
        message_event("edge", "kept", created_at="2026-04-21T20:00:00Z"),
        message_event(
            "edit",
            "edited lately",
            created_at="2026-04-01T10:00:00Z",
            edited_at="2026-05-21T19:00:00Z",
        ),
        {
            "type": "delete",
            "channel_id": "floor",
            "message_id": "x",
            "deleted_at": "2026-04-01T10:00:00Z",
        },
    )
    results = answer["results"]
    assert [r.get("expired") for r in results] == [True, None, True, True]
    assert [r["inserted"] for r in results] == [False, True, False, False]
    assert "observed_seq" not in results[0] and "content_hash" not in results[0]
    assert (answer["inserted"], answer["duplicates"], answer["ignored_expired"]) == (1, 0, 3)
    assert answer["ignored_forgotten"] == 0
    assert query(server.settings.db, "SELECT message_id FROM source_messages") == [("edge",)]
    # nothing stored at all: not even the channel it named
    assert query(server.settings.db, "SELECT channel_id FROM channels") == [("floor",)]
    # no dirty marker for what expired (the worker may already have taken the edge's)
    assert query(
        server.settings.db, "SELECT count(*) FROM dirty_messages WHERE message_id != 'edge'"
    ) == [(0,)]


def test_peer_ingest_answers_expired(client: httpx.Client, server: LiveServer) -> None:
    response = client.post("/ingest", json=peer("old", CANARY, created_at="2026-03-01T00:00:00Z"))
    assert response.status_code == 202
    body = response.json()
    assert body["inserted"] is False and body["expired"] is True
    assert "expired" not in client.post("/ingest", json=peer("new", "fresh")).json()
    assert rows(server) == 1


def test_retention_days_sets_what_is_expired(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(retention={"days": 365})
    with server.client() as http:
        answer = ingest_ok(http, message_event("old", "kept", created_at="2026-03-01T00:00:00Z"))
    assert answer["inserted"] == 1 and answer["ignored_expired"] == 0


AHEAD = "2026-05-21T20:05:01Z"  # one second past the default skew of 5 minutes
WITHIN = "2026-05-21T20:05:00Z"


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (message_event("2", CANARY, created_at=AHEAD), "message.created_at"),
        (message_event("2", CANARY, edited_at=AHEAD), "message.edited_at"),
        (
            {"type": "delete", "channel_id": "floor", "message_id": "2", "deleted_at": AHEAD},
            "deleted_at",
        ),
        (
            {
                "type": "coverage_gap",
                "channel_id": "floor",
                "from": "2026-05-21T19:00:00Z",
                "to": AHEAD,
            },
            "to",
        ),
        (
            {
                "type": "coverage_gap",
                "channel_id": "floor",
                "from": AHEAD,
                "to": "2026-05-21T21:00:00Z",
            },
            "from",
        ),
    ],
)
def test_a_time_too_far_ahead_rejects_the_batch(
    client: httpx.Client, server: LiveServer, event: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/ingest", json={"events": [message_event("1", "fine"), event]})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_failed"
    assert (error["details"][0]["index"], error["details"][0]["field"]) == (1, field)
    assert CANARY not in response.text
    assert rows(server) == 0 and rows(server, "coverage_gaps") == 0
    if field != "from":  # (a gap starting ahead ends ahead too)
        # up to the skew is fine
        within = json.loads(json.dumps(event).replace(AHEAD, WITHIN))
        ingest_ok(client, message_event("1", "fine"), within)


def test_peer_endpoints_refuse_times_too_far_ahead(
    client: httpx.Client, server: LiveServer
) -> None:
    for body, field in (
        (peer("1", "a", created_at=AHEAD), "message.created_at"),
        (peer("1", "a", edited_at=AHEAD), "message.edited_at"),
    ):
        response = client.post("/ingest", json=body)
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "validation_failed"
        assert response.json()["error"]["details"][0]["field"] == field
    gap = client.post(
        "/coverage-gaps", json={"channel_id": "floor", "from": "2026-05-21T19:00:00Z", "to": AHEAD}
    )
    assert gap.status_code == 422 and gap.json()["error"]["details"][0]["field"] == "to"
    assert rows(server) == 0 and rows(server, "coverage_gaps") == 0


def test_max_future_skew_is_a_duration(
    make_server: Callable[..., LiveServer], make_settings: Callable[..., Settings]
) -> None:
    assert make_settings().ingest.max_future_skew == 300
    assert load_settings(None, ingest={"max_future_skew": "1h"}).ingest.max_future_skew == 3600
    server = make_server(ingest={"max_future_skew": "1h"})
    with server.client() as http:
        ingest_ok(http, message_event("1", "a", created_at="2026-05-21T20:59:00Z"))
        late = http.post(
            "/v1/ingest",
            json={"events": [message_event("2", "b", created_at="2026-05-21T21:01:00Z")]},
        )
    assert late.status_code == 422


# --- 4. the bulk import names the line and the field ----------------------------------------------


def run_cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "channel_memory", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CHANNEL_MEMORY_TOKEN": "", **env},
        check=False,
    )


def _ago(seconds: float) -> str:
    """A time relative to the wall clock, which the bulk import runs on."""
    return format_rfc3339(time.time_ns() // 1000 - int(seconds * 1_000_000))


def test_import_names_the_line_and_the_misspelt_key(tmp_path: Path) -> None:
    good = [json.dumps(message_event(str(i), "fine", created_at=_ago(60))) for i in range(7)]
    typo = message_event("8", CANARY, created_at=_ago(60))
    typo["message"]["contnet"] = typo["message"].pop("content")
    ahead = message_event("9", CANARY, created_at=_ago(-86_400))
    source = tmp_path / "events.jsonl"
    source.write_text("\n".join([*good, json.dumps(typo), json.dumps(ahead)]) + "\n")
    result = run_cli("ingest", "--db", str(tmp_path / "cm.db"), str(source))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith(
        f"{source}:8: validation_failed, field message.contnet (unknown key); "
        "field message.content (missing)"
    )
    assert lines[1].startswith(f"{source}:9: validation_failed, field message.created_at")
    assert "event 0" not in result.stderr
    assert CANARY not in result.stderr + result.stdout


def test_import_counts_expired_events(tmp_path: Path) -> None:
    source = tmp_path / "events.jsonl"
    events = [
        message_event("1", "recent", created_at=_ago(3600)),
        message_event("2", CANARY, created_at=_ago(40 * 86_400)),
    ]
    source.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    db = tmp_path / "cm.db"
    result = run_cli("ingest", "--db", str(db), str(source))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "events": 2,
        "inserted": 1,
        "duplicates": 0,
        "ignored_forgotten": 0,
        "ignored_expired": 1,
    }
    assert query(db, "SELECT message_id FROM source_messages") == [("1",)]
