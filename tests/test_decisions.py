"""Hard-event detection by the shape of a decision: recall on tune, dev and held-out lines,
another desk's phrasing, shapes, guards, replies."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.decisions import evaluate, load
from channel_memory.demo.synthetic_desk import desk_events
from channel_memory.kernel.models import SourceVersion
from channel_memory.worker.classify import classify
from channel_memory.worker.rules import RulesError, default_rules, parse_rules
from tests.conftest import LiveServer, message_event, rules_test_output, source_version

RULES = default_rules()

# The rules are developed on tune.jsonl and dev.jsonl (bench/decisions.py --split dev
# --show-misses), and the decision model that backs them is trained on them
# (bench/train_model.py). heldout.jsonl is written apart and never read while writing rules
# or training. Each held-out set is measured on the final detector and then joins dev: the
# first (ids f…) measured 232/279 (83.2%) with the rules of its day; the second (ids g…)
# 227/283 (80.2%), negatives kept 23/170 (13.5%). The third (ids k…, by a fifth hand),
# measured on the rules with the model: recall 256/262 (97.7%), negatives kept 36/149
# (24.2%); the rules alone: 216/262 (82.4%), 23/149. The floors keep that from regressing.
HELDOUT_RECALL_FLOOR = 0.97
HELDOUT_NEGATIVES_KEPT_CEILING = 0.26
# japanese.jsonl (ids j…, 160 decisions and 80 look-alikes in Japanese, by a sixth hand,
# written in the fifteenth round) is measurement only, like heldout.jsonl: measured once on
# the rules with the model, recall 96/160 (60.0%), negatives kept 9/80 (11.2%). In the
# sixteenth round Japanese rules were written against japanese_dev.jsonl (ids y…) and then
# japanese_dev2.jsonl (ids z…, by an eighth hand; measured once before it was read: recall
# 91/159 → 125/159, negatives kept 9/78 → 10/78); japanese.jsonl measured once on the
# rules: recall 135/160 (84.4%), negatives kept 7/80 (8.8%); once more after a review's
# fixes (look-alikes in other senses, advice and regret, reply parents; the model trained
# again): 132/160 (82.5%), 7/80; in the seventeenth round, after three phrasings a new
# user's Tokyo desk had missed (a limit set "までとします", new shorts stopped, a view
# changed in the intransitive), 133/160 (83.1%), 7/80; in the eighteenth round, with the
# desk reading learning the Chinese, Japanese and Korean development sets and the model's
# vocabulary holding their words (ADR 0042), 132/160 (82.5%), 5/80 (the decision model
# learning them too: 148/160, 11/80, with look-alikes in five languages promoted); in the
# nineteenth round, with text holding runs read by a decision classifier of its own that
# learnt eight development sets in those languages, promoting on their pieces at 0.8 (ADR
# 0043), 156/160 (97.5%), 5/80 (at 0.45, the first form: 157/160, 15/80). The floors keep
# that.
JAPANESE_RECALL_FLOOR = 156 / 160
JAPANESE_NEGATIVES_KEPT_CEILING = 5 / 80
# the Japanese, Chinese and Korean development splits, read while writing the rules
JAPANESE_DEVELOPMENT_RECALL_FLOOR = 0.97
JAPANESE_DEVELOPMENT_NEGATIVES_KEPT_CEILING = 0.10
# tune + dev with the model (trained on them): recall 858/859, negatives kept 42/525
DEVELOPMENT_RECALL_FLOOR = 0.98
DEVELOPMENT_TYPE_FLOOR = 0.93
DEVELOPMENT_NEGATIVES_KEPT_CEILING = 0.10


def _type(text: str, parent: str | None = None) -> str | None:
    decision = RULES.decide(text, parent=parent)
    return decision.event_type if decision else None


RULES_ONLY = dataclasses.replace(RULES, model=None)
"""The shipped rules without the decision model that backs them."""


def _rule_type(text: str, parent: str | None = None) -> str | None:
    decision = RULES_ONLY.decide(text, parent=parent)
    return decision.event_type if decision else None


def _rules_read(text: str, parent: str | None) -> str | None:
    """The type the rules alone give a message: by itself, else as a reply to ``parent``."""
    return _rule_type(text) or (_rule_type(text, parent) if parent else None)


# Decisions written for these tests in the styles of a real floor (not taken from the
# evaluation set): every one must be recognised, with its type.
DECISIONS = {
    "position_change": [
        "We're out of the USDJPY position.",
        "flat ES",
        "out of the USDJPY",
        "took profits on half",
        "closed 2 ES at 5120",
        "added 500 AAPL on the dip",
        "trimmed the NQ long by a third",
        "Reversed: now long 3 CL.",
        "covered half the TSLA short at 171.50",
        "The remaining GBPJPY long was flattened at 198.20.",
        "cut the whole crypto book",
        "SOL position halved",
        "opened a starter in 7203.T, 10k",
        "squared up cable",
        "POSITION_UPDATE sym=AAPL qty=0 action=CLOSE",
        "🔻 out of BTC, all of it",
        "Wir haben die SAP-Position glattgestellt.",
        "Hemos cerrado la posición en ITX.",
        "Position sur AIR FP allégée de moitié.",
        "scaled out of 40% of the ETH",
        "bought back the short puts",
    ],
    "trade_fill": [
        "lifted 5k AAPL 189.40",
        "bought 10 SPY 450C",
        "sold 3 lots FGBL 131.42",
        "filled 2.5mm EURUSD @ 1.0871",
        "Paid 3.10 for 20 QQQ 450C",
        "got lifted on 1,000,000 USDCAD 1.3612",
        "done 15k SAP GY 178.30",
        "[EXEC] FILL side=SELL sym=ESM4 qty=5 px=5121.25",
        "exec_type=FILL symbol=NVDA qty=300 px=131.20",
        "ETH-USD 12 filled at 3,120.50",
        "Gekauft: 500 SIE GY zu 172,40.",
        "Vendidos 20.000 SAN a 4,51.",
        "Achetés 2 000 BNP FP à 61,20.",
    ],
    "trade_confirmation": [
        "cancelled the 5k AAPL buy order",
        "cxl/rep ord 4411: new px 98.10",
        "Kauforder über 500 SAP storniert.",
        "Orden de venta de 10k SAN colocada a 3,95.",
        "order confirmed by GS: sell 2 CL 78.10",
        "OMS: ord 55120 ACCEPTED, buy 200 NVDA lmt 130",
        "broker acked the AAPL ticket",
        "ticket booked, 5k SAP GY",
        "Order received and working at UBS: 1m EURCHF.",
        "CONFIRM ord#8812 SELL 50 BTC-USD",
        "Auftrag bestätigt: 300 SIE GY.",
        "Orden confirmada por el broker: 10k SAN.",
    ],
    "trade_approval": [
        "signal-1182 approved — route to exec",
        "Approved: long 2 NQ, half size",
        "rejected the TSLA idea, too correlated",
        "PR-2201 denied",
        "risk signed off on the ETH trade",
        "no-go on the 7203.T idea",
        "✅ approved SIGNAL-7 BUY 3 ES",
        "decision=REJECTED proposal_id=88",
        "Proposal 4471 has been approved by the desk head.",
        "Freigegeben: Kauf 200 SAP.",
        "Aprobado el trade en BBVA, tamaño completo.",
        "Refusé : la taille est trop grosse.",
    ],
    "trade_proposal": [
        "idea: long 2 ES 5118, stop 5102",
        "proposing a short in 2m USDJPY at 155.20",
        "pitch: buy 300 SOL @ 142, sl 131",
        "[PROPOSAL] SELL 10 ZN 110-16 stop 110-28",
        "suggest we buy 5k SAP GY at 178, stop 172",
        "Proposed trade: short GBPUSD 1.2710, stop 1.2760, target 1.2600.",
        "SIGNAL NEW side=BUY sym=ETH-USD qty=20 entry=3100 sl=2980 — awaiting approval",
        "Je propose d'acheter 100 AIR FP à 160, stop 154.",
        "Propongo vender 2 lotes de ES a 5120.",
    ],
    "stop_or_target_change": [
        "stop to BE",
        "stop to breakeven on the NQ long",
        "tp1 hit",
        "Stop has been moved to 1.0840.",
        "moved my stop up to 5110",
        "SL 150.70 -> 151.05",
        "target lowered to 2,300 on gold",
        "stops pulled on the crypto book",
        "trailing stop on CL now 78.40",
        "TP2 reached on SOL, 158",
        "Stopp auf 18.350 nachgezogen.",
        "Stop remonté au point mort sur TTE.",
        "Objetivo subido a 4,80 en SAN.",
    ],
    "route_decision": [
        "Send the USDJPY order to desk B, TWAP over 30m.",
        "route the AAPL order to the dark pool",
        "no route for the CL order today",
        "ROUTE ord=8812 dest=GS algo=VWAP",
        "work it via TWAP till close",
        "The NVDA order has been routed to MS for the closing auction.",
        "routing: algo=IS urgency=high",
        "Ordre envoyé au desk de Paris, VWAP.",
    ],
    "risk_limit": [
        "VaR limit breached, 2.3m vs 2.0m",
        "Flat USDJPY into NFP, no new risk until 14:00.",
        "gross cut to 80% of NAV",
        "desk on reduce-only until further notice",
        "entries blocked for the macro book",
        "single-name limit raised to 5% on AAPL",
        "Daily loss limit hit — no new risk today.",
        "RISK LIMIT_BREACH book=EM usage=117%",
        "Die Verlustgrenze wurde erreicht, Limit überschritten.",
        "Límite de VaR superado en la mesa de FX.",
    ],
    "thesis_change": [
        "thesis invalidated on the bund short",
        "The long-duration thesis is broken after the CPI print.",
        "view changed: bearish EURUSD now",
        "Our soft-landing case no longer holds.",
        "flipping to bearish on semis",
        "La thèse sur LVMH est invalidée.",
        "Die These zu Gold ist hinfällig.",
        # a view stated as now held, or a call withdrawn by its pronoun
        "I now think the yen grinds stronger into the BoJ",
        "We withdraw that call; base case is now a hold.",
        "We move Vestas from Overweight to Neutral",
        "ya no soy constructivo en el peso",
        "Je ne suis plus baissière sur le Bund.",
        "Ab sofort bin ich am langen Ende neutral.",
    ],
}

ORDINARY = [
    "I now see your email",
    "We are dropping that call, it conflicts with the offsite",
    "Action: long weekend, office closed Monday",
    "Action: close the JIRA ticket, Size: S",
    "https://jira.example/Dashboard.jspa?action=open&size=20",
    "RSI moves to neutral zone",
    "price went to neutral territory",
    "I now think we should grab lunch",
    "ES holding 5100, next level 5080",
    "should we move the stop?",
    "if it loses 410 I'd cut",
    "nothing changed, stop still 410",
    "no change to positions",
    "thinking about adding to gold next week",
    "can you stop by my desk?",
    "please fill out the form by Friday",
    "the speed limit on the A40 is 50",
    "target audience for the newsletter is PMs",
    "did the AAPL order fill?",
    "we might route through desk B if size grows",
    "Position: flat",
    "limits unchanged this month",
    "lunch order confirmed for 12:30",
    "what's our gross?",
    "cable squeezed to 1.2710 on retail sales",
    "gm",
    "Tape is two-way; breadth improved into the close.",
]


# Decisions and look-alikes of another desk (an Asia-hours commodities, rates and
# crypto market-making desk), written after the rules, never tuned on.
OTHER_DESK_DECISIONS = {
    "position_change": [
        "unwound the AUD/NZD cross, 3 yards gone",
        "rolled the Brent longs from Aug into Sep",
        "Lightened up on copper: 10 lots out",
        "we've liquidated the whole HG position",
        "cut risk in half on the JGB steepener",
        "Iron ore exposure reduced to 20k tonnes.",
        "out of the NKY futures, all of them",
        "bought back 25 of the 50 short CL",
        "Position Nikkei glattgestellt.",
        "On a soldé la position sur le cuivre.",
        "Salimos de toda la posición en oro.",
        "pos_update HSI qty 12 -> 6",
    ],
    "trade_fill": [
        "got done on 40 lots WTI at 77.85",
        "Executed: 500 ETH-PERP @ 3,244.5",
        "we sold 2 yards USDJPY at 156.02",
        "12 HG filled 4.4150",
        "bot: exec 3/3 NKM4 38,250 done",
        "paid up, 15 Brent at 82.40",
        "Alle 20 Kontrakte zu 38.250 verkauft.",
        "Vendidos 15 lotes de Brent a 82,40.",
        "Ordre exécuté : 30 lots de cuivre à 9 450.",
        '{"type":"trade","sym":"BTC-PERP","qty":4,"price":67010}',
    ],
    "trade_confirmation": [
        "Macquarie acked our 30 lot copper order",
        "ticket #5521 confirmed by Nomura",
        "order accepted at SGX, 20 NK lots",
        "ACK: ord=CL-9931 side=SELL qty=25",
        "the HSI order is live with the broker, 12 lots",
        "Auftrag 7781 von der Börse bestätigt.",
        "Orden aceptada por la bolsa: 20 lotes.",
    ],
    "trade_approval": [
        "CIO approved the copper long, 30 lots max",
        "risk rejected the JGB short — too much duration",
        "gold idea: approved",
        "signal-4410 greenlit, go 2 lots",
        "Freigabe erteilt für den Kupfer-Long.",
        "Idea del cobre rechazada, demasiado riesgo.",
        "Proposition sur le cuivre validée, taille pleine.",
        "approval_status=GRANTED ref=TP-9921",
    ],
    "trade_proposal": [
        "thinking long 30 HG 4.40, stop 4.32 — objections?",
        "Recommend selling 2 yards USDJPY at 156, stop 156.80.",
        "proposal: pay 10y JGB 1.05, 5m dv01, stop 1.12",
        "new idea for approval: long BTC 5 @ 67k, sl 64k",
        "SIGNAL id=7712 BUY HG qty=20 entry=4.41 stop=4.33 status=PENDING_APPROVAL",
        "Vorschlag: 10 Brent kaufen bei 82, Stopp 80.",
        "Propuesta de compra: 20 lotes de cobre a 4,40, stop 4,32.",
    ],
    "stop_or_target_change": [
        "brent stop lifted to 81.50",
        "TP on the copper long pushed out to 4.70",
        "stops on NK tightened to 38,100",
        "target cut to 66k on BTC",
        "Stop-loss on USDJPY is now 157.10.",
        "[RISK] TP_UPDATE sym=HGN4 new=4.65 old=4.60",
        "Ziel für Gold auf 2.450 angehoben.",
        "Objectif relevé à 9 600 sur le cuivre.",
    ],
    "route_decision": [
        "route the JGB futures via OSE DMA",
        "give the copper order to Macquarie, care order",
        "BTC block to the OTC desk, not the exchange",
        "send the brent ticket to ICE through Marex",
        "work the NK order TWAP into the close",
        "Die Kupfer-Order über Marex routen.",
        "Enviamos la orden de oro a la mesa de Londres.",
    ],
    "risk_limit": [
        "desk stop-out level lowered to -1.5m",
        "commodity VaR cap set at 4m from today",
        "Asia book on close-only after the drawdown",
        "max gross for crypto now 150%",
        "LIMIT_UPDATE book=ASIA var_limit=3.5m prev=4m",
        "Risikolimit für Rohstoffe auf 3 Mio gesenkt.",
        "Límite de pérdida diaria alcanzado, solo reducir.",
    ],
    "thesis_change": [
        "china stimulus thesis is toast, closing it",
        "we're no longer bullish copper after the PMI",
        "BoJ view changed: hike now priced for July",
        "the supply-squeeze story on iron ore is over",
        "Notre scénario haussier sur le cuivre est abandonné.",
        "El escenario de recortes queda descartado.",
    ],
}

OTHER_DESK_LOOK_ALIKES = [
    "copper bid 4.41 on the China headlines",
    "who has the brent stop level from yesterday?",
    "if NK breaks 38k we'd cut the long",
    "might roll the brent longs next week",
    "the bus stop outside is closed for works",
    "SGX margin call process is in the wiki",
    "BTC funding turned positive overnight",
    "JGB 10y at 1.05, highest since 2012",
    "nothing new on the copper book",
    "no fills overnight in Asia",
    "limit order book looks thin in HG",
    "anyone seen the Macquarie research on copper?",
    "could we route via SGX DMA in future?",
    "lunch order for the desk confirmed, dumplings at 12",
    "ETH perp basis 11% annualised",
    "Brent curve in steep backwardation",
    "my flight got cancelled, working from the hotel",
    "the printer on 4 is out of toner again",
    "copper rallied 3% on the stimulus headlines",
    "HSI closed at the highs",
    "Iron ore target audience for the note is clients",
    "still long copper, no change",
    "would you approve my leave for Friday?",
    "risk meeting moved to 4pm",
    "thinking of adding to gold at some point",
    "usdjpy 157 is the MoF line in the sand",
    "the new espresso machine got approved finally",
    "last week we cut the copper long too early",
    "Reminder: the VaR methodology paper is on the drive",
    "Ist die Kupfer-Order schon bestätigt?",
    "¿Quién tiene el informe de riesgo?",
    "On se voit au déjeuner ?",
    "gm asia",
    "rates vol picking up into the BoJ",
    "crude inventories due 10:30 NY",
    "fill out the training survey by Friday pls",
    "the server route to the backup DC failed over",
    "trading volumes thin into golden week",
    "our target for the charity run is 5k",
    "nice trade yesterday on the HSI",
    "ETH at 3,244 ahead of the ETF flows",
    "Stop asking me for the deck, it's in the drive",
]


@pytest.mark.parametrize(
    ("text", "event_type"), [(t, k) for k, texts in DECISIONS.items() for t in texts]
)
def test_decisions_are_recognised_by_their_shape(text: str, event_type: str) -> None:
    assert _type(text) == event_type


@pytest.mark.parametrize("text", ORDINARY)
def test_look_alikes_stay_ordinary(text: str) -> None:
    assert _type(text) is None


@pytest.mark.parametrize("text", [t for texts in OTHER_DESK_DECISIONS.values() for t in texts])
def test_another_desks_decisions_are_hard_events(text: str) -> None:
    assert _type(text) is not None


def test_another_desks_decisions_mostly_get_their_type() -> None:
    cases = [(t, k) for k, texts in OTHER_DESK_DECISIONS.items() for t in texts]
    assert len(cases) >= 60
    typed = sum(1 for t, k in cases if _type(t) == k)
    assert typed / len(cases) >= 0.95  # measured: 71/72


@pytest.mark.parametrize("text", OTHER_DESK_LOOK_ALIKES)
def test_another_desks_look_alikes_stay_ordinary_by_the_rules(text: str) -> None:
    assert _rule_type(text) is None


def test_the_model_keeps_few_of_another_desks_look_alikes() -> None:
    """The model prefers recall: a short line with an instrument and a level reads like a
    decision to it. Measured on the shipped model: 6 of these 42 look-alikes kept."""
    kept = [text for text in OTHER_DESK_LOOK_ALIKES if _type(text) is not None]
    assert len(OTHER_DESK_LOOK_ALIKES) >= 30
    assert len(kept) <= 7, kept
    # what the guards make ordinary (questions, conditionals, plans, "no change") the
    # model cannot promote
    for text in (
        "who has the brent stop level from yesterday?",
        "if NK breaks 38k we'd cut the long",
        "might roll the brent longs next week",
        "still long copper, no change",
    ):
        assert _type(text) is None, text


def test_a_guard_applies_to_its_own_clause() -> None:
    assert (
        _type("should we move the stop? Moved the stop to 410 anyway.") == "stop_or_target_change"
    )
    assert _type("What a day. Stop moved to 410.") == "stop_or_target_change"
    report = "\n".join(["Desk report"] + [f"context line {i}, no change" for i in range(20)])
    assert _type(report) is None
    assert _type(report + "\nDecision: flat USDJPY before NFP") == "position_change"


# A guard word in a decision's own clause ("still", "sits", "stop in", "holiday") does not
# make it ordinary when the clause also states the change; the guard still holds alone.
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        (
            "moving the ETH stop up to 3,180 — still leaves it room under Tuesday's low",
            "stop_or_target_change",
        ),
        (
            "[OMS][OCO] TP1 EXECUTED | ETH-USD SELL 4 @ 3,420.00 | tp2 3,500 still ACTIVE",
            "stop_or_target_change",
        ),
        ("VOD LN: stop in at 72.40, target 78.00 into results.", "stop_or_target_change"),
        ("stop zcz6 4.42 / tp1 4.61 / tp2 4.70, same as the card", "stop_or_target_change"),
        (
            "Rolled the CHF hedge: the March forward now sits in June. Notional unchanged.",
            "position_change",
        ),
        ("take the EM basket down by 15m now, use the program desk", "position_change"),
        ("bringing the gilt short down from 40 to 25 lots before the auction", "position_change"),
        ("stop on the gold long to BE 2,351, not carrying this into a holiday.", "any"),
        ("stop still at 1.0790, nothing moved", None),
        ("stop still at 128, not moving the stop", None),
        ("still debating moving the stop to BE", None),
        ("stop still at 1.0790, hasn't moved", None),
        ("the stop still sits at 1.0790 and tp1 1.0920 is untouched", None),
        ("can you stop in at my desk at 3?", None),
        # "last" before a price is how a position stands; before lots it is what is left
        ("Proposal: sell 40 ESZ5 — close the last 25 long and open 15 short.", "trade_proposal"),
        ("ESZ5 long 25 @ 6,712, last 6,730, stop 6,690", None),
        ("last 25 lots of the gilt short still on, stop 96.10 untouched", None),
        # a market's lunch is a time of day, not office chatter
        ("Going voice to Citi for the unwind, the screen is too thin at London lunch.", "any"),
        ("anyone up for the London lunch at the new place on Friday?", None),
        ("I'm on holiday next week, Sam covers the book", None),
        ("holiday cover rota is up, fill in your dates", None),
    ],
)
def test_guard_words_beside_a_change_keep_the_decision(text: str, event_type: str | None) -> None:
    found = _rule_type(text)
    assert found is not None if event_type == "any" else found == event_type
    assert (_type(text) is not None) == (event_type is not None)


PROPOSAL = "pitch: long 300 SOL @ 142, stop 131"


@pytest.mark.parametrize(
    ("reply", "parent", "event_type"),
    [
        ("yes", PROPOSAL, "trade_approval"),
        ("approved", PROPOSAL, "trade_approval"),
        ("go", "SIGNAL-2210 SHORT GBPUSD 1.2710 SL 1.2760 — approve?", "trade_approval"),
        ("👍 send it", PROPOSAL, "trade_approval"),
        ("denied, too correlated", PROPOSAL, "trade_approval"),
        ("ok do it", PROPOSAL, "trade_approval"),
        ("nope", PROPOSAL, "trade_approval"),
        ("acked", "[ORDER] SELL 10 CLN4 LMT 78.40 sent to broker", "trade_confirmation"),
        ("desk B", "where do we route the USDJPY?", "route_decision"),
        # a way to the airport or home is no order's route
        ("UP Express from Union", "fastest route to the airport from King & Bay at 5?", None),
        ("le RER B, sans hésiter", "quelqu'un connaît la meilleure route pour l'aéroport ?", None),
        ("via Marex voice", "how do we route the 200 lots, Marex or screen?", "route_decision"),
        ("cut it", "NVDA -5% on the guide, we're still holding 2k", "position_change"),
        ("leave it at 1.0890", "stop on eurusd still 1.0890 or tighten?", "stop_or_target_change"),
        # a verdict after the name of whom it answers; not a plain "yes" after a name
        ("Klaus — approved, but that's the last add this week.", PROPOSAL, "trade_approval"),
        ("Mike, denied: too much SOL already", PROPOSAL, "trade_approval"),
        ("Sarah: yes, she's in today", PROPOSAL, None),
        ("Klaus — approved the expense report yet?", "lunch at 1?", None),
        ("kör", "förslag: köp 40 OMXS30 jun-terminer runt 2 500, stopp 2 470", "trade_approval"),
        ("nej, inte idag", "förslag: köp 40 OMXS30 jun-terminer runt 2 500", "trade_approval"),
        ("kör", "lunsj kl 12?", None),
        ("aprovado", "proposta: comprar 50 DI F27 a 14,10%, stop 14,30%", "trade_approval"),
        (
            "yeah, moved it to 1.0850, in the oms",
            "stop on eurusd still 1.0820 or tighten?",
            "stop_or_target_change",
        ),
        # without a proposal parent, short replies decide nothing
        ("yes", "lunch at 1?", None),
        ("approved", "can I take Friday off?", None),
        ("nope", "anyone seen my charger?", None),
        ("👀", PROPOSAL, None),
        ("what's the stop?", PROPOSAL, None),
        ("sure, in 5", "got a sec to look at the NVDA proposal?", None),
        # a counter-size after its reason, a verdict after a label, a verdict on a named signal
        ("too big for a Monday. do 75k", PROPOSAL, "trade_approval"),
        ("trop gros. fais 40 lots et on en reparle", PROPOSAL, "trade_approval"),
        ("SOL: go, 300. stop is fine", PROPOSAL, "trade_approval"),
        ("no on SIG-2210, too correlated with the book", PROPOSAL, "trade_approval"),
        # a rejection whose reasons say when to ask again is still one; an assent that
        # waits on a condition or a plan decides nothing
        (
            "not today. the spread stays as it is into the night, we revisit in the morning "
            "when there's a result and some liquidity on the screens",
            PROPOSAL,
            "trade_approval",
        ),
        (
            "pass. 58 vol isn't rich enough with the ruling possibly landing this week; if it "
            "comes and goes and the skew is still like this, ask me again",
            PROPOSAL,
            "trade_approval",
        ),
        ("ok, if it dips to 140 I'll look again", PROPOSAL, None),
        ("no, let me check with risk first", PROPOSAL, None),
        ("not yet, waiting for Tom to reply", PROPOSAL, None),
        ("good question. do 2 things first: check the skew", PROPOSAL, None),
        ("FYI: no, CPI is tomorrow not today", PROPOSAL, None),
        (
            "no: too correlated with the book, we already carry two million of it and the "
            "desk is long enough into Friday, bring it back next week",
            PROPOSAL,
            "trade_approval",
        ),
        (
            "ok",
            "Short update from facilities:\nthe lifts are serviced this week\n"
            "Entry via the side door until Friday",
            None,
        ),
        ("sure, let me think about it over lunch", PROPOSAL, None),
        ("too big for a Monday. do 75k", "lunch at 1?", None),
        ("no on the lunch order, I'm full", PROPOSAL, None),
        ("do 5 mins of stretching", PROPOSAL, None),
        ("That's better. Yes.", PROPOSAL, "trade_approval"),
        ("Go, 3k, with the 131 stop hard in the system.", PROPOSAL, "trade_approval"),
        ("Thanks for the update. Yes.", "lunch at 1?", None),
        ("found it. Yes.", "anyone seen my charger?", None),
        ("ok, still in the system somewhere, will look", PROPOSAL, None),
    ],
)
def test_short_replies_decide_by_their_parent(
    reply: str, parent: str, event_type: str | None
) -> None:
    assert _type(reply, parent) == event_type


def _version(content: str) -> SourceVersion:
    return source_version("m1", content, author="trader", at_us=1_000_000, reply_to="m0")


def test_classify_makes_an_approving_reply_a_hard_event_only_under_a_proposal() -> None:
    reply = _version("yes")
    assert classify(reply, RULES, 60_000_000).cls == "ack"
    lunch = source_version("m0", "lunch at 1?", author="pm", at_us=500_000)
    assert classify(reply, RULES, 60_000_000, parent=lunch).cls == "ack"
    proposal = source_version("m0", PROPOSAL, author="pm", at_us=500_000)
    decided = classify(reply, RULES, 60_000_000, parent=proposal)
    assert (decided.cls, decided.event_type) == ("hard_event", "trade_approval")


@pytest.mark.parametrize(
    "content",
    [
        "a" * 1_000_000,
        "1," * 500_000,
        "stop" * 250_000,
        "9" * 1_000_000,
        "approved " + "x" * 1_000_000,
        "filled 5k " * 100_000,
        "." * 1_000_000,
        "A1" * 500_000,
    ],
)
def test_matching_stays_linear_in_the_message_length(content: str) -> None:
    started = time.perf_counter()
    RULES.first_match(content)
    RULES.decision_lines(content)
    # a few hundred milliseconds when linear; a quadratic step would take minutes
    assert time.perf_counter() - started < 10.0


def test_defines_guards_and_replies_in_a_rules_file() -> None:
    rules = parse_rules(
        """
ignore_case = true
[define]
service = 'checkout|payments|search'
verb = 'roll(?:ed|ing)? ?back|revert(?:ed|ing)?'
action = '{verb}\\s{1,3}(?:the\\s{1,3})?(?:{service})'

[[rule]]
name = "rollback"
event_type = "rollback_decision"
patterns = ['\\b{action}\\b']

[[ignore]]
name = "question"
patterns = ['\\?\\s{0,3}$']

