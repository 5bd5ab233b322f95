"""Hard-event rules as data: loading, defaults, changes, and `channel-memory rules test`."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from channel_memory.worker.rules import (
    VIEW_CLAUSES_KEPT,
    VIEW_MAX_CHARS,
    VIEWS_KEPT,
    Pattern,
    RulesError,
    RuleSet,
    _alternation,
    default_rules,
    load_rules,
    parse_rules,
)
from tests.conftest import LiveServer, ingest_ok, message_event, query

OPS_RULES = """
[[rule]]
name = "incident"
event_type = "incident_declared"
score = 1.0
patterns = ['(?i)\\bdeclar(e|ed|ing)\\b.*\\b(incident|sev ?[0-9])\\b']

[[rule]]
name = "rollback"
event_type = "rollback_decision"
patterns = ['(?i)\\broll(ing|ed)? ?back\\b']
unless = ['(?i)\\bno rollback\\b']
authors = ["u-oncall"]
"""


@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        ("[PROPOSED] buy 100 AAPL at 180", "trade_proposal"),
        ("Approved: the NVDA entry, size 200", "trade_approval"),
        ("Order confirmed, ticket 4411", "trade_confirmation"),
        ("FILLED 200 NVDA @ 131.20", "trade_fill"),
        ("stop moved to 408", "stop_or_target_change"),
        ("Stop remains 610 until invalidation changes.", "stop_or_target_change"),
        ("raising target to 140", "stop_or_target_change"),
        ("trail stop to breakeven", "stop_or_target_change"),
        ("routing the NVDA order to desk B", "route_decision"),
        ("route: algo, VWAP until close", "route_decision"),
        ("no route for this one", "route_decision"),
        ("risk limit breached on NQ, cutting", "risk_limit"),
        ("raising the loss limit to 50k for today", "risk_limit"),
        ("opened 100 AAPL", "position_change"),
        ("flattened everything", "position_change"),
        ("trimmed half of NVDA", "position_change"),
        ("Thesis invalidated: rates broke out", "thesis_change"),
        # a change of where a flow goes is a routing decision
        ("Moving my GBP and SEK flow to Citi Velocity for the rest of the day", "route_decision"),
        ("switching all our EUR orders over to LMAX", "route_decision"),
        # a limit record changing levels with units is a change, whatever else stays unchanged
        (
            "[LIMIT] profile=OVERNIGHT applied | FX net open 150m → 80m | "
            "crypto gross 25m (unchanged) | futures DV01 120k → 90k",
            "risk_limit",
        ),
        ("crypto gross 25m (unchanged), FX net open unchanged at 80m", None),
        # a machine record is typed by its header, key=value fields straight after it or not
        ("FILL ord=FX-88310 | USDMXN | SELL 5,000,000 | px=18.93 | stop cancelled", "trade_fill"),
        ("CXL ACK ord=FX-88301 | EURPLN BUY 6,000,000 LMT 4.2580", "trade_confirmation"),
        ("TRADE CONFIRM | LP=RBC | USDCAD | we SELL 20,000,000 @ 1.38144", "trade_confirmation"),
        ("FILL T-558412 CBP SOL-USD SELL 25,000 avg 177.41 TWAP (final)", "trade_fill"),
        # restatements that nothing changed, in a desk's other languages; watchers and alerts
        ("El stop sigue en 18,71, no lo muevo por 400 pips.", None),
        ("Der Stopp bleibt bei 68,60.", None),
        ("Le stop reste à 1,0850.", None),
        ("stop subido a 18,90, sigue en marcha", "stop_or_target_change"),
        ("[cronwatch] ANOMALY strategy=twap-eq-3 child_msg_rate=41/s baseline=3/s", None),
        ("LIQ ALERT | BTC 88,940 -> 88,120 in 9m | long liqs 96m USD", None),
        ("RISK ALERT | desk VaR limit breached 4.3m / 4.2m", "risk_limit"),
        ("Alert: sold 5k AAPL at 189.40", "trade_fill"),
        ("Risk alert: flattened the book, we are out of everything", "position_change"),
        ("Ich habe 5k SAP verkauft, den Rest lasse ich laufen.", "trade_fill"),
        ("Le stop reste à 1,0850 et j'ai vendu la moitié à 1,0870.", "stop_or_target_change"),
        # a record's header needs its fields: a word before "=" or an id is not one
        ("fill rate=92% on the algo yesterday, decent", None),
        ("Trade FY2025 review is on Thursday in room 4", None),
        ("Execution q1234 was slow, can someone look", None),
        ("I'm no longer interested in the conference on Friday", None),
        ("Market review: Position: flat. Risk view: balanced.", None),
        ("the market closed higher today", None),
        ("can you check the stop?", None),
        ("risk is elevated into CPI", None),
        ("thesis still intact, nothing to do", None),
    ],
)
def test_default_rules_match_decisions_not_mentions(text: str, event_type: str | None) -> None:
    rule = default_rules().first_match(text)
    assert (rule.event_type if rule else None) == event_type


def test_custom_rules_for_another_domain(tmp_path: Path) -> None:
    path = tmp_path / "ops.toml"
    path.write_text(OPS_RULES)
    rules = load_rules(path)
    assert rules.first_match("Declaring a SEV1 incident for checkout")
    assert rules.first_match("rolling back 4.2", author_id="u-oncall")
    assert rules.first_match("rolling back 4.2", author_id="u-someone") is None
    assert rules.first_match("no rollback needed, rolling forward", author_id="u-oncall") is None
    assert rules.first_match("stop moved to 408") is None
    tagged = parse_rules('[[rule]]\nname="t"\nevent_type="t"\ntags=["deploy"]\n', "inline")
    assert tagged.first_match("anything", tags=["deploy"])


_DASH_RULES = """
[[rule]]
name = "rollback"
event_type = "rollback_decision"
reasons_after_dash = %s
patterns = ['^rolling back \\w+(?![^\\n]*pointless)']

