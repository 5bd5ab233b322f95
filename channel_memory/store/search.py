"""Relevance search: a stemming full-text index over messages and sparse blocks, ranked
by BM25 with per-channel statistics.

The index ``search_index`` is a contentless FTS5 table with the ``porter`` tokenizer,
given each document's index text (``terms.py``: a run written without spaces as its
two-character pieces; a run in a query is a unit matched as written). Its rowid packs
the channel's slot, the kind and the row id (``slot << 41 | kind << 40 | id``), so a
channel's postings are one rowid range and FTS5 reads only that range (a channel filter
costs nothing). Messages and blocks share the index, so they are ranked with the same
statistics.

Every unit of a query (a content word, or a quoted phrase) reads at most
``CAP + 1`` postings of the channel, newest first: the cost follows the result
size, not the number of matches. A unit with more matches than ``CAP`` is common;
its document frequency is estimated from how much of the channel its newest
``CAP`` matches span, and only those newest matches are candidates through it
(candidates found through rarer units still count it in their score). Below
the cap, the ranking is exactly BM25 over the channel. Scores are computed here
from the candidates' text, tokenized and stemmed as FTS5 does.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from channel_memory.kernel.models import RecallBlock
from channel_memory.store.blocks import BLOCK_COLUMNS, block_from_row
from channel_memory.store.connection import Connection
from channel_memory.store.rows import first_row
from channel_memory.store.terms import RUN_CHARS, TOKEN, doc_length, fold, is_run, pieces, tokens

CAP = 250
"""Postings read per query unit and channel; more matches make a unit common."""
BUDGET = 600
"""Candidates a query may bring in all: a query of many words reads fewer per word
(never under ``FLOOR``)."""
FLOOR = 100
K1 = 1.2
B = 0.75
_KIND_BIT = 1 << 40
_SLOT_SHIFT = 41

_STOP_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves s t d ll m o re ve y did didn doesn don isn wasn weren won wouldn
    shouldn couldn hasn haven hadn aren ever tell said say says
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""A small English stop list: words that carry no topic in a question."""
_PHRASE = re.compile(r'"([^"]*)"')
_HIRAGANA = re.compile("[\u3041-\u309f]+|[^\u3041-\u309f]+")
_KATAKANA = re.compile("[\u30a1-\u30ff]+")
_HANGUL = re.compile("[\u1100-\u11ff\u3131-\u318e\uac00-\ud7a3]")
LITERAL_RUN = 4
"""Characters of kanji (or Hangul) up to which a query's run is one word matched as
written; a longer run (a sentence of Chinese) is asked as its two-character pieces."""


# --- the Porter stemmer (as FTS5's ``porter`` tokenizer applies it) ------------------------


def _cons(word: str, i: int) -> bool:
    c = word[i]
    if c in "aeiou":
        return False
    if c == "y":
        return i == 0 or not _cons(word, i - 1)
    return True


def _measure(stem: str) -> int:
    n, i, size = 0, 0, len(stem)
    while i < size and _cons(stem, i):
        i += 1
    while i < size:
        while i < size and not _cons(stem, i):
            i += 1
        if i >= size:
            break
        while i < size and _cons(stem, i):
            i += 1
        n += 1
    return n


def _has_vowel(stem: str) -> bool:
    return any(not _cons(stem, i) for i in range(len(stem)))


def _double(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _cons(word, len(word) - 1)


def _cvc(word: str) -> bool:
    return (
        len(word) >= 3
        and _cons(word, len(word) - 3)
        and not _cons(word, len(word) - 2)
        and _cons(word, len(word) - 1)
        and word[-1] not in "wxy"
    )


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
    ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"),
    ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"),
    ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
)  # fmt: skip
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
    ("ful", ""), ("ness", ""),
)  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
    "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _replace(word: str, rules: Iterable[tuple[str, str]], least: int) -> str:
    best: tuple[str, str] | None = None
    for suffix, repl in rules:
        if word.endswith(suffix) and (best is None or len(suffix) > len(best[0])):
            best = (suffix, repl)
    if best is not None:
        stem = word[: -len(best[0])]
        if _measure(stem) > least:
            return stem + best[1]
    return word