[[reply]]
name = "go"
event_type = "rollback_decision"
patterns = ['^\\W{0,3}(?:yes|do it)\\b']
anywhere = ['^\\W{0,3}just (?:{service})\\b']
parent_types = ["rollback_decision"]
""",
        "ops.toml",
    )
    assert rules.first_match("Rolling back checkout now.").event_type == "rollback_decision"
    assert rules.first_match("ROLLED BACK PAYMENTS") is not None
    assert rules.first_match("rolling back search?") is None
    assert rules.first_match("ok. revert the payments. thanks") is not None
    decided = rules.decide("yes", parent="propose we roll back checkout")
    assert decided is not None and decided.event_type == "rollback_decision"
    assert rules.decide("yes", parent="lunch?") is None
    # an `anywhere` pattern may match any clause of the reply, not only its first
    partial = rules.decide("not payments. just search", parent="rolling back checkout now")
    assert partial is not None and partial.event_type == "rollback_decision"
    assert rules.decide("not payments. just search", parent="lunch?") is None
    assert rules.decide("not payments. maybe later", parent="roll back checkout now") is None
    literal = parse_rules("[[rule]]\nname='x'\nevent_type='x'\npatterns=['\\{name}']\n", "x")
    assert literal.first_match("a {name} here") is not None


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[[rule]]\nname='x'\nevent_type='x'\npatterns=['{nope}']\n", "undefined name {nope}"),
        ("[define]\na='{b}'\nb='{a}'\n[[rule]]\nname='x'\nevent_type='x'\npatterns=['{a}']\n",
         "nested deeper"),
        ("[[ignore]]\nname='q'\npatterns=['(']\n", "ignore.0.patterns.0"),
        ("[[reply]]\nname='r'\nevent_type='x'\npatterns=['y']\nparent_patterns=['(']\n",
         "reply.0.parent"),
    ],
)  # fmt: skip
def test_rules_file_errors_name_the_place(text: str, where: str) -> None:
    with pytest.raises(RulesError, match=r"rules\.toml") as error:
        parse_rules(text, "rules.toml")
    assert where in str(error.value)


def test_decision_lines_mark_the_lines_that_carry_the_decision() -> None:
    content = "Morning note\nES held 5100 twice.\nshould we move the stop?\nStop moved to 5090."
    assert RULES.decision_lines(content) == [False, False, False, True]


def test_heldout_recall_does_not_regress() -> None:
    """The held-out lines (written apart, never read while writing the rules)."""
    scores = evaluate(load("heldout"), RULES)
    assert scores.recall >= HELDOUT_RECALL_FLOOR
    assert scores.negatives_kept <= HELDOUT_NEGATIVES_KEPT_CEILING


# everyday.jsonl and everyday_heldout.jsonl (ids e…, by a seventeenth hand, twenty-seventh
# round): everyday chat using desk words in their everyday sense, none of it a decision;
# four fifths read to narrow the rules, one fifth measured only (ADR 0052). Kept on the code
# before the round: 101 / 405 and 32 / 95; on the round's rules and model after its two
# reviews: 80 / 405 and 31 / 95 (29 / 95 before the second review's mends), which the
# ceilings keep.
EVERYDAY_KEPT = 80 / 405
EVERYDAY_HELDOUT_KEPT = 31 / 95


def test_everyday_lines_are_no_decisions_and_share_no_text() -> None:
    development, held_out = load("everyday"), load("everyday_heldout")
    assert (len(development), len(held_out)) == (405, 95)
    rows = development + held_out
    assert all(row["label"] is None and row["style"] == "everyday" for row in rows)
    assert len({row["id"] for row in rows}) == len({row["text"] for row in rows}) == 500
    # short replies ("fine by me", "approved, enjoy") are in other sets too
    others = {row["text"] for name in ("heldout", "japanese", "tune", "dev") for row in load(name)}
    assert not {t for t in others & {row["text"] for row in rows} if len(t) > 16}


@pytest.mark.parametrize(
    ("split", "ceiling"), [("everyday", EVERYDAY_KEPT), ("everyday_heldout", EVERYDAY_HELDOUT_KEPT)]
)
def test_everyday_lines_kept_do_not_grow(split: str, ceiling: float) -> None:
    assert evaluate(load(split), RULES).negatives_kept <= ceiling


def test_japanese_recall_does_not_regress() -> None:
    """The Japanese lines (written apart, never read while writing the rules)."""
    scores = evaluate(load("japanese"), RULES)
    assert len(scores.decisions) == 160 and len(scores.negatives) == 80
    assert scores.recall >= JAPANESE_RECALL_FLOOR
    assert scores.negatives_kept <= JAPANESE_NEGATIVES_KEPT_CEILING


@pytest.mark.parametrize(
    ("split", "lines", "decisions"), [("japanese_dev", 235, 158), ("japanese_dev2", 237, 159)]
)
def test_the_japanese_development_lines_share_no_text_with_the_held_out_ones(
    split: str, lines: int, decisions: int
) -> None:
    """The Japanese development splits are read to write rules: they must show nothing of
    japanese.jsonl (lines of the same text were left out of them)."""
    development = load(split)
    held_out = {row["text"] for row in load("japanese")}
    assert len(development) == lines and sum(1 for r in development if r["label"]) == decisions
    assert all(row["lang"] == "ja" and row["text"] not in held_out for row in development)


@pytest.mark.parametrize(
    ("split", "floor"),
    [
        ("japanese_dev", JAPANESE_DEVELOPMENT_RECALL_FLOOR),
        ("japanese_dev2", JAPANESE_DEVELOPMENT_RECALL_FLOOR),
        # the eighteenth round's Chinese and Korean rules, written against the first four
        # sets, and the nineteenth round's reading of text holding runs, trained on all six
        # (ADR 0043): 159, 157, 147, 160, 159 and 158 of 160 (the third pair, measured on
        # arrival before it was read, and then on a reading trained without it: 108 → 129
        # and 115 → 145); the twenty-first round's rules, written from the misses of these
        # sets and of five development desks (ADR 0045): 160, 158, 157, 160, 160, 158
        ("chinese_dev", 160 / 160),
        ("chinese_dev2", 158 / 160),
        ("chinese_dev3", 157 / 160),
        ("korean_dev", 160 / 160),
        ("korean_dev2", 160 / 160),
        ("korean_dev3", 158 / 160),
    ],
)
def test_japanese_chinese_and_korean_development_splits_meet_the_recall_target(
    split: str, floor: float
) -> None:
    scores = evaluate(load(split), RULES)
    assert scores.recall >= floor
    assert scores.negatives_kept <= JAPANESE_DEVELOPMENT_NEGATIVES_KEPT_CEILING


@pytest.mark.parametrize(
    ("split", "lang", "lines", "decisions"),
    [
        ("chinese_dev", "zh", 240, 160),
        ("chinese_dev2", "zh", 240, 160),
        ("chinese_dev3", "zh", 240, 160),
        ("korean_dev", "ko", 240, 160),
        ("korean_dev2", "ko", 240, 160),
        ("korean_dev3", "ko", 240, 160),
    ],
)
def test_the_chinese_and_korean_development_lines_share_no_text_with_any_other_set(
    split: str, lang: str, lines: int, decisions: int
) -> None:
    """Read to write rules and trained on: a line of a held-out set among them would
    let the held-out figures be tuned (each measured once on arrival, before it was read:
    chinese_dev 94/160, 9/80 kept; korean_dev 89/160, 3/80 on the code before the round;
    chinese_dev2 122/160, 12/80 and korean_dev2 114/160, 7/80 on the rules written
    against the first two; chinese_dev3 108/160, 6/80 and korean_dev3 115/160, 1/80 on
    the eighteenth round's final code)."""
    development = load(split)
    assert len(development) == lines and sum(1 for r in development if r["label"]) == decisions
    assert all(row["lang"] == lang for row in development)
    others = {row["text"] for name in ("heldout", "japanese", "tune", "dev") for row in load(name)}
    assert not others & {row["text"] for row in development}


# Two Italian development sets by two hands that read nothing of the project (twenty-first
# round, ADR 0046): italian_dev measured on arrival (116 / 160, 11 / 80 kept) and read to
# write the Italian rules; italian_dev2 then measured on those rules before it was read
# (118 → 135 / 160, 6 → 3 / 80 kept), then read too; two reviews then narrowed the rules
# (words ordinary in Italian, Spanish or Portuguese, asks that name no trade): 149 and 145
# / 160, 6 and 3 / 80 kept. Neither is trained on.
@pytest.mark.parametrize(
    ("split", "floor", "kept"),
    [("italian_dev", 149 / 160, 6 / 80), ("italian_dev2", 145 / 160, 3 / 80)],
)
def test_italian_development_sets_meet_their_measured_recall(
    split: str, floor: float, kept: float
) -> None:
    rows = load(split)
    assert len(rows) == 240 and sum(1 for r in rows if r["label"]) == 160
    assert all(row["lang"] == "it" for row in rows)
    # a bare "no" or "👍" is in every set: the rest is the sets' own
    others = {row["text"] for name in ("heldout", "japanese", "tune", "dev") for row in load(name)}
    assert not {t for t in others & {row["text"] for row in rows} if len(t) > 3}
    scores = evaluate(rows, RULES)
    assert scores.recall >= floor
    assert scores.negatives_kept <= kept


PROPOSAL_IT = "Propongo di comprare 20 FIB giugno a 34.150, stop 33.900, target 34.600. Ok?"


# Italian desk words, written for these tests: impersonal and passive forms ("si chiude",
# "è stata liquidata", "Si comunica che …", which is no "si" = if), fills, verdicts by reply,
# approvals of a named trade, routes by who works the order; what stays ordinary: a
# market's close, a speed limit, nothing changed
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("fatti 8 FIB a 34.120", None, "trade_fill"),
        ("tutto fatto, 5k ENI media 14,31", None, "trade_fill"),
        ("chiusa la posizione su ENEL", None, "position_change"),
        ("dimezzato il long su ISP", None, "position_change"),
        ("la posizione long su Leonardo è stata interamente liquidata", None, "position_change"),
        ("Si chiude tutta la posizione su Tenaris in apertura.", None, "position_change"),
        ("preso profitto su metà del long BTP, tengo il resto", None, "position_change"),
        ("ok procedi", PROPOSAL_IT, "trade_approval"),
        ("assolutamente no, troppo rischio prima della BCE", PROPOSAL_IT, "trade_approval"),
        ("ok per i 10 FIB di Paolo, vai", None, "trade_approval"),
        ("lo faccio con Equita, hanno il flow", None, "route_decision"),
        ("BTP 2033 in RFQ su Tradeweb, non su MTS", None, "route_decision"),
        ("Si comunica che il limite di VaR del desk è ridotto da 3 a 2,5 mln.", None, "risk_limit"),
        ("niente nuove posizioni fino a domani", None, "risk_limit"),
        ("la tesi di compressione dello spread è stata abbandonata", None, "thesis_change"),
        (
            "Vi confermiamo l'acquisto di 20.000 azioni ENI al prezzo medio di 14,28",
            None,
            "trade_confirmation",
        ),
        ("il FTSE MIB ha chiuso a 34.210, banche deboli", None, None),
        ("il limite di velocità in autostrada è stato abbassato a 110", None, None),
        ("la posizione BTP-Bund resta invariata, nessuna modifica ai limiti", None, None),
        # found by a review: everyday Italian, and Spanish or Portuguese that shares its words
        ("la passo a prendere alle 8", None, None),
        ("lo giro a Marco", None, None),
        ("ne parliamo a voce con Luca", None, None),
        ("sono passato al banco del pesce", None, None),
        ("manda a Juan el archivo", None, None),
        ("ok per la cena di venerdì", None, None),
        ("ok per le 3 di domani, vai pure", None, None),
        ("saldi fuori tutto da Zara", None, None),
        ("ho letto una storia su una rivista", None, None),
        ("ho ritirato la tesi", None, None),
        ("presi 2 biglietti per il concerto", None, None),
        ("fatti 10 km di corsa stamattina", None, None),
        ("ho registrato la riunione di ieri", None, None),
        ("la copertura wifi è stata ridotta", None, None),
        ("abbiamo raggiunto il target, 3 ore di anticipo", None, None),
        ("si precisa, compramos 5 lotes", None, None),
        ("si dispone de 3 horas, compramos 200 SAN", None, None),
        ("sim", "posso sair mais cedo hoje às 5?", None),
        ("sim", "vendo 2 ingressos pro show às 20h, alguém quer?", None),
        ("bought 10k AAPL at 180.2, fill rate 98%", None, "trade_fill"),
        ("ok", "possiamo fare la call alle 10?", None),
        ("non ora, sono in riunione", "ti chiedo un favore: mi presti 20 euro?", None),
        ("va bene", "compriamo 3 pizze?", None),
        ("respinto, manca la ricevuta", "chiedo il rimborso di 45 euro per il taxi", None),
        ("va bene, ci penso", PROPOSAL_IT, None),
        ("Si conferma l'ordine delle pizze per le 20", None, None),
        ("Le confermiamo l'acquisto del biglietto Milano-Roma", None, None),
        ("prese 2 pizze a 8 euro", None, None),
        ("tutto fatto, 3 valigie pronte", None, None),
        ("la posizione di Marco è stata ridotta a part-time", None, None),
        ("fuori tutto a 3 euro, saldi di fine stagione!", None, None),
        ("niente dark chocolate per me, grazie", None, None),
        ("la pratica è stata girata al broker", None, None),
    ],
)
def test_italian_desk_words_and_their_everyday_senses(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


CARD_77 = "IDEA #77 | FMC US | side: BUY | size: 60,000 | status: PROPOSED — awaiting desk approval"


# The twenty-second round's shapes, read from two development desks (an Italian desk and a
# program-trading desk, ADR 0047) and written again for these tests: an auction's allotment,
# risk brought back under a level by a time, an Italian limit raised in the present tense,
# a cap against the usual one, routes with an adverb or to an Italian bank, closing orders
# only, a view dropped beside how things stand, a size granted against the one asked; what
# stays ordinary: an Italian "se" (if), money sent to a bank, a credit card's limit, a
# charity auction's lots, how a position stands
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        (
            "aggiudicati 20m su 25 all'asta BTP, presi tutti i livelli tranne l'ultimo",
            None,
            "trade_fill",
        ),
        ("we were allotted 40m of the 50m we bid", None, "trade_fill"),
        ("riportate il delta sotto i 30k entro la chiusura", None, "risk_limit"),
        ("get the DV01 back below 45k by the close", None, "risk_limit"),
        ("alzo temporaneamente il limite DV01 da 80k a 95k fino a lunedì", None, "risk_limit"),
        ("stasera FX overnight massimo 5m EUR invece dei soliti 15", None, "risk_limit"),
        ("La eseguiamo noi direttamente su MTS", None, "route_decision"),
        (
            "Revised view: we drop the front-running thesis on the deletions, the supply is "
            "sitting for the close.",
            None,
            "thesis_change",
        ),
        (
            "ok on #77 but at 30k not 60 — we've still got the other tail on",
            CARD_77,
            "trade_approval",
        ),
        ("ok, still on the phone", CARD_77, None),
        ("Se non lo prendo a 6.280 entro le 16 alzo il limite.", None, None),
        ("se il treno arriva in ritardo alzo il limite di tempo", None, None),
        ("i soldi mandati a Intesa ieri, 300 euro", None, None),
        ("alzo il limite della carta di credito", None, None),
        ("aggiudicati 3 lotti su 5 all'asta di beneficenza", None, None),
        ("riporta il libro sotto il letto entro le 14", None, None),
        ("the position is still there at 30k not 60", None, None),
        # German and Spanish development desks: a half bought back, a stop and target put in
        # the system, Swiss German "uf", Spanish limits moved, a hedge closed, a call moved
        # to neutral, a counterparty's confirm, an order put to a bank's desk, a rejection
        # by who gave it
        ("Ich würde die Bund-Shorts bei 131,20 eindecken", None, "trade_proposal"),
        ("Stop 14.850 und Ziel 15.400 sind im System hinterlegt", None, "stop_or_target_change"),
        ("Stop bei 14.850 im System hinterlegt", None, "stop_or_target_change"),
        ("Stop für d'10 Mio EURCHF vo 0,9310 uf 0,9335 ufegnoh", None, "stop_or_target_change"),
        ("el límite overnight de DV01 baja de 50k a 30k por libro", None, "risk_limit"),
        ("vuelvo a poner el VaR del libro en 2m, como estaba", None, "risk_limit"),
        ("Cierro la cobertura del IBEX antes del cierre", None, "position_change"),
        ("pasamos el USD/CLP de alcista a neutral", None, "thesis_change"),
        ("Bancolombia confirmó la venta de 3.000.000 USD/COP a 4.050", None, "trade_confirmation"),
        ("se lo pido a la mesa de Itaú por Bloomberg chat", None, "route_decision"),
        (
            "Abgelehnt von Risk. Wenn ihr die Roche rausnehmt, reden wir nochmal.",
            CARD_77,
            "trade_approval",
        ),
        ("el límite de la tarjeta sube a 3k este mes", None, None),
        ("Ana confirmó la compra de 2 entradas para el concierto", None, None),
        ("se lo pido a la mesa de al lado por chat", None, None),
        ("cierro la cuenta del banco", None, None),
        # found by the round's second review
        ("Cierro la cobertura del seguro del coche a final de mes", None, None),
        ("The printer is out of pen ink again", None, None),
        ("Fuera de Sar el paseo se hace muy largo, mejor vamos por Ames", None, None),
        ("Ich würde es abbauen und im Keller lagern, das alte Regal", None, None),
        ("Das Ziel ist im Navi eingestellt, wir fahren um 8 los", None, None),
        ("S Ziel isch uf 10 Kilometer gsetzt für de Lauf am Sunntig", None, None),
        ("Se lo pido a la mesa de ayuda por chat, que yo no tengo permisos", None, None),
        ("Pasamos el saldo de negativo a positivo por fin este mes", None, None),
        ("Ana confirmó la compra de las entradas si le pasamos el dinero hoy", None, None),
        ("Pongo el VAR en 4K para ver si fue fuera de juego", None, None),
        (
            "Rechazado por Bankinter. Si no llegamos al 20% de entrada no hay hipoteca, así "
            "que habrá que esperar un año más o pedirle ayuda a tus padres, qué rollo todo",
            "Propongo comprar el piso de la calle Mayor por 250k, ¿ok?",
            None,
        ),
        # found by the round's review (everyday Italian and English, and Italian decisions
        # that open with an idiom of "se")
        ("Dimezzo il limite di prelievo finché non arriva la nuova carta", None, None),
        ("Alziamo il limite di partecipanti alla gita a 45, c'è un pullman più grande", None, None),
        ("Max 5k steps instead of the usual 10k, my knee is sore", None, None),
        ("Solo ordini di chiusura in pizzeria, alle 23 si chiude il forno", None, None),
        ("Li passo io direttamente a Intesa i documenti del mutuo", None, None),
        ("Mandati a UniCredit i 4 moduli per il conto dei ragazzi", None, None),
        ("Aggiudicati 12m su 20 di fondi PNRR per il nostro comune", None, None),
        ("We were allotted 10k of 15k tickets for the final, rubbish", None, None),
        ("Get your credit utilization below 30% by the next statement", None, None),
        ("Riporta il rischio sotto il 10% entro l'anno prossimo, dice il cardiologo", None, None),
        ("We drop the beach house view, still looking in the hills", None, None),
        ("ok on #14 but at 30 not 60 — we've still got the kids on the coach", CARD_77, None),
    ],
)
def test_allotments_caps_and_grants_read_from_desks(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type
    if event_type is not None:
        assert (_type(text) or (parent and _type(text, parent))) == event_type


POWER_CARD = (
    "TRADE CARD #0419 | instr: SGX FEF AUG25 | side/size: SELL 200 lots @ 93.00 | stop: 94.80"
)
POWER_PROPOSAL = "Halden showing Q1 base at 92.40. proposal: buy 5MW there vs the Nov, ok?"


@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        # the twenty-fifth round's development desks (ADR 0050): an order sent to a bank or
        # venue while its reasons after a dash say how things stand; an order handed to a
        # bank; a broker the lexicon does not know, named before DMA or an algo; a verdict
        # before a spaced hyphen (its reasons read after it, a size granted too)
        (
            "sending it to the Jefferies DMA for the opening auction, not our algo — I "
            "don't want it sitting out the uncross",
            None,
            "route_decision",
        ),
        (
            "handing the 0418 stop/target OCO to HSBC London for the overnight",
            None,
            "route_decision",
        ),
        ("COMEX via Kestrel DMA, limit 36.74, don't chase it", None, "route_decision"),
        (
            "no - not flipping on one headline. this is one city in a heat alert, not a "
            "national campaign. I'll watch it, I won't short it. rejected",
            POWER_CARD,
            "trade_approval",
        ),
        ("go - 3k, if it holds the open", POWER_PROPOSAL, "trade_approval"),
        # and their look-alikes (the review's among them)
        ("still sending it to GS, nothing changed", None, None),
        ("sending it to mum — she's still in hospital", None, None),
        ("handing it to the teacher after class", None, None),
        ("handing the 50 tickets to the school office", None, None),
        ("sending the two concert tickets to Sam", None, None),
        ("let's do the interview with Tom over the phone, not the office", None, None),
        ("we usually send it through GS — it tends to be cheaper", None, None),
        ("ok - let me think about it", POWER_PROPOSAL, None),
        ("ok -- let me think about it", POWER_PROPOSAL, None),
        ("go - might wait for CPI though", POWER_PROPOSAL, None),
        ("not now, let me think about it", POWER_PROPOSAL, None),
        ("cut the gold long - might wait for payrolls", None, None),
    ],
)
def test_the_twenty_fifth_rounds_shapes_and_their_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _type(text, parent) == event_type


KESTREL_CARD = (
    "🃏 KESTREL CARD #31 — USDZAR spot | side: SELL USD | qty: 3,000,000 | entry: 18.2900 lmt"
    " | stop: 18.3600 | target: 18.1500"
)


@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        # the twenty-sixth round's development desks (ADR 0051): a bot's fill record with
        # its order id before the side; another lot taken off; a block put on new entries;
        # a limit restored; an override granted; an RFQ put to a number of dealers; an order
        # sent into the closing auction; a view given up "if at all"; a verdict after a
        # reference to the card it answers
        (
            "FILL ord=J-3307 BUY 125 ZWU25 MKT avg 5.74 1/2 (19 fills, 5.73 3/4 - 5.75 1/4)"
            " acct=AGP-WHT-01 | slippage vs arrival 5.74: -1/2c",
            None,
            "trade_fill",
        ),
        ("taking another 100 off here, leaves 150", None, "position_change"),
        ("I'm blocking new entries in GCC high yield until the Fed is out", None, "risk_limit"),
        ("SAGB DV01 limit restored to R1.2m from R800k", None, "risk_limit"),
        ("override granted for risk-reducing orders only, until 14:00Z", None, "risk_limit"),
        (
            "R2040 cover: RFQ to three dealers on the platform, best price wins",
            None,
            "route_decision",
        ),
        (
            "both into the closing auction as market-on-close, not the continuous book",
            None,
            "route_decision",
        ),
        (
            "the thesis on the aramco long is broken, I'd rather own it lower if at all",
            None,
            "thesis_change",
        ),
        (
            "Kestrel #31 — no. Not fading USDZAR the morning of budget, I'm long already.",
            KESTREL_CARD,
            "trade_approval",
        ),
        ("#31 — no, that's the same trade twice. too correlated", KESTREL_CARD, "trade_approval"),
        ("#31 — no.", KESTREL_CARD, "trade_approval"),
        ("Yes #31 — 25 lots", KESTREL_CARD, "trade_approval"),
        ("No #31 — too big", KESTREL_CARD, "trade_approval"),
        ("fill buy 125 ZWU25 @ 5.74", None, "trade_fill"),
        ("LIMIT RESTORED | desk=RATES dv01=1.2m", None, "risk_limit"),
        ("trading limits restored", None, "risk_limit"),
        ("Risk restored the DV01 limit to R1.2m", None, "risk_limit"),
        ("taking another 100 off here", None, "position_change"),
        ("blocking new shorts in NQ", None, "risk_limit"),
        ("EXEC SLD 10 NQZ5 21,500", None, "trade_fill"),
        ("took a further 10 off the KC spread at 0.42", None, "position_change"),
        ("taking another 25 lots off the corn", None, "position_change"),
        ("DV01 limit reinstated at R1.2m", None, "risk_limit"),
        ("we're blocking new positions in Saudi banks after the breach", None, "risk_limit"),
        ("RFQ to 4 banks for the 5y ZAR swap", None, "route_decision"),
        ("into the closing auction as MOC please, all 3,000", None, "route_decision"),
        ("send the corn order to the pit", None, "route_decision"),
        ("pass the wheat order to Dave at RJO", None, "route_decision"),
        # and their look-alikes (the round's review's among them)
        ("An exception was granted for Tom's leave next week", None, None),
        ("the waiver was granted, we can use the parking lot", None, None),
        (
            "Exception granted: you can bring your dog to the office Friday, no risk of "
            "allergies apparently",
            None,
            None,
        ),
        ("the planning exception was approved, no limit on building height there", None, None),
        ("her credit card limit restored to 5k", None, None),
        ("Visitor limits restored at the care home from Monday", None, None),
        ("the bank restored my withdrawal limit after I called", None, None),
        ("I'd buy it lower, if at all", None, None),
        (
            "Risk says we could cut the Aramco long to 1,000 shares if anything happens overnight",
            None,
            None,
        ),
        ("team would move the stop to 5.92 if anything moves before the close", None, None),
        ("Kestrel #31 — let me think about it.", KESTREL_CARD, None),
        ("I'm sending it to my sister tomorrow", None, None),
        ("giving it to Grandma for her birthday", None, None),
        ("trade bot 2 is down again, can someone restart it", None, None),
        ("exec bot 2 restarted after the deploy", None, None),
        ("I'm blocking new entries in my calendar after 4pm, need focus time", None, None),
        ("HR is blocking new positions until the budget is approved", None, None),
        ("we are blocking new orders from that supplier after the delays", None, None),
        ("RFQ to two banks for the mortgage refinance, I'll let you know", None, None),
        ("our purchasing team did an RFQ with five dealers for the new laptops", None, None),
        ("He took another 20 off it after I haggled at the market", None, None),
        ("we're taking another 3 off the table here, too many guests", None, None),
        ("I'm taking another 5k off the mortgage here", None, None),
    ],
)
def test_the_twenty_sixth_rounds_shapes_and_their_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _type(text, parent) == event_type


@pytest.mark.parametrize(
    "text",
    [
        # the round's second review: lines the rules alone must leave ordinary (the model
        # behind them reads some of these as it reads any line, ADR 0051)
        "TRADE BOT 2 IS DOWN AGAIN",
        "FILL BOT 1 needs a restart",
        "the library book limit has been restored to 10",
        "hot desk booking limit restored",
        "I'm blocking new entries in the guest book after 200 signups",
        "blocking new orders from that supplier until the credit note arrives",
        "RFQ to three dealers for 40 company cars",
        "send the order to myself",
        "sending the order to you now",
        "send the tickets to Sarah",
        "I'm taking another 5k off the mortgage here",
    ],
)
def test_the_twenty_sixth_rounds_look_alikes_the_rules_leave_ordinary(text: str) -> None:
    assert _rule_type(text) is None


ASML_CARD = (
    "📈 TRADE CARD #0417 — ASML\nProposal: BUY 400x ASML Oct 800/840 call spread @ 9.40\n"
    "Stop: spread value 6.00 | Target: 18.00"
)


@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        # the twenty-seventh round's development desks (ADR 0052): an RFQ put to a number of
        # banks without "to"; a freeze lifted for what it held; more risk of a kind stopped
        # until something happens, put through one person, a cap kept on, a limit
        # overridden for a while; a named book's buys blocked in the system; a rejection
        # by the imperative "reject"; a hedge done inside a cross with a counterparty; a
        # view that shifts from one label to another; a line taken from one size to
        # another; a decision beside "no point sitting on …", "if I have to" or "still to
        # come"
        (
            "RFQing 3 banks on the platform (HSBC / Citi / SCB), not voice — 10mm 1m",
            None,
            "route_decision",
        ),
        (
            "putting it on the multi-dealer RFQ, 3 banks (JPM, Garanti BBVA, Akbank), not voice",
            None,
            "route_decision",
        ),
        (
            "Lifting the morning freeze for cash equities and index: normal limits apply again.",
            None,
            "risk_limit",
        ),
        ("Risk lifted the freeze for the rates book at 14:00", None, "risk_limit"),
        (
            "Sander that's basically all the headroom. nothing more on the short-vega side in"
            " SX5E until you've laid some of it off.",
            None,
            "risk_limit",
        ),
        (
            "change of plan on the cap: keep the 300k gross vega cap on overnight, I don't want"
            " it flipping back to 450 at 20:00Z with Asia still to come",
            None,
            "risk_limit",
        ),
        (
            "hard stop — anything that adds short vega in SX5E goes through me until the cap"
            " rolls off",
            None,
            "risk_limit",
        ),
        ("Temporary override: FX NOP to USD 45m until 17:00 local (14:00Z).", None, "risk_limit"),
        ("blocking 2454 buys on the engine for the rest of the day.", None, "risk_limit"),
        (
            "reject — I'm covering the 760s myself, don't want a second upside line at other"
            " strikes messing up my skew",
            ASML_CARD,
            "trade_approval",
        ),
        ("reject", ASML_CARD, "trade_approval"),
        ("skip #03, too correlated with the THY short", None, "trade_approval"),
        (
            "doing the hedge inside the cross with Prinsengracht — selling 84 FESX Dec at"
            " 5,418 tied, not on screen.",
            None,
            "route_decision",
        ),
        ("So the view shifts from 'calm crawl' to 'defended crawl'.", None, "thesis_change"),
        (
            "Selin, take the index line from 4,000 down to 2,000 in the evening session;",
            None,
            "position_change",
        ),
        (
            "buying back the 150k THYAO now, not waiting for 309.50 — no point sitting on a"
            " stop when the reason for the trade has gone",
            None,
            "trade_proposal",
        ),
        # and their look-alikes
        ("lifting the hiring freeze for graduates in March", None, None),
        ("skip #3 on the playlist, it's too slow", None, None),
        ("no more sweets until dinner", None, None),
        ("anything that adds sugar goes through me", None, None),
        ("blocking ads on the browser", None, None),
        ("keep the speed limit until the bridge", None, None),
        ("the meeting moves from 'Tuesday' to 'Wednesday'", None, None),
        ("RFQ 3 banks for the mortgage", None, None),
        # the round's review's
        ("Normal limits apply again for the car park after the event", None, None),
        ("The bank is lifting the freeze on cash withdrawals", None, None),
        ("Override: screen time to 3 hours until Sunday", None, None),
        ("No more risk of frost until next week", None, None),
        ("Anything that adds risk to the wedding budget goes through me", None, None),
        ("RFQing 3 brokers on the platform for the office insurance", None, None),
        ("Doing it in the cross with the choir", None, None),
        ("kill #2, that design is ugly", None, None),
        ("I'll cut it if I have to, but holding for now", None, None),
        ("Covered by MS: 200 lots FGBL at 131.20", None, "position_change"),
        ("Trade confirmed by the counter party, 50k shares at 182.41", None, "trade_confirmation"),
        ("The account closed its Bund long at 131.20", None, "position_change"),
        # the second review's: a contingency stays one, a standing state stays one, desk
        # lines the everyday narrowings must not cancel
        ("I'll cut the Bund long if I have to.", None, None),
        ("USDJPY short still ahead, stop 151.30", None, None),
        ("Kill #BUG-2291, won't fix", None, None),
        ("skip #02 on the setlist", None, None),
        ("Approved to sell ahead of the data release", None, "trade_approval"),
        ("Loan sale to Barclays approved", None, "trade_approval"),
        ("Trade confirmed with Citi, appointment after", None, "trade_confirmation"),
        ("The account closed the hedge at 1.0850", None, "position_change"),
        ("Nothing further in Bund until the auction", None, "risk_limit"),
        ("no more size in NVDA till earnings", None, "risk_limit"),
        ("we are sitting on 40k ES", None, None),
    ],
)
def test_the_twenty_seventh_rounds_shapes_and_their_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _type(text, parent) == event_type


@pytest.mark.parametrize(
    "text",
    [
        # everyday senses of desk words the rules leave ordinary (everyday.jsonl's and the
        # round's own): bookings, closed shops and tickets, a lesson covered by a teacher
        "Table for 4 at 8pm confirmed, name Rossi.",
        "Tennis court booked for Tuesday 7–8pm, court 3.",
        "Commande confirmée : 1 canapé 3 places, livraison le 18 entre 8h et 13h.",
        "Please note the office will be closed on 26 December.",
        "Kitchen closes at 22:00 tonight.",
        "Ticket JIRA-2291 closed as won't fix, it's expected behaviour.",
        "closed all the windows, storm's coming",
        "Mrs Carter is off sick today, Year 3 will be covered by Mr Evans.",
        "She covered 42 km in 3:58, finished her first marathon!",
        "the removal company lost a box, they're covering it on insurance",
        "the dentist appointment is confirmed for 3 May at 10:40",
        "pull request approved, merging after CI goes green.",
        "Unfortunately your request for a second monitor was rejected, the budget is frozen.",
        "Your leave request is approved for the 12th to the 16th.",
        "bought a used Golf, 2017, 68k km, 11,500 after haggling",
        "sold the old pram on marketplace for 120, the lady is collecting at 6",
        "Grandpa's will has been executed, the solicitor sent the final accounts",
    ],
)
def test_everyday_senses_the_rules_leave_ordinary(text: str) -> None:
    assert _rule_type(text) is None


@pytest.mark.parametrize(
    "text",
    [
        # and the desk lines beside them that stay decisions
        "ACK NEW ORD AEX 19SEP25 C910 BUY 200 LMT 2.10 acct=MM-AEX ord=E7732104 venue=EDA"
        " status=ACCEPTED",
        "closed the EURUSD long at 1.0850",
        "covered the TSLA short at 241.10",
        "booked 5k AAPL at 189.40, confirmed with GS",
        "approved, 20 lots",
        "the Bund trade is approved, 50 lots",
        "sold out of the position at 1.0850",
        "bought a new 5k AAPL at 189",
    ],
)
def test_desk_lines_beside_the_everyday_senses_stay_decisions(text: str) -> None:
    assert _rule_type(text) is not None


def test_not_waiting_for_a_target_is_no_plan() -> None:
    # "waiting for" puts an action off; "not waiting for my target" is why it is taken now
    acted = "selling 50 of the Dec long at 64.00 on screen, not waiting for my 64.80 target"
    assert RULES.decide(acted) is not None
    assert RULES.decide("waiting for my 64.80 target before selling 50 of the Dec long") is None


PT_PROPOSAL = "proposta: comprar mais 15mm NTN-B 2035 a 7,40%, cabe no DV01?"


@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        # Portuguese and French desk speech read from development desks (ADR 0048)
        ("DI1F27 vai por voz ao BTG, não ponho na tela", None, "route_decision"),
        ("o NDF vai pelo Santander, cotou 8 pips melhor que o resto", None, "route_decision"),
        ("je le donne en TWAP jusqu'à 16h, participation max 8%", None, "route_decision"),
        ("on fait les 6m en RFQ à 4 dealers, pas d'un bloc", None, "route_decision"),
        ("baixando o stop do DI pra 14,35 (era 14,50)", None, "stop_or_target_change"),
        ("tira o stop do WIN, deixa correr até o fechamento", None, "stop_or_target_change"),
        ("stop du Bund remonté à 131.40, on protège le gain", None, "stop_or_target_change"),
        ("Je te baisse la limite gross à 40m jusqu'à vendredi", None, "risk_limit"),
        ("On bloque les nouvelles entrées crédit tant que le VaR dépasse", None, "risk_limit"),
        ("personne ne prend de risque BRL avant o Copom sans falar comigo", None, "risk_limit"),
        ("bloqueio novas entradas em DI até o comunicado", None, "risk_limit"),
        ("reduzo o limite de DV01 do Thiago pra 60 mil até amanhã", None, "risk_limit"),
        ("mudamos nossa expectativa para o Copom: agora +75bp em maio", None, "thesis_change"),
        ("nossa tese de fechamento da curva curta morreu com esse IPCA", None, "thesis_change"),
        ("manda os 10. e me avisa o preço médio", PT_PROPOSAL, "trade_approval"),
        # the same words elsewhere stay ordinary
        ("o relatório vai pro JPM amanhã de manhã", None, None),
        ("O Pedro vai pelo metrô hoje, chega às 9h", None, None),
        ("ele tira o stop toda vez que o mercado mexe, irritante", None, None),
        ("a tese do estagiário caiu no chão literalmente", None, None),
        ("je le donne à Marie demain, le dossier RH", None, None),
        ("je bloque mon agenda pour la réunion de 14h", None, None),
        ("personne ne rajoute de sucre dans le café ici", None, None),
        ("on monte la limite de vitesse à 130 sur l'autoroute ?", None, None),
        ("mudo a senha do wifi depois do almoço", None, None),
        ("manda os 10 slides até as 18h, por favor", "faz a apresentação do cliente?", None),
        # found by the round's review (everyday Portuguese and French)
        ("Tira o alvo da parede, vamos pintar amanhã", None, None),
        ("Minha tese de mestrado caiu na banca de quinta", None, None),
        ("Mudamos nossa expectativa de chegada, o voo atrasou", None, None),
        ("Vai pelo Santander que a taxa é menor", None, None),
        ("Je te monte la limite à 3 bières ce soir, pas plus", None, None),
        ("Personne ne rajoute de risque à Noël, c'est la tradition haha", None, None),
    ],
)
def test_portuguese_and_french_desk_speech_read_from_desks(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type
    if event_type is not None:
        assert (_type(text) or (parent and _type(text, parent))) == event_type


@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        # an Italian idiom of "se" or a Spanish "se" (itself) is no condition
        ("Se non sbaglio abbiamo già venduto 10 FIB a 34.250, confermo", "trade_fill"),
        (
            "Se il limite serve, l'ho già alzato: nuovo limite VaR 3m approvato da risk",
            "risk_limit",
        ),
        ("Se va corto en el Eurostoxx con 15 futuros a 4.950", "position_change"),
        ("Se cerró la posición en 4.480", "position_change"),
        # money spoken of beside a trade
        ("Ho perso troppi soldi sul Bund, venduti 10 lotti a 131,20", "trade_fill"),
    ],
)
def test_italian_and_spanish_se_and_money_words_keep_their_decisions(
    text: str, event_type: str
) -> None:
    assert _type(text) == event_type


@pytest.mark.parametrize("split", ["tune", "dev"])
def test_development_splits_meet_the_recall_target(split: str) -> None:
    scores = evaluate(load(split), RULES)
    assert scores.recall >= DEVELOPMENT_RECALL_FLOOR
    assert scores.negatives_kept <= DEVELOPMENT_NEGATIVES_KEPT_CEILING
    for event_type, (hit, total) in scores.recall_by("label").items():
        assert hit / total >= DEVELOPMENT_TYPE_FLOOR, event_type
    for style, (hit, total) in scores.recall_by("style").items():
        assert hit / total >= DEVELOPMENT_TYPE_FLOOR, style


