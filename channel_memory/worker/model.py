"""The learned decision model: a linear classifier that backs the hard-event rules.

Rules recognise the decisions their authors thought of; a desk writes in more ways
than any lexicon lists. The model is a logistic regression over the words and
character n-grams of a message (and the words of the message it replies to), trained
by ``bench/train_model.py`` on the labelled phrasing sets in ``tests/data/decisions``
and a labelled desk (ADR 0031). A rule set that names it (``model = "trading-desk"``
in the rules file, as the shipped rules do) makes a message that no rule matches a
hard event when the model gives it a decision probability of at least the model's
``threshold``; the model also names its type and, in a long message, the clauses that
carry it (its clause selector, ADR 0033), and ranks hard events under the feed's budget
(its ranker, ADR 0034; gradient-boosted regression trees since ADR 0053).

Scoring is deterministic and needs nothing beyond the standard library: the file holds
each block's vocabulary with its inverse document frequency, the coefficients and the
ranker's trees, and :meth:`DecisionModel.probability` computes what the trainer's TF-IDF
and logistic regression compute (sublinear term frequency, each block normalised to unit
length)."""

from __future__ import annotations

import functools
import gzip
import hashlib
import itertools
import json
import math
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Protocol

from channel_memory.store.terms import RUN_CHARS, holds_run, is_run, pieces

MODEL_NAMES = ("trading-desk",)
"""The models a rules file may name (``model = "..."``)."""

MODEL_FILE = "decision_model.json.gz"
MIN_KNOWN_WORDS = 2
"""The model promotes no message with fewer words it knows (see ``known_words``)."""
FORMAT = 8
"""Format 2 added the clause selector (``clauses``: :func:`clause_features` weights);
format 3 the hard-event ranker (``rank``: :func:`rank_features` weights); format 4 the
desk reading (``desk``: a second decision classifier over the same features, trained
with labelled desks; one of the ranker's features); format 5 the reading of text that
holds Chinese, Japanese or Korean (``runs``: a decision classifier over the same
features that learnt those languages too, ADR 0043); format 6 gave the clause selector and
the ranker three features each for text that reading reads (ADR 0044); format 7 made the
ranker gradient-boosted regression trees (``rank``: a starting log-odds ``init`` and
``trees``, see :func:`parse_boosted`; ADR 0053); format 8 made the clause selector such
trees too, over six more features (``clauses``: ``init``, ``trees`` and ``threshold``;
ADR 0074)."""

SUMS_KEPT = 512
"""How many texts' readings (see :meth:`DecisionModel._read`) a model keeps."""
GRAMS_KEPT = 4096
GRAMS_KEPT_CHARS = 16
"""How many words' character n-grams (see :func:`char_terms`) are kept, of words up to
how long: at most about 16 MB (a few MB on a desk's words)."""
SUMS_MAX_CHARS = 16_000
"""A text (with its parent) longer than this is read each time, not kept."""
CAP_CHARS = 3000
"""A message longer than twice this is read as its first and last ``CAP_CHARS``
characters (a report's decision is in its first or last lines; the cost stays bounded)."""
_SPACE = re.compile(r"\s+")
_WORD = re.compile(rf"[{RUN_CHARS}]+|[^\W{RUN_CHARS}]+|[^\w\s]")
"""A word: a run of text written without spaces (cut from the letters and digits around
it), a run of other letters and digits, or a punctuation mark."""


def _prepared(text: str) -> str:
    if len(text) > 2 * CAP_CHARS:
        text = text[:CAP_CHARS] + " " + text[-CAP_CHARS:]
    return _SPACE.sub(" ", text.lower())


def reads_runs(text: str) -> bool:
    """Whether the reading of text holding runs reads ``text`` (see
    :meth:`DecisionModel.probability`): whether the part of it the model reads holds a run
    of Chinese, Japanese or Korean. The trainer chooses by the same function."""
    return holds_run(text) and holds_run(_prepared(text))  # the first: one isascii()


def words(text: str) -> list[str]:
    """The words of prepared ``text``: runs of letters and digits and punctuation marks; a
    run of Chinese, Japanese or Korean as its two-character pieces (``terms.pieces``),
    which are what its words are made of, where the whole run would be one word no other
    message shares."""
    found: list[str] = []
    for word in _WORD.findall(text):
        if is_run(word):
            found += pieces(word)
        else:
            found.append(word)
    return found


