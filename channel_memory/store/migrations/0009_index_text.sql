-- Version 9: the full-text indexes hold a document's index text (channel_memory/store/
-- terms.py): its tokens folded, and each run of text written without spaces (Chinese,
-- Japanese, Korean) cut into its two-character pieces and its characters, so a word
-- inside such a run is found. The relevance index's triggers give it
-- cm_index_text(...) (a function the writer's connection defines) in place of the raw
-- text; the messages' literal index becomes contentless (what it holds is not the
-- messages' text, so it no longer names source_messages as its content); and the three
-- indexes are built again from the documents they hold. A document's length (for
-- BM25) now counts each character written without spaces as a word (cm_length, also
-- the writer's): the channels' totals are computed again.
DROP TRIGGER search_message_added;
DROP TRIGGER search_message_removed;
DROP TRIGGER search_message_changed_out;
DROP TRIGGER search_message_changed_in;
DROP TRIGGER search_block_added;
DROP TRIGGER search_block_removed;
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
INSERT INTO search_index (search_index) VALUES ('delete-all');
INSERT INTO search_index (rowid, content)
    SELECT (s.slot << 41) | m.id, cm_index_text(m.content)
    FROM source_messages m JOIN search_channels s ON s.channel_id = m.channel_id
    WHERE m.is_current = 1 AND m.deleted = 0 AND m.forgotten_us IS NULL;
INSERT INTO search_index (rowid, content)
    SELECT (s.slot << 41) | (1 << 40) | b.seq, cm_index_text(b.text)
    FROM recall_blocks b JOIN search_channels s ON s.channel_id = b.channel_id
    WHERE b.sparse = 1;
DROP TABLE source_fts;
CREATE VIRTUAL TABLE source_fts USING fts5(
    content,
    content = '',
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO source_fts (rowid, content)
    SELECT id, cm_index_text(content) FROM source_messages
    WHERE is_current = 1 AND deleted = 0 AND forgotten_us IS NULL;
CREATE TEMPORARY TABLE cm_block_text AS SELECT rowid, text FROM block_fts;
DELETE FROM block_fts;
INSERT INTO block_fts (rowid, text) SELECT rowid, cm_index_text(text) FROM cm_block_text;
DROP TABLE cm_block_text;
UPDATE search_channels SET tokens =
    (SELECT coalesce(sum(cm_length(content)), 0) FROM source_messages m
     WHERE m.channel_id = search_channels.channel_id
         AND m.is_current = 1 AND m.deleted = 0 AND m.forgotten_us IS NULL)
    + (SELECT coalesce(sum(cm_length(text)), 0) FROM recall_blocks b
       WHERE b.channel_id = search_channels.channel_id AND b.sparse = 1);