@pytest.mark.parametrize("split", ["heldout", "japanese", "everyday_heldout"])
def test_bench_refuses_to_show_heldout_misses(split: str) -> None:
    result = subprocess.run(
        [sys.executable, "bench/decisions.py", "--split", split, "--show-misses"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert result.returncode == 2
    assert "development splits only" in result.stderr and "never read" in result.stderr


def test_rules_test_without_a_file_shows_what_the_current_rules_match(
    make_server: Callable[..., LiveServer],
) -> None:
    out = rules_test_output(
        make_server,
        message_event("1", "We're out of the USDJPY position."),
        message_event("2", "should we move the stop?"),
        message_event("3", "lunch?"),
    )
    assert "messages scanned: 3" in out
    assert "matches: position_change 1" in out
    assert (
        "  * floor/1 position_change (rule position_change): We're out of the USDJPY position."
        in out
    )
    assert "floor/2" not in out and "floor/3" not in out


def test_rules_test_lists_what_the_rules_decide_nothing_in_when_asked(
    make_server: Callable[..., LiveServer],
) -> None:
    # a new user's trial: the report named only what matched, so a decision the rules
    # miss could not be found from it
    events = (
        message_event("1", "We're out of the USDJPY position."),
        message_event("2", "should we move the stop?"),
        message_event("3", "lunch?"),
        message_event("4", "anyone seen the CPI print"),
    )
    out = rules_test_output(make_server, *events, options=("--unmatched", "--limit", "2"))
    assert "matched by nothing in the current rules: 3" in out
    assert "unmatched messages (first 2):\n  . floor/2: should we move the stop?\n" in out
    assert "  . floor/3: lunch?" in out and "floor/4" not in out
    assert "  * floor/1 position_change (rule position_change)" in out
    plain = rules_test_output(make_server, *events)
    assert "matched by nothing" not in plain and "floor/2" not in plain


def test_rules_test_shows_the_line_a_rule_matched_not_the_messages_start(
    make_server: Callable[..., LiveServer],
) -> None:
    # a new user's trial: the report showed a long report's first 160 characters, not the
    # decision in its last lines
    preamble = "Morning notes: " + "flows were quiet overnight, Asia mixed, " * 6
    out = rules_test_output(
        make_server,
        message_event("1", preamble + "\nWe're out of the USDJPY position."),
        message_event("2", "Flat USDJPY into NFP, no new risk until 14:00."),
    )
    assert (
        "  * floor/1 position_change (rule position_change): … We're out of the USDJPY position."
        in out
    )
    assert "Morning notes" not in out
    # a decision at the message's start is shown from there, unmarked
    assert "  * floor/2 " in out and ": Flat USDJPY into NFP" in out


def test_rules_test_reads_a_replys_parent_with_its_bridge_tags(
    make_server: Callable[..., LiveServer],
) -> None:
    # as the worker does: "yes" under a question the bridge tags as a proposal approves it
    out = rules_test_output(
        make_server,
        message_event("1", "should we move the gold stop up a bit?", tags=["proposal"]),
        message_event("2", "yes", reply_to="1", created_at="2026-05-21T16:01:00Z"),
        message_event("3", "should we move the copper stop up?", created_at="2026-05-21T16:02:00Z"),
        message_event("4", "yes", reply_to="3", created_at="2026-05-21T16:03:00Z"),
    )
    assert "  * floor/2 trade_approval (rule approval_by_reply): yes" in out
    assert "floor/4" not in out


def _reference_type(text: str) -> str | None:
    """What the rules say by the plain definition: each pattern searched in each clause that
    no guard makes ordinary, no keyword gate, no combined scan; the earliest such clause
    types the message, by the first rule (in file order) matching it."""
    for c in RULES.clauses(text):
        for rule in RULES.rules:
            if rule.clause_matches(c.text, c.lowered):
                return rule.event_type
    return None


def test_gates_and_combined_scans_never_change_what_matches() -> None:
    """Word gates, prefix-factored definitions and one scan per rule only save time."""
    texts = [t for texts in DECISIONS.values() for t in texts] + ORDINARY
    texts += [t for texts in OTHER_DESK_DECISIONS.values() for t in texts]
    texts += OTHER_DESK_LOOK_ALIKES
    texts += [row["text"] for split in ("tune", "dev") for row in load(split)]
    texts += [e["message"]["content"] for e in desk_events()]
    for text in texts:
        assert _rule_type(text) == _reference_type(text), text


@pytest.mark.parametrize(("reasons", "decides"), [("true", False), ("false", True)])
def test_a_guard_marked_reasons_false_leaves_a_verdicts_reasons_alone(
    reasons: str, decides: bool
) -> None:
    rules = parse_rules(
        f"""
[[ignore]]
name = "standing"
patterns = ['\\bstill\\b']
reasons = {reasons}

[[reply]]
name = "verdict"
event_type = "trade_approval"
patterns = ['^\\W{{0,3}}(?:yes|no)\\b']
parent_patterns = ['\\bproposal\\b']
max_chars = 10
""",
        "desk.toml",
    )
    answer = "no. we are still long enough, bring it back later"
    decided = rules.decide(answer, parent="proposal: buy 10 ES at 6700")
    assert (decided is not None and decided.event_type == "trade_approval") is decides


@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        ("got them: 40 copper 3M at 10,835, market dipped back", "trade_fill"),
        ("pulled my resting TU bid at 104-01¾, no reason to keep it in", "trade_confirmation"),
        ("cancelled the 1.0780 offer, too far away now", "trade_confirmation"),
        ("Ich sperre neue NG-Einstiege, bis Tunde online ist.", "risk_limit"),
        ("Ich ändere meine Sicht auf den Schatz.", "thesis_change"),
        ("Ich ändere nichts an der Sicht, Bund bleibt short.", None),
        ("je ne change rien à la thèse sur BNP", None),
        ("should I cancel my resting 240.50 bid for 100 JPM?", None),
        ("got it, thanks", None),
        ("got it: 3 pizzas at 12.50 each", None),
        ("ebay cancelled my bid lol", None),
        ("the exchange yanked the order book feed again", None),
        ("took the heating down to 19 at home", None),
        ("IT will take the server down to 2 nodes tonight", None),
        ("bringing the budget down by 10%", None),
        ("Wir sperren heute die Küche, neue Kaffeemaschine kommt.", None),
        ("desde hoy cambiamos nuestra visión sobre BBVA de positiva a neutral", "thesis_change"),
        ("Downgrading our view on gilts from overweight to neutral.", "thesis_change"),
        ("I've changed my mind on HLNT, not a holder any more.", "thesis_change"),
        ("Je change d'avis sur Renault : plus acheteur.", "thesis_change"),
        ("je ne suis plus acheteur de protection sur Casino", "thesis_change"),
        ("Vue désormais constructive sur le crédit Atos.", "thesis_change"),
        ("J'autorise un dépassement de ta limite delta à 40m jusqu'à demain", "risk_limit"),
        ("vega limit on the SX5E book authorised at 300k until Friday", "risk_limit"),
        ("Taking half off the Dec/Mar spread here, selling 100 at +12", "position_change"),
        ("took some off the EURUSD long at 1.0910", "position_change"),
        ("SX5E leg to SG by voice, SPX leg to Citi", "route_decision"),
        ("RFQ for the 5y leg to JPM and BofA only", "route_decision"),
        ("Ich lege den Rückkauf direkt über unseren Eurex-Zugang.", "route_decision"),
        (
            "sending the 6857 via VWAP, not the dark pool, it leaked in the pre-lunch window",
            "route_decision",
        ),
        ("TAS and MOC both in.", "trade_confirmation"),
        ("MOC in.", "trade_confirmation"),
        # sixth round: a size in a currency, a flat currency, "dealt" with its size
        ("We covered the $10mm short at 99.5", "position_change"),
        ("Added €5m to the Bund long.", "position_change"),
        ("Closed the £10m gilt long, flat gilts.", "position_change"),
        ("Flat CNH into the fix.", "position_change"),
        ("Dealt $15m at 87.21 with SCB.", "trade_fill"),
        ("Should we cut the $20m short?", None),
        ("If we add $5m to the long, risk goes to 90%.", None),
        ("I dealt with compliance on the $5m ticket", None),
        ("Market is flat EUR-wise today, nothing moving", None),
        # a block or a halt lifted
        ("Trading halt lifted on the rates book.", "risk_limit"),
        ("New entries re-enabled for EM FX.", "risk_limit"),
        ("we removed the entry block on Chloe's book", "risk_limit"),
        ("Einstiegssperre aufgehoben, ihr dürft wieder.", "risk_limit"),
        ("bloqueo de entradas levantado", "risk_limit"),
        ("should we lift the entry block?", None),
        ("if risk lifts the entry block we can add", None),
        ("is the trading halt over yet?", None),
        # seventh round: flat in Spanish, bought back, a size in barrels or ounces, one's own
        # argument given up, a thesis no longer valid, a system of the desk's halted for
        # risk, a record's snake_case breach, one dealer chosen over another
        ("Cierro el resto, quedo plano en Bund.", "position_change"),
        ("Cerrada la cobertura, estamos planos en Crossover.", "position_change"),
        ("Recompré 20 lotes de maíz a 4,12.", "position_change"),
        ("Fait : 40 FGBLZ5 rachetés à 128,39.", "trade_fill"),  # a desk labels it a fill
        ("cut 300kb of the Jan diff, 600kb left", "position_change"),
        (
            "J'ai racheté 10k oz d'or à 2 395 : position ramenée à 5k oz, stop inchangé.",
            "position_change",
        ),
        ("Mein Short-Argument für den Schatz ist damit vom Tisch.", "thesis_change"),
        ("my bear argument is dead after that print", "thesis_change"),
        ("Ma thèse de baisse n'est plus valable.", "thesis_change"),
        ("[RISK] STRATEGY PAUSED strat=MOMO-7 reason=drawdown>2%", "risk_limit"),
        ("AUTO-HEDGER HALTED book=EQD-VOL reason=V2X_MOVE policy=RISK-7", "risk_limit"),
        (
            "[RISKGUARD] PRE-TRADE REJECT ord=OMS-1 BUY 40,000 reason=BOOK_IN_BREACH "
            "action=NEW_ENTRIES_BLOCKED book=ENERGY",
            "trade_approval",
        ),
        ("lo hacemos con Santander, no con BBVA", "route_decision"),
        ("je le fais avec SG, pas BNP", "route_decision"),
        ("Doing it with JPM, not Citi — Citi was a tick wide.", "route_decision"),
        # a stop or target moved in the present, desk Spanish; an overage granted, German
        ("Stop del resto: lo subo a -1.05 (antes -1.20).", "stop_or_target_change"),
        ("Para lo que queda: muevo el objetivo a +34 (antes +31).", "stop_or_target_change"),
        (
            "Ich genehmige eine befristete Überschreitung bis 21,0 Mio. USD bis morgen.",
            "risk_limit",
        ),
        ("¿subo el stop a -1.05?", None),
        ("Subo a la oficina a las 3", None),
        ("muevo la reunión a las 4", None),
        ("el stop sigue en -1.05", None),
        ("on remonte au bureau, le stop du bus est loin", None),
        ("Ich genehmige keine Überschreitung, das ist klar.", None),
        ("Ich genehmige den Urlaub bis Freitag.", None),
        ("la curva está plana, nada que hacer hoy", None),
        ("¿estamos planos en Bund?", None),
        ("si estamos planos mañana, volvemos a entrar", None),
        ("recompré café para la oficina", None),
        ("I own 10 oz of gold coins at home lol", None),
        ("le ticket de cantine n'est plus valable aujourd'hui", None),
        ("Die Fed-Zinssenkung im Juni ist vom Tisch laut Powell.", None),
        ("Das Argument der Bären ist nicht vom Tisch.", None),
        ("My long argument with the auditors is finally over.", None),
        ("my long argument hasn't changed", None),
        ("unser Long-Argument bleibt, nichts ist vom Tisch", None),
        ("El funding bajó, así que el argumento del carry ya no aplica tanto.", None),
        ("the auto-hedger halted again? can someone check", None),
        ("[DERIBIT] ENGINE PAUSED: scheduled maintenance 08:00-08:30Z", None),
        ("Hedger halted: false | last_run=16:02Z | ok", None),
        ("ENGINE RESUMED after restart | build=4.2.1", None),
        ("[HEARTBEAT] venue-monitor ok | 9/9 UP | SOL withdrawals=RESUMED 16:41Z", None),
        # a status line says how things stand, every quarter of an hour
        ("LIMIT STATUS 09:15 | gross=400m limit=1bn util=40% | entries UNBLOCKED", None),
        ("[HEALTHWATCH] feeds ok | entries_blocked=0 | breaches=none", None),
        ("doing it with MS Teams instead of Zoom today", None),
        ("doing it with Sarah tomorrow morning", None),
        ("Pour info, la marge est appelée chez Marex, pas chez ICE directement.", None),
        ("je le fais avec plaisir", None),
        # the same words in other senses, or a change that is no view
        ("P&L went from positive to negative after lunch", None),
        ("à mon avis le marché va changer de direction", None),
        ("taking the afternoon off tomorrow", None),
        ("the rest to the kitchen please", None),
        ("my leg to the physio again", None),
        ("Factory orders in Germany fell 2% in March.", None),
        ("I'm in.", None),
        ("sending the deck via the lunch group chat", None),
        # look-alikes a review wrote against this round's shapes
        ("I changed my mind about the restaurant, let's do Thai", None),
        ("Je change d'avis, on prend le train", None),
        ("It's now prudent to back up your files before the migration", None),
        ("My Uber rating went from positive to negative lol", None),
        ("J'ai changé la vue du dashboard Grafana", None),
        ("Christmas party tickets are in, grab yours at reception", None),
        ("je suis passé par le bureau ce matin", None),
        ("We found the apartment through our broker", None),
        ("The balance with Goldman is 3.2m, margin call tomorrow", None),
        ("legs to the floor, shoulders down - yoga at 6", None),
        ("Zara is taking 50% off all winter coats", None),
        ("take the rest off, you've earned it", None),
        ("Fee waived for the net banking account, finally", None),
        ("lunch break: we're cutting the cake at 1", None),
        ("working it on ICE screen myself, no broker", "route_decision"),
        ("may/jun +1.01 — moving stop up to +0.78 on the 300", "stop_or_target_change"),
        ("took half off the dec/mar at +1.24, 150 left", "position_change"),
        ("Hedge BRL en place pour Javier : achat NDF USD/BRL 2,4 M à 5,4610", "position_change"),
        ("cancelled the 136.00 buy stop in OMS so we don't get filled", "trade_proposal"),
        ("may need to move the stop to +0.78 later", None),
        ("the hedge is still in place", None),
        ("I'll stop in the office tomorrow", None),
        ("working it out with the kids tonight", None),
        # a block said by who may not open what; "full stop" as emphasis is no stop
        ("nobody adds a new Bund long before the auction, full stop.", "risk_limit"),
        ("no new copper shorts until the LME stocks print", "risk_limit"),
        ("the email ends with a full stop, not a comma", None),
        ("nobody opens a new account at that bank anymore lol", None),
        # a cap for a while, no verb; an algo's share of volume is no cap
        ("Bund: max 40 lots until 14:30 (auction), then back to 80", "risk_limit"),
        ("max net 25 lots ES into the print, 50 after", "risk_limit"),
        ("sending it to the VWAP algo, max 15% of volume until noon", "route_decision"),
        ("max 20 lots until the print?", None),
        # an order said to be in at its price
        ("100 TYH6 offer at 112-16 is in, GTC", "trade_confirmation"),
        ("their offer at 112-16 is in the screen since yesterday", None),
        ("is the bid at 96.15 in?", None),
        # Italian: a route, a broker's confirmation, a fill
        ("Mando l'ordine a Marex, a voce", "route_decision"),
        ("Marex conferma: ordine in lavorazione, compriamo 10 lotti KCH6", "trade_confirmation"),
        ("ho comprato 5 lotti di KCH6 a 372,50", "trade_fill"),
        ("mando il report a Marco stasera", None),
        ("ordine del giorno: riunione alle 10", None),
        # a view given up beside how something else stands; how a view stands
        ("gold long still fine, the silver short thesis is dead", "thesis_change"),
        ("I no longer think the carry thesis holds this week", "thesis_change"),
        ("the carry thesis still holds", None),
        ("stop still at 1.0790, idea still fine", None),
        ("Je ne suis plus bearish sur le crédit HY", "thesis_change"),
        ("je ne crois plus au rebond du Bund", "thesis_change"),
        # blocks in German and French, a hyphenated kind of entry
        ("keine neuen Positionen im Bund bis nach der Auktion", "risk_limit"),
        ("aucune nouvelle position sur le TRY jusqu'à nouvel ordre", "risk_limit"),
        ("no new single-name HY entries before payrolls", "risk_limit"),
        # a trade reported done by its opening word, with its price
        ("Fait : achat de 5 M€ OAT 10 ans à 98,40 avec BNP", "trade_fill"),
        ("Hecho: 15 mm a 99,10 con Santander", "trade_fill"),
        ("Done: 25 ESZ5 at 6,712", "trade_fill"),
        ("fait : la réunion est à 14h", None),
        # by voice with a dealer
        ("Voice con Santander para el resto", "route_decision"),
        ("voice with GS on the 2y leg, not screen", "route_decision"),
        ("voice call with GS at 3 about the new ISDA", None),
        # "last 20m" is what is left; "last 60m=0" a monitor's window; "last 1.0870" a price
        (
            "the rest goes through Tradeweb RFQ, I want competition on the last 20m",
            "route_decision",
        ),
        ("[deskmon] rejects last 60m=0 | fix sessions up", None),
        ("EURUSD long 20m @ 1.0850, last 1.0870, stop 1.0820", None),
        # a cap overnight ("max." does not end a sentence)
        ("XAG im Trading-Buch über Nacht max. 10k oz, das Hedgebuch ist ausgenommen", "risk_limit"),
        ("overnight max 25 lots in the Bund book", "risk_limit"),
        ("Bund max. 40 Kontrakte über Nacht", "risk_limit"),
        ("we held max. 40 lots overnight last week?", None),
        # Swedish, Norwegian and Portuguese desk words
        ("flyttar stoppen på OMX-longen till 2480 från 2455", "stop_or_target_change"),
        ("flytter stoppet på Brent til 82,40", "stop_or_target_change"),
        ("flyttar inte stoppen, 2455 ligger kvar", None),
        ("förslag: sälj 40 OMXS30 jun-terminer runt 2 510, stopp 2 545", "trade_proposal"),
        ("kjøpte 25 OBX-kontrakter på 1 402", "trade_fill"),
        ("min bull-case för laxen håller inte längre", "thesis_change"),
        ("mudei de ideia sobre o Ibovespa: agora estou vendido", "thesis_change"),
        ("desci o stop do DI pra 13,90%", "stop_or_target_change"),
        ("zerei a posição em F26 a 14,10%", "position_change"),
        ("dado 5.000 F28, médio 13,85%", "trade_fill"),
        # an action in the first person now is no hedge; a plan still is
        ("Ok, thinking about it more: I'm scrapping the MXN carry view.", "thesis_change"),
        ("thinking about scrapping the MXN carry view", None),
        ("Lo hago por ICAP por voz", "route_decision"),
    ],
)
def test_fills_cancels_blocks_and_views_in_more_floor_phrasings(
    text: str, event_type: str | None
) -> None:
    assert _rule_type(text) == event_type
    assert _type(text) == event_type


@pytest.mark.parametrize(
    ("text", "promoted"),
    [("got it, 2 at 3pm", False), ("Raised it with IT - ticket is in.", True)],
)
def test_look_alikes_at_the_models_threshold_are_rules_misses_the_model_may_promote(
    text: str, promoted: bool
) -> None:
    """Two look-alikes the model reads within 0.02 of its threshold (0.45), which each
    training moves across it: "got it, 2 at 3pm" (a time, not a price) read 0.456 while the
    vocabulary's weights were counted with the Chinese, Japanese and Korean sets (ADR 0042),
    0.443 since they are counted on the decision model's own lines (ADR 0043); "Raised it
    with IT - ticket is in." 0.426, now 0.461. The rules keep both ordinary; the model,
    alone, makes the second a hard event."""
    assert _rule_type(text) is None
    assert RULES.model is not None
    p = RULES.model.probability(text)
    assert abs(p - RULES.model.threshold) < 0.02
    assert (p >= RULES.model.threshold) is promoted
    assert (RULES.decide(text) is not None) is promoted


PROPOSTA = "proposta: vender 200 DI1F27 a 14,20, stop 14,40"


# The desk words of other languages, and the everyday senses of the same words: a goal,
# a stoppage, a tradition, a ceiling, a border, eyesight, a mortgage, minutes, guests
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("Målet är att vara klara till 16", None, None),
        ("stopp på T-banen til 14:30, kommer sent", None, None),
        ("o alvo é terminar o relatório pra 15h", None, None),
        ("the Christmas party is going ahead, it's a tradition", None, None),
        ("Te mando la ubicación del restaurante, la mesa está a nombre de Juan", None, None),
        ("Ti mando il file, è sul desk", None, None),
        ("the sender was the exchange, phishing test", None, None),
        ("mudei de ideia sobre o happy hour, não vou", None, None),
        ("a ideia do churrasco mudou pra sábado", None, None),
        ("minha tese de mestrado mudou de orientador", None, None),
        ("Min syn håller inte längre, behöver nya glasögon", None, None),
        ("back in max 10 mins, before the close", None, None),
        ("Max 2 questions each until the fed speaks", None, None),
        ("über Nacht max. 10 Gäste im Gästehaus", None, None),
        ("I'm moving the stop to 101 maybe, let me think", None, None),
        ("we're closing the position at some point, maybe tomorrow", None, None),
        ("Stop at 101.20, size 5k max. Who's around tomorrow?", None, "stop_or_target_change"),
        ("Stormen rammer Oslo i kveld, økt fare for forsinkelser", None, None),
        ("O teto da copa foi reduzido na reforma", None, None),
        ("no new emails from risk today, quiet", None, None),
        ("plus de nouvelles ventes depuis lundi, le site est en panne", None, None),
        ("keine neuen Long-Positionen in Gold bis nach dem FOMC", None, "risk_limit"),
        ("dados 3 meses de histórico, acho que dá", None, None),
        ("Dei 3 aulas de inglês hoje", None, None),
        ("Fait : 3 tickets Jira fermés à 17h", None, None),
        ("Erledigt: 2 Räume gebucht zu 14:00", None, None),
        ("não sei, deixa eu pensar", PROPOSTA, None),
        ("sim", "tô vendo aqui 3 opções de restaurante, qual?", None),
        ("yeah, removed it", "the target slide in the deck has a typo", None),
        ("the dashboard view is broken, still on the old one", None, None),
        ("Lo mando como RFQ a tres bancos en el ECN", None, "route_decision"),
        ("Alvo do spread mudado para 105 (era 115)", None, "stop_or_target_change"),
        ("Mudei de ideia sobre a curva: agora estou tomado", None, "thesis_change"),
        ("I'm raising the ags net cap from 400 to 600 lots", None, "risk_limit"),
        ("aprovado", PROPOSTA, "trade_approval"),
    ],
)
def test_other_languages_desk_words_and_their_everyday_senses(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type
    assert (_type(text) or (parent and _type(text, parent))) == event_type


PROPOSAL_JA = "提案：7203を2,000株、2,850円で買いたいです。ストップは2,790。"
PROPOSAL_ZH = "建议买入 600519 茅台 2000股，价格1680附近，请批准"


# Japanese and Chinese do not space their words: the rules read them without word
# edges, and their everyday senses (lunch, a holiday, a credit card, a broker's
# research target, hearsay, a condition) stay ordinary
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("額面5億円を101.50で買いたいです。", None, "trade_proposal"),
        ("承認します", PROPOSAL_JA, "trade_approval"),
        ("見送りで。今日はイベント前なので。", PROPOSAL_JA, "trade_approval"),
        ("批准，做一半", PROPOSAL_ZH, "trade_approval"),
        ("唔批，太大注", PROPOSAL_ZH, "trade_approval"),
        ("7203 買い 2,000株 発注しました", None, "trade_confirmation"),
        ("茅台买单已下，1680限价", None, "trade_confirmation"),
        ("7203を2,000株、2,849円で約定しました", None, "trade_fill"),
        ("已成交 5000股 @ 12.35", None, "trade_fill"),
        ("利確ターゲットを103.00に設定しました", None, "stop_or_target_change"),
        ("腾讯止损调到 268", None, "stop_or_target_change"),
        ("CBはNomuraのCBデスクにRFQで出します", None, "route_decision"),
        ("这单交给中金执行，TWAP", None, "route_decision"),
        ("VaR上限を5億円に引き下げました", None, "risk_limit"),
        ("今天停止开新仓，只减不加", None, "risk_limit"),
        ("ポジションを半分にカットしました", None, "position_change"),
        ("台积电已经全部平仓", None, "position_change"),
        ("その前提が崩れたので、このビューを撤回します。", None, "thesis_change"),
        ("对港股转为看空", None, "thesis_change"),
        ("お弁当、注文しました", None, None),
        ("Amazonで注文しました、明日届く", None, None),
        # the Japanese and Chinese guards leave English text to the other guards
        ("we are no longer buyers of Amazon here, thesis is dead", None, "thesis_change"),
        ("有給の承認待ちです", None, None),
        ("ランチ買いました、3個", None, None),
        ("会議の枠を変更しました", None, None),
        ("みずほ証券がトヨタの目標株価を3200円に引き上げ", None, None),
        ("年假已批准", None, None),
        ("我买了3杯咖啡", None, None),
        ("信用卡额度提高到5万", None, None),
        ("大摩把腾讯目标价上调至350", None, None),
        ("对冲基金那边的风险敞口上调了，听说", None, None),
        ("如果跌破3600就止损", None, None),
        ("ストップを動かしますか？", None, None),
        ("收到", PROPOSAL_ZH, None),
        ("可以啊，晚点聊", PROPOSAL_ZH, None),
        ("文件已经发给你了", None, None),
    ],
)
def test_japanese_and_chinese_desk_words_and_their_everyday_senses(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


PROPOSAL_JA = "ドル円 149.50買い 10本、承認お願いします"


# Japanese by its grammar: a done act in plain past, polite or passive form ("切った",
# "買い増しいたしました", "買い戻されました"), a working order ("置いてます", "発注中"), a
# route by its destination ("野村経由で", "ダークプールに回されました"), a trade put as a
# question ("どう？"), a verdict by reply ("GOで"); and what stays ordinary: a condition
# ("…割れたら"), a plan ("予定", "つもり"), limit-up ("ストップ高"), a commentary's
# "ロングの手仕舞い", a trade date
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("ドル円ロング、半分落とした", None, "position_change"),
        ("トヨタを1万株買い増しいたしました。", None, "position_change"),
        ("ユーロ円ショート20本は全て買い戻されました。", None, "position_change"),
        ("債先 半分利食い、残り10枚", None, "position_change"),
        ("ショートを15枚追加し、合計35枚にしました。", None, "position_change"),
        ("【建玉変更】口座:P1 銘柄:NK225F 建玉:-10→0", None, "position_change"),
        (
            "[POSITION] book=FX1 instr=EURJPY action=CLOSE qty=5M pos_after=0",
            None,
            "position_change",
        ),
        ("146.19で20枚全部取れました", None, "trade_fill"),
        ("🎉 ソニー3,000株 全部付いた！平均13,085", None, "trade_fill"),
        ("TOPIX先物の買い30枚は、2,751.0で全量執行されました。", None, "trade_fill"),
        ("ドル円 149.50 ビッド 10本 置いてます", None, "trade_confirmation"),
        (
            "ご注文承りました。日経225先物 38,500円売り10枚、ただいま発注中です。",
            None,
            "trade_confirmation",
        ),
        ("ポンド円 195.80 ビッド5本置きました、まだ付いてません", None, "trade_confirmation"),
        ("債先20枚 野村経由で", None, "route_decision"),
        ("ソニーの買い注文はダークプールに回されました。", None, "route_decision"),
        ("225先物 売り50枚 野村に回す", None, "route_decision"),
        ("日本株 グロス上限 100億→80億", None, "risk_limit"),
        ("日経先物の新規建ては、リスク管理部により一時停止されました。", None, "risk_limit"),
        (
            "トヨタのロングについて、利益確定の目標を3,000円から3,100円へ引き上げます。",
            None,
            "stop_or_target_change",
        ),
        ("ストップ 148.50→149.00", None, "stop_or_target_change"),
        ("38,700に下げました", "日経先ショートのストップ、どうする？", "stop_or_target_change"),
        ("ユーロ円 戻り売り目線→押し目買い目線に変更", None, "thesis_change"),
        ("ドル円の上昇シナリオは、本日の米CPIで否定されました。", None, "thesis_change"),
        (
            "いや、取り下げます。生保の買いが強すぎる",
            "JGBの売りシナリオ、維持でいい？",
            "thesis_change",
        ),
        ("債先 3月限 146.20買い 20枚 どう？", None, "trade_proposal"),
        ("ドル円を149.50で10本買いませんか", None, "trade_proposal"),
        ("先ほどの売り建て案、部長決裁で承認されました。", None, "trade_approval"),
        ("本件につきましては、見送りとさせていただきます。", None, "trade_approval"),
        ("GOで", PROPOSAL_JA, "trade_approval"),
        ("半分の5本ならOK。それ以上はダメ", PROPOSAL_JA, "trade_approval"),
        ("149割れたら切る", None, None),
        ("明日は半分利確するつもり", None, None),
        ("入札後に買う予定", None, None),
        ("7203 ストップ高に到達", None, None),
        ("建玉はともに減少しており、ロングの手仕舞いが中心に見えます。", None, None),
        ("約定日は明後日です", None, None),
        ("今日の約定代金、プライムで5兆円超え", None, None),
        ("会議室の予約は承認されました。", None, None),
        ("日銀は利上げを見送りました。", None, None),
        ("時間枠を変更しました", None, None),
        ("151.30です。昨日から変わってません", "ドル円のストップ、どこだっけ？", None),
        ("了解", PROPOSAL_JA, None),
        # a review's look-alikes: other senses of the words, a market's own moves, advice
        ("チケット取れました、19時", None, None),
        ("1000円で買えた", None, None),
        ("資料10ページできました", None, None),
        ("昨日米株が買い戻された", None, None),
        ("海外勢のロングが手仕舞われた", None, None),
        ("10枚切った方がいい", None, None),
        ("10枚決済したかった", None, None),
        ("ショートカット。", None, None),
        ("スライド半分カット。", None, None),
        ("内定のオファー出しました", None, None),
        ("予算執行中", None, None),
        ("Teamsでお願いします、15時から", None, None),
        ("議事録をデスクに回しました", None, None),
        ("ダイバーシティに回しました", None, None),
        ("日経先物、値幅制限に到達", None, None),
        ("新規採用は凍結されました", None, None),
        ("今日の飲み会は見送りとします", None, None),
        ("株主総会で承認されました", None, None),
        ("目線を変えました（カメラ）", None, None),
        ("野村が日経平均の見通しを変更", None, None),
        ("売り上げ10%増、どうですか", None, None),
        ("3時に行きたい", None, None),
        ("利益確定売りで日経は300円安、TOPIXも下げた", None, None),
        ("予定通りドル円30本売りました", None, "trade_fill"),
        ("トヨタ2万株 VWAPで流して、時間枠 10:00-11:00", None, "route_decision"),
        ("7203", "ストップ高の銘柄どれ？", None),
        ("3階", "ランチどこで出す？", None),
        ("いや、変更しないです", "ドル円のシナリオ、変える？", None),
        # from a new user's Tokyo desk (seventeenth round): a limit set to a level, new
        # shorts stopped, a view changed in the intransitive; and what stays ordinary
        ("本日のリスク枠は日経先物ネット50枚までとします", None, "risk_limit"),
        ("上限を50枚までに制限します", None, "risk_limit"),
        ("新規のショートは本日これ以上禁止", None, "risk_limit"),
        ("日経の見方変わりました", None, "thesis_change"),
        ("見方は変わりません", None, None),
        ("見方が変わったら教えて", None, None),
        ("チケットは2枚までとします", None, None),
        ("予約は10名までとします", None, None),
    ],
)
def test_japanese_decisions_by_their_grammar_and_their_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


PROPOSAL_KO = "삼성전자 5만주 매수 제안합니다, 평단 57,800 목표. 다니엘 OK?"


# Korean spaces its words but joins particles to them: rules without word edges, and the
# everyday senses (a meeting cancelled, office supplies ordered, a broker's research, a
# condition, nothing changed) stay ordinary
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        (
            "HMC/기아 페어 정리 제안: 현대차 12,000주 매도 / 기아 15,500주 매수 상환",
            None,
            "trade_proposal",
        ),
        ("승인합니다. 300계약 진행하세요.", PROPOSAL_KO, "trade_approval"),
        ("삼성전자 15만주 추가 매수 완료 — 평단 57,760", None, "position_change"),
        ("KTB 10y 300: Samsung Futures DMA로 보냄, 보이스 안 씀", None, "route_decision"),
        ("손절라인 355.0으로 조정", None, "stop_or_target_change"),
        ("한도 1.5조로 하향 조정됐습니다", None, "risk_limit"),
        ("신규 진입 금지, 오늘 장 마감까지", None, "risk_limit"),
        ("뷰 철회합니다: 7월 인하 시그널 없음", None, "thesis_change"),
        ("300개 118.89 체결 완료", None, "trade_fill"),
        ("72,000 깨지면 손절 고려해볼게요", None, None),
        ("한도 변경 사항 없습니다", None, None),
        ("회의 취소했어요", None, None),
        ("프린터 용지 주문 넣었습니다", None, None),
        ("체결 강도 120% 넘었네", None, None),
        ("휴가 승인됐습니다 🎉", None, None),
        ("NH투자증권 투자의견 하향 변경", None, None),
        ("점심 가시죠", None, None),
    ],
)
def test_korean_desk_words_and_their_everyday_senses(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


PROPOSAL_ZH = "我想明早开多 rb2510 300手，3,210附近进，止损3,170，目标3,300"
CARD_ZH = "【IDEA #C-0402-11】cu2506 多头 / 方向: BUY | 数量: 40手 | 入场: 78,200 / 止损: 77,600"


# Chinese verdicts with their reasons after a Chinese comma or full stop ("可以，但…",
# "pass。…"), after the proposal's id ("C-0402-11 批了，…"); fills told by a done verb
# beside their count or price ("又补了…手", "…手 @… 进了", "…卖平了 @…", "全部走完…均…"),
# in a sentence that chains a plan or a level kept after a comma; a target set, a route by
# phone to a desk or through an algo, a view that no longer stands or turns ("由…轉為…"), a
# stop moved "由 … 到 …", a grant of less ("只批…"); Korean confirmations received, an order
# handed to a broker or left working on an algo, a verdict after a proposal's number, a
# fill record beside its settlement date ("결제예정일" is no plan). What stays ordinary:
# the same verbs in a question or a condition, a lesson about reasons, a market that
# "走高", a broker's view, an amount due, "sure, later", a trade not wanted. Also: a trade
# wanted and asked about ("想开空 10手 … 老大看下？") is a proposal, a verdict that grants a
# size or rejects keeps reasons that put the rest off ("…再说"), a bot's stop record
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("可以。分三笔进，第一笔别超过100手。", PROPOSAL_ZH, "trade_approval"),
        ("可以，但只做150手，另一半明天看。", PROPOSAL_ZH, "trade_approval"),
        ("pass。我铜已经够多了，再加相关性太高。", CARD_ZH, "trade_approval"),
        ("C-0402-11 批了，但只给20手，止损不动。", CARD_ZH, "trade_approval"),
        ("先进200手 3,208，回落到3,204又补了100手，合计300手，均价3,206.7", None, "trade_fill"),
        ("cu2506 多40手 @78,150 进了，止损的条件单一起挂上，目标到了再说。", None, "trade_fill"),
        ("那10手 ag2506 卖平了 @8,012，账户已经清零。", None, "trade_fill"),
        ("rb 300手全部走完，9笔，均3,207.2", None, "trade_fill"),
        (
            "rb多单300手目标设在3,300，止损3,170不变，盈亏比大约1:2.3。",
            None,
            "stop_or_target_change",
        ),
        ("打给中信的desk要个价，让他们帮忙找对手，限价78,300以内", None, "route_decision"),
        ("剩下的200手走中信VWAP，14:00开始，参与率不超过15%", None, "route_decision"),
        ("我做空铁矿的核心逻辑是钢厂限产，这个逻辑现在站不住了。", None, "thesis_change"),
        ("做多沥青的理由不成立了，今天收盘前处理。", None, "thesis_change"),
        ("50억 한투증권 확인서도 들어왔어요, 단가 일치", None, "trade_confirmation"),
        ("국고채 배정분 80억, 주관사 배정 통지서 방금 받았습니다.", None, "trade_confirmation"),
        ("회사채 30억은 미래에셋증권 브로커한테 조용히 넘겼어요.", None, "route_decision"),
        (
            "[FILL] ORD=BLK-0701-0003 한빛전자 BUY 50,000 @41,200 | 결제예정일 2025-07-03",
            None,
            "trade_fill",
        ),
        ("NH 알고 TWAP으로 14:00까지 걸어둠", None, "route_decision"),
        ("선물 세일즈한테 RFQ 넣어서 협의거래로 받겠습니다.", None, "route_decision"),
        ("07은 보류", PROPOSAL_KO, "trade_approval"),
        ("只批五千股", PROPOSAL_ZH, "trade_approval"),
        ("淡倉止蝕由 21,400 收窄到 21,300", None, "stop_or_target_change"),
        ("我嘅睇法由“做淡”轉為“中性”", None, "thesis_change"),
        ("中金的观点由谨慎转成乐观", None, None),
        ("결제 예정 금액은 내일 공유드릴게요", None, None),
        ("rb2505 3350附近想开空 10手，止损3390，目标3280，老大看下？", None, "trade_proposal"),
        ("想入 3張 HSI 4月期，20100 入，止蝕 19950，ok唔ok？", None, "trade_proposal"),
        ("可以，先上5手，剩下的等反弹再说", PROPOSAL_ZH, "trade_approval"),
        ("不行，等非农出来再说。", PROPOSAL_ZH, "trade_approval"),
        ("螺纹多单止盈位由3300下调至3280，止损维持3170不变。", None, "stop_or_target_change"),
        ("CU这单拆成8笔冰山挂", None, "route_decision"),
        ("今天起日内额度砍到 2000 万", None, "risk_limit"),
        ("本组对地产链的看法调整为负面。", None, "thesis_change"),
        (
            "[STOP_MOD] pos=EURUSD_S2 old_stop=1.0950 new_stop=1.0920 by=lee",
            None,
            "stop_or_target_change",
        ),
        ("可以啊，晚点聊", PROPOSAL_ZH, None),
        ("我不想开空，20手太多了", None, None),
        # found by a review: a counter of anything, a year's goal, a letter, a gift, a reply
        # that puts the decision off ("not yet, let me ask" is no verdict in any language)
        ("他进了2张电影票", None, None),
        ("今年的目标设在10公斤", None, None),
        ("합격 통지서 방금 받았어요, 3월부터 출근", None, None),
        ("데스크한테 선물 보냈어요 2개", None, None),
        ("好的，我想想", PROPOSAL_ZH, None),
        ("行，等我问问", PROPOSAL_ZH, None),
        ("好，稍等", PROPOSAL_ZH, None),
        ("先别，等我问问风控", PROPOSAL_ZH, None),
        ("我想开多3个微信号", None, None),
        ("又补了3手好牌，哈哈", None, None),
        ("打给desk问问会议室", None, None),
        ("부동산 브로커한테 조용히 넘겼어요", None, None),
        ("rb 300手进了吗？", None, None),
        ("如果跌破3,150，止损移到3,170", None, None),
        ("亏钱不是离场的理由，理由没了才是。", None, None),
        ("今天螺纹走高，VWAP 3,215附近", None, None),
        ("확인서 받았나요?", None, None),
    ],
)
def test_chinese_and_korean_decisions_told_in_a_sentence_and_their_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


PROPOSAL_PL = "Propozycja: kupujemy 10 mln EURPLN po 4,2810, SL 4,2650"


