"""Read paths: a deletion hides every version from readers, backward browsing, not_found.

Every read path of a ``read`` token is asked about an edited-then-deleted message, before
and after the worker has processed the deletion, and its raw response bytes are searched
for either version's content. Only an ``admin`` asking the feed ``as_of`` a time before the
deletion sees the message as it was then.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from channel_memory.feed.candidates import as_of_versions
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.kernel.config import Settings
from channel_memory.kernel.models import SourceVersion
from channel_memory.kernel.timefmt import parse_rfc3339
from channel_memory.store import Store
from channel_memory.worker.runner import Worker
from tests.conftest import LiveServer, at, ingest_ok, message_event, source_version

READ = "read-token-0123456789ab"
ADMIN = "admin-token-0123456789a"
TOKENS = [
    {"token": ADMIN, "scopes": ["admin"], "agent_id": "ops"},
    {"token": READ, "scopes": ["read"], "agent_id": "analyst", "channels": ["floor", "ops"]},
]
FIRST = "Kestrelcanary5501"
SECOND = "Ocelotcanary8802"
LARGE = "Pangolincanary3303"
CANARIES = (FIRST, SECOND, LARGE)
BUDGET = 4_000
BEFORE_DELETION = "2026-05-21T16:45:00Z"


@pytest.fixture
def desk(make_server: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    server = make_server(
        worker={"enabled": False, "rollup_size": 3},
        tokens=TOKENS,
        tools={"result_budget_chars": BUDGET},
    )
    yield server


def push(server: LiveServer, *events: dict[str, Any]) -> None:
    with server.client(ADMIN) as admin:
        ingest_ok(admin, *events)


def leaked(text: str | bytes) -> list[str]:
    """The canaries found in a response body, in any case."""
    data = text.encode() if isinstance(text, str) else text
    return [c for c in CANARIES if re.search(re.escape(c.encode()), data, re.IGNORECASE)]


def tool(client: httpx.Client, name: str, **body: Any) -> httpx.Response:
    response = client.post(f"/v1/tools/{name}", json=body)
    assert len(response.text) <= BUDGET
    return response


def seed_and_delete(server: LiveServer) -> dict[str, Any]:
    """Ordinary chatter around m1 (edited, then deleted) and a large message, also deleted.

    Returns what a reader held before the deletion: block ids citing m1 and a content
    cursor into the large message.
    """
    push(
        server,
        *(message_event(f"c{i}", f"chatter line {i}", created_at=at(i)) for i in range(4)),
        message_event("m1", f"moving on {FIRST} now", created_at=at(5)),
        *(message_event(f"d{i}", f"more chatter {i}", created_at=at(6 + i)) for i in range(4)),
        message_event("big", (LARGE + " ") * 600, created_at=at(12)),
    )
    push(server, message_event("m1", f"moving on {SECOND} now", created_at=at(5), edited_at=at(30)))
    server.drain()
    held: dict[str, Any] = {}
    with server.client(READ) as reader:
        found = tool(reader, "search_channel_context", channels=["floor"], query=SECOND).json()
        held["search_before"] = found
        feed = reader.get(
            "/channel-awareness", params={"channels": "floor", "format": "json"}
        ).json()
        held["blocks"] = sorted(
            {
                b["id"]
                for b in feed["digest"]
                if b.get("id") and "floor/m1" in b.get("source_handles", [])
            }
        )
        digest = reader.post("/digest", json={"channel_ids": ["floor"]}).json()
        held["blocks"] = sorted(
            set(held["blocks"])
            | {b["id"] for b in digest["blocks"] if "m1" in b["source_messages"]}
        )
        first = tool(reader, "get_channel_messages", source_handles=["floor/big"]).json()
        held["content_cursor"] = first["fragment"]["next_content_cursor"]
    # what the reader could see before: the test below would be vacuous otherwise
    assert SECOND in json.dumps(held["search_before"])
    assert held["blocks"]
    push(
        server,
        {"type": "delete", "channel_id": "floor", "message_id": "m1", "deleted_at": at(0, 17)},
        {"type": "delete", "channel_id": "floor", "message_id": "big", "deleted_at": at(0, 17)},
    )
    return held


def every_read_path(server: LiveServer, held: dict[str, Any]) -> dict[str, bytes]:
    """Each read path's raw response body for a read token, by name."""
    bodies: dict[str, bytes] = {}
    with server.client(READ) as reader:
        for history in (False, True):
            suffix = "+history" if history else ""
            bodies["tool handles" + suffix] = tool(
                reader,
                "get_channel_messages",
                source_handles=["floor/m1", "floor/big", "floor/c0"],
                include_history=history,
            ).content
            bodies["tool one handle" + suffix] = tool(
                reader, "get_channel_messages", source_handles=["floor/m1"], include_history=history
            ).content
            bodies["tool ids" + suffix] = tool(
                reader,
                "get_channel_messages",
                channels=["floor"],
                message_ids=["m1", "big"],
                include_history=history,
            ).content
            if not history:  # browsing reads current versions (include_history is refused)
                bodies["tool browse"] = tool(
                    reader, "get_channel_messages", channels=["floor"]
                ).content
                bodies["tool browse before"] = tool(
                    reader, "get_channel_messages", channels=["floor"], before="floor/d0", limit=3
                ).content
            bodies["peer source-messages" + suffix] = reader.post(
                "/source-messages",
                json={
                    "channel_id": "floor",
                    "message_ids": ["m1", "big", "c0"],
                    "include_history": history,
                },
            ).content
        bodies["tool content cursor"] = tool(
            reader, "get_channel_messages", content_cursor=held["content_cursor"]
        ).content
        for canary in (FIRST, SECOND, LARGE):
            bodies[f"search {canary}"] = tool(
                reader, "search_channel_context", channels=["floor"], query=canary
            ).content
            bodies[f"peer search {canary}"] = reader.post(
                "/search", json={"channel_ids": ["floor"], "query": canary}
            ).content
        bodies["search chatter"] = tool(
            reader, "search_channel_context", channels=["floor"], query="moving on"
        ).content
        for block_id in held["blocks"]:
            bodies[f"block {block_id}"] = reader.get(f"/v1/blocks/{block_id}").content
        for fmt in ("text", "json"):
            for kind in ("raw_window+digest", "raw_window"):
                for as_of in (None, BEFORE_DELETION):
                    params = {"channels": "floor", "format": fmt, "context_kind": kind}
                    if as_of:
                        params["as_of"] = as_of
                    name = f"feed {fmt} {kind} as_of={as_of}"
                    bodies[name] = reader.get("/channel-awareness", params=params).content
        bodies["digest"] = reader.post(
            "/digest", json={"channel_ids": ["floor"], "budget": {"raw_recent": "1h"}}
        ).content
        bodies["digest raw"] = reader.post("/digest", json={"channel_ids": ["floor"]}).content
    return bodies


