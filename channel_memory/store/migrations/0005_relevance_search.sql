-- Version 5: relevance search. A stemming index over messages and sparse blocks, with
-- per-channel statistics, built here from the rows already stored (the word count
-- seeds the token total; writes keep it exact from then on).
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
INSERT INTO search_channels (channel_id, slot, docs, tokens)
SELECT channel_id, row_number() OVER (ORDER BY channel_id), 0, 0 FROM channels;
INSERT INTO search_index (rowid, content)
SELECT (c.slot << 41) | m.id, m.content
FROM source_messages AS m JOIN search_channels AS c ON c.channel_id = m.channel_id
WHERE m.is_current = 1 AND m.deleted = 0 AND m.forgotten_us IS NULL;
INSERT INTO search_index (rowid, content)
SELECT (c.slot << 41) | (1 << 40) | b.seq, b.text
FROM recall_blocks AS b JOIN search_channels AS c ON c.channel_id = b.channel_id
WHERE b.sparse = 1;
UPDATE search_channels SET
    docs = (SELECT count(*) FROM source_messages AS m WHERE m.channel_id = search_channels.channel_id
            AND m.is_current = 1 AND m.deleted = 0 AND m.forgotten_us IS NULL)
        + (SELECT count(*) FROM recall_blocks AS b WHERE b.channel_id = search_channels.channel_id
           AND b.sparse = 1),
    tokens = (SELECT coalesce(sum(length(m.content) - length(replace(m.content, ' ', '')) + 1), 0)
              FROM source_messages AS m WHERE m.channel_id = search_channels.channel_id
              AND m.is_current = 1 AND m.deleted = 0 AND m.forgotten_us IS NULL)
        + (SELECT coalesce(sum(length(b.text) - length(replace(b.text, ' ', '')) + 1), 0)
           FROM recall_blocks AS b WHERE b.channel_id = search_channels.channel_id
           AND b.sparse = 1);
-- The triggers keep the index and the totals in step with every write path (ingest,
-- edits, deletes, forgets, retention, the worker's blocks). A document's length is
-- its space-separated words.
CREATE TRIGGER search_channel_slot AFTER INSERT ON channels BEGIN
    INSERT OR IGNORE INTO search_channels (channel_id, slot, docs, tokens)
    VALUES (NEW.channel_id, (SELECT coalesce(max(slot), 0) + 1 FROM search_channels), 0, 0);
END;
CREATE TRIGGER search_message_added AFTER INSERT ON source_messages
WHEN NEW.is_current = 1 AND NEW.deleted = 0 AND NEW.forgotten_us IS NULL BEGIN
    INSERT INTO search_index (rowid, content) SELECT (slot << 41) | NEW.id, NEW.content
        FROM search_channels WHERE channel_id = NEW.channel_id;
    UPDATE search_channels SET docs = docs + 1,
        tokens = tokens + length(NEW.content) - length(replace(NEW.content, ' ', '')) + 1
        WHERE channel_id = NEW.channel_id;
END;
CREATE TRIGGER search_message_removed AFTER DELETE ON source_messages
WHEN OLD.is_current = 1 AND OLD.deleted = 0 AND OLD.forgotten_us IS NULL BEGIN
    INSERT INTO search_index (search_index, rowid, content)
        SELECT 'delete', (slot << 41) | OLD.id, OLD.content
        FROM search_channels WHERE channel_id = OLD.channel_id;
    UPDATE search_channels SET docs = max(0, docs - 1),
        tokens = max(0, tokens - (length(OLD.content) - length(replace(OLD.content, ' ', '')) + 1))
        WHERE channel_id = OLD.channel_id;
END;
CREATE TRIGGER search_message_changed_out AFTER UPDATE ON source_messages
WHEN OLD.is_current = 1 AND OLD.deleted = 0 AND OLD.forgotten_us IS NULL
    AND NOT (NEW.is_current = 1 AND NEW.deleted = 0 AND NEW.forgotten_us IS NULL
             AND NEW.content = OLD.content AND NEW.channel_id = OLD.channel_id) BEGIN
    INSERT INTO search_index (search_index, rowid, content)
        SELECT 'delete', (slot << 41) | OLD.id, OLD.content
        FROM search_channels WHERE channel_id = OLD.channel_id;
    UPDATE search_channels SET docs = max(0, docs - 1),
        tokens = max(0, tokens - (length(OLD.content) - length(replace(OLD.content, ' ', '')) + 1))
        WHERE channel_id = OLD.channel_id;
END;
CREATE TRIGGER search_message_changed_in AFTER UPDATE ON source_messages
WHEN NEW.is_current = 1 AND NEW.deleted = 0 AND NEW.forgotten_us IS NULL
    AND NOT (OLD.is_current = 1 AND OLD.deleted = 0 AND OLD.forgotten_us IS NULL
             AND NEW.content = OLD.content AND NEW.channel_id = OLD.channel_id) BEGIN
    INSERT INTO search_index (rowid, content) SELECT (slot << 41) | NEW.id, NEW.content
        FROM search_channels WHERE channel_id = NEW.channel_id;
    UPDATE search_channels SET docs = docs + 1,
        tokens = tokens + length(NEW.content) - length(replace(NEW.content, ' ', '')) + 1
        WHERE channel_id = NEW.channel_id;
END;
CREATE TRIGGER search_block_added AFTER INSERT ON recall_blocks WHEN NEW.sparse = 1 BEGIN
    INSERT INTO search_index (rowid, content)
        SELECT (slot << 41) | (1 << 40) | NEW.seq, NEW.text
        FROM search_channels WHERE channel_id = NEW.channel_id;
    UPDATE search_channels SET docs = docs + 1,
        tokens = tokens + length(NEW.text) - length(replace(NEW.text, ' ', '')) + 1
        WHERE channel_id = NEW.channel_id;
END;
CREATE TRIGGER search_block_removed AFTER DELETE ON recall_blocks WHEN OLD.sparse = 1 BEGIN
    INSERT INTO search_index (search_index, rowid, content)
        SELECT 'delete', (slot << 41) | (1 << 40) | OLD.seq, OLD.text
        FROM search_channels WHERE channel_id = OLD.channel_id;
    UPDATE search_channels SET docs = max(0, docs - 1),
        tokens = max(0, tokens - (length(OLD.text) - length(replace(OLD.text, ' ', '')) + 1))
        WHERE channel_id = OLD.channel_id;
END;