[[rule]]
name = "freeze"
event_type = "freeze"
patterns = ['^freezing \\w+']

[[ignore]]
name = "hedge"
after_dash = false
patterns = ['\\bmaybe\\b']

[[ignore]]
name = "condition"
patterns = ['\\bif\\b']
"""


@pytest.mark.parametrize(
    ("text", "read", "unread"),
    [
        # a hedge in the reasons after a spaced dash: the rule that reads so matches
        (
            "rolling back checkout — the canary is 5% worse on p99 and maybe more",
            "rollback_decision",
            None,
        ),
        ("rolling back checkout -- the canary is 5% worse, maybe more", "rollback_decision", None),
        # …not a hedge that opens the reasons
        ("rolling back checkout — maybe, the canary is worse", None, None),
        # …after any dash, nor a condition anywhere after it, nor the writer's own hedge
        ("rolling back checkout — the canary is 5% worse — maybe later", None, None),
        (
            "rolling back checkout — the canary is 5% worse on p99, and if it holds we stop",
            None,
            None,
        ),
        ("rolling back checkout — the canary is 5% worse, maybe more, we usually wait", None, None),
        # the pattern that matches the head must match the whole clause too
        ("rolling back checkout — the canary is maybe worse, pointless though", None, None),
        # a rule that does not read so is held as before
        ("freezing checkout — the canary is maybe 5% worse", None, None),
        # a hedge before the dash, a guard that holds reasons after it, no dash at all
        ("rolling back checkout maybe — the canary is worse", None, None),
        ("rolling back checkout — if the canary is worse", None, None),
        ("rolling back checkout, the canary is maybe worse", None, None),
    ],
)
def test_a_rule_reads_its_reasons_after_a_dash_apart_when_it_says_so(
    text: str, read: str | None, unread: str | None
) -> None:
    reading = parse_rules(_DASH_RULES % "true", "inline").first_match(text)
    assert (reading.event_type if reading else None) == read
    plain = parse_rules(_DASH_RULES % "false", "inline").first_match(text)
    assert (plain.event_type if plain else None) == unread


@pytest.mark.parametrize(
    ("text", "held"),
    [
        ("rolling back checkout — the canary is 5% worse on p99 and maybe more", []),
        ("rolling back checkout maybe — the canary is worse", [("rollback", "hedge")]),
        (
            "rolling back checkout — the canary is 5% worse on p99, and if it holds we stop",
            [("rollback", "condition")],
        ),
        (
            "rolling back checkout — the canary is 5% worse, maybe more, we usually wait",
            [("rollback", "own_hedge")],
        ),
    ],
)
def test_rules_test_names_what_holds_a_rule_that_reads_its_reasons_apart(
    text: str, held: list[tuple[str, str]]
) -> None:
    rules = parse_rules(_DASH_RULES % "true", "inline")
    assert rules.held_back(text, {"rollback"}) == held
    assert bool(rules.first_match(text)) == (not held)


def test_rules_test_names_the_guard_that_holds_a_new_rule_back(
    make_server: Callable[..., LiveServer], tmp_path: Path
) -> None:
    # a new user's trial: a rule of an extending file that a shipped guard voided (a
    # question, a condition) showed as nothing gained, with no reason
    server = make_server(worker={"enabled": False})
    with server.client() as client:
        ingest_ok(
            client,
            message_event("1", "noted, energy adds parked"),
            message_event("2", "energy adds parked until the print?"),
            message_event("3", "if CPI is hot, energy adds parked"),
            message_event("4", "lunch?"),
            message_event("5", "OMS | STOP AMEND | CLZ5 SELL 160 STP 71.90 (was 71.40)"),
        )
    server.__exit__()
    rules = tmp_path / "desk.toml"
    # and a rule for a message a shipped rule reads first (a new user's trial: an OMS stop
    # amendment typed a proposal, and a rule of one's own to type it changed nothing)
    rules.write_text(
        EXTENDING
        + '\n[[rule]]\nname = "oms_stop_amend"\nevent_type = "stop_or_target_change"\n'
        + "patterns = ['\\bSTOP AMEND\\b']\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "channel_memory", "rules", "test", str(rules),
         "--db", str(server.settings.db)],
        capture_output=True, text=True, timeout=120, env={**os.environ}, check=True,
    )  # fmt: skip
    out = result.stdout
    assert "would start matching: 1\n  + floor/1 risk_limit (rule energy_adds_banned)" in out
    assert (
        "taken by another rule first: 1\n  ~ floor/5 rule oms_stop_amend (taken by "
        "trade_proposal (rule trade_spec)): OMS | STOP AMEND" in out
    )
    assert out.endswith(
        "held back by a guard (the clause reads as ordinary): 2\n"
        "  ! floor/2 rule energy_adds_banned (guard question): energy adds parked until the "
        "print?\n"
        "  ! floor/3 rule energy_adds_banned (guard conditional): if CPI is hot, energy adds "
        "parked\n"
    )
    # the shipped rules against themselves hold nothing back of their own
    bare = subprocess.run(
        [sys.executable, "-m", "channel_memory", "rules", "test", "--db", str(server.settings.db)],
        capture_output=True, text=True, timeout=120, env={**os.environ}, check=True,
    )  # fmt: skip
    assert "held back" not in bare.stdout


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[[rule]]\nname = 'x'\nevent_type = 'x'\npatterns = ['(unclosed']\n", "rule.0.patterns"),
        # invalid alone, though its combination with the next would compile: refused
        ("[[rule]]\nname='x'\nevent_type='x'\npatterns=['a)|(b', 'c']\n", "rule.0.patterns.0"),
        # each valid alone, but one group name twice: they cannot be searched together
        (
            "[[rule]]\nname='x'\nevent_type='x'\npatterns=['(?P<n>a)', '(?P<n>b)']\n",
            "rule.0.patterns: the patterns do not combine",
        ),
        ("[[rule]]\nname = 'x'\nevent_type = 'Bad Type'\n", "rule.0.event_type"),
        ("[[rule]]\nname = 'x'\nevent_type = 'x'\ncolour = 'red'\n", "rule.0.colour"),
        ("[[rule]\n", "not valid TOML"),
    ],
)
def test_invalid_rules_are_clear_errors(text: str, where: str) -> None:
    with pytest.raises(RulesError, match=r"rules\.toml") as error:
        parse_rules(text, "rules.toml")
    assert where in str(error.value)


def _every_pattern(rules: RuleSet) -> list[Pattern]:
    return [
        *(p for r in rules.rules for p in (*r.patterns, *r.scans, *r.unless, *r.together)),
        *(p for g in rules.guards for p in (*g.patterns, *g.unless)),
        *(
            p
            for r in rules.replies
            for p in (*r.patterns, *r.anywhere, *r.unless, *r.parent_patterns)
        ),
    ]


def test_every_shipped_pattern_compiles_alone_and_combined() -> None:
    """The shipped rules compile a pattern only when a message is first searched with it
    (a command that reads no message compiles none): here every one is compiled, each
    rule's patterns alone and combined, its guards, exceptions and reply rules."""
    fresh = parse_rules(
        resources.files("channel_memory.worker").joinpath("default_rules.toml").read_text(),
        "again",
        check_each=False,
    )
    assert not any(p._regex is not None for p in _every_pattern(fresh))
    patterns = _every_pattern(default_rules())
    assert all(p.regex.pattern == p.body for p in patterns)
    assert sum(len(r.patterns) for r in default_rules().rules) > 100 and len(patterns) > 500