# Dutch, Polish, Czech and Turkish desk words, and the everyday senses of the same words
# (a holiday approved, tickets bought, a window closed, a credit card's limit, a
# market's holiday); a word and an exchange code after a space ("okno na noc", "antes de")
# are no listed ticker
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("Voorstel: 5 mln EURPLN kopen op 4,2810, stop 4,3050", None, "trade_proposal"),
        ("Nie, odrzucam, za duże ryzyko przed RPP", PROPOSAL_PL, "trade_approval"),
        ("akkoord", "Voorstel: 20 FGBL kopen op 131,40, akkoord?", "trade_approval"),
        ("Order geannuleerd, ASML bid eruit gehaald", None, "trade_confirmation"),
        ("Emir İPTAL edildi, THYAO 5000 lot", None, "trade_confirmation"),
        ("Koupil jsem 5k ČEZ za 978,50", None, "trade_fill"),
        ("Kupiłem 10 mln EURPLN po 4,2810", None, "trade_fill"),
        ("Target ASML verhoogd naar 680", None, "stop_or_target_change"),
        ("Przesunąłem stopa na 4,2950", None, "stop_or_target_change"),
        ("Posláno na BCPP přes algo VWAP do close", None, "route_decision"),
        ("İş Yatırım üzerinden gönderiyoruz, 10 mio USDTRY", None, "route_decision"),
        ("limit przekroczony o 2 mln", None, "risk_limit"),
        ("yeni pozisyon açılmayacak", None, "risk_limit"),
        ("geen nieuwe posities vandaag", None, "risk_limit"),
        ("Positie in Shell gesloten", None, "position_change"),
        ("Pozisyonu kapattık, 5 mio USDTRY", None, "position_change"),
        ("Mijn visie op de euro klopt niet meer", None, "thesis_change"),
        ("Mijn vakantie is goedgekeurd 🎉", None, None),
        ("Vakantie voor de zomer goedgekeurd", None, None),
        ("Zamknąłem okno na noc", None, None),
        ("Zavřel jsem okno na noc", None, None),
        ("Ik heb 2 kaartjes gekocht", None, None),
        ("Kupiłem 2 bilety na koncert", None, None),
        ("Toplantıyı 14:00'e aldım", None, None),
        ("Giełda zamknięta 3 maja", None, None),
        ("Limiet op de creditcard verhoogd naar 5000", None, None),
        ("Rychlostní limit na D1 je 130", None, None),
        ("EURCZK testuje 25,15, odpor na 25,20", None, None),
        ("Niks veranderd, we blijven long Shell", None, None),
        ("Moeten we ASML verkopen?", None, None),
        ("dobra", "Kawa o 15?", None),
        ("Dosyayı bana gönderir misin?", None, None),
        ("Catering faturasını onayladım", None, None),
    ],
)
def test_dutch_polish_czech_and_turkish_desk_words_and_their_everyday_senses(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


CONDITIONAL_CUT = "bobl 117.52, we're down about 4 ticks on the 150. if it loses 117.40 i'd cut it"


# Shapes from the tenth round's six desks (written after they were measured), each beside
# the everyday text that must stay ordinary
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("ich würd ihn halbieren, nicht ganz raus", None, "trade_proposal"),
        ("Ich würde kaufen, wenn der Bund 131 hält", None, None),
        ("Einverstanden, halbieren.", "steepener +41k. ich würd ihn halbieren", "trade_approval"),
        ("fine, but let's not be cute with it", CONDITIONAL_CUT, None),
        ("Nicht vor Powell.", "Vorschlag: +300 ERM5 dazu noch vor Powell.", "trade_approval"),
        (
            "passt, go 👍",
            "Ich würd bei 0,9356 quoten, 4 Punkte Marge. Passt das?",
            "trade_approval",
        ),
        ("Until the Tradeweb feed is back, no rates trading — nothing new", None, "risk_limit"),
        ("no trading today, bank holiday", None, None),
        ("Feed's back. Rates trading can resume.", None, "risk_limit"),
        ("everybody halves CEE rates gross by 14:00 tomorrow", None, "risk_limit"),
        ("raising your SOFR bucket to 175k through Friday", None, "risk_limit"),
        ("BWIC results: won 2 of 4 — 24m FR 5.5 at TBA+1-04", None, "trade_fill"),
        ("list results: 5 of 6 traded, $12.25mm face", None, "trade_fill"),
        ("got 2bn hgb 35 at 6.95, 1bn still working", None, "trade_fill"),
        ("doing the hedge on tbsp, not voice", None, "route_decision"),
        (
            "6.0 to Dealerweb, hedges through the futures desk TWAP — can you run it?",
            None,
            "route_decision",
        ),
        ("can you send it?", None, None),
        ("Kessler-Strip ist jetzt komplett abgesichert", None, "position_change"),
        ("Plan to get vega under 160k: sell 200m 3m10y straddles at 105.0", None, "trade_proposal"),
        ("Plan for the offsite: buy 20 pizzas", None, None),
        ("Je change d'avis sur l'OLO-DSL : le déficit dérape", None, "thesis_change"),
        ("Le resserrement vers 26 pb n'est plus mon scénario central.", None, "thesis_change"),
        ("Dobra, przestaję wierzyć w eurpln 4.15 w tym kwartale", None, "thesis_change"),
        ("Banka hisselerinde long tezim bitti", None, "thesis_change"),
        ("TRT 2030'lardan 250 milyon TL nominal çıktık", None, "position_change"),
        ("20m'yi 360T'de 3 bankaya RFQ atıyorum", None, "route_decision"),
        ("走国泰君安期货的 CTP 通道，限价 108.00 直接挂。", None, "route_decision"),
        (
            "new entries in Korean autos & auto parts (HMC, Kia, HL Mando) are blocked today",
            None,
            "risk_limit",
        ),
        ("[RISK] RULE SET book=KR-OPT action=BLOCK_NEW_SHORT underlying=K200", None, "risk_limit"),
        ("plus aucune nouvelle entrée sur les signaux de basis", None, "risk_limit"),
        ("on s'est trompés ce matin, le signal était faux", None, "thesis_change"),
        ("my +7.25 offer is working with them, 5kt/m.", None, "trade_confirmation"),
        ("my 2 cents: the offer is working", None, None),
        ("Basket MIB finito ✅ 40/40 nomi, €28,19m", None, "trade_fill"),
        ("ho finito il report", None, None),
        (
            "Panier C40: VWAP fino alla chiusura col nostro algo, niente broker",
            None,
            "route_decision",
        ),
        ("vado col nostro collega", None, None),
        ("showing it via SSY and Clarksons both, first to hit gets it.", None, "route_decision"),
        ("I was showing it via the chat yesterday", None, None),
        ("Yes — do the last 60 by hand on screen, small clips, no algo.", None, "route_decision"),
        ("I do it by hand every morning, the crossword", None, None),
        ("I'm not going to work it manually or move it, that's his order", None, None),
        ("Vai no algo IS do Goldman, NYSE + dark", None, "route_decision"),
        ("vai no almoço?", None, None),
        ("Nie czeka — już zamknięte: odkupiłam 60 ZNM5 po 110-29", None, "position_change"),
        ("見方を変えます。", None, "thesis_change"),
        ("執行は東京のDMA経由で指値で出します。", None, "route_decision"),
        # a review's everyday senses of the round's shapes
        ("we won 2 of 4 games at the five-a-side", None, None),
        ("the gift basket is done", None, None),
        ("got 2 tickets for Coldplay at 85 each", None, None),
        ("The plan for Friday: buy 2 cakes at 3pm", None, None),
        ("Das Haus ist jetzt komplett abgesichert", None, None),
        ("my 20 offer is in for the couch", None, None),
        ("showing it via Zoom", None, None),
        ("doing the call on zoom, not voice", None, None),
        ("con el algoritmo de Instagram no hay manera", None, None),
        ("Vai no dark mode", None, None),
        ("ich würde das Auto jetzt verkaufen", None, None),
        ("ich würde ihn nicht verkaufen", None, None),
        ("on s'est trompés de salle", None, None),
        ("n'est plus mon scénario préféré pour les vacances", None, None),
        ("ok", "team lunch at 1, passt?", None),
        ("nie wiem", "Propozycja: kupujemy 10 mln EURPLN po 4,2810", None),
        (
            "hayır Kerem, PPK öncesi duration eklemiyoruz. perşembeden sonra konuşalım.",
            "Öneri: 2032 tahvilden 50 mio TL alalım, 28,40'tan",
            "trade_approval",
        ),
        ("5 MİLYON USDTRY ALDIK 38.20", None, "trade_fill"),
        ("RFQ ATIYORUM 360T'de 3 bankaya", None, "route_decision"),
        ("野村にやります、5000株", None, "route_decision"),
    ],
)
def test_the_tenth_rounds_shapes_and_their_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


# Shapes from the eleventh round (read on the development desks after they were measured),
# each beside the everyday text that must stay ordinary
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("Priya: short-gamma is capped at 40 lots per leg (down from 60)", None, "risk_limit"),
        ("the parking is capped at 40 cars (down from 60)", None, None),
        ("class size is capped at 25 (down from 30)", None, None),
        ("Bid is live on NDS-OM: ₹25cr at 6.7800%, the rest later", None, "trade_confirmation"),
        ("the auction bid is live on eBay: 3 lamps at 40", None, None),
        (
            "FILL ord=EQ-241016-0219 SELL 40,000 ICICIBANK EQ NSE avg_px=1263.40 broker=DMA",
            None,
            "trade_fill",
        ),
        ("OK, view change. I'm no longer bearish duration", None, "thesis_change"),
        ("no longer a usdcad seller here", None, "thesis_change"),
        ("I'm no longer a smoker", None, None),
        ("i'm not bullish front anymore", None, "thesis_change"),
        ("not hungry anymore", None, None),
        ("I no longer expect a steepener into July", None, "thesis_change"),
        ("I no longer expect the parcel today", None, None),
        ("i'm no longer in the 'mnb cuts in h1' camp", None, "thesis_change"),
        ("no longer in the summer camp", None, None),
        ("We withdraw the 'CNB cuts in May' call; base case is a hold", None, "thesis_change"),
        ("We withdraw the basis-tightener recommendation", None, "thesis_change"),
        ("we dropped the conference call", None, None),
        ("we withdraw the invitation", None, None),
        ("Paso a neutral en el asw", None, "thesis_change"),
        ("paso a buscarte a las 8", None, None),
        ("Mudamos nossa visão de altista para neutra no arábica", None, "thesis_change"),
        ("ya no espero recorte en noviembre", None, "thesis_change"),
        ("ya no veo a Juan desde el lunes", None, None),
        ("moving CYBR to neutral for my book", None, "thesis_change"),
        ("moving the meeting to Thursday", None, None),
        (
            "Stop στην ALPHA (1,2 εκ. τεμ.) ανεβαίνει σε 1,665 σε κλείσιμο",
            None,
            "stop_or_target_change",
        ),
        ("για σήμερα max απώλεια στις τράπεζες €40k", None, "risk_limit"),
        ("Το view μου στο Hi-5 γυρίζει: από bearish σε bullish", None, "thesis_change"),
        ("ο καιρός από βροχερός σε ηλιόλουστος", None, None),
        ("Stelnw stin Clarksons, clearing SGX.", None, "route_decision"),
        ("βάζω καφέ, θέλει κανείς;", None, None),
        ("Rempli ! 300 CGBH25 à 128,39 en moyenne", None, "trade_fill"),
        ("J'ai rempli le formulaire de 3 pages", None, None),
        ("le frigo est rempli", None, None),
        ("amended May bid to -12.72 w/ Net Energy", None, "trade_confirmation"),
        ("raised my offer to 450k for the house", None, None),
        # a review's everyday senses of the round's words and shapes
        ("Paso a neutral el coche y lo empujamos", None, None),
        ("Amazon का ऑर्डर कन्फर्म हो गया, कल आएगा", None, None),
        ("Đơn hàng Shopee đã xác nhận, thứ Ba giao", None, None),
        ("קנינו מקרר ב-3,000", None, None),
        ("Купили холодильник за 30 тысяч", None, None),
        ("Κλείσαμε τραπέζι για τις 9", None, None),
        ("I'm not short of time anymore", None, None),
        ("The Smiths are no longer buyers, the sale fell through", None, None),
        ("switched the car to neutral", None, None),
        ("We withdraw the 'team of the year' call", None, None),
        ("Net, summed across expiries — same definition as before.", "gross or net?", None),
        ("3) Rolar a junio: nos ahorramos un roll más en abril.", None, None),
        ("האוקשן ב-14,550. אני על הביד עם 25 אלף ב-14,560, עוד לא מולא.", None, None),
        # Hindi and Hinglish, Hebrew, Arabic and Arabizi, Russian, Greek, Indonesian and
        # Malay, Vietnamese: desk words written from knowledge of the languages, before
        # any desk in them was read; five decisions and five look-alikes of each, from
        # the cases a review wrote for them
        ("मंजूर", "SBIN 2000 shares 810 pe kharidne ka proposal hai, approve karo", "trade_approval"),
        ("INFY की पोजीशन बंद कर दी", None, "position_change"),
        ("confirm kar diya, sell 300 LT @ 3550", None, "trade_confirmation"),
        ("IT sector pe ab bearish hain, view badal gaya", None, "thesis_change"),
        ("aaj se intraday loss limit 5 lakh kar di gayi", None, "risk_limit"),
        ("office mein chai ki limit do cup hai lol", None, None),
        ("मीटिंग रद्द हो गई है", None, None),
        ("position mein kuch change nahi kiya", None, None),
        ("kya stop loss upar kar dein?", None, None),
        ("stop abhi bhi 2400 pe hai", None, None),
        ("מציע לקנות 1000 TEVA ב-35, מאשרים?", None, "trade_proposal"),
        ("צמצמנו את הפוזיציה בחצי", None, "position_change"),
        ("הזזתי את הסטופ ל-34.5", None, "stop_or_target_change"),
        ("אישור פקודה: BUY 2000 LUMI LMT 28.5", None, "trade_confirmation"),
        ("ניתבתי את הפקודה ל-IEX", None, "route_decision"),
        ("אני מאושר היום", None, None),
        ("התזה נשארת אותו דבר", None, None),
        ("מתכנן להגדיל פוזיציה בשבוע הבא", None, None),
        ("אם הוא יורד מתחת ל-200 הייתי יוצא", None, None),
        ("הדרך הביתה חסומה, יש פקקים", None, None),
        ("رفعنا وقف الخسارة إلى 84", None, "stop_or_target_change"),
        ("موافق", "proposal: buy 1000 RELIANCE at 2450, ok?", "trade_approval"),
        ("eshtarait 3k ADNOCDIST 3ala 3.65", None, "trade_fill"),
        ("بعت 2000 سهم EMAAR ب 7.10", None, "trade_fill"),
        ("تم تخفيض حد المخاطر إلى مليوني درهم", None, "risk_limit"),
        ("shu ra2yak neshtere?", None, None),
        ("el meeting etlagha", None, None),
        ("تمام", "نتغدى سوا؟", None),
        ("الأمر لسا مفتوح؟", None, None),
        ("كم حد المخاطر؟", None, None),
        ("Сократил позицию по AAPL вдвое", None, "position_change"),
        ("Предлагаю шорт NVDA от 480, цель 450", None, "trade_proposal"),
        ("Дневной лимит убытка поднят до 200к", None, "risk_limit"),
        ("Купил 500 AAPL по 182.5", None, "trade_fill"),
        ("Цель подняли до 195", None, "stop_or_target_change"),
        ("Если пробьёт 180, я бы продал", None, None),
        ("Может продадим часть SBER?", None, None),
        ("Стоп пока не трогаю", None, None),
        ("Купил молоко и хлеб по дороге", None, None),
        ("Думаю, рынок завтра откроется гэпом вниз", None, None),
        ("Αγόρασα 500 AAPL στα 182.5", None, "trade_fill"),
        ("Ανέβασα το στοπ στο break even", None, "stop_or_target_change"),
        ("Απορρίπτεται, πολύ μεγάλο μέγεθος", None, "trade_approval"),
        ("Το ημερήσιο όριο ζημίας αυξήθηκε στις 200k", None, "risk_limit"),
        ("Εγκρίνω, πάμε", None, "trade_approval"),
        ("Πούλησα επιτέλους το παλιό μου αυτοκίνητο", None, None),
        ("Αγόρασα γάλα και ψωμί στο δρόμο", None, None),
        ("Τι λέτε για stop στο 178;", None, None),
        ("Περιμένω στη στάση του λεωφορείου", None, None),
        ("Είδε κανείς τα αποτελέσματα της NVDA;", None, None),
        ("kupil 200 TSLA po 245", None, "trade_fill"),
        ("Posisi EURUSD sudah ditutup", None, "position_change"),
        ("zayavka vystavlena, 300 GAZP limit 164", None, "trade_confirmation"),
        ("ya", "Proposal: buy 500 AAPL at 182, stop 178. OK?", "trade_approval"),
        ("Posisi AAPL dikurangi setengah", None, "position_change"),
        ("Lagi nunggu di halte bus", None, None),
        ("Saya konfirmasi rapat jam 15:00", None, None),
        ("Saya fikir nak jual, tapi tunggu dulu", None, None),
        ("an spasei to 1.08 tha poulousa", None, None),
        ("Di mal lagi diskon, semua 50%", None, None),
        ("Ok, đồng ý", "Proposal: buy 500 AAPL at 182, stop 178. OK?", "trade_approval"),
        ("Giảm một nửa vị thế AAPL", None, "position_change"),
        ("Đề nghị mua 200 MSFT giá 410", None, "trade_proposal"),
        ("Xác nhận lệnh bán 200 TSLA", None, "trade_confirmation"),
        ("Đồng ý, vào lệnh", None, "trade_approval"),
        ("Mua AAPL bây giờ không?", None, None),
        ("Nếu thủng 180 thì tôi bán", None, None),
        ("Xác nhận cuộc họp lúc 15:00", None, None),
        ("Hạn mức thẻ tín dụng hết rồi, haha", None, None),
        ("Nếu lên 1.09 thì short", None, None),
    ],
)
def test_the_eleventh_rounds_shapes_and_their_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


PROPOSAL = "proposal: buy 5k AAPL at 189.40, stop 185 — ok?"


# Twelfth round: desk words for Hungarian, Romanian, Finnish, Estonian, Tagalog (and
# Taglish), Swahili, Nigerian Pidgin and Afrikaans, and Thai rules of their own, written by
# reviewers from their knowledge of the languages; cases from their own sets (written
# before they read the rules): four decisions of different types and three look-alikes each
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("Javaslat: OTP long 5k 14800-on, stop 14500, cél 15400. Mehet?", None, "trade_proposal"),
        ("Jóváhagyva, mehet az 5k OTP.", None, "trade_approval"),
        ("Megbízás visszaigazolva: OTP vétel 5k limit 14800.", None, "trade_confirmation"),
        ("Teljesült: vettünk 5k OTP-t 14795-ön.", None, "trade_fill"),
        ("Az OTP 14800 körül mozog, a 14500 erős támasz.", None, None),
        ("Ha 395 fölé megy az EURHUF, zárnám.", None, None),
        ("Talán holnap veszek egy kis Richtert.", None, None),
        ("Propun long TLV 10k la 24.50, stop 23.90, target 26.", None, "trade_proposal"),
        ("Aprobat, dă-i drumul la TLV 10k.", None, "trade_approval"),
        ("Ordin confirmat: cumpărare 10k TLV limit 24.50.", None, "trade_confirmation"),
        ("Executat: am cumpărat 10k TLV la 24.48.", None, "trade_fill"),
        ("TLV se tranzacționează la 24.50, suport la 24.", None, None),
        ("Mutăm stopul?", None, None),
        ("Dacă sparge 4.98 aș închide.", None, None),
        (
            "Ehdotus: Nokia long 50k @ 3.45, stop 3.35, tavoite 3.70. Mennäänkö?",
            None,
            "trade_proposal",
        ),
        ("Hyväksytty, mene Nokia 50k.", None, "trade_approval"),
        ("Toimeksianto vahvistettu: osto 50k NOKIA limit 3.45.", None, "trade_confirmation"),
        ("Toteutui: ostettiin 50k Nokiaa 3.448.", None, "trade_fill"),
        ("Nokia 3.45 tasolla, tuki 3.40.", None, None),
        ("Siirretäänkö stoppia?", None, None),
        ("Jos EURSEK rikkoo 11.50, sulkisin.", None, None),
        ("Ettepanek: LHV long 10k @ 3.80, stop 3.70, siht 4.10. Läheb?", None, "trade_proposal"),
        ("Heaks kiidetud, mine edasi LHV 10k.", None, "trade_approval"),
        ("Order kinnitatud: ost 10k LHV1T limiit 3.80.", None, "trade_confirmation"),
        ("Täidetud: ostsime 10k LHV-d 3.79 pealt.", None, "trade_fill"),
        ("LHV 3.80 peal, tugi 3.70.", None, None),
        ("Kui EURSEK murrab 11.50, siis ma sulgeksin.", None, None),
        ("Võib-olla ostan homme natuke TAL1T-d.", None, None),
        ("Propose ko: buy 5k BDO at 142.50, stop 139. Go ba tayo?", None, "trade_proposal"),
        ("Approved na, sige ituloy ang 5k BDO.", None, "trade_approval"),
        ("Confirmed ang order: buy 5k JFC @ 210 limit.", None, "trade_confirmation"),
        ("Filled na, 5k BDO @ 142.45.", None, "trade_fill"),
        ("BDO nasa 142 ngayon, resistance sa 145.", None, None),
        ("Malakas ang bentahan sa PSEi, bumaba ng 1.2%.", None, None),
        ("Kung bumagsak sa 56.50, i-cut ko siguro.", None, None),
        ("Napendekeza tununue 5k SCOM kwa 14.20, stop 13.80. Tuendelee?", None, "trade_proposal"),
        ("Imeidhinishwa, endelea na 5k SCOM.", None, "trade_approval"),
        ("Order imethibitishwa: nunua 5k KCB @ 38.00 limit.", None, "trade_confirmation"),
        ("Imejazwa, 5k SCOM @ 14.18.", None, "trade_fill"),
        ("SCOM iko 14.20 sasa, upinzani ni 14.50.", None, None),
        ("Soko limeshuka 1.5% leo, wauzaji ni wengi.", None, None),
        ("Kama ikivunja 130, ningepunguza.", None, None),
        ("Make we buy 5k ZENITHBANK for 38.50, stop 37. Una dey in?", None, "trade_proposal"),
        ("Oga don approve am, make una run the 5k ZENITH.", None, "trade_approval"),
        ("Order don confirm: buy 5k MTNN @ 210 limit.", None, "trade_confirmation"),
        ("E don fill, 5k ZENITH @ 38.45.", None, "trade_fill"),
        ("ZENITH dey 38.50 now, resistance na 40.", None, None),
        ("Market don fall 1.5% today, sellers plenty.", None, None),
        ("If e break 1,560, I fit cut am.", None, None),
        ("Voorstel: koop 5k SBK by 215.50, stop 210. Gaan ons?", None, "trade_proposal"),
        ("Goedgekeur, gaan voort met die 5k SBK.", None, "trade_approval"),
        ("Order bevestig: koop 5k NPN @ 3200 limiet.", None, "trade_confirmation"),
        ("Gevul, 5k SBK @ 215.45.", None, "trade_fill"),
        ("SBK staan op 215 nou, weerstand by 220.", None, None),
        ("Die mark het 1.5% gedaal, baie verkopers.", None, None),
        ("As dit deur 18.50 breek, sal ek sny.", None, None),
        ("ขออนุมัติ short S50H25 10 สัญญา ที่ 905 SL 915", None, "trade_proposal"),
        ("อนุมัติครับ", PROPOSAL, "trade_approval"),
        ("รับออเดอร์แล้วครับ ซื้อ SCB 30,000 หุ้น @ 118", None, "trade_confirmation"),
        ("ได้ของแล้ว PTT 100k หุ้น เฉลี่ย 34.48", None, "trade_fill"),
        ("PTT แนวรับ 33.75 แนวต้าน 35.00 วอลุ่มเบาบาง", None, None),
        ("SET ปิด 1,420 ลบ 8 จุด ต่างชาติขายสุทธิ 2 พันล้าน", None, None),
        ("ทองทะลุแนวต้าน 2,400 ไปแล้ว แรงซื้อหนาแน่น", None, None),
    ],
)
def test_the_twelfth_rounds_languages_and_their_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


# Twelfth round, from a review of the new words: a word of one language that is an
# ordinary word of another the rules read must neither veto a decision there nor make one
# ("ha" Spanish and Italian, "mis" French, "abi" Turkish, "erste" German, "rmb", "otp",
# "nu" Dutch, "da" Italian, "tara" Turkish …); Thai phrases inside longer words
# (หาก in หากำไร, ไหม in ไหม้) and numbers that are no trade size ("555", "3 กิโล")
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("Ha comprado 5k SAN a 4.10", None, "trade_fill"),
        ("Ha venduto 5k ENI a 14.20", None, "trade_fill"),
        ("Ha, sold 5k AAPL at 189.40", None, "trade_fill"),
        ("Mis le stop à 1.0950 sur l'EURUSD", None, "stop_or_target_change"),
        ("Abi sattım 5k THYAO", None, "trade_fill"),
        ("Cum dividend: bought 5k VOD at 72", None, "trade_fill"),
        ("Sudah beli 5k BBCA di 9800, market buka gap up", None, "trade_fill"),
        ("Bought 5k KR, adding to the grocery names", None, "trade_fill"),
        ("Nu kijk ik er even naar", PROPOSAL, None),
        ("Da domani vediamo", PROPOSAL, None),
        ("Da igual, mañana", PROPOSAL, None),
        ("Nem sei ainda", PROPOSAL, None),
        ("Ne zaman giriyoruz", PROPOSAL, None),
        ("Gaan we morgen bekijken", PROPOSAL, None),
        ("Game over for this one", PROPOSAL, None),
        ("Tee time at 3", PROPOSAL, None),
        ("Die erste Order ist an den Kunden geschickt", None, None),
        ("Send the RMB to the client by 5pm", None, None),
        ("sent the OTP to your phone", None, None),
        ("sent the SEB report to Anna", None, None),
        ("Tarif raja naik 5%", None, None),
        ("perk raised to 50 per month", None, None),
        ("Tais limites foram reduzidos", None, None),
        ("Erken kapanış: emir yok", None, None),
        ("alles geschlossen wegen Feiertag", None, None),
        ("QR kodu tara, 5k ödeme", None, None),
        ("changed my mind on the restaurant, new place at 8", None, None),
        ("Sebastian kautta kuulin", None, None),
        ("Nordean kautta tuli uutinen", None, None),
        ("deskin kautta kysyin asiakkaalta", None, None),
        ("หากำไรได้แล้ว ปิดสถานะ PTT 100k", None, "position_change"),
        ("ขายทิ้ง PTT 100k ไฟไหม้", None, "position_change"),
        ("ผ่านมาดูเฉยๆ", PROPOSAL, None),
        ("ขอโทษ มองผิด 555", None, None),
        ("ลดน้ำหนักได้ 3 กิโล", None, None),
        ("สอบไม่ผ่าน 2 วิชา", None, None),
        ("อีเมลตีกลับ 3 ฉบับ", None, None),
        ("ไม่ได้ครับ", PROPOSAL, "trade_approval"),
    ],
)
def test_one_languages_words_do_not_misread_another(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


CARD = "SIGIL ▸ SGL-4484 ▸ LONG ETH-PERP\nentry   4,150 - 4,165\nstop    4,060\ntp1     4,290"


def test_a_verdict_with_its_reasons_answers_a_signal_card() -> None:
    rejection = (
        "no. funding's still positive and the short calls already leave us the upside we "
        "want; not stacking delta into the data."
    )
    decided = RULES.decide(rejection, parent=CARD)
    assert decided is not None and decided.event_type == "trade_approval"
    # the same words under a card that proposes nothing decide nothing
    assert RULES.decide(rejection, parent="LUNCH ▸ pizza or sushi\nvote by 12") is None


NUMBERED_CARD = (
    "📇 TRADE CARD #2418 | pair: USD/KES 3M NDF | action: BUY USD 5,000,000 vs KES at 130.55"
)
HALTED = f"{PROPOSAL} AAPL still halted?"
LONG_REASONS = (
    " — and please tell Ruth before you start so the risk screen makes sense to her, "
    "thanks all, back after the call with the client"
)
"""Reasons long enough that the reply is no short one: only its verdict decides."""


@pytest.mark.parametrize(
    ("reply", "parent", "decides"),
    [
        # a verdict beside the number of the card it answers, or a size it grants
        (
            "reject 2418 — we don't pay 4% to hedge a currency the central bank is sitting "
            "on. revisit if reserves drop",
            NUMBERED_CARD,
            True,
        ),
        ("ok 40k" + LONG_REASONS, PROPOSAL, True),
        # a number the parent does not carry, a name, an aside inside the words: none
        (
            "reject 2419 — we don't pay 4% to hedge a currency the central bank is sitting "
            "on. revisit if reserves drop",
            NUMBERED_CARD,
            False,
        ),
        ("AAPL yes, since 10:05", HALTED, False),
        ("OMS reject, resending", PROPOSAL, False),
        ("KYC pass, docs are in", PROPOSAL, False),
        ("not 5k today, 2k max", PROPOSAL, False),
        # a rejection after an appraisal, an assent before "but"
        ("good eye but no" + LONG_REASONS, PROPOSAL, True),
        ("nice idea but not today — the Fed is tomorrow", PROPOSAL, True),
        ("ok but half in the auction, half on the screen after" + LONG_REASONS, PROPOSAL, True),
        ("ok but let me check the borrow first. back in 5", PROPOSAL, False),
        ("asked Klaus but no, still on the phone", PROPOSAL, False),
        ("thanks but no, I'm good", PROPOSAL, False),
        # a number the parent holds but not as its card's: an answer to another question
        ("190 yes, just checked", f"{PROPOSAL} is 190 still the offer?", False),
        ("checked but no, nothing from risk", PROPOSAL, False),
        # the same words under a message that proposes nothing
        ("good eye but no — not your book, and Tal has enough on today.", "lunch at 1?", False),
    ],
)
def test_a_verdict_is_read_past_the_card_it_names_and_around_but(
    reply: str, parent: str, decides: bool
) -> None:
    assert (_rules_read(reply, parent) == "trade_approval") is decides


# Shapes from the twenty-ninth round (read on its development desks after they were
# measured), each beside the everyday or desk text that must stay as it was
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("so: cutting the CA GO 5s '45 from 6mm to 3mm.", None, "position_change"),
        ("trim the marketing budget from $2m to $1.5m", None, None),
        ("CBOE: take the stop off.", None, "stop_or_target_change"),
        ("we can take the last two stops off the tour", None, None),
        ("good. FPT at 9.8% — no more FPT entries today from anyone", None, "risk_limit"),
        ("no more new risk today", None, "risk_limit"),
        ("no more entries in the raffle, sorry", None, None),
        ("no more new entries for the raffle", None, None),
        ("I'll do a temp raise to USD 36k through T+1 for the auction only", None, "risk_limit"),
        ("a temp raise of 3% for the team this year", None, None),
        (
            "CONFIRM MATCHED | trade=FX-0813-0031 | SELL USD 6,000,000 / BUY PHP 344,340,000 "
            "| rate 57.390 | cpty PACIFICA BANK | no action for ops",
            None,
            "trade_confirmation",
        ),
        ("RECON | 14 matched, 0 breaks | no action for ops", None, None),
        (
            "🚨 BREACH KE_SMALLCAP_CONC 10.4% / 10.0% limit | driver: HFCK +9.8% intraday "
            "(price move, no trades) | book KE_EQ",
            None,
            "risk_limit",
        ),
        ("no breach, no trades, nothing to do", None, None),
        ("taking it, half size.", PROPOSAL, "trade_approval"),
        ("we'll take it.", PROPOSAL, "trade_approval"),
        ("I'll take it up with risk tomorrow", PROPOSAL, None),
        ("we'll take it offline", PROPOSAL, None),
        ("taking it to the committee on Monday", PROPOSAL, None),
    ],
)
def test_the_twenty_ninth_rounds_shapes_and_their_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