@pytest.mark.parametrize("worker_ran", [False, True], ids=["pending", "derived"])
def test_a_deleted_message_is_gone_from_every_read_path(desk: LiveServer, worker_ran: bool) -> None:
    held = seed_and_delete(desk)
    if worker_ran:
        desk.drain()
    bodies = every_read_path(desk, held)
    leaks = {name: found for name, body in bodies.items() if (found := leaked(body))}
    assert leaks == {}
    # the neighbours are still there: the paths answered, they did not just fail
    assert b"chatter line 0" in bodies["tool handles"]
    assert b"chatter line 0" in bodies["peer source-messages+history"]
    # a read content cursor into the deleted message cannot go on
    refused = json.loads(bodies["tool content cursor"])
    assert refused["error"]["code"] == "content_changed"


def test_peer_history_keeps_only_the_tombstone(desk: LiveServer) -> None:
    seed_and_delete(desk)
    with desk.client(READ) as reader:
        body = reader.post(
            "/source-messages",
            json={"channel_id": "floor", "message_ids": ["m1"], "include_history": True},
        ).json()
        current = reader.post(
            "/source-messages", json={"channel_id": "floor", "message_ids": ["m1"]}
        ).json()
    [tombstone] = body["messages"]
    assert tombstone["deleted"] is True and tombstone["content"] == ""
    assert tombstone["source_handle"] == "floor/m1" and tombstone["is_current"] is True
    assert tombstone["author_id"] == "u-desk-lead"
    assert tombstone["created_at"] == at(5)
    assert body["not_found"] == []
    # without history a deleted message has no current content to return
    assert current["messages"] == [] and [n["message_id"] for n in current["not_found"]] == ["m1"]


def test_as_of_shows_a_message_deleted_since_to_admin_only(desk: LiveServer) -> None:
    seed_and_delete(desk)
    desk.drain()
    params = {"channels": "floor", "as_of": BEFORE_DELETION}
    with desk.client(ADMIN) as admin:
        investigated = admin.get("/channel-awareness", params=params).text
    with desk.client(READ) as reader:
        read = reader.get("/channel-awareness", params=params).text
    # the admin sees the version current at that time, not the earlier one
    assert f"> moving on {SECOND} now\n" in investigated and FIRST not in investigated
    assert leaked(read) == []
    # the reader gets the tombstone in its place
    assert "tombstone m1" in read and "was deleted" in read
    assert "tombstone m1" not in investigated