def test_a_file_checked_each_compiles_every_pattern_at_once() -> None:
    rules = parse_rules(
        "[[rule]]\nname = 'x'\nevent_type = 'x'\npatterns = ['abc', '(?i)^de']\n"
        "unless = ['f']\n[[ignore]]\nname = 'g'\npatterns = ['h']\n",
        "desk.toml",
    )
    assert all(p._regex is not None for p in _every_pattern(rules))
    with pytest.raises(RulesError, match=r"desk\.toml: ignore\.0\.patterns\.0: invalid"):
        parse_rules("[[ignore]]\nname = 'g'\npatterns = ['(h']\n", "desk.toml")


# a word's start as the shipped rules write it, a line's start, lookbehinds read with and
# without case, parts without either, and syntax the scan must leave alone (a review with
# fresh eyes found each of the last ones moving a match: a case-sensitive lookbehind taken out
# of its part's ``(?i:``, a quantified assertion, a class starting with ``]``, a comment, a
# group referred to by its number)
_PARTS = [
    ("(?:", r"(?:(?:(?<!\w)|(?<=_)))ab"),
    ("(?:", r"(?:(?:(?<!\w)|(?<=_)))b[a ]"),
    ("(?i:", r"(?:(?:(?<!\w)|(?<=_)))ba"),
    ("(?:", r"(?:(?<!\w)|(?<=_))a_|b"),
    ("(?:", r"^a\s"),
    ("(?:", r"^(?:b|_)a"),
    ("(?i:", r"^xb"),
    ("(?:", r"^a|_b"),
    ("(?i:", r"(?<![a-z])x"),
    ("(?i:", r"(?<![a-z])b"),
    ("(?:", r"(?<=a)b"),
    ("(?:", r"(?=a)?b"),
    ("(?:", r"[(^]a"),
    ("(?:", r"^a[](]|[])]"),
    ("(?:", r"^a(?#[)|b(?#])"),
    ("(?:", r"(a)\1"),
]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(_PARTS), min_size=1, max_size=6),
    st.text(alphabet="aAbBxX_ ()[]^\n", max_size=12),
)
def test_a_combination_matches_where_its_parts_joined_do(
    parts: list[tuple[str, str]], text: str
) -> None:
    """Parts that start with the same assertion are combined under it once: a search finds
    a match exactly where the parts joined in order do."""
    plain = re.compile("|".join(f"{opening}{body})" for opening, body in parts), re.MULTILINE)
    combined = re.compile(_alternation(parts), re.MULTILINE)
    want, got = plain.search(text), combined.search(text)
    assert (got.start() if got else None) == (want.start() if want else None)