_STEMS: dict[str, str] = {}


def stem(word: str) -> str:
    """The Porter stem of a folded token (tokens under 3 characters stay as they are)."""
    known = _STEMS.get(word)
    if known is None:
        known = _porter(word)
        if len(_STEMS) > 200_000:  # a bounded memo: tokens repeat, numbers seldom
            _STEMS.clear()
        _STEMS[word] = known
    return known


def _porter(word: str) -> str:
    if len(word) < 3 or len(word) > 64 or not word.isascii():
        return word
    w = word
    if w.endswith("sses") or w.endswith("ies"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if w.endswith("eed"):
        if _measure(w[:-3]) > 0:
            w = w[:-1]
    else:
        for suffix in ("ed", "ing"):
            if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
                w = w[: -len(suffix)]
                if w.endswith(("at", "bl", "iz")):
                    w += "e"
                elif _double(w) and w[-1] not in "lsz":
                    w = w[:-1]
                elif _measure(w) == 1 and _cvc(w):
                    w += "e"
                break
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    w = _replace(w, _STEP2, 0)
    w = _replace(w, _STEP3, 0)
    for suffix in sorted(_STEP4, key=len, reverse=True):
        if w.endswith(suffix):
            stem_ = w[: -len(suffix)]
            if _measure(stem_) > 1 and (suffix != "ion" or stem_.endswith(("s", "t"))):
                w = stem_
            break
    if w.endswith("e"):
        stem_ = w[:-1]
        m = _measure(stem_)
        if m > 1 or (m == 1 and not _cvc(stem_)):
            w = stem_
    if w.endswith("ll") and _measure(w) > 1:
        w = w[:-1]
    return w


# --- queries ----------------------------------------------------------------------------


_WORD_CHAR = f"[^\\W_{RUN_CHARS}]"
"""A letter or digit of a word written with spaces: a phrase's edges (a run written
without spaces around a number is an edge, as ``terms`` cuts it)."""


@dataclass(frozen=True, slots=True)
class Unit:
    """One scoring unit of a query: a word, a quoted phrase matched word for word, or
    text with runs written without spaces matched as written (``pattern``: the regular
    expression it is counted by; ``parts``: its phrases of index terms, all asked of the
    index — a run's pieces, the words between runs)."""

    words: tuple[str, ...]
    phrase: bool
    stop: bool = False
    """A stop word: never a query on its own, and never a candidate of its own: it only
    adds (as BM25 weighs it) to the score of documents found through the other units, so
    "what is the gross limit now" does not find "weather is terrible today" by "is". A stop
    part of a run (hiragana) likewise."""
    pattern: str | None = None
    parts: tuple[str, ...] = ()
    stems: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stems", tuple(stem(w) for w in self.words))
        if not self.parts:
            object.__setattr__(self, "parts", (" ".join(self.words),))


def _phrase_pattern(words: Sequence[str]) -> str:
    return rf"(?<!{_WORD_CHAR})" + r"[\W_]+".join(map(re.escape, words)) + rf"(?!{_WORD_CHAR})"


def written_unit(found: Sequence[str], stop: bool = False) -> Unit:
    """A unit for tokens (some of them runs) that must appear as written, in this order:
    runs as they are, words between them word for word, nothing but punctuation or
    spaces between a run and a word."""
    parts: list[str] = []
    pattern = ""
    words: list[str] = []
    for i, token in enumerate(found):
        run = is_run(token)
        before = found[i - 1] if i else None
        if before is None:
            pattern += "" if run else rf"(?<!{_WORD_CHAR})"
        else:
            pattern += r"[\W_]*" if run or is_run(before) else r"[\W_]+"
        pattern += re.escape(token)
        if run:
            parts.append(" ".join(pieces(token)))
            words += pieces(token)
        else:
            if before is not None and not is_run(before):
                parts[-1] += " " + token
            else:
                parts.append(token)
            words.append(token)
    pattern += "" if is_run(found[-1]) else rf"(?!{_WORD_CHAR})"
    return Unit(tuple(words), True, stop, pattern, tuple(parts))


WHOLE_RUN = 8
"""Characters up to which a run the query cuts into parts is also asked whole."""


def run_units(run: str) -> list[Unit]:
    """The units of a query's run written without spaces. Japanese writes its function
    words and endings in hiragana: the run is cut where hiragana begins or ends, and a
    hiragana part only adds to the score (a stop unit) unless the run is all hiragana.
    A part in katakana, or of up to ``LITERAL_RUN`` characters (a kanji compound), is
    one unit matched as written; a longer part (a sentence of Chinese, a Korean word
    with its particle) is asked as its two-character pieces, each a unit. A run of up to
    ``WHOLE_RUN`` characters cut into parts is asked whole too (``寄り付き``)."""
    parts = _HIRAGANA.findall(run)
    units: list[Unit] = [written_unit([run])] if len(parts) > 1 and len(run) <= WHOLE_RUN else []
    for part in parts:
        if "\u3041" <= part[0] <= "\u309f":
            units.append(written_unit([part], stop=len(parts) > 1))
        elif _KATAKANA.fullmatch(part) or (
            len(part) <= (2 if _HANGUL.search(part) else LITERAL_RUN)
        ):
            units.append(written_unit([part]))
        else:
            units += [written_unit([piece]) for piece in pieces(part)]
    return units


def _chunk_units(chunk: str) -> list[Unit]:
    """The units of a part of the query written without a space: its runs as
    ``run_units`` cuts them; its other tokens each a word — but tokens written together
    with a digit among them (``150.20``, ``3,148``) one phrase."""
    found = tokens(chunk)
    units: list[Unit] = []
    group: list[str] = []
    for token in [*found, ""]:
        if token and not is_run(token):
            group.append(token)
            continue
        if len(group) > 1 and any(c.isdigit() for c in "".join(group)):
            units.append(Unit(tuple(group), True))
        else:
            units += [Unit((word,), False, word in STOP_WORDS) for word in group]
        group = []
        if token:
            units += run_units(token)
    return units


def parse_query(query: str) -> list[Unit]:
    """The query's units: each quoted phrase, each distinct content word outside quotes,
    then the distinct stop words. Empty when nothing but stop words and punctuation.
    A run written without spaces is cut as ``run_units`` says; quoted, text with runs
    must appear as written (``written_unit``)."""
    units: list[Unit] = []
    for quoted in _PHRASE.findall(query):
        words = tuple(tokens(quoted))
        if any(is_run(w) for w in words):
            units.append(written_unit(words))
        elif len(words) > 1:
            units.append(Unit(words, True))
        elif words and words[0] not in STOP_WORDS:
            units.append(Unit(words, False))
    seen = {u.stems for u in units}
    stops: list[Unit] = []
    for chunk in _PHRASE.sub(" ", query).split():
        for unit in _chunk_units(chunk):
            if unit.stems in seen:
                continue
            seen.add(unit.stems)
            (stops if unit.stop else units).append(unit)
    return units + stops if units else []


def occurrences(unit: Unit, stems: Counter[str], text: str) -> int:
    """How often ``unit`` occurs in a text (``stems``: its tokens' stems, counted): a
    word by its stem, a phrase literally, word for word, a run as written."""
    if not unit.phrase:
        return stems[unit.stems[0]]
    pattern = unit.pattern if unit.pattern is not None else _phrase_pattern(unit.words)
    return len(re.findall(pattern, fold(text)))


def bm25(
    tfs: Sequence[int], length: int, dfs: Sequence[float], docs: int, avg_length: float
) -> float:
    """Okapi BM25 of one document (k1 1.2, b 0.75; idf = ln(1 + (N - df + 0.5)/(df + 0.5)))."""
    score = 0.0
    norm = K1 * (1 - B + B * length / max(avg_length, 1.0))
    for tf, df in zip(tfs, dfs, strict=True):
        if tf:
            idf = math.log(1 + (docs - df + 0.5) / (df + 0.5))
            score += idf * tf * (K1 + 1) / (tf + norm)
    return score


_JOINS_BEFORE = re.compile(r"[\u3099\u309a\uff9e\uff9f\u1160-\u11ff]")
"""Characters that fold together with the one before them (kana voicing marks, Hangul's
medial and final jamo); combining marks besides."""


def _folded_with_origins(text: str) -> tuple[str, list[int]] | None:
    """``text`` folded as :func:`fold` folds it, with the index in ``text`` each folded
    character comes from: folding may change the length ("…" is "...", "ﬁ" is "fi"), so
    a phrase found in the folded text is placed where it stands in the text itself. Each
    character is folded with the marks that join it; where that is not how the whole
    folds (a Greek final sigma), the text itself when folding keeps its length, else None
    (no place known)."""
    whole = fold(text)
    if text.isascii():
        return whole, list(range(len(text)))
    folded: list[str] = []
    origin: list[int] = []
    at = 0
    while at < len(text):
        end = at + 1
        while end < len(text) and (
            unicodedata.combining(text[end]) or _JOINS_BEFORE.match(text[end]) is not None
        ):
            end += 1
        piece = fold(text[at:end])
        folded.append(piece)
        origin += [at] * len(piece)
        at = end
    if "".join(folded) == whole:
        return whole, origin
    if len(whole) == len(text):
        return whole, list(range(len(text)))
    return None


def excerpt(text: str, units: Sequence[Unit], size: int) -> str:
    """At most ``size`` characters of ``text`` around its run of matched words holding the
    most different query words (then, when that is more than one, the tightest such run;
    then the most matches): a word repeated in a preamble does not outweigh the line that
    holds the others, and one word asked shows where it stands densest. Stop units (a run's
    particles) only weigh in ranking, not here."""
    if len(text) <= size:
        return text
    targets = {u.stems[0]: n for n, u in enumerate(units) if not u.phrase and not u.stop}
    spots: list[tuple[int, int]] = []  # (where, which unit)
    placed = _folded_with_origins(text) if any(u.phrase and not u.stop for u in units) else None
    if placed is not None:  # a run's particle only weighs
        lowered, origin = placed
        for n, unit in enumerate(units):
            if unit.phrase and not unit.stop:
                pattern = unit.pattern if unit.pattern is not None else _phrase_pattern(unit.words)
                spots += [(origin[m.start()], n) for m in re.finditer(pattern, lowered)]
    for match in TOKEN.finditer(text):
        found = targets.get(stem(fold(match.group())))
        if found is not None:
            spots.append((match.start(), found))
    spots.sort()
    at = run_end = 0
    best = (-1, 0, 0)
    for i, (spot, _) in enumerate(spots):  # the best run: most words, then tightest, most
        inside = [(s, n) for s, n in spots[i:] if s < spot + size * 2 // 3]
        last = inside[-1][0]
        words = len({n for _, n in inside})
        # one word asked: its densest passage; several: the tightest run holding the most
        rank = (words, spot - last if words > 1 else 0, len(inside))
        if rank > best:
            best, at, run_end = rank, spot, last
    width = size - 2  # room for the two ellipses
    start = max(0, at - max(width - (run_end - at), 0) // 3)  # the run a third of the way in
    end = min(len(text), start + width)
    start = max(0, end - width)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


# --- the index --------------------------------------------------------------------------


def message_key(slot: int, source_id: int) -> int:
    return (slot << _SLOT_SHIFT) | source_id


def block_key(slot: int, seq: int) -> int:
    return (slot << _SLOT_SHIFT) | _KIND_BIT | seq


def split_key(key: int) -> tuple[bool, int]:
    """(is a block, row id) of an index rowid."""
    return bool(key & _KIND_BIT), key & (_KIND_BIT - 1)


def length(text: str) -> int:
    """A document's length for BM25 (``terms.doc_length``; the triggers that keep the
    per-channel totals compute the same)."""
    return doc_length(text)


# --- ranking ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """A document that matched at least one unit, before it is read."""

    key: int
    is_block: bool
    row_id: int


@dataclass(frozen=True, slots=True)
class Postings:
    """What the index says about a query in one channel."""

    candidates: list[Candidate]
    dfs: list[float]
    docs: int
    avg_length: float


async def postings(conn: Connection, channel: str, units: Sequence[Unit]) -> Postings:
    """Candidates and statistics of ``units`` in a channel. Per unit, at most ``CAP + 1``
    postings of messages and as many of blocks are read, newest first (fewer when the
    query has many words, see ``BUDGET``)."""
    row = await first_row(
        conn, "SELECT slot, docs, tokens FROM search_channels WHERE channel_id = ?", (channel,)
    )
    if row is None:
        return Postings([], [0.0] * len(units), 1, 1.0)
    slot, docs, total_tokens = (int(x) for x in row)
    low = slot << _SLOT_SHIFT
    parts = ((low, low | (_KIND_BIT - 1)), (low | _KIND_BIT, low | (2 * _KIND_BIT - 1)))
    spans: dict[int, tuple[int, int]] = {}
    cap = max(FLOOR, min(CAP, BUDGET // max(1, sum(1 for u in units if not u.stop))))
    found: dict[int, None] = {}
    dfs: list[float] = []
    for unit in units:
        df = 0.0
        for part, (first, last) in enumerate(parts):
            keys = await conn.dialect.postings(conn, unit.parts, first, last, cap + 1)
            if len(keys) <= cap:
                df += len(keys)
            else:
                keys = keys[:cap]
                if part not in spans:
                    spans[part] = await _span(conn, first, last)
                df += estimated_df(keys, spans[part])
            if unit.stop:
                continue  # a stop word (or a run's hiragana part) brings no candidate
            found.update(dict.fromkeys(keys))
        dfs.append(min(df, float(max(docs, 1))))
    candidates = [Candidate(key, *split_key(key)) for key in found]
    return Postings(candidates, dfs, max(docs, 1), total_tokens / docs if docs else 1.0)


async def _span(conn: Connection, first: int, last: int) -> tuple[int, int]:
    """The lowest and highest indexed key within ``[first, last]`` (two index seeks)."""
    return await conn.dialect.span(conn, first, last) or (first, first)


def estimated_df(newest: Sequence[int], span: tuple[int, int]) -> float:
    """A common unit's document frequency in one part of a channel: its newest matches
    cover the top of the part's rowid span; the same density over all of it."""
    first, last = span
    covered = max(1, last - min(newest) + 1)
    whole = max(covered, last - first + 1)
    return max(len(newest) + 1.0, len(newest) * whole / covered)


def score(units: Sequence[Unit], text: str, postings_: Postings) -> float:
    """The BM25 score of one candidate's text for ``units`` (0 when none occurs)."""
    stems = Counter(map(stem, tokens(text)))
    tfs = [occurrences(unit, stems, text) for unit in units]
    return bm25(tfs, length(text), postings_.dfs, postings_.docs, postings_.avg_length)


async def fresh_blocks(
    conn: Connection, channel_id: str, seqs: Sequence[int], from_us: int
) -> list[RecallBlock]:
    """The servable blocks among ``seqs``: the channel's fresh sparse blocks ending at or
    after ``from_us``."""
    if not seqs:
        return []
    fetched = await conn.execute_fetchall(
        f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE seq IN "
        "(SELECT CAST(value AS INTEGER) FROM json_each(?)) AND +channel_id = ? AND sparse = 1 "
        "AND dirty = 0 "
        "AND +to_us >= ?",  # the unary + keeps the planner on the seq lookups
        (json.dumps(list(seqs)), channel_id, from_us),
    )
    return [block_from_row(row) for row in fetched]


@dataclass(frozen=True, slots=True)
class Ranked:
    """One ranked item: ``rank`` orders best first (lower sorts first):
    (tier, -score, -time, key)."""

    rank: tuple[int, float, int, str]
    names: tuple[str, ...]
    """The message handles this hit stands for (a block: every message it covers)."""
    payload: Any
    block: bool = False


def deduplicated(items: Iterable[Ranked]) -> list[Ranked]:
    """Best first, each message at most once. Message hits always stay (their own text
    is the exact source); a block hit stays only when none of its messages is a hit of
    its own or covered by a better block, that is when it matched through words its
    messages do not hold (a summary)."""
    ordered = sorted(items, key=lambda r: r.rank)
    named = {name for item in ordered if not item.block for name in item.names}
    kept = []
    for item in ordered:
        if not item.block:
            kept.append(item)
        elif named.isdisjoint(item.names):
            kept.append(item)
            named.update(item.names)
    return kept
