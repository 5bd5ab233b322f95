"""The PostgreSQL dialect: the statement rewrite, and search terms equal to SQLite's."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import ingest, native_commands
from channel_memory.kernel.config import load_settings
from channel_memory.store import Store
from channel_memory.store.database import redacted
from channel_memory.store.postgres.dialect import translate
from channel_memory.store.search import stem, tokens
from channel_memory.store.terms import doc_length, index_terms
from channel_memory.worker.runner import Worker, derive_hook, derive_settings
from tests.conftest import FakeClock, message_event


def test_positional_placeholders_are_numbered_in_order() -> None:
    assert translate("SELECT a FROM t WHERE b = ? AND c IN (?, ?)") == (
        "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)",
        (),
    )


def test_numbered_placeholders_keep_their_number_and_plain_ones_follow() -> None:
    text, _ = translate("DELETE FROM t WHERE a = ?1 AND id IN (SELECT id FROM t WHERE a = ?1 "
                        "LIMIT -1 OFFSET ?2)")  # fmt: skip
    assert text == (
        "DELETE FROM t WHERE a = $1 AND id IN (SELECT id FROM t WHERE a = $1 LIMIT ALL OFFSET $2)"
    )
    assert translate("SELECT ?2, ?")[0] == "SELECT $2, $3"


def test_named_placeholders_become_numbers_in_first_use_order() -> None:
    text, names = translate("UPDATE t SET a = :a, b = :b WHERE id = :id AND a <> :a")
    assert text == "UPDATE t SET a = $1, b = $2 WHERE id = $3 AND a <> $1"
    assert names == ("a", "b", "id")


def test_literals_identifiers_and_casts_are_left_alone() -> None:
    sql = "SELECT '?', 'it''s :x ?', \"we?ird\", doc::json, 'LIMIT -1' FROM t WHERE a = ?"
    assert translate(sql)[0] == (
        "SELECT '?', 'it''s :x ?', \"we?ird\", doc::json, 'LIMIT -1' FROM t WHERE a = $1"
    )


def test_json_each_and_index_hints_are_rewritten() -> None:
    sql = "SELECT x FROM t WHERE id IN (SELECT value FROM json_each(?)) AND +channel_id = ?"
    assert translate(sql)[0] == (
        "SELECT x FROM t WHERE id IN (SELECT value FROM cm_json_each($1)) AND channel_id = $2"
    )
    # a binary plus is arithmetic, not a hint
    assert translate("SELECT coalesce(max(id), 0) + 1, a+1 FROM t")[0] == (
        "SELECT coalesce(max(id), 0) + 1, a+1 FROM t"
    )


def _vocabulary() -> list[str]:
    """Words of text the team did not write for this test: the evaluation sets."""
    words: set[str] = set()
    for path in [
        *sorted(Path("tests/data/decisions").glob("*.jsonl")),
        *sorted(Path("bench/data").glob("*.jsonl")),
    ]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                words.update(tokens(json.dumps(json.loads(line), ensure_ascii=False)))
    return sorted(words)


def _stems_in(pg_url: str, words: list[str]) -> list[tuple[str, list[str]]]:
    """Each word with the search terms PostgreSQL's index makes of it."""

    async def run() -> list[tuple[str, list[str]]]:
        store = await Store.open(pg_url)
        await store.close()
        conn = await asyncpg.connect(pg_url)
        try:
            rows = await conn.fetch(
                "SELECT word, cm_terms(word) FROM unnest($1::text[]) AS word", words
            )
            return [(row[0], list(row[1])) for row in rows]
        finally:
            await conn.close()

    return asyncio.run(run())


def test_search_terms_are_the_stems_sqlite_computes(pg_url: str) -> None:
    """The PostgreSQL index stems each word as the ranked search's scorer (and FTS5's
    porter tokenizer on SQLite) does, over every word of the evaluation data."""
    vocabulary = _vocabulary()
    assert len(vocabulary) > 3000
    differ = [
        (w, terms)
        for w, terms in _stems_in(pg_url, vocabulary)
        if sorted(terms) != sorted({stem(t) for t in index_terms(w)})
    ]
    assert differ == []