def test_a_combined_rule_reads_capitals_as_its_patterns_do() -> None:
    # a review: the shared lookbehinds of a stop pattern written under (?i) were taken out
    # of it, and "HE'S STOP ON …" became a stop change where "he's stop on …" is none
    rules = default_rules()
    for text in ("he's stop on 5k AAPL: 231", "HE'S STOP ON 5k AAPL: 231"):
        assert rules.first_match(text) is None, text


def test_parts_starting_alike_share_their_assertion() -> None:
    source = _alternation(_PARTS[:11])
    word = r"(?:(?:(?<!\w)|(?<=_)))"
    assert source.startswith(f"(?:{word}(?:ab|b[a ]))|(?i:{word}(?:ba))|")
    assert r"|(?:^(?:a\s|(?:b|_)a))|(?i:^(?:xb))|" in source
    assert r"|(?i:(?<![a-z])(?:x|b))|(?:(?<=a)(?:b))" in source
    # syntax the scan does not read leaves every part as it is, in order
    for unread in _PARTS[13:]:
        plain = "|".join(f"{o}{b})" for o, b in (unread, _PARTS[0], _PARTS[1]))
        assert _alternation([unread, _PARTS[0], _PARTS[1]]) == plain
    # a quantified assertion is no leading assertion
    assert _alternation([("(?:", r"(?=a)?b"), ("(?:", r"(?=a)c")]) == "(?:(?=a)?b)|(?:(?=a)(?:c))"


