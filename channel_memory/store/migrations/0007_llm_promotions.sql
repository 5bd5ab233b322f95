-- Version 7: model-assisted detection. A message version the model found to carry a
-- decision no rule matched is promoted to a hard event (its own text, verbatim).
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
