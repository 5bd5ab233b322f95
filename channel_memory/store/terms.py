"""Terms: how text is cut into the words the full-text indexes hold and queries ask.

One definition for every index: the ranked search's scorer, SQLite's FTS5 tables (given
``index_text`` of each document, through the function ``cm_index_text`` in their
triggers) and PostgreSQL's ``cm_words`` (the schema computes the same in SQL; a test
holds the two together over the evaluation data).

A token is a run of letters and digits, lower-cased without diacritics. Text written
without spaces — Chinese, Japanese, Korean — has no spaces between its words, so a run
of it would be one token and a word inside it could not be found: such a run is a token
of its own, cut from the letters around it, and the index holds its two-character pieces
in order, then its single characters. A run of the query is found as the phrase of its
pieces (a word of one character, as that character), wherever it sits in a run of a
document.

Changing what this module makes of a text changes what the indexes hold: it takes a
migration that indexes every document again (``0009`` is the one that introduced it).
"""

from __future__ import annotations

import re
import unicodedata

TOKEN = re.compile(r"[^\W_]+")
_VOICING = "\u3099\u309a"
"""Kana voicing marks: folding keeps them (``ド`` is not ``ト``)."""
RUN_CHARS = (
    "\u1100-\u11ff\u3005-\u3007\u3041-\u3096\u3099-\u309a\u309d-\u309f\u30a1-\u30fa"
    "\u30fc-\u30ff\u3131-\u318e\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3"
    "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
"""Hangul, kana and CJK ideographs: text written without spaces (the PostgreSQL
schema's ``cm_words`` names the same ranges)."""
_RUN = re.compile(f"[{RUN_CHARS}]+")
_PIECE = re.compile(f"[{RUN_CHARS}]+|[^{RUN_CHARS}]+")


def fold(text: str) -> str:
    """Lower case without diacritics, as ``unicode61 remove_diacritics 2`` folds; kana
    keep their voicing marks, recomposed (NFC)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.lower())
    kept = "".join(c for c in decomposed if c in _VOICING or not unicodedata.combining(c))
    return unicodedata.normalize("NFC", kept)


def tokens(text: str) -> list[str]:
    """The folded tokens of ``text``: runs of letters and digits; a run written without
    spaces is a token of its own, cut from the letters around it."""
    found: list[str] = []
    for token in TOKEN.findall(fold(text)):
        if token.isascii() or _RUN.search(token) is None:
            found.append(token)
        else:
            found += _PIECE.findall(token)
    return found


def is_run(token: str) -> bool:
    """Whether a token is a run of text written without spaces."""
    return not token.isascii() and _RUN.fullmatch(token) is not None


def holds_run(text: str) -> bool:
    """Whether ``text`` holds any run of text written without spaces."""
    return not text.isascii() and _RUN.search(text) is not None


def pieces(run: str) -> list[str]:
    """A run's two-character pieces in order (the run itself when it has one character)."""
    return [run[i : i + 2] for i in range(len(run) - 1)] or [run]


def index_terms(text: str) -> list[str]:
    """What the indexes hold of ``text``: its tokens, a run written without spaces as its
    pieces and then its characters."""
    terms: list[str] = []
    for token in tokens(text):
        if is_run(token):
            terms += pieces(token) if len(token) > 1 else []
            terms += list(token)
        else:
            terms.append(token)
    return terms


def index_text(text: str) -> str:
    """The text given to the full-text indexes in place of ``text`` (SQLite registers it
    as ``cm_index_text`` for the triggers that keep its relevance index)."""
    return " ".join(index_terms(text))


def phrases(query: str) -> tuple[str, ...]:
    """A query's words for a literal match, every one: each word's tokens in order as one
    phrase, and each run written without spaces as the phrase of its pieces."""
    found: list[str] = []
    for word in re.findall(r"\w+", query):
        current: list[str] = []
        for token in tokens(word):
            if is_run(token):
                found += [" ".join(current)] if current else []
                current = []
                found.append(" ".join(pieces(token)))
            else:
                current.append(token)
        found += [" ".join(current)] if current else []
    return tuple(found)


def doc_length(text: str) -> int:
    """A document's length for BM25: its words as separated by spaces, and a word for
    each character written without spaces (a run of Japanese is as long as it is, not
    one word). SQLite's triggers call it as ``cm_length``; PostgreSQL's ``cm_length``
    computes the same."""
    return text.count(" ") + 1 + sum(map(len, _RUN.findall(text)))
