-- Version 6: consumption. Which message versions each consumer has handled, and the
-- reads (feed answers, tool results) still waiting to be settled. Ids and hashes only,
-- never content (see channel_memory/store/consumption.py).
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
-- The versions of a pending read; dropped once it is settled.
CREATE TABLE consumption_read_versions (
    read_id TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (read_id, channel_id, message_id, content_hash)
) WITHOUT ROWID;
CREATE INDEX consumption_read_versions_by_message
    ON consumption_read_versions (channel_id, message_id);
-- The ledger: versions a consumer handled; id orders them, newest last, for the bound.
CREATE TABLE consumed_versions (
    id INTEGER PRIMARY KEY,
    consumer TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    consumed_us INTEGER NOT NULL,
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