# The twenty-ninth round's rules narrowed (thirtieth round): each rule's look-alikes that a
# review found in everyday text, beside the desk text the rule was written for
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        ("good. FPT at 9.8% — no more FPT entries today from anyone", "risk_limit"),
        ("no more NVDA entries before the print", "risk_limit"),
        ("no more JIRA entries today", None),
        ("No more SAFCOM entries from anyone today", "risk_limit"),
        ("no more new risk today", "risk_limit"),
        ("no more new longs in tech today", "risk_limit"),
        ("no more new shorts until the borrow clears", "risk_limit"),
        ("no more new shorts for me, the drawer's full", None),
        ("no more new positions this year, hiring freeze", None),
        ("no more new risk assessments this quarter", None),
        ("I'll do a temp raise to USD 36k through T+1 for the auction only", "risk_limit"),
        ("temporary increase to 40m until the auction settles", "risk_limit"),
        ("temp raise to 40m for today only", "risk_limit"),
        ("fine, temp raise to 50m on your book", "risk_limit"),
        ("temp raise to 40m for this week", "risk_limit"),
        ("temp raise to 40m, revert Monday", "risk_limit"),
        ("she got a temp raise to 80k", None),
        ("so: cutting the CA GO 5s '45 from 6mm to 3mm.", "position_change"),
        ("trimming the TSQR long from 120k to 80k shares", "position_change"),
        ("bring the carry trade from 40m to 20m", "position_change"),
        ("cut the print run from 10k to 5k copies", None),
        ("we brought the guest list from 2k to 1.5k", None),
        ("CBOE: take the stop off.", "stop_or_target_change"),
        ("taking off the stop on the 2s", "stop_or_target_change"),
        ("take the stops off the 2s", "stop_or_target_change"),
        ("take the stop off my ES", "stop_or_target_change"),
        ("take the stop off until after NFP", "stop_or_target_change"),
        ("take the stop off the apple long", "stop_or_target_change"),
        ("take the stop off the pair", "stop_or_target_change"),
        ("take the Brightwater stop off", "stop_or_target_change"),
        ("we can take the last stop off the tour", None),
        ("take the stop off the tour bus", None),
        (
            "🚨 BREACH KE_SMALLCAP_CONC 10.4% / 10.0% limit | driver: HFCK +9.8% intraday "
            "(price move, no trades) | book KE_EQ",
            "risk_limit",
        ),
        (
            "BREACH | stress test loss 45m / 40m limit | driver: rates shock, no trades",
            "risk_limit",
        ),
        ("BREACH | desk VaR over limit | driver: vol, no trades | not a drill", "risk_limit"),
        ("BREACH | HY bucket 105 / 100 | driver: spread move, no trades", "risk_limit"),
        ("BREACH: single-name 12mm vs 10mm | driver: price, no trades", "risk_limit"),
        ("BREACH TEST | limit check ok | no action", None),
        ("BREACH | VaR 12.3m / 12.0m | drill, no action", None),
        ("CONFIRM MATCHED | UST 2s 50mm | no action for ops", "trade_confirmation"),
        ("CONFIRM MATCHED | MarkitWire 8812345 | no action for ops", "trade_confirmation"),
        ("confirmed matched with Citi, no action for ops", "trade_confirmation"),
        ("Confirmation matched: ref 88123, no action for ops", "trade_confirmation"),
        ("confirmed matched the raffle tickets, no action needed", None),
        ("Confirmation matched: your booking ref 4411, no changes needed", None),
    ],
)
def test_the_twenty_ninth_rounds_rules_narrowed_against_their_look_alikes(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


GERMAN_SUGGESTION = (
    "118,06, also +60 Ticks gegen uns seit heute früh. Ich würde die Hälfte zurückkaufen, "
    "bevor uns der Stop komplett rausholt."
)


# Verdicts the thirtieth round read on its development desks (a size granted as the verdict,
# an order at a limit put as a question, "go with it", "mach"), each beside look-alikes
@pytest.mark.parametrize(
    ("reply", "parent", "event_type"),
    [
        (
            "make it 3m, the FX limit is 6m and I want room for Devesh tonight. And I want to "
            "see the stop in the system before you walk away from the screen.",
            PROPOSAL,
            "trade_approval",
        ),
        ("make it 3m, the FX limit is 6m and I want room for Devesh tonight.", "lunch at 1?", None),
        ("make it 3pm, the room is booked until then and the client is late", PROPOSAL, None),
        ("make it 2k, let me think about it", PROPOSAL, None),
        ("go", "fair. UOB then — 150k at 35.40 limit?", "trade_approval"),
        ("yes", "fair. UOB then — 150k at 35.40?", None),
        ("go", "was the fill 150k at 35.40?", None),
        ("yes", "did they fill the 150k at 35.40 limit?", None),
        ("no", "any fills on the 150k at 35.40 limit?", None),
        ("yes", "we bought 150k at 35.40 limit?", None),
        ("go", "status of the 150k at 35.40 limit?", None),
        ("yes", "working 150k at 35.40 limit?", None),
        ("yes", "Auction: 2 lots at 35 or better?", None),
        ("yes", "bought 150k at 35.40 limit?", None),
        ("go", "UOB: 150k @ 35.40 lmt?", "trade_approval"),
        (
            "go with it. and if the CFO pushes back on the long bond you tell him the level is "
            "already through the secondary comp and don't promise anything about a re-offer",
            PROPOSAL,
            "trade_approval",
        ),
        ("go with it?", PROPOSAL, None),
        ("mach. 75 zurück.", GERMAN_SUGGESTION, "trade_approval"),
        ("mach mal langsam, ich les noch", GERMAN_SUGGESTION, None),
        ("ja", "Ich würde mich bei Aldi eindecken.", None),
        ("mach.", "Stop 118,20 ist nur noch 14 Ticks weg.", None),
    ],
)
def test_the_thirtieth_rounds_verdicts_and_their_look_alikes(
    reply: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(reply, parent) == event_type


# Desk speech read on the thirtieth round's development desks, each beside look-alikes
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        (
            "I'm putting a block on new entries in index futures for the rest of the session",
            "risk_limit",
        ),
        ("I'm putting a block on new trades in Brightwater", "risk_limit"),
        ("the bank put a block on new trades in my account", None),
        ("we're putting a block on new entries for the raffle", None),
        ("HR is putting a block on all new positions until the reorg", None),
        ("I've put a block on new entries to the competition, we're full", None),
        ("we're putting a block on new risk assessments this quarter", None),
        ("The account is restricted for selling until KYC is done", None),
        ("the channel is now restricted to shorts only", None),
        ("Marketplace: this channel is restricted for buying and selling", None),
        ("selling 6 of the 12mm now, rest into any strength", "position_change"),
        ("selling 6 of the 12 tickets now", None),
        (
            "moving the onshore stop from 7.2340 to 7.2320 for the night session — it's still "
            "~55 pips above spot",
            "stop_or_target_change",
        ),
        ("debating moving the stop from 1.0850 to 1.0820 — still 40 pips away", None),
        ("I keep moving my stop from 1.0850 to 1.0820 and it's still not right", None),
    ],
)
def test_the_thirtieth_rounds_desk_speech_and_its_look_alikes(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


# The thirtieth round's third review left these: the stop exemption read past any word before
# its verb, breach alerts with a figure against another or a risk word read everyday
# notices, temporary-raise endings read salaries and missed desk ones, a confirmation with
# any long number read an order of a shop (ADR 0056)
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        (
            "moving the onshore stop from 7.2340 to 7.2320 for the night session — it's still "
            "~55 pips above spot",
            "stop_or_target_change",
        ),
        ("I'm moving my stop from 1.0850 to 1.0820, still 40 pips away", "stop_or_target_change"),
        (
            "ok, we've moved the stop from 1.0850 to 1.0820 — it's still well below spot",
            "stop_or_target_change",
        ),
        ("without moving the stop from 1.0850 to 1.0820 it's still fine", None),
        ("no need moving the stop from 1.0850 to 1.0820, it's still far", None),
        ("tired of moving my stop from 1.0850 to 1.0820, it's still not right", None),
        (
            "I was moving my stop from 1.0850 to 1.0820 when the fill came, it's still at 1.0850",
            None,
        ),
        ("BREACH | HY bucket 105 / 100 | driver: price move, no trades", "risk_limit"),
        ("BREACH | 12mm vs 10mm | no action for ops", "risk_limit"),
        ("BREACH: VaR 12.4m vs 12m limit, no action needed", "risk_limit"),
        ("Breach: gamma 1.2m vs 1m, no action needed", "risk_limit"),
        ("BREACH: 12k vs 10k users affected, no action needed", None),
        ("Breach: Delta flight data leaked, no action needed", None),
        ("temp raise to 40m for the rest of the week", "risk_limit"),
        ("temp raise to 40m for 2 days", "risk_limit"),
        ("temp raise to 40m for NFP", "risk_limit"),
        ("temp raise to 40m, reverts to 30m at the close", "risk_limit"),
        ("temp raise to 45k, reverts in April", None),
        ("temp raise to 45k for the month", None),
        ("CONFIRM MATCHED | MarkitWire 8812345 | no action for ops", "trade_confirmation"),
        ("confirmed matched, trade ref 88123456, no action for ops", "trade_confirmation"),
        ("Confirmed matched: order 4411223, no action needed", None),
        # the round's review: the first form's narrowing dropped desk lines
        ("FYI moving the stop from 1.0850 to 1.0820, still 40 pips away", "stop_or_target_change"),
        (
            "heads up - moving the stop from 1.0850 to 1.0820, still 40 pips",
            "stop_or_target_change",
        ),
        ("I'll be moving the stop from 1.0850 to 1.0820, still 40 pips", "stop_or_target_change"),
        ("Debating moving the stop from 1.0850 to 1.0820 — still 40 pips away", None),
        ("BREACH | 105 vs 100 lots | no action needed", "risk_limit"),
        ("BREACH | 52mm vs 50mm EURUSD | no action needed", "risk_limit"),
        ("BREACH | 12.4m vs 12m USD | no action needed", "risk_limit"),
        ("temp raise to 40m, reverts after the auction", "risk_limit"),
        ("temp raise to 40m for the month-end rebalance", "risk_limit"),
        ("temp raise to 40m for 48 hours", "risk_limit"),
        ("temp raise to 3k for 2 days on my card", None),
        ("CONFIRMED MATCHED | 8812345 | no action for ops", "trade_confirmation"),
        ("Confirmed matched — MW ID 8812345 — no action for ops", "trade_confirmation"),
        ("confirmed matched: ref 4411223 (your Argos order), no action needed", None),
        # the round's second review: the first mends dropped desk lines and read others
        (
            "Sam is moving the stop from 1.0850 to 1.0820, still 40 pips away",
            "stop_or_target_change",
        ),
        (
            "In light of the data I'm moving the stop from 1.0850 to 1.0820, still 40 pips away",
            "stop_or_target_change",
        ),
        ("NOT moving the stop from 1.0850 to 1.0820, still 40 pips away", None),
        ("confirmed matched 8812345, no action needed", "trade_confirmation"),
        ("confirmed matched, reference 8812345, no action for ops", "trade_confirmation"),
        ("temp raise to 40m, reverts at the end of the day", "risk_limit"),
        ("temp raise to 40m, reverts after the BoJ", "risk_limit"),
        ("temp raise to 40m for 3 months", "risk_limit"),
        ("BREACH: 12.4m vs 12m at 10:05, no action needed", "risk_limit"),
        ("BREACH: EURUSD delta over by 1.2m, no action needed", "risk_limit"),
        ("BREACH: 12k vs 10k — users affected, no action needed", None),
    ],
)
def test_the_third_reviews_look_alikes_and_the_desk_lines_beside_them(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


LUMI_PROPOSAL = (
    "proposal: sell 200k LUMI (half of it) today, and add 80k to the DSCT short as the hedge "
    "on what's left"
)
CARD_0871 = (
    "CARD #0871 | SPREAD | ES10Y–DE10Y TIGHTENER\n"
    "proposal: BUY 250 FBON Jun25 / SELL 238 FGBL Jun25"
)


# Verdicts the development desks wrote that the rules missed: a name in capitals as the
# verdict's subject, an assent with conditions after "but" or "pero" however long, a rejection
# that puts the trade off, a colleague agreed with before the verdict; each beside look-alikes
@pytest.mark.parametrize(
    ("reply", "parent", "event_type"),
    [
        (
            "LUMI yes. DSCT no — borrow is tight and DSCT pays the levy too, it's not a hedge "
            "for this.",
            LUMI_PROPOSAL,
            "trade_approval",
        ),
        ("LUMI yes. DSCT no", "proposal: buy 50k ABCD at 12.40, ok?", None),
        ("FYI yes. the room is booked", "proposal: buy 50k ABCD at 12.40, ok?", None),
        (
            "ok pero max 412 and don't let the algo go above 15% of volume. funding from ALI is "
            "a separate conversation",
            "want to buy 150k ICT up to 412, ok? thesis: Q2 throughput +9% y/y",
            "trade_approval",
        ),
        (
            "ok but let me check with risk first and I will come back to you on the size",
            PROPOSAL,
            None,
        ),
        ("no on 0871 for now, revisit post auction", CARD_0871, "trade_approval"),
        ("agree with Luísa. no on 0871 for now, revisit post auction", CARD_0871, "trade_approval"),
        ("no. revisit post auction", CARD_0871, "trade_approval"),
        ("agree with Luísa. it's a good read", CARD_0871, None),
        ("agree with the read. good note, thanks", PROPOSAL, None),
        ("no, let me think about it", PROPOSAL, None),
        ("nah, maybe next week", PROPOSAL, None),
        ("no on 2025 budget, revisit in January", "lunch at 1?", None),
        # the round's review: what the first form read
        (
            "IT yes. they fixed my laptop",
            "proposal: buy 5k AAPL at 189.40 if it holds 185, ok?",
            None,
        ),
        ("CPI no, it's on Thursday this month", "proposal: buy 5k AAPL before CPI, ok?", None),
        (
            "NY no, I'm in London all week",
            "want to sell another 5mm in NY NDF at 1349.50, ok?",
            None,
        ),
        ("AAPL yes, since 10:05", "proposal: buy 5k AAPL at 189.40 — ok? AAPL still halted?", None),
        (
            "LUMI yes. DSCT no",
            "proposal: sell 200k of LUMI today, and buy 80k of DSCT as the hedge",
            "trade_approval",
        ),
        ("KX2418 approved, go", "CARD #KX2418 | proposal: buy 5k AAPL at 189.40", "trade_approval"),
        ("I agree with Mei. no", PROPOSAL, "trade_approval"),
        ("agree with Tom. ok, call me", PROPOSAL, None),
        ("agree with Mei that we shouldn't. ok, next topic", PROPOSAL, None),
        ("agree to disagree. fine, do what you want", PROPOSAL, None),
        ("no on 0871 for now, revisit post auction", CARD_0871.replace("0871", "0872"), None),
        ("no, try again after lunch?", PROPOSAL, None),
        ("no. revisit after the auction if spreads widen", PROPOSAL, None),
        ("no, we'll revisit post auction", PROPOSAL, "trade_approval"),
        (
            "yes but we already have way too much tech exposure and the book is long beta as it "
            "is, and the last two times we did this it cost us",
            PROPOSAL,
            None,
        ),
    ],
)
def test_the_thirty_first_rounds_verdicts_and_their_look_alikes(
    reply: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(reply, parent) == event_type


# An order given to a dealer the rules do not know, by the bank's or broker's name or against
# another way of dealing; beside everyday plans of the same shape
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        (
            "putting the 364 bid through Sahel Bank as PD — Coral wants 5bp fee, Sahel does it "
            "for 2",
            "route_decision",
        ),
        (
            "parking the sell with Lagoon Securities for tomorrow's open — they have the PFA flow",
            "route_decision",
        ),
        ("doing it onshore with Sunda Bank HCMC branch, not the NDF", "route_decision"),
        ("doing the block with Castine Partners, not on the ATS", "route_decision"),
        ("I'll do it with Sarah on the phone, not in person", None),
        ("doing it with Mum on the phone, not on Zoom", None),
        ("doing the 10k run in Central Park, not Hyde Park", None),
        ("doing the 5k with Tom, not Anna", None),
        ("doing the rest in Excel, not Python", None),
        ("I'm putting it through Lloyds Bank as a transfer", None),
        ("putting the sale through Knight Frank Partners next week", None),
        ("parking the car with Hertz, not Avis", None),
        (
            "I'll leave the NDF sell with BankC on an order 1358.00 for 7.5mm, GFD.",
            "route_decision",
        ),
        ("leaving the sell order with Jefferies at 101.25, GTC", "route_decision"),
        ("I'll leave the kids with Grandma at 6 for the evening", None),
        # the round's review: what the first form read
        ("doing the hedge in the garden on Saturday, not Sunday", None),
        ("doing the switch with Monzo Bank", None),
        ("putting the offer through Knight Frank Partners", None),
        ("placing our order with Deliveroo, not Uber Eats", None),
        ("doing the block with Sarah on Tuesday, not Thursday", None),
        ("leaving the tickets with Anna at 6", None),
        ("I'll leave the order with Sam at 12", None),
        # the round's second review: what the first mends read
        ("leaving the tickets with Anna at 6.30", None),
        ("doing the switch with Virgin, not BT, for the fibre", None),
        ("placing our order with Deliveroo, not UE, extra ice", None),
        ("putting our offer through Foxtons as agent", None),
        ("we'll put the offer through Knight Frank Brokers", None),
    ],
)
def test_an_order_given_to_a_named_dealer_and_its_look_alikes(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


# Desk speech read on the thirty-first round's development desks, each beside look-alikes: a
# trade proposed beside how something stands, a limit the writer changes from one figure to
# another, a size taken off a holding
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        (
            "@Reto Meier @Anja Kaufmann (Risk) proposal: buy 150k UBSG up to 23.55 now to "
            "re-hedge APR25-BRC-07, the other 30k later if it holds 23.",
            "trade_proposal",
        ),
        (
            "want to sell USDKRW another 5mm in NY NDF at 1349.50 to add to Mei's short — view's "
            "intact and NY is where the US funds digest the NPS headline. ok? @Mei",
            "trade_proposal",
        ),
        ("want to sell 5 of my old bikes, they're still in the garage. ok?", None),
        ("proposal: sell 200 raffle tickets, the rest still sits with Anna", None),
        (
            "Morning. With BoJ next week, I'm tightening overnight JPY gross from 400mm to 300mm "
            "effective Tokyo open today. Intraday stays at 600mm.",
            "risk_limit",
        ),
        ("I'm tightening gross margin from 40% to 38% in the plan", None),
        ("I'm cutting the marketing budget from 2m to 1.5m", None),
        (
            "taking $3.5mm off the 1m USD/NGN NDF long — 2mm now, 1.5mm after 11Z",
            "position_change",
        ),
        ("taking 5 off the price for the long table", None),
        # the round's review: what the first form read, and desk lines it missed
        ("proposal: buy 20 pizzas at 12 each for friday, the office is still hungry", None),
        ("want to sell 2 tickets at 50 each, still available?", None),
        ("yesterday's proposal: buy 5k AAPL at 189.40 — still no answer from risk", None),
        ("want to sell 5mm USDKRW at 1349.50 — order's still in the system, untouched", None),
        ("I'd like to buy 100k SPY at 520, the setup is still intact", "trade_proposal"),
        ("taking £10 off the book price for staff", None),
        ("taking €30 off the long coat in the sale", None),
        ("taking another $3.5mm off the NGN long", "position_change"),
        ("get off at stop 12, not 13", None),
        ("target 80 not 75 for the exam", None),
        (
            "stop tighter than I said: 10.9750 not 10.9690, CPI-day ranges are silly",
            "stop_or_target_change",
        ),
        ("stop 10.9750 (not 10.9690)", "stop_or_target_change"),
        ("we're lifting the salary cap from 80k to 90k", None),
        ("I'm increasing the gross from 50k to 60k in your offer letter", None),
        ("Risk is tightening overnight JPY gross from 400mm to 300mm", "risk_limit"),
        # the round's second review: what the first mends read
        ("want to sell 3 lots at 20 each on eBay — the loft is still full. ok?", None),
        ("proposal: buy 2k of merch for the conference, budget still fine", None),
        ("we'd like to buy 2k of stationery at 1.50 each, cupboard still empty", None),
        ("target £1,000 not £500 for the bake sale", None),
        ("get off at stop 101 not 102", None),
        ("the stop 4.30 not 4.45 bus", None),
        ("my target is 1,200 not 1,500 a month in savings", None),
        ("we're increasing the book cap from 3 to 5 per member", None),
        ("the council is lifting the rates cap from 2% to 3%", None),
        ("I'm tightening overnight JPY gross to 300mm from 400mm", "risk_limit"),
    ],
)
def test_the_thirty_first_rounds_desk_speech_and_its_look_alikes(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


# An order dealt one way and not another, each way named (a voice trade, a platform, a dealer
# panel, a portfolio trade, a BWIC) beside what names a desk's order; beside everyday plans that
# name ways too
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        (
            "Kestrel: we price it as a portfolio trade on Tradeweb at one level for the whole "
            "basket, not line-by-line. Kevin runs the model",
            "route_decision",
        ),
        (
            "working the TSRO bonds by hand — voice to 3 accounts who were asking for TSRO this "
            "morning, NOT putting 32mm out on all-to-all",
            "route_decision",
        ),
        (
            "putting the MRDU 12mm into JX's 3:30 dealer BWIC rather than showing it around one "
            "by one",
            "route_decision",
        ),
        (
            "sending it through RepoClear on the electronic platform, not bilateral — we get the "
            "netting",
            "route_decision",
        ),
        ("take the intragroup, not the ECP panel — cheaper", "route_decision"),
        (
            "USD CP: going to two of the panel dealers only, not all four — smaller footprint",
            "route_decision",
        ),
        ("we're doing the interviews by phone, not on the platform", None),
        ("put the photos on the screen, not the panel", None),
        ("sending it by phone, not by email", None),
        ("I'll do it manually, not with the algo", None),
        ("doing the survey one by one, not all four at once", None),
        ("going to two dealers only, not all four, the car is fine", None),
        ("should we send it by voice, not on the platform? 10mm", None),
        ("if we send it by voice rather than the screen, 10mm would walk", None),
        ("sending the 5m to Mum by phone", None),
        ("sending the 50 to John by phone", None),
        ("Sent it through RepoClear, not bilateral", "route_decision"),
        (
            "will do. doing the WCS on ICE as a block through Net Energy's screen, not voice — "
            "tighter and I don't want it shopped around Calgary",
            "route_decision",
        ),
        (
            "working the TSRO bonds by hand — voice to 3 accounts, NOT putting 32mm out on "
            "all-to-all, that would show the whole street we're a seller",
            "route_decision",
        ),
        ("Doing the CDS voice, not on the SEF", "route_decision"),
        ("pricing the 30mm of bonds as a portfolio trade, not line by line", "route_decision"),
        # the round's review: what the first form read
        ("we're going to do voice lessons rather than street dance this term", None),
        ("I'm working on the voice assistant, not the street view feature", None),
        ("sending a voice message instead of calling — he's out on the street", None),
        ("Running the VWAP backtest rather than the TWAP one tonight", None),
        ("Working on the algo rather than the voice bot this sprint", None),
        ("Going to pay the bills manually, not on the platform", None),
        ("Send the signed contracts by hand, not electronically", None),
        ("Placing the order by phone, not on the platform — the app keeps crashing", None),
        ("Doing the flight legs one by one, not all three on one ticket", None),
        ("I'm doing my tax notes by hand, not electronically", None),
        ("Run the 5m by hand not electronically timed — it's a school race", None),
        ("Taking the 35mm to Jessops by hand for the repair", None),
        ("Doing 5mm by phone rather than on screen was a mistake last week", None),
        ("Doing it by voice rather than RFQ is slower but cheaper on 10mm+", None),
        ("Showing the 10mm to the street rather than the panel would leak it", None),
        ("Take note: the BWIC went through the street not the dealer panel, 50mm of bonds", None),
        ("Working assumption: the street prices 10mm voice, not on the platform", None),
        ("Putting the stop on the 10mm with the voice desk rather than the algo", None),
        # the round's second review: what the first mends read
        ("I'm doing the focus manually rather than on the screen with the 50mm", None),
        ("placing the tiles one by one rather than as a panel, 10mm gaps", None),
        ("taking the gilts to the auction rather than selling them one by one", None),
        ("we're doing a Bond marathon on the big screen, not on the phone", None),
        ("running the backups manually, not on the platform - repo is 2bn files", None),
        ("we're doing the vote by hand rather than electronically, 1.2bn people in India", None),
        ("Grocery: doing the order by phone, not on the platform, for the 5mm pasta", None),
        ("doing the recon line by line rather than electronically, 40mm breaks", None),
        ("doing it by voice rather than RFQ for 500mm bonds is standard", None),
        ("going through the panel not all-to-all, 500mm was the plan last Tuesday", None),
        ("sending the 2mm to Bahria Town by phone for the plot booking", None),
        ("sent the 3mm to Dad by phone, school fees sorted", None),
        ("sending the 50mm to Canon Service by phone", None),
        ("will do it with Halden on the phone, not on LMEselect", "route_decision"),
    ],
)
def test_an_order_dealt_one_way_and_not_another_and_its_look_alikes(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


# Desk speech read on the thirty-second round's development desks, each beside look-alikes: a
# cap on new entries, a proposal or an add beside what stands, a limit cut from one figure to
# another beside why, a view dropped (a proposal card's headline was read and removed: ADR 0057)
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        ("CARD GAME | BUY 2 GET 1 FREE", None),
        ("birthday card | buy one for Mum", None),
        (
            "I'm capping new TACT-GBP entries at £5k DV01 for the rest of the day, anything "
            "bigger comes to me first",
            "risk_limit",
        ),
        ("I'm limiting new orders to 3 lots per bidder at the charity auction", None),
        ("we're capping new entries at 50 for the race", None),
        ("I'm capping new sign-ups at 5k", None),
        ("cut TV time, all 3 of them", None),
        ("should we cut LUCK, all 40k?", None),
        (
            "Propose 100k at 169.00 limit, stop 163.40 as per card, target 182 unchanged.",
            "trade_proposal",
        ),
        ("I propose 2 pizzas at 12 each, menu unchanged", None),
        ("propose 100k at 169.00, still waiting on risk, target unchanged", None),
        (
            "adding 5mm more ARCF 29s at +85 on the close — the new ARCF 7y came +98, so the 29s "
            "are still 4-5bp cheap",
            "position_change",
        ),
        ("adding 2k more steps at 5pm, still tired", None),
        (
            "Group Risk cut the SG branch FX-swap limit from $300m to $200m outstanding, effective "
            "today — it's part of the annual review, nothing to do with us specifically",
            "risk_limit",
        ),
        ("nothing changed, the limit from 5m to 4m was last week", None),
        ("they cut the credit card limit from $3k to $2k, nothing to do with me", None),
        (
            "I no longer think the year-end squeeze is coming, so I'm dropping the year-end "
            "pre-funding view — we'll roll 1m as normal and revisit on 1 Dec.",
            "thesis_change",
        ),
        ("I'm dropping the kids at school — we'll see later", None),
        ("maybe I'm dropping the view", None),
        ("maybe I'm scrapping the view", None),
        ("I'm tightening the gross on JPY from 400mm to 300mm", "risk_limit"),
        ("I'm raising the exposure on EURUSD from 20m to 30m", "risk_limit"),
        ("we're tightening the net on crime from 400 to 300 officers", None),
        # the round's review: what the first form read
        ("Card #12: Buy LEGO set for Max's birthday", None),
        ("CARD #12 | Charizard holo | SELL (mint, PSA 9)", None),
        ("card #4412: BUY 45.20 GBP at TESCO", None),
        ("Card #3 - long (2 hrs) hike on Saturday", None),
        ("CARD #213 | PSX | SELL MCB | status: EXPIRED", None),
        ("CARD #213 | PSX | SELL MCB — invalidated, ignore", None),
        ("We're capping new entries at 60 lots for the car boot sale", None),
        (
            "We're limiting new positions to 2 contracts this quarter, hiring freeze after that",
            None,
        ),
        ("Selling BMW X5, all 95k miles on the clock, full service history", None),
        ("closing ISA, all 20k into the mortgage deposit", None),
        ("cutting PE, all 2k kids lose it from September", None),
        ("Dumping EA FC, all 500 lots of cards on the market", None),
        ("Rumour is GS is selling ARM, all 5m shares", None),
        ("I propose 10 lots at 25 each for the school auction, reserve unchanged", None),
        ("Propose 5k at 12 each for the raffle prizes, nothing new otherwise", None),
        ("We propose 2k at 3pm for the bake sale, menu unchanged", None),
        ("Propose 100k at 169 again, same as yesterday's card - nobody has looked at it", None),
        ("The landlord cut the deposit cap from 5k to 3k, nothing to do with us", None),
        (
            "They were going to cut the EM VaR limit from 5m to 4m but nothing changed in the end",
            None,
        ),
        ("Adding 5mm more ARCF at +85 is still the plan", None),
        ("Selling 2k TSLA at 180 still working, not filled yet", None),
        ("I'm dropping the idea of a kitchen extension, thinking about a loft instead", None),
        ("I'm dropping the kids at school, then thinking about the EUR view", None),
        ("we're dropping the carry view in a week or two, need to think", None),
        ("Possibly I'm dropping the MXN carry view", None),
        ("Maybe, I'm dropping the MXN view", None),
        ("CARD #7 | Garage sale | SELL", None),
        ("CARD #2 | Weekend | LONG / relaxing", None),
        # the round's second review: what the first mends read
        ("Card #3 | Pokemon | SELL PSA 10 Charizard", None),
        ("Card #3 | LEGO 75192 | SELL", None),
        ("CARD #9 | UNO | SELL", None),
        ("CARD #5: BUY ONE GET ONE FREE", None),
        ("card #4412: BUY 45 GBP at TESCO", None),
        ("Card #23: SELL XBOX for 200", None),
        ("card #12: LONG WEEKEND plans", None),
        ("📉 CARD #213 | PSX | SELL MCB | stop lowered to 172", "stop_or_target_change"),
        ("📉 CARD #213 | PSX | SELL MCB | sold 5,000 at 169.10", "trade_fill"),
        ("we're capping new orders at 5mm thickness", None),
        ("I'm limiting new orders to 5bn units until the factory catches up", None),
        ("HR is increasing the gross on EUR contracts from 60k to 65k", None),
        ("taking the net on USDJPY from 400mm to 300mm", "position_change"),
        ("council cut the building height limit from 30m to 20m, unchanged elsewhere", None),
        ("the league cut the salary cap from 140m to 130m, rest of the rules unchanged", None),
        ("We propose 1.2m at 6.5% on the house, everything else unchanged", None),
        ("propose 25k at 3 years for the car loan, terms unchanged", None),
        ("Propose 100k at 169.00, as per Monday's card, everything unchanged", None),
        ("propose 100k at 169.00 — reposting for visibility, terms unchanged", None),
        ("Sam pls cut SLACK, all 8k, now — finance wants the licences gone", None),
        ("we're cutting the Bund short, considering the supply calendar", "position_change"),
        ("I'm killing the AUD view, considering the data it's done", "thesis_change"),
        ("adding 5mm ARCF 29s at +85, still resting on the screen", None),
        ("adding 5mm ARCF 29s at +85 if it holds", None),
        ("I'm adding 5mm ARCF 29s at +85 tomorrow, still cheap", None),
        # the round's third review: what the second mends read
        ("📇 CARD #41 | EUR/SEK | SELL\nFILLED 5m @ 11.2040", "trade_fill"),
        ("📇 CARD #42 | MAERSK B | SHORT\nstop moved to 11,200", "stop_or_target_change"),
        ("📇 CARD #42 | MAERSK B | SHORT\nstatus: EXPIRED", None),
        ("CARD #7 | FPL | SELL SALAH", None),
        ("💳 CARD #4412 | EUR/USD | BUY", None),
        ("We're closing the ES long now, need to think about re-entry", "position_change"),
        ("I'm cutting the NQ short here, will revisit the setup next week", "position_change"),
        ("Thinking about it, I'm dropping the sales call with Acme", None),
        ("Considering the price, we're dropping the sea view room upgrade", None),
        ("Thinking about it more, I'm dropping my view that Arsenal win the league", None),
        ("Nothing changed since risk cut the VaR limit from $5m to $4m in March", None),
        ("Council cut the spending limit from £30m to £20m, council tax unchanged", None),
        ("Propose 100k at 169 — unchanged since this morning's card", None),
        ("Propose 5k at 7 tomorrow, route unchanged", None),
        ("Propose 20k at 3.5% interest, no changes to term", None),
        ("Doing the injections bilaterally, not one by one — 5mm ID catheter", None),
        ("Doing pick-by-voice rather than screens in the warehouse, saves $2m a year", None),
        ("Placing my bets by algo, not manually — 10 bps edge", None),
        ("Sending the 35mm to Camera Capital Partners by phone", None),
        ("We're capping new positions at $2m total payroll cost this year", None),
        ("Increasing the net on gold from 2mm to 3mm thickness", None),
        ("Adding 2k EV chargers at 400 each across the fleet, currently 1k installed", None),
        ("I'm capping new gilt entries at 5k of DV01", "risk_limit"),
        ("we're capping new orders at 5mm thickness", None),
        ("adding 5mm more of the ARCF 29s at +85 on the close, still cheap", "position_change"),
        (
            "Risk cut our FX-swap limit from $300m to $200m, effective today — nothing to do "
            "with us",
            "risk_limit",
        ),
    ],
)
def test_the_thirty_second_rounds_desk_speech_and_its_look_alikes(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


# Replies on a size under everyday parents stay none
@pytest.mark.parametrize(
    ("reply", "parent", "event_type"),
    [
        (
            "ok for the 1m. keep the rest O/N. and don't replace the Lloyds bilateral, we're "
            "carrying too much GBP cash as it is",
            "pitch: long 300 SOL @ 142, stop 131",
            "trade_approval",
        ),
        (
            "ok for the 5k run. it's on Sunday, see you at 9 and bring water for everyone, and "
            "snacks for the kids, and towels, and sunscreen because it will be very hot",
            "pitch: long 300 SOL @ 142, stop 131",
            None,
        ),
        (
            "go for 5k steps a day. my doctor said it's the minimum, and the gym is closed until "
            "January anyway, so walking it is, rain or shine, every single morning",
            "pitch: long 300 SOL @ 142, stop 131",
            None,
        ),
        # the round's review: what the first form read
        (
            "go for 350k now. the market's cooling, the survey came back clean and the vendor "
            "wants a quick sale before Christmas, so put the offer in today",
            "Thinking of buying the 3 bed on Elm St, 350k asking",
            None,
        ),
        (
            "yes for 3 lots then. the reserve looks fair for that vintage and the charity gets "
            "the money either way, so just put the bid in before they close",
            "buy 3 lots of the vintage wine at the auction? 200 each",
            None,
        ),
    ],
)
def test_the_thirty_second_rounds_verdicts_and_their_look_alikes(
    reply: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(reply, parent) == event_type


# The thirty-third round's development desks (ADR 0058): a temporary override the writer
# puts on a risk measure, an action taken "rather than waiting" (no hedge); and what must
# stay ordinary beside them (the round's review: other senses, recaps, requests)
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        ("I'll put a temp override on FI cs01 to ±115k until 16:00Z.", "risk_limit"),
        ("temporary override on the speed limit to 80 until the roadworks end", None),
        ("we put an override on the thermostat to 21 until 6pm", None),
        ("we put an override on the thermostat delta to 2 until 6pm", None),
        ("put a temp override on the gamma to 2.2 until the monitor is recalibrated", None),
        ("the temp override on DV01 to 60k until 14:00 expired at noon", None),
        ("I put a temp override on DV01 to 60k until 14:00 yesterday, it's gone now", None),
        ("can you put a temp override on DV01 to 150k until 4pm", None),
        ("I'll put a temp override on DV01 to 60k until 4pm if the CRO agrees", None),
        ("I'll put a temp override on DV01 to 60k until 4pm, unless anyone objects", None),
        (
            "we are putting an override on the nop to 0 until the vendor patches the opcode table",
            None,
        ),
        ("I'm granting an override on the desk NOP to USD 45m until 17:00 local", "risk_limit"),
        (
            "Bid goes in directly on our CSD account, not through the broker — we see the "
            "result instead of waiting for an email.",
            "route_decision",
        ),
        ("we're waiting for the close rather than selling now", None),
        ("I'm selling my bike rather than waiting for the repair, 200 quid and it's gone", None),
        ("we'll take the train rather than waiting for the bus at 6.30", None),
    ],
)
def test_the_thirty_third_rounds_desk_speech_and_its_look_alikes(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


_AUDNZD = (
    "want to leave a bid for 15m AUDNZD at 1.0945 GTC for your session, stop 1.0905 if it "
    "fills. ok?"
)


# An assent before the verdict with no stop between ("yep go", "ok send it") and reasons
# after: the verdict is the one assented to, however long the reasons
@pytest.mark.parametrize(
    ("reply", "parent", "event_type"),
    [
        (
            "yep go, 15m fine. keep it inside the overnight FX number Mere sends round, and if it "
            "fills Ollie puts the stop in straight away — I don't want an unprotected kiwi "
            "position sitting there into the MPS",
            _AUDNZD,
            "trade_approval",
        ),
        (
            "yep go, 20 lots. keep it inside the overnight number and if it fills put the stop "
            "in straight away, I don't want it naked into the print",
            _AUDNZD,
            "trade_approval",
        ),
        (
            "ok go, let me think about the size first and I'll come back to you after the call "
            "with risk this afternoon",
            _AUDNZD,
            None,
        ),
        (
            "yep go, 2 bags. and if it rains bring the umbrellas, I don't want the kids soaked "
            "on the way back from the park",
            "lunch at 1?",
            None,
        ),
        # two assents, or an assent before another word, are no go (the round's review)
        (
            "yeah yeah, you always say that, send me the fills once you are done please, and put "
            "it in the morning note before you leave tonight",
            _AUDNZD,
            None,
        ),
        (
            "ok ok, I hear you, the funding has flipped positive overnight and the weekly "
            "structure looks decent but honestly I've heard this exact pitch from you three "
            "times this month and it never works out",
            "P",
            None,
        ),
        # an assent taken back or put off by its reasons is none (the second review), with
        # or without a go after it
        (
            "yep go, just not today. with the Fed tomorrow and the book already long beta, I'd "
            "rather we look at this again on Thursday morning.",
            "P",
            None,
        ),
        (
            "yep, just not today. with the Fed tomorrow and the book already long beta, I'd "
            "rather we look at this again on Thursday morning please.",
            "P",
            None,
        ),
        (
            "yep go — actually no, wait. I just saw the funding spike on the perp, let's hold off "
            "until we understand why the basis blew out today.",
            "P",
            None,
        ),
        (
            "okay do it, in two weeks. after the token unlock is done and the supply overhang is "
            "gone, put it back up and I'll look again at it",
            "P",
            None,
        ),
        (
            "sure go ahead, tell me more about the thesis. what's the catalyst and why now rather "
            "than after the unlock next week, and the size?",
            "P",
            None,
        ),
        (
            "ok go, no rush, work it through the afternoon in clips and keep it under 15% of "
            "volume, and tell risk once it is all done please",
            "P",
            "trade_approval",
        ),
        (
            "yeah ok but no, SOL is too extended here and we already have plenty of beta on the "
            "book, come back with a tighter stop and smaller size after the FOMC minutes please",
            "P",
            None,
        ),
    ],
)
def test_the_thirty_third_rounds_verdicts_and_their_look_alikes(
    reply: str, parent: str, event_type: str | None
) -> None:
    assert _rules_read(reply, PROPOSAL if parent == "P" else parent) == event_type


# The thirty-fourth round: the development desks' routes, blocks and views, and the
# look-alikes a review found in their first forms (ADR 0059)
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        (
            "doing it as a curve package on RFQ to 4 dealers, not legging it in this tape.",
            "route_decision",
        ),
        ("doing the roll as a package on RFQ to 3 dealers", None),  # a roll, not a curve package
        ("doing the kitchen as a package, RFQ to three names we got from the neighbours", None),
        ("doing it as a curve package on RFQ to 4 dealers was a mistake last time", None),
        ("the client is doing it as a package on RFQ to 4 dealers, not legging it", None),
        ("never doing it as a package on RFQ to 5 dealers again", None),
        ("RFQ to 3 dealers for the holiday package", None),
        # written and removed: by hand with a dealer, off a platform (a quotation, a piano, a
        # student loan, "— thoughts" read the same)
        (
            "working it by hand with the dealer over the phone, not putting it on the platform "
            "— it's an axe and they don't want it shopped around.",
            None,
        ),
        ("they were working it by hand with their dealer yesterday, not on the platform", None),
        (
            "working it by hand with the dealer would leak less, not putting it on the platform "
            "would help",
            None,
        ),
        (
            "I'm doing it over the phone with a broker — mortgage renewal, not putting it on "
            "the platform",
            None,
        ),
        ("nobody is working it by hand with the dealer", None),
        (
            "No new buys in IG-CREDIT until you're back under 95% — block is in pre-trade now, "
            "sells still allowed.",
            "risk_limit",
        ),
        ("no new buys in EM-FX until we're back under 90%", "risk_limit"),
        ("no new buys in EM-FX until the CPI print", None),  # not a limit's use
        ("No new purchases in IT-OPS until the Q3 budget is approved", None),
        ("no new buys in LEGO until the kids tidy up", None),
        ("analysts: no new buys in NVDA until earnings", None),
        ("no new purchases for HR until January", None),
        ("no new buys until payday, still broke", None),
        ("IG-CREDIT buy block lifted as of now.", "risk_limit"),
        ("the buy block lifted, 3m shares", "trade_fill"),  # a block trade, not a limit
        ("IG-CREDIT buy block lifted, 3m at 99.50", "trade_fill"),
        ("was the EM-FX buy block lifted or not", None),
        ("the buy block was lifted by Steam after I verified my card", None),
        ("my view that the Fed holds until December is dead.", "thesis_change"),
        (
            "Thinking out loud after the CPI + auction: my view that the Fed holds until "
            "December is dead.",
            "thesis_change",
        ),
        ("my view that the sofa holds two people is dead, it's tiny", None),
        ("My view that the Fed put is dead holds more than ever", None),
        ("our view that the wedding venue holds 200 is dead, it's 150 max", None),
        ("the view that the ceasefire still holds is dead", None),
        ("So I'm changing the thesis — no more waiting for a supply concession;", "thesis_change"),
        ("no more waiting for the bus, I'm walking", None),
    ],
)
def test_the_thirty_fourth_rounds_desk_speech_and_its_look_alikes(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


_RR_EXIT = (
    "NVDA RR exit. We're short 750 8/15 160P / long 750 8/15 185C, put on at 0.46 credit, "
    "marks at the close 0.71 debit to buy back. The thesis I put it on for is gone.\n"
    "want to buy back all 750 NVDA 8/15 RR at the open, 0.70 debit or better, and unwind the "
    "~41k short stock hedge with it."
)


@pytest.mark.parametrize(
    ("reply", "parent", "event_type"),
    [
        # a verdict with its reasons under a message that opens with another decision and
        # proposes further down: the model reads the proposal in its clause
        (
            "yes, at the open. don't chase past 0.80 — if it's wider than that in the first 5 "
            "min give it to Lakeshore like on the way in",
            _RR_EXIT,
            "trade_approval",
        ),
        # … nor under someone else's wish further down (the first forms read them)
        (
            "sure — we're light in the name and the book can take it, the liquidity is fine in "
            "the morning session and nothing big is on the calendar until Thursday",
            "Stop moved to 131 on SOL. We heard GS is looking to sell 2m EURUSD at 1.0950",
            None,
        ),
        (
            "yes, thanks. good to know what the street is doing, not for us though — we have "
            "enough NVDA risk on already for this week",
            "Trimmed NVDA by 200 at 121. Citadel wants to buy 5k NVDA at 120 or better, their "
            "trader told me.",
            None,
        ),
        # … not under a report that only mentions an order
        (
            "yes, at the open. don't chase past 0.80 — if it's wider than that in the first 5 "
            "min give it to Lakeshore like on the way in",
            "NVDA RR exit. We're short 750 8/15 160P / long 750 8/15 185C, closed at the open "
            "at 0.70 debit, the ~41k short stock hedge unwound with it. P&L -$19k.",
            None,
        ),
    ],
)
def test_the_thirty_fourth_rounds_verdicts_and_their_look_alikes(
    reply: str, parent: str, event_type: str | None
) -> None:
    decision = RULES.decide(reply, parent=parent)
    assert (decision.event_type if decision else None) == event_type


# The thirty-fifth round: a rejection whose reasons open by refusing the trade stands,
# whatever they go on to say (a new user's trial), and what it must not read (ADR 0060)
@pytest.mark.parametrize(
    ("reply", "parent", "event_type"),
    [
        ("no. not adding before the Powell presser, revisit after 2pm", "P", "trade_approval"),
        ("no, not buying into the print, ask me tomorrow", "P", "trade_approval"),
        ("no. not adding before the presser?", "P", None),
        ("not yet. not adding until the presser, let me think", "P", None),
        ("no, not adding before the presser — I'd probably do it after if Reto agrees", "P", None),
        ("nope — not chasing it up here, ask me again after the auction", "P", "trade_approval"),
        # a deferral, an assent, no proposal: as before
        ("no, not sure yet, will come back to it", "P", None),
        ("- not yet, not adding, will look again once CPI is out", "P", None),
        ("no, not adding yet, revisit when Reto's back", "P", None),
        ("no, haven't had a chance to look at it yet, will come back to it", "P", None),
        ("ok, not adding before the presser, revisit after 2pm", "P", None),
        (
            "no, not adding anything to the agenda, revisit the slides later",
            "can we add a slide?",
            None,
        ),
    ],
)
def test_the_thirty_fifth_rounds_verdicts_and_their_look_alikes(
    reply: str, parent: str, event_type: str | None
) -> None:
    assert _rules_read(reply, PROPOSAL if parent == "P" else parent) == event_type


# The thirty-fifth round: the development desks' blocks, routes, views, allocations and the
# guards that voided a stop moved, a bot fill and a matched recap, with their look-alikes
# (ADR 0060)
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        (
            "BREACH ILS_Z/SPONSOR_CONC/TAMARISK 5.31% > 5.00% — new entries in TAMARISK "
            "sponsor blocked; escalated to u-hsolberg",
            "risk_limit",
        ),
        ("new tickets for Glastonbury are blocked on the site", None),
        (
            "Until it's back inside 95–105 I've blocked new Corrib tickets in HedgeOMS apart "
            "from the corrective CHF trade.",
            "risk_limit",
        ),
        ("I've blocked new Facebook friends until the weekend", None),
        (
            "risk pen's mine tonight: extending the FL/Gulf new-entry block to 15:00Z tomorrow.",
            "risk_limit",
        ),
        ("we're extending the block party to Sunday", None),
        (
            "moving the nok overlay stop down to 11.78 from 11.82, tp unchanged 11.55.",
            "stop_or_target_change",
        ),
        ("nobody is moving the stop to 11.78, nothing changed", None),
        (
            "FILL HO-250930-0071 | MDP-ESP BSA | BUY EUR 25,000,000.00 SELL NOK 293,087,500.00 "
            "@11.7235 | VD 02-Oct | overlay EURNOK now 0 | resting stop/tp still ACTIVE",
            "trade_fill",
        ),
        (
            "Tule recap received and matched: BUY 25,000 LCFS credits @ 60.40, Type A, "
            "transfer initiation by 08/30",
            "trade_confirmation",
        ),
        ("the recap of the offsite was received and matched to the agenda", None),
        (
            "RFQ'ing Sauer, Aubrac, Nordhavn — NHB is only off for NOK/SEK so CHF is fine",
            "route_decision",
        ),
        ("were you RFQing Sauer, Aubrac? they never answer", None),
        (
            "asking Halvard NY and Corbin NY for offers direct, not the BWIC — if I bid it in "
            "the 16:00 list everyone sees we're a buyer",
            "route_decision",
        ),
        ("asking Mum and Dad for advice, not the bank", None),
        (
            "anything in CCA or RGGI gets worked by phone through Grayling as blocks, nothing "
            "goes through the backup gateway",
            "route_decision",
        ),
        ("VIEW UPDATE — JPY: neutral → mildly constructive (1M).", "thesis_change"),
        ("view update due at 3pm, neutral until then", None),
        (
            "Alder Point allocations: Cl A 9mm (of 10mm, 90% fill), Cl B 5mm (full).",
            "trade_fill",
        ),
        ("seating allocations: table A 9 (of 10 guests), table B full", None),
        # a review with fresh eyes: the first forms' look-alikes (a breach that is not, a test,
        # an everyday block, target or recap, a procedure, an opinion, another's view)
        ("new entries in TAMARISK are not blocked, the breach alert was a false positive", None),
        ("new entries in TAMARISK would be blocked at 5.00%, we're at 4.8%", None),
        ("TEST ALERT ignore — new entries in TAMARISK sponsor blocked (UAT)", None),
        ("new orders on the US site are blocked while we migrate Shopify", None),
        ("I've blocked new Deliveroo orders until payday lol", None),
        ("we have blocked new Etsy orders until we restock, except custom commissions", None),
        ("I've blocked new Zendesk tickets until the migration is done", None),
        ("the council is extending the street trading ban until 2026", None),
        ("Tom suggested extending the FL/Gulf new-entry block to 15:00Z tomorrow — thoughts", None),
        ("we're extending the candy buy ban to next week lol", None),
        ("bumping the savings target to 5000, budget unchanged", None),
        ("raising the team target to 120 calls, comp plan unchanged", None),
        ("moving the stop to 11.78 was yesterday, nothing changed today", None),
        ("tightening the stop to 11.78 in the backtest, live unchanged", None),
        ("FILL SIM-0041 | BUY 100 SOL @ 142 | simulated, still in sandbox", None),
        ("EXEC REPORT | SELL 100 SOL @ 142 | ExecType=NEW, order still open", None),
        ("FILL | BUY 100 SOL @ 142 | replay of yesterday's fill, positions still the same", None),
        ("Test recap received and matched: BUY 25,000 LCFS credits @ 60.40", None),
        ("Weekly recap matched: sold 40 cars in the showroom, best week", None),
        (
            "Tule recap received and matched: BUY 25,000 LCFS credits @ 60.40 — wait, that's "
            "last month's, ignore",
            None,
        ),
        ("so asking Bupa and Vitality for quotes direct, not the platform", None),
        ("asking Halvard and Corbin for offers direct, not the BWIC, would be a mistake IMO", None),
        ("bookings get done by phone through Sarah, nothing goes through the platform", None),
        (
            "in a DR scenario, CCA gets worked by phone through Grayling, nothing goes through "
            "the gateway",
            None,
        ),
        ("RFQing Bosch, Siemens and ABB for the new chiller", None),
        ("RFQ'd Dell and HP for 40 laptops, procurement says wait", None),
        ("RFQ'ing Sauer and Aubrac would be pointless, they never show", None),
        ("so RFQing Sauer, Aubrac, Nordhavn is the plan if risk okays it", None),
        ("View update from my therapist: cautious → constructive about the move lol", None),
        ("Outlook update: consumer sentiment neutral → cautious (UMich survey)", None),
        ("View update — GS strategists on JPY: neutral → bullish", None),
        ("View update — JPY: neutral → constructive, not ours, that's Citi's", None),
        ("Ad inventory allocations: 9m (of 10m impressions, 90% fill rate)", None),
        ("Hypothetical allocations: 9mm (of 10mm, 90% fill) — example for the new joiner", None),
        ("Budget allocations: marketing 5m (of 20m total)", None),
    ],
)
def test_the_thirty_fifth_rounds_desk_speech_and_its_look_alikes(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


# Status lines a new user's trial found kept as decisions, and the decisions beside them
# that must stay (ADR 0060)
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        (
            "Book 3: VaR 3.1m vs limit 6m, utilisation 40%, greeks within tolerance, no "
            "breaches logged.",
            None,
        ),
        ("RISK SNAPSHOT | desk VaR 4.1m / 6m | no breaches today", None),
        ("reminder: gross now at 62m vs 90m limit", None),
        ("received handover, will watch USDJPY", None),
        ("VaR cut to 3m, greeks within tolerance", "risk_limit"),
        ("limit breached: VaR 6.2m vs 6m, no breaches logged before today", "risk_limit"),
        ("reminder: gross cut to 60m, now at 58m vs 90m limit", "risk_limit"),
        ("received your confirm: BUY 5m USDJPY @ 151.20", "trade_confirmation"),
    ],
)
def test_status_lines_are_ordinary_and_decisions_beside_them_stay(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


# The thirty-sixth round: the development desks' risk system's breach record, a stop set on
# what is left of a position, verdicts with a size, with the look-alikes a review with fresh
# eyes wrote against each form (ADR 0061)
VAUD = "proposal: buy 3mm Vaud 10y at ms+13 for the foundation (ALP-02), limit +12"
KNI = "proposal: buy 1.5mm KNI shares in the Laurentian deal at 2.15, flip a third on the break"


@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        (
            "⚠ SOFT BREACH acct=ALP-01 metric=gold_pct_nav value=10.1% soft=10.0% hard=12.0% "
            "action=ALERT+NO_NEW_GOLD",
            None,
            "risk_limit",
        ),
        ("HARD BREACH desk=EQD util=121% action=BLOCK_NEW", None, "risk_limit"),
        ("SOFT BREACH: 0 | HARD BREACH: 0 | status=OK", None, None),
        ("HARD BREACH - test alert, please ignore", None, None),
        ("HARD BREACH: vendor data leak, change your passwords", None, None),
        ("Soft breach: 3 this month vs 7 last month, nice work all", None, None),
        (
            "stop on the remaining 30k KZAP: 36.90 on AIX, below the August low — hard stop, "
            "resting in the OMS",
            None,
            "stop_or_target_change",
        ),
        ("stop on the remaining 10mm USD/KZT: 551.50 on the 3m.", None, "stop_or_target_change"),
        ("stop on the Northern Line: 3 after Camden", None, None),
        ("stop on the other account: 2 factor auth expired again", None, None),
        ("Citi's stop on the remaining EURUSD: 1.0830 per their note", None, None),
        (
            "stop on the remaining 30k KZAP: 36.90 on AIX was Tuesday's level, it's been "
            "cancelled since",
            None,
            None,
        ),
        ("stop on the remaining 30k KZAP: 36.90 on AIX? or is the August low better", None, None),
        (
            "go half size, 4k/4k. we're already heavy KZ beta and I don't love 6-7 hours of "
            "legging on the full 8k. if it works we can always do the second half tomorrow",
            PROPOSAL,
            "trade_approval",
        ),
        (
            "yes half. half the slides in the KZ deck are out of date, please refresh them "
            "before the client meeting on Thursday, the card comes after",
            PROPOSAL,
            None,
        ),
        (
            "ok 3mm for the foundation. limit +12, drop out if they price tighter. and tell "
            "Limmat it's the foundation, they like to see real-money names in the book, might "
            "help the allocation",
            VAUD,
            "trade_approval",
        ),
        (
            "ok 2k for the party. Sophie collects it at the desk this afternoon, cash or twint, "
            "and the card for Marc is in the drawer, please sign it before five",
            VAUD,
            None,
        ),
        (
            "1mm, not 1.5. I don't want more than ~C$3mm in one Timmins name on top of the "
            "410k cash shares we already own, and the nickel price isn't helping anyone",
            KNI,
            "trade_approval",
        ),
        (
            "10k, not 10m. the card had a fat-finger in the size field, Aigerim fixed it in the "
            "system. nothing else changes on the card, please review it again",
            "proposal: buy 10m KSPI, card #41",
            None,
        ),
        (
            "2 lots, not 20. that's what the LME shows as traded on the close, the screen you're "
            "looking at has the old print from the morning",
            "proposal: buy 20 lots LME nickel 3M",
            None,
        ),
        (
            "1mm, not 2. I don't want more than ~C$3mm in one Timmins name on top of the 410k "
            "cash shares we already own",
            KNI,
            None,
        ),
        (
            "200 lots, not 20 and that's final, we need the size for the roll",
            "proposal: buy 20 lots LME nickel 3M",
            None,
        ),
        (
            "500k, not 1,000k. I don't want more than that in one name before the print",
            "proposal: buy 1,000k shares of XYZ at the open",
            "trade_approval",
        ),
        (
            "1mm, not 1.5. that was the size yesterday, the card is old",
            KNI,
            None,
        ),
    ],
)
def test_the_thirty_sixth_rounds_desk_speech_and_its_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


