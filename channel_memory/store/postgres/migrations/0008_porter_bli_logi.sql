-- Version 8: a word that Porter's step 1 leaves ending in "bli" or "logi" is stemmed
-- as FTS5's Porter (the reference C version) stems it: "affaibli" -> affaibl, as the
-- ranked search's scorer and SQLite do (version 7 handled "-bly"/"-blies" and
-- "-logy"/"-logies" only, and kept "affaibli" whole: a search for it found nothing).
CREATE OR REPLACE FUNCTION cm_porter_c(word TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE
        -- the rule applies when the part before "bli"/"logi" has a measure over 0 (a
        -- vowel followed by a consonant)
        WHEN substring(word FROM '^(.*)bl(?:y|ies|i|is)$')
             ~ '([aeiou][^aeiou]|[^aeiou]y[^aeiou])'
            THEN regexp_replace(word, 'bl(y|ies|i|is)$', 'ble')
        WHEN substring(word FROM '^(.*)log(?:y|ies|i|is)$')
             ~ '([aeiou][^aeiou]|[^aeiou]y[^aeiou])'
            THEN regexp_replace(word, 'log(y|ies|i|is)$', 'log')
        ELSE word END $$;
-- Every indexed document that holds a term the old function stemmed this way (it ends
-- in "bli" or "logi") is indexed again: its old terms out, its terms now in. The
-- documents and their lengths are the same, so the channels' totals stand.
CREATE TEMPORARY TABLE cm_restem ON COMMIT DROP AS
    SELECT DISTINCT key FROM search_terms WHERE term LIKE '%bli' OR term LIKE '%logi';
DELETE FROM search_terms WHERE key IN (SELECT key FROM cm_restem);
INSERT INTO search_terms (term, key)
    SELECT t, r.key
    FROM cm_restem r
    JOIN source_messages m ON (r.key >> 40) & 1 = 0 AND m.id = r.key & ((1::BIGINT << 40) - 1),
        unnest(cm_terms(m.content)) AS t
    ON CONFLICT DO NOTHING;
INSERT INTO search_terms (term, key)
    SELECT t, r.key
    FROM cm_restem r
    JOIN recall_blocks b ON (r.key >> 40) & 1 = 1 AND b.seq = r.key & ((1::BIGINT << 40) - 1),
        unnest(cm_terms(b.text)) AS t
    ON CONFLICT DO NOTHING;
