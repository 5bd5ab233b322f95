-- channel-memory: the canonical DDL of the current schema version.
-- A fresh database is created from this file; an older one is brought here by
-- the numbered migrations in channel_memory/store/migrations/. A test checks
-- that both paths give the same schema.
-- Times are integer microseconds since the Unix epoch, UTC (columns ending _us).

PRAGMA user_version = 10;

-- Every channel seen, with the source kind it belongs to: channel ids are unique
-- across source kinds, so a handle "<channel_id>/<message_id>" is unambiguous.
CREATE TABLE channels (
    channel_id TEXT PRIMARY KEY,
    source_kind TEXT NOT NULL,
    first_seen_us INTEGER NOT NULL
) WITHOUT ROWID;

-- One row per distinct content_hash of a message (a version). Authoritative.
CREATE TABLE source_messages (
    id INTEGER PRIMARY KEY,
    source_kind TEXT NOT NULL,
    channel_id TEXT NOT NULL REFERENCES channels(channel_id),
    message_id TEXT NOT NULL,
    observed_seq INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    content TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    author_id TEXT,
    author_name TEXT,
    author_kind TEXT,
    origin TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    edited_us INTEGER,
    deleted_us INTEGER,
    -- latest event time observed for this version (edited_at, else created_at,
    -- or deleted_at): the newest one is the current version
    event_us INTEGER NOT NULL,
    observed_us INTEGER NOT NULL,
    is_current INTEGER NOT NULL,
    superseded_by INTEGER,
    reply_to TEXT,
    thread_id TEXT,
    attachments TEXT,
    tags TEXT,
    meta TEXT,
    forgotten_us INTEGER,
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

-- Full-text index over the current, non-deleted, non-forgotten version of each
-- message; rowid = source_messages.id. Maintained by the single writer, which gives it
-- each message's index text (channel_memory/store/terms.py), not the message itself.
CREATE VIRTUAL TABLE source_fts USING fts5(
    content,
    content = '',
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Messages whose derived blocks must be recomputed. Re-marking a message gives
-- it a new seq, so the worker only clears markers it has actually processed.
CREATE TABLE dirty_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    source_kind TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    marked_us INTEGER NOT NULL,
    UNIQUE (source_kind, channel_id, message_id)
);

-- Periods the bridge reports it may have missed messages for.
CREATE TABLE coverage_gaps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id TEXT NOT NULL,
    from_us INTEGER NOT NULL,
    to_us INTEGER NOT NULL,
    reason TEXT,
    created_us INTEGER NOT NULL,
    resolved_us INTEGER
);
CREATE INDEX coverage_gaps_by_channel ON coverage_gaps (channel_id, to_us);

-- Message identities that were forgotten: a replayed message is acknowledged
-- and not stored again. Holds ids only.
CREATE TABLE forgotten_messages (
    source_kind TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    forgotten_us INTEGER NOT NULL,
    PRIMARY KEY (source_kind, channel_id, message_id)
) WITHOUT ROWID;

-- The content-free audit trail of forgets.
CREATE TABLE forget_ledger (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id TEXT NOT NULL,
    message_id TEXT,
    author_id TEXT,
    reason TEXT,
    versions_forgotten INTEGER NOT NULL,
    forgotten_us INTEGER NOT NULL
);

-- Physical erasure still owed after a forget (index merge and WAL truncation).
CREATE TABLE pending_erasures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    requested_us INTEGER NOT NULL
);

-- Derived: each current message's class and group (see worker/classify.py).
-- Recomputable from the sources and the rules at any time. A reply's class may read
-- the message it replies to (parent_id, stored or not yet); a reply deciding on it
-- answers it (answers: its source handle). Added by migration 0004, hence their place.
CREATE TABLE derived_messages (
    source_kind TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    author TEXT,
    class TEXT NOT NULL,
    event_type TEXT,
    score REAL NOT NULL,
    group_key TEXT, parent_id TEXT, answers TEXT,
    PRIMARY KEY (channel_id, message_id)
) WITHOUT ROWID;
CREATE INDEX derived_messages_by_group
    ON derived_messages (channel_id, class, group_key, created_us, message_id);
CREATE INDEX derived_messages_by_parent
    ON derived_messages (channel_id, parent_id) WHERE parent_id IS NOT NULL;