# From a new user's trial: an order system's heartbeat counting its working orders is a
# status line; a rejection that waits for an event and revisits stands (ADR 0061)
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("OMS heartbeat OK. 2 working orders. Latency p99 5ms.", None, None),
        ("OMS heartbeat OK. 0 working orders.", None, None),
        ("order working: BUY 5k AAPL @ 189.40", None, "trade_confirmation"),
        ("100 ymm5 bid at 96.15 is in, GTC", None, "trade_confirmation"),
        ("no — wait for the auction result, revisit after 11:00", PROPOSAL, "trade_approval"),
        ("no — wait for the auction result, revisit after 11:00 if it clears?", PROPOSAL, None),
        ("no, wait for CPI if it's hot, then revisit", PROPOSAL, None),
    ],
)
def test_a_heartbeats_order_count_is_ordinary_and_a_waiting_rejection_stands(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


# From the last round's trial: an assent that puts the decision off is no verdict however
# short ("ok. let me think about it first"), and a desk's entries blocked by "nobody adds
# to …" or "no more … adds" until an event, for the day or in a book (ADR 0062)
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("ok. let me think about it first", PROPOSAL, None),
        ("ok. still on the phone, back in 5", PROPOSAL, None),
        ("sure, give me a sec", PROPOSAL, None),
        ("ok, brb", PROPOSAL, None),
        ("k, in a meeting, later", PROPOSAL, None),
        ("ok", PROPOSAL, "trade_approval"),
        ("ok. go", PROPOSAL, "trade_approval"),
        ("yes, let me know the fill", PROPOSAL, "trade_approval"),
        ("ok, on the phone with the broker, go ahead", PROPOSAL, "trade_approval"),
        ("Reminder: nobody adds to rates risk before the CPI print tomorrow", None, "risk_limit"),
        ("noted, no more energy adds today", None, "risk_limit"),
        ("nobody adds to GBP before BoE", None, "risk_limit"),
        ("no more adds to the crude book", None, "risk_limit"),
        ("did anybody add to rates before CPI?", None, None),
        ("nobody adds value to the meeting", None, None),
        ("no more adds from me, I'm out for lunch", None, None),
        ("no more adds today?", None, None),
        ("nobody adds to rates before CPI?", None, None),
        ("if it breaks 1.09 no more adds today", None, None),
        ("And no more secondary adds in consumer today without a word, please.", None, None),
    ],
)
def test_a_put_off_assent_decides_nothing_and_adds_blocked_are_limits(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


# The thirty-seventh round's development desks (an ERCOT power desk, a retail-FX dealing
# desk, a Kyiv/Warsaw desk): their missed forms, and look-alikes of each (ADR 0062)
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        (
            "Before you size it — I'm setting the DART virtual gross limit for OD 07/16 at 400 MW"
            " (down from 600). If we get two normal evenings I'll put it back.",
            None,
            "risk_limit",
        ),
        ("I'm setting the speed limit to 30", None, None),
        ("we're setting the position limit at 5k?", None, None),
        (
            "I'm blocking new entries in UA corporates for the rest of the day: no new buys in"
            " any UA corp name, sells and hedges fine",
            None,
            "risk_limit",
        ),
        ("agreed. take half off now, rest on a bounce or by tomorrow.", None, "position_change"),
        ("take half off the price for the long table", None, None),
        (
            "flattening the Aug W-N, offering all 50 MW on the screen before the scheduler",
            None,
            "position_change",
        ),
        ("flattening the Aug schedule?", None, None),
        (
            "running it on TWAP 45min over the ECN aggregator, not the bank streams",
            None,
            "route_decision",
        ),
        ("we ran it on TWAP last time", None, None),
        ("running it on VWAP basis?", None, None),
        (
            "screen shows 87.50 offer for 250k only. going via Marlow voice in London, they've"
            " been crossing warrants all week",
            None,
            "route_decision",
        ),
        (
            "their onboarding is with the London entity, so this goes through the London book,"
            " not NY — I'll quote it as agent",
            None,
            "route_decision",
        ),
        (
            "not putting it on the platforms — 3mm would show up as a list on every screen."
            " working it by hand, calling Dunaj in Vienna first",
            None,
            "route_decision",
        ),
        (
            "not going to the electronic platform, bids are shrinking there every minute."
            " calling Vistula BM, they've got a pension fund",
            None,
            "route_decision",
        ),
        ("not going to the platform party tonight", None, None),
        ("35B: another 2.5mm at 48.125 to Dunaj's real money. 2mm left to do.", None, "trade_fill"),
        ("another 5k at 10 to go", None, None),
        (
            "not dumb but no. HE14–17 North is where the battery charges from, selling it doubles"
            " us up — send me the shape vs hedge chart and we'll talk Thursday",
            PROPOSAL,
            "trade_approval",
        ),
        ("not bad but no, too big for a Friday.", PROPOSAL, "trade_approval"),
        ("thanks but no, I'm good", PROPOSAL, None),
        ("not dumb but no. we did that last year", "lunch at the new place?", None),
        # a review with fresh eyes: look-alikes of each form
        ("nobody opens in the office before 9 on Saturdays", None, None),
        ("no more adds to the guest book please, it's full", None, None),
        ("no more YouTube adds before the video, premium is worth it", None, None),
        ("the marathon site is blocking new entries for the rest of the week", None, None),
        ("I'm setting a loss limit on the poker app to $200", None, None),
        ("I'm setting the delta limit on the thermostat to 2 degrees", None, None),
        ("take half off at the hem, it's dragging", None, None),
        ("I'm taking a quarter off at Stanford to intern", None, None),
        ("flattening the Dec PSD, then export to PNG", None, None),
        ("running the script on the algo server, it keeps timing out", None, None),
        ("going via Google Voice for the international calls", None, None),
        ("this goes through the Chase account, not Amex", None, None),
        ("not going to the platform, train's cancelled, call me when you land", None, None),
        ("another 5k at 10 to Oxfam this year, matched by the firm", None, None),
        ("another 10k at 5 to the finish line, legs are dead", None, None),
        ("rumour: another 500mm at 3.1 to a SWF", None, None),
        ("running it on TWAP was a mistake last time", None, None),
        ("not bad but no, still on the phone with Klaus", PROPOSAL, None),
        ("not bad but nope, not my call — ask the PM", PROPOSAL, None),
        # and the review's genuine forms an assent put off must not swallow
        ("ok, in a meeting — do half", PROPOSAL, "trade_approval"),
        ("sure, one sec — yes, go", PROPOSAL, "trade_approval"),
        ("yep, on a call but go 50k", PROPOSAL, "trade_approval"),
        ("ok, hold on the size — do 100 not 300", PROPOSAL, "trade_approval"),
        ("taking some off into this. selling 50 of the Dec long at 64.00", None, "position_change"),
        ("agreed — no more US tech adds today, for anyone", None, "risk_limit"),
        (
            "not putting this on the ECN, the screen is 3 pips wide at this hour and everyone"
            " sees the size.",
            None,
            "route_decision",
        ),
    ],
)
def test_the_thirty_seventh_rounds_desk_speech_and_its_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


# This round's new user's trial: a rejection that is not to be before an event and revisits
# after it stands; a market moving ("gold dumping") is no position changed (ADR 0062)
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("no. not ahead of payrolls, revisit after 8:30", PROPOSAL, "trade_approval"),
        ("no. not ahead of payrolls, revisit after 8:30?", PROPOSAL, None),
        ("no, not before the auction, revisit if it clears", PROPOSAL, None),
        ("strong print, gold dumping", None, None),
        ("brent ripping again", None, None),
        ("gold dumping, we sold 5 GCZ5 at 2,401", None, "trade_fill"),
        ("we're dumping gold", None, "position_change"),
    ],
)
def test_the_thirty_seventh_rounds_trial_verdicts_and_moves(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


# The thirty-eighth round's development desks (an LME base-metals desk, a livestock and
# dairy desk, an Andean desk) and the development desks' missed approvals: a go in so many
# words keeps its reasons, whatever they say; nothing new in a market without the writer's
# say is a limit; a record read past the system that sent it; and look-alikes of each (ADR
# 0063)
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        (
            "ok go. keep the total under 35mm and don't leave a naked leg over lunch — I want"
            " both legs done by 12 local, and tell Ruth when the first leg is done",
            PROPOSAL,
            "trade_approval",
        ),
        (
            "approved — now, not at the fix, the class is a third unhedged until it's on and"
            " cable has moved 40 pips since breakfast. Aubrac is fine, Siobhán please book it",
            PROPOSAL,
            "trade_approval",
        ),
        ("go. keep it small, I'm in the car and can't watch it", PROPOSAL, "trade_approval"),
        # an assent alone still waits on what follows it; a go taken back is none
        ("ok. let me think about it first", PROPOSAL, None),
        (
            "yep go, just not today. with the Fed tomorrow and the auction at 1pm I'd rather wait"
            " and see where the curve settles before we add any duration at all",
            PROPOSAL,
            None,
        ),
        ("ok go. keep the total under 35mm", "lunch at the new place?", None),
        (
            "signing off, block lifted. But you're at 98%, so from here nothing new in cattle,"
            " prop or card, without asking me first.",
            None,
            "risk_limit",
        ),
        ("Nothing new in TRY until we're back under.", None, "risk_limit"),
        ("nothing new in rates without asking me first", None, "risk_limit"),
        ("nothing new in the numbers until we're back from lunch", None, None),
        ("nothing new in banks from me. the PKO sale was an exit", None, None),
        ("nothing new in the minutes, without asking me I'd say it's a hold", None, None),
        ("nothing new in the guest list without asking me first", None, None),
        # a new user's trial: a record with the system it comes from before its header
        ("OMS | FILL | CLZ5 BUY 40 @ 72.05 | id 88121", None, "trade_fill"),
        ("OMS | FILL | HOZ5 SELL 20 @ 2.4150 | venue ICE_DIRECT", None, "trade_fill"),
        ("[EMS] ORDER ACK | CLZ5 BUY 40 LMT 72.00 | id 88120", None, "trade_confirmation"),
        ("Note: fill the form by Friday", None, None),
        ("TODO | fill in the expense report", None, None),
        ("ops: fill the gaps in the sheet before you go", None, None),
        # a stop placed on a position is its change, not a trade proposed with its stop
        ("Stop on USDJPY short set at 151.90.", None, "stop_or_target_change"),
        ("Stop on the ES long now at 6,410", None, "stop_or_target_change"),
        ("buy 100 EURUSD at 1.0850, stop on the long at 1.0800", None, "trade_proposal"),
    ],
)
def test_the_thirty_eighth_rounds_desk_speech_and_its_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


REVIEW_PITCH = "pitch: long 300 SOL @ 142, stop 131"


