"""Hard-event rules: data (a TOML file), compiled once, matched per clause.

A rules file has four parts (see `docs/worker.md`, "Hard-event rules"):

- ``[define]`` — named sub-patterns (an instrument, a size, the action verbs of a
  language…), referenced in any pattern as ``{name}`` and expanded when the file is
  compiled; a definition may use other definitions.
- ``[[rule]]`` — a decision: an event type and the patterns (the *shape* of the
  decision: an action with its object) that recognise it. ``patterns`` match as
  written (one of them in a clause); ``all`` is the co-occurrence form: a clause
  matches when each of its patterns matches somewhere in it, in any order and at any
  distance ("filled … 5k", "5k … filled", ``side=SELL qty=10 status=FILLED``).
  ``gate`` lists words (``stem*`` for a prefix, ``{name}`` for every word of a
  definition): the rule is tried only on a message containing one of them.
- ``[[ignore]]`` — guards: a clause one of them matches (a question, a conditional,
  a plan, a restatement that nothing changed, another sense of a word) is ordinary,
  whatever the rules say.
- ``[[reply]]`` — decisions made by replying: a short reply ("approved", "send
  it", "desk B") is a decision when the message it answers has a given shape.

Messages are cut into clauses (lines, sentences ending in ``.``, ``!``, ``?`` or ``;``
before a space, and sentences ending in ``。``, ``！``, ``？`` or ``；``); a rule matches
a message when one of its patterns matches a clause that no guard makes ordinary and
none of its own ``unless`` patterns matches that clause. Every pattern is bounded and
each is searched at most once per clause, so matching stays linear in the length of the
message.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import itertools
import json
import operator
import re
import threading
import tomllib
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from channel_memory.worker.model import CAP_CHARS, LIST_ITEM, Scorer, load_model

_TOKEN = re.compile(r"[^\W_]+")
"""A word for the gates: letters and digits (``SL_UPDATE`` is two words, as a bot means it)."""


def _lower(text: str) -> str:
    """``text`` lower-cased for the patterns, one character for one: a Turkish dotted
    capital ``İ`` is ``i`` (``str.lower`` would add a combining dot: "İPTAL" would not
    read as "iptal")."""
    return text.replace("İ", "i").lower()


_GATE_ENTRY = re.compile(r"[^\W_]+\*?")
_REFERENCE = re.compile(r"(?<!\\)\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""``{name}`` in a pattern (``\\{name}`` is the literal text); regex repetitions
(``{2}``, ``{1,3}``) start with a digit."""

_ABBREVIATIONS = (
    "mio", "mrd", "mn", "bn", "ca", "vs", "approx", "no", "nr", "mr", "dr", "etc", "inc",
    "corp", "ltd", "bzw", "vgl", "εκ", "χιλ", "δισ", "τεμ", "млн", "млрд", "тыс",
)  # fmt: skip
_CLAUSE_BREAK = re.compile(
    r"\n|(?<=[。！？；])[ \t]*|(?<=[.!?;])"
    + "".join(rf"(?<!\b(?i:{a})\.)" for a in _ABBREVIATIONS)
    + r"(?<!\b(?i:e\.g|i\.e|z\.b|u\.a)\.)(?:(?<!\b(?i:max)\.)|(?=[ \t]+[^\d \t]))[ \t]+"
)
"""Where a message is cut into clauses: at each line end, and after a sentence's
closing ``.``, ``!``, ``?`` or ``;`` followed by a space (``1.0849`` stays whole; so does
a sentence with an abbreviation: "3 Mio. EUR", "vs. Friday", "e.g. the bund"; "max." only
before a number: "über Nacht max. 10k oz", but "5k max. Who's around?" is two), and after
a Japanese or Chinese full stop, exclamation or question mark or semicolon (``。``,
``！``, ``？``, ``；``), space or none."""

STRENGTH_MAX = 5
BARE_APPROVAL_WORDS = 3
_VERDICT = re.compile(
    "^((?:(?! -{1,2} )[^.,;:!?\n\u2014\u2013\u3002\uff0c\uff1b\uff1a\uff01\uff1f\u3001]){1,40})"
    "([.,;:!\u2014\u2013\u3002\uff0c\uff1b\uff1a\uff01\u3001]| -{1,2}(?= ))\\s{0,3}\\S"
)
"""A reply's leading verdict: a few words up to the first stop, comma or dash (a spaced
hyphen or two is one: "no - not flipping on one headline …"; or a Chinese or Japanese full stop,
comma, semicolon, colon or exclamation mark), with more text after it ("no. not selling …",
"denied, too correlated …", "可以，但只给20手。…")."""
_LABEL = re.compile("^([^\\s.,;:!?\n]{1,20}):\\s{1,3}")
"""A one-word label before a verdict ("crush: go, 100x. …")."""
_ANSWERED_REF = re.compile(
    "^(?:([^\\s.,;:!?\n#]{1,20})\\s{1,3})?(#(?=[\\w-]{0,11}\\d)[\\w-]{1,12})\\s{0,3}"
    "(?:[:\u2014\u2013]|-{1,2})\\s{1,3}"
)
"""A reference to what a reply answers before it ("Kestrel #31 — no. …", "#33 — no, …"),
with a digit in it ("#general — no, wrong channel" names no card), and the word before it
(a card's name, or a verdict: "Yes #31 — 25 lots")."""
REASONED_REPLY_CHARS = 480
"""The longest reply a verdict with its reasons may be (see :meth:`RuleSet.reply_decision`)."""
_FIRM_WORDS = (
    r"pass|hard pass|not today|not this one|denied|declined|rejected|refused|vetoed|veto|"
    r"no-go|no go|abgelehnt|refusé|refusée|rechazado|rechazada|denegado|denegada|non merci|"
    r"nein danke|hoy no|pas aujourd[\x27\u2019]hui|"
    # Chinese rejections: their reasons may put the trade off ("不行，…下周再说"); "先别" and
    # "先不要" (not yet) are not firm, as "not yet" is not
    r"不批|不同意|不行|驳回|駁回|否决|否決|唔批|唔得"
)
_WHO_REJECTS = (
    r"risk|risiko|riesgos?|risque|rischio|compliance|cumplimiento|conformité|pm|cio|cro|"
    r"credit|crédito|kredit|legal|committee|comité|komitee|desk|mesa"
)
"""Who may give a firm rejection after it ("denied by risk", "Abgelehnt von Risk"): the
desk's authorities, not a bank, a landlord or a parent ("Rechazado por Bankinter. Si …")."""
_FIRM_REJECTION = re.compile(
    rf"\W{{0,3}}((?:{_FIRM_WORDS}))"
    rf"(?:\s{{1,3}}(?:by|von|vom|por|par|da)\s{{1,3}}(?:{_WHO_REJECTS}))?\W{{0,3}}$",
    re.IGNORECASE,
)
"""A verdict that cannot be a deferral, alone or with who gave it ("Abgelehnt von Risk."):
its reasons are its reasons, whatever they say ("pass. … if it comes and goes, ask me
again"; "no, let me think" is no such verdict)."""
_FIRM_APPROVAL = re.compile(
    r"\W{0,3}(?:(?:ok|okay|yes|yep|yeah)[\s,]{1,3})?(?:go|go ahead|go for it|approved|do it|"
    r"send it|green light|genehmigt|aprobado|aprobada|approuvé|approuvée|approvato|"
    r"approvata)\W{0,3}$",
    re.IGNORECASE,
)
"""A verdict that gives the go in so many words ("ok go.", "approved —")…"""
_HOW_TO_DO_IT = re.compile(
    r"[\s,.;:!\u2014\u2013-]{0,4}(?:keep|don[\x27\u2019]t|do not|now\b|only|max|cap|leave|"
    r"work|take|half|same stop|stop\b)(?![^.!?;\n]{0,160}\?)",
    re.IGNORECASE,
)
"""…whose reasons open by saying how to do it, with no question in that sentence ("ok go.
keep the total under 35mm …", "approved — now, not at the fix, …"): they keep it a go,
whatever a guard makes of them; not "go ahead, let me think", "approved, says who?"."""
_REJECTING = re.compile(
    rf"\W{{0,3}}(?:{_FIRM_WORDS}|no|nah|nope|nay|negative|not (?:now|yet|tonight)|nein|non|"
    r"niet|reject|decline|deny)\W{0,3}$",
    re.IGNORECASE,
)
"""A verdict that rejects, firmly or not (its reasons may describe how things stand, see
``_verdict``)."""
_BUT = re.compile(r"\W{0,3}(.{1,30}?)\s{1,3}but\s{1,3}(\S.{0,30})", re.IGNORECASE)
"""Opening words with "but" between a verdict and the rest ("ok but half in the auction",
"good eye but no")."""
_ASSENT_BUT = re.compile(
    r"\W{0,3}((?:ok|okay|yes|yep|fine|agreed|approved|go|sí|si|vale|dale|oui|ja)"
    r"(?:\s{1,3}(?:then|for me|by me))?)\s{0,2},?\s{1,3}(?:but|pero|mais|aber|ma|però)\s{1,3}"
    r"(?=(?:max|maximum|only|just|half|no more than|not more than|under|below|above|at|cap|"
    r"capped|smaller|small|keep|with|in the|via|through|stop|tight|limit|solo|sólo|nur|"
    r"seulement|hasta|up to)\b|[$€£¥]?\d)",
    re.IGNORECASE,
)
"""An assent with conditions after "but" in any language of the desks, however long the
opening words run before their first stop ("ok pero max 412 and don't let the algo go above
15% of volume. …"): the assent is the verdict and its reasons start at "but". What follows
"but" must be a condition (a size, a level, "max", "only", "half", "keep", "with" …): "yes
but we already have way too much tech exposure …" is an objection, not a verdict."""
_FOR_NOW = re.compile(
    r"\s{1,3}(?:for now|for today|for the moment|today|tonight|this week|yet)$", re.IGNORECASE
)
"""When a verdict holds, after it ("no on 0871 for now", "not this one today")."""
_AGREES_WITH = re.compile(
    r"^[^\w]{0,3}(?:(?:[Ii]\s{1,3})?(?i:agree(?:d)?)\s{1,3}(?i:with|w/)|\+1(?:\s{1,3}(?i:to))?)\s{1,3}"
    r"[A-Z][\w\-\u00c0-\u024f]{1,15}(?:\s{1,3}[A-Z][\w\-\u00c0-\u024f]{1,15})?"
    r"\s{0,2}[.;:!\u2014\u2013]\s{1,3}"
    r"(?=(?i:no|nope|nah|pass|not today|not now|denied|rejected|declined|yes on|yes to|go|"
    r"approved|do it|send it)\b)"
)
"""An agreement with a colleague named before a reply's verdict, a rejection or a plain go
("agree with Luísa. no on 0871"; not "agree with Mei that we shouldn't. ok, next topic",
"agree with Tom. ok, call me")."""
_NAMED_VERDICT = re.compile(r"\s{1,3}(?:on|to|for)\s{1,3}\S.*$", re.IGNORECASE)
"""What a verdict names after it ("no on 0871", "yes to the Bund idea")."""
_REVISIT = re.compile(
    r"[\s,.;:\u2014\u2013-]{0,4}"
    r"(?:(?:wait (?:for|till|until)|not (?:before|ahead of|into|until|till|through|over)) "
    r"(?:(?!\b(?:if|unless|when|whether)\b)[^\n,.;?]){1,40}[,;]"
    r"\s{0,3}(?:then\s{1,3})?)?"
    r"(?:(?:let[\x27\u2019]s|we[\x27\u2019]ll|we will|will|happy to|"
    r"can|ask me to)\s{1,3})?(?:revisit|re-?pitch|bring it back|ask (?:me )?again|"
    r"come back to (?:it|me)|put it (?:back )?up again|put it back up|try again)\b"
    r"(?![^\n]*(?:\?|\b(?:if|unless|when|whether)\b))",
    re.IGNORECASE,
)
"""A rejection's reasons that put the trade off to later ("no. revisit post auction", "no,
we'll revisit after the auction", "no — wait for the auction result, revisit after 11:00",
"no. not ahead of payrolls, revisit after 8:30"),
with no question or condition after: the rejection stands (a plan anywhere else in a
verdict's reasons voids it; "no. revisit after the auction if spreads widen" decides
nothing)."""
_REFUSING = re.compile(
    r"[\s,.;:\u2014\u2013-]{0,4}not\s{1,3}(?:adding|buying|selling|chasing|paying|lifting|"
    r"hitting|shorting|trading|doing (?:it|this|that|this one|that one)|touching it|"
    r"sending it|taking it|putting it on|opening|entering)\b"
    r"(?![^\n]*(?:\?|\b(?:if|unless|whether|when|once|yet|wait|let me|probably|maybe|might)\b))",
    re.IGNORECASE,
)
"""A rejection's reasons that open by refusing the trade in so many words ("no. not adding
before the Powell presser, revisit after 2pm"): the rejection stands whatever the reasons go
on to say (a plan to look again later does not void it), unless they ask, set a condition
or hedge ("no. not adding before the presser?", "… I'd probably do it after if Reto agrees",
"no, not adding yet, revisit when Reto's back").
"Not yet" and "not now" put a trade off rather than refuse it: they do not stand so."""
_PUT_OFF = re.compile(r"\W{0,3}not\b", re.IGNORECASE)
"""A verdict that puts a trade off ("not yet", "- not now") rather than refusing it."""
_SPLIT_VERDICT = re.compile(
    r"\W{0,3}[A-Z][A-Z0-9.&-]{1,11}\s{1,3}\S{1,12}[.,;:]\s{1,3}[A-Z][A-Z0-9.&-]{1,11}\s{1,3}\S{1,12}"
)
"""A verdict split between two names in capitals ("LUMI yes. DSCT no")."""
_PLACE_WORDS = frozenset(
    ("in", "at", "on", "by", "to", "before", "after", "until", "till", "post", "pre")
)  # fmt: skip
"""Words before a name in capitals that make it a place or a time, not what a proposal
trades ("… in NY at 1349.50", "before CPI")."""
_ON_CARD = re.compile(
    r"(.{1,30}?)\s{1,3}(?:on|to|for)\s{1,3}(#?(?=[\w-]{0,11}\d)[\w-]{1,12})", re.IGNORECASE
)
"""A verdict on the card the parent carries ("no on 0871" under card #0871; not "fine on HY")."""
_NAME_WORD = re.compile(r"(?=[A-Z0-9.&-]*[A-Z][A-Z0-9.&-]*[A-Z])[A-Z][A-Z0-9.&-]{1,11}")
"""A name in capitals (a ticker, an issuer's short name: "LUMI", "DSCT", "BRK.B")."""
_APPRAISAL = re.compile(
    r"(?:(?:very|really|pretty|quite)\s{1,3})?(?:good|nice|great|fair|fine|cool|interesting|"
    r"tempting|solid|clever|neat|smart|lovely|decent)(?:\s{1,3}(?:eye|call|idea|spot|catch|"
    r"try|one|work|point|thought|thinking|find|pitch|trade|setup|card))?|fair enough|"
    r"(?:i\s{1,3})?(?:like|love|see|get)\s{1,3}(?:it|the idea|the logic)|"
    r"not\s{1,3}(?:a\s{1,3})?(?:bad|dumb|stupid|crazy|silly|mad|terrible)(?:\s{1,3}(?:idea|call|"
    r"thought|trade|pitch))?",
    re.IGNORECASE,
)
"""What a rejection after "but" may follow: an appraisal of the proposal ("good eye but
no", "not dumb but no"), not a report ("asked Klaus but no, still on the phone") nor a
courtesy ("thanks but no, I'm good" is about the coffee)."""
_ASSENTED = re.compile(
    r"(?:ok|okay|yes|yep|yeah|yup|sure)\s{1,3}"
    r"(?:go(?:\s{1,3}ahead)?|send it|do it|approved)",
    re.IGNORECASE,
)
"""A go assented to, no stop between them ("yep go", "ok send it", "yes approved"): a whole
verdict (not two assents, "ok ok", nor an assent before another word, "ok tak", "ok pass",
nor "fine go, leave me alone")."""
_OWN_PROPOSAL = re.compile(
    r"^[^\w@]{0,5}(?:@[\w.\-]{1,20}[,:]?\s{1,3})?"
    r"(?:(?:i|we)\s{1,3}(?:want|would like)\s{1,3}to|(?:i|we)[\x27\u2019]d\s{1,3}like\s{1,3}to|"
    r"want\s{1,3}to|would\s{1,3}like\s{1,3}to|looking\s{1,3}to|keen\s{1,3}to|"
    r"proposal\b|proposing\b|(?:i|we)\s{1,3}propose\b|pitch\b|suggest(?:ing)?\b|"
    r"let[\x27\u2019]s\s{1,3}(?!not\b))"
    r"(?![^\n]*\b(?:actually no|scrap that|is what|told (?:me|us)|asking for|the client|"
    r"their (?:pm|desk|trader|order)|i mean|on behalf|not today|not yet)\b)",
    re.IGNORECASE,
)
"""A clause that opens as its writer's own proposal: "want to buy back all 750 …", "we'd like
to sell 20 at 1.0950", "Looking to short 2m EURUSD at 1.0900 or better" (not "Citadel wants
to …", "I'm told Citadel wants …", "we'd like to buy 500 more — that's what the client told
us", "want to sell 200 MSFT at 420 — actually no, scrap that")."""
_TAKEN_BACK = re.compile(
    r"[\s,.;:!\u2014\u2013-]{0,4}(?:(?:just|but)\s{1,3})?(?:"
    r"not\s{1,3}(?:today|now|yet|tonight|this week)\b|actually\b|wait\b|hold on\b|"
    r"no[,.!]?\s{1,3}(?:wait|sorry|scratch that|actually|don[\x27\u2019]t)\b|"
    r"in\s{1,3}(?:a|one|two|three|a few|\d{1,2})\s{1,3}(?:days?|weeks?|months?)\b|"
    r"i[\x27\u2019]m listening\b|tell me more\b|finish your\b)",
    re.IGNORECASE,
)
"""An assent's reasons that take it back or put it off ("yep go, just not today. …", "yep go
— actually no, wait", "okay do it, in two weeks", "sure go ahead, tell me more"): no
verdict."""