def test_as_of_tombstone_rule_is_a_pure_choice() -> None:
    def version(seq: int, content: str, event: int, deleted: bool, current: bool) -> SourceVersion:
        return source_version(
            "m1", content, author="u", at_us=event, id=seq, observed_seq=seq,
            content_hash=f"h{seq}", deleted=deleted, created_us=10,
            deleted_us=event if deleted else None, is_current=current,
        )  # fmt: skip

    history = [version(1, "v1", 10, False, False), version(2, "", 50, True, True)]
    assert as_of_versions(history, 20, reveal_deleted=True)["floor/m1"].content == "v1"
    hidden = as_of_versions(history, 20, reveal_deleted=False)["floor/m1"]
    assert hidden.deleted and hidden.content == "" and hidden.content_hash == "h2"
    # not created yet at that time: absent either way
    assert as_of_versions(history, 5, reveal_deleted=False) == {}


# --- browsing backwards -----------------------------------------------------------------


def ids(body: dict[str, Any]) -> list[str]:
    return [m["message_id"] for m in body["messages"]]


@pytest.fixture
def row(desk: LiveServer) -> LiveServer:
    push(desk, *(message_event(f"m{i}", f"message {i}", created_at=at(i)) for i in range(10)))
    return desk


def test_before_pages_backwards_and_after_forwards(row: LiveServer) -> None:
    with row.client(READ) as reader:
        for anchor in ("floor/m8", at(8)):
            body = tool(
                reader, "get_channel_messages", channels=["floor"], before=anchor, limit=3
            ).json()
            assert ids(body) == ["m5", "m6", "m7"] and body["has_more"]
            pages = [ids(body)]
            while body["has_more"]:
                body = tool(
                    reader,
                    "get_channel_messages",
                    channels=["floor"],
                    before=anchor,
                    limit=3,
                    cursor=body["next_cursor"],
                ).json()
                pages.append(ids(body))
            assert pages == [["m5", "m6", "m7"], ["m2", "m3", "m4"], ["m0", "m1"]]
            assert body["next_cursor"] is None
        # after alone pages forwards; with both, the range is read forwards from after
        after = tool(
            reader, "get_channel_messages", channels=["floor"], after="floor/m2", limit=3
        ).json()
        assert ids(after) == ["m3", "m4", "m5"] and after["has_more"]
        both = tool(
            reader,
            "get_channel_messages",
            channels=["floor"],
            after="floor/m1",
            before=at(8),
            limit=4,
        ).json()
        assert ids(both) == ["m2", "m3", "m4", "m5"] and both["has_more"]
        rest = tool(
            reader,
            "get_channel_messages",
            channels=["floor"],
            after="floor/m1",
            before=at(8),
            limit=4,
            cursor=both["next_cursor"],
        ).json()
        assert ids(rest) == ["m6", "m7"] and not rest["has_more"]


def test_backward_pages_keep_the_nearest_messages_within_the_budget(desk: LiveServer) -> None:
    sizes = [300, 1500, 200, 1400, 1600, 100, 900, 1300, 50, 1700, 400, 1200]
    push(
        desk,
        *(
            message_event(f"m{i:02d}", f"m{i:02d} " + "y" * n, created_at=at(i))
            for i, n in enumerate(sizes)
        ),
        message_event("o1", "other channel", channel="ops", created_at="2026-05-21T16:07:30Z"),
    )
    seen: list[list[str]] = []
    with desk.client(READ) as reader:
        cursor = None
        for _ in range(20):
            body = tool(
                reader,
                "get_channel_messages",
                channels=["floor", "ops"],
                before=at(59),
                limit=4,
                cursor=cursor,
            ).json()
            page = ids(body)
            assert page and 0 <= body["omitted"] <= 4 - len(page)
            seen.append(page)
            cursor = body["next_cursor"]
            if not body["has_more"]:
                break
    flat = [m for page in reversed(seen) for m in page]
    expected = sorted(
        [f"m{i:02d}" for i in range(len(sizes))] + ["o1"],
        key=lambda m: 7.5 if m == "o1" else int(m[1:]),
    )
    assert flat == expected  # every message once, nothing skipped, in time order
    # each page is chronological, and the first holds the messages just before the anchor
    assert seen[0][-1] == "m11"
    assert any(len(page) < 4 for page in seen[:-1])  # the budget cut some pages short


# --- not_found ---------------------------------------------------------------------------


