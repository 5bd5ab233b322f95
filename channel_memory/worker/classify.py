"""Pure per-message classification: which block family a message belongs to.

A message's class depends on that message alone (and the rules; a reply also on
the message it replies to, when the caller passes it):

- ``tombstone``  — the current version is a deletion;
- ``hard_event`` — a hard-event rule (or a bridge tag) matches, or the message is a
  short reply deciding on its parent (a proposal): kept faithful;
- ``telemetry``  — short runtime/status noise, collapsed per time bucket;
- ``ack``        — nothing but a short acknowledgement, collapsed per bucket;
- ``repeat``     — a no-change conclusion, collapsed when one author repeats it;
- ``topic``      — an ordinary message in a thread or reply chain;
- ``sequence``   — any other ordinary message.

Group keys place a message in its collapse or rollup group.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from dataclasses import dataclass

from channel_memory.kernel import groups
from channel_memory.kernel.groups import MessageClass
from channel_memory.kernel.models import SourceVersion
from channel_memory.kernel.timefmt import MICROS_PER_DAY
from channel_memory.worker.model import rank_features, reads_runs
from channel_memory.worker.rules import (
    STRENGTH_MAX,
    Decision,
    HardEventRule,
    ModelDecision,
    ParentRule,
    ReplyRule,
    RuleSet,
    strength_weight,
)

TELEMETRY_MAX_CHARS = 280
TELEMETRY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("heartbeat", r"\bheart ?beat(_ok| ok|s)?\b"),
        ("cron", r"\bcron\b.*\b(status|ok|ran|run|job|completed|started|finished|succeeded)\b"),
        (
            "gateway",
            r"\bgateway\b.*\b(reconnect(ed|ing)?|disconnect(ed)?|resum(e|ed|ing)|shutdown)\b",
        ),
        (
            "provider_retry",
            r"\b(provider|upstream|api|llm|model)\b.*\b(retry|retrying|retried|timeout|timed out"
            r"|rate[- ]limit(ed)?|429|50[0234])\b",
        ),
        ("runtime_status", r"\b(runtime|health) (check|status)\b|\bruntime status\b"),
        ("deadline", r"\bcontext deadline exceeded\b"),
        ("upstream_failed", r"\bupstream request failed\b"),
    )
)

# Every telemetry pattern contains one of these; checking them first skips the regexes
# for the usual message.
_TELEMETRY_WORDS = (
    "heart", "cron", "gateway", "provider", "upstream", "api", "llm", "model", "runtime",
    "health", "deadline",
)  # fmt: skip

ACKNOWLEDGEMENTS = frozenset(
    {
        "ok", "okay", "k", "kk", "ok ok", "+1", "ack", "acked", "copy", "copied", "copy that",
        "thanks", "thank you", "thx", "ty", "tks", "cheers", "got it", "gotcha", "noted",
        "roger", "roger that", "understood", "sounds good", "will do", "yep", "yup", "yes",
        "sure", "agreed", "makes sense", "nice", "great", "perfect", "cool", "done",
    }
)  # fmt: skip

NO_CHANGE = re.compile(
    r"\b(same (conclusion|call|view|read|plan|setup)|no change|unchanged|nothing (new|changed)"
    r"|still no (trade|action|entry|setup|signal)|no action|stand(ing)? (down|aside)"
    r"|holding pattern|no update|no-op|wait(ing)? for (the )?trigger|as before)\b",
    re.IGNORECASE,
)
_TIMES_AND_NUMBERS = re.compile(r"\d+([:.,]\d+)*")
_NON_WORD = re.compile(r"[^\w#]+")


@dataclass(frozen=True, slots=True)
class Classified:
    """A message's class, hard-event type and score, and its group key (if grouped)."""

    cls: MessageClass
    event_type: str | None
    score: float
    group_key: str | None


def _is_emoji_only(text: str) -> bool:
    stripped = [c for c in text if not c.isspace()]
    return bool(stripped) and all(
        unicodedata.category(c) in ("So", "Sk", "Mn", "Cf") or c in "\u200d\ufe0f" for c in stripped
    )


def is_acknowledgement(content: str) -> bool:
    """True when a message is nothing but a short acknowledgement ("ok", "Thanks!", "👍")."""
    text = content.strip()
    if not text or len(text) > 40:
        return False
    if _is_emoji_only(text):
        return True
    words = re.sub(r"[^\w+\s]", " ", text.lower())
    # emoji or punctuation after the words ("thanks 🙏", "got it.") do not add meaning
    return " ".join(words.split()) in ACKNOWLEDGEMENTS