def char_terms(text: str, parent: str | None = None) -> list[str]:
    """Character 2- to 5-grams of each word padded with a space on both sides (a word
    shorter than ``n`` gives its padded self once)."""
    terms: list[str] = []
    for word in _prepared(text).split():
        terms.extend(_kept_grams(word) if len(word) <= GRAMS_KEPT_CHARS else _grams(word))
    return terms


def _grams(word: str) -> tuple[str, ...]:
    """The character 2- to 5-grams of ``word`` padded with a space on both sides, in the
    order :func:`char_terms` lists them."""
    padded = f" {word} "
    size = len(padded)
    return tuple(padded[i : i + n] for n in range(2, min(size, 5) + 1) for i in range(size - n + 1))


_kept_grams = functools.lru_cache(maxsize=GRAMS_KEPT)(_grams)
""":func:`_grams` of the last words cut (a desk's words recur: each is cut once)."""


def word_terms(text: str, parent: str | None = None) -> list[str]:
    """Words and punctuation marks, and each adjacent pair of them."""
    found = words(_prepared(text))
    return found + [f"{a} {b}" for a, b in itertools.pairwise(found)]


def parent_terms(text: str, parent: str | None = None) -> list[str]:
    """For a reply: each distinct word of the message it answers, and one mark that it
    is a reply; nothing otherwise."""
    if not parent:
        return []
    return ["parent", *sorted({f"parent {w}" for w in words(_prepared(parent))})]


def clause_features(
    content: str,
    clauses: Sequence[tuple[int, int]],
    scored: Sequence[int],
    decided: frozenset[tuple[int, int]],
    readings: Callable[[str], tuple[float, float]],
) -> list[list[float]]:
    """The features the clause selector weighs for each clause ``scored`` (ascending indexes into
    ``clauses``, every clause of ``content`` in order as ``(start, end)`` spans): the
    model's probability that the clause alone is a decision; whether a rule matched it
    (``decided``); whether it is the first clause, the last, and where it sits among
    the clauses; its length and the message's (logarithms); how many clauses the
    message has; whether it is on the message's last line with a clause; whether it
    starts a line; how far down the message's lines it is; whether the reading of
    text holding runs reads the clause (:func:`reads_runs`), alone and times the
    probability and the rule's match (that reading's probabilities and the rules'
    matches on Chinese, Japanese and Korean are weighed apart, ADR 0044); and (ADR 0074)
    the desk reading's probability of the clause, how far its probability falls below
    the highest of the clauses scored, how many of them the model rates higher, whether
    it holds a digit, whether a rule matched any clause of the message, and whether it
    opens an item of a list (``LIST_ITEM``: a report's recap of what was done).
    ``readings`` gives a text's decision probability and its desk reading's (see
    :meth:`DecisionModel.readings`). A decision is most often the opening clause of a
    short message and the closing line of a long report: the selector's trees, learned
    from labelled decision spans, say how much each counts, and with what.
    """
    count = len(clauses)
    lines = content.count("\n") + 1
    last_line = content.count("\n", 0, clauses[-1][0]) if clauses else 0
    total = math.log(1 + len(content))
    read = [readings(content[start:end]) for start, end in (clauses[i] for i in scored)]
    top = max((chance for chance, _ in read), default=0.0)
    any_ruled = float(bool(decided))
    out = []
    line = at = 0
    for index, (chance, desk) in zip(scored, read, strict=True):
        start, end = clauses[index]
        line += content.count("\n", at, start)  # linear over the message, however long
        at = start
        text = content[start:end]
        ruled = float((start, end) in decided)
        runs = float(reads_runs(text))
        out.append(
            [
                chance,
                ruled,
                float(index == 0),
                float(index == count - 1),
                index / max(1, count - 1),
                math.log(1 + end - start),
                total,
                math.log(count),
                float(line == last_line),
                float(start == 0 or content[start - 1] == "\n"),
                line / max(1, lines - 1),
                runs,
                runs * chance,
                runs * ruled,
                desk,
                chance - top,
                float(sum(1 for other, _ in read if other > chance)),
                float(any(c.isdigit() for c in text)),
                any_ruled,
                float(LIST_ITEM.match(text) is not None),
            ]
        )
    return out