# The review with fresh eyes of the thirty-eighth round's forms: the look-alikes its first
# forms read as decisions (53 by the rules alone; the narrowed forms leave one, "My dad's
# rule on the ranch: nothing new in cattle without asking me first") and the genuine
# phrasings they newly catch (ADR 0063)
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        (
            "approved — who told you that? I haven't even looked at it",
            REVIEW_PITCH,
            None,
        ),
        (
            "approved, says who? Klaus is out till Monday",
            REVIEW_PITCH,
            None,
        ),
        (
            "approved — by whom? not by me",
            REVIEW_PITCH,
            None,
        ),
        (
            "go ahead — and who signs it when it blows through 131? not me",
            REVIEW_PITCH,
            None,
        ),
        (
            "granted, if you think SOL holds 131. I don't, so no",
            REVIEW_PITCH,
            None,
        ),
        (
            "go ahead, explain why 300 and not 100? I'm listening but not sold",
            REVIEW_PITCH,
            None,
        ),
        (
            "approved — the holiday request, not this. this one can wait till I'm back",
            REVIEW_PITCH,
            None,
        ),
        (
            "Nothing new in cattle until we're back under 180 — it's all chop in that range",
            None,
            None,
        ),
        (
            "nothing new in oil until we're back under 70, the range is the whole story",
            None,
            None,
        ),
        (
            "chart says nothing new in SOL until we're back under 150, it's a range",
            None,
            None,
        ),
        (
            "Nothing new in TRY until we're back under — that's what the sell-side note says",
            None,
            None,
        ),
        (
            "FT piece: nothing new in EM until we're back under 4% on the 10y, "
            "argues the strategist",
            None,
            None,
        ),
        (
            "nothing new in semis until we're back under 30x forward, that's all "
            "the sell side keeps writing",
            None,
            None,
        ),
        (
            "anything on lira? nothing new in TRY, until we're back under 32 nobody cares",
            None,
            None,
        ),
        (
            "nothing new in gold until we're back under 2300, same story as last week",
            None,
            None,
        ),
        (
            "I'm not saying nothing new in TRY until we're back under, just be careful",
            None,
            None,
        ),
        (
            "Reto's rule at his old shop was nothing new in TRY until we're back "
            "under, and they missed the whole rally",
            None,
            None,
        ),
        (
            "Back in 2018 it was 'nothing new in TRY until we're back under 6' for months",
            None,
            None,
        ),
        (
            "the 'nothing new in rates without asking me first' line was from 2022, it's long gone",
            None,
            None,
        ),
        (
            "Told the kids nothing new in cards without asking me first, the "
            "Pokémon spend is insane",
            None,
            None,
        ),
        (
            "nothing new in dairy without asking me first, you know I'm off lactose",
            None,
            None,
        ),
        (
            "nothing new in power tools without asking me first, the garage is full",
            None,
            None,
        ),
        (
            "Nothing new in the book without asking me first, the publisher has the proofs",
            None,
            None,
        ),
        (
            "Nothing new in AWS without asking me first, the cloud bill doubled",
            None,
            None,
        ),
        (
            "nothing new in PROD without asking me first — deploy freeze till the release",
            None,
            None,
        ),
        (
            "Nothing new in JIRA without checking with me, the board is a mess",
            None,
            None,
        ),
        (
            "Nothing new in HR without asking me first — all hiring goes through me",
            None,
            None,
        ),
        (
            "nothing new in grains without asking me first, the pantry's full of quinoa",
            None,
            None,
        ),
        (
            "nothing new in livestock without asking me first, the farm already has 40 goats",
            None,
            None,
        ),
        (
            "nothing new in tech until we're back under budget — no more iPads for the office",
            None,
            None,
        ),
        (
            "nothing new in energy drinks without asking me first, the fridge is full of them",
            None,
            None,
        ),
        (
            "nothing new in the cattle channel without asking me first, it's for alerts only",
            None,
            None,
        ),
        (
            "Nothing new in the ags newsletter until we're back under 500 subscribers",
            None,
            None,
        ),
        (
            "nothing new in the FX chat without running it by me, too much noise lately",
            None,
            None,
        ),
        (
            "send it, let me think about the size first",
            REVIEW_PITCH,
            None,
        ),
        (
            "go for it, once Reto's back from lunch. ask him",
            REVIEW_PITCH,
            None,
        ),
        (
            "yes go ahead, what's the rush? let's wait for CPI",
            REVIEW_PITCH,
            None,
        ),
        (
            "do it, what could go wrong? everything. no",
            REVIEW_PITCH,
            None,
        ),
        (
            "go ahead — let me know if Reto signs, then we'll talk",
            REVIEW_PITCH,
            None,
        ),
        (
            "yeah go — let me think about it over lunch actually",
            REVIEW_PITCH,
            None,
        ),
        (
            "send it — to compliance first, let's see if they even allow SOL",
            REVIEW_PITCH,
            None,
        ),
        (
            "granted, if SOL holds 131 through the unlock this works, and the "
            "carry's decent. but I don't think it holds, and the alt bucket is "
            "almost full anyway, so it's a no from me",
            REVIEW_PITCH,
            None,
        ),
        (
            "approved — that's what Jonas thinks I'll say, he told you that at "
            "lunch right? I haven't looked at it yet and I won't until after the "
            "risk meeting. park it till then",
            REVIEW_PITCH,
            None,
        ),
        (
            "go — if it were my call. it's not; crypto sits with Reto since the "
            "reorg, so ask him. I'd probably say yes but it doesn't matter what "
            "I'd say, it's his book and his limit",
            REVIEW_PITCH,
            None,
        ),
        (
            "go ahead, what's the worst that could happen? oh right, last Tuesday",
            REVIEW_PITCH,
            None,
        ),
        (
            "send it, why not? it's only Reto's money. no",
            REVIEW_PITCH,
            None,
        ),
        (
            "go for it, let me guess — you already sent it? that's not how this works",
            REVIEW_PITCH,
            None,
        ),
        (
            "green light, let's see what risk says first",
            REVIEW_PITCH,
            None,
        ),
        (
            "yes approved, let me check it's the same ticket first — which one is this?",
            REVIEW_PITCH,
            None,
        ),
        (
            "granted, what's the downside if it gaps? that's my worry. no",
            REVIEW_PITCH,
            None,
        ),
        (
            "go, if you're buying lunch",
            REVIEW_PITCH,
            None,
        ),
        (
            "approved, was it? then why is it still pending in the system?",
            "the SOL long was approved yesterday, right? long 300 @ 142",
            None,
        ),
        (
            "Nothing new in TRY until we're back under",
            None,
            "risk_limit",
        ),
        (
            "nothing new in EM FX without checking with me",
            None,
            "risk_limit",
        ),
        (
            "nothing new in semis without running it by me",
            None,
            "risk_limit",
        ),
        (
            "Nothing new in lira until we're back under.",
            None,
            "risk_limit",
        ),
        (
            "ok go, keep it under 35mm total and no naked leg over lunch",
            "proposal: buy 20mm USDJPY 1y RR, 35mm total with the existing, leg in before lunch?",
            "trade_approval",
        ),
        (
            "go ahead, keep the stop at 131 hard in the system",
            REVIEW_PITCH,
            "trade_approval",
        ),
        (
            "ok go. keep the total under 35mm and don't leave a naked leg over "
            "lunch — if the second leg isn't done by 12, flatten the first and "
            "we'll try again in the afternoon",
            "proposal: buy 20mm USDJPY 1y RR, 35mm total with the existing, leg in before lunch?",
            "trade_approval",
        ),
    ],
)
def test_the_thirty_eighth_rounds_review_cases(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        # a route's reasons after a dash may carry a hedge or a habit: the route stands
        (
            "will do it with Halden on the phone, not on LMEselect — 40 lots at this hour, the"
            " screen will see me coming and the book is maybe 5 deep.",
            "route_decision",
        ),
        (
            "running it on TWAP 45min over the ECN aggregator, not the bank streams — the"
            " streams widen on us every time we show size before data",
            "route_decision",
        ),
        # …not a question, a condition or a hedge before the dash
        ("will do it with Halden on the phone, not on LMEselect — if the screen holds", None),
        (
            "maybe running it on TWAP 45min over the ECN aggregator, not the bank streams — the"
            " streams widen on us every time",
            None,
        ),
        # a venue in capitals over a way of dealing, a decimal inside the clause
        ("putting it on SEN at 11.84, not voice — I want the screen print", "route_decision"),
        ("doing it on MS Teams, not voice", None),
        # by hand or through someone on the phone, not on a platform or screen
        # (by hand off a platform was written and removed again: ADR 0059)
        (
            "working it by hand with the dealer over the phone, not putting it on the platform",
            None,
        ),
        ("will do it with Halden on the phone, not on LMEselect", "route_decision"),
        # a ring or a screen needs "by hand": a boxing ring, a phone's screen
        ("will put it through Ashdown on the phone rather than the ring or screen", None),
        ("doing it over the phone, not on the platform, the app is down", None),
        ("doing it with Mum over the phone, not on the platform", None),
        ("I'll do the expenses by hand, not on the platform", None),
        (
            "will work it by hand — voice with Halvard ZRH and Corbin ZRH, not through the dealer"
            " run.",
            "route_decision",
        ),
        ("sending the buyback to MEC, the SEN offer side has been empty", "route_decision"),
        ("sending the buyback to my brother", None),
    ],
)
def test_the_thirty_ninth_rounds_routes_and_their_look_alikes(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        # a holding named by a ticker the lexicon need not know, flattened or unwound
        ("flatten SBL, take the 45c and move on.", None, "position_change"),
        ("pls unwind KBR into the close", None, "position_change"),
        ("flatten the HR org", None, None),
        ("flatten SVG files", None, None),
        ("flatten SBL?", None, None),
        # the writer's own block on a kind of order lifted
        (
            "with vega back at 87% I'm lifting this morning's manual block on option buys.",
            None,
            "risk_limit",
        ),
        ("are you lifting the block on option buys?", None, None),
        # what a position is now, against what it was
        ("HLP is a bump play now, not a 1% spread trade.", None, "thesis_change"),
        ("NVDA's now a capex trade, not an AI one", None, "thesis_change"),
        ("The trade is now a carry story, not a momentum trade", None, None),
        ("this is a bump play now, not a spread trade, right?", None, None),
        # a view revised from one tone to another
        ("VIEW REVISION — Panamax Q2: STEADY → FIRM (14:35Z)", None, "thesis_change"),
        # leave asked for a trade with its size, what it is and its level
        (
            "@Dana Park could I buy 5 LBRX5 600 calls for the junior training book at 3.10?",
            None,
            "trade_proposal",
        ),
        ("Dan — could I buy 5 Oct LC at 210.50 in my training book?", None, "trade_proposal"),
        ("could I buy 2 tickets for the game at 50?", None, None),
        ("can I sell my 2 chairs at 40?", None, None),
        ("could I buy 5 LBRX5 600 calls at 3.10 if it dips?", None, None),
        (
            "no — not today. we're at the gross limit and X5 calls are the same bet Marc"
            " already has.",
            "could I buy 5 LBRX5 600 calls for the junior training book at 3.10? X5 is 596.",
            "trade_approval",
        ),
        # a stop or target at a level on a holding, or pulled whatever stands after it
        ("stop 18.90 on the 100k SBL.", None, "stop_or_target_change"),
        ("stop 1.0780 on the 20m EURUSD", None, "stop_or_target_change"),
        ("Target 22 on the 10k, then the half in spring", None, None),
        ("stop 3 on the M4 bus", None, None),
        ("stop 18.90 on the SBL?", None, None),
        (
            "and pulling the 73.50 target on the 300k, it's not going to get there and I don't"
            " want a stale sell order sitting there",
            None,
            "stop_or_target_change",
        ),
        ("still sitting on the stop, not moving it", None, None),
    ],
)
def test_the_thirty_ninth_rounds_desk_speech_and_its_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        # nothing new in a market without the writer's say, said in more ways
        ("nothing new in TRY w/o asking me", "risk_limit"),
        ("Nothing new in rates without my OK.", "risk_limit"),
        ("nothing new in EM FX till further notice", "risk_limit"),
        ("nothing new on TRY until we're back under", "risk_limit"),
        ("nothing new in the group chat till further notice", None),
        ("nothing new on the menu without my ok", None),
        ("nothing new in oil till further notice, the range is the whole story", None),
    ],
)
def test_nothing_new_without_the_writers_say_in_more_words(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


# A review with fresh eyes of the thirty-ninth round's first forms: look-alikes they made
# decisions by the rules alone, which the narrowed forms leave ordinary, and genuine
# decisions in the new shapes the rules alone now find.
REVIEW39_LOOK_ALIKES = [
    ("Sending the wheat order to Dave at RJO — maybe, not sure yet, let me think about it", None),
    ("Routing the block to Jefferies — possibly. haven't made up my mind", None),
    ("We route the Bund orders to Eurex via the GS DMA — usually, anyway. today who knows", None),
    ("Sending it to GS — maybe. or MS. honestly no idea yet", None),
    (
        "Put the rest through ICAP, not the screen — that's what we usually did back when Tom ran "
        "the book",
        None,
    ),
    ("We send the buybacks to Numis — every time, it's been that way for years", None),
    (
        "Routing the orders to Citi — typically that's how the old desk did it, not saying we will",
        None,
    ),
    ("Send the order to the pit — i tend to, anyway, not today though", None),
    ("Doing it through HMRC online, not over the phone — the hold music is unbearable", None),
    ("Doing it via DVLA rather than by phone, the car tax is due Friday", None),
    (
        "Doing it via NHS online rather than the phone, GP appointments are impossible otherwise",
        None,
    ),
    ("I'm putting it through AMEX rather than over the phone, the points are better", None),
    ("Doing it on ZOOM, not by phone, so the grandparents can see the baby", None),
    ("They're putting it on SEN at 11.84, not voice — just saw it on the tape", None),
    ("Doing it via SMS rather than the phone — my voice is gone", None),
    ("Putting it on ESPN rather than the screen in the kitchen, the game's at 8", None),
    ("Doing it through IKEA, not the phone, they have a chat thing now", None),
    ("Doing them via UPS instead of the ring doorbell drop-off", None),
    ("I'll do it with Grandad over the phone rather than the screen, his tablet is broken", None),
    ("I'll do it with Nana on the phone, not on the screen — she hates video calls", None),
    ("I'll do them with Dr Patel by phone rather than the screen, the clinic said it's fine", None),
    ("I'll do it with Alexa by voice, not the screen, it's quicker for the timers", None),
    (
        "I'll do it with the broker over the phone rather than the screen — remortgage paperwork "
        "is a nightmare",
        None,
    ),
    (
        "I'll do it with the dealer by phone rather than the platform, the trade-in value on the "
        "Golf is rubbish online",
        None,
    ),
    (
        "I'll trade them with Jake on the phone rather than the screen, the Pokemon app keeps "
        "crashing",
        None,
    ),
    ("Doing it with Sarah on the phone, not on the platform, the 8:15 is always rammed", None),
    ("We'll do it with Coach Mike over the phone instead of the ring tonight, gym's closed", None),
    (
        "I'll put it through Visa on the phone rather than the screen, the website won't take my "
        "card",
        None,
    ),
    (
        "Working it by hand over the phone, not on the platform — that's how my dad did it in the "
        "80s",
        None,
    ),
    ("I was on the phone with Martin, not on the platform, when the train pulled out", None),
    ("Did the interview by phone with Karen Lee rather than on the screen, the wifi died", None),
    ("Catch-up by phone with Jo and Sam instead of on the platform, Teams kept crashing", None),
    ("Voice with Siri and Alexa, not on the screen: that's the rule for the kids", None),
    ("She was on the phone with Kevin, not on the platform, so she missed the announcement", None),
    ("The board is sending the buyback to a shareholder vote in May", None),
    ("I'm sending the buyback to legal for sign-off before the RNS goes out", None),
    ("Pass the buyback to Sarah's team to model, I want the EPS accretion by Friday", None),
    ("Give the buyback to the intern to summarise for the morning note", None),
    ("Flatten JSON before the import, otherwise the nested keys break", None),
    ("Flatten TIFF before printing, the lab wants one layer", None),
    ("Close out Q3 before the auditors arrive", None),
    ("Close out FY24 today, finance wants the books locked", None),
    ("Close out P1 now, root cause was the DNS change", None),
    ("Square up AMEX before the trip, I don't want interest on it", None),
    ("Close out CHG123 today please, the deployment went fine", None),
    ("Unwind GPU, then restart the render job", None),
    ("Close out NCAA now, the bracket challenge is over", None),
    ("Squaring up VAT now before the quarter closes", None),
    ("Unwind GBP at month-end is what the pension funds do", None),
    ("I'm lifting the ban on takeaway orders now that the credit card is paid off", None),
    ("We're lifting the spending freeze on impulse buys — for one week only", None),
    ("Remove the block on new orders in Shopify — customers can't check out", None),
    ("I'm removing the IP ban on new entries, the competition is open again", None),
    ("We're lifting the ban on late entries for the raffle", None),
    ("I'm lifting my ban on shorts in the office this summer, it's 34 degrees", None),
    ("We'll end the hiring freeze on new entries to the grad scheme in March", None),
    ("Ending the freeze on online orders at the canteen, the new till works", None),
    ("I'm lifting the ban on Lego buys now that he's tidied his room", None),
    ("Ending my freeze on clothes buys this weekend, the sales are on", None),
    ("The trade is now a three-team trade, not a two-team one, per Woj", None),
    ("This is now a summer play, not a winter one, the theatre moved the date", None),
    ("BTC is a macro play now, not a tech one, according to the strategists at JPM", None),
    ("The long is now a family story, not a crime one — the editor rewrote the ending", None),
    ("This is a Broadway play now, not a school one, congrats to her!", None),
    ("Outlook update — Ascot: soft → firm, watered overnight but drying fast", None),
    ("Outlook update — Cheltenham: soft → firmer after the sunshine", None),
    ("Outlook change — Turkey: negative → positive (Moody's)", None),
    ("Outlook revision — Brazil: negative → positive per Fitch", None),
    ("Outlook update — Ghana: negative → positive, S&P action overnight", None),
    ("View update — Signal: weak → strong since the router moved", None),
    ("Outlook update — Saturday: weak → strong winds from the north", None),
    ("Outlook revision — Wimbledon: soft → firm, the courts are baked", None),
    ("Stance update — Mum: soft → firm on screen time", None),
    ("Outlook change — Sterling: weak → stronger per the BoE agents' survey", None),
    ("Can I buy 2 LEGO sets at 40? they're on sale", None),
    ("Could we buy 4 PS5 controllers at 59 for the office?", None),
    ("Can I buy 3 IKEA lamps at 25 each?", None),
    ("May I buy 2 NFL tickets at 150? it's his birthday", None),
    ("Can we buy 10 lots at the charity auction at 50?", None),
    ("Mum — can I buy 2 LOL dolls at 15?", None),
    ("Could I buy 5 SPY puts at 2.10 in a Roth IRA?", None),
    ("Can I sell 2 ETH calls at 0.05 on Deribit as a non-US person?", None),
    ("Can I short 10 GME at 20 on Robinhood or is that blocked?", None),
    ("Could I buy 5 AAPL calls at 3.10 with a cash account, or does it need margin?", None),
    ("Could I sell 3 BMW wheels at 200 on eBay?", None),
    ("Tom — could I buy 2 PSG shirts at 80?", None),
    ("Could we pay 3 AUD at 1.50 each for the stamps?", None),
    ("Stop 4 on the M4 was closed for an hour this morning", None),
    ("Target 25 on the 5k this Sunday, fingers crossed", None),
    ("Target 1400 on the SAT, she's been studying all summer", None),
    ("Stop 2 on the DLR is where you get off for the venue", None),
    ("Target 7 on the IELTS is what the visa needs", None),
    ("Stop 3 on the NYC subway map is Canal St", None),
    ("Target 22 on the 10k, then the half in spring", None),
    ("Target 30 on the KPI dashboard by Q4", None),
    ("Target 3.5 on the CPI, consensus is 3.4", None),
    ("Pulling the stops out for mum's birthday", None),
    ("Killing the target practice session, range is closed", None),
    ("Removing the stop sign at Elm Street was a mistake", None),
    ("Pulling the 3 targets from the roadmap, product wants focus", None),
    ("GS said they'd be putting it on MTS at 99.42, not voice", None),
    ("Their desk does it by voice with Nils STO and Petra CPH, not through the platform", None),
    ("Target 2450 on the 3 lots was the original plan, before the OPEC headline", None),
    ("Target 5100 on the SPX by year end, per the GS strategy note", None),
    ("Target 250 on the NVDA, Jefferies upgrade this morning", None),
    ("Target 95 on the Brent, says Goldman", None),
    ("Could I buy 5 SPY calls at 3.10 — asking for a friend, what would the margin be?", None),
    ("OK flatten SBL — said no one ever", None),
    ("Sending the order to Citi — maybe", None),
    ("Routing it to the GS algo — usually we do, but not sure about today", None),
    (
        "Doing it with Halden on the phone, not on LMEselect — we usually do, I might not today",
        None,
    ),
    ("Sending the block to Jefferies — not sure, maybe later", None),
    ("Pulling the 73.50 target on the 300k would be a mistake in my view", None),
    ("Outlook update — Panamax Q2: steady → firm, per the Baltic Exchange weekly", None),
    ("Outlook update — Copper: weak → strong on the Bloomberg survey", None),
    ("The short is now a meme trade, not a fundamentals one — reddit found it", None),
]
REVIEW39_GENUINE = [
    (
        "Routing the NOK block to Nordea, not the bank streams — they widen on us every time we "
        "print 50m",
        None,
        "route_decision",
    ),
    ("Putting it on MTS at 99.42, not voice", None, "route_decision"),
    ("Doing the cable on EBS at 1.2710, not voice, too slow today", None, "route_decision"),
    ("Putting them on TRAX at 101.25, not the dealer run", None, "route_decision"),
    ("Putting the Schatz on EUREX at 106.12, not voice", None, "route_decision"),
    ("Voice with Halvard at ZRH, not through the dealer run", None, "route_decision"),
    ("Passing today's buyback to Panmure for the close", None, "route_decision"),
    ("Let's puke ARKK into the close", None, "position_change"),
    ("I'm lifting the afternoon freeze on new shorts", None, "risk_limit"),
    (
        "Credit spreads are back in, so I'm removing the block on new longs in HY",
        None,
        "risk_limit",
    ),
    ("TSLA is a rates play now, not an EV story", None, "thesis_change"),
    ("NVDA's now a capex trade, not an AI one", None, "thesis_change"),
    ("View update — Brent: softer → firmer", None, "thesis_change"),
    ("VIEW REVISION — Supramax Q4: FIRM → SOFT", None, "thesis_change"),
    ("SPX is a liquidity trade now, not an earnings one", None, "thesis_change"),
    ("Could I sell 10 ESZ5 at 5920 for the training book?", None, "trade_proposal"),
    ("Dan, may I short 3 Dec Brent at 74.10?", None, "trade_proposal"),
    ("could I buy 50k VOD at 72.40 in the PA book?", None, "trade_proposal"),
    ("stop 1.0780 on the 20m EURUSD", None, "stop_or_target_change"),
    ("tp 98.20 on the rest", None, "stop_or_target_change"),
    ("and pulling the stop on the 50k VOD, no longer needed", None, "stop_or_target_change"),
    ("Cancelling the 2 targets on the Bund, market's through them", None, "stop_or_target_change"),
    ("Stop 4,320 on the remainder", None, "stop_or_target_change"),
]


@pytest.mark.parametrize(("text", "parent"), REVIEW39_LOOK_ALIKES)
def test_the_thirty_ninth_rounds_review_look_alikes_stay_ordinary(
    text: str, parent: str | None
) -> None:
    assert _rules_read(text, parent) is None


@pytest.mark.parametrize(("text", "parent", "event_type"), REVIEW39_GENUINE)
def test_the_thirty_ninth_rounds_review_decisions_are_found(
    text: str, parent: str | None, event_type: str
) -> None:
    assert _rules_read(text, parent) == event_type


_CARD = (
    "TRADE CARD #218 · pair add\nlegs: BUY 200,000 VLM FP / SELL 70,000 KBR GY (ratio 0.35)\n"
    "entry: spread 2.42"
)


@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        # "nothing changed except …" in a verdict's reasons is a change: the verdict stands
        (
            "👍 send it. same deal at a wider price, nothing changed except the spread.",
            _CARD,
            "trade_approval",
        ),
        ("approved. nothing changed since the card, go at 2.42", _CARD, "trade_approval"),
        ("ok, nothing changed since this morning", _CARD, None),
        (
            "ok Friday then, let me think about it first and we talk after the close about"
            " what size makes sense for the book",
            _CARD,
            None,
        ),
        (
            "yes Priya, let me check with risk first, then we can talk about what size makes sense",
            _CARD,
            None,
        ),
        # a bid or an offer to take, asked after the bids, is what a reply answers
        (
            "take it",
            "bids back: Dupont 12.98 for 500k, Morvan 12.92 for 500k. last 13.08. take Dupont"
            " at 12.98?",
            "trade_approval",
        ),
        ("take it", "take Mum at 5?", None),
        ("take it", "any levels on the rota? take Mum at 5?", None),
        # a stop's level agreed in a reply, with a decimal point
        (
            "stop 36.18 is fine, rest it as a GTC stop at Kestrel",
            "stop at 36.18 as per the card? should I rest it on Kestrel?",
            "stop_or_target_change",
        ),
        ("stop 3 is fine", "which bus stop, stop 3 or stop 4?", None),
        ("fine, 5", "how many stops does the bus make?", None),
    ],
)
def test_the_fortieth_rounds_verdicts_and_their_look_alikes(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, parent) == event_type


@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        # a block's fill record, an instrument between its order id and its side
        (
            "BLOCK FILL ord=FUT-22987 PLN5 SELL 60 @ 1,006.50 via BRK-3 | CME block reported"
            " 12:54:41Z | acct PGM-HEDGE | clearing pending",
            "trade_fill",
        ),
        ("FILL ord=A-1 ESZ5 BUY 2 @ 5,120.25", "trade_fill"),
        # a broker's recap with its status confirmed, or countersigned; not a weekly one,
        # last week's or a question
        (
            "BROKER RECAP | Lindqvist Energy Brokers | ref LEB-251118-0417 | DE Dec-25 Peak"
            " SELL 5 MW @ 116.10 | status=CONFIRMED 15:05:11Z",
            "trade_confirmation",
        ),
        ("WEEKLY BROKER RECAP | DE Dec-25 Peak SELL 5 MW @ 116.10 | status=CONFIRMED", None),
        ("broker recap for last week: sold 5 MW @ 116.10, all confirmed", None),
        (
            "quoted at 03:45 — Nordhav accepted 503 on the full 4,500mt, their ops have"
            " countersigned the trade recap. covering now",
            "trade_confirmation",
        ),
        ("has anyone countersigned the trade recap from last week?", None),
        # a status line that moves a trade away from matched stays ordinary
        ("SwapLink status change: SL-88213 | SPX Dec-25 variance swap | MATCHED → ALLEGED", None),
        # a clip capped until further notice; a temporary raise in ounces
        ("Max clip for tnolan is 10 ES until further notice.", "risk_limit"),
        ("max speed for the van is 10 mph until further notice", None),
        ("Max clip for tnolan is 10 ES until further notice?", None),
        (
            "I'll give you a temp raise to 20,000oz until Friday 17:00 SAST, CRO has signed.",
            "risk_limit",
        ),
    ],
)
def test_the_fortieth_rounds_desk_speech_and_its_look_alikes(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


def test_a_status_line_moving_a_trade_to_matched_is_no_status_report() -> None:
    # the guard that keeps a status line ordinary lets a trade matched through: the rules
    # decide it (as what its fields name first)
    text = (
        "SwapLink status change: SL-88213 | trade date 17-Jun-25 | SPX Dec-25 variance swap |"
        " WE BUY vega $50,000 @ 21.10 | cpty MERIDIAN | ALLEGED → MATCHED (cpty affirmed"
        " 15:04:31Z) | no economic breaks"
    )
    assert _rules_read(text, None) is not None
    assert _rules_read(text.replace("ALLEGED → MATCHED", "status unchanged"), None) is None


# A review with fresh eyes of the fortieth round's first forms: look-alikes they made
# decisions by the rules alone, which the narrowed forms leave ordinary, and genuine
# decisions in the new shapes that the rules find (by the rules alone, as a reply to
# the parent when one is given).
REVIEW40_LOOK_ALIKES = [
    (
        (
            "go. still on the phone with Klaus about it, he wants to see the stop "
            "and the size before anything goes out, back to you in a bit on the "
            "Bund"
        ),
        "proposal: buy 200 Bund at 131.20, ok?",
    ),
    (
        (
            "send it. the holiday photos from Lisbon I mean, the kids want to see "
            "them tonight and my phone is dead, thanks a lot mate really "
            "appreciated"
        ),
        ("proposal: buy 200 Bund at 131.20, ok? also got the Lisbon photos if you want them"),
    ),
    (
        (
            "go. it's still raining in Frankfurt and the kids' football is off, so "
            "I'm home all afternoon, call me when you have the full deck on the "
            "Bund"
        ),
        "proposal: buy 200 Bund at 131.20, ok?",
    ),
    (
        (
            "send it. the invoice for the team dinner I mean, it's still sitting "
            "in my inbox unpaid and finance keeps chasing me about it every single "
            "day"
        ),
        ("proposal: buy 200 Bund at 131.20, ok? also should I send you the dinner invoice?"),
    ),
    (
        (
            "do it. the fire drill sign-up I mean, the floor wardens are still "
            "missing two names and the drill is at 11, the Bund proposal is with "
            "risk"
        ),
        ("proposal: buy 200 Bund at 131.20, ok? also shall I run the fire drill sign-up?"),
    ),
    (
        (
            "go. currently in the dentist's chair with my mouth full of cotton, "
            "typing one-handed, the Bund stays exactly where it is until I'm out "
            "of here"
        ),
        "proposal: buy 200 Bund at 131.20, ok?",
    ),
    (
        (
            "send it. the birthday card for Klaus I mean — it's still in my "
            "drawer, everyone signed it except you, the Bund can wait for the "
            "morning meeting"
        ),
        ("proposal: buy 200 Bund at 131.20, ok? btw shall I send round Klaus's birthday card?"),
    ),
    (
        (
            "no, nothing changed on the settlement instructions, same SSI as last "
            "year for Deutsche, ops double-checked the whole list after the audit "
            "last month"
        ),
        ("proposal: sell 5mm UST 10y at 4.21 via Deutsche, ok? any change to their SSIs?"),
    ),
    (
        (
            "yes Ade go, hope she feels better soon, the Bund can wait until "
            "tomorrow when Klaus is back and we can look at the curve together"
        ),
        ("proposal: buy 200 Bund at 131.20, ok? also my kid is sick, can I head home early?"),
    ),
    (
        (
            "ok Dont do it, the spread is far too wide right now and the auction "
            "is tomorrow, we are not adding duration into that, sorry"
        ),
        "proposal: buy 200 Bund at 131.20, ok?",
    ),
    (
        (
            "ok Tomorrow do it, the auction is out of the way by then and the desk "
            "has had a look at the curve, we can size it properly in the morning "
            "meeting"
        ),
        "proposal: buy 200 Bund at 131.20, ok?",
    ),
    (
        (
            "yes Mia go, the dentist won't wait and the XOM idea is still there "
            "tomorrow, we'll look at it together at the morning meeting with the PM"
        ),
        ("proposal: buy 60k XOM at 101.20 limit, ok? also can I pop out for the dentist at 3?"),
    ),
    (
        (
            "ok Nadia go, enjoy the match tonight, the Bund is a tomorrow "
            "conversation and Klaus still wants the stop on the card before "
            "anything else"
        ),
        "proposal: buy 200 Bund at 131.20, ok? can I leave at 6 for the match?",
    ),
    (
        (
            "ok Never do it, the spread is far too wide right now and the auction "
            "is tomorrow, we are not adding duration into that, sorry mate"
        ),
        "proposal: buy 200 Bund at 131.20, ok?",
    ),
    (
        "yes",
        "Quotes from Bloomberg look stale again. hit the gym at 6?",
    ),
    (
        "yes",
        "levels 1-40 done on the new Zelda! hit the pub at 7?",
    ),
    (
        "take it",
        ("Sofa on Marketplace: two offers so far, 150 from Mark and 180 from Jo. take Jo at 180?"),
    ),
    (
        "yes",
        "quotes from the movers: Acme 1,200, Zed 980. take Zed at 980?",
    ),
    (
        "yes",
        "Offers for the flat came in: 410k and 425k. take the Smiths at 425k?",
    ),
    (
        "yes",
        ("Noise levels on the floor are insane today, 85 dB by the printer. hit the pub at 5?"),
    ),
    (
        "yes",
        ("Quotes for the offsite venue are in, Lisbon 450 a head, Porto 390. take Porto at 390?"),
    ),
    (
        "yes",
        "Two offers for my old bike: 150 from Mark and 180 from Jo. take Jo at 180?",
    ),
    (
        "do it",
        "Got three quotes for the roof: 4,200, 3,900 and 5,100. take Dave at 3,900?",
    ),
    (
        "yes",
        "the kids finished all the levels on Mario already. hit the park at 4?",
    ),
    (
        "sure",
        "Quotes from the taxi firms: Addison Lee 65, Uber 48. take Uber at 6?",
    ),
    (
        "yes",
        ("Bids for the charity auction closed at 2,400 for the signed shirt. take it at 2,400?"),
    ),
    (
        "yes",
        (
            "bids back: Delacroix 12.98, Morvan 12.92. take Delacroix at 12.98? "
            "that's the training case for the grads, not live"
        ),
    ),
    (
        "yes",
        ("Quiz for the juniors: offers at 101.10 and 101.15, bids 101.00. lift Nomura at 101.10?"),
    ),
    (
        "yes",
        "UAT test case 14: bids back from 3 dealers. hit DLR1 at 99.10?",
    ),
    (
        "yes",
        (
            "offers on the used Golf: 9,500 from the dealer and 9,200 private. "
            "take the private at 9,200?"
        ),
    ),
    (
        "yes",
        "Bids on my PS5 are in: 280 and 300. take Ahmed at 300?",
    ),
    (
        "take it easy",
        (
            "bids back: Delacroix 12.98 for 500k, Morvan 12.92 — just what the "
            "client asked last week. take Delacroix at 12.98?"
        ),
    ),
    (
        "yes",
        ("quotes in for the team jerseys: 25 each from Nike, 22 from Kappa. take Kappa at 22?"),
    ),
    (
        "yes",
        "Levels of the river are up again near the office. take the tube at 5?",
    ),
    (
        "yes",
        (
            "The nursery's quote came back: 1,450 a month, the other one 1,600. "
            "take Sunbeam at 1,450?"
        ),
    ),
    (
        "fine, 10.15",
        "Standup moved. stop by room 4 at 10?",
    ),
    (
        "sure, 7.45",
        "which bus stop? the 7.30 one?",
    ),
    (
        "fine, 250",
        "target for the charity run this year? 200 again?",
    ),
    (
        "stop 104 is fine",
        "which bus stop do I get off at for the office?",
    ),
    (
        "target 2.0 is right",
        "ECB inflation target still 2%? or do they move it in the review?",
    ),
    (
        "fine, 1,200 — that was the quote from the plumber",
        "did the plumber stop by?",
    ),
    (
        "fine, 5.30. see you at the school gate",
        "can you stop at the shops on the way home? 5ish?",
    ),
    (
        "agreed, 2030.",
        "when do we hit the net-zero target? 2030?",
    ),
    (
        "sure, 401",
        "can you stop by my office later? which room are you in now?",
    ),
    (
        "agreed, 3.5.",
        "what's the Q3 sales target? 3.5m again?",
    ),
    (
        "fine, 12.30",
        "when do you want to stop for lunch? 12?",
    ),
    (
        "the target 5,000 is right",
        "fundraising target for the Movember page? 5k?",
    ),
    (
        "sure, 110.50 — same as yesterday, nobody moved it",
        "what's the stop on XOM at the moment?",
    ),
    (
        "sure, 36.18 — in the backtest, not live",
        "what stop did you use in the backtest for XOM?",
    ),
    (
        "target 1.2800 is right for the textbook example, nobody trades it like that",
        "target in the training example for GBPUSD?",
    ),
    (
        "sure, 2.45",
        "can you stop by the HR office this afternoon for the review?",
    ),
    (
        "fine, 19.30",
        "shall we stop for dinner on the way back? half seven?",
    ),
    (
        "agreed, 1,500.",
        "what's the step target for the wellness challenge? 1,000 a day is too easy",
    ),
    (
        "target 180 is fine",
        "what's your target heart rate on the bike? my coach says 170",
    ),
    (
        "sure, 8.15",
        "can you stop the heating timer at 8 tomorrow? or later?",
    ),
    (
        "fine, 2.5",
        "the inflation target debate again: should the Fed stop at 2% or go to 2.5?",
    ),
    (
        "stop 212 works fine",
        "which tram stop is closest to the new office?",
    ),
    (
        "fine, 1.0815 — if it's a paper trade for the course",
        "where would you put the stop on the EURUSD long in the case study?",
    ),
    (
        "sure, 1,006.50 for the exam question",
        "in the CFA mock, where's the stop for the PLN5 short?",
    ),
    (
        ("Block trade: 5m AAPL crossed on the tape at 190.20, not ours, someone big is out there"),
        None,
    ),
    (
        "Block trade: what's the minimum size for Bund futures on Eurex these days",
        None,
    ),
    (
        "Block trade | min size table for Eurex | FGBL 500, FGBM 500",
        None,
    ),
    (
        "Block fill: how do we allocate it across the three accounts",
        None,
    ),
    (
        "FILL ord=123 TEST BUY 2 @ 5,010.25",
        None,
    ),
    (
        "FILL ord=9 UAT BUY 2 @ 5,010.25",
        None,
    ),
    (
        "FILL ord=77 PAPER BUY 2 @ 5,010.25",
        None,
    ),
    (
        "FILL ord=12 SIM BUY 2 @ 5,010.25",
        None,
    ),
    (
        "FILL ord=12 DRILL SELL 5 @ 101.2",
        None,
    ),
    (
        "Fill ratio=0.82 avg BUY 10 lots per child order, TCA review Friday",
        None,
    ),
    (
        "FILL ord=12 ESZ5 BUY 2 @ 5,010.25 | replay from yesterday",
        None,
    ),
    (
        ("Block trade: training at 3pm in room 4, how to report a 500-lot FGBL block on T7"),
        None,
    ),
    (
        "block trade - anyone know if the 5m AAPL on the tape was us",
        None,
    ),
    (
        "FILL ord=1 SAMPLE BUY 2 @ 100 — this is the format the new OMS will send",
        None,
    ),
    (
        "EXEC ord=55 EXAMPLE SELL 10 @ 99.5 (from the vendor docs)",
        None,
    ),
    (
        "TRADE id=42 MOCK BUY 3 @ 12.5",
        None,
    ),
    (
        "BLOCK FILL ord=B-1 FGBLZ5 SELL 150 @ 131.22 | DRY RUN",
        None,
    ),
    (
        ("Block trade: 10k ES at 5,010 went through at 14:02 on CME, was that the Millennium one"),
        None,
    ),
    (
        "Exec rate=65% on SELL 3 of the algos last week, the desk average is 72",
        None,
    ),
    (
        "Fill time=120ms for BUY 5 on the new gateway, latency review Thursday",
        None,
    ),
    (
        "FILL ord=4 PENDING BUY 2 @ 5,010.25",
        None,
    ),
    (
        "Broker recap | SELL 5 MW @ 116.10 | to be confirmed",
        None,
    ),
    (
        "BROKER RECAP | Lindqvist | SELL 5 MW @ 116.10 | status=CONFIRMED | DRILL",
        None,
    ),
    (
        ("Deal recap | BUY 10 lots @ 55 | status=CONFIRMED | sample for the new template"),
        None,
    ),
    (
        (
            "Trade recap from yesterday: SELL 5 MW @ 116.10, all confirmed, just "
            "resending for the audit file"
        ),
        None,
    ),
    (
        "Deal recap | SELL 5 MW @ 116.10 | status=CONFIRMED → CANCELLED",
        None,
    ),
    (
        "Broker recap | BUY 5 MW @ 10.20 | disputed — they say we never confirmed",
        None,
    ),
    (
        (
            "Lessons learned: we bought 20 lots at 55 and only countersigned the "
            "recap two days later"
        ),
        None,
    ),
    (
        (
            "Throwback: we sold 4,500mt at 503 last March and they countersigned "
            "the recap within an hour"
        ),
        None,
    ),
    (
        (
            "Post-mortem: we sold 4,500mt at 503 and they countersigned the trade "
            "recap with the wrong price"
        ),
        None,
    ),
    (
        (
            "Trade recap | BUY 5 MW @ 116.10 | status=CONFIRMED | example only, "
            "copied from the ops wiki"
        ),
        None,
    ),
    (
        "Broker recap | Lindqvist | SELL 5 MW @ 116.10 | status=CONFIRMED | UAT",
        None,
    ),
    (
        ("trade recap (training case): we sell 10 lots Brent @ 74.10, cpty confirmed by phone"),
        None,
    ),
    (
        ("Trade recap | SELL 50 MW @ 88.40 | pending, to be confirmed by Vattenfall after 3pm"),
        None,
    ),
    (
        "Has anyone signed the recap for the 20 MW we sold at 88.40",
        None,
    ),
    (
        ("Vitol still haven't countersigned the trade recap for the 4,500mt we sold at 503"),
        None,
    ),
    (
        ("In the mock audit, ops countersigned the trade recap for 20 lots bought at 55"),
        None,
    ),
    (
        (
            "Broker recap | SELL 5 MW @ 116.10 | status=CONFIRMED | yesterday's, "
            "resent by Tullett by mistake"
        ),
        None,
    ),
    (
        (
            "Deal recap | BUY 10 lots @ 55 | cpty confirmed a different price "
            "(55.20), break opened with ops"
        ),
        None,
    ),
    (
        "Trade recap | BUY 3 lots @ 71 | status=CONFIRMED | from the demo environment",
        None,
    ),
    (
        "Usually we sold 20 lots by the open and they had signed the recap by noon",
        None,
    ),
    (
        "status check | SIM BUY 2 @ 10 | PENDING → CONFIRMED",
        None,
    ),
    (
        "status | training env | SELL 3 @ 99 | PENDING → CONFIRMED",
        None,
    ),
    (
        "Max size for attachments is 25m until further notice",
        None,
    ),
    (
        "Max order for merch is 20 t-shirts until further notice",
        None,
    ),
    (
        "Drill: max clip for tnolan is 10 ES until further notice",
        None,
    ),
    (
        "Does anyone know if max clip for tnolan is 10 ES until further notice",
        None,
    ),
    (
        ("Rumour is max clip for tnolan is 10 ES until further notice, anyone heard that"),
        None,
    ),
    (
        ("Max clip for tnolan is 10 ES until further notice — that was the 2022 rule, long gone"),
        None,
    ),
    (
        "did they give us the temp raise to 20,000oz until Friday",
        None,
    ),
    (
        "we asked for a temp raise to 20,000oz until Friday, no answer yet",
        None,
    ),
    (
        "Risk said no temp raise to 20,000oz until Friday",
        None,
    ),
    (
        "Can we get a temp raise to 20,000oz until Friday",
        None,
    ),
    (
        "Asking risk for a temp raise to 5 kt through T+1",
        None,
    ),
    (
        ("Drill scenario 3: temp raise to 20,000oz until Friday, walk through the approvals"),
        None,
    ),
]
REVIEW40_GENUINE = [
    (
        (
            "approved. it's the same ticket as this morning at a slightly better "
            "level, nothing else changed, book it under the usual strategy code "
            "please"
        ),
        ("proposal: buy 200 Bund at 131.10 — same as this morning, just a better level. ok?"),
    ),
    (
        (
            "go ahead. same structure as Tuesday, nothing's changed apart from the "
            "strike moving 50 up, keep the delta hedge with the same broker as "
            "before"
        ),
        ("proposal: buy 500 SX5E Dec 5000 calls at 42, same as Tuesday but strike 50 up. ok?"),
    ),
    (
        (
            "ok go. is same deal like yesterday, nothing is changed only the price "
            "little bit wider, we do it with same counterparty and same settlement"
        ),
        "proposal: sell 20 kt copper at 9,410 to Trafigura, ok?",
    ),
    (
        (
            "approved — nothing changed vs the draft except the settlement date, "
            "go with the same broker and the same allocation split across the "
            "three funds"
        ),
        "proposal: buy 1mm USDJPY at 151.20, settlement moved to T+2, ok?",
    ),
    (
        (
            "do it. nothing's different from the version Klaus signed yesterday "
            "apart from the 2bp wider level, so same sign-off applies, send it to "
            "Tradeweb"
        ),
        "proposal: sell 25mm DBR 2034 at 2.41 yield, ok?",
    ),
    (
        (
            "rejected. nothing changed since Monday, the concentration in Italian "
            "banks is still over the limit and I won't sign anything that adds to "
            "it"
        ),
        "proposal: buy 50k UCG at 38.20, ok?",
    ),
    (
        (
            "no. nothing has changed on the credit line, Bankhaus still can't take "
            "more from us, ask again when ops gets the new CSA signed and back to "
            "us"
        ),
        "proposal: pay 5y EUR swaps 100m with Bankhaus at 2.61, ok?",
    ),
    (
        "👍 go. nothing changed, same deal",
        "proposal: buy 200 Bund at 131.20, ok?",
    ),
    (
        (
            "genehmigt. nothing changed from the draft except the price is 3 cents "
            "better, so same limits, same account, book it as usual please, danke"
        ),
        "Vorschlag: 40k SAP kaufen bei 178.40, ok?",
    ),
    (
        (
            "aprobado. same as the draft, nothing changed except the settlement in "
            "T+1 now, go with Santander as usual and allocate to the two funds"
        ),
        "propuesta: vender 2mm de Bonos 10y a 3.12, ok?",
    ),
    (
        (
            "send it. same as the 9am one, no change on size or level, only the "
            "account moved to MACRO2 because the first one is full for the day"
        ),
        "proposal: buy 60k XOM at 101.20 limit again, ok?",
    ),
    (
        (
            "yes Marta go ahead, full size, the book has room under the DV01 limit "
            "and I like the entry after this morning's selloff in the belly of the "
            "curve"
        ),
        "proposal: buy 200 Bund at 131.20, ok?",
    ),
    (
        (
            "ok Kenji send it, 25 lots at the limit, we're fine on margin and the "
            "auction tail was small yesterday so I don't see much risk into the "
            "close here"
        ),
        "proposal: buy 25 JGB futures at 143.20 limit, ok?",
    ),
    (
        (
            "ok Priya approved, the whole 10m at 4.21 or better, the curve view is "
            "fine with me and risk has no issue with the extra DV01 this week at "
            "all"
        ),
        "proposal: sell 10mm UST 10y at 4.21, ok?",
    ),
    (
        (
            "ok Luísa go, full size, the book has plenty of room under the DV01 "
            "limit and I like the entry after this morning's selloff in the belly"
        ),
        "proposal: buy 200 Bund at 131.20, ok?",
    ),
    (
        (
            "ok Jean-Luc send it, 25 lots at 131.20 limit, we're fine on the DV01 "
            "and the auction tail was small, good luck with the fill on this one"
        ),
        "proposal: buy 25 Bund at 131.20, ok?",
    ),
    (
        (
            "yes Olu send it, the full 2mm at 1.0850, client is waiting and we "
            "have the room under the FX limit, just make sure the fixing isn't in "
            "the way"
        ),
        "proposal: sell 2mm EURUSD at 1.0850, ok?",
    ),
    (
        "ok Ade do it",
        "proposal: buy 60k XOM at 101.20 limit, ok?",
    ),
    (
        "yes Tom do it — 5k at 101.20, fine with risk",
        "proposal: buy 60k XOM at 101.20 limit, ok?",
    ),
    (
        "take it",
        (
            "bids back: Delacroix 12.98 for 500k, Morvan 12.92, Vasseur 12.90. "
            "take Delacroix at 12.98?"
        ),
    ),
    (
        "yes, lift them",
        ("offers in: Nomura 99.15 for 10mm, BNP 99.18, Barclays 99.20. lift Nomura at 99.15?"),
    ),
    (
        "yes hit it",
        "bids: Amber 99.10 for 5k, Wintermute 99.05. hit Amber @ 99.10?",
    ),
    (
        "go",
        (
            "bids back from the three dealers: Deka 101.42, Helaba 101.40, LBBW "
            "101.38. hit Deka at 101.42?"
        ),
    ),
    (
        "sì, prendi",
        (
            "bids back: Delacroix 12.98 for 500k, Morvan 12.92, Vasseur 12.90. "
            "take Delacroix at 12.98?"
        ),
    ),
    (
        "yep",
        ("levels from the street on 5y CDX: 52.25 bid at JPM, 52.0 at BofA. hit JPM at 52.25?"),
    ),
    (
        "agreed, 4,950",
        "target on the ES short? 4,950 or lower?",
    ),
    (
        "stop at 98.40 works fine",
        "stop on the gilt long? I was thinking 98.40",
    ),
    (
        "sl 0.6520 sounds good",
        "SL on the AUDUSD long?",
    ),
    (
        "target 1.2800 is right, leave it there",
        "target on cable?",
    ),
    (
        "fine — 110.50",
        "where do we put the stop on the XOM long?",
    ),
    (
        "yeah fine, 110.50",
        "where do we put the stop on the XOM long?",
    ),
    (
        "fine by me, 110.50",
        "where do we put the stop on the XOM long?",
    ),
    (
        "the stop at 1,985 is good, rest it with Marex",
        "stop on the gold short?",
    ),
    (
        "agreed, 18,450",
        "stop on the NQ short — 18,450?",
    ),
    (
        "BLOCK_FILL ord=B-7781 FGBLZ5 SELL 150 @ 131.22 acct=MACRO1",
        None,
    ),
    (
        "FILL ord=Q-55 AAPL SELL 1,000 @ 190.12",
        None,
    ),
    (
        "FILL clordid=abc123 XAUUSD SELL 500 @ 2,341.10",
        None,
    ),
    (
        "[EMS] BLOCK FILL ord=77812 ESZ5 BUY 40 @ 5,012.25",
        None,
    ),
    (
        "PARTIAL FILL ord=5521 TTFZ5 SELL 20 @ 34.85 remaining=30",
        None,
    ),
    (
        "block trade: bought 500 FGBL at 131.22 from DB, booked to MACRO1",
        None,
    ),
    (
        ("Trade recap — SOLD 10,000 bbl Brent Dec @ 74.10 vs Glencore, status: affirmed"),
        None,
    ),
    (
        ("broker recap | Tullett | SELL 2,000 lots Cal-26 EUA @ 71.30 | status: CONFIRMED"),
        None,
    ),
    (
        "DTCC status: CTM 55123 | SOLD 40,000 MSFT @ 421.10 | UNMATCHED => AFFIRMED",
        None,
    ),
    (
        "max order size for asia = 5k shares until further notice",
        None,
    ),
    (
        "Maximum ticket size for J.Park is 25 lots until further notice",
        None,
    ),
    (
        "Max clip: 200 NQ until further notice",
        None,
    ),
    (
        "Max clip for ana is 10 ES till further notice, after today's slip",
        None,
    ),
    (
        "Max clip for the NY desk is 10 ES until further notice",
        None,
    ),
    (
        "temp raise to 50 kt until month-end for the Codelco tender",
        None,
    ),
    (
        "temp cut to 10 koz until the vol calms down",
        None,
    ),
    (
        "temporary raise to 400,000 bbl until the cargo settles",
        None,
    ),
]


@pytest.mark.parametrize(("text", "parent"), REVIEW40_LOOK_ALIKES)
def test_the_fortieth_rounds_review_look_alikes_stay_ordinary(
    text: str, parent: str | None
) -> None:
    assert _rules_read(text, parent) is None


@pytest.mark.parametrize(("text", "parent"), REVIEW40_GENUINE)
def test_the_fortieth_rounds_review_decisions_are_found(text: str, parent: str | None) -> None:
    assert _rules_read(text, parent) is not None


# The forty-second round: a stop moved on a chart's timeframe, its target left at a level
# ("…, target 7.4615 unchanged"), read as the nothing-changed guard's exception already read
# "…, tp unchanged" (ADR 0067), with its look-alikes
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        (
            "EURDKK 7.4631, 10 pips in. moving the stop down to 7.4650 on the 30m, target "
            "7.4615 unchanged. Locks in a couple of pips if the term flow reverses on us.",
            "stop_or_target_change",
        ),
        ("moving the stop to 7.4650, target 7.4615 unchanged", "stop_or_target_change"),
        (
            "raising the bund stop to 131.20 on the close, tp 132.50 unchanged",
            "stop_or_target_change",
        ),
        (
            "moving the stop up to 1.0850 on the 4h close, target unchanged",
            "stop_or_target_change",
        ),
        ("tightening the stop to 11.78 in the backtest, target unchanged", None),
        ("nobody is moving the stop to 11.78, target unchanged", None),
        ("if it breaks, moving the stop to 7.4650 on the 30m, target unchanged", None),
        ("should we be moving the stop to 7.4650 on the 30m, target 7.4615 unchanged?", None),
        ("moving the stop to 7.4650 on the 30m would be silly, target unchanged", None),
        ("target 7.4615 unchanged, stop 7.4650 unchanged", None),
        ("bumping the savings target to 5000 on the 1st, budget 200 unchanged", None),
    ],
)
def test_the_forty_second_rounds_stop_moved_with_its_target_left(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


# The forty-seventh round's trial: an instrument's stop put to a level beside what stays
# ("TY stop to 112-04, … - otherwise unchanged"), read as the nothing-changed guard's
# exception reads "moving the stop to …, target unchanged" (ADR 0072), with its look-alikes
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        ("TY stop to 112-04, locking in a bit - otherwise unchanged", "stop_or_target_change"),
        (
            "EURUSD stop up to 1.0845 (breakeven-ish), target 1.0950 unchanged",
            "stop_or_target_change",
        ),
        ("bund stop to 131.20, target unchanged", "stop_or_target_change"),
        ("the bus stop to 12 is closed today, route unchanged", None),
        ("ES stop to 6040 unchanged", None),
        ("ES stop to 6040 would be too tight, target unchanged", None),
        ("if it breaks, ES stop to 6040, target unchanged", None),
        ("ES stop to 6040 still, target unchanged", None),
        ("ES stop to 6040? target unchanged", None),
        ("ES stop to 5pm meeting, agenda unchanged", None),
    ],
)
def test_the_forty_seventh_rounds_instrument_stop_put_to_a_level(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


# The forty-second round's trial: a refusal whose reason names a hedge or a book ("no, too
# correlated with the NQ hedge") is a verdict on the proposal it answers, not a position
# change; a position changed beside a refusal still is one (ADR 0067)
@pytest.mark.parametrize(
    ("reply", "parent", "event_type"),
    [
        ("no, too correlated with the NQ hedge", "P", "trade_approval"),
        ("nope - too crowded, we already own the ES hedge", "P", "trade_approval"),
        ("denied, too correlated", "P", "trade_approval"),
        ("nope, too big. closing half the NQ hedge now", "P", "position_change"),
        ("too correlated with the NQ hedge, closing it", None, "position_change"),
        ("closed the NQ hedge", None, "position_change"),
        ("no, too correlated. flat the NQ hedge", "P", "position_change"),
        # the forty-third round: a refusal's other wordings, and an act after its reason
        ("no thanks, too correlated with the NQ hedge", "P", "trade_approval"),
        ("no, far too correlated with the NQ hedge", "P", "trade_approval"),
        ("no, it's too correlated with the NQ hedge", "P", "trade_approval"),
        ("no, too similar to the NQ hedge", "P", "trade_approval"),
        ("declined, too concentrated in the hedge book", "P", "trade_approval"),
        ("no, too late, already flat ES", "P", "position_change"),
        ("pass, too crowded — closed the rest of the SOL", "P", "position_change"),
        ("nah, too rich, covered the short", "P", "position_change"),
        ("pass, too crowded, closing the rest", "P", "position_change"),
        ("nope - too crowded - closed it", "P", "position_change"),
        # resizing the proposal is its verdict, not a position changed (a review)
        ("no, too big, halve it", "P", "trade_approval"),
        ("no, too big, cut it to 5", "P", "trade_approval"),
        ("no, too small, double it", "P", "trade_approval"),
    ],
)
def test_the_forty_second_rounds_refusal_naming_a_hedge(
    reply: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(reply, PROPOSAL if parent == "P" else parent) == event_type


# The forty-third round: a desk's default route set for a time, a venue named "direct" for
# everything of a kind, and a freeze on adding risk before a time — with look-alikes that ask,
# look back, set a condition or wish (ADR 0068)
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        ("for the rest of the week the default route for rates is Halden voice", "route_decision"),
        ("default broker until Friday: Tullett", "route_decision"),
        ("from now on the default algo for NQ is TWAP", "route_decision"),
        ("today everything in bunds goes Eurex direct", "route_decision"),
        (
            "till the gateway is fixed everything softs goes ICE direct from my screen",
            "route_decision",
        ),
        ("nobody adds front-end risk before 09:30", "risk_limit"),
        ("no one puts on more duration risk until the auction", "risk_limit"),
        ("what's the default route?", None),
        ("the default broker was Tullett last year", None),
        ("if the default algo is TWAP we're fine", None),
        ("the default route should probably be Marex", None),
        ("everything goes CME direct?", None),
        ("if everything goes CME direct we pay more", None),
        ("the default font is Arial", None),
        ("my screen is frozen again", None),
        ("nobody adds risk before 09:30?", None),
        ("if nobody adds risk before the number we miss it", None),
        ("nobody adds milk to my coffee before 9", None),
        # an add, a hit or a lift asked leave for, size and level said: a proposal
        ("Want to add 100 RXZ5 at 128.40 to make it 300?", "trade_proposal"),
        ("ok to add 2mm at 101.50?", "trade_proposal"),
        ("want me to lift the 3mm offer at 102.25?", "trade_proposal"),
        ("the hedge fund has a bid 98.10 for 2mm, want to hit?", "trade_proposal"),
        ("can I add 2 people at 5?", None),
        ("can we add 2 seats at 7pm?", None),
        ("want to add 3 rows at the top?", None),
        ("did they add 100 RXZ5 at 128.40?", None),
        ("bid 101.75 for 4mm, want to know who?", None),
        # an order worked by voice through a named broker
        ("screen is empty — I'll do it voice via Tullett, they had offers", "route_decision"),
        ("doing the rest by phone through Marex", "route_decision"),
        ("I'll do it via Zoom", None),
        ("do it voice via the app?", None),
        ("if the screen is empty I'll do it voice via Tullett", None),
        # a review's look-alikes: routes in other trades, a hedge, a wish, an observation
        ("the default route for the app is HomeController", None),
        ("the default route is Index in the new frontend", None),
        ("the default destination is Lisbon for the offsite", None),
        ("default venue for the party: Nobu", None),
        ("all our flights go BA direct", None),
        ("everything goes Amazon direct now", None),
        ("the default route for rates is Halden voice, I think", None),
        ("the default route for rates is Halden voice, isn't it", None),
        ("I hope nobody adds risk before the CPI", None),
        ("in my experience nobody adds duration risk before the auction", None),
        ("nobody adds duration risk before the auction, that's the norm here", None),
    ],
)
def test_the_forty_third_rounds_defaults_and_freezes(text: str, event_type: str | None) -> None:
    assert _rules_read(text, None) == event_type