def telemetry_kind(content: str) -> str | None:
    """The kind of runtime/status noise a short message is, if it is one."""
    if len(content) > TELEMETRY_MAX_CHARS:
        return None
    lowered = content.lower()
    if not any(word in lowered for word in _TELEMETRY_WORDS):
        return None
    for name, pattern in TELEMETRY_PATTERNS:
        if pattern.search(content):
            return name
    return None


def repeat_fingerprint(content: str) -> str | None:
    """A fingerprint of a no-change conclusion, equal across digit and time changes."""
    if not NO_CHANGE.search(content):
        return None
    normalised = _NON_WORD.sub(" ", _TIMES_AND_NUMBERS.sub("#", content.lower())).strip()
    return hashlib.sha256(normalised.encode()).hexdigest()[:16]


def author_key(version: SourceVersion) -> str:
    return version.author_id or (version.author_name or "").lower() or "?"


def bucket_start(micros: int, bucket_us: int) -> int:
    return micros - micros % bucket_us


MODEL_BASE = 0.4
"""The score a decision only the model found starts from (times its probability): below
what a rule's match gets, so the rules' decisions keep their order ahead of it."""


def hard_event_score(
    decision: Decision,
    rules: RuleSet,
    content: str,
    parent: str | None,
    tagged: bool,
    origin: str = "human",
    replying: bool = False,
) -> float:
    """How surely a hard event is a decision a reader needs, 0 to 1: what orders hard
    events when the feed cannot show them all. A bridge tag is sure (1). Without a
    model, the rules' score (:func:`rule_score`). With one, its hard-event ranker's
    reading of :func:`rank_features_of` (the rules' score among them): learned from
    labelled desks, it also weighs who wrote the message (an app's record of a fill a
    trader already reported is an echo), its length and its type (ADR 0034). A decision
    by reply is then weighed by how surely its parent is a proposal, as the rules'
    score is: a "yes" under "team lunch at 1, ok?" ranks last whatever the ranker
    learned of replies. ``origin`` is the message's, ``replying`` whether it replies
    to another."""
    if tagged:
        return 1.0
    model = rules.model
    if model is None:
        return rule_score(decision, rules, content, parent)
    score = model.rank(rank_features_of(decision, rules, content, parent, origin, replying))
    if isinstance(decision, ReplyRule):
        score = round(score * _parent_sureness(decision, rules, parent), 9)
    return score


def _replying(version: SourceVersion) -> bool:
    """Whether a message replies to another (its ``reply_to``, else a thread it does
    not itself root: a root carries its own id as ``thread_id``)."""
    target = version.reply_to or version.thread_id
    return target is not None and target != version.key.message_id


def rank_features_of(
    decision: Decision,
    rules: RuleSet,
    content: str,
    parent: str | None,
    origin: str,
    replying: bool,
) -> list[float]:
    """The :func:`~channel_memory.worker.model.rank_features` of a hard event (the rule
    set must have a model): the one definition the trainer and the worker share."""
    assert rules.model is not None
    spans = rules.decision_spans(content)
    probability, desk = _readings(rules, content, spans)
    plain = rules.strength(content, spans) if isinstance(decision, HardEventRule) else STRENGTH_MAX
    reading = probability if parent is None else None  # the same reading without a parent
    base = rule_score(decision, rules, content, parent, spans=spans, plain=plain, reading=reading)
    return rank_features(
        base=base,
        probability=probability,
        desk=desk,
        strength=plain / STRENGTH_MAX,
        length=len(content),
        decided=len(spans),
        by_model=isinstance(decision, ModelDecision),
        by_reply=isinstance(decision, ReplyRule),
        origin=origin,
        lines=content.count("\n") + 1,
        replying=replying,
        event_type=decision.event_type,
        runs=reads_runs(content),
    )


def _parent_sureness(decision: ReplyRule, rules: RuleSet, parent: str | None) -> float:
    """How surely a decision by reply answers a proposal. Structure decides (a verdict
    under a proposal), which the model cannot see in "👍 do it, 12 is fine" nor in a
    rejection's reasons: sure when a rule types the parent as one of the reply rule's
    ``parent_types``, else as surely as the model reads the parent as a decision
    ("team lunch at 1, ok?" is not)."""
    if parent is not None and rules.model is not None:
        typed = rules.first_match(parent)
        if typed is None or typed.event_type not in decision.parent_types:
            return rules.model.probability(parent)
    return 1.0


