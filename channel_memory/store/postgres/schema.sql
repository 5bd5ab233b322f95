-- channel-memory on PostgreSQL: the canonical DDL of the current schema version.
-- The same tables, columns and meanings as the SQLite schema (schema.sql at the
-- top of the source tree; ADR 0030); an older database is brought here by the
-- numbered migrations in channel_memory/store/postgres/migrations/, under an
-- advisory lock so that replicas starting together migrate once.
-- Times are integer microseconds since the Unix epoch, UTC (columns ending _us).
-- Text compares and sorts byte-wise (COLLATE "C"), as SQLite's BINARY does, so
-- both backends order rows, and serve feeds, the same way.

-- The schema version (SQLite keeps it in PRAGMA user_version).
CREATE TABLE channel_memory_schema (
    only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    version BIGINT NOT NULL
);
INSERT INTO channel_memory_schema (version) VALUES (10);

-- What the store's SQL borrows from SQLite, defined here so that one statement runs on
-- both: a JSON array bound as text and read element by element (json_each), JSON
-- read out of text (-> and ->>), and a substring's position (instr).
CREATE FUNCTION cm_json_each(doc TEXT) RETURNS TABLE (value TEXT)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT json_array_elements_text(doc::json) $$;
CREATE FUNCTION cm_json_get(doc TEXT, path INTEGER) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT (doc::json -> path)::text $$;
CREATE FUNCTION cm_json_get_text(doc TEXT, path INTEGER) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT doc::json ->> path $$;
CREATE OPERATOR -> (LEFTARG = TEXT, RIGHTARG = INTEGER, FUNCTION = cm_json_get);
CREATE OPERATOR ->> (LEFTARG = TEXT, RIGHTARG = INTEGER, FUNCTION = cm_json_get_text);
CREATE FUNCTION instr(haystack TEXT, needle TEXT) RETURNS INTEGER
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT strpos(haystack, needle) $$;

