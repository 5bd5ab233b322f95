"""The learned decision model that backs the shipped rules (worker/model.py, ADR 0031)."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import math
import random
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from bench.training_desks import EARLIER_DEVELOPMENT
from channel_memory.worker.classify import MODEL_BASE, classify, hard_event_score, rule_score
from channel_memory.worker.derive import DeriveSettings, analyse
from channel_memory.worker.model import (
    BLOCKS,
    CLAUSE_FEATURES,
    FORMAT,
    MODEL_FILE,
    RANK_FEATURES,
    TREES_MAX,
    Boosted,
    char_terms,
    clause_features,
    load_model,
    parse_boosted,
    parse_model,
    parse_tree,
    rank_features,
    word_terms,
    words,
)
from channel_memory.worker.render import ELLIPSIS, clause_cut
from channel_memory.worker.rules import (
    HardEventRule,
    ModelDecision,
    RulesError,
    clause_bounds,
    default_rules,
    parse_rules,
)
from tests.conftest import LiveServer, message_event, rules_test_output, source_version

ROOT = Path(__file__).resolve().parent.parent
RULES = default_rules()
RULES_ONLY = dataclasses.replace(RULES, model=None)
MODEL = load_model("trading-desk")

# decisions of the development data that no rule matches: only the model finds them
MODEL_ONLY = {
    "upgrading conviction on gold to high": "thesis_change",
    "Entries have been blocked on the rates book pending the VaR review.": "risk_limit",
    "On est flat sur le Bund.": "position_change",
}


def _model_file() -> dict[str, object]:
    raw = resources.files("channel_memory.worker").joinpath(MODEL_FILE).read_bytes()
    data: dict[str, object] = json.loads(gzip.decompress(raw))
    return data


def test_the_model_was_trained_on_the_training_files_as_they_are() -> None:
    """New labelled lines mean training again (bench/train_model.py): the model records
    the SHA-256 of every file it was trained on."""
    recorded = _model_file()["trained_on"]
    assert isinstance(recorded, dict) and recorded
    for path, digest in recorded.items():
        assert hashlib.sha256((ROOT / path).read_bytes()).hexdigest() == digest, path
    # the held-out data is never trained on: no file named held-out but the first forty
    # desks, development desks whose misses were read in earlier rounds, which the desk
    # reading learns from (ADRs 0038, 0039), three development desks mostly in Korean,
    # Chinese and Japanese the selector and the ranker learn from (ADR 0044), and the
    # fifty-four development desks up to desk_heldout181 (41 to 53, 97 to 99, 108 to 112,
    # 116 to 118, and of 125 to 181 the first three of every six), which the desk reading,
    # the selector and the ranker learn from since ADR 0073; not the phrasing held-out set,
    # not a development desk after 181 (they measure what that training adds), nor a
    # held-out desk (54 to 90, 93 to 95, 100 to 107, 113 to 115, 119 to 124, and from 125 on
    # the last three of every six), nor the Italian development sets, nor the everyday sets
    # (measured and read, never trained on: ADR 0052)
    # (the earlier development desks as the trainer names them; whether any is held out is
    # checked against the held-out set written out below, not against that list)
    earlier = [int(path.stem.removeprefix("desk_heldout")) for path in EARLIER_DEVELOPMENT]
    assert len(earlier) == 54 and max(earlier) == 181
    development = {"bench/data/desk_heldout.jsonl"} | {
        f"bench/data/desk_heldout{n}.jsonl" for n in (*range(2, 41), 91, 92, 96, *earlier)
    }
    held_out = {
        f"bench/data/desk_heldout{n}.jsonl"
        for n in (
            *range(54, 91),
            93,
            94,
            95,
            *range(100, 108),
            113,
            114,
            115,
            *range(119, 125),
            *(n for n in range(125, 1000) if (n - 125) % 6 >= 3),
        )
    }
    held = {path for path in recorded if "heldout" in path}
    assert held == development
    assert not held & held_out
    assert not [path for path in recorded if "heldout" in path and "decisions" in path]
    assert not [path for path in recorded if "italian" in path or "everyday" in path]


def test_the_desk_reading_ranks_an_order_systems_record_below_a_traders_report() -> None:
    # the labelled desks call an order system's record of a fill a trader reported an
    # echo: the desk reading (a ranker feature) reads such records less surely than the
    # decision model does, and a trader's own report as surely (by 0.25 and more until
    # the desk reading learnt the Chinese, Japanese and Korean phrasing sets, whose
    # records of fills are decisions: by 0.15 with six of them, ADR 0042; by 0.12 with
    # eight, ADR 0043)
    records = (
        "[OMS] FILL ord=XX-10293 acct=FX-02 EURUSD BUY 5,000,000 @ 1.0842 leaves=0",
        "FILL id=EBS-1234 side=SELL ccy_pair=USDJPY amt=10,000,000 px=151.230 venue=EBS",
    )
    for record in records:
        assert MODEL.desk_probability(record) < MODEL.probability(record) - 0.1, record
    report = "bought 5m EURUSD at 1.0842"
    assert MODEL.desk_probability(report) > 0.9
    again = parse_model(
        resources.files("channel_memory.worker").joinpath(MODEL_FILE).read_bytes(), "again"
    )
    for text in (*records, report, "anyone for coffee?", "", "🚀" * 50):
        p = MODEL.desk_probability(text)
        assert 0.0 <= p <= 1.0 and again.desk_probability(text) == p
        # ranking reads both from one pass over the terms: the same as each alone
        assert MODEL.readings(text) == (MODEL.probability(text), p)


@pytest.mark.parametrize(("text", "event_type"), sorted(MODEL_ONLY.items()))
def test_the_model_finds_decisions_no_rule_matches(text: str, event_type: str) -> None:
    assert RULES_ONLY.decide(text) is None
    decision = RULES.decide(text)
    assert isinstance(decision, ModelDecision)
    assert decision.event_type == event_type
    assert MODEL.threshold <= decision.probability <= 1.0


def test_probabilities_are_deterministic_and_bounded() -> None:
    texts = ["", "x" * 20_000, "lifted 5k AAPL 231.40", "anyone for coffee?", "🚀" * 50]
    for text in texts:
        p = MODEL.probability(text)
        assert 0.0 <= p <= 1.0
        assert MODEL.probability(text) == p
        assert (
            parse_model(
                resources.files("channel_memory.worker").joinpath(MODEL_FILE).read_bytes(), "again"
            ).probability(text)
            == p
        )
    assert MODEL.probability("lifted 5k AAPL 231.40") > 0.9
    assert MODEL.probability("anyone for coffee?") < 0.1


_SPLIT: dict[str, Any] = {
    "feature": [1, -1, -1],
    "threshold": [0.5, 0.0, 0.0],
    "left": [1, -1, -1],
    "right": [2, -1, -1],
    "value": [0.0, -2.0, 2.0],
}
"""A tree entry: one split on feature 1 at 0.5."""


@pytest.mark.parametrize(
    "clauses",
    [
        # a tree reading a feature the selector does not give
        {"init": 0.0, "trees": [{**_SPLIT, "feature": [CLAUSE_FEATURES, -1, -1]}]},
        {"trees": []},  # no starting log-odds
        {"coef": [0.0] * CLAUSE_FEATURES, "intercept": 0.0},  # format 7's regression
    ],
)
@pytest.mark.parametrize("threshold", [math.nan, 7, -1, True, "0.5", None, "missing"])
def test_a_model_file_whose_clause_selector_does_not_fit_is_refused(
    clauses: dict[str, Any], threshold: Any
) -> None:
    # trees that do not fit, or a threshold that is no number from 0 to 1 (a review: NaN
    # kept only the best clause, silently)
    blocks = [{"name": name} for name, _ in BLOCKS]
    unfit = {"init": 0.0, "trees": [], "threshold": threshold}
    for entry in ({**clauses, "threshold": 0.5}, unfit):
        if threshold == "missing":
            entry.pop("threshold")
        broken = {"format": FORMAT, "blocks": blocks, "clauses": entry}
        with pytest.raises(ValueError, match="clause features"):
            parse_model(gzip.compress(json.dumps(broken).encode()), "broken")


def _tree(**changes: Any) -> dict[str, Any]:
    """A ranker tree entry: one split on feature 1 (the model's probability) at 0.5."""
    return _SPLIT | changes


def _file(rank: Any) -> bytes:
    broken = {
        "format": FORMAT,
        "blocks": [{"name": name} for name, _ in BLOCKS],
        "clauses": {"init": 0.0, "trees": [], "threshold": 0.5},
        "rank": rank,
    }
    return gzip.compress(json.dumps(broken).encode())


@pytest.mark.parametrize(
    "tree",
    [
        _tree(feature=[RANK_FEATURES, -1, -1]),  # a feature the ranker does not give
        _tree(feature=[1, -2, -1]),  # neither a feature nor a leaf
        _tree(feature=[1.0, -1, -1]),  # an index that is not an integer
        _tree(feature=[True, -1, -1]),
        _tree(left=[0, -1, -1]),  # a child that does not follow its node: a walk never ends
        _tree(right=[3, -1, -1]),  # a child beyond the tree
        _tree(value=[0.0, -2.0]),  # columns of different lengths
        _tree(feature=[], threshold=[], left=[], right=[], value=[]),  # no node
        _tree(value=[0.0, -2.0, math.nan]),  # not a number: would rank first
        _tree(value=[0.0, math.inf, -math.inf]),  # sums to nothing
        _tree(value=[0.0, 1e308, 1e308]),  # beyond any log-odds: sums overflow
        _tree(threshold=[None, 0.0, 0.0]),
        _tree(threshold=["0.5", 0.0, 0.0]),
        _tree(value=[0.0, 10**400, 0.0]),  # an integer no float holds
        {"feature": [1, -1, -1]},  # columns missing
    ],
)
def test_a_model_file_whose_ranker_trees_do_not_fit_is_refused(tree: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="rank features"):
        parse_model(_file({"init": 0.0, "trees": [_tree(), tree]}), "broken")


@pytest.mark.parametrize(
    "rank",
    [
        {"trees": []},  # no starting log-odds
        {"init": math.inf, "trees": []},
        {"init": 0.0, "trees": {}},
        {"init": 0.0, "trees": [_tree()] * (TREES_MAX + 1)},
        {"coef": [0.0] * RANK_FEATURES, "intercept": 0.0},  # format 6's ranker
    ],
)
def test_a_model_file_whose_ranker_does_not_fit_is_refused(rank: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="rank features"):
        parse_model(_file(rank), "broken")


def test_an_ensemble_reads_as_many_features_as_it_was_built_for() -> None:
    # a split on the last feature: the value 1 there goes right (+2)
    last = {"init": 0.0, "trees": [_tree(feature=[RANK_FEATURES - 1, -1, -1])]}
    row = [0.0] * (RANK_FEATURES - 1) + [1.0]
    assert parse_boosted(last, RANK_FEATURES).probability(row) == round(1 / (1 + math.exp(-2.0)), 9)
    with pytest.raises(ValueError, match="feature"):
        parse_boosted(last, RANK_FEATURES - 1)
    with pytest.raises(ValueError, match="features"):
        parse_boosted(last, RANK_FEATURES).probability(row[:-1])


def test_the_ranker_adds_the_leaves_its_trees_reach_reading_features_in_single_precision() -> None:
    # one tree: probability at most float32(0.1) goes left (-2), above it right (+2)
    edge = 0.10000000149011612  # 0.1 in single precision, read back as a double
    model = dataclasses.replace(
        parse_model(_tiny_model(decision=0.0, runs=0.0), "tiny"),
        ranker=Boosted(
            RANK_FEATURES, 0.5, (parse_tree(_tree(threshold=[edge, 0.0, 0.0]), RANK_FEATURES),)
        ),
    )
    row = _rank_row(False)
    low, high = list(row), list(row)
    low[1], high[1] = 0.05, 0.9
    assert model.rank(low) == round(1 / (1 + math.exp(-(0.5 - 2.0))), 9)
    assert model.rank(high) == round(1 / (1 + math.exp(-(0.5 + 2.0))), 9)
    # above the split as a double, at it in single precision: read as the trainer's trees
    # read it (scikit-learn compares features cast to float32), so it goes left
    just_above = list(row)
    just_above[1] = 0.1000000016
    assert just_above[1] > edge
    assert model.rank(just_above) == model.rank(low)
    with pytest.raises(ValueError, match="features"):
        model.rank(row[:-1])


def _ranked(text: str, origin: str = "human") -> float:
    version = dataclasses.replace(source_version(content=text), origin=origin)
    classified = classify(version, RULES, 3_600_000_000)
    assert classified.cls == "hard_event", text
    return classified.score


FILL_RECORD = "FILL ord=88213 sym=AAPL side=SELL qty=5,000 px=189.40 status=FILLED"
WRAP_MENTION = (
    "Desk wrap\n"
    + "\n".join(f"- context line {i}: tape quiet, spreads unchanged" for i in range(15))
    + "\n- sold 5k AAPL 189.40 earlier, as planned"
)


def test_the_ranker_weighs_who_wrote_it_and_how_plainly() -> None:
    plain = _ranked("sold 5k AAPL 189.40")
    # an app's record is more often the echo of a fill a trader reported than a person's
    assert _ranked(FILL_RECORD, "app") < _ranked(FILL_RECORD, "human")
    # a long wrap that mentions a fill among its lines is less surely a decision
    assert _ranked(WRAP_MENTION) < 0.75 * plain
    for text in ("sold 5k AAPL 189.40", FILL_RECORD, WRAP_MENTION):
        decision = RULES.decide(text)
        assert decision is not None
        # without a model the rules' own reading orders hard events, as before
        assert hard_event_score(decision, RULES_ONLY, text, None, False) == rule_score(
            decision, RULES_ONLY, text, None
        )
        # a bridge tag is sure whatever the ranker says
        assert hard_event_score(decision, RULES, text, None, True) == 1.0


def test_a_thread_root_ranks_as_a_message_of_its_own() -> None:
    # a thread's root carries its own id as thread_id: it replies to nothing
    plain = source_version("m", "bought 200 NVDA at 131.20")
    root = dataclasses.replace(plain, thread_id="m")
    reply = dataclasses.replace(plain, thread_id="r")
    score = classify(plain, RULES, 3_600_000_000).score
    assert classify(root, RULES, 3_600_000_000).score == score
    # a ranker whose one tree splits on whether the message replies tells them apart
    row = _rank_row(False)
    replying = next(
        i for i, (a, b) in enumerate(zip(row, _rank_row(False, True), strict=True)) if a != b
    )
    split = parse_tree(_tree(feature=[replying, -1, -1]), RANK_FEATURES)
    tiny = dataclasses.replace(
        parse_model(_tiny_model(0.0, 0.0), "tiny"), ranker=Boosted(RANK_FEATURES, 0.0, (split,))
    )
    rules = dataclasses.replace(RULES, model=tiny)
    alone = classify(plain, rules, 3_600_000_000).score
    assert classify(root, rules, 3_600_000_000).score == alone
    assert classify(reply, rules, 3_600_000_000).score > alone


PINNED_RANKS = {
    "sold 5k AAPL 189.40": 0.7985,
    FILL_RECORD: 0.512,
    WRAP_MENTION: 0.1773,
    # read by the reading of runs: the ranker's three features for it are not zero (ADR 0044)
    "日経先物 3枚 売り建て完了": 0.6747,
    "IF2506空单平10手, 批": 0.3952,
}
"""The shipped ranker's scores of these hard events (set when it was trained)."""


def test_the_shipped_rankers_scores_are_what_it_was_trained_to_give() -> None:
    # rank_features is shared by the trainer and the worker: an edit of it without
    # training again would skew what the weights read (retraining updates these figures)
    got = {
        text: round(_ranked(text, "app" if text == FILL_RECORD else "human"), 4)
        for text in PINNED_RANKS
    }
    assert got == PINNED_RANKS


def test_clause_selection_stays_bounded_on_a_very_long_report() -> None:
    # only clauses in the head and tail the model reads are scored: a report of 2,000
    # decision lines costs what its head and tail cost
    report = "\n".join(f"- sold {n} ES at 6700" for n in range(2_000))
    shown = RULES.shown_spans(report)
    assert shown and all(a < 3000 or b > len(report) - 3000 for a, b in shown)


def test_a_long_message_is_read_by_its_head_and_tail() -> None:
    # bounded work: the middle of a very long message adds no terms
    middle = "y" * 50_000
    assert char_terms("a " + middle + " b") == char_terms("a " + "y" * 10_000 + " b")


def test_a_words_character_terms_are_the_same_whether_kept_or_cut_again() -> None:
    # the n-grams of recent short words are kept; every word, short or long, seen before
    # or not, gives the terms the definition says, in order (the sums read them in order)
    def defined(text: str) -> list[str]:
        terms = []
        for word in " ".join(text.lower().split()).split():
            padded = f" {word} "
            for n in range(2, 6):
                terms += [padded[i : i + n] for i in range(len(padded) - n + 1)]
        return terms

    rng = random.Random(7)
    words_seen = ["a", "ab", "abc", "abcd", "x" * 16, "y" * 17, "sold", "5k", "aapl", "日本"]
    for _ in range(300):
        text = " ".join(rng.choice(words_seen) for _ in range(rng.randint(0, 12)))
        assert char_terms(text) == defined(text), text


def test_the_guards_hold_for_the_model() -> None:
    question = "lifted 5k AAPL 231.40?"
    conditional = "if 1.0850 goes we sell 20m EURUSD"
    for text in (question, conditional):
        assert MODEL.probability(text) >= MODEL.threshold, text  # the model alone would
        assert RULES.decide(text) is None, text


def test_the_guards_hold_for_replies_and_behind_a_preamble() -> None:
    for text in (
        "lifted 5k AAPL 231.40?",
        "if 1.0850 goes we sell 20m EURUSD",
        "send it",
    ):
        assert RULES.decide(text, parent="morning all") is None, text
    # what the model reads must be a decision without the guarded clauses too
    for preamble in ("fyi.", "gm.", "heads up."):
        for guarded in ("if 1.0850 goes we sell 20m EURUSD", "lifted 5k AAPL 231.40?"):
            text = f"{preamble} {guarded}"
            assert RULES.decide(text) is None, text


def test_a_bare_approval_decides_only_as_a_reply_to_a_proposal() -> None:
    assert MODEL.probability("go") >= MODEL.threshold  # the model alone would keep it
    assert RULES.decide("go") is None
    decision = RULES.decide("go", parent="pitch: long 300 SOL @ 142, stop 131")
    assert decision is not None and decision.event_type == "trade_approval"
    assert RULES.decide("go", parent="lunch at 1?") is None


PITCH = "proposal: sell 12 BTCG7 at 103,600 as an overnight hedge"


def test_a_decision_by_reply_ranks_by_its_reply_rule_not_by_the_model() -> None:
    settings = DeriveSettings(RULES, 3_600_000_000, 8, 1200)
    parent = source_version("p", PITCH)
    plain = classify(source_version(content="sold 5k AAPL 189.40"), RULES, 3_600_000_000)
    # a verdict with its reasons the model finds unlike a decision, and one its own rule
    # matches (a sale in its reasons): each ranks as a decision by reply, near a plain fill
    for text in (
        "👍 do it, 12 is fine. Dana's asleep, I'll tell her in the morning.",
        "no. not selling 800 puts into a hawkish Fed afternoon, let it expire.",
    ):
        reply = source_version("r", text, reply_to="p")
        analysis = analyse(reply, settings, parent)
        assert analysis.classified.cls == "hard_event" and analysis.answers == "floor/p"
        assert analysis.classified.score > 0.9 * plain.score, text
        assert rule_score(RULES.reply_decision(text, PITCH), RULES, text, PITCH) == 1.0
        alone = classify(reply, RULES, 3_600_000_000)
        # without its parent: its own rule and the ranker, or no hard event at all
        assert alone.cls != "hard_event" or alone.score < analysis.classified.score


def test_a_verdict_typed_by_its_own_rule_is_still_shown_cut_with_its_verdict() -> None:
    # "ok. we sold 6 ..." under a proposal is a fill by its own rule and answers the
    # proposal: its cut keeps the "ok." that makes it a verdict, not only the fill
    settings = DeriveSettings(RULES, 3_600_000_000, 8, 1200)
    text = "ok. we sold 6 BTCG7 at 103,550 this morning, the rest can wait for Asia. " * 2
    analysis = analyse(
        source_version("r", text.strip(), reply_to="p"), settings, source_version("p", PITCH)
    )
    assert analysis.classified.event_type == "trade_fill" and analysis.answers == "floor/p"
    assert analysis.facts.cut_text is not None and analysis.facts.cut_text.startswith(
        "ok. we sold 6"
    )
    # the same text answering nothing is cut to its fill alone
    alone = analyse(source_version("r", text.strip()), settings)
    assert alone.facts.cut_text is not None and alone.facts.cut_text.startswith("… we sold 6")


def test_a_yes_under_chatter_ranks_below_decisions_however_its_parent_reads() -> None:
    # "team lunch at 1, ok?" passes the approval rule's parent patterns; only a rule typing
    # the parent as a proposal makes the reply sure
    settings = DeriveSettings(RULES, 3_600_000_000, 8, 1200)
    chatter = analyse(
        source_version("r", "yes", reply_to="p"),
        settings,
        source_version("p", "team lunch at 1, ok?"),
    )
    approval = analyse(
        source_version("r", "yes", reply_to="p"), settings, source_version("p", PITCH)
    )
    plain = classify(source_version(content="sold 5k AAPL 189.40"), RULES, 3_600_000_000)
    assert chatter.classified.cls == approval.classified.cls == "hard_event"
    assert approval.classified.score > 0.9 * plain.score
    assert chatter.classified.score < 0.2 < plain.score


def test_a_model_only_decision_is_cut_to_the_clauses_the_model_finds() -> None:
    report = "\n".join(
        ["Weekly macro wrap"]
        + [f"context line {i}: markets drifted, spreads unchanged" for i in range(8)]
        + ["upgrading conviction on gold to high"]
    )
    assert RULES.decision_spans(report) == []
    [(start, end)] = RULES.shown_spans(report)
    assert report[start:end] == "upgrading conviction on gold to high"
    assert clause_cut(report, RULES.shown_spans(report)) == (
        f"{ELLIPSIS} upgrading conviction on gold to high"
    )
    # without a model, nothing is cut
    assert RULES_ONLY.shown_spans(report) == []


def test_the_rules_reading_puts_their_own_decisions_before_model_only_ones() -> None:
    plain = "sold 5k AAPL 189.40"
    rule = RULES.decide(plain)
    assert isinstance(rule, HardEventRule)
    ruled = rule_score(rule, RULES, plain, None)
    for text in MODEL_ONLY:
        found = RULES.decide(text)
        assert isinstance(found, ModelDecision)
        score = rule_score(found, RULES, text, None)
        assert score == pytest.approx(MODEL_BASE * found.probability)
        assert score < ruled
        # the ranker weighs it among the rest by what labelled desks say (ADR 0034)
        assert 0.0 < hard_event_score(found, RULES, text, None, tagged=False) < 1.0
    classified = classify(source_version(content="On est flat sur le Bund."), RULES, 3_600_000_000)
    assert (classified.event_type, classified.group_key) == ("position_change", None)
    decision = RULES.decide("On est flat sur le Bund.")
    assert decision is not None
    assert classified.score == hard_event_score(
        decision, RULES, "On est flat sur le Bund.", None, tagged=False
    )


def test_a_rules_file_names_its_model() -> None:
    rule = "[[rule]]\nname='x'\nevent_type='x'\npatterns=['rolled back']\n"
    own = parse_rules(rule, "ops.toml")
    assert own.model is None  # a file of one's own has no model unless it names one
    assert own.decide("On est flat sur le Bund.") is None
    backed = parse_rules("model = 'trading-desk'\n" + rule, "ops.toml")
    assert backed.model is MODEL
    assert backed.fingerprint != own.fingerprint  # a new model re-derives every block
    with pytest.raises(RulesError, match=r"ops\.toml: model"):
        parse_rules("model = 'crystal-ball'\n" + rule, "ops.toml")


def test_rules_test_marks_what_only_the_model_found(
    make_server: Callable[..., LiveServer],
) -> None:
    out = rules_test_output(
        make_server,
        message_event("1", "sold 5k AAPL 189.40"),
        message_event("2", "On est flat sur le Bund."),
    )
    assert "  * floor/1 trade_fill (rule trade_fill): sold 5k AAPL 189.40" in out
    assert "  * floor/2 position_change (model): On est flat sur le Bund." in out


def test_the_model_promotes_nothing_it_cannot_read() -> None:
    rng = random.Random(7)
    blob = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGH_-") for _ in range(5_000))
    for junk in (blob, "Zqxv Wrtpl", "token: " + blob):
        assert not MODEL.readable(junk)
        assert RULES.decide(junk) is None
    assert MODEL.readable("On est flat sur le Bund.")


def test_a_run_written_without_spaces_is_read_as_its_pieces() -> None:
    # a run of Japanese is cut from the letters and digits around it and read as its
    # two-character pieces: the whole run would be a word no other message shares
    assert words("ドル円150.20で買い 5本") == [
        "ドル", "ル円", "150", ".", "20", "で買", "買い", "5", "本",
    ]  # fmt: skip
    assert words("한도 상향") == ["한도", "상향"]
    # text written with spaces reads as it always did
    text = "bought 5k AAPL @ 189.40, stop → 185 (über-tight) ok?"
    assert words(text.lower()) == [
        "bought", "5k", "aapl", "@", "189", ".", "40", ",", "stop", "→", "185", "(", "über",
        "-", "tight", ")", "ok", "?",
    ]  # fmt: skip
    assert "ドル ル円" in word_terms("ドル円")


# plain Japanese decisions (written for this test): ranked as surely as their English
# counterparts since the desk reading learnt Japanese (ADR 0042); a model that read a run
# as one word unknown to it, and had learnt none, ranked them 0.03 to 0.32, last under a
# budget (the thirty-second round's ranker: 0.59 to 0.80; the thirty-first's 0.61 to 0.82)
JAPANESE_DECISIONS = (
    "ドル円 150.20で5本買い、約定しました",
    "日経先物 38,500で10枚売り約定",
    "ストップを149.50から150.00に引き上げました",
    "日経先物の上限を50枚から30枚に引き下げ",
    "ソニー 3,000株をVWAPで野村に発注",
)


@pytest.mark.parametrize("text", JAPANESE_DECISIONS)
def test_a_japanese_decision_ranks_as_an_english_one(text: str) -> None:
    score = _ranked(text)
    assert score > 0.55, score
    assert score > _ranked(WRAP_MENTION)


def test_japanese_text_is_read_by_its_pieces_and_commentary_stays_ordinary() -> None:
    # a run counts as its two-character pieces when the model decides whether it may
    # promote a message: the reading of text holding runs learnt them (ADR 0043)
    commentary = "ドル円は上値が重い展開、本日は様子見"
    vocabulary = next(b.terms for b in MODEL.loaded.blocks if b.name == "words")
    assert {"ドル", "ル円", "上値"} <= vocabulary.keys()
    assert MODEL.readable(commentary)
    assert MODEL.probability(commentary) < MODEL.threshold
    assert RULES.decide(commentary) is None
    # a run of characters no line held is still nothing to read
    assert not MODEL.readable("鬱鬯鬲鬻 魑魅魍魎 饕餮")


def _tiny_model(decision: float, runs: float, intercepts: tuple[float, float] = (0, 0)) -> bytes:
    """A model file of two words ("sold", and the run piece "売り") whose decision and
    runs readings weigh them ``decision`` and ``runs``, with these ``intercepts``."""
    blocks = [
        {"name": name, "terms": ["sold", "売り"] if name == "words" else [], "idf": []}
        for name, _ in BLOCKS
    ]
    for block in blocks:
        block["idf"] = [1.0] * len(block["terms"])
    columns = 2

    def row(weight: float) -> list[float]:
        return [weight] * columns

    data = {
        "format": FORMAT,
        "threshold": 0.45,
        "blocks": blocks,
        "decision": {"coef": row(decision), "intercept": intercepts[0]},
        "desk": {"coef": row(0.0), "intercept": 0.0},
        "runs": {"coef": row(runs), "intercept": intercepts[1]},
        "types": {"classes": ["trade_fill"], "coef": [row(0.0)], "intercept": [0.0]},
        "clauses": {"init": 0.0, "trees": [], "threshold": 0.5},
        "rank": {"init": 0.0, "trees": []},
    }
    return gzip.compress(json.dumps(data).encode())


def test_text_holding_a_run_is_read_by_the_reading_of_runs_and_other_text_is_not() -> None:
    model = parse_model(_tiny_model(decision=4.0, runs=-4.0), "tiny")
    # "sold" alone: the decision reading; with a run beside it: the reading of runs
    assert model.probability("sold") > 0.9
    assert model.probability("sold 売り") < 0.1
    assert model.readings("sold") == (model.probability("sold"), 0.5)
    assert model.readings("sold 売り")[0] == model.probability("sold 売り")
    swapped = parse_model(_tiny_model(decision=-4.0, runs=4.0), "tiny")
    assert swapped.probability("sold") < 0.1 and swapped.probability("sold 売り") > 0.9
    # each reading its own intercept: text with no word the model knows reads as it
    biased = parse_model(_tiny_model(0.0, 0.0, intercepts=(2.0, -2.0)), "tiny")
    assert biased.probability("zzz") > 0.85 and biased.probability("zzz 鬱鬯") < 0.15
    # the choice is made on what the model reads: a long message is read as its first and
    # last 3,000 characters, and a run between them is not read
    middle = "sold " + "x " * 2000 + "売り" + " y" * 2000 + " sold"
    assert model.probability(middle) > 0.9


def test_a_short_answer_to_no_decision_decides_only_by_itself() -> None:
    # the worker reads a reply by itself, then with its parent when that found nothing:
    # the model's reading with the parent made "your call" under a question a decision;
    # under a message that is no decision (no rule's, no model's) it no longer does
    settings = DeriveSettings(RULES, 3_600_000_000, 8, 1200)

    def analysed(reply: str, parent: str) -> tuple[str, str | None]:
        found = analyse(
            source_version("r", reply, reply_to="p"), settings, source_version("p", parent)
        )
        return found.classified.cls, found.answers

    for reply, parent in (
        ("your desk, your call", "should we move the gold stop up a bit?"),
        ("go to sleep Marco 😄", "can't sleep... ES bouncing a bit, nikkei less bad than feared"),
    ):
        assert RULES.decide(parent) is None and MODEL.probability(parent) < MODEL.threshold
        assert RULES.decide(reply, parent=parent) is None, reply
        assert analysed(reply, parent)[0] != "hard_event", reply
    # the worker reads whether the parent is a decision from its own classification: a
    # question the bridge tags as a proposal is one, and the short answer decides on it
    tagged = analyse(
        source_version("r", "your desk, your call", reply_to="p"),
        settings,
        source_version("p", "should we move the gold stop up a bit?", tags=("proposal",)),
    )
    assert (tagged.classified.cls, tagged.answers) == ("hard_event", "floor/p")
    # and so do the reply tables: a bare verdict under it is an approval, not under the
    # same question untagged
    for verdict in ("yes", "approved", "👍", "denied"):
        for tags, decided in (((), False), (("proposal",), True)):
            found = analyse(
                source_version("r", verdict, reply_to="p"),
                settings,
                source_version("p", "should we move the gold stop up a bit?", tags=tags),
            )
            assert (found.classified.event_type == "trade_approval") == decided, verdict
            assert (found.answers == "floor/p") == decided, verdict
    # a proposal asked as a question, which no rule decides but the model reads as one,
    # is still a parent a short verdict is read with
    for reply, parent in (
        ("ok, 200", "can I add 200 Bund at 131.20?"),
        ("yes go", "can I lift the 2m cable offer at 1.2650?"),
        ("ok 5m", "limit on the credit book is tight, can we raise to 5m?"),
        ("ok vas-y", "Proposition : on vend les 500 puts mars 56, ils ne valent plus rien"),
    ):
        assert MODEL.probability(parent) >= MODEL.threshold, parent
        found = RULES.decide(reply, parent=parent)
        assert found is not None and found.event_type == "trade_approval", reply
        assert analysed(reply, parent) == ("hard_event", "floor/p"), reply
    # called with a parent that is no decision, decide keeps the reading with the
    # parent's type when the reply reads as a decision by itself as well
    route = "send the 300 ESZ6/H7 calendar through Skein passive, cap 52.00"
    question = "algo side for the ES roll, two ways: calendar on screen or legs?"
    assert RULES.decide(question) is None
    found = RULES.decide(route, parent=question)
    assert found is not None and found.event_type == "route_decision"


def test_a_kept_reading_is_the_reading_of_its_text_and_parent() -> None:
    """The model keeps its last readings by text and parent: a reply read with its
    parent, then alone, then again, reads as a fresh model reads each."""
    model = MODEL.loaded
    reply, parent = "yes", "can I buy 100 AAPL at 180?"
    with_parent, alone = model.probability(reply, parent), model.probability(reply)
    assert with_parent != alone  # the parent is part of what is kept
    assert model.probability(reply, parent) == with_parent
    fresh = dataclasses.replace(model)  # the same weights, nothing kept
    assert fresh.probability(reply) == alone and fresh.probability(reply, parent) == with_parent
    assert fresh.readings(parent) == model.readings(parent)
    long = "bought 5 ES " * 2_000  # longer than any kept text (read each time): the same
    assert model.probability(long) == fresh.probability(long)


def test_the_selector_weighs_a_clause_read_as_runs_apart() -> None:
    # ADR 0044: features 12 to 14 say whether the reading of text holding runs reads the
    # clause, alone and times its probability and a rule's match; a clause without a run
    # has them all zero, whatever its probability or match
    content = "sold 5k AAPL 189.40. IF2506空单平10手, 批."
    clauses = [(0, 20), (21, len(content))]
    chances = {content[0:20]: (0.9, 0.6), content[21:]: (0.7, 0.2)}
    rows = clause_features(content, clauses, [0, 1], frozenset(clauses), chances.__getitem__)
    assert len(rows[0]) == len(rows[1]) == CLAUSE_FEATURES
    assert rows[0][11:14] == [0.0, 0.0, 0.0]
    assert rows[1][11:14] == [1.0, 0.7, 1.0]
    assert rows[1][:2] == [0.7, 1.0]  # the shared features as before
    ruled_not = clause_features(content, clauses, [1], frozenset(), chances.__getitem__)
    assert ruled_not[0][11:14] == [1.0, 0.7, 0.0]


def test_the_selector_weighs_a_clause_against_the_others_of_its_message() -> None:
    # ADR 0074: the desk reading's probability of the clause, how far its probability
    # falls below the best scored clause's, how many scored clauses rate higher, a digit,
    # whether a rule matched any clause of the message, and whether it opens a list item
    content = "thanks all for the patience today\nsold 20k SAP GY at 231.50 on the open"
    clauses = [(0, 33), (34, len(content))]
    chances = {content[0:33]: (0.25, 0.125), content[34:]: (0.875, 0.75)}
    rows = clause_features(content, clauses, [0, 1], frozenset(), chances.__getitem__)
    assert rows[0][14:] == [0.125, -0.625, 1.0, 0.0, 0.0, 0.0]
    assert rows[1][14:] == [0.75, 0.0, 0.0, 1.0, 0.0, 0.0]
    ruled = frozenset(clauses[1:])
    rows = clause_features(content, clauses, [0, 1], ruled, chances.__getitem__)
    assert rows[0][18] == rows[1][18] == 1.0  # the rule matched the fill: both clauses know
    # only the clauses scored are compared: the greeting alone is the best of them
    (alone,) = clause_features(content, clauses, [0], frozenset(), chances.__getitem__)
    assert alone[15:17] == [0.0, 0.0]


def _rank_row(runs: bool, replying: bool = False) -> list[float]:
    return rank_features(
        base=0.5,
        probability=0.8,
        desk=0.6,
        strength=0.4,
        length=40,
        decided=1,
        by_model=False,
        by_reply=False,
        origin="human",
        lines=1,
        replying=replying,
        event_type="trade_fill",
        runs=runs,
    )


def test_the_ranker_weighs_a_message_read_as_runs_apart() -> None:
    plain, runs = _rank_row(False), _rank_row(True)
    assert len(plain) == len(runs) == RANK_FEATURES
    assert plain[-3:] == [0.0, 0.0, 0.0] and runs[-3:] == [1.0, 0.8, 0.6]
    assert plain[:-3] == runs[:-3]


PINNED_RUNS_CLAUSES = (
    "看完了, 思路没问题, 基差也合适. 螺纹2510多单减掉一半, 批. 小王执行, 收盘前做完.",
    [0.3841, 0.728, 0.0369],
)
"""A Chinese reply's clauses as the shipped selector scores them (set when it was trained):
the selector's three features for text read as runs are not zero here."""


def test_the_shipped_selector_scores_a_clause_read_as_runs_as_trained() -> None:
    text, pinned = PINNED_RUNS_CLAUSES
    assert RULES.model is not None
    clauses = clause_bounds(text)
    decided = frozenset(RULES.decision_spans(text))
    scores = RULES.model.clause_scores(text, clauses, range(len(clauses)), decided)
    assert [round(x, 4) for x in scores] == pinned
    # the decision, which the selector also rates first since its trees (ADR 0074), is
    # shown with the instruction after it; the review before it ("看完了, 思路没问题, 基差也合适":
    # read it, the idea is fine, the basis fits) is left out, as the regression's rating
    # of it first had kept it (the short clause after a kept one on its line stays, ADR 0072)
    clauses = clause_bounds(text)
    assert RULES.shown_spans(text) == clauses[1:] == [(19, 35), (36, 48)]
    assert clause_cut(text, RULES.shown_spans(text)) == (
        "… 螺纹2510多单减掉一半, 批. 小王执行, 收盘前做完."
    )


def test_the_selector_knows_a_clause_that_opens_an_item_of_a_list() -> None:
    content = "EOD:\n- bought 20k SAP\n• stop to 131.40\n2) sold 5 ES\n-5 on the day\nI cut it"
    clauses = clause_bounds(content)
    rows = clause_features(
        content, clauses, range(len(clauses)), frozenset(), lambda text: (0.5, 0.5)
    )
    assert [row[-1] for row in rows] == [0.0, 1.0, 1.0, 1.0, 0.0, 0.0]