-- Derived recall blocks; id is stable while the block's inputs are unchanged.
-- answers: a decision by reply, the source handle of the message it decides on
-- (added by migration 0004, hence its place).
CREATE TABLE recall_blocks (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    source_kind TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    group_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    event_type TEXT,
    text TEXT NOT NULL,
    -- hard events: the text cut to its decision-bearing lines (NULL when the same)
    cut_text TEXT,
    -- single-source blocks: the author name (else id) the feed shows
    author TEXT,
    -- the sources' origin when they share one, else 'mixed'
    origin TEXT NOT NULL,
    -- the covered versions in order, [[message_id, content_hash], ...]: a copy of the
    -- block's rows in block_sources, so a block reads in one row
    sources TEXT NOT NULL,
    -- trust inputs: distinct author ids of the sources whose origin is not system
    -- (JSON; "" for a source without one); [] means every source is system
    trust_authors TEXT NOT NULL,
    from_us INTEGER NOT NULL,
    to_us INTEGER NOT NULL,
    sparse INTEGER NOT NULL,
    score REAL NOT NULL,
    generated_us INTEGER NOT NULL,
    dirty INTEGER NOT NULL DEFAULT 0,
    processor TEXT NOT NULL
, answers TEXT);
CREATE INDEX recall_blocks_by_group ON recall_blocks (channel_id, group_key);
CREATE INDEX recall_blocks_by_window ON recall_blocks (channel_id, to_us);
CREATE INDEX recall_blocks_by_kind ON recall_blocks (channel_id, kind, from_us);
CREATE INDEX recall_blocks_sparse_by_window
    ON recall_blocks (channel_id, to_us) WHERE sparse = 1;
CREATE INDEX recall_blocks_by_answers ON recall_blocks (answers) WHERE answers IS NOT NULL;

-- Provenance: the exact source versions each block covers (many to many).
CREATE TABLE block_sources (
    block_seq INTEGER NOT NULL REFERENCES recall_blocks (seq) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (block_seq, message_id)
) WITHOUT ROWID;
CREATE INDEX block_sources_by_message ON block_sources (channel_id, message_id);

