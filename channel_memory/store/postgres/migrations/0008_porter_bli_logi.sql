-- Version 8: words are stemmed as FTS5's Porter (the reference C version) and the ranked
-- search's scorer stem them where Snowball's 'porter' departs: a word that step 1 leaves
-- ending in "bli" or "logi" ("affaibli": affaibl; version 7 handled "-bly"/"-blies" and
-- "-logy"/"-logies" only) and a doubled consonant other than bb dd ff gg mm nn pp rr tt
-- before "-ed"/"-ing" ("trekking": trek, version 7 trekk). A search for a form the old
-- stems split ("affaiblies", "trek") missed those documents.
CREATE OR REPLACE FUNCTION cm_porter_c(word TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE
        -- step 2's "bli" -> "ble", "logi" -> "log", where the part before has a measure
        -- over 0 (a vowel followed by a consonant)
        WHEN substring(word FROM '^(.*)bl(?:y|ies|i|is|ied|ying|yed|iing)$')
             ~ '([aeiou][^aeiou]|[^aeiou]y[^aeiou])'
            THEN regexp_replace(word, 'bl(y|ies|i|is|ied|ying|yed|iing)$', 'ble')
        WHEN substring(word FROM '^(.*)log(?:y|ies|i|is|ied|ying|yed|iing)$')
             ~ '([aeiou][^aeiou]|[^aeiou]y[^aeiou])'
            THEN regexp_replace(word, 'log(y|ies|i|is|ied|ying|yed|iing)$', 'log')
        -- step 1b undoubles every consonant but l, s and z ("trekking": trek); Snowball
        -- only bb dd ff gg mm nn pp rr tt: the others are undoubled here
        WHEN substring(word FROM '^(.*)(?:cc|hh|jj|kk|qq|vv|ww|xx)(?:ed|ing|ings)$')
             ~ '([aeiou]|[^aeiou]y)'
            THEN regexp_replace(word, '(c|h|j|k|q|v|w|x)\1(ed|ing|ings)$', '\1')
        -- a "y" after a consonant is a vowel, so the "y" after it is a consonant, doubled
        WHEN word ~ '[^aeiouy]yy(?:ed|ing|ings)$'
            THEN regexp_replace(word, 'yy(ed|ing|ings)$', 'y')
        ELSE word END $$;
-- Every indexed document that holds a term the old function stemmed this way (it ends
-- in "bli", "logi" or such a doubled consonant) is indexed again: its old terms out, its
-- terms now in. The documents and their lengths are the same, so the channels' totals
-- stand. (One pass over the terms table, under the migration lock.)
CREATE TEMPORARY TABLE cm_restem ON COMMIT DROP AS
    SELECT DISTINCT key FROM search_terms
    WHERE term LIKE '%bli' OR term LIKE '%logi' OR term ~ '(cc|hh|jj|kk|qq|vv|ww|xx)$'
        OR term LIKE '%yi';
DELETE FROM search_terms WHERE key IN (SELECT key FROM cm_restem);
INSERT INTO search_terms (term, key)
    SELECT t, d.key
    FROM (
        SELECT r.key, m.content AS doc FROM cm_restem r
        JOIN source_messages m ON (r.key >> 40) & 1 = 0 AND m.id = r.key & ((1::BIGINT << 40) - 1)
        UNION ALL
        SELECT r.key, b.text FROM cm_restem r
        JOIN recall_blocks b ON (r.key >> 40) & 1 = 1 AND b.seq = r.key & ((1::BIGINT << 40) - 1)
    ) d, unnest(cm_terms(d.doc)) AS t
    ON CONFLICT DO NOTHING;
