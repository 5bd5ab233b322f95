-- Version 4: decisions made by reply. A reply's derived class may read the message
-- it replies to (parent_id); a reply deciding on a proposal answers it (answers, a
-- source handle). Both are derived and recomputed: the worker re-derives every
-- message after an upgrade.
ALTER TABLE derived_messages ADD COLUMN parent_id TEXT;
ALTER TABLE derived_messages ADD COLUMN answers TEXT;
CREATE INDEX derived_messages_by_parent
    ON derived_messages (channel_id, parent_id) WHERE parent_id IS NOT NULL;
ALTER TABLE recall_blocks ADD COLUMN answers TEXT;
CREATE INDEX recall_blocks_by_answers ON recall_blocks (answers) WHERE answers IS NOT NULL;