def test_changing_the_rules_rederives_every_block(
    make_server: Callable[..., LiveServer], tmp_path: Path
) -> None:
    server = make_server(worker={"enabled": False})
    with server.client() as client:
        client.post(
            "/v1/ingest",
            json={
                "events": [
                    message_event(
                        "1",
                        "Declaring a SEV1 incident for checkout",
                        created_at="2026-05-21T16:00:00Z",
                    ),
                    message_event("2", "stop moved to 408", created_at="2026-05-21T16:01:00Z"),
                ]
            },
        )
        server.drain()
    kinds = (
        "SELECT s.message_id, b.kind FROM recall_blocks b "
        "JOIN block_sources s ON s.block_seq = b.seq ORDER BY 1"
    )
    assert query(server.settings.db, kinds) == [("1", "raw_excerpt"), ("2", "hard_event")]
    server.__exit__()
    rules = tmp_path / "ops.toml"
    rules.write_text(OPS_RULES)
    again = make_server(worker={"enabled": False, "rules_file": str(rules)})
    again.run(again.app.state.worker.prepare())
    assert query(again.settings.db, "SELECT count(*) FROM recall_blocks WHERE dirty = 0") == [(0,)]
    again.drain()
    assert query(again.settings.db, kinds) == [("1", "hard_event"), ("2", "raw_excerpt")]