# Porter's suffixes after stems of measure 0 to 2, and the step-2 rules where FTS5's
# reference C version departs from Snowball ("bli" -> "ble", "logi" -> "log"): words that
# need not be in any text, so every rule and its measure condition is tried.
SUFFIXES = (
    "bli", "blis", "bly", "blies", "logi", "logis", "logy", "logies", "abli", "alli",
    "entli", "eli", "ousli", "aliti", "iviti", "biliti", "ational", "tional", "enci",
    "anci", "izer", "ization", "ation", "ator", "alism", "iveness", "fulness", "ousness",
    "icate", "ative", "alize", "iciti", "ical", "ful", "ness", "al", "ance", "ence", "er",
    "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "sion", "tion", "ou",
    "ism", "ate", "iti", "ous", "ive", "ize", "e", "ll", "ing", "ed", "eed", "ies",
    "sses", "s", "y", "li", "bliss", "blied", "blying", "blyed", "bliing", "logied",
    "logying", "logyed", "logiing",
)  # fmt: skip
STEMS = ("a", "ab", "af", "affai", "tab", "sta", "hope", "rel", "con", "tr", "gener",
         "sens", "adj", "st", "probab", "possib", "terr", "hyd", "ana", "feas")  # fmt: skip


# step 1b undoubles a consonant before "-ed"/"-ing": every consonant, after a stem with
# and without a vowel
DOUBLED = tuple(
    f"{head}{c}{c}{tail}"
    for c in "bcdfghjklmnpqrstvwxyz"
    for head in ("tre", "re", "str", "a")
    for tail in ("ed", "ing", "ings", "er")
)


def test_every_porter_rule_stems_as_fts5_does(pg_url: str) -> None:
    words = sorted({a + b for a in STEMS for b in SUFFIXES if len(a + b) >= 3} | set(DOUBLED))
    assert len(words) > 1000
    differ = [(w, terms) for w, terms in _stems_in(pg_url, words) if terms != [stem(w)]]
    assert differ == []


# cm_porter_c as schema version 7 defined it: "-bly"/"-blies" and "-logy"/"-logies" only
PORTER_C_V7 = """CREATE OR REPLACE FUNCTION cm_porter_c(word TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE
        WHEN substring(word FROM '^(.*)bl(?:y|ies)$') ~ '([aeiou][^aeiou]|[^aeiou]y[^aeiou])'
            THEN regexp_replace(word, 'bl(y|ies)$', 'ble')
        WHEN substring(word FROM '^(.*)log(?:y|ies)$') ~ '([aeiou][^aeiou]|[^aeiou]y[^aeiou])'
            THEN regexp_replace(word, 'log(y|ies)$', 'log')
        ELSE word END $$"""
INDEXED = "SELECT channel_id, 0, id, content FROM source_messages WHERE is_current = 1 AND deleted = 0 AND forgotten_us IS NULL"  # noqa: E501
SPARSE = "SELECT channel_id, 1, seq, text FROM recall_blocks WHERE sparse = 1"


