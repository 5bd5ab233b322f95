-- Version 10: a summary's versions. A feed's read also names the message versions a
-- summary it showed stands for (a rollup, a collapse line): whole = 0. Handled, they join
-- the consumer's ledger as summarized: the messages stay unconsumed (new) until shown
-- complete, but a summary whose every version was handled is no longer new, so
-- unconsumed=only stops serving it again (ADR 0068). Rows so far were all shown whole.
ALTER TABLE consumption_read_versions ADD COLUMN whole INTEGER NOT NULL DEFAULT 1;
ALTER TABLE consumed_versions ADD COLUMN whole INTEGER NOT NULL DEFAULT 1;