def test_rules_test_command_shows_what_would_change(
    make_server: Callable[..., LiveServer], tmp_path: Path
) -> None:
    server = make_server(worker={"enabled": False})
    with server.client() as client:
        client.post(
            "/v1/ingest",
            json={
                "events": [
                    message_event("1", "Declaring a SEV1 incident for checkout"),
                    message_event("2", "stop moved to 408"),
                    message_event("3", "lunch?"),
                ]
            },
        )
    server.__exit__()
    rules = tmp_path / "ops.toml"
    rules.write_text(OPS_RULES)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "channel_memory",
            "rules",
            "test",
            str(rules),
            "--db",
            str(server.settings.db),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
        check=True,
    )
    out = result.stdout
    assert "messages scanned: 3" in out
    assert "would match: incident_declared 1" in out
    assert (
        "would start matching: 1\n  + floor/1 incident_declared (rule incident): Declaring a SEV1"
        in out
    )
    assert (
        "would stop matching: 1\n  - floor/2 stop_or_target_change (rule stop_or_target): stop "
        "moved to 408" in out
    )


EXTENDING = """
extends = "default"

[define]
heartbeat = 'heartbeat|latency'

[[ignore]]
name = "oms_heartbeat"
patterns = ['\\b(?:{heartbeat})\\b']

[[rule]]
name = "energy_adds_banned"
event_type = "risk_limit"
score = 0.9
patterns = ['\\benergy adds parked\\b']
"""


def test_a_file_that_extends_the_shipped_rules_adds_to_them(tmp_path: Path) -> None:
    # a new user's trial: to add one guard the only way was a copy of the whole shipped file
    path = tmp_path / "desk.toml"
    path.write_text(EXTENDING)
    rules, shipped = load_rules(path), default_rules()
    assert len(rules.rules) == len(shipped.rules) + 1
    assert len(rules.guards) == len(shipped.guards) + 1
    assert len(rules.replies) == len(shipped.replies) and rules.model is not None
    assert rules.fingerprint != shipped.fingerprint
    typed = rules.decide("noted, energy adds parked")
    assert typed is not None and typed.event_type == "risk_limit"
    assert shipped.decide("noted, energy adds parked") is None
    # the shipped rules still read what they read; the new guard vetoes its own clause
    for text in ("sold 5k AAPL 189.40", "stop moved to 408 on NVDA"):
        mine, theirs = rules.decide(text), shipped.decide(text)
        assert mine is not None and theirs is not None and mine.event_type == theirs.event_type
    assert rules.decide("latency heartbeat: order working BUY 5k AAPL @ 189.40") is None
    # the shipped file's own fingerprint is what it was without the field
    assert (
        shipped.fingerprint
        == parse_rules(
            resources.files("channel_memory.worker").joinpath("default_rules.toml").read_text(),
            "again",
            check_each=False,
        ).fingerprint
    )


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('extends = "default"\nignore_case = false\n', "x.toml: ignore_case"),
        ('extends = "default"\n[define]\ninst = "x"\n', "x.toml: define.inst"),
        ('extends = "other"\n', "x.toml: extends"),
        (
            'extends = "default"\n[[rule]]\nname = "trade_spec"\nevent_type = "x"\n'
            'patterns = ["abc"]\n',
            "x.toml: rule.0.name: the shipped rules have a rule named 'trade_spec'",
        ),
        (
            'extends = "default"\n[[ignore]]\nname = "question"\npatterns = ["abc"]\n',
            "x.toml: ignore.0.name",
        ),
        (
            'extends = "default"\n[[rule]]\nname = "r"\nevent_type = "x"\npatterns = ["(a"]\n',
            "x.toml: rule.0.patterns",
        ),
    ],
)
def test_an_extending_files_errors_name_its_own_place(text: str, where: str) -> None:
    with pytest.raises(RulesError) as caught:
        parse_rules(text, "x.toml")
    assert str(caught.value).startswith(where), str(caught.value)


RULE_SOURCES = {
    r["name"]: r.get("patterns", []) + r.get("all", [])
    for r in tomllib.loads(
        resources.files("channel_memory.worker").joinpath("default_rules.toml").read_text()
    )["rule"]
}