def test_version_8_indexes_again_what_version_7_stemmed_apart(pg_url: str) -> None:
    """A store indexed under schema version 7 (which kept "affaibli" whole and "trekking"
    as trekk, so a search for another form missed them) is upgraded: its stemmer
    replaced, its messages' and sparse blocks' terms and the channels' totals exactly
    what a store created at version 8 holds."""
    texts = [
        "Le dollar s'est affaibli contre le franc, on garde le short",
        "hydrology desk: the logis are in, possibly tomorrow; trekking, revved, stryyed",
        "nothing to stem differently here",
        # a run of chatter the worker rolls up into a sparse block that quotes it
        "trekking",
        "lol trekking",
        "trekking again",
        "ok trekking",
    ]
    state = (
        "SELECT (SELECT array_agg(term || ':' || key ORDER BY term, key) FROM search_terms),"
        " (SELECT array_agg(channel_id || ':' || docs || ':' || tokens ORDER BY channel_id)"
        " FROM search_channels), (SELECT version FROM channel_memory_schema),"
        " pg_get_functiondef('cm_porter_c(text)'::regprocedure)"
    )

    async def run() -> tuple[Any, Any, Any]:
        store = await Store.open(pg_url)
        try:
            events = [
                message_event(f"m{n}", text, created_at=f"2026-05-21T16:{n:02d}:00Z")
                for n, text in enumerate(texts)
            ]
            batch = IngestBatch.model_validate({"events": events})
            config = load_settings(None, db=pg_url)
            clock = FakeClock()
            derive = derive_hook(derive_settings(config))
            await ingest(
                store, ["floor"], native_commands(batch.events), now_us=clock.now_us, derive=derive
            )
            worker = Worker(store, config, clock)
            await worker.prepare()
            await worker.drain()
        finally:
            await store.close()
        conn = await asyncpg.connect(pg_url)
        try:
            fresh = await conn.fetchrow(state)
            # index the store again as version 7 did, and say it is at version 7
            async with conn.transaction():
                for rows in (INDEXED, SPARSE):
                    await conn.execute(f"SELECT cm_unindex(c, k, i, t) FROM ({rows}) d(c, k, i, t)")
                await conn.execute(PORTER_C_V7)
                for rows in (INDEXED, SPARSE):
                    await conn.execute(f"SELECT cm_index(c, k, i, t) FROM ({rows}) d(c, k, i, t)")
                await conn.execute("UPDATE channel_memory_schema SET version = 7")
            old = await conn.fetchrow(state)
        finally:
            await conn.close()
        store = await Store.open(pg_url)  # migrates 7 -> 8
        await store.close()
        conn = await asyncpg.connect(pg_url)
        try:
            upgraded = await conn.fetchrow(state)
        finally:
            await conn.close()
        return fresh, old, upgraded

    fresh, old, upgraded = asyncio.run(run())
    assert fresh[2] == 10 and old[2] == 7
    assert any(t.startswith("affaibli:") for t in old[0])  # version 7's stem, kept whole
    assert any(t.startswith("trekk:") for t in old[0]) and any(
        t.startswith("trek:") for t in fresh[0]
    )
    assert any(t.startswith("stryi:") for t in old[0])
    # a sparse block (key kind 1) held a version-7 term too: the block branch ran
    assert any(t.startswith("trekk:") and (int(t.split(":")[1]) >> 40) & 1 == 1 for t in old[0])
    assert not any(t.startswith("affaibli:") for t in fresh[0])
    assert old[1] == fresh[1]
    assert tuple(upgraded) == tuple(fresh)


@pytest.mark.parametrize(
    "text",
    [
        "Approved: routing the USDJPY order to desk-B, café généralement running",
        "Stop to BE on ES_F; TP1 hit — lifted 5k AAPL @ 189.40 (was 189.10)",
        "Übernahme der Position: Stopp auf 1.0850 gesetzt, Größe halbiert",
        "assembly assemblies biology apology apologies ably tably incredibly humbly "
        "possibly feasibly doubly hydrology logy nobly",
    ],
)
def test_document_terms_match_the_scorers_tokens(pg_url: str, text: str) -> None:
    async def run() -> list[str]:
        store = await Store.open(pg_url)
        await store.close()
        conn = await asyncpg.connect(pg_url)
        try:
            return sorted(await conn.fetchval("SELECT cm_terms($1)", text))
        finally:
            await conn.close()

    assert asyncio.run(run()) == sorted({stem(t) for t in tokens(text)})


def test_a_urls_password_never_reaches_the_output(pg_url: str, tmp_path: Path) -> None:
    """The URL's password is redacted wherever the database is named: the startup line."""
    assert redacted("postgresql://memory:s3cr3t@db:5432/cm") == "postgresql://memory:***@db:5432/cm"
    assert redacted("postgresql://memory@db/cm") == "postgresql://memory@db/cm"
    assert redacted(tmp_path / "cm.db") == str(tmp_path / "cm.db")
    # a review: a password in the query string, or with an "@" in it, leaked
    assert redacted("postgresql://db:5432/cm?password=s3cr3t&user=m") == (
        "postgresql://db:5432/cm?password=***&user=m"
    )
    assert (
        redacted("postgresql://memory:s3c@r3t@db:5432/cm") == "postgresql://memory:***@db:5432/cm"
    )
    assert redacted("POSTGRES://m:s3cr3t@db/cm?user=a@b&password=x") == (
        "POSTGRES://m:***@db/cm?user=a@b&password=***"
    )
    with_password = pg_url.replace("postgres@", "postgres:s3cr3t-pw@")  # trust: any password
    process = subprocess.Popen(
        [sys.executable, "-m", "channel_memory", "serve", "--port", "0", "--db", with_password],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CHANNEL_MEMORY_TOKEN": "t0ken-for-this-test"},
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()  # blocks until the line (or the end) comes
        assert "listening on " in banner and "(db: postgresql://postgres:***@" in banner
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=60)
    assert "s3cr3t" not in banner + stderr