# The forty-fourth round: a route straight to the screen with how, an RFQ to named dealers,
# a trade cleared one way and not another, an auction's award, a contract's size put to the
# room as a question, a rejection at the level asked — with look-alikes (ADR 0069)
@pytest.mark.parametrize(
    ("text", "parent", "event_type"),
    [
        ("straight to screen at market, no algo, it's moving too fast", None, "route_decision"),
        ("direct to the screen, limit order at 3.97", None, "route_decision"),
        (
            "RFQ on the platform to Léman, Helvetia Kantonal and Rhône Privée, best price wins",
            None,
            "route_decision",
        ),
        ("putting it through FICC sponsored, not bilateral — it nets", None, "route_decision"),
        ("awarded in full: 500mm new 2s at 3.972%. settles 6/2", None, "trade_fill"),
        ("we were awarded 300mm at 4.02 in the auction", None, "trade_fill"),
        ("could we buy 1,000 USU5 outright here? 30s gave back 4bp", None, "trade_proposal"),
        (
            "JEPX RESULT bid=JX-1 blocks 35-40\nawarded=30.0MW (100%) avg_px=25.84",
            None,
            "trade_fill",
        ),
        (
            "I said diffs would firm. That's wrong, I change my mind. We sell.",
            None,
            "thesis_change",
        ),
        ("if that's wrong I change my mind", None, None),
        ("that's wrong, I change my mind about lunch", None, None),
        ("awarded: 3 stars", None, None),
        ("no at 95. bid 93.5 and let them walk if they want", "P", "trade_approval"),
        ("went straight to the screen to check", None, None),
        ("straight to screen?", None, None),
        ("straight to the screen at market?", None, None),
        ("awarded 3 stars by the magazine", None, None),
        ("was it awarded in full: 500mm?", None, None),
        ("could we buy 2 tickets here?", None, None),
        ("could we buy 1,000 USU5 last week?", None, None),
        ("no at 95?", "P", None),
        ("putting it through QA, not prod, the deploy can wait", None, None),
        ("putting it through the wash, not the dryer", None, None),
    ],
)
def test_the_forty_fourth_rounds_routes_awards_and_questions(
    text: str, parent: str | None, event_type: str | None
) -> None:
    assert _rules_read(text, PROPOSAL if parent == "P" else parent) == event_type


# The forty-fifth round: a size taken off a package, a level no longer expected, an order
# worked by hand with dealers rather than left on a screen, a limit set until a post-mortem
# still to come — with look-alikes (ADR 0070)
@pytest.mark.parametrize(
    ("text", "event_type"),
    [
        ("agree. take 10 off the package at the London open tomorrow", "position_change"),
        ("taking 5 off the basis trade here, 20 left", "position_change"),
        ("took 3 off the steepener into the print", "position_change"),
        ("it's retraced, and I no longer think it goes back to -18", "thesis_change"),
        ("I no longer think the spread gets back to 40", "thesis_change"),
        (
            "the rest, 4mm, I'll work by hand with two dealers rather than leave it resting on MOT",
            "route_decision",
        ),
        (
            "for tonight and until Priya's post-mortem on Friday: Asia discretion is 5mm clips,"
            " max 10mm net change per session, and no adds to INDON long risk at all",
            "risk_limit",
        ),
        ("take 10% off the package price for the client", None),
        ("I no longer think about the package on weekends", None),
        ("do you no longer think it goes back to 18?", None),
        ("I'll work by hand with two kids rather than watch TV", None),
        ("will you work by hand with two dealers rather than on MOT?", None),
        ("lessons learned from the post-mortem: we usually cut too late", None),
        # a review's look-alikes
        ("Last month, pending the post-mortem, the gross limit was cut to 5mm", None),
        ("historically we halved the gross limit to 5mm until the post-mortem", None),
        ("I no longer think the meeting will be at 2", None),
        ("I no longer think the kids will go to bed at 8", None),
        ("take 10 off the holiday package", None),
        ("take 5 off the pair of shoes", None),
        ("take 10 off the package deal for the client", None),
        ("we're doing it by hand with the banks, not the DMV form", None),
        ("I'll work by hand with the banks rather than book it", None),
        # a new user's trial: a blackout and a freeze around a print, a hypothetical, a stop
        # not hit
        ("Reminder: CPI blackout. No new orders 13:15-13:45 UTC.", "risk_limit"),
        ("No new orders until 13:45 UTC.", "risk_limit"),
        (
            "Heads up: CPI in 2h. Nobody adds risk in the 15 min either side of the print.",
            "risk_limit",
        ),
        ("stop not hit, moving it to breakeven", "stop_or_target_change"),
        ("no new orders from the client today", None),
        ("no new orders since lunch", None),
        ("I hope nobody adds risk in the 15 min either side of the print", None),
        ("imagine moving the stop to 6050 lol", None),
        ("imagine if we had filled 300 at 421", None),
        ("EURUSD -40 pips in a second, ugh. stop not hit", None),
        # a limit put back to a level after a snapshot's label; a limit agreed with a role
        # is no order confirmed
        ("Risk: desk gross limit back to 75m after the print (from 60m).", "risk_limit"),
        (
            "DV01 limit for the macro desk reduced to 45k from 60k until FOMC"
            " (Jen, confirmed with CRO).",
            "risk_limit",
        ),
        ("Trade confirmed with Goldman: 5,000 AAPL @ 231.40", "trade_confirmation"),
        ("Reminder: VaR limit goes back to 4.0m at 18:00Z. Current 3.71m, fine", None),
        ("I'll still take the temp DV01 limit back to 30k on Friday as agreed", None),
        ("Risk: gross 62m vs 90m limit, all fine", None),
        ("is the limit back to 75m?", None),
    ],
)
def test_the_forty_fifth_rounds_packages_views_hands_and_limits(
    text: str, event_type: str | None
) -> None:
    assert _rules_read(text, None) == event_type


@pytest.mark.parametrize(
    ("text", "parent", "expected"),
    [
        # an order worked one way, another way of dealing refused at the clause's end (ADR 0073)
        ("working it on the NBP screen myself, no algo — the book's thin", None, "route_decision"),
        ("joining the 41.20 bid passive on EEX, not crossing.", None, "route_decision"),
        ("going in as an ICE spread order, 80 at -0.15, not legging it", None, "route_decision"),
        ("asking GS + UBS only, not the full street", None, "route_decision"),
        ("bid 3.5 on Globex yourself — no London broker", None, "route_decision"),
        ("doing the call spread on screen, no broker", None, "route_decision"),
        (
            "working it on the ICE screen myself, no algo, market is too thin",
            None,
            "route_decision",
        ),
        # …not what merely names such words: a router, a dealer's shop, an auction house,
        # the words after it, the past, an opinion, a condition, a question
        ("running it on the PS5, not the router", None, None),
        ("doing it at Halfords for £40, not the dealer", None, None),
        ("bidding 50 quid on eBay myself, not the auction house", None, None),
        ("running the 10k on Sunday, not the street race", None, None),
        ("putting it in the ISA for 5 years, no broker fees", None, None),
        ("Offering 73.60 on EEX all morning, no algos in the book", None, None),
        ("bid 101 on the block yesterday, no dealers showed", None, None),
        ("Doing it by voice rather than RFQ is slower but cheaper on 10mm+", None, None),
        ("asking GS + UBS only, not the full street, if it's over 50m", None, None),
        ("should we work it on the ICE screen, no algo?", None, None),
        # new buys or sells blocked in a book until an event (a risk limit), not purchase
        # orders, friend adds, tickets or card orders
        (
            "Blocking new Bund/Schatz buys in RATES-EU till the auction, sells are ok",
            None,
            "risk_limit",
        ),
        ("Blocking new buys in GOV-MB till the presser", None, "risk_limit"),
        ("We're blocking new purchase orders for office supplies until Q3", None, None),
        ("I'm blocking new friend adds on Facebook until the weekend", None, None),
        ("We're blocking new card orders on the mobile app until the fix", None, None),
        # limits given for a session under a label, and what one may trade up to a size and
        # nothing else (a new user's trial), not a speed limit, a pointer or a question
        ("Overnight limits: G10 gross 300m, EM VaR 3.0m. Over that, cut", None, "risk_limit"),
        ("Asia: you may trade USDJPY up to 20m overnight, nothing else.", None, "risk_limit"),
        ("speed limits: 30 in town", None, None),
        ("Overnight limits: same as yesterday", None, None),
        ("you can trade up to 20m on the app", None, None),
        ("you may trade USDJPY up to 20m if the CRO signs, nothing else?", None, None),
        # a verdict after the id or the letter of what it answers, not after a quarter, a
        # half, a version or a price
        (
            "R7 approved. far leg with the usual bank, obviously",
            "Roll card R7: sell 20m EURNOK 1M, ok?",
            "trade_approval",
        ),
        (
            "card 02 → pass. skew's already bid",
            "card 02: buy 500 SX5E 4800P at 31.5, ok?",
            "trade_approval",
        ),
        (
            "b yes.",
            "two ways: (a) buy 50 FGBL at 131.10, (b) sell 30 FGBM at 117.40 — ok?",
            "trade_approval",
        ),
        ("Q3 ok, Q4 guide is the risk", "buy 20k SAP GY at 231.50 into the print, ok?", None),
        ("H1 ok but H2 looks weak", "buy 20k SAP GY at 231.50 into the print, ok?", None),
        ("v2 ok, v1 was off", "buy 20k SAP GY at 231.50 into the print, ok?", None),
    ],
)
def test_a_way_of_dealing_refused_a_block_on_new_buys_and_a_verdict_by_id(
    text: str, parent: str | None, expected: str | None
) -> None:
    assert _rules_read(text, parent) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # an order put one way in so many words (the fiftieth round's development desks)
        (
            "ok I'll do it — putting it on the dealer streams, not voice, market is 277/280",
            "route_decision",
        ),
        ("working it by voice with 3 dealers, 6mm clips", "route_decision"),
        ("doing both legs on the OMIP screen, PT leg first", "route_decision"),
        (
            "putting it on a TWAP algo on Globex over the settlement window, not with the broker",
            "route_decision",
        ),
        ("ok putting it on the dealer streams", "route_decision"),
        ("fine, working it by voice with 3 dealers", "route_decision"),
        ("doing it on Eurex, 200 lots", "route_decision"),
        # the round's review: what the first form read (a noun the way word describes, a
        # time read as a price, any leg, a condition or an opinion after it, any words
        # before a dash, a test or a pilot)
        ("running it on the algo server", None),
        ("sending it as a voice note", None),
        ("doing it over voice chat", None),
        ("putting it on the LCH agenda", None),
        ("I'm working this with the a2a team", None),
        ("sending it via the platform to 3 clients at 9.30", None),
        ("putting it on the screen at 2.45 for the all-hands", None),
        ("doing both legs by phone (flight + hotel)", None),
        ("running the first leg on the platform", None),
        ("putting it on the algo if risk signs off", None),
        ("putting it on the algo when the market opens", None),
        ("putting it on the algo is a bad idea", None),
        ("working it by voice with 3 dealers, 6mm clips — thoughts", None),
        ("Option 2 — working it by voice with 3 dealers", None),
        ("hypothetically — putting it on the algo", None),
        ("we are running it on the algo as a pilot in UAT", None),
        ("putting it on the dealer streams, not voice — ok with you?", None),
        ("working it by voice was a mistake", None),
        ("sending it by phone, not by email", None),
        ("putting it on ice until Monday", None),
        # new entries stopped after a label, in a pair's name, for a time
        ("FX: no new USD/KRW shorts for the rest of today in any book", "risk_limit"),
        ("no new EUR/USD longs until the ECB", "risk_limit"),
        ("Risk: no new entries today", "risk_limit"),
        ("Risk: no new entries in 3선 or 10선 from 09:48 to 09:55 KST", "risk_limit"),
        ("Risk: no new entries still", None),
        ("Risk: no new entries so far", None),
        ("Risk: no new positions opened today, gross 40m vs 60m limit", None),
        ("Risk: no new shorts as of 10:00", None),
        ("Risk: no new risk to report", None),
        ("no new I/O risk in the migration", None),
        ("no new log/audit entries in the DB since 3am", None),
        # no new entries in a log, a drive or a queue (the round's new-user trial)
        ("no new entries in the error log since the restart, looks clean", None),
        ("no new entries allowed in the shared drive root, use the team folders", None),
        ("no new entries in the book until the print", "risk_limit"),
        ("no new risk in the book today", "risk_limit"),
    ],
)
def test_an_order_put_one_way_and_new_entries_stopped_after_a_label(
    text: str, expected: str | None
) -> None:
    assert _rules_read(text, None) == expected


@pytest.mark.parametrize(
    ("text", "parent", "expected"),
    [
        # the fifty-first round's development desks: a book's length taken off as an
        # instruction after whom it is for, an order put through the voice broker this time,
        # a go after an assent, a verdict by a card's short id under its card
        (
            "Sophie — take the Edmonton diff length off, all 80k, today. Not into a strike.",
            None,
            "position_change",
        ),
        (
            "Kelsey, take 100k of the Belvieu spec length off now. cheapest VaR.",
            None,
            "position_change",
        ),
        ("take the short off here, 20 lots", None, "position_change"),
        # the round's review: clothes, hair, a job, a condition or a plan after it
        ("take the length off the sleeves", None, None),
        ("should we take the short off?", None, None),
        ("take the position off the agenda, it's stale", None, None),
        ("Sophie — take the length off if it breaks 67", None, None),
        ("Mum - take the length off, it's dragging", None, None),
        ("Hairdresser: take the length off, leave the fringe", None, None),
        ("Jo, take the sleeve length off, today", None, None),
        ("Ben, take the shorts off, they're wet", None, None),
        ("take the longs off first, then the jacket", None, None),
        ("Ana — take the job position off today", None, None),
        ("Sophie — take the Edmonton diff length off today if it breaks 67", None, None),
        ("Sophie — take the Edmonton diff length off, all 80k, next week", None, None),
        (
            "working it via the voice broker this time, screen only shows 50k on offer",
            None,
            "route_decision",
        ),
        ("working it via the voice broker if it gets quiet", None, None),
        ("sending it to the voice broker this time?", None, None),
        ("putting it through the voice broker this time last year", None, None),
        ("working it via the voice brokers this time next quarter", None, None),
        (
            "agree, do it",
            "want to sell back 7mm of the 15mm 1M NDF at 25,410. ok?",
            "trade_approval",
        ),
        (
            "I agree, do it",
            "want to sell back 7mm of the 15mm 1M NDF at 25,410. ok?",
            "trade_approval",
        ),
        (
            "agree, do it in the sim first",
            "want to sell back 7mm of the 1M NDF at 25,410. ok?",
            None,
        ),
        ("agree, take it offline", "this thread is getting long. ok?", None),
        ("agree, take your time", "I'll send the deck by Friday, ok?", None),
        ("agree, do it", "lunch at 1?", None),
        (
            "#02 no — MWG is our only consumer name and the print is Monday",
            "📇 CARD #0918-02  SELL MWG (reduce)\nsize 200,000 sh of 800,000 | limit ≥ 79,000",
            "trade_approval",
        ),
        (
            "#02 no — MWG is our only consumer name and the print is Monday",
            "📇 CARD #0918-02  SELL MWG (reduce)\nhit 79,000 at 10:02, closed",
            None,
        ),
        (
            "#02 no — not today",
            "CARD #0918-02 is in the deck for Monday's review\nsize of the deck: 40 pages",
            None,
        ),
        ("#2 no", "card #2 short BIO for the website\nsize: 100 words", None),
        ("#2 yes", "Card 2 - Long QT in the deck\nsize: 12 slides", None),
        ("#118 yes", "🗂 Card #118 · Buy SSL cert for the OMS\nsize: S", None),
    ],
)
def test_a_length_taken_off_a_route_by_the_voice_broker_and_verdicts_under_cards(
    text: str, parent: str | None, expected: str | None
) -> None:
    assert _rules_read(text, parent) == expected


@pytest.mark.parametrize(
    ("text", "parent", "expected"),
    [
        # the fifty-second round's development desks: signed levels (a spread's stop or
        # target moved to -11.60 or +5.100), a card's stop moved with its old level while its
        # target stays, a confirmation come back signed with no change to its wording, a
        # block on new sales or on entries named in three words, a block the writer has just
        # put in the system, a proposal in so many words with a hedge on its price, options
        # taken off after whom the order is for, a side given up, a view no longer believed,
        # a desk's new view, a stance moved on a line of its own, a risk limit set from
        # another, a verdict as a reply's last clause
        (
            "hogs sliding, HEJ 87.90. moving my spread stop to -11.60 from -12.00, target"
            " -9.50 unchanged.",
            None,
            "stop_or_target_change",
        ),
        (
            "bringing the target in from +5.400 to +5.100 so it's out before 1:05.",
            None,
            "stop_or_target_change",
        ),
        ("Heading off. Stop at -0.50 and nothing working on OMIP.", None, None),
        ("El stop en +42 sigue ahí.", None, None),
        (
            "CARD #LS-0518 spread +4.925 | trail rule hit: stop → breakeven +4.475 (was"
            " +3.900) | tgt +5.400 unchanged",
            None,
            "stop_or_target_change",
        ),
        ("stop → 4.475 (was 3.900) in the backtest, live unchanged", None, None),
        (
            "NoordGas confirm back, signed, no changes to the fallback wording, filed under"
            " OTC-25-0114",
            None,
            "trade_confirmation",
        ),
        ("confirm back? no changes yet", None, None),
        ("No new EU option sales until that's rebalanced", None, "risk_limit"),
        ("no new US Feb HDD entries until Monday's 00z runs, any size", None, "risk_limit"),
        ("no new sales until Q3", None, None),
        (
            "the hedge is over-sized. No new EU option sales until that's rebalanced, I've"
            " put a hard block on WXEU option entries in the system.",
            None,
            "risk_limit",
        ),
        ("the block I've put on GBP is still in the system", None, None),
        (
            "proposal for Monday's open: buy 100 LEM5 194P / sell 100 LEM5 190P put spread,"
            " ~1.10 debit on Thursday's marks, maybe 1.40-1.50 after this.",
            None,
            "trade_proposal",
        ),
        ("maybe a proposal: buy 100 LEM5 194P", None, None),
        ("Jen take the HEM5 100 calls off. that was the upside trade", None, "position_change"),
        ("Ben take the shorts off, they're wet", None, None),
        ("Then take the HEM5 calls off", None, None),
        ("I'm no longer a vol seller into Monday, I'd rather own downside", None, "thesis_change"),
        ("am I no longer a seller?", None, None),
        ("she's no longer a vol seller, she moved to sales", None, None),
        (
            "with EC moving the block east I don't believe that any more — we sold vol at a"
            " good price today",
            None,
            "thesis_change",
        ),
        ("I don't believe that any more than you do", None, None),
        ("ok, new desk view: Jan is a trade, Feb is not.", None, "thesis_change"),
        ("new desk view?", None, None),
        ("What changed\nLC deferred stance: constructive → neutral", None, "thesis_change"),
        ("LC deferred stance: constructive → neutral?", None, None),
        (
            "Setting EU option vega limit to -€20k (from -€15k) for the NoordGas trade",
            None,
            "risk_limit",
        ),
        ("setting up a limit order at 1.0850", None, None),
        (
            "Not while JPY is blocked. No.",
            "Proposal: buy 5mm USDJPY at 151.20, stop 150.40. ok?",
            "trade_approval",
        ),
        ("No idea. No.", "Proposal: buy 5mm USDJPY at 151.20, stop 150.40. ok?", None),
        # the round's new user: a hold on a name lifted by the name, entries "fresh"
        ("OAT freeze lifted", None, "risk_limit"),
        ("the BTP shorts block is released", None, "risk_limit"),
        ("Hannah: OAT freeze lifted, back to normal sizing", None, "risk_limit"),
        ("no fresh entries in French paper until the budget vote result", None, "risk_limit"),
        ("BTP block released to the client", None, None),
        ("OAT freeze lifted? not yet", None, None),
        ("OAT freeze lifted: no", None, None),
        ("the hiring freeze is over", None, None),
        # …and its review: a regulator's, an office's, a question, a plan, a recap, hearsay
        ("ECB freeze lifted on Russian reserves per Bloomberg", None, None),
        ("HR: IT freeze lifted, laptops can be ordered again", None, None),
        ("wait until the OAT freeze is lifted", None, None),
        ("Is the OAT freeze lifted", None, None),
        ("the BTP shorts block was released last week", None, None),
        ("Rumour: OAT freeze lifted", None, None),
        ("OAT freeze lifted tomorrow per risk", None, None),
        ("no fresh trades to report", None, None),
        ("no fresh risk headlines overnight", None, None),
        # the review of these rules: none of these is a decision
        ("setting the alarm limit to 5", None, None),
        ("setting the limit to 1.0850 on the buy order", None, None),
        ("setting the vega limit to -20k from -15k in the backtest", None, None),
        ("no new EUR IG bond trades this morning, very quiet", None, None),
        ("no new US Feb HDD entries yet", None, None),
        ("Germany: no new bond sales until September, per the Finanzagentur calendar", None, None),
        ("there were no new option sales until March last year, the desk was shut", None, None),
        ("Tomorrow take the HEM5 calls off", None, None),
        ("Otherwise take the HEM5 calls off", None, None),
        ("Tip: take the front calls off before expiry week", None, None),
        ("Jen take the HEM5 100 call off", None, "position_change"),
        ("I don't believe it anymore lol, 3 hours on hold with BT", None, None),
        ("he said I don't believe that any more but kept the position", None, None),
        ("I'm no longer a seller if CPI comes in hot", None, None),
        ("I'm no longer a licensed seller, my Series 7 lapsed", None, None),
        ("new desk view: Thames and Tower Bridge, loving the new floor", None, None),
        ("new desk view: TBD after the 4pm", None, None),
        ("ECB stance: cautious → neutral", None, None),
        ("Client stance: bullish → neutral, they're trimming", None, None),
        ("our stop held, the spread traded to -12.10 and bounced", None, None),
        ("Goldman cut their target to -5% for SPX returns", None, None),
        ("for reference: SL -> 4.475 (was 3.9), nothing changed today", None, None),
        ("backtest card: stop → 4.475 (was 3.900), tgt unchanged", None, None),
        ("proposal for later, maybe: buy 100 LEM5 194P", None, None),
        ("proposal: buy 100 LEM5 194P, let me think about it more first", None, None),
        ("no new positions currently, I've put a block on Friday for the offsite", None, None),
        (
            "Sorry, wrong thread. No.",
            "Proposal: buy 5mm USDJPY at 151.20, stop 150.40. ok?",
            None,
        ),
        (
            "Not while JPY is blocked - no.",
            "Proposal: buy 5mm USDJPY at 151.20, stop 150.40. ok?",
            "trade_approval",
        ),
    ],
)
def test_signed_levels_blocks_in_many_words_views_given_up_and_a_last_verdict(
    text: str, parent: str | None, expected: str | None
) -> None:
    assert _rules_read(text, parent) == expected