def _whole_by(patterns: Sequence[Pattern], words: str) -> bool:
    """Whether one of ``patterns`` reads all of ``words``, or ``words`` are a go assented
    to (``_ASSENTED``: "yep go, 15m fine. …")."""
    if _ASSENTED.fullmatch(words) is not None or _GRANTED_LESS.fullmatch(words) is not None:
        return True
    lowered = _lower(words)
    return any(p.whole(words, lowered) for p in patterns)


_SIZE_WORD = re.compile(r"\d{1,6}(?:[.,]\d{1,3})?(?:k|m|mm|bn|lots?|x)", re.IGNORECASE)
"""A size with its unit ("40k", "1.5mm", "20 lots" is two words): granted beside a verdict
("ok 40k, not 60"); a bare number may be a card's ("reject 2419" under card #2418 is none)."""
_AMOUNT = r"\d{1,6}(?:[.,]\d{1,3})?"
_UNIT = r"k|mm|m|bn|lots?|contracts?|shares?|x"
_SIZE_UNIT = rf"{_AMOUNT}\s?(?:{_UNIT})"
"""A size with its unit, a space between them or none ("3mm", "20 lots")."""
_GRANTED_LESS = re.compile(
    rf"^[^\w]{{0,3}}(({_AMOUNT})\s?({_UNIT})\s{{0,2}},?\s{{1,3}}not\s{{1,3}}(?:the\s{{1,3}})?"
    rf"({_AMOUNT})(?:\s?({_UNIT}))?)"
    r"(?=\s{0,3}(?:[.;!\u2014\u2013]|-\s|$))(?![^?\n]{0,80}\?)"
    r"(?!\s{0,3}[.;!\u2014\u2013-]?\s{0,3}(?:that[\x27\u2019]?s|that is|that was|it[\x27\u2019]s|"
    r"the card|the ticket|check|typo|fat|the screen|the headline|per\b))",
    re.IGNORECASE,
)
"""A verdict that grants less than the parent asked, the size and the one it replaces ("1mm,
not 1.5. I don't want more than …" under a proposal for 1.5mm: the parent writes the size
replaced); not a question ("10k, not 10m — typo?") nor a correction ("10k, not 10m. the
card had a fat-finger …", "2 lots, not 20. that's what the LME shows")."""
_UNITS = {"k": 1e3, "m": 1e6, "mm": 1e6, "bn": 1e9}


def _amount(number: str, unit: str | None) -> float:
    """A size's amount: "1,5" and "1.5" are one and a half, "1,500" fifteen hundred."""
    if re.fullmatch(r"\d{1,3}[.,]\d{3}", number):
        value = float(number[:-4] + number[-3:])
    else:
        value = float(number.replace(",", "."))
    return value * _UNITS.get((unit or "").lower(), 1.0)


def _grants_less(less: re.Match[str], parent_lowered: str) -> bool:
    """Whether a ``_GRANTED_LESS`` verdict replaces a size the parent writes with a smaller
    one ("1mm, not 1.5" under a proposal for 1.5mm; not "200 lots, not 20")."""
    if not re.search(rf"(?<![\w.,]){re.escape(less.group(4))}(?![\d]|[.,]\d)", parent_lowered):
        return False
    granted_unit, replaced_unit = less.group(3), less.group(5)
    granted = _amount(less.group(2), granted_unit)
    return granted < _amount(less.group(4), replaced_unit or granted_unit)


_SIZE_FOR = re.compile(
    rf"(.{{1,30}}?\s{_SIZE_UNIT})\s{{1,3}}for\s{{1,3}}(?:the\s{{1,3}})?([\w\-]{{2,20}})",
    re.IGNORECASE,
)
"""A verdict's size with the account it is for, one the parent names ("ok 3mm for the
foundation" under a proposal naming the foundation, "go 2k for ALP-02"): read past as the
size is (not "ok 2k for the party")."""
_SIZED = re.compile(
    r"\s{0,3}(?:(?:先|只|就)?(?:上|做|给|給|进|進|来|來)\s?)?\d{1,6}(?:[.,]\d{1,3})?\s?"
    r"(?:k|m|mm|lots?|x|手|张|張|股|万股|萬股)?\s{0,3}[,.;，。；]"
)
"""Reasons that open with the size the verdict grants ("go, 3k, with the stop in",
"可以，先上10手，…")."""
APPROVAL = "trade_approval"
"""The event type of an approval or a rejection (a reply's verdict on a proposal)."""


def strength_weight(strength: int) -> float:
    """The factor a hard event's score gets for its :meth:`RuleSet.strength`: 0.2 to 1."""
    return 0.2 + 0.8 * min(strength, STRENGTH_MAX) / STRENGTH_MAX


SHORT_MESSAGE_CHARS = 300
"""A message this short is about one thing (see :meth:`RuleSet.strength`)."""
_DIGIT = re.compile(r"\d")
_APOSTROPHE = "[\\'\u2019]"
_ACTOR = re.compile(
    rf"\b(?:i|we|i{_APOSTROPHE}m|we{_APOSTROPHE}re|i{_APOSTROPHE}ve|we{_APOSTROPHE}ve|"
    rf"i{_APOSTROPHE}ll|we{_APOSTROPHE}ll|our|my|ich|wir|nous|on|je|j{_APOSTROPHE}ai|yo|"
    r"nosotros|hemos|he)\b"
    r"|^[^\w]{0,8}(?:buy|sell|short|cover|move|moving|set|close|closing|cut|route|send|trim|add|"
    r"approve|approved|reject|rejected|denied|flatten|take|took|bought|sold|filled|done|go|yes|no)\b",
    re.IGNORECASE,
)
_SPACED_DASH = re.compile(r"\s[\u2014\u2013]\s|\s-{1,2}\s")
"""A dash between spaces: what follows it in a clause is often the reasons for what
precedes it ("… not on LMEselect — 40 lots at this hour, … the book is maybe 5 deep")."""
OWN_HEDGE = "own_hedge"
"""What :meth:`_View.holding` names when the writer's own hedge in a decision's reasons after
a dash holds it (``_OWN_HEDGE``: not a guard of the rules file, a list of the engine's)."""
_REASONS_OPENING_WORDS = 4
"""The words that open a decision's reasons after a dash: a hedge or a habit among them is
the decision's ("… — maybe, not sure yet", "… — we usually do, I might not today")."""
_OWN_HEDGE = re.compile(
    r"(?i)\b(?:not sure|no idea|haven['\u2019]?t (?:decided|made up)|made up my mind|or maybe|"
    r"used to|back when|that['\u2019]?s (?:how|what)|(?:i|we) (?:usually|typically|tend|might|"
    r"may|always|often|normally)|(?:maybe|perhaps|probably|possibly|usually|typically|"
    r"normally) (?:we|i|not)|(?:we|i)['\u2019](?:ll|d) (?:probably|maybe|likely|wait|hold)|"
    r"hold off|wait (?:till|until))\b"
)
"""Reasons after a dash that hedge or recall the writer's own way ("… — that's how my dad
did it", "… — we usually do, I might not today"): the decision's, not the market's."""
_TICKER = re.compile(r"(?<![\w.])[A-Z][A-Z0-9]{1,6}(?:[./-][A-Z0-9]{1,6})?(?![\w])")
_RECORD = re.compile(
    r"\w[=:]\s?[\w.\-+]|\|\s?\w{1,20}\s?[=:]|^[^a-z\n]{0,3}[A-Z][A-Z _/-]{3,}[:|\]]"
)


def _clause_parts(content: str) -> Iterator[str]:
    """The non-blank clauses of ``content``, as the rules see them."""
    for line in content.split("\n"):
        for part in _CLAUSE_BREAK.split(line):
            if part and not part.isspace():
                yield part


def _clause_spans(content: str) -> Iterator[tuple[int, int, range]]:
    """Each non-blank clause of ``content`` as a ``(start, end)`` span, blanks trimmed,
    with the indexes of its pieces in a ``_View`` of the same content (a run-on clause
    is two pieces there: its head and its tail)."""
    offset, index = 0, 0
    for line in content.split("\n"):
        at = 0
        for part in _CLAUSE_BREAK.split(line):
            start = line.index(part, at) if part else at
            at = start + len(part)
            stripped = part.strip()
            if stripped:
                pieces = 2 if len(part) > 2 * CLAUSE_EDGE_CHARS else 1
                lead = part.index(stripped)
                begin = offset + start + lead
                yield begin, begin + len(stripped), range(index, index + pieces)
                index += pieces
        offset += len(line) + 1


def in_reach(start: int, end: int, length: int) -> bool:
    """Whether a clause ``start``..``end`` of a message of ``length`` characters is one the
    model reads: it starts in the first or ends in the last ``CAP_CHARS`` characters."""
    return start < CAP_CHARS or end > length - CAP_CHARS


def clause_bounds(content: str) -> list[tuple[int, int]]:
    """Every non-blank clause of ``content`` (a line, or a sentence of one) as a
    ``(start, end)`` span, blanks trimmed, in order."""
    return [(start, end) for start, end, _ in _clause_spans(content)]


SELECTOR_DECIDED = 8
"""How many of a message's first and last rule-matched clauses the clause selector also
weighs when they lie beyond what the model reads."""