WORDS_V8 = r"""
CREATE OR REPLACE FUNCTION cm_fold(doc TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT regexp_replace(normalize(lower(doc), NFKD),
                                '[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]',
                                '', 'g') $$;
CREATE OR REPLACE FUNCTION cm_words(doc TEXT) RETURNS TEXT[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(array_agg(DISTINCT left(word, 500)), '{}')
          FROM regexp_split_to_table(cm_fold(doc), '[^[:alnum:]]+') AS word
          WHERE word <> '' $$;
CREATE OR REPLACE FUNCTION cm_length(doc TEXT) RETURNS BIGINT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT length(doc) - length(replace(doc, ' ', '')) + 1 $$;
DROP FUNCTION cm_run_chars();
REINDEX INDEX source_messages_words;
REINDEX INDEX recall_blocks_words;
"""
"""Version 8's words: split and folded under the content's collation ("C", ASCII only)."""


def test_version_9_indexes_words_of_every_script_and_inside_runs(pg_url: str) -> None:
    """A store indexed under schema version 8 — where a word outside ASCII was never
    indexed (the content's byte-wise collation knows ASCII letters only) and a run of
    Japanese was one word — is upgraded: its literal-match indexes and its terms are
    exactly what a store created at version 9 holds, and the words are found."""
    texts = [
        "ドル円150.20で買いました、野村経由で",
        "Закрыли позицию по нефти, стоп снят",
        "손절가를 올렸습니다",
        "ΜΕΙΩΣΑΜΕ τη θέση",
        "plain english: stop moved to breakeven",
    ]
    lookups = ["野村", "円", "ドル円", "позицию", "ЗАКРЫЛИ", "손절", "μειωσαμε", "150", "breakeven"]
    state = (
        "SELECT (SELECT array_agg(term || ':' || key ORDER BY term, key) FROM search_terms),"
        " (SELECT array_agg(channel_id || ':' || docs || ':' || tokens ORDER BY channel_id)"
        " FROM search_channels), (SELECT version FROM channel_memory_schema),"
        " (SELECT array_agg((SELECT string_agg(message_id, ',' ORDER BY message_id)"
        "  FROM source_messages WHERE cm_words(left(content, 100000)) @> cm_words(w)))"
        "  FROM unnest($1::text[]) AS w)"
    )

    async def run() -> tuple[Any, Any, Any]:
        store = await Store.open(pg_url)
        try:
            events = [
                message_event(f"m{n}", text, created_at=f"2026-05-21T16:{n:02d}:00Z")
                for n, text in enumerate(texts)
            ]
            batch = IngestBatch.model_validate({"events": events})
            config = load_settings(None, db=pg_url)
            await ingest(
                store,
                ["floor"],
                native_commands(batch.events),
                now_us=FakeClock().now_us,
                derive=derive_hook(derive_settings(config)),
            )
        finally:
            await store.close()
        conn = await asyncpg.connect(pg_url)
        try:
            fresh = await conn.fetchrow(state, lookups)
            async with conn.transaction():  # index it again as version 8 did
                for rows in (INDEXED, SPARSE):
                    await conn.execute(f"SELECT cm_unindex(c, k, i, t) FROM ({rows}) d(c, k, i, t)")
                await conn.execute(WORDS_V8)
                for rows in (INDEXED, SPARSE):
                    await conn.execute(f"SELECT cm_index(c, k, i, t) FROM ({rows}) d(c, k, i, t)")
                await conn.execute("UPDATE channel_memory_schema SET version = 8")
            old = await conn.fetchrow(state, lookups)
        finally:
            await conn.close()
        store = await Store.open(pg_url)  # migrates 8 -> 9 -> 10
        await store.close()
        conn = await asyncpg.connect(pg_url)
        try:
            upgraded = await conn.fetchrow(state, lookups)
        finally:
            await conn.close()
        return fresh, old, upgraded

    fresh, old, upgraded = asyncio.run(run())
    assert fresh[2] == 10 and old[2] == 8
    found = dict(zip(lookups, fresh[3], strict=True))
    assert found == {
        "野村": "m0",
        "円": "m0",
        "ドル円": "m0",
        "позицию": "m1",
        "ЗАКРЫЛИ": "m1",
        "손절": "m2",
        "μειωσαμε": "m3",
        "150": "m0",
        "breakeven": "m4",
    }
    # version 8 found the ASCII words only
    assert dict(zip(lookups, old[3], strict=True)) == {
        **dict.fromkeys(lookups),
        "150": "m0",
        "breakeven": "m4",
    }
    assert old[1] != fresh[1]  # a run's characters count in a document's length now
    assert tuple(upgraded) == tuple(fresh)


