"""Search finds words of every script, and words inside text written without spaces
(Chinese, Japanese, Korean), on both backends: the peer ``/search`` (literal words) and
``search_channel_context`` (ranked). From a new user's trial of a Tokyo desk, where
neither found 「ストップ」, 「野村」 or 「ドル円」 in the messages that held them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiosqlite
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from channel_memory.store import Store
from channel_memory.store import search as search_index
from channel_memory.store.sqlite import define_functions, upgrade
from channel_memory.store.terms import (
    doc_length,
    index_terms,
    index_text,
    phrases,
    pieces,
    tokens,
)
from tests.conftest import LiveServer, at, ingest_ok, message_event

READ = "read-token-0123456789ab"
ADMIN = "admin-token-0123456789a"
TOKENS = [
    {"token": ADMIN, "scopes": ["admin"], "agent_id": "ops"},
    {"token": READ, "scopes": ["read"], "agent_id": "analyst", "channels": ["floor"]},
]

DESK = [
    "ドル円150.20で1本買いました",  # m0
    "ストップを149.50に移動しました",  # m1
    "野村経由で流してください",  # m2
    "ランチどこ行く？トルコ料理？",  # m3: トル, not ドル
    "Закрыли позицию по нефти, стоп снят",  # m4
    "손절가를 151.00으로 올렸습니다",  # m5
    "止损移到保本，仓位减半",  # m6
    "ΜΕΙΩΣΑΜΕ τη θέση στο Bund",  # m7
    "stop moved to breakeven on USDJPY",  # m8
    "ﾄﾞﾙ円ｼｮｰﾄ追加",  # m9: half-width katakana
]


@pytest.fixture
def desk(make_server: Callable[..., LiveServer]) -> Iterator[tuple[LiveServer, httpx.Client]]:
    server = make_server(worker={"enabled": False}, tokens=TOKENS)
    with server.client(ADMIN) as admin:
        ingest_ok(
            admin,
            *[message_event(f"m{i}", text, created_at=at(i)) for i, text in enumerate(DESK)],
        )
    with server.client(READ) as client:
        yield server, client


def literal(client: httpx.Client, words: str) -> set[str]:
    response = client.post("/search", json={"channel_ids": ["floor"], "query": words})
    assert response.status_code == 200, response.text
    return {m["message_id"] for m in response.json()["source_messages"]}


def ranked(client: httpx.Client, question: str, **body: Any) -> list[str]:
    response = client.post(
        "/v1/tools/search_channel_context",
        json={"channels": ["floor"], "query": question, **body},
    )
    assert response.status_code == 200, response.text
    return [hit["message_id"] for hit in response.json()["hits"]]


@pytest.mark.parametrize(
    ("words", "found"),
    [
        ("ストップ", {"m1"}),
        ("野村", {"m2"}),
        ("ドル円", {"m0", "m9"}),  # half-width katakana folds to the same word
        ("円", {"m0", "m9"}),  # one character, inside a run
        ("ドル", {"m0", "m9"}),  # voicing marks count: トルコ is not ドル
        ("トル", {"m3"}),
        ("買いました", {"m0"}),
        ("150.20", {"m0"}),  # digits are cut from the run around them
        ("позицию", {"m4"}),
        ("ЗАКРЫЛИ", {"m4"}),  # upper case folds, outside ASCII too
        ("손절가를", {"m5"}),
        ("손절", {"m5"}),
        ("止损", {"m6"}),
        ("μειωσαμε", {"m7"}),
        ("breakeven", {"m8"}),
        ("ストップ 野村", set()),  # every word, literally
        ("ドル円 買い", {"m0"}),
        ("ルド", set()),  # the pieces in the query's order only
    ],
)
def test_the_literal_search_finds_words_of_any_script(
    desk: tuple[LiveServer, httpx.Client], words: str, found: set[str]
) -> None:
    _, client = desk
    assert literal(client, words) == found


def test_the_ranked_search_answers_a_question_asked_in_japanese(
    desk: tuple[LiveServer, httpx.Client],
) -> None:
    _, client = desk
    # a question in words: its kanji and katakana words are asked, its hiragana only
    # weighs; the message holding both words comes first
    assert ranked(client, "ドル円のストップはどこに動かした？")[0] == "m1"
    assert ranked(client, "ドル円はいくらで買った？")[0] == "m0"
    assert ranked(client, "野村") == ["m2"]
    # a sentence of Chinese is asked as its two-character pieces
    assert ranked(client, "止损移到哪里了")[0] == "m6"
    assert ranked(client, "손절가는 얼마?")[0] == "m5"
    # quoted, a run must appear as written
    assert ranked(client, '"ドル円"', sort="newest") == ["m9", "m0"]


def test_quoted_text_with_runs_and_numbers_must_appear_as_written(
    make_server: Callable[..., LiveServer],
) -> None:
    """From the trial of this capability: a quoted number beside Japanese text found
    nothing (a phrase's edges took kana for letters), and a quoted phrase mixing a run
    with digits matched any of its parts."""
    server = make_server(worker={"enabled": False}, tokens=TOKENS)
    texts = [
        "ドル円150.20で買い",  # m0
        "ドル円149.95で売り",  # m1
        "トヨタ2,000株を3,150円で",  # m2
        "ソニー500株、7.20で",  # m3
        "寄り付きで成行",  # m4
        "お願いします、きょうは早めに",  # m5: shares only hiragana with 寄り付き
        "日付を確認",  # m6: shares 付
        "ユーロ円を買い増し",  # m7
        "ユーロ円 買い増し",  # m8: as long, one space (it counted as two words of nine)
    ]
    with server.client(ADMIN) as admin:
        ingest_ok(
            admin, *[message_event(f"m{i}", t, created_at=at(i)) for i, t in enumerate(texts)]
        )
    with server.client(READ) as client:
        assert ranked(client, '"150.20"') == ["m0"]
        assert ranked(client, '"ドル円150.20"') == ["m0"]
        assert ranked(client, '"2,000株"') == ["m2"]
        assert ranked(client, '"ドル円、149.95"') == ["m1"]  # punctuation between is allowed
        # unquoted, digits written together are one phrase too
        assert ranked(client, "150.20") == ["m0"]
        assert ranked(client, "7.20")[0] == "m3"
        # the whole run first; its hiragana parts bring nothing of their own
        found = ranked(client, "寄り付き")
        assert found[0] == "m4" and "m5" not in found
        # a run is as long as its characters: the two weigh the same, the newer first
        assert ranked(client, "ユーロ円") == ["m8", "m7"]


def test_excerpts_show_a_match_inside_a_long_run(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(worker={"enabled": False}, tokens=TOKENS)
    calm = "。相場は方向感に欠ける展開" * 30
    text = "本日の市況" + calm + "。野村経由でストップを入れました。" + "以上" * 40
    with server.client(ADMIN) as admin:
        ingest_ok(admin, message_event("m0", text, created_at=at(0)))
    with server.client(READ) as client:
        response = client.post(
            "/v1/tools/search_channel_context", json={"channels": ["floor"], "query": "野村"}
        )
    hit = response.json()["hits"][0]
    assert "野村経由" in hit["excerpt"] and len(hit["excerpt"]) < len(text)


def test_edits_and_forgets_keep_the_index_in_step(desk: tuple[LiveServer, httpx.Client]) -> None:
    server, client = desk
    with server.client(ADMIN) as admin:
        ingest_ok(
            admin,
            message_event("m2", "みずほ経由に変更", created_at=at(2), edited_at=at(20)),
            {"type": "forget", "channel_id": "floor", "message_ids": ["m1"]},
        )
    assert literal(client, "野村") == set() and ranked(client, "野村") == []
    assert literal(client, "みずほ") == {"m2"} and ranked(client, "みずほ") == ["m2"]
    assert literal(client, "ストップ") == set() and ranked(client, "ストップ") == []


def test_the_author_filter_folds_as_search_folds(make_server: Callable[..., LiveServer]) -> None:
    """``author`` is a substring of the author's name or id, folded as search folds words
    (SQLite's ``lower()`` and PostgreSQL's under the columns' collation lowered ASCII only:
    "Éric" did not find "Éric"); with it the peer search answers no derived block, as the
    native tools do (it answered other authors' rollups)."""
    server = make_server(tokens=TOKENS)
    texts = [("Éric Ω", "ドル円 stop moved"), ("ДМИТРИЙ", "stop kept"), ("eric", "stop removed")]
    texts += [("ﾀﾅｶ", "stop noted")]
    texts += [(f"chatter-{i}", f"lol ドル円 again {i}") for i in range(6)]
    with server.client(ADMIN) as admin:
        ingest_ok(
            admin,
            *[
                message_event(f"m{i}", text, author=author, created_at=at(i))
                for i, (author, text) in enumerate(texts)
            ],
        )
    server.drain()
    with server.client(READ) as client:
        for author, found in [
            ("Éric", {"m0", "m2"}),
            ("éRIC ω", {"m0"}),
            ("дмитрий", {"m1"}),
            ("ERIC", {"m0", "m2"}),
            ("タナカ", {"m3"}),
        ]:
            response = client.post(
                "/search", json={"channel_ids": ["floor"], "query": "stop", "author": author}
            )
            got = {m["message_id"] for m in response.json()["source_messages"]}
            assert got == found, author
        everything = client.post("/search", json={"channel_ids": ["floor"], "query": "ドル円"})
        assert everything.json()["derived_blocks"]  # the chatter's rollup is found …
        for author in ("Éric", "nobody"):
            response = client.post(
                "/search", json={"channel_ids": ["floor"], "query": "ドル円", "author": author}
            )
            assert response.json()["derived_blocks"] == []  # … but it is no one's alone
        response = client.post("/search", json={"channel_ids": ["floor"], "author": "nobody"})
        assert response.json()["status"] == "empty"


# --- the terms themselves ---------------------------------------------------------------


def test_a_run_is_cut_from_the_letters_around_it() -> None:
    assert tokens("USD/JPYを150.20でLong") == ["usd", "jpy", "を", "150", "20", "で", "long"]
    assert index_terms("ドル円") == ["ドル", "ル円", "ド", "ル", "円"]
    assert index_terms("円") == ["円"]
    assert phrases("ES_F ドル円150") == ("es f", "ドル ル円", "150")
    assert tokens("ﾄﾞﾙ") == ["ドル"]  # half-width, voiced: folded whole


@given(st.text(alphabet="あいうアイウドル円野村止损가나 ab1", min_size=1, max_size=30))
@settings(max_examples=300, deadline=None)
def test_every_part_of_a_run_is_found_as_the_phrase_of_its_pieces(text: str) -> None:
    """Any substring of a run (a word inside it) is a phrase of consecutive terms of the
    index text, or one of its characters."""
    held = index_text(text).split()
    for token in tokens(text):
        if not search_index.is_run(token):
            continue
        for start in range(len(token)):
            for end in range(start + 1, len(token) + 1):
                wanted = pieces(token[start:end])
                assert any(held[i : i + len(wanted)] == wanted for i in range(len(held)))


@pytest.mark.anyio
async def test_version_9_indexes_again_what_version_8_held_whole(tmp_path: Path) -> None:
    """A SQLite store at schema version 8 (raw text in its indexes: a run of Japanese was
    one word) is upgraded: its three indexes hold the index text, words inside runs are
    found, and its schema is the one a new store gets."""
    old_schema = (Path(__file__).parent / "schemas" / "v8.sql").read_text(encoding="utf-8")
    db = tmp_path / "old.db"
    async with aiosqlite.connect(db, isolation_level=None) as conn:
        await define_functions(conn)
        assert await upgrade(conn, schema=old_schema, steps={}) == 8
        await conn.execute("INSERT INTO channels VALUES ('floor', 'native', 0)")
        for n, text in enumerate(["野村経由で流して", "ストップ移動 stop moved"]):
            await conn.execute(
                "INSERT INTO source_messages (id, source_kind, channel_id, message_id, "
                "observed_seq, content_hash, content, origin, created_us, event_us, "
                "observed_us, is_current) VALUES (?, 'native', 'floor', ?, ?, ?, ?, "
                "'bridge', ?, ?, ?, 1)",
                (n + 1, f"m{n}", n + 1, f"h{n}", text, n, n, n),
            )
            await conn.execute(
                "INSERT INTO source_fts (rowid, content) VALUES (?, ?)", (n + 1, text)
            )
        await conn.execute(
            "INSERT INTO recall_blocks (seq, id, source_kind, channel_id, group_key, kind, "
            "text, origin, sources, trust_authors, from_us, to_us, sparse, score, "
            "generated_us, processor) VALUES (1, 'b1', 'native', 'floor', 'g', 'rollup', "
            "'みずほのまとめ', 'bridge', '[]', '[]', 0, 1, 1, 0, 0, 'rules')"
        )
        await conn.execute("INSERT INTO block_fts (rowid, text) VALUES (1, 'みずほのまとめ')")
        held_whole = await conn.execute_fetchall(
            "SELECT count(*) FROM search_index WHERE search_index MATCH '\"野村\"'"
        )
        assert list(held_whole) == [(0,)]
    store = await Store.open(db)  # migrates 8 -> 9 -> 10
    await store.close()
    fresh = tmp_path / "fresh.db"
    await (await Store.open(fresh)).close()
    conn2 = sqlite3.connect(db)
    try:
        assert conn2.execute("PRAGMA user_version").fetchone() == (10,)
        # the totals count a run's characters as words: computed again
        lengths = sum(doc_length(t) for t in ["野村経由で流して", "ストップ移動 stop moved"])
        assert conn2.execute("SELECT docs, tokens FROM search_channels").fetchall() == [
            (3, lengths + doc_length("みずほのまとめ"))
        ]
        for table, word, count in [
            ("search_index", '"野村"', 1),
            ("search_index", '"スト トッ ップ"', 1),
            ("search_index", "stop", 1),
            ("search_index", '"みず ずほ"', 1),
            ("source_fts", '"野村"', 1),
            ("source_fts", "moved", 1),
            ("block_fts", '"みず ずほ"', 1),
        ]:
            got = conn2.execute(
                f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (word,)
            ).fetchone()
            assert got == (count,), (table, word)
        schema = "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name"
        new = sqlite3.connect(fresh)
        try:
            assert conn2.execute(schema).fetchall() == new.execute(schema).fetchall()
        finally:
            new.close()
    finally:
        conn2.close()


def test_a_refused_limit_or_since_names_its_field(desk: tuple[LiveServer, httpx.Client]) -> None:
    """From the trial: ``limit: 101`` and a malformed ``since`` were refused without a
    field to change."""
    _, client = desk
    for path, body, field in [
        ("/v1/tools/search_channel_context", {"query": "円", "limit": 101}, "limit"),
        ("/v1/tools/search_channel_context", {"query": "円", "since": "yesterday"}, "since"),
        ("/v1/tools/get_channel_messages", {"since": "yesterday"}, "since"),
    ]:
        response = client.post(path, json={"channels": ["floor"], **body})
        assert response.status_code == 422, (path, body)
        error = response.json()["error"]
        assert error["code"] == "validation_failed"
        assert [d["field"] for d in error["details"]] == [field]
        assert "yesterday" not in response.text
    response = client.post("/search", json={"channel_ids": ["floor"], "query": "円", "since": "x1"})
    assert response.status_code == 422
    assert [d["field"] for d in response.json()["error"]["details"]] == ["since"]
