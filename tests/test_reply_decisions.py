"""Decisions made by reply: a short reply to a proposal is a hard event that answers it.

Through the real worker and the real HTTP feed: the reply's block is served verbatim
with ``answers`` (the proposal's handle), and it follows its parent — a parent that
arrives late, is edited into something else, deleted or forgotten re-derives it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from channel_memory.kernel.models import RecallBlock
from channel_memory.store import blocks as block_store
from channel_memory.worker.render import BlockPlan, block_id
from tests.conftest import LiveServer, at, ingest_ok, message_event, query

PROPOSAL = "[PROPOSED] buy 200 NVDA at 131.20, stop 128"
LUNCH = "lunch at 1?"
SECRET = "[PROPOSED] sell 5000 ZQX9 at 97.125, stop 97.5"
"""A parent whose words must never reach the reply's block once it is gone."""
APPROVES_THE_PROPOSAL = ("hard_event", "trade_approval", "floor/1")
"""A reply's block (kind, event type, what it answers) when it decides on message 1."""


@pytest.fixture
def desk(make_server: Callable[..., LiveServer]) -> Iterator[tuple[LiveServer, httpx.Client]]:
    """A server whose worker only runs when the test drains it."""
    server = make_server(worker={"enabled": False})
    with server.client() as client:
        yield server, client


def blocks(client: httpx.Client) -> list[dict[str, Any]]:
    """Every block of the channel, through the peer ``/digest``."""
    response = client.post("/digest", json={"channel_ids": ["floor"], "since": "24h"})
    assert response.status_code == 200, response.text
    result: list[dict[str, Any]] = response.json()["blocks"]
    return result


def block_of(client: httpx.Client, message_id: str) -> dict[str, Any]:
    """The one block covering ``message_id``."""
    [block] = [b for b in blocks(client) if message_id in b["source_messages"]]
    return block


def feed_json(client: httpx.Client) -> list[dict[str, Any]]:
    response = client.get("/channel-awareness", params={"channels": "floor", "format": "json"})
    assert response.status_code == 200, response.text
    digest: list[dict[str, Any]] = response.json()["digest"]
    return digest


def reply(message_id: str, content: str, parent: str, minute: int, **extra: Any) -> dict[str, Any]:
    return message_event(
        message_id, content, created_at=at(minute), author="risk", reply_to=parent, **extra
    )


@pytest.mark.parametrize(
    "answer", ["yes", "approved", "go", "👍 send it", "denied, too correlated"]
)
def test_a_short_reply_to_a_proposal_is_a_hard_event_that_answers_it(
    desk: tuple[LiveServer, httpx.Client], answer: str
) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", PROPOSAL, created_at=at(0)),
        reply("2", answer, "1", 1),
    )
    server.drain()
    block = block_of(client, "2")
    assert (block["kind"], block["event_type"], block["sparse"]) == (
        "hard_event",
        "trade_approval",
        False,
    )
    assert block["text"] == answer  # verbatim, like every hard event
    assert block["answers"] == "floor/1"
    assert block["source_handles"] == ["floor/2"]
    # the same object everywhere a block is served
    expanded = client.get(f"/v1/blocks/{block['id']}")
    assert expanded.status_code == 200, expanded.text
    assert expanded.json()["answers"] == "floor/1"
    [in_feed] = [b for b in feed_json(client) if b["id"] == block["id"]]
    assert in_feed["answers"] == "floor/1" and in_feed["text"] == answer
    # the proposal itself answers nothing, and shows no such field
    assert "answers" not in block_of(client, "1")


