"""search_channel_context ranks by relevance: BM25 per channel, stemming, any word,
exact phrases, recency among equals; each message once; bounded excerpts; stable pages;
forgotten content gone from the ranking index and the files."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from channel_memory.store import search as search_index
from tests.conftest import LiveServer, at, ingest_ok, message_event, query

READ = "read-token-0123456789ab"
ADMIN = "admin-token-0123456789a"
BUDGET = 20_000
TOKENS = [
    {"token": ADMIN, "scopes": ["admin"], "agent_id": "ops"},
    {"token": READ, "scopes": ["read"], "agent_id": "analyst", "channels": ["floor", "ops"]},
]
CANARY = "Okapicanary5521"
STEM_CASES = """
fills filled filling fill caresses ponies ties caress cats feed agreed plastered
motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing
filing happy sky relational conditional rational valenci hesitanci digitizer
conformabli radicalli differentli vileli analogousli vietnamization predication
operator feudalism decisiveness hopefulness callousness formaliti sensitiviti
sensibiliti triplicate formative formalize electriciti electrical hopeful goodness
revival allowance inference airliner gyroscopic adjustable defensible irritant
replacement adjustment dependent adoption homologou communism activate angulariti
homologous effective bowdlerize probate rate cease controll roll generously meetings
"""


@pytest.fixture
def desk(make_server: Callable[..., LiveServer]) -> Iterator[tuple[LiveServer, httpx.Client]]:
    server = make_server(
        worker={"enabled": False}, tokens=TOKENS, tools={"result_budget_chars": BUDGET}
    )
    with server.client(READ) as client:
        yield server, client


def push(server: LiveServer, *events: dict[str, Any]) -> None:
    with server.client(ADMIN) as admin:
        ingest_ok(admin, *events)


def search(client: httpx.Client, query_text: str, **body: Any) -> dict[str, Any]:
    response = client.post(
        "/v1/tools/search_channel_context",
        json={"channels": ["floor"], "query": query_text, **body},
    )
    assert response.status_code == 200, response.text
    assert len(response.text) <= BUDGET
    result: dict[str, Any] = response.json()
    return result


def ids(result: dict[str, Any]) -> list[str]:
    return [hit["message_id"] for hit in result["hits"]]


def messages(*contents: str, channel: str = "floor") -> list[dict[str, Any]]:
    """One message per content, a minute apart in this order (the last is the newest)."""
    return [
        message_event(f"m{i}", text, channel=channel, created_at=at(i))
        for i, text in enumerate(contents)
    ]


def test_a_rarer_word_outranks_a_common_one(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    push(
        server,
        *messages(
            "the volcano report is out",  # m0: the rare word, oldest
            *[f"the weekly report number {n}" for n in range(1, 8)],
        ),
    )
    found = ids(search(client, "report volcano"))
    assert found[0] == "m0"
    assert set(found) == {f"m{i}" for i in range(8)}  # any word matches


def test_an_answer_outranks_the_question_that_repeats_the_words(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    push(
        server,
        *messages(
            "approved the copper trade, 200 lots",  # m0: the answer, oldest
            "who approved the copper trade?",  # m1: the same words, asked
            *[f"the weekly report number {n}" for n in range(2, 8)],
        ),
    )
    found = ids(search(client, "approved the copper trade?"))
    assert found[:2] == ["m0", "m1"]  # a question still matches, after the answer
    # a question nothing answers ranks as any message does
    assert ids(search(client, "who approved"))[0] == "m1"


def test_more_matched_words_outrank_fewer(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    push(
        server,
        *messages(
            "alpha beta gamma together here",
            "alpha only in this line here",
            "beta only in this line here",
            "alpha beta in this line here",
            "nothing relevant in this one",
        ),
    )
    assert ids(search(client, "alpha beta gamma")) == ["m0", "m3", "m2", "m1"]


def test_a_quoted_phrase_matches_exactly(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    push(
        server,
        *messages(
            "a blue whale was sighted",
            "the whale was blue and large",
            "two blue whales passed",
            "blue skies, whale songs",
        ),
    )
    assert ids(search(client, 'sightings of "blue whale"')) == ["m0"]
    assert ids(search(client, '"blue whale"', sort="newest")) == ["m0"]


def test_words_match_by_their_stem(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    push(server, *messages("FILLED 200 NVDA", "fills came in slowly", "nothing here", "filling"))
    assert set(ids(search(client, "fill"))) == {"m0", "m1", "m3"}
    assert set(ids(search(client, "were the orders filled?"))) == {"m0", "m1", "m3"}


def test_a_stop_word_finds_nothing_by_itself_in_a_question(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    """A question's common words add to what its other words found and find nothing of
    their own (a new user's trial: "what is the gross limit now" ranked "weather is
    terrible today" fourth, by "is")."""
    server, client = desk
    push(
        server,
        *messages(
            "gross limit reduced from 120m to 90m, effective now",
            "weather is terrible today",
            "what is the plan for lunch",
            "the gross limit is 90m now, all desks comply",
        ),
    )
    assert ids(search(client, "what is the gross limit now")) == ["m3", "m0"]
    assert ids(search(client, "what is the lunch plan")) == ["m2"]


def test_equal_scores_go_newest_first_and_newest_sorts_by_time(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    push(
        server,
        *messages(
            "stop moved to 408",
            "stop moved to 408",
            "stop stop stop moved to 408 said the lead",
            "stop moved to 408",
        ),
    )
    ranked = ids(search(client, "stop"))
    assert ranked[0] == "m2"  # most occurrences
    assert ranked[1:] == ["m3", "m1", "m0"]  # identical texts: newest first
    assert ids(search(client, "stop", sort="newest")) == ["m3", "m2", "m1", "m0"]


def test_a_query_without_a_searchable_word_is_422(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    push(server, *messages("what is it"))
    for text in ("what is the?", "!!! ... ???", '"" of and'):
        response = client.post(
            "/v1/tools/search_channel_context", json={"channels": ["floor"], "query": text}
        )
        assert response.status_code == 422
        error = response.json()["error"]
        assert error["code"] == "validation_failed"
        assert [d["field"] for d in error["details"]] == ["query"]
        assert text not in response.text


def test_excerpts_are_bounded_and_show_the_match(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    long = "filler words here. " * 60 + "The KEYSTONE decision was taken. " + "more padding. " * 80
    push(server, *messages(long))
    hit = search(client, "keystone")["hits"][0]
    assert len(hit["excerpt"]) <= 240
    assert "KEYSTONE decision" in hit["excerpt"]
    assert hit["excerpt"].startswith("…") and hit["excerpt"].endswith("…")


def units_of(query_text: str) -> list[search_index.Unit]:
    return search_index.parse_query(query_text)


def test_an_excerpt_shows_the_line_holding_the_most_query_words() -> None:
    """A word repeated in a long preamble does not pull the excerpt away from the line that
    holds every word asked for (a new user's trial: excerpts stopping before the words)."""
    preamble = "Morning call: flows, positioning, position limits and positions in detail. " * 4
    decision = "We cut the USDJPY position to flat because the BoJ headline hit."
    text = preamble + decision + " More chatter about lunch and the weekend." * 5
    units = search_index.parse_query("why did we cut the USDJPY position")
    shown = search_index.excerpt(text, units, 240)
    assert len(shown) <= 240 and decision in shown
    assert shown.startswith("…") and shown.endswith("…")
    # one word asked: where it stands densest, not its first passing mention
    intro = "Morning. We discussed the hedge briefly. " + "filler words here. " * 12
    plan = "Hedge plan: roll the hedge into March, hedge ratio back to 95%. "
    one = search_index.excerpt(intro + plan + "more padding. " * 20, units_of("hedge"), 240)
    assert plan.strip() in one


@pytest.mark.parametrize("before", ["Recap… ", "Café notes: ", "ﬁxings, ½ day, № 3: ", "plain: "])
def test_an_excerpt_shows_a_quoted_phrase_whatever_the_text_before_it(before: str) -> None:
    # folding may change the text's length ("…" is "...", "ﬁ" is "fi"): a quoted phrase is
    # still shown where it stands (a new user's trial: the report's first lines instead)
    text = (
        before
        + "desk notes and more notes. " * 12
        + "Then the stop moved to 1.0850. "
        + ("tail chatter. " * 12)
    )
    shown = search_index.excerpt(text, search_index.parse_query('"stop moved"'), 240)
    assert "stop moved to 1.0850" in shown


@pytest.mark.parametrize(
    ("phrase", "written", "before"),
    [
        # a final sigma folds by its place in the word: placed where folding keeps the
        # length (with "…" before it too, no place is known and words place the excerpt)
        ('"οδος καλος"', "ΟΔΟΣ ΚΑΛΟΣ", "filler. "),
        ('"ドル円"', "ﾄﾞﾙ円", "ﬁller … "),  # half-width kana with their voicing marks
        ('"stop moved"', "Stop moved", "ﬁller … "),
    ],
)
def test_an_excerpt_places_a_phrase_written_in_another_form(
    phrase: str, written: str, before: str
) -> None:
    text = before + "words here. " * 25 + written + " then more. " * 25
    shown = search_index.excerpt(text, search_index.parse_query(phrase), 240)
    assert written in shown


def test_pages_hold_every_hit_exactly_once_in_ranking_order(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    contents = [
        " ".join(["apple"] * (1 + i % 3) + ["banana"] * (i % 2) + [f"word{i}"] * (i % 5))
        for i in range(23)
    ]
    push(server, *messages(*contents))
    whole = ids(search(client, "apple banana", limit=50))
    assert len(whole) == 23
    seen: list[str] = []
    cursor = None
    while True:
        body = search(client, "apple banana", limit=4, **({"cursor": cursor} if cursor else {}))
        seen += ids(body)
        if not body["has_more"]:
            break
        cursor = body["next_cursor"]
    assert seen == whole


def test_a_block_and_its_messages_appear_once(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(worker={"enabled": False}, tokens=TOKENS)
    with server.client(READ) as client:
        push(
            server,
            *[
                message_event(str(i), "HEARTBEAT_OK", author="bot", created_at=at(i))
                for i in range(3)
            ],
        )
        server.drain()
        # only the block says "runtime status": it stands for its three messages
        block = search(client, "runtime status")["hits"]
        assert [(h["kind"], h["covers"]) for h in block] == [
            ("telemetry_count", ["floor/0", "floor/1", "floor/2"])
        ]
        # the messages match on their own: they are the hits, the block is not repeated
        both = search(client, "heartbeat runtime status", limit=20)["hits"]
        assert [h["source_handle"] for h in both] == ["floor/2", "floor/1", "floor/0"]
        assert {h["kind"] for h in both} == {"message"}


def test_a_decision_among_the_hits_says_which_it_is(
    make_server: Callable[..., LiveServer],
) -> None:
    """A new user's trial: "who moved the stop?" found the message but not that the feed
    shows it as a stop change; a hit the worker made a decision carries its type, as a
    browse of hard events does, and a message that is none carries nothing."""
    server = make_server(worker={"enabled": False}, tokens=TOKENS)
    with server.client(READ) as client:
        push(
            server,
            message_event("1", "moved the ES stop to 5105", created_at=at(1)),
            message_event("2", "where is the ES stop now?", created_at=at(2)),
        )
        before = {h["message_id"]: h for h in search(client, "ES stop")["hits"]}
        assert "decision" not in before["1"]  # not derived yet: nothing claimed
        server.drain()
        hits = {h["message_id"]: h for h in search(client, "ES stop")["hits"]}
        assert hits["1"]["decision"] == "stop_or_target_change"
        assert "decision" not in hits["2"]
        assert "answers" not in hits["1"]  # decided by itself, not by reply


def browsed_decisions(client: httpx.Client) -> dict[str, dict[str, Any]]:
    """The channel's decisions as a browse of hard events gives them, by message id."""
    browsed = client.post(
        "/v1/tools/get_channel_messages",
        json={"channels": ["floor"], "hard_events": True, "since": "100000h"},
    ).json()["messages"]
    return {m["message_id"]: m for m in browsed}


def test_a_decision_by_reply_among_the_hits_names_what_it_answers(
    make_server: Callable[..., LiveServer],
) -> None:
    """A new user's trial: "approved, 200 max" says nothing of what it approved; as a hit
    (and browsed as a hard event) it carries the handle of the proposal it answers."""
    server = make_server(worker={"enabled": False}, tokens=TOKENS)
    with server.client(READ) as client:
        push(
            server,
            message_event(
                "p", "proposal: buy 400 NVDA at 131.20 into the close, ok?", created_at=at(1)
            ),
            message_event("a", "approved, 200 max", created_at=at(2), reply_to="p"),
            message_event("q", "approved the new desk layout too", created_at=at(3)),
        )
        server.drain()
        hits = {h["message_id"]: h for h in search(client, "approved")["hits"]}
        assert hits["a"]["decision"] == "trade_approval"
        assert hits["a"]["answers"] == "floor/p"
        assert "answers" not in hits["q"]  # no reply: it answers nothing
        by_id = browsed_decisions(client)
        assert by_id["a"]["answers"] == "floor/p"
        assert "answers" not in by_id["p"]


def test_a_proposal_among_the_hits_names_the_verdicts_that_decided_it(
    make_server: Callable[..., LiveServer],
) -> None:
    """A new user's trial: "what did we decide about the ES short?" found the proposal but
    not the rejection under it, which repeats neither word; the proposal's hit names its
    verdicts by reply (``decided_by``: the newest four, oldest first), and so does a
    browse of hard events. A verdict deleted decides nothing."""
    server = make_server(worker={"enabled": False}, tokens=TOKENS)
    with server.client(READ) as client:
        push(
            server,
            message_event(
                "p", "want to short 10 ES at 5,120 into the print, ok?", created_at=at(1)
            ),
            message_event("n", "no, pass — too crowded", created_at=at(2), reply_to="p"),
            message_event("c", "ES short interest is up again, fyi", created_at=at(3)),
        )
        server.drain()
        hits = {h["message_id"]: h for h in search(client, "what about the ES short?")["hits"]}
        assert hits["p"]["decided_by"] == ["floor/n"]
        assert hits["p"]["decision"] == "trade_proposal"
        assert "decided_by" not in hits["c"]  # nothing decided on it
        assert "n" not in hits  # the verdict has none of the words: named, not found
        by_id = browsed_decisions(client)
        assert by_id["p"]["decided_by"] == ["floor/n"]
        assert by_id["n"]["answers"] == "floor/p"
        assert "decided_by" not in by_id["n"]
        # followed by its handle (a feed's re: or decided:), each says the same
        named = client.post(
            "/v1/tools/get_channel_messages", json={"source_handles": ["floor/n", "floor/p"]}
        ).json()["messages"]
        assert [(m["message_id"], m.get("answers"), m.get("decided_by")) for m in named] == [
            ("n", "floor/p", None),
            ("p", None, ["floor/n"]),
        ]
        # a second verdict (the rejection taken back) is named after the first
        push(
            server,
            message_event("y", "ok fine, approved — 5 lots", created_at=at(4), reply_to="p"),
        )
        server.drain()
        hits = {h["message_id"]: h for h in search(client, "ES short")["hits"]}
        assert hits["p"]["decided_by"] == ["floor/n", "floor/y"]
        # past four verdicts, the newest four (the one in force among them)
        push(
            server,
            *[
                message_event(f"v{n}", verdict, created_at=at(4 + n), reply_to="p")
                for n, verdict in enumerate(["no, pass", "ok, approved", "denied, pass"], 1)
            ],
        )
        server.drain()
        hits = {h["message_id"]: h for h in search(client, "ES short")["hits"]}
        assert hits["p"]["decided_by"] == ["floor/y", "floor/v1", "floor/v2", "floor/v3"]
        push(server, {"type": "delete", "channel_id": "floor", "message_id": "v3"})
        server.drain()
        hits = {h["message_id"]: h for h in search(client, "ES short")["hits"]}
        assert hits["p"]["decided_by"] == ["floor/n", "floor/y", "floor/v1", "floor/v2"]


def test_a_search_for_decisions_only_finds_the_hard_events(
    make_server: Callable[..., LiveServer],
) -> None:
    """A new user's trial: search could not be limited to decisions; with ``hard_events``
    only the messages a fresh hard event covers are hits (ranked as ever, across pages),
    and a cursor keeps the filter it was made with."""
    server = make_server(worker={"enabled": False}, tokens=TOKENS)
    with server.client(READ) as client:
        push(
            server,
            message_event("s1", "NVDA stop moved to 130.80", created_at=at(1)),
            message_event("c1", "where is the NVDA stop now? lol", created_at=at(2)),
            message_event("s2", "NVDA stop moved to 133.75, locking it in", created_at=at(3)),
            message_event("c2", "NVDA stop talk again, enough", created_at=at(4)),
        )
        server.drain()
        every = search(client, "NVDA stop")
        assert {h["message_id"] for h in every["hits"]} == {"s1", "c1", "s2", "c2"}
        decided = search(client, "NVDA stop", hard_events=True)
        assert {h["message_id"] for h in decided["hits"]} == {"s1", "s2"}
        assert all(h["decision"] == "stop_or_target_change" for h in decided["hits"])
        first = search(client, "NVDA stop", hard_events=True, limit=1)
        rest = search(client, "NVDA stop", hard_events=True, limit=1, cursor=first["next_cursor"])
        assert ids(first) + ids(rest) == ids(decided)
        assert not rest["has_more"]
        mixed = client.post(
            "/v1/tools/search_channel_context",
            json={"channels": ["floor"], "query": "NVDA stop", "cursor": first["next_cursor"]},
        )
        assert mixed.status_code == 400 and mixed.json()["error"]["code"] == "cursor_mismatch"


def test_a_hard_event_block_hit_names_what_it_answers_and_its_verdicts() -> None:
    """A block hit of one decision carries what a message hit of it would: its type, the
    proposal it answers, the verdicts that decided on it; a digest block none of them."""
    from channel_memory.kernel.models import BlockSource, RecallBlock
    from channel_memory.kernel.principal import Principal
    from channel_memory.tools import retrieval

    def block(kind: str, event_type: str | None, answers: str | None, n: int) -> RecallBlock:
        return RecallBlock(
            "b" + kind, "chat", "floor", "g", kind, event_type, "buy 10 ES ok?", at_us(1),
            at_us(1), False, 0.9, at_us(2), "rules",
            tuple(BlockSource(f"m{i}", "h") for i in range(n)), answers=answers,
        )  # fmt: skip

    def at_us(minute: int) -> int:
        return 1_779_379_200_000_000 + minute * 60_000_000

    reader = Principal("r", frozenset({"read"}), frozenset({"*"}))
    units = search_index.parse_query("ES")
    verdicts = {"floor/m0": ("floor/v1", "floor/v2")}
    ranked = [
        search_index.Ranked((1, -1.0, 0, "b"), ("floor/m0",), b, block=True)
        for b in (
            block("hard_event", "trade_proposal", None, 1),
            block("hard_event", "trade_approval", "floor/p", 1),
            block("chatter_rollup", None, None, 2),
        )
    ]
    hits = [retrieval._hit(r, units, reader, {}, verdicts) for r in ranked]
    assert hits[0]["decision"] == "trade_proposal"
    assert hits[0]["decided_by"] == ["floor/v1", "floor/v2"]
    assert "answers" not in hits[0]
    assert hits[1]["answers"] == "floor/p"
    assert not {"decision", "answers", "decided_by"} & set(hits[2])


def test_deduplication_keeps_messages_and_blocks_that_add_something() -> None:
    Ranked = search_index.Ranked
    items = [
        Ranked((0, -1.0, -5, "m1"), ("c/1",), "message 1"),
        Ranked((1, -3.0, -9, "bX"), ("c/1", "c/2"), "block X", block=True),
        Ranked((0, -2.0, -4, "m4"), ("c/4",), "message 4"),
        Ranked((1, -0.5, -3, "bY"), ("c/3", "c/2"), "block Y", block=True),
        Ranked((1, -0.4, -3, "bZ"), ("c/3", "c/5"), "block Z", block=True),
    ]
    assert [r.payload for r in search_index.deduplicated(items)] == [
        "message 4",
        "message 1",
        "block Y",
    ]


@pytest.mark.sqlite_only  # reads the SQLite files; PostgreSQL: test_forget_postgres.py
def test_deleted_and_forgotten_content_never_ranks_and_leaves_the_files(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    server, client = desk
    db = server.settings.db
    push(
        server,
        *messages(f"budget {CANARY} leaked", "budget approved", "budget deleted soon"),
    )
    assert query(db, "SELECT count(*) FROM search_index WHERE search_index MATCH ?", CANARY) == [
        (1,)
    ]
    assert set(ids(search(client, f"budget {CANARY}"))) == {"m0", "m1", "m2"}
    push(server, {"type": "delete", "channel_id": "floor", "message_id": "m2"})
    push(server, {"type": "forget", "channel_id": "floor", "message_ids": ["m0"]})
    assert ids(search(client, f"budget {CANARY}")) == ["m1"]
    assert query(db, "SELECT count(*) FROM search_index WHERE search_index MATCH ?", CANARY) == [
        (0,)
    ]
    assert query(db, "SELECT docs FROM search_channels WHERE channel_id = 'floor'") == [(1,)]
    data = b"".join(
        Path(str(db) + suffix).read_bytes()
        for suffix in ("", "-wal", "-shm")
        if Path(str(db) + suffix).exists()
    )
    assert re.search(re.escape(CANARY.encode()), data, re.IGNORECASE) is None


def test_the_scorer_stems_as_the_index_does() -> None:
    words = STEM_CASES.split()
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    for i, word in enumerate(words):
        conn.execute("INSERT INTO t (rowid, x) VALUES (?, ?)", (i, word))
    indexed = {row[0] for row in conn.execute("SELECT term FROM v")}
    assert {search_index.stem(w) for w in words} == indexed