VOCABULARY = [
    "stop", "moved", "to", "408", "target", "raising", "trail", "breakeven", "routing", "route:",
    "no", "route", "desk", "B", "filled", "FILLED", "200", "NVDA", "bought", "sold", "executed",
    "opened", "closed", "added", "trimmed", "flattened", "now", "long", "short", "flat",
    "risk", "limit", "breached", "raised", "thesis", "invalidated", "changed", "proposal:",
    "[PROPOSED]", "approved", "order", "confirmed", "the", "position", "Position:", "at", ".",
    "SL_UPDATE", "status=FILLED", "qty=5000", "side=BUY", "ord=FX-88213", "signal-1182", "->",
    "desk", "GS", "VWAP", "via", "Stopp", "nachgezogen", "ordre", "confirmé", "5k", "1.5mm",
    "450C", "7203.T", "SAP", "GY", "EURUSD", "eur/usd", "ESM4", "gekauft", "vendidos", "rejected",
    "no", "new", "risk", "reduce-only", "view", "bearish", "tp1", "hit", "out", "of", "?", "if",
]  # fmt: skip


@settings(deadline=None)
@given(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=12), st.booleans())
def test_default_gates_never_hide_a_match(words: list[str], newline: bool) -> None:
    """A rule whose shape matches a clause always has its gate open on the message."""
    rules = default_rules()
    text = ("\n" if newline else " ").join(words)
    view = rules.view(text)
    for rule in rules.rules:
        if any(rule.clause_matches(c.text, c.lowered) for c in view.clauses):
            assert view.opens(rule), (rule.name, text)


def test_all_matches_the_shape_in_any_order_within_a_clause() -> None:
    rules = parse_rules(
        """
ignore_case = true
[define]
verb = 'roll(?:ed|ing)? ?back|revert\\w{0,3}|zurückgesetzt'
service = 'checkout|payments|search'
[[rule]]
name = "rollback"
event_type = "rollback_decision"
gate = ["{verb}", "rb*"]
all = ['\\b(?:{verb})\\b', '\\b(?:{service})\\b']
patterns = ['\\brb-\\d{1,4}\\b']
[[ignore]]
name = "question"
patterns = ['\\?$']
""",
        "ops.toml",
    )
    rule = rules.rules[0]
    assert rule.gate_stems == {"roll", "revert", "rb"}
    assert rule.gate_words == {"zurückgesetzt"}
    for text in [
        "rolled back checkout",
        "checkout: rolled back",
        "Payments wurde zurückgesetzt",
        "SERVICE=search ACTION=REVERTED",
        "rb-12",
    ]:
        assert rules.first_match(text) is not None, text
    for text in [
        "checkout is slow. we rolled back the flag",  # the two parts in different clauses
        "rolled back checkout?",
        "payments look fine",
    ]:
        assert rules.first_match(text) is None, text
    assert rules.decision_lines("intro\nsearch reverted\nrolled back?") == [False, True, False]


def test_a_phrase_opens_its_gate_by_its_longest_word() -> None:
    # every match of "i don sell" holds "sell": a gate on "i" would open on every English line
    rules = parse_rules(
        """
ignore_case = true
[define]
verb = 'i don sell|go ahead|ok(?:ed)?'
[[rule]]
name = "p"
event_type = "p"
gate = ["{verb}"]
patterns = ['\\b(?:{verb})\\b']
""",
        "p.toml",
    )
    rule = rules.rules[0]
    assert rule.gate_words == {"sell", "ahead"}
    assert rule.gate_stems == {"ok"}
    for text in ["I don sell 5k MTN", "go ahead", "OKed"]:
        assert rules.first_match(text) is not None, text
    assert not rules.view("I go to the shop, I don know").opens(rule)


@pytest.mark.parametrize(
    ("gate", "where"),
    [
        ('["{nope}"]', "undefined name {nope}"),
        ('["two words"]', "not a word"),
        ('["{x}"]', "does not start with a word"),
    ],
)
def test_gate_errors_name_the_place(gate: str, where: str) -> None:
    text = f"[define]\nx = '(?:a|b)c'\n[[rule]]\nname='r'\nevent_type='r'\ngate={gate}\n"
    with pytest.raises(RulesError, match=r"rules\.toml: rule\.0\.gate") as error:
        parse_rules(text, "rules.toml")
    assert where in str(error.value)