def test_a_reply_through_the_peer_ingest_route_answers_its_proposal(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    # a new user's trial: the peer-compatible /ingest carried no reply_to, so "yes" sent
    # through it was an acknowledgement, and an author_kind there was dropped
    server, client = desk

    def peer(message_id: str, content: str, minute: int, **extra: str) -> dict[str, Any]:
        message = {"id": message_id, "author_name": "risk", "created_at": at(minute)}
        return {"channel_id": "floor", "message": {**message, "content": content, **extra}}

    for body in (
        peer("1", PROPOSAL, 0, author_kind="bot"),
        peer("2", "yes", 1, reply_to="1", thread_id=""),
        peer("3", "denied, too correlated", 2, thread_id="1"),  # in the proposal's thread
    ):
        response = client.post("/ingest", json=body)
        assert response.status_code == 202, response.text
    server.drain()
    block = block_of(client, "2")
    assert (block["kind"], block["event_type"], block["answers"]) == APPROVES_THE_PROPOSAL
    threaded = block_of(client, "3")
    assert (threaded["kind"], threaded["event_type"], threaded["answers"]) == (
        APPROVES_THE_PROPOSAL
    )
    assert query(server.settings.db, "SELECT origin, author_kind FROM source_messages WHERE "
                 "message_id = '1'") == [("app", "bot")]  # fmt: skip


REASONED_NO = (
    "no. not selling dollar-yen fifteen minutes before Tokyo CPI with a deputy governor "
    "speaking at 01:30. if the inputs still hold afterwards it'll regenerate."
)
"""A rejection with its reasons: longer than a short reply, its verdict is its first word."""


def test_a_verdict_with_its_reasons_is_a_decision_that_answers_the_proposal(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    review = (
        "USDCAD signal review: hit rate 41% over 30 days, the approval queue saw 14 cards. "
        + "Context only, nothing proposed. " * 3
    )
    ingest_ok(
        client,
        message_event("1", PROPOSAL, created_at=at(0)),
        reply("2", REASONED_NO, "1", 1),
        message_event("3", review, created_at=at(2)),
        reply("4", "👍 noted. " + "pls add the numbers to the weekly pack. " * 3, "3", 3),
        reply("5", "no idea what the fill was, checking with ops. " * 3, "1", 4),
        # a verdict word opening a phrase, a hedge or a question after it: no verdict
        *[
            reply(f"h{n}", opening + " context on the book and the tape." * 4, "1", 5 + n)
            for n, opening in enumerate(
                ["no idea,", "No worries,", "ok, let me think about it.", "k. so what's the stop?"]
            )
        ],
    )
    server.drain()
    block = block_of(client, "2")
    assert (block["kind"], block["event_type"], block["answers"]) == APPROVES_THE_PROPOSAL
    assert block["text"] == REASONED_NO
    # longer than a short reply: a thumbs-up with more to say under a review is no
    # approval; neither is a reply that opens with "no" but is no verdict
    for ordinary in ("4", "5", "h0", "h1", "h2", "h3"):
        assert block_of(client, ordinary)["kind"] != "hard_event", ordinary


def test_a_short_reply_opening_with_no_but_no_verdict_decides_nothing(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ordinary = ["no idea what the fill was", "no fill yet, will chase", "no news from ops on it"]
    verdicts = ["no, too big", "no.", "nope, not before CPI"]
    ingest_ok(
        client,
        message_event("1", PROPOSAL, created_at=at(0)),
        *[reply(f"o{n}", text, "1", 1 + n) for n, text in enumerate(ordinary)],
        *[reply(f"v{n}", text, "1", 5 + n) for n, text in enumerate(verdicts)],
    )
    server.drain()
    for n in range(len(ordinary)):
        assert block_of(client, f"o{n}")["kind"] != "hard_event", ordinary[n]
    for n in range(len(verdicts)):
        block = block_of(client, f"v{n}")
        assert (block["kind"], block["event_type"], block["answers"]) == APPROVES_THE_PROPOSAL


@pytest.mark.parametrize(
    ("answer", "approves"),
    [
        # a verdict after a phrase that opens with "no"
        ("No rush — do it", True),
        ("no rush, take it", True),
        ("no news, go", True),
        ("no word yet. approved though", True),
        # a rejection whose reasons describe how things stand, in one clause
        ("no. not into the Fed — it's still there on Thursday, bring it back then", True),
        (
            "nah. the central bank has been sitting on that level for weeks and the points "
            "are cheap for a reason. pass",
            True,
        ),
        ("no. half the market is on holiday, bring it back Monday", True),
        # an assent that puts the decision off
        ("ok, lunch first then I'll look", False),
        ("sure, currently in a meeting", False),
        ("ok, still on the phone with the PB", False),
        ("ok, my holiday starts friday", False),
    ],
)
def test_an_answer_under_a_proposal_decides_by_its_verdict(
    desk: tuple[LiveServer, httpx.Client], answer: str, approves: bool
) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", PROPOSAL, created_at=at(0)),
        reply("2", answer, "1", 1),
        message_event("3", LUNCH, created_at=at(2)),
        reply("4", answer, "3", 3),
    )
    server.drain()
    block = block_of(client, "2")
    if approves:
        assert (block["kind"], block["event_type"], block["answers"]) == APPROVES_THE_PROPOSAL
    else:
        assert block["kind"] != "hard_event"
    # the same words under a question that proposes no trade decide nothing
    assert block_of(client, "4")["kind"] != "hard_event"


def test_yes_to_a_question_that_proposes_no_trade_stays_an_acknowledgement(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", LUNCH, created_at=at(0)),
        reply("2", "yes", "1", 1),
    )
    server.drain()
    block = block_of(client, "2")
    assert block["kind"] == "low_value_ack" and "answers" not in block
    assert query(
        server.settings.db, "SELECT count(*) FROM recall_blocks WHERE answers IS NOT NULL"
    ) == [(0,)]


def test_a_thread_reply_answers_the_thread_root(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", PROPOSAL, created_at=at(0), thread_id="1"),
        message_event("2", "approved", created_at=at(1), author="risk", thread_id="1"),
    )
    server.drain()
    block = block_of(client, "2")
    assert (block["kind"], block["answers"]) == ("hard_event", "floor/1")


def test_the_proposal_arriving_after_its_reply_makes_the_reply_a_decision(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(client, reply("2", "yes", "1", 1))
    server.drain()
    assert block_of(client, "2")["kind"] == "low_value_ack"
    ingest_ok(client, message_event("1", PROPOSAL, created_at=at(0)))
    server.drain()
    block = block_of(client, "2")
    assert (block["kind"], block["event_type"], block["answers"]) == APPROVES_THE_PROPOSAL


def test_the_proposal_edited_into_a_question_turns_the_reply_back_into_an_ack(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", PROPOSAL, created_at=at(0)),
        reply("2", "yes", "1", 1),
    )
    server.drain()
    decided = block_of(client, "2")
    assert decided["kind"] == "hard_event"
    ingest_ok(client, message_event("1", LUNCH, created_at=at(0), edited_at=at(5)))
    # until the worker catches up, the decision is not served as fresh
    stale = client.get(f"/v1/blocks/{decided['id']}").json()
    assert stale["dirty"] is True and stale["stale"] is True
    server.drain()
    block = block_of(client, "2")
    assert block["kind"] == "low_value_ack" and "answers" not in block
    assert client.get(f"/v1/blocks/{decided['id']}").status_code == 404


@pytest.mark.parametrize("removal", ["delete", "forget"])
def test_a_removed_proposal_leaves_the_reply_on_its_own_and_nothing_of_it(
    desk: tuple[LiveServer, httpx.Client], removal: str
) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", SECRET, created_at=at(0)),
        reply("2", "go", "1", 1),
    )
    server.drain()
    assert block_of(client, "2")["answers"] == "floor/1"
    if removal == "forget":
        ingest_ok(client, {"type": "forget", "channel_id": "floor", "message_ids": ["1"]})
        # no drain: a forget re-derives the replies that read it before it returns
    else:
        ingest_ok(client, {"type": "delete", "channel_id": "floor", "message_id": "1"})
        server.drain()
    block = block_of(client, "2")
    # "go" on its own is an ordinary message
    assert (block["kind"], block["text"]) == ("raw_excerpt", "go") and "answers" not in block
    rows = query(
        server.settings.db,
        "SELECT text, coalesce(cut_text, ''), coalesce(answers, '') FROM recall_blocks",
    )
    assert rows and not any("ZQX9" in "".join(row) or row[2] == "floor/1" for row in rows)
    assert query(
        server.settings.db, "SELECT count(*) FROM derived_messages WHERE answers IS NOT NULL"
    ) == [(0,)]
    feed = client.get("/channel-awareness", params={"channels": "floor"}).text
    assert "ZQX9" not in feed


def test_rederiving_from_scratch_gives_identical_blocks(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(
        client,
        reply("2", "yes", "1", 1),  # before its parent
        message_event("1", PROPOSAL, created_at=at(0)),
        reply("3", "denied, too correlated", "1", 2),
        message_event("4", LUNCH, created_at=at(3)),
        reply("5", "yes", "4", 4),
        reply("6", "👍 send it", "missing", 5),
    )
    server.drain()
    edited = PROPOSAL + ", size 200"
    ingest_ok(client, message_event("1", edited, created_at=at(0), edited_at=at(9)))
    server.drain()
    before = snapshot(server)
    answered = sorted((row[3], row[4]) for row in before if row[4] is not None)
    assert answered == [("denied, too correlated", "floor/1"), ("yes", "floor/1")]

    async def wipe() -> None:
        async with server.app.state.worker.store.write() as conn:
            seqs = [seq for (seq,) in await conn.execute_fetchall("SELECT seq FROM recall_blocks")]
            await block_store.delete_blocks(conn, seqs)  # with their full-text rows
            await conn.execute("DELETE FROM derived_messages")
            await block_store.mark_everything_dirty(conn, server.clock())

    server.run(wipe())
    assert snapshot(server) == []
    server.drain()
    assert snapshot(server) == before


def snapshot(server: LiveServer) -> list[tuple[Any, ...]]:
    async def read() -> list[RecallBlock]:
        async with server.app.state.worker.store.read() as conn:
            return await block_store.all_blocks(conn)

    return sorted(
        (b.id, b.kind, b.event_type, b.text, b.answers, b.sources, b.dirty)
        for b in server.run(read())
    )


def test_the_decision_is_an_input_of_the_block_id(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    ingest_ok(
        client,
        message_event("1", PROPOSAL, created_at=at(0)),
        reply("2", "yes", "1", 1),
    )
    server.drain()
    first = block_of(client, "2")
    # the same reply now answers a routing question: another decision, same source
    question = "which desk should we route it to?"
    ingest_ok(client, message_event("1", question, created_at=at(0), edited_at=at(5)))
    server.drain()
    second = block_of(client, "2")
    assert second["covered_content_hashes"] == first["covered_content_hashes"]
    assert (first["event_type"], second["event_type"]) == ("trade_approval", "route_decision")
    assert second["answers"] == "floor/1" and second["id"] != first["id"]


def test_what_a_decision_answers_changes_its_block_id() -> None:
    plan = BlockPlan("hard_event", "m:2", (("2", "sha256:x"),), "trade_approval", 1.0, "s")
    ids = {
        block_id("floor", BlockPlan(**{**_fields(plan), "answers": answers}), "f")
        for answers in (None, "floor/1", "floor/3")
    }
    assert len(ids) == 3


def _fields(plan: BlockPlan) -> dict[str, Any]:
    return {name: getattr(plan, name) for name in BlockPlan.__dataclass_fields__}