@pytest.mark.parametrize(
    "text",
    [
        "ドル円150.20で買いました、野村経由で流して ﾄﾞﾙ円",
        "Закрыли позицию по нефти — СТОП снят; ÉTÉ Größe",
        "손절가를 올렸습니다 止损移到保本 USD/JPYを",
    ],
)
def test_raw_text_is_cut_as_the_terms_module_cuts_it(pg_url: str, text: str) -> None:
    """The words of a message as stored (a byte-wise collated column) are the words the
    store's terms module makes of it, in any script."""

    async def run() -> tuple[list[str], int]:
        store = await Store.open(pg_url)
        await store.close()
        conn = await asyncpg.connect(pg_url)
        try:
            words = await conn.fetchval('SELECT cm_words($1::text COLLATE "C")', text)
            length = await conn.fetchval('SELECT cm_length($1::text COLLATE "C")', text)
            return sorted(words), length
        finally:
            await conn.close()

    assert asyncio.run(run()) == (sorted(set(index_terms(text))), doc_length(text))


def test_a_user_who_may_not_create_the_schema_is_refused_in_one_line(pg_url: str) -> None:
    # a review: a role without CREATE on schema public (PostgreSQL 15's default for one
    # that does not own the database) gave a traceback at every command's start
    async def make_role() -> None:
        conn = await asyncpg.connect(pg_url)
        try:
            await conn.execute("DROP ROLE IF EXISTS cm_reader")
            await conn.execute("CREATE ROLE cm_reader LOGIN")
            await conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        finally:
            await conn.close()

    asyncio.run(make_role())
    url = pg_url.replace("postgres@", "cm_reader:s3cr3t@")
    result = subprocess.run(
        [sys.executable, "-m", "channel_memory", "worker", "--once", "--db", url],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "s3cr3t" not in result.stderr
    assert result.stderr.startswith("channel-memory: cannot open the database at postgresql://")
    assert "InsufficientPrivilegeError" in result.stderr


def test_version_10_gives_reads_and_the_ledger_whole(pg_url: str) -> None:
    """Migration 0010 on PostgreSQL: a version-9 database's read versions and ledger rows
    (all shown whole) get ``whole = 1``; the schema is then the fresh one's."""
    columns = (
        "SELECT table_name, column_name, data_type, column_default FROM "
        "information_schema.columns WHERE column_name = 'whole' ORDER BY table_name"
    )

    async def run() -> tuple[list[Any], list[Any], list[Any]]:
        store = await Store.open(pg_url)
        await store.close()
        conn = await asyncpg.connect(pg_url)
        try:
            fresh = [tuple(r) for r in await conn.fetch(columns)]
            async with conn.transaction():  # as version 9 was
                await conn.execute("ALTER TABLE consumption_read_versions DROP COLUMN whole")
                await conn.execute("ALTER TABLE consumed_versions DROP COLUMN whole")
                await conn.execute(
                    "INSERT INTO consumed_versions (consumer, channel_id, message_id, "
                    "content_hash, consumed_us) VALUES ('alpha', 'floor', 'm1', 'h1', 1)"
                )
                await conn.execute("UPDATE channel_memory_schema SET version = 9")
        finally:
            await conn.close()
        store = await Store.open(pg_url)  # migrates 9 -> 10
        await store.close()
        conn = await asyncpg.connect(pg_url)
        try:
            upgraded = [tuple(r) for r in await conn.fetch(columns)]
            ledger = [
                tuple(r)
                for r in await conn.fetch(
                    "SELECT message_id, whole FROM consumed_versions WHERE consumer = 'alpha'"
                )
            ]
            version = await conn.fetchval("SELECT version FROM channel_memory_schema")
        finally:
            await conn.close()
        return fresh, upgraded, [*ledger, version]

    fresh, upgraded, rest = asyncio.run(run())
    assert len(fresh) == 2 and upgraded == fresh
    assert rest == [("m1", 1), 10]