LIST_ITEM = re.compile(r"\s*(?:[-*\u2022\u25aa\u2013\u00b7]|\d{1,2}[.)])\s")
"""A clause that opens an item of a list: "- bought 20k SAP", "• stop to 131.40", "2) sold"."""


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


LEAF_MAX = 100.0
"""The largest log-odds a tree's leaf or a starting value may hold (the shipped trees'
are below 2): a file's sums stay finite whatever it holds."""
TREES_MAX = 10_000
"""The most trees an ensemble may hold: bounded work per score."""


@dataclass(frozen=True, slots=True)
class Tree:
    """One regression tree, its nodes in the trainer's order (a node's children come after
    it): a split node reads ``feature`` (an index of the ensemble's features) and goes
    ``left`` when the value is at most ``threshold``, else ``right``; a leaf (``feature``
    -1) adds its ``value``."""

    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    value: tuple[float, ...]

    def leaf(self, features: Sequence[float]) -> float:
        """The value of the leaf ``features`` (already in single precision) reach."""
        node = 0
        while (index := self.feature[node]) >= 0:
            node = self.left[node] if features[index] <= self.threshold[node] else self.right[node]
        return self.value[node]


@dataclass(frozen=True, slots=True)
class Boosted:
    """Gradient-boosted regression trees over ``width`` features (scikit-learn's
    ``GradientBoostingClassifier`` for the ranker, its ``HistGradientBoostingClassifier`` for
    the clause selector, exported by ``bench/train_model.py``): the log-odds is ``init``
    plus the leaf each tree reaches, its value already scaled by the learning rate. The
    shipped ranker is the mean of several such ensembles grown from different seeds,
    written as one: all their trees, each leaf also divided by their number, and their
    mean ``init`` (ADR 0055); the selector is one ensemble, grown on features rounded to
    single precision as they are read here (ADR 0074)."""

    width: int
    init: float
    trees: tuple[Tree, ...]

    def probability(self, features: Sequence[float]) -> float:
        """The probability, 0 to 1, rounded to nine digits (the same on every host). The
        features are read in single precision, as the trainer's trees read them
        (scikit-learn's trees compare features cast to float32 with float64 thresholds)."""
        if len(features) != self.width:
            raise ValueError(f"the trees read {self.width} features, not {len(features)}")
        read = array("f", features).tolist()
        z = self.init + math.fsum(tree.leaf(read) for tree in self.trees)
        return round(_sigmoid(z), 9)


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("a tree's node index or feature is not an integer")
    return value