-- Full-text index over sparse block text (rowid = recall_blocks.seq): each block's
-- index text (channel_memory/store/terms.py).
CREATE VIRTUAL TABLE block_fts USING fts5(
    text,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Worker bookkeeping: one lease per database, settings it derived with, and
-- how far back each channel is retained.
CREATE TABLE worker_lease (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    holder TEXT NOT NULL,
    expires_us INTEGER NOT NULL
);
CREATE TABLE worker_state (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE channel_retention (
    channel_id TEXT PRIMARY KEY,
    retained_from_us INTEGER NOT NULL
) WITHOUT ROWID;

-- LLM rollups (optional). A cache entry per window asked of a model, keyed by the
-- model, the prompt version and the sorted message_id@content_hash set, so an
-- unchanged window is never paid for twice. status 'rejected' remembers output
-- that failed validation, so the same window is not bought again.
CREATE TABLE llm_cache (
    key TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL,
    model TEXT NOT NULL,
    status TEXT NOT NULL,
    kind TEXT,
    text TEXT,
    score REAL,
    reason TEXT,
    created_us INTEGER NOT NULL
) WITHOUT ROWID;
-- The messages each cache entry was computed from: a forget or retention drop of
-- any of them deletes the entry.
CREATE TABLE llm_cache_sources (
    cache_key TEXT NOT NULL REFERENCES llm_cache (key) ON DELETE CASCADE,
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    PRIMARY KEY (cache_key, message_id)
) WITHOUT ROWID;
CREATE INDEX llm_cache_sources_by_message ON llm_cache_sources (channel_id, message_id);
-- Daily LLM spend per channel and for the whole deployment (channel_id ''):
-- reserved before each call, settled after it, so caps hold across crashes.
CREATE TABLE llm_usage (
    day_us INTEGER NOT NULL,
    channel_id TEXT NOT NULL,
    calls INTEGER NOT NULL DEFAULT 0,
    usd REAL NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    rejected INTEGER NOT NULL DEFAULT 0,
    cache_hits INTEGER NOT NULL DEFAULT 0,
    -- the cap that stopped calls that day, when one did
    capped TEXT,
    PRIMARY KEY (day_us, channel_id)
) WITHOUT ROWID;
-- Model-assisted detection (optional, llm.detect). One row per promoted message
-- version: an edit (a new content_hash) leaves the row without effect, a forget or
-- a retention drop deletes it. Only ids and the decision type: never any text.
CREATE TABLE llm_promotions (
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    event_type TEXT NOT NULL,
    processor TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    PRIMARY KEY (channel_id, message_id, content_hash)
) WITHOUT ROWID;

-- Relevance search (see channel_memory/store/search.py). Each channel's slot makes its
-- postings one rowid range of search_index; docs and tokens are the channel's
-- indexed documents and their tokens, for BM25's statistics.
CREATE TABLE search_channels (
    channel_id TEXT PRIMARY KEY,
    slot INTEGER NOT NULL UNIQUE,
    docs INTEGER NOT NULL,
    tokens INTEGER NOT NULL
) WITHOUT ROWID;
-- Contentless stemming index over current readable messages and sparse blocks;
-- rowid = slot << 41 | kind << 40 | id (kind 0: source_messages.id, 1: recall_blocks.seq).
CREATE VIRTUAL TABLE search_index USING fts5(
    content,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
-- The triggers keep the index and the totals in step with every write path (ingest,
-- edits, deletes, forgets, retention, the worker's blocks). A document's length is
-- its space-separated words and its characters written without spaces (cm_length);
-- the index is given its index text (cm_index_text; both defined by the connection).
CREATE TRIGGER search_channel_slot AFTER INSERT ON channels BEGIN
    INSERT OR IGNORE INTO search_channels (channel_id, slot, docs, tokens)
    VALUES (NEW.channel_id, (SELECT coalesce(max(slot), 0) + 1 FROM search_channels), 0, 0);
END;
CREATE TRIGGER search_message_added AFTER INSERT ON source_messages
WHEN NEW.is_current = 1 AND NEW.deleted = 0 AND NEW.forgotten_us IS NULL BEGIN
    INSERT INTO search_index (rowid, content) SELECT (slot << 41) | NEW.id, cm_index_text(NEW.content)
        FROM search_channels WHERE channel_id = NEW.channel_id;
    UPDATE search_channels SET docs = docs + 1,
        tokens = tokens + cm_length(NEW.content)
        WHERE channel_id = NEW.channel_id;
END;
CREATE TRIGGER search_message_removed AFTER DELETE ON source_messages
WHEN OLD.is_current = 1 AND OLD.deleted = 0 AND OLD.forgotten_us IS NULL BEGIN
    INSERT INTO search_index (search_index, rowid, content)
        SELECT 'delete', (slot << 41) | OLD.id, cm_index_text(OLD.content)
        FROM search_channels WHERE channel_id = OLD.channel_id;
    UPDATE search_channels SET docs = max(0, docs - 1),
        tokens = max(0, tokens - cm_length(OLD.content))
        WHERE channel_id = OLD.channel_id;
END;
CREATE TRIGGER search_message_changed_out AFTER UPDATE ON source_messages
WHEN OLD.is_current = 1 AND OLD.deleted = 0 AND OLD.forgotten_us IS NULL
    AND NOT (NEW.is_current = 1 AND NEW.deleted = 0 AND NEW.forgotten_us IS NULL
             AND NEW.content = OLD.content AND NEW.channel_id = OLD.channel_id) BEGIN
    INSERT INTO search_index (search_index, rowid, content)
        SELECT 'delete', (slot << 41) | OLD.id, cm_index_text(OLD.content)
        FROM search_channels WHERE channel_id = OLD.channel_id;
    UPDATE search_channels SET docs = max(0, docs - 1),
        tokens = max(0, tokens - cm_length(OLD.content))
        WHERE channel_id = OLD.channel_id;
END;
CREATE TRIGGER search_message_changed_in AFTER UPDATE ON source_messages
WHEN NEW.is_current = 1 AND NEW.deleted = 0 AND NEW.forgotten_us IS NULL
    AND NOT (OLD.is_current = 1 AND OLD.deleted = 0 AND OLD.forgotten_us IS NULL
             AND NEW.content = OLD.content AND NEW.channel_id = OLD.channel_id) BEGIN
    INSERT INTO search_index (rowid, content) SELECT (slot << 41) | NEW.id, cm_index_text(NEW.content)
        FROM search_channels WHERE channel_id = NEW.channel_id;
    UPDATE search_channels SET docs = docs + 1,
        tokens = tokens + cm_length(NEW.content)
        WHERE channel_id = NEW.channel_id;
END;
CREATE TRIGGER search_block_added AFTER INSERT ON recall_blocks WHEN NEW.sparse = 1 BEGIN
    INSERT INTO search_index (rowid, content)
        SELECT (slot << 41) | (1 << 40) | NEW.seq, cm_index_text(NEW.text)
        FROM search_channels WHERE channel_id = NEW.channel_id;
    UPDATE search_channels SET docs = docs + 1,
        tokens = tokens + cm_length(NEW.text)
        WHERE channel_id = NEW.channel_id;
END;
CREATE TRIGGER search_block_removed AFTER DELETE ON recall_blocks WHEN OLD.sparse = 1 BEGIN
    INSERT INTO search_index (search_index, rowid, content)
        SELECT 'delete', (slot << 41) | (1 << 40) | OLD.seq, cm_index_text(OLD.text)
        FROM search_channels WHERE channel_id = OLD.channel_id;
    UPDATE search_channels SET docs = max(0, docs - 1),
        tokens = max(0, tokens - cm_length(OLD.text))
        WHERE channel_id = OLD.channel_id;
END;

-- Consumption (see channel_memory/store/consumption.py): which message versions each
-- consumer handled, and the reads still waiting to be settled. Ids and hashes only.
-- A read: the versions one answer showed complete to one consumer. outcome is NULL
-- while pending, then 'handled' or 'failed'; versions counts the versions it holds.
CREATE TABLE consumption_reads (
    read_id TEXT PRIMARY KEY,
    consumer TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    versions INTEGER NOT NULL,
    outcome TEXT,
    settled_us INTEGER
) WITHOUT ROWID;
CREATE INDEX consumption_reads_by_consumer ON consumption_reads (consumer, created_us);
CREATE INDEX consumption_reads_by_age ON consumption_reads (created_us);
-- The versions of a pending read; dropped once it is settled. whole: 1 shown complete,
-- 0 shown only in part (a summary, a count, a cut; added by migration 0010).
CREATE TABLE consumption_read_versions (
    read_id TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    content_hash TEXT NOT NULL, whole INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (read_id, channel_id, message_id, content_hash)
) WITHOUT ROWID;
CREATE INDEX consumption_read_versions_by_message
    ON consumption_read_versions (channel_id, message_id);
-- The ledger: versions a consumer handled; id orders them, newest last, for the bound.
-- whole: 1 consumed (shown complete), 0 only ever shown in part (a summary, a count, a cut).
CREATE TABLE consumed_versions (
    id INTEGER PRIMARY KEY,
    consumer TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    consumed_us INTEGER NOT NULL, whole INTEGER NOT NULL DEFAULT 1,
    UNIQUE (consumer, channel_id, message_id, content_hash)
);
CREATE INDEX consumed_versions_by_age ON consumed_versions (consumer, id);
CREATE INDEX consumed_versions_by_message ON consumed_versions (channel_id, message_id);
-- Forget and retention take a message's rows with it, on every write path, in the
-- same transaction: a forgotten identity loses every version; a dropped version its own.
CREATE TRIGGER consumption_message_forgotten AFTER INSERT ON forgotten_messages BEGIN
    DELETE FROM consumed_versions
        WHERE channel_id = NEW.channel_id AND message_id = NEW.message_id;
    DELETE FROM consumption_read_versions
        WHERE channel_id = NEW.channel_id AND message_id = NEW.message_id;
END;
CREATE TRIGGER consumption_version_dropped AFTER DELETE ON source_messages BEGIN
    DELETE FROM consumed_versions WHERE channel_id = OLD.channel_id
        AND message_id = OLD.message_id AND content_hash = OLD.content_hash;
    DELETE FROM consumption_read_versions WHERE channel_id = OLD.channel_id
        AND message_id = OLD.message_id AND content_hash = OLD.content_hash;
END;