def test_unknown_deleted_and_forgotten_handles_are_listed_in_not_found(desk: LiveServer) -> None:
    push(
        desk,
        message_event("k1", "kept", created_at=at(1)),
        message_event("d1", f"to delete {FIRST}", created_at=at(2)),
        message_event("f1", f"to forget {SECOND}", created_at=at(3)),
    )
    push(
        desk,
        {"type": "delete", "channel_id": "floor", "message_id": "d1"},
        {"type": "forget", "channel_id": "floor", "message_ids": ["f1"]},
    )
    with desk.client(READ) as reader:
        for history in (False, True):
            named = tool(
                reader,
                "get_channel_messages",
                source_handles=["floor/u1", "floor/k1", "floor/d1", "floor/f1"],
                include_history=history,
            ).json()
            assert ids(named) == ["k1"]
            assert named["not_found"] == ["floor/u1", "floor/d1", "floor/f1"]
            by_id = tool(
                reader,
                "get_channel_messages",
                channels=["floor"],
                message_ids=["d1", "k1", "u1", "f1"],
                include_history=history,
            ).json()
            assert ids(by_id) == ["k1"]
            assert by_id["not_found"] == ["floor/d1", "floor/u1", "floor/f1"]
            # a forgotten message and one that never existed answer the same bytes
            alone = {
                m: tool(
                    reader,
                    "get_channel_messages",
                    source_handles=[f"floor/{m}"],
                    include_history=history,
                ).text
                for m in ("u1", "f1", "d1")
            }
            assert alone["f1"] == alone["u1"].replace("floor/u1", "floor/f1")
            assert alone["d1"] == alone["u1"].replace("floor/u1", "floor/d1")
            assert json.loads(alone["u1"])["status"] == "empty"
        found = tool(reader, "get_channel_messages", source_handles=["floor/k1"]).json()
        assert found["not_found"] == [] and ids(found) == ["k1"]


def test_not_found_stays_within_the_budget(desk: LiveServer) -> None:
    push(desk, message_event("k1", "kept", created_at=at(1)))
    wanted = [f"floor/{'n' * 100}{i:03d}" for i in range(99)]
    with desk.client(READ) as reader:
        body = tool(reader, "get_channel_messages", source_handles=["floor/k1", *wanted]).json()
    assert ids(body) == ["k1"]
    listed = body["not_found"]
    assert listed == wanted[: len(listed)] and len(listed) < len(wanted)
    assert body["not_found_omitted"] == len(wanted) - len(listed)


# --- MCP ---------------------------------------------------------------------------------


def _text(result: Any) -> str:
    [content] = result.content
    text: str = content.text
    return text


@pytest.mark.anyio
async def test_mcp_tools_hide_a_deleted_message(tmp_path: Path) -> None:
    # the MCP server reads the same store: seed it through the real write path and worker
    db = tmp_path / "mcp.db"
    now = parse_rfc3339("2026-05-21T20:00:00Z")
    store = await Store.open(db)
    try:
        worker = Worker(store, Settings(db=db, retention={"days": 100_000}), lambda: now)
        await worker.prepare()
        events = [
            message_event("m1", f"moving on {FIRST}", created_at=at(5)),
            message_event("m1", f"moving on {SECOND}", created_at=at(5), edited_at=at(30)),
            message_event("k1", "kept", created_at=at(6)),
            {"type": "delete", "channel_id": "floor", "message_id": "m1", "deleted_at": at(0, 17)},
        ]
        for event in events:  # one batch each: an edit, then a deletion
            batch = IngestBatch.model_validate({"events": [event]})
            await ingest(
                store, ["floor"], native_commands(batch.events), now_us=now, derive=worker.hook
            )
        await worker.drain()
    finally:
        await store.close()
    config = tmp_path / "cm.toml"
    config.write_text(
        f'[[tokens]]\ntoken = "{READ}"\nscopes = ["read"]\n'
        'agent_id = "mcp-agent"\nchannels = ["floor"]\n'
        "[retention]\ndays = 100000\n"
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "channel_memory", "mcp", "--db", str(db), "--config", str(config)],
        env={**os.environ, "CHANNEL_MEMORY_MCP_TOKEN": READ},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        answers = [
            _text(
                await session.call_tool(
                    "get_channel_messages",
                    {"source_handles": ["floor/m1", "floor/k1"], "include_history": True},
                )
            ),
            _text(
                await session.call_tool(
                    "get_channel_messages",
                    {"channels": ["floor"], "message_ids": ["m1"], "include_history": True},
                )
            ),
            _text(await session.call_tool("get_channel_messages", {"channels": ["floor"]})),
            _text(
                await session.call_tool(
                    "search_channel_context", {"channels": ["floor"], "query": SECOND}
                )
            ),
        ]
    assert [leaked(a) for a in answers] == [[], [], [], []]
    # the MCP text is laid out by the MCP server: only the handle's presence is asserted
    assert "floor/m1" in answers[0] and "kept" in answers[0]
    assert "kept" in answers[2]