_CARD_SIDE = re.compile(
    r"^[^\w\n]{0,6}(?:action|side|direction|dir|bias|trade|rec|call)(?:\s?/\s?(?:size|qty))?"
    r"\s{0,3}:\s{0,3}"
    r"(?:propose\s{1,3}|proposed\s{1,3})?(?:buy|sell|long|short|pay|receive)\b",
    re.IGNORECASE,
)
"""A signal card's side field ("direction: LONG"): shown cut, it keeps the instrument field
next to it ("side: BUY" alone names no trade) and, on a proposal or a card that sets a stop
or target, the term fields right below it."""
_CARD_INSTRUMENT = re.compile(
    r"^[^\w\n]{0,6}(?i:instrument|instr|symbol|sym|ticker|contract|pair|underlying|asset)"
    r"\s{0,3}:\s{0,3}[A-Z0-9$][A-Za-z0-9$./-]{0,15}(?:\s|$)(?![^\n]*\?)",
)
"""A card's instrument field, a symbol ("instrument: ZLN5 (soybean oil, Jul)")."""
_CARD_HEADLINE = re.compile(
    r"^[^\w\n]{0,6}(?i:card|signal|idea|setup|trade)\b[^\n]{0,24}?(?:\||\u00b7|\u2014|\u2013|:)"
    r"\s{0,3}\$?(?!(?:TODAY|URGENT|FYI|NEW|UPDATE|ALERT|OK|NONE|TBD|NA|N/A)\s{0,3}$)"
    r"[A-Z][A-Z0-9./-]{0,11}\s{0,3}$"
)
"""A card's headline that ends in its symbol ("📇 CARD #106 | TSLA", "SIGNAL #12 · EURUSD"):
shown above a side field kept, as an instrument field is ("direction: LONG" alone names no
trade); not "📇 CARD #106 | TODAY", "Re: FYI", "wifi password: GUEST2024"."""
_CARD_TERMS = re.compile(
    r"^[^\w\n]{0,6}(?i:entry|entries|size|qty|quantity|price|px|limit|lmt|level|stop|stop[- ]loss"
    r"|sl|target|targets|tgt|tp\d?|take[- ]profit)\b"
    r"(?:\s{0,2}\([^)\n]{1,16}\)|\s(?!(?i:by|the|for|if|on|at|to|of|in|with|from)\b)[#\w/%]{1,8}){0,2}"
    r"\s{0,3}[:=][^\n]*\d"
)
"""A card's field that sets a term of its trade, its name a word and up to two more words or
parentheses ("entry: 63.25-63.35", "size (lots): 25", "entry BE: 1.92%", "target 2
(runner): 6.40", "stop: 36.18 | target: 37.65"; "stop by the desk: 3pm" is none): the trade
a card proposes is its side, instrument and terms, and "status: PROPOSED" says none of
them."""
CARD_TERM_FIELDS = 6
"""How many fields below a proposal card's side are looked at for its terms."""


def _with_card_fields(
    content: str,
    spans: list[tuple[int, int]],
    clauses: list[tuple[int, int]],
    event_type: str | None,
) -> list[tuple[int, int]]:
    """``spans`` and, for each card side field among them, the instrument field on the
    clause just above or below it and, for a hard event of ``TRADE_LINE_TYPES``, the
    term fields that follow it (an instrument field among them), in order (``clauses``:
    the content's :func:`clause_bounds`)."""
    if not spans:
        return spans
    at = {span: n for n, span in enumerate(clauses)}
    shown = set(spans)
    terms = event_type in TRADE_LINE_TYPES
    for span in spans:
        n = at.get(span)
        if n is None or not _CARD_SIDE.match(content[slice(*span)]):
            continue
        for m in (n - 1, n + 1):
            if 0 <= m < len(clauses) and (
                _CARD_INSTRUMENT.match(content[slice(*clauses[m])])
                or (m == n - 1 and _CARD_HEADLINE.match(content[slice(*clauses[m])]))
            ):
                shown.add(clauses[m])
        for later in clauses[n + 1 : n + 1 + CARD_TERM_FIELDS] if terms else ():
            field = content[slice(*later)]
            if not (_CARD_TERMS.match(field) or _CARD_INSTRUMENT.match(field)):
                break
            shown.add(later)
    return sorted(shown)


_TRADE_SIDES = (
    "buy|sell|long|short|pay|receive|kaufen|verkaufen|kauf|verkauf|acheter|vendre|achat|vente"
    "|comprar|vender|compra|venta|venda|vende|comprare|vendere|acquisto|vendita|compro|vendo"
    "|vendi|acquista"
)
"""The sides a trade line opens with, in the desk's languages."""
_TRADE_LINE = re.compile(
    r"^[^\w\n]{0,6}(?:(?:leg|bein|pata|gamba|jambe|perna)\s{0,2}\d\s{0,2}[:.)]\s{0,3})?"
    rf"(?:{_TRADE_SIDES})\b(?![-'\u2019])[^\n]*\d"
    r"|\b(?:side|direction|dir|action|richtung|sens|lado|lato)(?:\s?/\s?(?:size|qty))?\s{0,3}[:=]\s{0,3}"
    rf"(?:{_TRADE_SIDES})\b"
    r"|^[^\w\n]{0,6}[^\W\d_][^\W_]{0,11}\s{0,3}[:：]\s{0,3}"
    rf"(?:{_TRADE_SIDES})\b(?![-'\u2019])[^\n]*\d"
    rf"|\|\s{{0,3}}(?:{_TRADE_SIDES})\b(?![-'\u2019])[^\n|]*\d",
    re.IGNORECASE,
)
"""A proposal card's trade line: a side opening a line that holds a number ("SELL EURCHF 15
Mio @ 0,9336", "Comprar cobre COMEX (HGK5) 20 contratos", "leg 2: sell 100 FGBL"), a side
field ("ticker: HSX LN | side: BUY | size: 150,000"), or a field of any one-word name whose
value opens with a side and holds a number ("SUGGESTED: BUY CM 80,000 / SELL BNS 95,000",
"Direzione: compra BTP€i 15MY30 €10m", "方向: BUY | 数量: 100手"), or a field between pipes
that opens with a side and holds a number ("📇 CARD #0431 | WHEAT | SELL 40 ZWU25")."""
TRADE_LINE_TYPES = frozenset({"trade_proposal", "stop_or_target_change"})
"""The hard events shown with their trade line: proposals, and the stop or target a card
sets beside its trade ("Stop: 70 pb · Objetivo: 56 pb" under "Comprar SPGB 3,15% 2035")."""
LEGS_MAX = 3
"""The most trade lines kept beside a kept one as the legs of its trade."""
_LEG_GAP = re.compile(r"[ \t]*\n[ \t]*")
"""What stands between two legs: one line break (a blank line ends a trade's legs)."""


def _at(content: str, clause: tuple[int, int]) -> str:
    return content[clause[0] : clause[1]]


def _is_leg(content: str, clauses: list[tuple[int, int]], leg: int, other: int) -> bool:
    """Whether clause ``other``, next to the trade line ``leg``, is a leg of its trade: a
    trade line on the line right before or after it, no list item."""
    if not 0 <= other < len(clauses):
        return False
    first, second = sorted((clauses[leg], clauses[other]))
    text = _at(content, clauses[other])
    return (
        _LEG_GAP.fullmatch(content[first[1] : second[0]]) is not None
        and _TRADE_LINE.search(text) is not None
        and LIST_ITEM.match(text) is None
    )


TRADE_LINE_LINES = 12
"""How far down a proposal (in lines) its trade line is looked for."""
VERDICT_CHARS = 12
"""A verdict opening an approval this short ("go.", "Nein.", "Agree.") is shown with the
clause after it on its line ("go. 150k max", "Agree. Halve it.")."""


def trade_lines(content: str) -> list[int]:
    """The line numbers of a proposal's trade line (see ``_TRADE_LINE``) and of the lines
    right after it that are legs of the same trade, within its first ``TRADE_LINE_LINES``
    lines; none when it has no such line."""
    found: list[int] = []
    for n, line in enumerate(content.split("\n")[:TRADE_LINE_LINES]):
        if _TRADE_LINE.search(line.strip()):
            found.append(n)
        elif found:
            break
    return found


def _on_one_line(content: str, before: tuple[int, int], after: tuple[int, int]) -> bool:
    """Whether clause ``after`` follows clause ``before`` on the same line of ``content``."""
    return "\n" not in content[before[1] : after[0]]


def _with_trade_and_verdict(
    content: str,
    spans: list[tuple[int, int]],
    clauses: list[tuple[int, int]],
    event_type: str | None,
) -> list[tuple[int, int]]:
    """``spans`` and, for a proposal, its trade line when none of them is one (and the
    lines just after it that are legs of the same trade), or the legs beside a trade line
    kept (ADR 0074: the selector may keep one leg of a spread); for an approval or
    rejection, its opening verdict (and the clause after it on its line when the verdict is
    a word or two): a card's "status: PROPOSED — awaiting approval" says nothing of the
    trade, and a reply's reasons without its "nope." or its "go." say nothing of the
    verdict."""
    if not spans or not clauses:
        return spans
    shown = set(spans)
    if event_type in TRADE_LINE_TYPES:
        kept = [
            n for n, c in enumerate(clauses) if c in shown and _TRADE_LINE.search(_at(content, c))
        ]
        for n in kept:
            # the legs beside a kept trade line: the trade lines on the lines right before
            # and after it (no blank line, no list item between), at most LEGS_MAX
            legs = 0
            for step in (-1, 1):
                m = n
                while legs < LEGS_MAX and _is_leg(content, clauses, m, m + step):
                    m += step
                    shown.add(clauses[m])
                    legs += 1
        if not kept:
            # where its first TRADE_LINE_LINES lines end (found once: linear at any length)
            limit = -1
            for _ in range(TRADE_LINE_LINES):
                limit = content.find("\n", limit + 1)
                if limit < 0:
                    limit = len(content)
                    break
            for n, (start, end) in enumerate(clauses):
                if start > limit:
                    break
                if _TRADE_LINE.search(content[start:end]):
                    shown.add((start, end))
                    for later in clauses[n + 1 :]:
                        if not _TRADE_LINE.search(content[slice(*later)]):
                            break
                        shown.add(later)
                    break
    elif event_type == "trade_approval":
        first = clauses[0]
        shown.add(first)
        if (
            len(clauses) > 1
            and first[1] - first[0] <= VERDICT_CHARS
            and _on_one_line(content, first, clauses[1])
        ):
            shown.add(clauses[1])
    return sorted(shown)


def _with_context(
    content: str,
    spans: list[tuple[int, int]],
    clauses: list[tuple[int, int]],
    event_type: str | None,
) -> list[tuple[int, int]]:
    """``spans`` with what names their decision: a proposal's trade line, a verdict's word
    (:func:`_with_trade_and_verdict`), then the instrument beside every card side field kept
    — by the selector, a rule or the trade line — and a proposal card's terms below it
    (:func:`_with_card_fields`)."""
    return _with_card_fields(
        content, _with_trade_and_verdict(content, spans, clauses, event_type), clauses, event_type
    )


SHORT_TAIL_CHARS = VERDICT_CHARS
"""A clause as short as a verdict right after a kept one on its line ("ok?", "go",
"done.") is kept with it: "ok 30 now, rest into the fix. go" is one verdict."""
_RETRACTION = re.compile(
    r"(?i)^\W{0,3}(?:nope|no|nah|wait|hold on|hang on|scratch|actually|cancel|ignore|"
    r"disregard|correction|sorry|my bad|typo|wrong)\b"
)
"""A clause that opens so takes back or corrects the one before it: kept after a kept
clause on its line whatever its length, with the clause after it ("Nope. Sell them.")."""


