-- Version 3: the LLM rollup cache and the durable daily spend ledger.
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
