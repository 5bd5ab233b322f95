-- Version 9: words are cut as channel_memory/store/terms.py cuts them, on every
-- collation. The content columns compare byte-wise (COLLATE "C"), and under that
-- collation the bracket class [:alnum:] and lower() know ASCII only: a word in any other
-- script (Cyrillic, Greek, Arabic, Japanese, ...) was never indexed, nor was a capital
-- with a diacritic lowered. The functions now fold and split under the database's
-- LC_CTYPE, kana keep their voicing marks, and a run of text written without spaces
-- (Hangul, kana, CJK ideographs) is cut from the letters around it and held as its
-- two-character pieces and its characters, so a word inside such a run is found. The
-- literal-match indexes are built again, and so is the ranked search's terms table; the
-- documents are the same; a document's length (for BM25) now counts each character
-- written without spaces as a word (cm_length), so the channels' totals are computed
-- again. The author filter folds with cm_fold (lower() under the columns' collation
-- lowered ASCII only).
CREATE OR REPLACE FUNCTION cm_fold(doc TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN doc !~ '[^\x01-\x7f]' THEN lower(doc)
                      ELSE (SELECT CASE WHEN f ~ '[\u1100-\u11ff\u3099\u309a]' THEN normalize(f, NFC) ELSE f END
                            FROM regexp_replace(normalize(lower(doc COLLATE "default"), NFKD),
                                '[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]',
                                '', 'g') AS f) END $$;
-- The characters of text written without spaces (Hangul, kana, CJK ideographs), as a
-- bracket expression's ranges: the ranges of channel_memory/store/terms.py.
CREATE OR REPLACE FUNCTION cm_run_chars() RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT '\u1100-\u11ff\u3005-\u3007\u3041-\u3096\u3099-\u309a\u309d-\u309f'
                 '\u30a1-\u30fa\u30fc-\u30ff\u3131-\u318e\u31f0-\u31ff\u3400-\u4dbf'
                 '\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f' $$;
-- The terms of a word holding text written without spaces: its runs cut from the
-- letters around them, each run as its characters and its two-character pieces.
CREATE OR REPLACE FUNCTION cm_run_terms(word TEXT) RETURNS TEXT[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT array_agg(term)
          FROM regexp_matches(word, '[' || cm_run_chars() || ']+|[^' || cm_run_chars() || ']+',
                              'g') AS token,
               unnest(CASE WHEN token[1] ~ ('^[' || cm_run_chars() || ']')
                           THEN regexp_split_to_array(token[1], '') || ARRAY(
                               SELECT substr(token[1], i, 2)
                               FROM generate_series(1, length(token[1]) - 1) AS i)
                           ELSE ARRAY[token[1]] END) AS term $$;
-- A text's distinct words, as channel_memory/store/terms.py cuts them (index_terms):
-- runs of letters and digits, folded, a run written without spaces cut from the letters
-- around it and held as its two-character pieces and its characters (a word over 500
-- characters kept to its first 500: an index entry holds ~2.7 kB). Character classes
-- and lower case follow the database's LC_CTYPE, whatever the collation of the text.
CREATE OR REPLACE FUNCTION cm_words(doc TEXT) RETURNS TEXT[]
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    -- PL/pgSQL keeps its statements' plans for the session: a SQL function this size was
    -- planned again on every call from another function (cm_terms, the triggers)
    IF doc !~ '[^\x01-\x7f]' THEN  -- ASCII: split and lower as they are
        RETURN (SELECT coalesce(array_agg(DISTINCT left(word, 500)), '{}')
                FROM regexp_split_to_table(lower(doc), '[^[:alnum:]]+') AS word
                WHERE word <> '');
    ELSIF doc !~ ('[' || cm_run_chars() || ']') THEN  -- no run written without spaces
        RETURN (SELECT coalesce(array_agg(DISTINCT left(word, 500)), '{}')
                FROM regexp_split_to_table(cm_fold(doc) COLLATE "default", '[^[:alnum:]]+') AS word
                WHERE word <> '');
    END IF;
    RETURN (SELECT coalesce(array_agg(DISTINCT left(term, 500)), '{}')
            FROM regexp_split_to_table(cm_fold(doc) COLLATE "default", '[^[:alnum:]]+') AS word,
                unnest(CASE WHEN word ~ ('[' || cm_run_chars() || ']') THEN cm_run_terms(word)
                            ELSE ARRAY[word] END) AS term
            WHERE word <> '');
END $$;
CREATE OR REPLACE FUNCTION cm_length(doc TEXT) RETURNS BIGINT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT length(doc) - length(replace(doc, ' ', '')) + 1
                 + length(regexp_replace(doc COLLATE "default", '[^' || cm_run_chars() || ']+',
                                         '', 'g')) $$;
-- A text's distinct search terms: its words, stemmed (byte-wise: the stemmer reads
-- ASCII words, and its patterns run twice as fast under "C" as under a locale).
CREATE OR REPLACE FUNCTION cm_terms(doc TEXT) RETURNS TEXT[]
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT coalesce(array_agg(DISTINCT cm_stem(word COLLATE "C")), '{}')
          FROM unnest(cm_words(doc)) AS word $$;
REINDEX INDEX source_messages_words;
REINDEX INDEX recall_blocks_words;
DELETE FROM search_terms;
INSERT INTO search_terms (term, key)
    SELECT t, (s.slot << 41) | m.id
    FROM source_messages m JOIN search_channels s ON s.channel_id = m.channel_id,
        unnest(cm_terms(m.content)) AS t
    WHERE m.is_current = 1 AND m.deleted = 0 AND m.forgotten_us IS NULL
    ON CONFLICT DO NOTHING;
INSERT INTO search_terms (term, key)
    SELECT t, (s.slot << 41) | (1::BIGINT << 40) | b.seq
    FROM recall_blocks b JOIN search_channels s ON s.channel_id = b.channel_id,
        unnest(cm_terms(b.text)) AS t
    WHERE b.sparse = 1
    ON CONFLICT DO NOTHING;
UPDATE search_channels SET tokens =
    (SELECT coalesce(sum(cm_length(content)), 0) FROM source_messages m
     WHERE m.channel_id = search_channels.channel_id
         AND m.is_current = 1 AND m.deleted = 0 AND m.forgotten_us IS NULL)
    + (SELECT coalesce(sum(cm_length(text)), 0) FROM recall_blocks b
       WHERE b.channel_id = search_channels.channel_id AND b.sparse = 1);