def _with_short_tails(
    content: str, spans: list[tuple[int, int]], clauses: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """``spans`` (clauses of ``content``) with the clause that follows each on its line when
    it is at most ``SHORT_TAIL_CHARS`` characters or a retraction (``_RETRACTION``), and
    after a retraction taken so the clause after it too, in order."""
    kept = set(spans)
    tails: set[tuple[int, int]] = set()
    taking = False
    for before, after in itertools.pairwise(clauses):
        if (before in kept or taking) and _on_one_line(content, before, after):
            retraction = _RETRACTION.match(content[after[0] : after[1]]) is not None
            if taking or retraction or after[1] - after[0] <= SHORT_TAIL_CHARS:
                tails.add(after)
                taking = retraction and not taking
                continue
        taking = False
    return sorted(kept | tails)


_PIECE_REASON = (
    r"(?:because|since|as (?!per|of|at|soon|well|from|long|far|much)|so (?!far|long|much)|"
    r"given|that[\x27\u2019]s(?!\s+\d)|it[\x27\u2019]s|they[\x27\u2019](?:re|ve)|"
    r"we[\x27\u2019](?:re|ve)|i[\x27\u2019](?:m|d|ve)|there[\x27\u2019]s|i want|"
    r"the (?:book|screen|market|bid|offer|street|curve)|that (?:takes|locks|puts|gets|keeps)|"
    r"locks in|takes us|rather than|no point|porque|parce que|car|weil|denn|perch[\u00e9e]|"
    r"cos[\u00ec]|que me)\b"
)
"""Words that open a decision's reasons after a comma ("…, it's 59.44 bid now", "…, the
book's thin", "…, so we're inside the limit", "…, così", "…, weil")."""
_PIECE_CUT = re.compile(r"\s+(?:\u2014|\u2013|--?)\s+|(?i:,\s+(?=" + _PIECE_REASON + r"))")
"""Where a clause's trailing reasons may start: a spaced dash, or a comma before the words
of a reason (a comma before anything else — a list, a decision's own terms — is not one)."""

PIECE_KEPT_CHARS = 40
"""A trailing part this short is kept beside the decision."""
PIECE_HEAD_CHARS = 20
"""A kept part this short ("Rejected", "Fine by me", "no on #0413") says too little
alone: a clause that would be cut to it is shown whole."""
PIECE_SPAN_CHARS = 1_000
"""A kept clause longer than this is shown whole by the trimming of its reasons."""
PIECE_CUTS = 8
"""…and so is one with more places its reasons may start than this."""
_PIECE_KEEPS = re.compile(
    r"(?i)(?:(?:but|only|if|except|not|no|on the|for the|in the|at the|from the|until|till|"
    r"before|after|once|when|and|plus|also|then|leaving|leaves|back to)\b|by \d|[$\u20ac\u00a3]?\d)"
)
"""A trailing part that opens so is a condition, a retraction, a scope, a time, a size or
a further leg of the decision before it ("— 10m, same stop"): kept (the words
``_PIECE_HOLDS`` finds anywhere — "scratch", "actually", "unless" … — are not repeated)."""
_PIECE_HOLDS = re.compile(
    r"(?i)\b(?:actually|wrong|scratch|cancel\w*|typo|should be|instead|correction|"
    r"fat[- ]?finger|after all|ignore|disregard|not doing|meant|unless|"
    r"only (?:if|after|before|once|when|until|from|on|in|for)|not (?:before|after|until)|"
    r"provided|as long as|so long as|as soon as|subject to|max|maximum|no more than|at most|"
    r"aber nur|nur wenn|nur falls|mas s[\u00f3o]|pero s[\u00f3o]lo|sauf si|seulement si|"
    r"solo se|s[\u00f3o]lo si|solo si)\b"
)
"""A trailing part that holds these anywhere corrects, retracts, conditions or caps the
decision before it ("…, it's actually 1.0830", "…, because the auction was weak, but only
if the Bund closes under 131", "…, max 20"): kept."""

CLOSING_LINES_AFTER = 3
"""A message of more lines than this (a report, a wrap) keeps the likeliest clause of its
last two lines when the selector rates it at least ``CLOSING_SCORE``."""
CLOSING_SCORE = 0.25
"""What a report's closing clause must rate to be kept besides the selector's choice."""
LEVEL_HEAD_CHARS = 32
"""A clause this short that opens a line, holds a number and comes just before a kept
clause on that line is kept with it: "CL 72.90. stop to 72.00 on all 150" names its market
in the level it opens with (ADR 0074)."""


def _with_level_heads(
    content: str, spans: list[tuple[int, int]], clauses: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """``spans`` (clauses of ``content``) with the clause before each on its line when
    that clause opens the line, is at most ``LEVEL_HEAD_CHARS`` characters and holds a
    digit: the market and its level a decision after it leaves unnamed."""
    kept = set(spans)
    heads = {
        before
        for before, after in itertools.pairwise(clauses)
        if after in kept
        and before not in kept
        and before[1] - before[0] <= LEVEL_HEAD_CHARS
        and (before[0] == 0 or content[before[0] - 1] == "\n")
        and _on_one_line(content, before, after)
        and any(c.isdigit() for c in content[before[0] : before[1]])
    }
    return sorted(kept | heads)


SHOWN_RULED = {"thesis_change": 2}
"""How many rule-matched clauses a hard event shown cut keeps, by its type, besides the
selector's best (one for the others): a change of view is often announced in one clause
and stated in the next ("View change. I'm no longer bearish duration")."""

MAX_REFERENCE_DEPTH = 8
CLAUSE_EDGE_CHARS = 1000
"""A clause longer than twice this is matched on its first and last this many characters."""

_GLOBAL_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")
_INLINE_FLAGS = re.compile(r"\(\?[aiLmsux]*-?[aiLmsux]+[:)]")
"""An inline flag group (``(?i)``, ``(?-i:…)``): such a pattern cannot run on lowered text."""


class RuleSpec(BaseModel):
    """One rule as written in the rules file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(min_length=1, max_length=64)]
    event_type: Annotated[str, Field(pattern=r"^[a-z0-9_]{1,64}$")]
    score: Annotated[float, Field(ge=0.0, le=1.0)] = 1.0
    patterns: list[str] = Field(default_factory=list)
    unless: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    authors: list[str] = Field(default_factory=list)
    all: list[str] = Field(default_factory=list)
    """Co-occurrence: a clause matches when every one of these matches somewhere in it."""
    keywords: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    """Optional fast gate: the patterns are only tried on messages containing one of these
    (case-insensitive substrings). Every match of the patterns must contain one."""
    gate: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    """Optional word gate: the rule is only tried on messages with one of these words
    (``word``; ``stem*``: a word starting so; ``{name}``: for each alternative of a
    definition, the longest whole word of the literal text it starts with, else its
    leading stem). Every match of the rule must contain one."""
    reasons_after_dash: bool = False
    """Whether a clause a guard holds still matches when one of the rule's patterns matches
    both the clause and its head before a spaced dash, no guard holds that head, and every
    guard that holds the clause is one whose words after the dash say nothing of the
    decision (``GuardSpec.after_dash`` false) — unless such a guard holds the first four
    words after a dash, or the writer hedges there in words the engine knows ("not sure",
    "we usually", "maybe we"): "will do it with Halden on the phone, not on LMEselect — 40
    lots at this hour, … the book is maybe 5 deep" is a route (``_View.holding``)."""


class GuardSpec(BaseModel):
    """A guard: a clause one of its patterns matches (and none of its ``unless``) is ordinary."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(min_length=1, max_length=64)]
    patterns: list[str] = Field(min_length=1)
    unless: list[str] = Field(default_factory=list)
    reasons: bool = True
    """Whether it also makes a rejecting verdict's reasons ordinary ("no, let me think
    about it"): false for a guard that only describes how things stand, as a
    rejection's reasons do ("no. it's still there on Thursday, bring it back then").
    An assent's reasons are read with every guard ("ok, still on the phone")."""
    after_dash: bool = True
    """Whether its words only after a spaced dash hold a decision a rule marked
    ``reasons_after_dash`` finds before it: false for a hedge or a habit, which in the
    reasons say nothing of the decision ("… not the bank streams — the streams widen on
    us every time we show size"); a question or a condition there still holds it."""


class ReplySpec(BaseModel):
    """A decision made by a short reply to a message of a given shape."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(min_length=1, max_length=64)]
    event_type: Annotated[str, Field(pattern=r"^[a-z0-9_]{1,64}$")]
    score: Annotated[float, Field(ge=0.0, le=1.0)] = 1.0
    patterns: list[str] = Field(min_length=1)
    """The reply (its first clause that no guard makes ordinary) matches one of these…"""
    anywhere: list[str] = Field(default_factory=list)
    """…or any clause of it that no guard makes ordinary matches one of these ("too big
    for a Monday. do 75k": a verdict that comes after its reason)."""
    unless: list[str] = Field(default_factory=list)
    parent_types: list[str] = Field(default_factory=list)
    """The parent is a hard event of one of these types (by the ``[[rule]]`` tables)…"""
    parent_patterns: list[str] = Field(default_factory=list)
    """…or its text (guards aside: it is often a question) matches one of these."""
    max_chars: Annotated[int, Field(ge=1, le=2000)] = 120


class RuleFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    ignore_case: bool = False
    """Compile every pattern case-insensitively (``(?-i:…)`` for a case-sensitive part)."""
    define: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], str] = Field(
        default_factory=dict
    )
    rule: list[RuleSpec] = Field(default_factory=list)
    ignore: list[GuardSpec] = Field(default_factory=list)
    reply: list[ReplySpec] = Field(default_factory=list)
    model: Literal["trading-desk"] | None = None
    """A learned decision model that backs the rules (see ``model.py``): a message no
    rule matches is a hard event when the model finds a decision in it."""
    extends: Literal["default"] | None = None
    """``"default"``: the file adds its definitions, rules, guards and replies to the
    shipped ones (see :func:`_extended`) instead of replacing them."""


class RulesError(Exception):
    """A rules file is missing or invalid; the message says where."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """A rule pattern, and whether it runs on the lower-cased text.

    A case-insensitive pattern without upper-case characters (no ``\\S``, no
    ``(?-i:…)``) matches the lower-cased text exactly as it matches the original
    case-insensitively, and runs many times faster there (case-insensitive matching
    defeats the regex engine's first-character skipping).

    Compiled when made, or (``deferred``) when first searched with: the shipped rules,
    each pattern of which the test suite compiles, compile none at a start; a message is
    searched with a rule's combined patterns (``scans``), and a pattern alone is compiled
    only when it is read alone (:meth:`HardEventRule.clause_matches`).
    """

    body: str
    """What is compiled: ``source``, or without its leading ``(?i)`` on lowered text."""
    on_lowered: bool
    source: str
    """The pattern with every ``{name}`` expanded (flags included)."""
    _regex: re.Pattern[str] | None = field(default=None, init=False, compare=False, repr=False)

    @classmethod
    def compile(cls, source: str, ignore_case: bool = False, deferred: bool = False) -> Pattern:
        if ignore_case and not source.startswith("(?i)"):
            source = "(?i)" + source
        body = source[4:] if source.startswith("(?i)") else None
        if body is not None and body == body.lower() and not _INLINE_FLAGS.search(body):
            pattern = cls(body, True, source)
        else:
            pattern = cls(source, False, source)  # ^/$ at each clause
        if not deferred:
            pattern.regex  # noqa: B018 (compiled now: an invalid pattern fails here)
        return pattern

    @property
    def regex(self) -> re.Pattern[str]:
        regex = self._regex
        if regex is None:
            regex = re.compile(self.body, re.MULTILINE)
            object.__setattr__(self, "_regex", regex)  # compiled once, on first use
        return regex

    def search(self, content: str, lowered: str) -> bool:
        return self.regex.search(lowered if self.on_lowered else content) is not None

    def whole(self, content: str, lowered: str) -> bool:
        """Whether the pattern matches all of ``content`` from its start."""
        text = lowered if self.on_lowered else content
        found = self.regex.match(text)
        return found is not None and found.end() == len(text)


def _combined(patterns: Sequence[Pattern], deferred: bool = False) -> tuple[Pattern, ...]:
    """The patterns as one alternation per text they run on: one scan instead of many.

    A clause matches the alternation exactly when it matches one of the patterns. A
    pattern with a global flag other than a leading ``(?i)`` stays on its own.
    ``deferred``: compiled when first searched with (see :class:`Pattern`).
    """
    lowered = [("(?:", p.body) for p in patterns if p.on_lowered]
    cased: list[tuple[str, str]] = []
    alone = []
    for p in patterns:
        if p.on_lowered:
            continue
        body = p.source[4:] if p.source.startswith("(?i)") else p.source
        if _GLOBAL_FLAGS.match(body):
            alone.append(p)
        else:
            cased.append(("(?i:" if p.source.startswith("(?i)") else "(?:", body))
    out = list(alone)
    if lowered:
        source = _alternation(lowered)
        out.append(Pattern(source, True, source))
    if cased:
        source = _alternation(cased)
        out.append(Pattern(source, False, source))
    if not deferred:
        for pattern in out:
            pattern.regex  # noqa: B018 (compiled now: an invalid combination fails here)
    return tuple(out)


_LOOKAROUNDS = re.compile(r"(?:\(\?<?[=!](?:[^()\\]|\\.)*\)\|?)+")
"""Lookbehinds and lookaheads without groups inside, in sequence or alternation: a
zero-width assertion (the shipped rules' ``{b}``, a word's start)."""
_UNSCANNED = re.compile(r"\(\?#|\(\?[a-zA-Z]*x|\(\?\(|\\[1-9]|\[\^?\]")
"""What the scanners below do not read: a comment, verbose mode, a group reference by
number or a condition on one, a class that starts with ``]``."""
_QUANTIFIERS = "?*+{"


def _leading_assertion(body: str) -> str | None:
    """The zero-width assertion a pattern's ``body`` starts with when the rest of it is one
    sequence with it, unquantified: ``^``, or a group (in any number of ``(?:…)``) of
    lookarounds alone. None when the body holds syntax the scan does not read."""
    alternatives = _top_level_alternatives(body)
    if alternatives is None or len(alternatives) != 1 or _UNSCANNED.search(body):
        return None
    if body.startswith("^"):
        end = 1
    elif body.startswith("("):
        end = next(i for i, c, depth in _syntax(body) if c == ")" and depth == 0) + 1
        inner = body[:end]
        while inner.startswith("(?:") and inner.endswith(")"):
            inner = inner[3:-1]
        if _LOOKAROUNDS.fullmatch(inner) is None:
            return None
    else:
        return None
    return body[:end] if body[end : end + 1] not in tuple(_QUANTIFIERS) else None


def _alternation(parts: Sequence[tuple[str, str]]) -> str:
    """``parts`` (an opening, ``(?:`` or ``(?i:``, and a pattern body) as one alternation,
    the parts with the same opening that start with the same zero-width assertion (``^``, a
    word's start) under that one assertion: Python's engine tries alternatives one by one at
    each position, and now tests it once there instead of once per part (the combination of
    a rule's hundred patterns scans a message faster). A search finds a match exactly where
    the parts joined in order do: only the order the alternatives are tried in changes (and
    parts are left in order when one refers to a group by its number)."""
    plain = "|".join(f"{opening}{body})" for opening, body in parts)
    if any(_UNSCANNED.search(body) for _, body in parts):
        return plain
    by_start: dict[tuple[str, str], list[str]] = {}
    joined: list[str | tuple[str, str]] = []
    for opening, body in parts:
        assertion = _leading_assertion(body)
        if assertion is None:
            joined.append(f"{opening}{body})")
            continue
        key = (opening, assertion)
        if key not in by_start:
            by_start[key] = []
            joined.append(key)  # the group's place: where its first part was
        by_start[key].append(body[len(assertion) :])
    out = []
    for part in joined:
        if isinstance(part, tuple):
            (opening, assertion), rests = part, by_start[part]
            part = f"{opening}{assertion}(?:{'|'.join(rests)}))"
        out.append(part)
    return "|".join(out)


def _any(patterns: Sequence[Pattern], text: str, lowered: str) -> bool:
    return any(p.search(text, lowered) for p in patterns)


@dataclass(frozen=True, slots=True)
class Guard:
    name: str
    patterns: tuple[Pattern, ...]
    unless: tuple[Pattern, ...]
    reasons: bool = True
    """Whether it also holds for the reasons after a reply's verdict (see ``GuardSpec``)."""
    after_dash: bool = True
    """Whether it also holds for the reasons after a spaced dash (see ``GuardSpec``)."""

    def applies(self, clause: str, lowered: str) -> bool:
        return _any(self.patterns, clause, lowered) and not _any(self.unless, clause, lowered)


@dataclass(frozen=True, slots=True)
class HardEventRule:
    name: str
    event_type: str
    score: float
    patterns: tuple[Pattern, ...]
    unless: tuple[Pattern, ...]
    tags: frozenset[str]
    authors: frozenset[str]
    keyword_gate: re.Pattern[str] | None
    """The rules file's ``keywords`` as one literal alternation, searched in the
    lower-cased message (None: no keyword gate)."""
    scans: tuple[Pattern, ...] = ()
    """``patterns`` combined (see ``_combined``): what a message is searched with."""
    together: tuple[Pattern, ...] = ()
    """``all``: patterns that must each match the same clause."""
    gate_words: frozenset[str] = frozenset()
    gate_stems: frozenset[str] = frozenset()
    """The word gate: whole words, and prefixes of a word (empty both: no word gate)."""
    index: int = 0
    """The rule's position in its rule set (its bit in the gate tables)."""
    reasons_after_dash: bool = False
    """See ``RuleSpec.reasons_after_dash``."""

    def allows(self, author_id: str | None, author_name: str | None) -> bool:
        return not self.authors or (
            (author_id or "").lower() in self.authors or (author_name or "").lower() in self.authors
        )

    def clause_matches(self, clause: str, lowered: str) -> bool:
        """Whether one of the patterns (or every ``all`` pattern), and none of the
        ``unless``, matches the clause: the definition every faster path must agree with."""
        shape = _any(self.patterns, clause, lowered) or (
            bool(self.together) and all(p.search(clause, lowered) for p in self.together)
        )
        return shape and not _any(self.unless, clause, lowered)

    @property
    def word_gated(self) -> bool:
        return bool(self.gate_words or self.gate_stems)


@dataclass(frozen=True, slots=True)
class ReplyRule:
    name: str
    event_type: str
    score: float
    patterns: tuple[Pattern, ...]
    anywhere: tuple[Pattern, ...]
    unless: tuple[Pattern, ...]
    parent_types: frozenset[str]
    parent_patterns: tuple[Pattern, ...]
    max_chars: int


@dataclass(frozen=True, slots=True)
class ModelDecision:
    """A decision the rule set's learned model found in a message no rule matched."""

    event_type: str
    probability: float
    name: str = "model"

    @property
    def score(self) -> float:
        return self.probability


Decision = HardEventRule | ReplyRule | ModelDecision
ParentRule = Callable[[], HardEventRule | None]
"""The rule match of the message a reply answers, as the caller sees that message."""


@dataclass(frozen=True, slots=True)
class Clause:
    text: str
    lowered: str
    line: int


@dataclass(frozen=True, slots=True)
class WordGates:
    """Every rule's word gate as two lookup tables: a word (or a word's prefix) to the
    rules (bits, by position in the rule set) whose gate it opens."""

    words: Mapping[str, int]
    stems: Mapping[str, int]
    stem_lengths: tuple[int, ...]

    def mask(self, word: str) -> int:
        bits = self.words.get(word, 0)
        for n in self.stem_lengths:
            if n > len(word):
                break
            bits |= self.stems.get(word[:n], 0)
        return bits


NO_GATES = WordGates({}, {}, ())
MAX_GATED_CLAUSES = 64
"""Up to this many clauses, gates are applied per clause (a long report is searched only
in the clauses holding a rule's words); past it, per message."""


class _View:
    """A message cut into clauses, one per line of two texts (original and lowered).

    The words of each clause are found once (one tokenization) and looked up in the
    rule set's gate tables: a rule is tried only where its words are, clause by clause.
    Where a rule is not word-gated, or the message has very many clauses, each of its
    patterns is searched once over the whole text instead and a match is placed in its
    clause by position. A guard is evaluated only for a clause where a rule matched, once.
    """

    __slots__ = (
        "_clause_bits",
        "_gates",
        "_guarded",
        "_guards",
        "_lowered_starts",
        "_matched",
        "_message_bits",
        "_starts",
        "clauses",
        "lowered",
        "text",
    )

    def __init__(
        self, content: str, guards: tuple[Guard, ...], gates: WordGates = NO_GATES
    ) -> None:
        clauses: list[Clause] = []
        for number, line in enumerate(content.split("\n")):
            for part in _CLAUSE_BREAK.split(line):
                if not part or part.isspace():
                    continue
                # a run-on clause longer than any sentence (a data dump, a pasted blob)
                # is looked at by its head and tail: bounded work per clause
                pieces = (
                    [part[:CLAUSE_EDGE_CHARS], part[-CLAUSE_EDGE_CHARS:]]
                    if len(part) > 2 * CLAUSE_EDGE_CHARS
                    else [part]
                )
                for piece in pieces:
                    clauses.append(Clause(piece, _lower(piece), number))
        self.clauses = clauses
        self.text = "\n".join(c.text for c in clauses)
        self.lowered = "\n".join(c.lowered for c in clauses)
        self._starts = _line_starts(c.text for c in clauses)
        self._lowered_starts = _line_starts(c.lowered for c in clauses)
        self._guarded: dict[int, bool] = {}
        self._guards = guards
        self._gates = gates
        self._message_bits: int | None = None
        self._clause_bits: list[int] | None = None
        self._matched: dict[int, tuple[int, ...]] = {}

    def _bits(self) -> int:
        """The rules (bits) whose word gate this message opens; per clause too when few."""
        if self._message_bits is None:
            known: dict[str, int] = {}

            def bits_of(text: str) -> int:
                bits = 0
                for word in set(_TOKEN.findall(text)):
                    found = known.get(word)
                    if found is None:
                        found = known[word] = self._gates.mask(word)
                    bits |= found
                return bits

            if len(self.clauses) <= MAX_GATED_CLAUSES:
                self._clause_bits = [bits_of(c.lowered) for c in self.clauses]
                self._message_bits = functools.reduce(operator.or_, self._clause_bits, 0)
            else:
                self._message_bits = bits_of(self.lowered)
        return self._message_bits

    def opens(self, rule: HardEventRule) -> bool:
        """Whether the rule's gates (``keywords``, ``gate``) let it try this message."""
        if rule.keyword_gate is not None and not rule.keyword_gate.search(self.lowered):
            return False
        return not rule.word_gated or bool(self._bits() & (1 << rule.index))

    def guarded(self, index: int) -> bool:
        """Whether a guard makes clause ``index`` ordinary."""
        known = self._guarded.get(index)
        if known is None:
            c = self.clauses[index]
            known = any(g.applies(c.text, c.lowered) for g in self._guards)
            self._guarded[index] = known
        return known

    def found(self, pattern: Pattern) -> Iterator[int]:
        """The clauses (by index, ascending) where ``pattern`` matches, guards aside.

        One search per clause at most: after a match the search resumes at the next
        clause, so the whole text is scanned about once.
        """
        text, starts = (
            (self.lowered, self._lowered_starts)
            if pattern.on_lowered
            else (self.text, self._starts)
        )
        search, at, end = pattern.regex.search, 0, len(text)
        while at <= end:
            match = search(text, at)
            if match is None:
                return
            index = bisect.bisect_right(starts, match.start()) - 1
            yield index
            if index + 1 >= len(starts):
                return
            at = starts[index + 1]

    def _shaped(self, rule: HardEventRule) -> Iterable[int]:
        """The clauses where one of the rule's patterns, or all of its ``all``, match."""
        self._bits()
        if rule.word_gated and self._clause_bits is not None:
            bit = 1 << rule.index
            out = []
            for index, bits in enumerate(self._clause_bits):
                if bits & bit:
                    c = self.clauses[index]
                    if _any(rule.scans, c.text, c.lowered) or (
                        rule.together and all(p.search(c.text, c.lowered) for p in rule.together)
                    ):
                        out.append(index)
            return out
        candidates: list[int] = []
        for pattern in rule.scans:
            candidates.extend(self.found(pattern))
        if rule.together:
            common: set[int] | None = None
            for pattern in rule.together:
                hits = set(self.found(pattern))
                common = hits if common is None else common & hits
                if not common:
                    break
            candidates.extend(sorted(common or ()))
        return dict.fromkeys(candidates)

    def _matching(self, rule: HardEventRule) -> Iterator[int]:
        for index in self._shaped(rule):
            if self.guarded(index) and (
                not rule.reasons_after_dash or self.holding(rule, index) is not None
            ):
                continue
            c = self.clauses[index]
            if not _any(rule.unless, c.text, c.lowered):
                yield index

    def holding(self, rule: HardEventRule, index: int) -> str | None:
        """What makes clause ``index`` ordinary for ``rule`` (None: nothing): the first guard
        that holds it, unless the rule reads a decision's reasons after a dash apart
        (``reasons_after_dash``) and frees it — its head, before a spaced dash, matched by
        a pattern that matches the whole clause too, held by no guard, and every guard
        holding the clause one whose words in the reasons say nothing of the decision
        (``Guard.after_dash`` false), none of them in the first words after any dash, and
        no hedge of the writer's own there (``_OWN_HEDGE``)."""
        c = self.clauses[index]
        holding = [g for g in self._guards if g.applies(c.text, c.lowered)]
        if not holding:
            return None
        if not rule.reasons_after_dash:
            return holding[0].name
        dash = _SPACED_DASH.search(c.text)
        if dash is None:
            return holding[0].name
        held = next((g for g in holding if g.after_dash), None)
        if held is not None:
            return held.name
        head = c.text[: dash.start()]
        lowered = _lower(head)
        held = next((g for g in self._guards if g.applies(head, lowered)), None)
        if held is not None:
            return held.name
        tail = c.text[dash.start() :]
        if _OWN_HEDGE.search(tail) is not None:
            return OWN_HEDGE
        for after in _SPACED_DASH.finditer(tail):
            opening = " ".join(tail[after.end() :].split()[:_REASONS_OPENING_WORDS])
            held = next((g for g in holding if g.applies(opening, _lower(opening))), None)
            if held is not None:
                return held.name
        if not any(
            p.search(head, lowered) and p.search(c.text, c.lowered) for p in rule.patterns
        ) and not (bool(rule.together) and all(p.search(head, lowered) for p in rule.together)):
            return holding[0].name
        return None

    def matches(self, rule: HardEventRule) -> tuple[int, ...]:
        """The clauses where ``rule`` matches (a pattern, or every ``all`` pattern; no
        guard and none of its ``unless``), each once; computed once per view."""
        known = self._matched.get(rule.index)
        if known is None:
            known = self._matched[rule.index] = tuple(self._matching(rule))
        return known

    def first(self, rule: HardEventRule) -> int | None:
        """The first clause :meth:`matches` gives (None: none), without checking the
        guards and ``unless`` of the clauses after it when they are not known yet."""
        known = self._matched.get(rule.index)
        if known is not None:
            return known[0] if known else None
        for index in self._matching(rule):
            return index
        self._matched[rule.index] = ()  # most rules match nothing: known at once next time
        return None


def _carried(word: str, parent_lowered: str, names: str = "") -> bool:
    """Whether ``word`` is the number of a card or ticket the parent carries: "2418" or
    "#2418" where the parent holds "#2418" ("reject 2418" under card #2418; not "190 yes"
    under "is 190 still the offer?", nor "2418" in "#2418.50"), or a name in capitals that
    ``names`` (the parent's text, when names may be read past) writes in capitals as what it
    trades ("LUMI yes. DSCT no" under a proposal to sell LUMI and add to the DSCT short; not
    "LUMI yes" under one that names no LUMI, "IT yes" under "if it holds", "NY no" under "…
    in NY at 1349.50", "CPI no" under "before CPI")."""
    if _NAME_WORD.fullmatch(word) is not None:
        for named in re.finditer(rf"(?<![\w.-]){re.escape(word)}(?![\w-])", names):
            before = names[: named.start()].split()
            if not before or before[-1].lower() not in _PLACE_WORDS:
                return True
    bare = word.lstrip("#")
    if not any(ch.isdigit() for ch in bare):
        return False
    found = rf"#{re.escape(_lower(bare))}(?![\w-]|[.,]\d)"
    return re.search(found, parent_lowered) is not None


def _line_starts(lines: Iterable[str]) -> list[int]:
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    return starts


VIEWS_KEPT = 128
"""How many messages' views (their clauses and the rules' matches in them) a rule set
keeps: deriving one message reads it several times (its type, its decision clauses, its
strength, the clauses shown), and a reply reads its parent."""
VIEW_MAX_CHARS = 16_000
"""A message longer than this is cut into a view each time it is read, not kept."""
VIEW_CLAUSES_KEPT = 16_384
"""The most clauses the kept views hold together (a view's memory grows with its clauses:
a pasted log of short lines has thousands); the oldest views go first."""


class _Views:
    """The views a rule set made last, by text: an LRU bounded by entries and by clauses,
    safe across threads (the worker derives in a thread while the event loop may read the
    same rule set). It holds no reference to its rule set (no cycle to collect)."""

    def __init__(self) -> None:
        self._kept: OrderedDict[str, _View] = OrderedDict()
        self._clauses = 0
        self._lock = threading.Lock()

    def get(self, content: str, make: Callable[[str], _View]) -> _View:
        if len(content) > VIEW_MAX_CHARS:
            return make(content)
        with self._lock:
            view = self._kept.get(content)
            if view is not None:
                self._kept.move_to_end(content)
                return view
        view = make(content)
        with self._lock:
            if content not in self._kept:
                self._kept[content] = view
                self._clauses += len(view.clauses)
                while len(self._kept) > VIEWS_KEPT or self._clauses > VIEW_CLAUSES_KEPT:
                    _, gone = self._kept.popitem(last=False)
                    self._clauses -= len(gone.clauses)
        return view


@dataclass(frozen=True, slots=True)
class RuleSet:
    rules: tuple[HardEventRule, ...]
    fingerprint: str
    source: str
    guards: tuple[Guard, ...] = ()
    replies: tuple[ReplyRule, ...] = ()
    gates: WordGates = NO_GATES
    model: Scorer | None = None
    _views: _Views = field(default_factory=_Views, init=False, repr=False, compare=False)
    """A rule set's own (``dataclasses.replace`` makes a new one for the new rule set)."""

    def view(self, content: str) -> _View:
        """``content`` cut into clauses, with the rules' matches in it as they are found:
        the same view for the same text while it is among the last read (``_Views``)."""
        return self._views.get(content, self._make_view)

    def _make_view(self, content: str) -> _View:
        return _View(content, self.guards, self.gates)

    @property
    def reply_chars(self) -> int:
        """The longest short reply any ``[[reply]]`` rule reads (0 without reply rules)."""
        return max((r.max_chars for r in self.replies), default=0)

    def clauses(self, content: str) -> list[Clause]:
        """The clauses of ``content`` no guard makes ordinary, with their line numbers."""
        view = self.view(content)
        return [c for i, c in enumerate(view.clauses) if not view.guarded(i)]

    def _gated(self, rules: Iterable[HardEventRule], view: _View) -> Iterator[HardEventRule]:
        """The rules whose gates let them try their patterns on the message."""
        return (r for r in rules if view.opens(r))

    def first_match(
        self,
        content: str,
        tags: Sequence[str] = (),
        author_id: str | None = None,
        author_name: str | None = None,
    ) -> HardEventRule | None:
        """The rule a bridge tag names (the first in file order), else the rule of the
        message's first decision clause (the earliest clause any rule matches; the first
        rule in file order among those matching it): a message is typed by its headline,
        not by a decision it mentions further down."""
        allowed = [r for r in self.rules if r.allows(author_id, author_name)]
        for rule in allowed:
            if rule.tags.intersection(tags):
                return rule
        view = self.view(content)
        best: tuple[int, int] | None = None
        found: HardEventRule | None = None
        for rule in self._gated(allowed, view):
            index = view.first(rule)  # the rule's first clause is the one that counts
            if index is not None:
                rank = (index, rule.index)
                if best is None or rank < best:
                    best, found = rank, rule
        return found

    def reply_decision(
        self, reply: str, parent: str, parent_rule: ParentRule | None = None
    ) -> ReplyRule | None:
        """The ``[[reply]]`` decision a short ``reply`` to ``parent`` makes, if any.

        A reference to what the reply answers that the parent carries is read past first
        ("Kestrel #31 — no. …" under card #31). The reply must then be at most the rule's
        ``max_chars`` and its first clause must match one of the rule's ``patterns`` (or
        any of its clauses one of its ``anywhere``); or, for an approval or a rejection, it
        is a verdict with its reasons: at most ``REASONED_REPLY_CHARS`` long, opening with
        at most ``BARE_APPROVAL_WORDS`` words (after a one-word label, if any) and a stop,
        comma or dash ("no. not selling yen before CPI …"), and the verdict matches. The
        parent must be a hard event of one of ``parent_types`` or its text must match
        ``parent_patterns`` (for a verdict with its reasons, with a model, it must then
        also read to the model as a decision of one of ``parent_types``: a review that
        mentions an approval is no proposal). A reply that is a question, or whose parent
        is not such a message, decides nothing (it stays an acknowledgement or an ordinary
        message).
        ``parent_rule`` gives the parent's own rule match as its caller sees it (its text,
        bridge tags and author, as the worker does); without it the parent's text alone
        is matched.
        """
        text = reply.strip()
        if not text or not self.replies:
            return None
        parent_lowered = _lower(parent)
        # a reference to what it answers that the parent carries is read past ("Kestrel
        # #31 — no. …" under card #31)
        answered = _ANSWERED_REF.match(text)
        if answered is not None and re.search(
            rf"(?<![\w-]){re.escape(_lower(answered.group(2)))}(?![\w-])", parent_lowered
        ):
            word = answered.group(1)
            # a verdict before the reference stays the reply's verdict: "Yes #31 — 25 lots"
            # reads as "Yes, 25 lots"; a card's name ("Kestrel #31 — no.") goes with it
            kept = f"{word}, " if word is not None and self.bare_approval(word) else ""
            text = kept + text[answered.end() :]
        # a colleague agreed with before the verdict is read past ("agree with Luísa. no on
        # 0871 for now"): what follows must be a verdict itself
        agreeing = _AGREES_WITH.match(text)
        if agreeing is not None and agreeing.end() < len(text):
            text = text[agreeing.end() :]
        clauses = self.clauses(text)
        verdict = self._verdict(text, parent, parent_lowered)
        if not clauses and verdict is None:
            return None
        # a verdict and its reasons may be one clause a guard makes ordinary ("no. not
        # into Powell, it's still there on Thursday"): the verdict is read apart
        head = clauses[0] if clauses else None
        matched = parent_rule() if parent_rule is not None else self.first_match(parent)
        # the parent is often a question ("where do we route it?"): its patterns are
        # searched in its whole text, guards aside
        for reply_rule in self.replies:
            short = (
                len(text) <= reply_rule.max_chars
                and head is not None
                and (
                    _any(reply_rule.patterns, head.text, head.lowered)
                    or any(_any(reply_rule.anywhere, c.text, c.lowered) for c in clauses)
                )
            )
            if not short and not (
                verdict is not None
                and reply_rule.event_type == APPROVAL
                # the verdict is all approval or rejection ("no", "denied", "👍 send it"),
                # not a phrase that opens with such a word ("no idea", "ok, let me think")
                and _whole_by(reply_rule.patterns, verdict)
            ):
                continue
            if _any(reply_rule.unless, text, _lower(text)):
                continue
            if matched is not None and matched.event_type in reply_rule.parent_types:
                return reply_rule
            if not _any(reply_rule.parent_patterns, parent, parent_lowered):
                continue
            if short or self._reads_as(parent, reply_rule.parent_types, reply_rule.parent_patterns):
                return reply_rule
        return None

    def _verdict(self, text: str, parent: str, parent_lowered: str) -> str | None:
        """A reply's leading verdict when the reply is a verdict with its reasons: at most
        ``REASONED_REPLY_CHARS`` long, at most ``BARE_APPROVAL_WORDS`` words before the
        first stop, comma or dash (after a one-word label that names something in the
        parent: "crush: go, 100x. …" under the crush proposal), and reasons after it that
        do not open with a question, a conditional, a plan or "nothing changed" ("ok, let
        me think about it …" and "k. so what's the stop then?" decide nothing). A
        rejection's reasons may also describe how things stand ("no. not into Powell, it's
        still there on Thursday"): for a rejecting verdict the guards marked ``reasons =
        false`` do not apply, and a firm one ("pass", "not today", "denied") keeps its
        reasons whatever they say ("pass. … if it comes and goes, ask me again"), as does
        a verdict whose reasons open with the size it grants ("Go, 3k, with the stop
        hard in the system"); an assent followed by how things stand ("ok, still on the
        phone", "sure, lunch first") puts the decision off and decides nothing. An assent
        before "but" and a condition is the verdict however long the opening words run
        (``_ASSENT_BUT``); a rejection whose reasons say to revisit it later (``_REVISIT``)
        or open by refusing the trade in so many words (``_REFUSING``) stands; names in
        capitals at the verdict's edges are read past only in a verdict split between
        names (``_SPLIT_VERDICT``)."""
        if len(text) > REASONED_REPLY_CHARS:
            return None
        label = _LABEL.match(text)
        if (
            label is not None
            and not self.bare_approval(label.group(1))
            and re.search(rf"(?<!\w){re.escape(_lower(label.group(1)))}(?!\w)", parent_lowered)
        ):
            text = text[label.end() :]
        less = _GRANTED_LESS.match(text)
        found = _VERDICT.match(text)
        assent = _ASSENT_BUT.match(text)
        if less is not None and _grants_less(less, parent_lowered):
            # "1mm, not 1.5. I don't want more than …": its reasons are read as a go's are
            verdict, reasons_at, sized = less.group(1), less.end(1), False
        elif assent is not None and (found is None or found.end(1) > assent.end(1)):
            # "ok pero max 412 and …": the assent before "but" is the verdict
            if not self._whole_verdict(assent.group(1)):
                return None
            verdict, reasons_at, sized = assent.group(1), assent.end(1), False
        else:
            if found is None:
                return None
            # names in capitals are read past only in a verdict split between names ("LUMI yes.
            # DSCT no"; not "AAPL yes, since 10:05" under "… AAPL still halted?")
            names = parent if _SPLIT_VERDICT.match(text) is not None else ""
            read = self._read_verdict(found.group(1), names, parent_lowered)
            if read is None:
                return None
            verdict, rest = read
            reasons_at = found.end(2) if rest is None else rest
            sized = rest is None and _SIZED.match(text, found.end(2)) is not None
        firm = _FIRM_REJECTION.match(verdict)
        if firm is not None:
            return firm.group(1)  # "Abgelehnt von Risk." is the verdict "Abgelehnt"
        if sized:
            return verdict.strip()  # "Go, 3k, with the 1,965 stop hard in the system."
        # a rejection, or one on what it names ("no on 0871")
        rejecting = _REJECTING.match(_NAMED_VERDICT.sub("", verdict)) is not None
        if not rejecting and _TAKEN_BACK.match(text, reasons_at) is not None:
            return None  # "yep go, just not today. with the Fed tomorrow …"
        if rejecting and (
            _REVISIT.match(text, reasons_at) is not None
            or (_REFUSING.match(text, reasons_at) is not None and _PUT_OFF.match(verdict) is None)
        ):
            return verdict.strip()  # "no for now, revisit post auction", "no. not adding …"
        if (
            not rejecting
            and _FIRM_APPROVAL.match(verdict) is not None
            and _HOW_TO_DO_IT.match(text, reasons_at) is not None
        ):
            return verdict.strip()  # "ok go. keep the total under 35mm …"
        guards = tuple(g for g in self.guards if g.reasons or not rejecting)
        reasons = _View(text[reasons_at:], guards, self.gates)
        if reasons.clauses and reasons.guarded(0):
            return None  # "ok, let me think about it", "k. so what's the stop then?"
        return verdict.strip()

    def _read_verdict(
        self, words: str, names: str, parent_lowered: str
    ) -> tuple[str, int | None] | None:
        """The verdict in a reply's opening words (before its first stop, comma or dash),
        and where its reasons start when they start inside those words (None: after them).

        Words that are wholly a verdict are it. Else what they say at their edges is read
        past: the number of the card the parent carries ("reject 2418" under card #2418) and
        a size with its unit ("ok 40k"); and a verdict around "but": a rejection after an
        appraisal ("good eye but no", "nice idea but not today"), or an assent before it,
        whose reasons start at "but" ("ok but half in the auction"; "ok but let me check" is
        put off by them). Otherwise at most ``BARE_APPROVAL_WORDS`` words are returned as
        they are (the caller matches them against its rules) and more are no verdict. A
        verdict on the card the parent carries, with "for now" or "today" after it, is that
        verdict ("no on 0871 for now"). ``names`` is the parent's text when names in
        capitals may be read past (the caller's choice), else empty."""
        words = words.rstrip()
        timed = _FOR_NOW.search(words)
        core = words[: timed.start()] if timed is not None else words
        named = _ON_CARD.fullmatch(core)
        if (
            named is not None
            and _carried(named.group(2), parent_lowered, names)
            and self._whole_verdict(named.group(1))
        ):
            return named.group(1), None  # "no on 0871 for now" under card #0871
        if timed is not None and self._whole_verdict(core):
            return core, None  # "not this one today"
        tokens = words.split()
        if self._whole_verdict(words):  # at most BARE_APPROVAL_WORDS words, all a verdict
            return words, None
        granted = _SIZE_FOR.fullmatch(words)
        if granted is not None and re.search(  # "ok 3mm for the foundation" is "ok 3mm"
            rf"(?<![\w-]){re.escape(_lower(granted.group(2)))}(?![\w-])", parent_lowered
        ):
            return self._read_verdict(granted.group(1), names, parent_lowered)
        edge = [_carried(t, parent_lowered, names) or bool(_SIZE_WORD.fullmatch(t)) for t in tokens]
        first = next((i for i, aside in enumerate(edge) if not aside), len(tokens))
        last = next((i for i in range(len(tokens), 0, -1) if not edge[i - 1]), 0)
        kept = " ".join(tokens[first:last])
        inner = 0 < last - first < len(tokens) and not any(edge[first:last])
        if inner and self._whole_verdict(kept):
            return kept, None
        split = _BUT.fullmatch(words)
        if split is not None:
            head, tail = split.group(1), split.group(2)
            if (
                _APPRAISAL.fullmatch(head) is not None
                and _REJECTING.match(tail) is not None
                and self._whole_verdict(tail)
            ):
                return tail, None
            if _REJECTING.match(head) is None and self._whole_verdict(head):
                return head, split.end(1)
        if len(tokens) <= BARE_APPROVAL_WORDS:
            return words, None
        return None

    def _whole_verdict(self, words: str) -> bool:
        """Whether ``words`` are at most ``BARE_APPROVAL_WORDS`` words that are all an
        approval or a rejection by a ``[[reply]]`` rule of the ``trade_approval`` type, or a
        go assented to (``_ASSENTED``)."""
        return len(words.split()) <= BARE_APPROVAL_WORDS and any(
            rule.event_type == APPROVAL and _whole_by(rule.patterns, words) for rule in self.replies
        )

    def _reads_as(self, text: str, types: frozenset[str], patterns: Sequence[Pattern] = ()) -> bool:
        """Whether the model (if any) reads ``text`` as a decision of one of ``types``:
        whole, or — a message that opens with another decision and proposes further down
        ("NVDA RR exit. We're short 750 … want to buy back all 750 at the open, 0.70
        debit or better") — in a clause one of ``patterns`` matches that is the writer's
        own (``_OWN_PROPOSAL``: not "Citadel wants to buy 5k NVDA at 120 or better")."""
        model = self.model
        if model is None:
            return True
        if model.probability(text) < model.threshold:
            return False
        if model.event_type(text) in types:
            return True
        return any(
            _OWN_PROPOSAL.match(c.text) is not None
            and _any(patterns, c.text, c.lowered)
            and model.probability(c.text) >= model.threshold
            and model.event_type(c.text) in types
            for c in self.clauses(text)[:MAX_GATED_CLAUSES]
        )

    def bare_approval(self, text: str) -> bool:
        """Whether ``text`` is at most ``BARE_APPROVAL_WORDS`` words that a ``[[reply]]``
        rule of the ``trade_approval`` type reads as an approval or a rejection ("go",
        "yes", "👍 send it", "nah"): a reply's word, meaningless on its own."""
        stripped = text.strip()
        if not stripped or len(stripped.split()) > BARE_APPROVAL_WORDS:
            return False
        clauses = self.clauses(stripped)
        if not clauses:
            return False
        head = clauses[0]
        return any(
            rule.event_type == APPROVAL
            and _any(rule.patterns, head.text, head.lowered)
            and not _any(rule.unless, stripped, _lower(stripped))
            for rule in self.replies
        )

    def decide(
        self,
        content: str,
        tags: Sequence[str] = (),
        author_id: str | None = None,
        author_name: str | None = None,
        parent: str | None = None,
        parent_rule: ParentRule | None = None,
    ) -> Decision | None:
        """The decision a message makes: by its own rules, else as a reply to ``parent``,
        else (with a model) as the model finds it — a short reply read with its parent,
        and, when the parent is itself no decision, read alone as well.

        ``parent_rule`` gives the parent's own rule match as its caller sees it (its text,
        bridge tags and author, as the worker does); without it the parent's text alone
        is matched."""
        rule = self.first_match(content, tags, author_id, author_name)
        if rule is not None:
            return rule
        if parent is not None and not parent.strip():
            parent = None  # an empty message answers nothing
        reply = self.reply_decision(content, parent, parent_rule) if parent is not None else None
        if reply is not None or self.model is None:
            return reply
        # the model reads a parent only under a short reply (the reply rules' length):
        # a longer reply is a message of its own, whatever it opens with
        if parent is not None and len(content.strip()) > self.reply_chars:
            parent = None
        if parent is not None and self._no_verdict(content):
            return None  # the reply rules say it is none ("no idea what the fill was")
        found = self._model_decision(self.model, content, parent)
        if found is None or parent is None or self._decides(self.model, parent, parent_rule):
            return found
        # under a parent that is no decision (chatter, a question: "should we move the
        # stop?") a short answer decides only when it reads as one by itself as well
        # ("your desk, your call" does not). The worker reads every message by itself
        # first and a reply with its parent only when that found nothing: there, such a
        # reply is never a decision by the model's reading with its parent.
        alone = self._model_decision(self.model, content, None)
        if alone is None:
            return None
        return ModelDecision(found.event_type, min(found.probability, alone.probability))

    def _decides(self, model: Scorer, parent: str, parent_rule: ParentRule | None = None) -> bool:
        """Whether a parent is a decision by itself: the model reads its text as one, or a
        rule matches it (``parent_rule``: with its bridge tags and author), or the model
        decides its clauses: "can I add 200 Bund at 131.20?" is a question no rule
        decides, but the model reads it as the proposal it is."""
        if model.probability(parent) >= model.threshold:
            return True
        matched = parent_rule() if parent_rule is not None else self.first_match(parent)
        return matched is not None or self._model_decision(model, parent, None) is not None

    def _no_verdict(self, reply: str) -> bool:
        """Whether a reply rule reads a short reply's opening as its verdict and its
        ``unless`` says it is none ("no idea what the fill was")."""
        text = reply.strip()
        clauses = self.clauses(text)
        if not clauses:
            return False
        head, lowered = clauses[0], _lower(text)
        return any(
            len(text) <= rule.max_chars
            and _any(rule.patterns, head.text, head.lowered)
            and _any(rule.unless, text, lowered)
            for rule in self.replies
        )

    def _open_spans(self, content: str) -> tuple[list[tuple[int, int]], bool]:
        """The clauses the model reads (those starting in the first or ending in the last
        ``CAP_CHARS`` of ``content``) that no guard makes ordinary, and whether no clause
        it reads is guarded: bounded work at any length."""
        view = self.view(content)
        spans, guarded = [], False
        for start, end, at in _clause_spans(content):
            if in_reach(start, end, len(content)):
                if all(map(view.guarded, at)):
                    guarded = True
                else:
                    spans.append((start, end))
        return spans, not guarded

    def _model_decision(
        self, model: Scorer, content: str, parent: str | None
    ) -> ModelDecision | None:
        """The model's verdict on a message no rule or reply rule decides. The guards hold
        for the model as for the rules, replies included: a message that is all
        questions, conditionals, plans or "nothing changed" is not a decision, and one
        must read as a decision both whole and with only the clauses no guard makes
        ordinary. A bare approval word ("go", "send it")
        decides only as a reply to a message the model itself reads as a decision; a
        pasted token, a blob or markup gives it nothing to read."""
        if self.bare_approval(content) and (
            parent is None or model.probability(parent) < model.threshold
        ):
            return None
        spans, all_open = self._open_spans(content)
        if not spans:
            return None
        text = "\n".join(content[start:end] for start, end in spans)
        if not model.readable(text):
            return None
        # the message must read as a decision both whole (a header left open among
        # guarded lines is not one) and without its guarded clauses (a preamble before
        # a question or a conditional is not one either)
        probability = model.probability(content, parent)
        if not all_open and probability >= model.threshold:
            probability = min(probability, model.probability(text, parent))
        if probability < model.threshold:
            return None
        # rounded: the last bits of exp/log/sqrt may differ between C libraries, and a
        # score can reach a block id; nine digits are the same on every host
        return ModelDecision(model.event_type(text, parent), round(probability, 9))

    def shown_spans(self, content: str, event_type: str | None = None) -> list[tuple[int, int]]:
        """The clauses a hard event shown cut keeps: with a model, the clause its clause
        selector finds most likely to state the decision, the likeliest of those a rule
        matched (when a rule matched one; for a hard event of ``event_type`` in
        ``SHOWN_RULED``, that many) and any other it rates at least its
        ``clause_threshold``; without one, the rules' decision clauses. None when
        neither the rules nor the model find a decision clause (shown whole). With a
        model, the clause right after one the selector keeps, on its line, is kept too when
        it is at most ``SHORT_TAIL_CHARS`` characters or a retraction ("… at 131.40. ok?",
        "… at 131.40. Nope. Sell them.": :func:`_with_short_tails`), and each clause kept
        (after its trade line, verdict and card fields are added) ends before its trailing
        reasons — after a spaced dash, or a comma before the words of a reason — when what
        stands before them decides alone (:meth:`_without_reasons`): a span may then end
        inside a clause.

        The candidates are the clauses the model reads (see :func:`in_reach`) and the
        first and last ``SELECTOR_DECIDED`` clauses a rule matched wherever they are, so
        a decision in the middle of a long message stays one: bounded work at any length.
        """
        decided = self.decision_spans(content)
        model = self.model
        clauses = clause_bounds(content)
        if model is None:
            return _with_context(content, decided, clauses, event_type)
        if not decided and not self._model_spans(content):
            return []
        wanted = {*decided[:SELECTOR_DECIDED], *decided[-SELECTOR_DECIDED:]}
        scored = [
            i
            for i, (start, end) in enumerate(clauses)
            if in_reach(start, end, len(content)) or (start, end) in wanted
        ]
        ruled = frozenset(decided)
        scores = model.clause_scores(content, clauses, scored, ruled)

        def best(pool: Sequence[int], count: int = 1) -> set[int]:
            return set(sorted(pool, key=lambda n: (-scores[n], n))[:count])

        # the selector's best clause, and the best a rule matched beside it (the best two
        # for a change of view, see SHOWN_RULED): the selector leans on a message's first
        # clause, and "done." or "Verstanden." alone is no fill or block shown; a rule may
        # match a card's "status: awaiting approval" line while the selector's best is the
        # card's headline
        kept = best(range(len(scored))) | best(
            [n for n, index in enumerate(scored) if clauses[index] in ruled],
            SHOWN_RULED.get(event_type or "", 1),
        )
        threshold = model.clause_threshold
        # a report's closing lines: the likeliest clause there, rated at least
        # CLOSING_SCORE, is kept too (ADR 0074: the selector's trees rate a wrap's recap
        # lines above its own closing decision, "Overnight: Rafa's CL stop moves to 72.40")
        # — or the likeliest there that a rule of the hard event's own type matched, whatever
        # its rating (a review's reports: the recap's fills are matched by fill rules, the
        # closing "I am cutting the desk gross limit to 200m" by a limit rule)
        if content.count("\n") >= CLOSING_LINES_AFTER:
            closing_from = content.rfind("\n", 0, content.rstrip().rfind("\n"))
            closing = [n for n, index in enumerate(scored) if clauses[index][0] > closing_from]
            typed = set(self.decision_spans(content, event_type)) if event_type else set()
            if any(clauses[scored[n]] in typed for n in kept):
                typed = set()  # a clause of its own type is kept already: a card's trade line
            own = [n for n in closing if clauses[scored[n]] in typed]
            kept |= best(own) or {n for n in best(closing) if scores[n] >= CLOSING_SCORE}
        chosen = [
            clauses[index] for n, index in enumerate(scored) if n in kept or scores[n] >= threshold
        ]
        # (a clause no rule matched is kept only as the selector's best or above its
        # threshold: keeping the best of them at 0.5 besides, ADR 0039's card headline,
        # named fewer decisions than the room it took, ADR 0050)
        return self._without_reasons(
            content,
            _with_context(
                content,
                _with_short_tails(content, _with_level_heads(content, chosen, clauses), clauses),
                clauses,
                event_type,
            ),
            model,
        )

    def _without_reasons(
        self, content: str, spans: list[tuple[int, int]], model: Scorer
    ) -> list[tuple[int, int]]:
        """Each span with its trailing reasons left out — the parts after a spaced dash, or
        after a comma before the words of a reason (``_PIECE_CUT``) — when they state no
        decision and what stands before them does (:meth:`_decides`: a rule matches it
        alone, or the model reads it alone as one): "cut the Bund long to 20 lots — the
        auction tail worries me" and "add 20 WTI Z5 at 59.40 or better, it's 59.44 bid now"
        keep their heads. What stands before the last deciding part is kept (it names the
        instrument: "Re the EURUSD position — stop to 1.0850"); so is a trailing part of at
        most ``PIECE_KEPT_CHARS`` characters, one that opens with a condition, a
        retraction, a scope, a time or a further leg (``_PIECE_KEEPS``: "— but only if the
        BoJ holds", "— scratch that", "— on the Geneva account only", "— and sell the 7s"),
        one that corrects, conditions or caps anywhere in it (``_PIECE_HOLDS``: "…, it's
        actually 1.0830", "…, max 20"), and a head of at most ``PIECE_HEAD_CHARS``
        ("Rejected — the bucket is at 92%" stays whole). A span longer than
        ``PIECE_SPAN_CHARS`` or with more than ``PIECE_CUTS`` places to cut stays whole:
        bounded work at any length."""
        return [(start, start + self._kept_end(content[start:end], model)) for start, end in spans]

    def _kept_end(self, text: str, model: Scorer) -> int:
        """Where ``text``'s kept part ends (its length: all of it)."""
        if len(text) > PIECE_SPAN_CHARS:
            return len(text)
        cuts = [m.span() for m in _PIECE_CUT.finditer(text)]
        if not cuts or len(cuts) > PIECE_CUTS:
            return len(text)
        keep = len(text)
        # from the last part back: drop trailing parts that state no decision, until one
        # that does (or one that must stay) is met
        for cut_start, cut_end in reversed(cuts):
            part = text[cut_end:keep]
            if (
                len(part) <= PIECE_KEPT_CHARS
                or _PIECE_KEEPS.match(part)
                or _PIECE_HOLDS.search(part)
                or self._decides(model, part)
            ):
                break
            keep = cut_start
        if keep == len(text):
            return keep
        head = text[:keep]
        return keep if len(head) > PIECE_HEAD_CHARS and self._decides(model, head) else len(text)

    def _model_spans(self, content: str) -> list[tuple[int, int]]:
        """The clauses the model reads that no guard makes ordinary and that it finds a
        decision in, each scored alone (none: the hard event is shown whole)."""
        if self.model is None:
            return []
        threshold = self.model.threshold
        return [
            (start, end)
            for start, end in self._open_spans(content)[0]
            if self.model.probability(content[start:end]) >= threshold
        ]

    def matching(self, content: str, names: Collection[str]) -> list[str]:
        """For ``rules test``: the rules named in ``names`` that match a clause of
        ``content`` (no guard, none of their ``unless``), in order."""
        view = self.view(content)
        return [
            rule.name
            for rule in self.rules
            if rule.name in names and view.opens(rule) and view.matches(rule)
        ]

    def held_back(self, content: str, names: Collection[str]) -> list[tuple[str, str]]:
        """For ``rules test``: each rule named in ``names`` whose pattern matches a clause
        of ``content`` that a guard makes ordinary, with what holds it (:meth:`_View.holding`:
        a guard's name, or ``OWN_HEDGE``): why a rule written for a message does not match
        it (``(rule, guard)``, the rules in order)."""
        view = self.view(content)
        out = []
        for rule in self.rules:
            if rule.name not in names or not view.opens(rule):
                continue
            for index in view._shaped(rule):
                held = view.holding(rule, index) if view.guarded(index) else None
                if held is not None:
                    out.append((rule.name, held))
                    break
        return out

    def decision_spans(self, content: str, event_type: str | None = None) -> list[tuple[int, int]]:
        """The decision-bearing clauses of ``content`` as ``(start, end)`` character spans,
        in order: every clause (a line, or a sentence of one) a rule matches — a rule of
        ``event_type`` when given — verbatim from its first to its last non-blank character."""
        view = self.view(content)
        kept: set[int] = set()
        for rule in self._gated(self.rules, view):
            if event_type is None or rule.event_type == event_type:
                kept.update(view.matches(rule))
        if not kept:
            return []
        return [(start, end) for start, end, at in _clause_spans(content) if kept.intersection(at)]

    def strength(self, content: str, spans: list[tuple[int, int]] | None = None) -> int:
        """How plainly ``content`` states its decision, 0 to 5: one point each for a
        number in a decision clause (a size, a level, an id), an actor in one (first
        person, an instruction, or a machine record of ``key=value`` fields), a
        ticker-like symbol in one (``RXM6``, ``USDJPY``, ``SAP``), a short message (at
        most ``SHORT_MESSAGE_CHARS``), and a decision in the first clause or in at least
        half of the message's clauses. A report that mentions an action in one of
        its twenty sentences scores low; "sold 5k AAPL 189.40" scores high. ``spans``:
        the message's :meth:`decision_spans`, when the caller has them already."""
        if spans is None:
            spans = self.decision_spans(content)
        if not spans:
            return 0
        clauses = [content[start:end] for start, end in spans]
        parts = list(_clause_parts(content))
        points = int(any(_DIGIT.search(c) for c in clauses))
        points += int(any(_ACTOR.search(c) or _RECORD.search(c) for c in clauses))
        points += int(any(_TICKER.search(c) for c in clauses))
        points += int(len(content) <= SHORT_MESSAGE_CHARS)
        points += int(2 * len(spans) >= len(parts) or parts[0].strip() == clauses[0])
        return points

    def decision_lines(self, content: str) -> list[bool]:
        """For each line of ``content``, whether a rule matches one of its clauses."""
        keep = [False] * (content.count("\n") + 1)
        view = self.view(content)
        for rule in self._gated(self.rules, view):
            for index in view.matches(rule):
                keep[view.clauses[index].line] = True
        return keep


_LITERAL = re.compile(r"[^\\()\[\]{}.*+?^$|]+")
"""An alternative with no regex syntax at all: a word or phrase."""


_SYNTAX = re.compile(r"\\.|\[(?:\\.|[^\]\\])*(\])?|[()|]", re.DOTALL)
"""An escape, a character class (its ``]`` missing when it is left open) or a group or
alternation character: the tokens :func:`_syntax` reads."""


def _syntax(source: str) -> Iterator[tuple[int, str, int]]:
    """Each group or alternation character (``(``, ``)``, ``|``) of ``source`` outside
    escapes and character classes, with its index and the number of groups open around it
    (a group's own parentheses count as outside it); then ``(len(source), "", depth)``, or
    ``"["`` for the character when a class is left open."""
    depth = 0
    for token in _SYNTAX.finditer(source):
        c = token[0]
        if c == "(":
            yield token.start(), c, depth
            depth += 1
        elif c == ")":
            depth -= 1
            yield token.start(), c, depth
        elif c == "|":
            yield token.start(), c, depth
        elif c[0] == "[" and token[1] is None:
            yield len(source), "[", depth
            return
    yield len(source), "", depth


def _top_level_alternatives(source: str) -> list[str] | None:
    """``source`` split at its top-level ``|``, or None if it is not plain alternation text."""
    parts, start = [], 0
    for i, c, depth in _syntax(source):
        if c == "|" and depth == 0:
            parts.append(source[start:i])
            start = i + 1
        elif i == len(source) and (c or depth):
            return None
    parts.append(source[start:])
    return parts


def _trie(words: Sequence[str]) -> str:
    """One regex matching exactly ``words``, shared prefixes factored (``clos(?:e[ds]?|ing)``)."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(c) + emit(child) for c, child in sorted(node.items()) if c]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body

    return emit(root)


def _factored(source: str) -> str:
    """A definition with its word alternatives merged into a prefix tree.

    Python's regex engine tries alternatives one by one at each position; a tree of
    shared prefixes fails after a character or two. The set of strings matched is
    unchanged (only the order alternatives are tried in, which a search that just
    asks whether and where a clause matches does not depend on).
    """
    parts = _top_level_alternatives(source)
    if parts is None or len(parts) < 3:
        return source
    words = [p for p in parts if p and _LITERAL.fullmatch(p)]
    if len(words) < 3:
        return source
    rest = [p for p in parts if not (p and _LITERAL.fullmatch(p))]
    return "|".join([_trie(words), *rest])


def _expand(source: str, define: Mapping[str, str], where: str) -> str:
    """``source`` with every ``{name}`` replaced by its (expanded) definition, grouped."""
    text = source
    for _ in range(MAX_REFERENCE_DEPTH):
        missing = [m.group(1) for m in _REFERENCE.finditer(text) if m.group(1) not in define]
        if missing:
            raise RulesError(f"{where}: undefined name {{{missing[0]}}}")
        expanded = _REFERENCE.sub(lambda m: "(?:" + define[m.group(1)] + ")", text)
        if expanded == text:
            return text
        text = expanded
    if _REFERENCE.search(text):
        raise RulesError(f"{where}: definitions nested deeper than {MAX_REFERENCE_DEPTH}")
    return text


_QUANTIFIER = "?*{"


def _gate_of_alternative(alternative: str) -> tuple[str, bool] | None:
    """The word that opens a rule's gate for an alternative of a definition, and whether
    it is a stem: the longest whole word of the literal text the alternative starts with
    (every match holds it, and a longer word is a rarer one), else its leading stem.

    ``approv(?:ed|al)`` gives the stem ``approv``; ``go ahead`` the word ``ahead``;
    ``i don sell`` the word ``sell``, not ``i``; ``ack[\x27]d`` the stem ``ack``.
    None when it starts with regex syntax.
    """
    text = alternative.removeprefix("\\b")
    run = _LITERAL.match(text)
    if run is None:
        return None
    literal, rest = run.group(), text[run.end() :]
    if rest[:1] and rest[0] in _QUANTIFIER:
        literal, rest = literal[:-1], literal[-1] + rest  # the last character is optional
    lowered = literal.lower()
    tokens = list(_TOKEN.finditer(lowered))
    if not tokens or tokens[0].start() != 0:
        return None
    whole = [t.group() for t in tokens if t.end() < len(lowered) or not rest]
    if whole:
        return max(whole, key=len), False
    return tokens[0].group(), True


def _gate_words(
    entries: Sequence[str], define: Mapping[str, str], where: str
) -> tuple[frozenset[str], frozenset[str]]:
    """A rule's ``gate`` as whole words and stems (see ``RuleSpec.gate``)."""
    words: set[str] = set()
    stems: set[str] = set()

    def add_definition(name: str, depth: int) -> None:
        if name not in define:
            raise RulesError(f"{where}: undefined name {{{name}}}")
        if depth > MAX_REFERENCE_DEPTH:
            raise RulesError(f"{where}: definitions nested deeper than {MAX_REFERENCE_DEPTH}")
        for alternative in _top_level_alternatives(define[name]) or [define[name]]:
            reference = _REFERENCE.fullmatch(alternative)
            if reference is not None:
                add_definition(reference.group(1), depth + 1)
                continue
            lead = _gate_of_alternative(alternative)
            if lead is None:
                raise RulesError(
                    f"{where}: {{{name}}} has an alternative that does not start with a word: "
                    f"{alternative[:40]!r}"
                )
            (stems if lead[1] else words).add(lead[0])

    for entry in entries:
        reference = _REFERENCE.fullmatch(entry)
        if reference is not None:
            add_definition(reference.group(1), 0)
        elif _GATE_ENTRY.fullmatch(entry.lower()):
            if entry.endswith("*"):
                stems.add(entry[:-1].lower())
            else:
                words.add(entry.lower())
        else:
            raise RulesError(f"{where}: not a word, stem* or {{name}}: {entry[:40]!r}")
    return frozenset(words), frozenset(stems)


def _patterns(
    sources: Sequence[str], spec: RuleFile, where: str, deferred: bool = False
) -> tuple[tuple[Pattern, ...], list[str]]:
    compiled: list[Pattern] = []
    expanded: list[str] = []
    for i, source in enumerate(sources):
        text = _expand(source, spec.define, f"{where}.{i}")
        try:
            compiled.append(Pattern.compile(text, spec.ignore_case, deferred))
        except re.error as exc:
            raise RulesError(f"{where}.{i}: invalid regular expression: {exc}") from None
        expanded.append(text)
    return tuple(compiled), expanded


def _compile(spec: RuleFile, source: str, check_each: bool = True) -> RuleSet:
    deferred = not check_each  # see parse_rules
    # (a file that extends the shipped rules is compiled merged: what it says is all there)
    fields = spec.model_dump(mode="json", exclude={"extends"})
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    raw_define = spec.define
    spec = spec.model_copy(update={"define": {k: _factored(v) for k, v in spec.define.items()}})
    rules: list[HardEventRule] = []
    for i, r in enumerate(spec.rule):
        where = f"{source}: rule.{i}.patterns"
        patterns, _ = _patterns(r.patterns, spec, where, deferred)
        try:
            scans = _combined(patterns, deferred)
        except re.error as exc:  # e.g. a group name used by two patterns
            raise RulesError(f"{where}: the patterns do not combine: {exc}") from None
        unless, _ = _patterns(r.unless, spec, f"{source}: rule.{i}.unless", deferred)
        together, _ = _patterns(r.all, spec, f"{source}: rule.{i}.all", deferred)
        gate_words, gate_stems = _gate_words(r.gate, raw_define, f"{source}: rule.{i}.gate")
        rules.append(
            HardEventRule(
                name=r.name,
                event_type=r.event_type,
                score=r.score,
                patterns=patterns,
                unless=unless,
                tags=frozenset(r.tags),
                authors=frozenset(a.lower() for a in r.authors),
                keyword_gate=re.compile("|".join(re.escape(k.lower()) for k in r.keywords))
                if r.keywords
                else None,
                scans=scans,
                together=together,
                gate_words=gate_words,
                gate_stems=gate_stems,
                index=i,
                reasons_after_dash=r.reasons_after_dash,
            )
        )
    guards = tuple(
        Guard(
            g.name,
            _patterns(g.patterns, spec, f"{source}: ignore.{i}.patterns", deferred)[0],
            _patterns(g.unless, spec, f"{source}: ignore.{i}.unless", deferred)[0],
            g.reasons,
            g.after_dash,
        )
        for i, g in enumerate(spec.ignore)
    )
    replies = tuple(
        ReplyRule(
            name=r.name,
            event_type=r.event_type,
            score=r.score,
            patterns=_patterns(r.patterns, spec, f"{source}: reply.{i}.patterns", deferred)[0],
            anywhere=_patterns(r.anywhere, spec, f"{source}: reply.{i}.anywhere", deferred)[0],
            unless=_patterns(r.unless, spec, f"{source}: reply.{i}.unless", deferred)[0],
            parent_types=frozenset(r.parent_types),
            parent_patterns=_patterns(
                r.parent_patterns, spec, f"{source}: reply.{i}.parent", deferred
            )[0],
            max_chars=r.max_chars,
        )
        for i, r in enumerate(spec.reply)
    )
    model = load_model(spec.model) if spec.model is not None else None
    if model is not None:
        canonical += model.digest
    fingerprint = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    words: dict[str, int] = {}
    stems: dict[str, int] = {}
    for rule in rules:
        for word in rule.gate_words:
            words[word] = words.get(word, 0) | 1 << rule.index
        for stem in rule.gate_stems:
            stems[stem] = stems.get(stem, 0) | 1 << rule.index
    gates = WordGates(words, stems, tuple(sorted({len(s) for s in stems})))
    return RuleSet(tuple(rules), fingerprint, source, guards, replies, gates, model)


def parse_rules(text: str, source: str, check_each: bool = True) -> RuleSet:
    """Parse a rules file's text. Raises ``RulesError`` naming the table and field.

    ``check_each``: compile every pattern now, alone and in its rule's combination, so
    that one that is invalid is refused by its place; else each is compiled when first
    searched with, as for the shipped rules, whose every pattern and combination the
    test suite compiles (and a file that extends them, compiled alone first): a command
    that never reads a message never pays for the couple of seconds compiling them all
    takes."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{source}: not valid TOML: {exc}") from None
    try:
        spec = RuleFile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            for e in exc.errors(include_input=False, include_url=False)
        )
        raise RulesError(f"{source}: {problems}") from None
    if spec.extends == "default":
        return _extended(spec, source, check_each)
    return _compile(spec, source, check_each)


@functools.cache
def _default_spec() -> RuleFile:
    """The shipped rules file, read once (a ``RuleFile`` is frozen)."""
    text = resources.files("channel_memory.worker").joinpath("default_rules.toml").read_text()
    return RuleFile.model_validate(tomllib.loads(text))


def _extended(spec: RuleFile, source: str, check_each: bool) -> RuleSet:
    """The shipped rules with a file's own added: its definitions beside theirs (a name
    they define is refused, as it would change their patterns), its rules after theirs
    (a clause both match takes the shipped rule's type), its guards and replies with
    theirs; the shipped case rule and model hold (a file that sets others is refused).
    The file's own patterns are checked first, so an error names its own tables."""
    base = _default_spec()
    if "ignore_case" in spec.model_fields_set and spec.ignore_case != base.ignore_case:
        raise RulesError(
            f"{source}: ignore_case: a file that extends the shipped rules reads its "
            f"patterns as they do (ignore_case = {str(base.ignore_case).lower()})"
        )
    if spec.model is not None and spec.model != base.model:
        raise RulesError(f"{source}: model: the shipped rules' model ({base.model}) holds")
    taken = sorted(set(spec.define) & set(base.define))
    if taken:
        raise RulesError(f"{source}: define.{taken[0]}: the shipped rules define it")
    for table, mine, shipped in (
        ("rule", [r.name for r in spec.rule], {r.name for r in base.rule}),
        ("ignore", [g.name for g in spec.ignore], {g.name for g in base.ignore}),
        ("reply", [r.name for r in spec.reply], {r.name for r in base.reply}),
    ):
        for n, name in enumerate(mine):
            if name in shipped:
                # a report naming "(rule trade_spec)" would not say whose rule it was
                raise RulesError(
                    f"{source}: {table}.{n}.name: the shipped rules have a {table} named "
                    f"{name!r}; give yours another name"
                )
    define = {**base.define, **spec.define}
    own = spec.model_copy(update={"define": define, "ignore_case": base.ignore_case})
    _compile(own.model_copy(update={"model": None, "extends": None}), source, check_each)
    merged = base.model_copy(
        update={
            "define": define,
            "rule": [*base.rule, *spec.rule],
            "ignore": [*base.ignore, *spec.ignore],
            "reply": [*base.reply, *spec.reply],
        }
    )
    return _compile(merged, source, check_each=False)


@functools.cache
def default_rules() -> RuleSet:
    """The shipped rules (compiled once: a ``RuleSet`` is immutable)."""
    return _compile(_default_spec(), "default rules", check_each=False)


def load_rules(path: Path | str | None) -> RuleSet:
    """The rule set at ``path``, or the shipped defaults when ``path`` is None."""
    if path is None:
        return default_rules()
    file = Path(path)
    if not file.is_file():
        raise RulesError(f"rules file not found: {file}")
    return parse_rules(file.read_text(encoding="utf-8"), str(file))