def _finite(value: Any, bound: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("a tree's threshold or value is not a number")
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        raise ValueError("a tree's threshold or value is not a finite number") from None
    if not math.isfinite(number) or abs(number) > bound:
        raise ValueError("a tree's threshold or value is not a finite number in bounds")
    return number


def parse_tree(spec: dict[str, Any], width: int) -> Tree:
    """A tree from its file entry, checked: every split reads one of ``width`` features,
    every child comes after its node (so a walk ends), every number is finite and every
    leaf's value within :data:`LEAF_MAX`."""
    tree = Tree(
        tuple(_integer(f) for f in spec["feature"]),
        tuple(_finite(t) for t in spec["threshold"]),
        tuple(_integer(n) for n in spec["left"]),
        tuple(_integer(n) for n in spec["right"]),
        tuple(_finite(v, LEAF_MAX) for v in spec["value"]),
    )
    size = len(tree.feature)
    if size == 0 or any(
        len(column) != size for column in (tree.threshold, tree.left, tree.right, tree.value)
    ):
        raise ValueError("a tree's columns differ in length")
    for node, index in enumerate(tree.feature):
        if not -1 <= index < width:
            raise ValueError("a tree reads a feature the ensemble does not give")
        if index >= 0 and not (node < tree.left[node] < size and node < tree.right[node] < size):
            raise ValueError("a tree's child does not follow its node")
    return tree


def parse_boosted(spec: dict[str, Any], width: int) -> Boosted:
    """An ensemble from its file entry (``init``, ``trees``), each tree checked by
    :func:`parse_tree`; at most :data:`TREES_MAX` trees."""
    trees = spec["trees"]
    if not isinstance(trees, list) or len(trees) > TREES_MAX:
        raise ValueError(f"an ensemble's trees are not a list of at most {TREES_MAX:,}")
    return Boosted(
        width, _finite(spec["init"], LEAF_MAX), tuple(parse_tree(t, width) for t in trees)
    )


CLAUSE_FEATURES = 20
"""How many features :func:`clause_features` gives per clause."""

DECISION_TYPES = (
    "trade_proposal",
    "trade_approval",
    "trade_confirmation",
    "trade_fill",
    "stop_or_target_change",
    "route_decision",
    "risk_limit",
    "position_change",
    "thesis_change",
)
"""The nine decision types of the shipped rules and model: the ones the ranker weighs
(another rules file's types weigh none of them) and an LLM may promote to."""


def rank_features(
    *,
    base: float,
    probability: float,
    desk: float,
    strength: float,
    length: int,
    decided: int,
    by_model: bool,
    by_reply: bool,
    origin: str,
    lines: int,
    replying: bool,
    event_type: str,
    runs: bool,
) -> list[float]:
    """What the hard-event ranker weighs: the score the rules give (``base``: the rule's
    score by how plainly the message states it, times the model's probability); the
    model's probability alone (the message's or its decision clauses', the higher);
    the desk reading's, read the same way (``desk``: a classifier trained with
    a hundred and one labelled desks, where a recap or an echo of a decision is labelled none); how
    plainly it states the decision (``strength``, 0 to 1); its length (logarithm) and
    lines; how many clauses a rule matched; whether only the model or a reply rule
    found it; whether it replies; who wrote it (``origin``: a person, an app, an
    agent); its type; and whether the reading of text holding runs reads the message
    (``runs``), alone and times ``probability`` and ``desk`` (which are the higher of the
    message's reading and its decision clauses', each read by the reading its own text
    calls for; ADR 0044). A bot's record of a fill a
    trader reported is an echo; a report that mentions an action is not a decision:
    learned from labelled desks."""
    return [
        base,
        probability,
        desk,
        strength,
        math.log(length + 1) / 8,
        min(decided, 10) / 5,
        float(by_model),
        float(by_reply),
        float(origin == "human"),
        float(origin == "app"),
        float(origin == "agent"),
        min(lines - 1, 40) / 10,
        float(replying),
        *(float(event_type == t) for t in DECISION_TYPES),
        float(runs),
        float(runs) * probability,
        float(runs) * desk,
    ]


RANK_FEATURES = 16 + len(DECISION_TYPES)
"""How many features :func:`rank_features` gives."""

Analyzer = Callable[[str, str | None], list[str]]
_Sums = tuple[tuple[float, float, float, float], ...]
"""Per block, a text's sum of squared term weights and its dot products with the
decision, desk and runs coefficients (see :meth:`DecisionModel._read`)."""
BLOCKS: tuple[tuple[str, Analyzer], ...] = (
    ("chars", char_terms),
    ("words", word_terms),
    ("parent", parent_terms),
)
"""The feature blocks, in the order of the model file's columns."""


@dataclass(frozen=True, slots=True)
class _Block:
    name: str
    analyze: Analyzer
    terms: dict[str, tuple[int, float, float, float, float]]
    """Term -> (column, inverse document frequency, decision coefficient, the desk
    reading's coefficient, the coefficient of the reading of text holding runs)."""

    def weighted(
        self, text: str, parent: str | None
    ) -> Iterator[tuple[float, tuple[int, float, float, float, float]]]:
        """Each known term of ``text`` (a reply to ``parent``) once, with its sublinear
        tf-idf weight and its entry: one lookup per distinct term."""
        log, lookup = math.log, self.terms.get
        for term, count in Counter(self.analyze(text, parent)).items():
            entry = lookup(term)
            if entry is not None:
                yield (1.0 + log(count)) * entry[1], entry


@dataclass(frozen=True, slots=True)
class DecisionModel:
    """A loaded model: :meth:`probability` that a message carries a decision, and
    :meth:`event_type` of the decision it carries."""

    name: str
    digest: str
    """The model file's SHA-256 (part of the rule set's fingerprint: a new model
    re-derives the blocks)."""
    threshold: float
    blocks: tuple[_Block, ...]
    intercept: float
    types: tuple[str, ...]
    type_weights: tuple[tuple[dict[int, float], ...], ...]
    """Per type, per block: column -> coefficient of the type classifier."""
    type_intercepts: tuple[float, ...]
    desk_intercept: float
    """The desk reading's intercept (its coefficients are in each block's terms)."""
    runs_intercept: float
    """The intercept of the decision reading of text that holds a run written without
    spaces (its coefficients are in each block's terms; see :meth:`probability`)."""
    selector: Boosted
    """The clause selector: trees over :func:`clause_features` (ADR 0074)."""
    clause_threshold: float
    """A clause scoring at least this is kept besides the best one."""
    ranker: Boosted
    """The hard-event ranker: trees over :func:`rank_features`."""
    _kept: Callable[[str, str | None], _Sums] = field(init=False, repr=False, compare=False)

    def rank(self, features: Sequence[float]) -> float:
        """The probability, 0 to 1, that a hard event with these :func:`rank_features`
        is a decision a reader needs: what orders hard events under a budget. Rounded
        to nine digits (the same on every host; a score reaches block ids)."""
        return self.ranker.probability(features)

    def clause_scores(
        self,
        content: str,
        clauses: Sequence[tuple[int, int]],
        scored: Sequence[int],
        decided: frozenset[tuple[int, int]],
    ) -> list[float]:
        """For each clause ``scored``, the probability that it states the message's
        decision (see :func:`clause_features`)."""
        rows = clause_features(content, clauses, scored, decided, self.readings)
        # nine digits (the trees round so): the same choice on every host
        return [self.selector.probability(row) for row in rows]

    def _features(self, text: str, parent: str | None) -> list[dict[int, float]]:
        """Each block's TF-IDF vector (sublinear tf, unit length) as column -> value."""
        vectors = []
        for block in self.blocks:
            values = {entry[0]: value for value, entry in block.weighted(text, parent)}
            norm = math.sqrt(math.fsum(v * v for v in values.values()))
            vectors.append({c: v / norm for c, v in values.items()} if norm else {})
        return vectors

    @staticmethod
    def _dot(vectors: Sequence[dict[int, float]], weights: Sequence[dict[int, float]]) -> float:
        return math.fsum(
            value * block_weights.get(column, 0.0)
            for vector, block_weights in zip(vectors, weights, strict=True)
            for column, value in vector.items()
        )

    def __post_init__(self) -> None:
        kept = functools.lru_cache(maxsize=SUMS_KEPT)(self._read)
        object.__setattr__(self, "_kept", kept)  # a model of its own: a cache of its own

    def _read(self, text: str, parent: str | None) -> _Sums:
        """Per block, the sum of the squares of ``text``'s term weights and its dot
        products with the decision, the desk and the runs coefficients: what
        :meth:`probability` and :meth:`readings` are computed from. One lookup per
        distinct term gives its inverse document frequency and its coefficients together."""
        sums = []
        for block in self.blocks:
            squares = dot = desk_dot = runs_dot = 0.0
            for value, entry in block.weighted(text, parent):
                squares += value * value
                dot += value * entry[2]
                desk_dot += value * entry[3]
                runs_dot += value * entry[4]
            sums.append((squares, dot, desk_dot, runs_dot))
        return tuple(sums)

    def _sums(self, text: str, parent: str | None) -> _Sums:
        """:meth:`_read`, kept for the last ``SUMS_KEPT`` texts read (deriving a message
        reads it, its decision clauses and its parent more than once)."""
        if len(text) + len(parent or "") > SUMS_MAX_CHARS:
            return self._read(text, parent)
        return self._kept(text, parent)

    def probability(self, text: str, parent: str | None = None) -> float:
        """The probability, 0 to 1, that ``text`` (a reply to ``parent``) is a decision:
        the hot path (every message no rule matches).

        Text that holds a run of Chinese, Japanese or Korean is read by a classifier of
        its own, trained on the same lines and on phrasing sets in those languages; other
        text by the decision classifier, which learnt none of them: learning them moved
        its reading of English, French and German look-alikes (ADRs 0042, 0043)."""
        return self._scores(text, parent)[0]

    def desk_probability(self, text: str) -> float:
        """The probability, 0 to 1, that ``text`` is a decision as the labelled desks
        read one: a second classifier over the same features, trained besides the
        phrasing sets with a hundred and one labelled desks, where a decision reported again (an
        order system's record of a trader's fill, a recap) is labelled none. Not what
        recognises a decision (:meth:`probability` does): what ranks one."""
        return self.readings(text)[1]

    def readings(self, text: str) -> tuple[float, float]:
        """:meth:`probability` and :meth:`desk_probability` of ``text`` (read without a
        parent) from one reading of its terms: what ranking a hard event asks for."""
        return self._scores(text, None)

    def _scores(self, text: str, parent: str | None) -> tuple[float, float]:
        """The decision probability of ``text`` (by the reading of runs where
        :func:`reads_runs`) and the desk reading's, from one reading of its terms."""
        runs = reads_runs(text)
        z = self.runs_intercept if runs else self.intercept
        desk = self.desk_intercept
        for squares, dot, desk_dot, runs_dot in self._sums(text, parent):
            if squares:
                norm = math.sqrt(squares)
                z += (runs_dot if runs else dot) / norm
                desk += desk_dot / norm
        return _sigmoid(z), _sigmoid(desk)

    def readable(self, text: str) -> bool:
        """Whether the model has something to read in ``text``: at least
        ``MIN_KNOWN_WORDS`` distinct words (letters or digits) it saw in training, and at
        least a third of its distinct words. A pasted token, a blob or markup is not. A run
        of Chinese, Japanese or Korean counts as its two-character pieces (:func:`words`),
        which the reading of text holding runs learnt (ADR 0043)."""
        distinct = {w for w in words(_prepared(text)) if w[0].isalnum()}
        vocabulary = next(b.terms for b in self.blocks if b.analyze is word_terms)
        known = sum(1 for w in distinct if w in vocabulary)
        return known >= MIN_KNOWN_WORDS and 3 * known >= len(distinct)

    def event_type(self, text: str, parent: str | None = None) -> str:
        """The decision type the model finds most likely for ``text``."""
        vectors = self._features(text, parent)
        scores = [
            b + self._dot(vectors, w)
            for b, w in zip(self.type_intercepts, self.type_weights, strict=True)
        ]
        return self.types[max(range(len(scores)), key=lambda i: (scores[i], -i))]


def _block_weights(row: Sequence[float], sizes: Sequence[int]) -> tuple[dict[int, float], ...]:
    """One coefficient row (all blocks' columns, in order) split per block, zeros left out."""
    out: list[dict[int, float]] = []
    start = 0
    for size in sizes:
        out.append({i: w for i, w in enumerate(row[start : start + size]) if w})
        start += size
    return tuple(out)


def parse_model(raw: bytes, name: str) -> DecisionModel:
    """A model from its file's bytes (gzip-compressed JSON, see ``bench/train_model.py``)."""
    data: dict[str, Any] = json.loads(gzip.decompress(raw))
    if data.get("format") != FORMAT:
        raise ValueError(f"decision model {name}: unknown format {data.get('format')!r}")
    if [b["name"] for b in data["blocks"]] != [n for n, _ in BLOCKS]:
        raise ValueError(f"decision model {name}: unexpected blocks")
    clauses = data["clauses"]
    try:
        selector = parse_boosted(clauses, CLAUSE_FEATURES)
        clause_threshold = _finite(clauses["threshold"], 1.0)
        if clause_threshold < 0:
            raise ValueError("a threshold below 0")
    except (ValueError, TypeError, KeyError) as error:
        raise ValueError(f"decision model {name}: unexpected clause features ({error})") from None
    try:
        ranker = parse_boosted(data["rank"], RANK_FEATURES)
    except (ValueError, TypeError, KeyError) as error:
        raise ValueError(f"decision model {name}: unexpected rank features ({error})") from None
    sizes = [len(b["idf"]) for b in data["blocks"]]
    decision = _block_weights(data["decision"]["coef"], sizes)
    desk = _block_weights(data["desk"]["coef"], sizes)
    runs = _block_weights(data["runs"]["coef"], sizes)
    blocks = tuple(
        _Block(
            spec["name"],
            analyze,
            {
                term: (
                    i,
                    idf,
                    weights.get(i, 0.0),
                    desk_weights.get(i, 0.0),
                    runs_weights.get(i, 0.0),
                )
                for i, (term, idf) in enumerate(zip(spec["terms"], spec["idf"], strict=True))
            },
        )
        for spec, (_, analyze), weights, desk_weights, runs_weights in zip(
            data["blocks"], BLOCKS, decision, desk, runs, strict=True
        )
    )
    return DecisionModel(
        name=name,
        digest=hashlib.sha256(raw).hexdigest(),
        threshold=float(data["threshold"]),
        blocks=blocks,
        intercept=float(data["decision"]["intercept"]),
        types=tuple(data["types"]["classes"]),
        type_weights=tuple(_block_weights(row, sizes) for row in data["types"]["coef"]),
        type_intercepts=tuple(float(b) for b in data["types"]["intercept"]),
        desk_intercept=float(data["desk"]["intercept"]),
        runs_intercept=float(data["runs"]["intercept"]),
        selector=selector,
        clause_threshold=clause_threshold,
        ranker=ranker,
    )


class Scorer(Protocol):
    """What a rule set asks of its model (a loaded :class:`DecisionModel`, or the
    :class:`ShippedModel` handle that loads one on first use)."""

    @property
    def name(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def threshold(self) -> float: ...
    def probability(self, text: str, parent: str | None = None) -> float: ...
    def event_type(self, text: str, parent: str | None = None) -> str: ...
    def desk_probability(self, text: str) -> float: ...
    def readings(self, text: str) -> tuple[float, float]: ...
    def readable(self, text: str) -> bool: ...
    @property
    def clause_threshold(self) -> float: ...
    def clause_scores(
        self,
        content: str,
        clauses: Sequence[tuple[int, int]],
        scored: Sequence[int],
        decided: frozenset[tuple[int, int]],
    ) -> list[float]: ...
    def rank(self, features: Sequence[float]) -> float: ...


@functools.cache
def _parsed(name: str) -> DecisionModel:
    raw = resources.files("channel_memory.worker").joinpath(MODEL_FILE).read_bytes()
    return parse_model(raw, name)


@dataclass(frozen=True, slots=True)
class ShippedModel:
    """A shipped model by name and digest; parsed on first use, once per process (the
    parsed vocabulary takes about 155 MB: a server process that never derives never
    loads it)."""

    name: str
    digest: str

    @property
    def loaded(self) -> DecisionModel:
        return _parsed(self.name)

    @property
    def threshold(self) -> float:
        return self.loaded.threshold

    def probability(self, text: str, parent: str | None = None) -> float:
        return self.loaded.probability(text, parent)

    def event_type(self, text: str, parent: str | None = None) -> str:
        return self.loaded.event_type(text, parent)

    def desk_probability(self, text: str) -> float:
        return self.loaded.desk_probability(text)

    def readings(self, text: str) -> tuple[float, float]:
        return self.loaded.readings(text)

    def readable(self, text: str) -> bool:
        return self.loaded.readable(text)

    @property
    def clause_threshold(self) -> float:
        return self.loaded.clause_threshold

    def clause_scores(
        self,
        content: str,
        clauses: Sequence[tuple[int, int]],
        scored: Sequence[int],
        decided: frozenset[tuple[int, int]],
    ) -> list[float]:
        return self.loaded.clause_scores(content, clauses, scored, decided)

    def rank(self, features: Sequence[float]) -> float:
        return self.loaded.rank(features)


@functools.cache
def load_model(name: str) -> ShippedModel:
    """The shipped model ``name``: its digest now (a rule set's fingerprint needs it),
    its parsing when it is first asked to score."""
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown decision model: {name}")
    raw = resources.files("channel_memory.worker").joinpath(MODEL_FILE).read_bytes()
    return ShippedModel(name, hashlib.sha256(raw).hexdigest())