def rule_score(
    decision: Decision,
    rules: RuleSet,
    content: str,
    parent: str | None,
    *,
    spans: list[tuple[int, int]] | None = None,
    plain: int | None = None,
    reading: float | None = None,
) -> float:
    """The rules' reading of how surely a hard event is a decision, 0 to 1. A rule's
    score is weighed by how plainly the message states the decision
    (:meth:`RuleSet.strength`); with a model, also by the model's probability that the
    message — or the clauses the rules matched, read alone, whichever is higher (a
    report is judged by its decision line, not by its twenty lines of commentary) — is
    a decision. A decision only the model found starts from ``MODEL_BASE``. A decision
    by reply (a verdict under a proposal) scores its reply rule's score, times the
    model's probability of its parent when no rule types the parent as one of the
    reply rule's ``parent_types``. A caller that has the message's decision ``spans``,
    its strength (``plain``) or the model's :func:`_reading` of it with ``parent``
    passes them: each is computed once."""
    if isinstance(decision, ModelDecision):
        return round(MODEL_BASE * decision.probability, 9)
    if isinstance(decision, ReplyRule):
        return round(decision.score * _parent_sureness(decision, rules, parent), 9)
    if spans is None:
        spans = rules.decision_spans(content)
    if plain is None:
        plain = (
            rules.strength(content, spans) if isinstance(decision, HardEventRule) else STRENGTH_MAX
        )
    score = decision.score * strength_weight(plain)
    if rules.model is not None:
        score *= reading if reading is not None else _reading(rules, content, parent, spans)
    # nine digits: the same on every host whatever its maths library (a score reaches ids)
    return round(score, 9)


def _reading(
    rules: RuleSet, content: str, parent: str | None, spans: list[tuple[int, int]]
) -> float:
    """The model's probability that ``content`` — or its decision clauses read alone,
    whichever is higher (a report is judged by its decision line) — is a decision."""
    model = rules.model
    assert model is not None
    probability = model.probability(content, parent)
    if spans:
        clauses = "\n".join(content[start:end] for start, end in spans)
        probability = max(probability, model.probability(clauses, parent))
    return probability


def _readings(rules: RuleSet, content: str, spans: list[tuple[int, int]]) -> tuple[float, float]:
    """:func:`_reading` without a parent, and the desk reading's the same way (the
    message's or its decision clauses', the higher), from one reading of each text."""
    model = rules.model
    assert model is not None
    probability, desk = model.readings(content)
    if spans:
        clauses = model.readings("\n".join(content[start:end] for start, end in spans))
        probability, desk = max(probability, clauses[0]), max(desk, clauses[1])
    return probability, desk


def parent_rule(parent: SourceVersion, rules: RuleSet) -> ParentRule:
    """The rule match of a reply's parent with its bridge tags and author, computed once
    and only when asked."""
    return functools.cache(
        functools.partial(
            rules.first_match, parent.content, parent.tags, parent.author_id, parent.author_name
        )
    )


def classify(
    version: SourceVersion,
    rules: RuleSet,
    bucket_us: int,
    parent: SourceVersion | None = None,
) -> Classified:
    """Classify the current version of a message (see the module docstring).

    ``parent`` is the message this one replies to, when known: a short reply ("yes",
    "👍 send it", "denied, too correlated") to a proposal is a decision (a
    ``trade_approval`` hard event under the default rules), where without a parent it is
    an acknowledgement. The parent's own rule match (its text, bridge tags and author) says
    whether it is a proposal and whether it is a decision, computed only when a reply
    needs it.
    """
    if version.deleted:
        return Classified(groups.TOMBSTONE, None, 0.3, None)
    said = None if parent is None else parent.content
    decision = rules.decide(
        version.content,
        version.tags,
        version.author_id,
        version.author_name,
        said,
        None if parent is None else parent_rule(parent, rules),
    )
    if decision is not None:
        # a bridge tag or a reply rule decides outright; the rules' own match is weighed
        # by how plainly the message states it, so the feed keeps the plainest first
        tagged = isinstance(decision, HardEventRule) and bool(decision.tags & set(version.tags))
        return Classified(
            groups.HARD_EVENT,
            decision.event_type,
            hard_event_score(
                decision,
                rules,
                version.content,
                said,
                tagged,
                version.origin,
                _replying(version),
            ),
            None,
        )
    bucket = str(bucket_start(version.created_us, bucket_us))
    if telemetry_kind(version.content) is not None:
        return Classified(groups.TELEMETRY, None, 0.1, bucket)
    if is_acknowledgement(version.content):
        return Classified(groups.ACK, "low_value_acknowledgement", 0.1, bucket)
    day = bucket_start(version.created_us, MICROS_PER_DAY)
    fingerprint = repeat_fingerprint(version.content)
    if fingerprint is not None:
        return Classified(
            groups.REPEAT, "repeated_decision", 0.3, f"{day}:{author_key(version)}:{fingerprint}"
        )
    topic = version.thread_id or version.reply_to
    if topic is not None:
        return Classified(groups.TOPIC, None, 0.5, f"{day}:{topic}")
    return Classified(groups.SEQUENCE, None, 0.5, bucket)