-- Words and terms of a text, for the literal match and the ranked search below.
-- Snowball's original Porter stemmer, no stop words.
CREATE TEXT SEARCH DICTIONARY cm_porter (TEMPLATE = snowball, LANGUAGE = porter);
CREATE FUNCTION cm_fold(doc TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN doc !~ '[^\x01-\x7f]' THEN lower(doc)
                      ELSE (SELECT CASE WHEN f ~ '[\u1100-\u11ff\u3099\u309a]' THEN normalize(f, NFC) ELSE f END
                            FROM regexp_replace(normalize(lower(doc COLLATE "default"), NFKD),
                                '[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]',
                                '', 'g') AS f) END $$;
-- FTS5's Porter (the reference C version) departs from the original algorithm that
-- Snowball's 'porter' implements in two step-2 rules — "bli" becomes "ble" and "logi"
-- becomes "log" ("assembly": assembl, not assembli; "hydrology": hydrolog; "affaibli":
-- affaibl) — and in step 1b, which undoubles every consonant but l, s and z before a
-- removed "-ed"/"-ing" ("trekking": trek, not trekk). Such a word is given to Snowball
-- as the C version would leave it at that point.
CREATE FUNCTION cm_porter_c(word TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE
        -- step 2's "bli" -> "ble", "logi" -> "log", where the part before has a measure
        -- over 0 (a vowel followed by a consonant)
        WHEN substring(word FROM '^(.*)bl(?:y|ies|i|is|ied|ying|yed|iing)$')
             ~ '([aeiou][^aeiou]|[^aeiou]y[^aeiou])'
            THEN regexp_replace(word, 'bl(y|ies|i|is|ied|ying|yed|iing)$', 'ble')
        WHEN substring(word FROM '^(.*)log(?:y|ies|i|is|ied|ying|yed|iing)$')
             ~ '([aeiou][^aeiou]|[^aeiou]y[^aeiou])'
            THEN regexp_replace(word, 'log(y|ies|i|is|ied|ying|yed|iing)$', 'log')
        -- step 1b undoubles every consonant but l, s and z ("trekking": trek); Snowball
        -- only bb dd ff gg mm nn pp rr tt: the others are undoubled here
        WHEN substring(word FROM '^(.*)(?:cc|hh|jj|kk|qq|vv|ww|xx)(?:ed|ing|ings)$')
             ~ '([aeiou]|[^aeiou]y)'
            THEN regexp_replace(word, '(c|h|j|k|q|v|w|x)\1(ed|ing|ings)$', '\1')
        -- a "y" after a consonant is a vowel, so the "y" after it is a consonant, doubled
        WHEN word ~ '[^aeiouy]yy(?:ed|ing|ings)$'
            THEN regexp_replace(word, 'yy(ed|ing|ings)$', 'y')
        ELSE word END $$;
CREATE FUNCTION cm_stem(word TEXT) RETURNS TEXT
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN length(word) < 3 OR length(word) > 64 OR word ~ '[^\x01-\x7f]'
                      THEN left(word, 500)
                      ELSE coalesce((ts_lexize('cm_porter', cm_porter_c(word)))[1], word) END $$;
-- The characters of text written without spaces (Hangul, kana, CJK ideographs), as a
-- bracket expression's ranges: the ranges of channel_memory/store/terms.py.
CREATE FUNCTION cm_run_chars() RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT '\u1100-\u11ff\u3005-\u3007\u3041-\u3096\u3099-\u309a\u309d-\u309f'
                 '\u30a1-\u30fa\u30fc-\u30ff\u3131-\u318e\u31f0-\u31ff\u3400-\u4dbf'
                 '\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f' $$;
-- The terms of a word holding text written without spaces: its runs cut from the
-- letters around them, each run as its characters and its two-character pieces.
CREATE FUNCTION cm_run_terms(word TEXT) RETURNS TEXT[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT array_agg(term)
          FROM regexp_matches(word, '[' || cm_run_chars() || ']+|[^' || cm_run_chars() || ']+',
                              'g') AS token,
               unnest(CASE WHEN token[1] ~ ('^[' || cm_run_chars() || ']')
                           THEN regexp_split_to_array(token[1], '') || ARRAY(
                               SELECT substr(token[1], i, 2)
                               FROM generate_series(1, length(token[1]) - 1) AS i)
                           ELSE ARRAY[token[1]] END) AS term $$;
-- A text's distinct words, as channel_memory/store/terms.py cuts them (index_terms):
-- runs of letters and digits, folded, a run written without spaces cut from the letters
-- around it and held as its two-character pieces and its characters (a word over 500
-- characters kept to its first 500: an index entry holds ~2.7 kB). Character classes
-- and lower case follow the database's LC_CTYPE, whatever the collation of the text.
CREATE FUNCTION cm_words(doc TEXT) RETURNS TEXT[]
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    -- PL/pgSQL keeps its statements' plans for the session: a SQL function this size was
    -- planned again on every call from another function (cm_terms, the triggers)
    IF doc !~ '[^\x01-\x7f]' THEN  -- ASCII: split and lower as they are
        RETURN (SELECT coalesce(array_agg(DISTINCT left(word, 500)), '{}')
                FROM regexp_split_to_table(lower(doc), '[^[:alnum:]]+') AS word
                WHERE word <> '');
    ELSIF doc !~ ('[' || cm_run_chars() || ']') THEN  -- no run written without spaces
        RETURN (SELECT coalesce(array_agg(DISTINCT left(word, 500)), '{}')
                FROM regexp_split_to_table(cm_fold(doc) COLLATE "default", '[^[:alnum:]]+') AS word
                WHERE word <> '');
    END IF;
    RETURN (SELECT coalesce(array_agg(DISTINCT left(term, 500)), '{}')
            FROM regexp_split_to_table(cm_fold(doc) COLLATE "default", '[^[:alnum:]]+') AS word,
                unnest(CASE WHEN word ~ ('[' || cm_run_chars() || ']') THEN cm_run_terms(word)
                            ELSE ARRAY[word] END) AS term
            WHERE word <> '');
END $$;
-- A text's distinct search terms: its words, stemmed (byte-wise: the stemmer reads
-- ASCII words, and its patterns run twice as fast under "C" as under a locale).
CREATE FUNCTION cm_terms(doc TEXT) RETURNS TEXT[]
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT coalesce(array_agg(DISTINCT cm_stem(word COLLATE "C")), '{}')
          FROM unnest(cm_words(doc)) AS word $$;

-- Every channel seen, with the source kind it belongs to: channel ids are unique
-- across source kinds, so a handle "<channel_id>/<message_id>" is unambiguous.
CREATE TABLE channels (
    channel_id TEXT COLLATE "C" PRIMARY KEY,
    source_kind TEXT COLLATE "C" NOT NULL,
    first_seen_us BIGINT NOT NULL
);

-- One row per distinct content_hash of a message (a version). Authoritative.
CREATE TABLE source_messages (
    id BIGINT PRIMARY KEY,
    source_kind TEXT COLLATE "C" NOT NULL,
    channel_id TEXT COLLATE "C" NOT NULL REFERENCES channels(channel_id),
    message_id TEXT COLLATE "C" NOT NULL,
    observed_seq BIGINT NOT NULL,
    content_hash TEXT COLLATE "C" NOT NULL,
    content TEXT COLLATE "C" NOT NULL,
    deleted BIGINT NOT NULL DEFAULT 0,
    author_id TEXT COLLATE "C",
    author_name TEXT COLLATE "C",
    author_kind TEXT COLLATE "C",
    origin TEXT COLLATE "C" NOT NULL,
    created_us BIGINT NOT NULL,
    edited_us BIGINT,
    deleted_us BIGINT,
    -- latest event time observed for this version (edited_at, else created_at,
    -- or deleted_at): the newest one is the current version
    event_us BIGINT NOT NULL,
    observed_us BIGINT NOT NULL,
    is_current BIGINT NOT NULL,
    superseded_by BIGINT,
    reply_to TEXT COLLATE "C",
    thread_id TEXT COLLATE "C",
    attachments TEXT COLLATE "C",
    tags TEXT COLLATE "C",
    meta TEXT COLLATE "C",
    forgotten_us BIGINT,
    UNIQUE (source_kind, channel_id, message_id, observed_seq)
);
CREATE UNIQUE INDEX source_messages_version
    ON source_messages (source_kind, channel_id, message_id, content_hash)
    WHERE forgotten_us IS NULL;
CREATE INDEX source_messages_by_time
    ON source_messages (channel_id, created_us);
CREATE INDEX source_messages_readable_by_time
    ON source_messages (channel_id, created_us)
    WHERE is_current = 1 AND deleted = 0;
CREATE INDEX source_messages_by_author
    ON source_messages (channel_id, author_id);

-- The literal-match index of the peer search (SQLite: source_fts): the distinct words
-- of the current, non-deleted, non-forgotten version of each message (its first
-- 100,000 characters), folded as unicode61 folds them, no stemming (cm_words below).
CREATE INDEX source_messages_words ON source_messages
    USING gin (cm_words(left(content, 100000)))
    WHERE is_current = 1 AND deleted = 0 AND forgotten_us IS NULL;

-- Messages whose derived blocks must be recomputed. Re-marking a message gives
-- it a new seq, so the worker only clears markers it has actually processed.
CREATE TABLE dirty_messages (
    seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    source_kind TEXT COLLATE "C" NOT NULL,
    channel_id TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C" NOT NULL,
    marked_us BIGINT NOT NULL,
    UNIQUE (source_kind, channel_id, message_id)
);

-- Periods the bridge reports it may have missed messages for.
CREATE TABLE coverage_gaps (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    channel_id TEXT COLLATE "C" NOT NULL,
    from_us BIGINT NOT NULL,
    to_us BIGINT NOT NULL,
    reason TEXT COLLATE "C",
    created_us BIGINT NOT NULL,
    resolved_us BIGINT
);
CREATE INDEX coverage_gaps_by_channel ON coverage_gaps (channel_id, to_us);

-- Message identities that were forgotten: a replayed message is acknowledged
-- and not stored again. Holds ids only.
CREATE TABLE forgotten_messages (
    source_kind TEXT COLLATE "C" NOT NULL,
    channel_id TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C" NOT NULL,
    forgotten_us BIGINT NOT NULL,
    PRIMARY KEY (source_kind, channel_id, message_id)
);

-- The content-free audit trail of forgets.
CREATE TABLE forget_ledger (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    channel_id TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C",
    author_id TEXT COLLATE "C",
    reason TEXT COLLATE "C",
    versions_forgotten BIGINT NOT NULL,
    forgotten_us BIGINT NOT NULL
);

-- Physical erasure still owed after a forget (index merge and WAL truncation).
CREATE TABLE pending_erasures (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    requested_us BIGINT NOT NULL
);

-- Derived: each current message's class and group (see worker/classify.py).
-- Recomputable from the sources and the rules at any time. A reply's class may read
-- the message it replies to (parent_id, stored or not yet); a reply deciding on it
-- answers it (answers: its source handle). Added by migration 0004, hence their place.
CREATE TABLE derived_messages (
    source_kind TEXT COLLATE "C" NOT NULL,
    channel_id TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C" NOT NULL,
    content_hash TEXT COLLATE "C" NOT NULL,
    created_us BIGINT NOT NULL,
    author TEXT COLLATE "C",
    class TEXT COLLATE "C" NOT NULL,
    event_type TEXT COLLATE "C",
    score DOUBLE PRECISION NOT NULL,
    group_key TEXT COLLATE "C", parent_id TEXT COLLATE "C", answers TEXT COLLATE "C",
    PRIMARY KEY (channel_id, message_id)
);
CREATE INDEX derived_messages_by_group
    ON derived_messages (channel_id, class, group_key, created_us, message_id);
CREATE INDEX derived_messages_by_parent
    ON derived_messages (channel_id, parent_id) WHERE parent_id IS NOT NULL;

-- Derived recall blocks; id is stable while the block's inputs are unchanged.
-- answers: a decision by reply, the source handle of the message it decides on
-- (added by migration 0004, hence its place).
CREATE TABLE recall_blocks (
    seq BIGINT PRIMARY KEY,
    id TEXT COLLATE "C" NOT NULL UNIQUE,
    source_kind TEXT COLLATE "C" NOT NULL,
    channel_id TEXT COLLATE "C" NOT NULL,
    group_key TEXT COLLATE "C" NOT NULL,
    kind TEXT COLLATE "C" NOT NULL,
    event_type TEXT COLLATE "C",
    text TEXT COLLATE "C" NOT NULL,
    -- hard events: the text cut to its decision-bearing lines (NULL when the same)
    cut_text TEXT COLLATE "C",
    -- single-source blocks: the author name (else id) the feed shows
    author TEXT COLLATE "C",
    -- the sources' origin when they share one, else 'mixed'
    origin TEXT COLLATE "C" NOT NULL,
    -- the covered versions in order, [[message_id, content_hash], ...]: a copy of the
    -- block's rows in block_sources, so a block reads in one row
    sources TEXT COLLATE "C" NOT NULL,
    -- trust inputs: distinct author ids of the sources whose origin is not system
    -- (JSON; "" for a source without one); [] means every source is system
    trust_authors TEXT COLLATE "C" NOT NULL,
    from_us BIGINT NOT NULL,
    to_us BIGINT NOT NULL,
    sparse BIGINT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    generated_us BIGINT NOT NULL,
    dirty BIGINT NOT NULL DEFAULT 0,
    processor TEXT COLLATE "C" NOT NULL
, answers TEXT COLLATE "C");
CREATE INDEX recall_blocks_by_group ON recall_blocks (channel_id, group_key);
CREATE INDEX recall_blocks_by_window ON recall_blocks (channel_id, to_us);
CREATE INDEX recall_blocks_by_kind ON recall_blocks (channel_id, kind, from_us);
CREATE INDEX recall_blocks_sparse_by_window
    ON recall_blocks (channel_id, to_us) WHERE sparse = 1;
CREATE INDEX recall_blocks_by_answers ON recall_blocks (answers) WHERE answers IS NOT NULL;

-- Provenance: the exact source versions each block covers (many to many).
CREATE TABLE block_sources (
    block_seq BIGINT NOT NULL REFERENCES recall_blocks (seq) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    channel_id TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C" NOT NULL,
    content_hash TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (block_seq, message_id)
);
CREATE INDEX block_sources_by_message ON block_sources (channel_id, message_id);

-- The literal-match index over sparse block text (SQLite: block_fts).
CREATE INDEX recall_blocks_words ON recall_blocks
    USING gin (cm_words(left(text, 100000))) WHERE sparse = 1;

-- Worker bookkeeping: one lease per database, settings it derived with, and
-- how far back each channel is retained.
CREATE TABLE worker_lease (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    holder TEXT COLLATE "C" NOT NULL,
    expires_us BIGINT NOT NULL
);
CREATE TABLE worker_state (
    key TEXT COLLATE "C" PRIMARY KEY,
    value TEXT COLLATE "C" NOT NULL
);
CREATE TABLE channel_retention (
    channel_id TEXT COLLATE "C" PRIMARY KEY,
    retained_from_us BIGINT NOT NULL
);

-- LLM rollups (optional). A cache entry per window asked of a model, keyed by the
-- model, the prompt version and the sorted message_id@content_hash set, so an
-- unchanged window is never paid for twice. status 'rejected' remembers output
-- that failed validation, so the same window is not bought again.
CREATE TABLE llm_cache (
    key TEXT COLLATE "C" PRIMARY KEY,
    channel_id TEXT COLLATE "C" NOT NULL,
    model TEXT COLLATE "C" NOT NULL,
    status TEXT COLLATE "C" NOT NULL,
    kind TEXT COLLATE "C",
    text TEXT COLLATE "C",
    score DOUBLE PRECISION,
    reason TEXT COLLATE "C",
    created_us BIGINT NOT NULL
);
-- The messages each cache entry was computed from: a forget or retention drop of
-- any of them deletes the entry.
CREATE TABLE llm_cache_sources (
    cache_key TEXT COLLATE "C" NOT NULL REFERENCES llm_cache (key) ON DELETE CASCADE,
    channel_id TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (cache_key, message_id)
);
CREATE INDEX llm_cache_sources_by_message ON llm_cache_sources (channel_id, message_id);
-- Daily LLM spend per channel and for the whole deployment (channel_id ''):
-- reserved before each call, settled after it, so caps hold across crashes.
CREATE TABLE llm_usage (
    day_us BIGINT NOT NULL,
    channel_id TEXT COLLATE "C" NOT NULL,
    calls BIGINT NOT NULL DEFAULT 0,
    usd DOUBLE PRECISION NOT NULL DEFAULT 0,
    failures BIGINT NOT NULL DEFAULT 0,
    rejected BIGINT NOT NULL DEFAULT 0,
    cache_hits BIGINT NOT NULL DEFAULT 0,
    -- the cap that stopped calls that day, when one did
    capped TEXT COLLATE "C",
    PRIMARY KEY (day_us, channel_id)
);
-- Model-assisted detection (optional, llm.detect). One row per promoted message
-- version: an edit (a new content_hash) leaves the row without effect, a forget or
-- a retention drop deletes it. Only ids and the decision type: never any text.
CREATE TABLE llm_promotions (
    channel_id TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C" NOT NULL,
    content_hash TEXT COLLATE "C" NOT NULL,
    event_type TEXT COLLATE "C" NOT NULL,
    processor TEXT COLLATE "C" NOT NULL,
    created_us BIGINT NOT NULL,
    PRIMARY KEY (channel_id, message_id, content_hash)
);

-- Relevance search (see channel_memory/store/search.py). Each channel's slot makes its
-- postings one rowid range of search_index; docs and tokens are the channel's
-- indexed documents and their tokens, for BM25's statistics.
CREATE TABLE search_channels (
    channel_id TEXT COLLATE "C" PRIMARY KEY,
    slot BIGINT NOT NULL UNIQUE,
    docs BIGINT NOT NULL,
    tokens BIGINT NOT NULL
);
-- The stemming index over current readable messages and sparse blocks: one row per
-- distinct term of a document (SQLite: the contentless FTS5 table search_index);
-- key = slot << 41 | kind << 40 | id (kind 0: source_messages.id, 1: recall_blocks.seq).
-- A document's terms are its words folded (lower case, no diacritics) and stemmed
-- with the Porter algorithm, words under 3 or over 64 characters and words outside
-- ASCII as they are — what SQLite's 'porter unicode61 remove_diacritics 2' does; a
-- term over 500 characters is kept to its first 500 (a B-tree entry holds ~2.7 kB).
-- The triggers keep the index and the totals in step with every write path (ingest,
-- edits, deletes, forgets, retention, the worker's blocks). A document's length is
-- its space-separated words and its characters written without spaces (cm_length; the
-- same as channel_memory/store/terms.py's doc_length).
CREATE TABLE search_terms (
    term TEXT COLLATE "C" NOT NULL,
    key BIGINT NOT NULL,
    PRIMARY KEY (term, key)
);
CREATE INDEX search_terms_by_key ON search_terms (key);
CREATE FUNCTION cm_length(doc TEXT) RETURNS BIGINT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT length(doc) - length(replace(doc, ' ', '')) + 1
                 + length(regexp_replace(doc COLLATE "default", '[^' || cm_run_chars() || ']+',
                                         '', 'g')) $$;
CREATE FUNCTION cm_index(channel TEXT, kind BIGINT, id BIGINT, doc TEXT) RETURNS VOID
    LANGUAGE sql
    AS $$
    INSERT INTO search_terms (term, key)
        SELECT t, (s.slot << 41) | (kind << 40) | id
        FROM search_channels s, unnest(cm_terms(doc)) AS t WHERE s.channel_id = channel
        ON CONFLICT DO NOTHING;
    UPDATE search_channels SET docs = docs + 1, tokens = tokens + cm_length(doc)
        WHERE channel_id = channel;
    $$;
CREATE FUNCTION cm_unindex(channel TEXT, kind BIGINT, id BIGINT, doc TEXT) RETURNS VOID
    LANGUAGE sql
    AS $$
    DELETE FROM search_terms WHERE term = ANY (cm_terms(doc)) AND key =
        (SELECT (slot << 41) | (kind << 40) | id FROM search_channels WHERE channel_id = channel);
    UPDATE search_channels SET docs = greatest(0, docs - 1),
        tokens = greatest(0, tokens - cm_length(doc))
        WHERE channel_id = channel;
    $$;
CREATE FUNCTION cm_search_channel_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_channels (channel_id, slot, docs, tokens)
        VALUES (NEW.channel_id, (SELECT coalesce(max(slot), 0) + 1 FROM search_channels), 0, 0)
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER search_channel_slot AFTER INSERT ON channels
    FOR EACH ROW EXECUTE FUNCTION cm_search_channel_slot();
CREATE FUNCTION cm_search_message() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    was_in BOOLEAN := TG_OP <> 'INSERT' AND OLD.is_current = 1 AND OLD.deleted = 0
        AND OLD.forgotten_us IS NULL;
    now_in BOOLEAN := TG_OP <> 'DELETE' AND NEW.is_current = 1 AND NEW.deleted = 0
        AND NEW.forgotten_us IS NULL;
BEGIN
    IF was_in AND now_in AND NEW.content = OLD.content AND NEW.channel_id = OLD.channel_id
            AND NEW.id = OLD.id THEN
        RETURN NULL;
    END IF;
    IF was_in THEN
        PERFORM cm_unindex(OLD.channel_id, 0, OLD.id, OLD.content);
    END IF;
    IF now_in THEN
        PERFORM cm_index(NEW.channel_id, 0, NEW.id, NEW.content);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER search_message AFTER INSERT OR UPDATE OR DELETE ON source_messages
    FOR EACH ROW EXECUTE FUNCTION cm_search_message();
CREATE FUNCTION cm_search_block() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.sparse = 1 THEN
            PERFORM cm_unindex(OLD.channel_id, 1, OLD.seq, OLD.text);
        END IF;
    ELSIF NEW.sparse = 1 THEN
        PERFORM cm_index(NEW.channel_id, 1, NEW.seq, NEW.text);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER search_block AFTER INSERT OR DELETE ON recall_blocks
    FOR EACH ROW EXECUTE FUNCTION cm_search_block();

-- Consumption (see channel_memory/store/consumption.py): which message versions each
-- consumer handled, and the reads still waiting to be settled. Ids and hashes only.
-- A read: the versions one answer showed complete to one consumer. outcome is NULL
-- while pending, then 'handled' or 'failed'; versions counts the versions it holds.
CREATE TABLE consumption_reads (
    read_id TEXT COLLATE "C" PRIMARY KEY,
    consumer TEXT COLLATE "C" NOT NULL,
    created_us BIGINT NOT NULL,
    versions BIGINT NOT NULL,
    outcome TEXT COLLATE "C",
    settled_us BIGINT
);
CREATE INDEX consumption_reads_by_consumer ON consumption_reads (consumer, created_us);
CREATE INDEX consumption_reads_by_age ON consumption_reads (created_us);
-- The versions of a pending read; dropped once it is settled. whole: 1 shown complete,
-- 0 shown only in part (a summary, a count, a cut; added by migration 0010).
CREATE TABLE consumption_read_versions (
    read_id TEXT COLLATE "C" NOT NULL,
    channel_id TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C" NOT NULL,
    content_hash TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (read_id, channel_id, message_id, content_hash),
    whole BIGINT NOT NULL DEFAULT 1
);
CREATE INDEX consumption_read_versions_by_message
    ON consumption_read_versions (channel_id, message_id);
-- The ledger: versions a consumer handled; id orders them, newest last, for the bound.
-- whole: 1 consumed (shown complete), 0 only ever shown in part (a summary, a count, a cut).
CREATE TABLE consumed_versions (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    consumer TEXT COLLATE "C" NOT NULL,
    channel_id TEXT COLLATE "C" NOT NULL,
    message_id TEXT COLLATE "C" NOT NULL,
    content_hash TEXT COLLATE "C" NOT NULL,
    consumed_us BIGINT NOT NULL,
    UNIQUE (consumer, channel_id, message_id, content_hash),
    whole BIGINT NOT NULL DEFAULT 1
);
CREATE INDEX consumed_versions_by_age ON consumed_versions (consumer, id);
CREATE INDEX consumed_versions_by_message ON consumed_versions (channel_id, message_id);
-- Forget and retention take a message's rows with it, on every write path, in the
-- same transaction: a forgotten identity loses every version; a dropped version its own.
CREATE FUNCTION cm_consumption_message_forgotten() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM consumed_versions
        WHERE channel_id = NEW.channel_id AND message_id = NEW.message_id;
    DELETE FROM consumption_read_versions
        WHERE channel_id = NEW.channel_id AND message_id = NEW.message_id;
    RETURN NULL;
END $$;
CREATE TRIGGER consumption_message_forgotten AFTER INSERT ON forgotten_messages
    FOR EACH ROW EXECUTE FUNCTION cm_consumption_message_forgotten();
CREATE FUNCTION cm_consumption_version_dropped() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM consumed_versions WHERE channel_id = OLD.channel_id
        AND message_id = OLD.message_id AND content_hash = OLD.content_hash;
    DELETE FROM consumption_read_versions WHERE channel_id = OLD.channel_id
        AND message_id = OLD.message_id AND content_hash = OLD.content_hash;
    RETURN NULL;
END $$;
CREATE TRIGGER consumption_version_dropped AFTER DELETE ON source_messages
    FOR EACH ROW EXECUTE FUNCTION cm_consumption_version_dropped();