# the first example compiles every case-insensitive source: no per-example deadline
@settings(deadline=None)
@given(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=12))
def test_lowered_patterns_match_exactly_as_case_insensitive_ones(words: list[str]) -> None:
    text = " ".join(words)
    for rule in default_rules().rules:
        assert len(rule.patterns) + len(rule.together) == len(RULE_SOURCES[rule.name])
        for pattern in rule.patterns + rule.together:
            # pattern.source: the pattern as written, its {names} expanded
            assert pattern.search(text, text.lower()) == bool(re.search(pattern.source, text, re.M))


# --- a rule set reads a text once (its views are kept) -------------------------------------

READERS: dict[str, Callable[[RuleSet, str], object]] = {
    "first_match": lambda r, t: getattr(r.first_match(t), "name", None),
    "decide": lambda r, t: getattr(r.decide(t), "event_type", None),
    "decision_spans": RuleSet.decision_spans,
    "decision_lines": RuleSet.decision_lines,
    "strength": RuleSet.strength,
    "clauses": lambda r, t: [(c.text, c.line) for c in r.clauses(t)],
}


@settings(deadline=None, max_examples=60)
@given(
    st.lists(
        st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=10).map(" ".join),
        min_size=1,
        max_size=4,
    ),
    st.permutations(sorted(READERS)),
)
def test_a_kept_view_reads_a_text_as_a_fresh_one(texts: list[str], order: list[str]) -> None:
    """Texts read in any order, each by every reader, through the views the rule set
    keeps, read as each reader alone reads each text on a rule set whose views are empty
    (the model, shared, keeps its own readings: tested in ``test_model.py``)."""
    shipped = default_rules()
    warm = dataclasses.replace(shipped)  # a cache of its own, empty
    seen = {(name, text): READERS[name](warm, text) for text in texts for name in order}
    for (name, text), got in seen.items():
        assert got == READERS[name](dataclasses.replace(shipped), text), (name, text)


def test_a_rule_set_keeps_the_views_of_the_texts_it_read_last() -> None:
    rules = parse_rules(OPS_RULES, "ops")
    text = "declared a sev1 incident"
    first = rules.view(text)
    assert rules.view(text) is first
    for n in range(VIEWS_KEPT):
        rules.view(f"line {n}")
    assert rules.view(text) is not first  # bounded: the oldest went
    long = "x " * VIEW_MAX_CHARS
    assert rules.view(long) is not rules.view(long)  # a long text is never kept
    # bounded by clauses too: a pasted log of short lines has thousands
    size = VIEW_CLAUSES_KEPT * 3 // 7  # two such logs are kept together, not three
    logs = [f"{n}\n" + "a\n" * (size - 1) for n in range(3)]
    first = rules.view(logs[0])
    assert len(first.clauses) == size and len(logs[0]) <= VIEW_MAX_CHARS
    second = rules.view(logs[1])
    assert rules.view(logs[0]) is first  # two kept, the first now read last
    rules.view(logs[2])
    assert rules.view(logs[1]) is not second  # the third pushed out the least recent


def test_a_rule_set_made_from_another_keeps_views_of_its_own() -> None:
    guarded = parse_rules(OPS_RULES + "\n[[ignore]]\nname = 'question'\npatterns = ['\\?$']\n", "q")
    text = "declared a sev1 incident?"
    assert guarded.first_match(text) is None  # the guard makes the question ordinary
    unguarded = dataclasses.replace(guarded, guards=())
    matched = unguarded.first_match(text)
    assert matched is not None and matched.name == "incident"
    assert guarded.first_match(text) is None
