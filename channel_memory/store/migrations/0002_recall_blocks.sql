-- Recall blocks, provenance and worker bookkeeping (the worker issue).

-- Derived: each current message's class and group (see worker/classify.py).
-- Recomputable from the sources and the rules at any time.
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
    group_key TEXT,
    PRIMARY KEY (channel_id, message_id)
) WITHOUT ROWID;
CREATE INDEX derived_messages_by_group
    ON derived_messages (channel_id, class, group_key, created_us, message_id);

-- Derived recall blocks; id is stable while the block's inputs are unchanged.
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
);
CREATE INDEX recall_blocks_by_group ON recall_blocks (channel_id, group_key);
CREATE INDEX recall_blocks_by_window ON recall_blocks (channel_id, to_us);
CREATE INDEX recall_blocks_by_kind ON recall_blocks (channel_id, kind, from_us);
CREATE INDEX recall_blocks_sparse_by_window
    ON recall_blocks (channel_id, to_us) WHERE sparse = 1;

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

-- Full-text index over sparse block text (rowid = recall_blocks.seq).
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

-- The feed counts readable messages of a window from the index alone, and reads
-- every version of a window for as_of views.
DROP INDEX source_messages_current_by_time;
CREATE INDEX source_messages_by_time
    ON source_messages (channel_id, created_us);
CREATE INDEX source_messages_readable_by_time
    ON source_messages (channel_id, created_us)
    WHERE is_current = 1 AND deleted = 0;
