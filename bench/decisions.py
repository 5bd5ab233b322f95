"""Decision recall of the hard-event rules on an independently written evaluation set.

    .venv/bin/python bench/decisions.py                  # the held-out split
    .venv/bin/python bench/decisions.py --split dev --show-misses
    .venv/bin/python bench/decisions.py --split all      # tune, dev and held-out
    .venv/bin/python bench/decisions.py --split japanese # held out too: Japanese desk chat
    .venv/bin/python bench/decisions.py --split japanese_dev --show-misses
    .venv/bin/python bench/decisions.py --split korean_dev   # also chinese_dev
    .venv/bin/python bench/decisions.py --split everyday --show-misses
    .venv/bin/python bench/decisions.py --split everyday_heldout  # held out: everyday chat

Each line of ``tests/data/decisions/<split>.jsonl`` is a desk message with its label (a
decision type, or null for a look-alike that is not a decision). Every line is
classified with the rules (the shipped defaults unless ``--rules FILE``) and the
decision model they name (``--no-model``: the rules alone); replies are classified
with their parent. Prints recall per decision type, per style and per
language, overall recall, the share of negatives kept (false positives) and the share
of decisions recognised with the right type, and how many messages a second the rules
classify (ordinary one-line messages, and every line of the split). ``--show-misses``
(the development splits only: the held-out ones, ``heldout``, ``japanese`` and
``everyday_heldout``, are for measuring, never for writing rules) lists what went wrong.
``everyday`` and ``everyday_heldout`` hold no decision: everyday chat that uses desk words
in their everyday sense, where only the share of lines kept means anything.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from channel_memory.worker.rules import RuleSet, default_rules, load_rules

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "decisions"


@dataclass(frozen=True, slots=True)
class Outcome:
    id: str
    label: str | None
    style: str
    lang: str
    found: str | None
    """The event type the rules give the message (None: not a hard event)."""


@dataclass(frozen=True, slots=True)
class Scores:
    outcomes: list[Outcome]

    @property
    def decisions(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.label is not None]

    @property
    def negatives(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.label is None]

    @property
    def recall(self) -> float:
        return _share(self.decisions, lambda o: o.found is not None)

    @property
    def typed(self) -> float:
        return _share(self.decisions, lambda o: o.found == o.label)

    @property
    def negatives_kept(self) -> float:
        return _share(self.negatives, lambda o: o.found is not None)

    def recall_by(self, field: str) -> dict[str, tuple[int, int]]:
        """``value -> (recognised, decisions)`` for a field of the lines."""
        out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for o in self.decisions:
            key = str(getattr(o, field))
            out[key][1] += 1
            out[key][0] += o.found is not None
        return {k: (v[0], v[1]) for k, v in sorted(out.items())}


def _share(items: list[Outcome], hit: Any) -> float:
    return sum(1 for o in items if hit(o)) / len(items) if items else 1.0


def load(split: str) -> list[dict[str, Any]]:
    """The lines of a split (``all``: tune, dev and held-out together)."""
    if split == "all":
        return [row for part in ("tune", "dev", "heldout") for row in load(part)]
    path = DATA / f"{split}.jsonl"
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def evaluate(rows: list[dict[str, Any]], rules: RuleSet) -> Scores:
    """Classify every line as the worker does (by itself, then a reply with its parent
    when that found nothing) and keep what the rules found."""
    outcomes = []
    for row in rows:
        decision = rules.decide(row["text"])
        if decision is None and row.get("parent"):
            decision = rules.decide(row["text"], parent=row["parent"])
        outcomes.append(
            Outcome(
                row["id"],
                row["label"],
                row["style"],
                row["lang"],
                decision.event_type if decision else None,
            )
        )
    return Scores(outcomes)


def report(scores: Scores) -> str:
    lines = []
    for field in ("label", "style", "lang"):
        lines.append(f"recall by {'type' if field == 'label' else field}:")
        for key, (hit, total) in scores.recall_by(field).items():
            lines.append(f"  {key:24} {hit:3}/{total:<3} {hit / total:6.1%}")
    decisions, negatives = scores.decisions, scores.negatives
    kept = sum(1 for o in negatives if o.found is not None)
    lines += [
        f"overall recall: {sum(1 for o in decisions if o.found)}/{len(decisions)} "
        f"{scores.recall:.1%}",
        f"recognised with the right type: {scores.typed:.1%}",
        f"negatives kept (false positives): {kept}/{len(negatives)} {scores.negatives_kept:.1%}",
    ]
    return "\n".join(lines)


def throughput(texts: list[str], rules: RuleSet, seconds: float = 1.0) -> float:
    """Messages classified per second (``RuleSet.decide`` on each text, repeated for
    about ``seconds``; the rules are compiled before the clock starts)."""
    done, started = 0, time.perf_counter()
    while True:
        for text in texts:
            rules.decide(text)
        done += len(texts)
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return done / elapsed


WITHOUT_SPACES = (
    "japanese_dev",
    "japanese_dev2",
    "chinese_dev",
    "chinese_dev2",
    "korean_dev",
    "korean_dev2",
    "chinese_dev3",
    "korean_dev3",
)
"""The development splits in Japanese, Chinese and Korean (``bench/train_model.py``'s desk
reading, its reading of text holding runs and its type classifier learn from them, ADRs
0042 and 0043)."""
ITALIAN = ("italian_dev", "italian_dev2")
"""The Italian development splits (read to write the Italian rules, ADR 0046; not trained on)."""
EVERYDAY = "everyday"
"""Everyday messages that use desk words in their everyday sense (none a decision): read to
narrow the rules, never trained on (ADR 0052); ``everyday_heldout`` (their held-out part)
only measures."""
DEVELOPMENT = ("tune", "dev", *WITHOUT_SPACES, *ITALIAN, EVERYDAY)
"""The splits read line by line (``--show-misses``)."""
HELD_OUT = ("heldout", "japanese", "everyday_heldout")
"""The splits that only measure: never read line by line."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=[*DEVELOPMENT, *HELD_OUT, "all"], default="heldout")
    parser.add_argument("--rules", help="a rules file (default: the shipped rules)")
    parser.add_argument(
        "--no-model",
        action="store_true",
        help="the rules alone, without the decision model the file names",
    )
    parser.add_argument(
        "--show-misses",
        action="store_true",
        help=f"list missed, mistyped and kept lines ({', '.join(DEVELOPMENT)})",
    )
    args = parser.parse_args(argv)
    if args.show_misses and args.split not in DEVELOPMENT:
        parser.error(
            f"--show-misses is for the development splits only ({', '.join(DEVELOPMENT)}; "
            "the held-out splits are never read line by line)"
        )
    rules = load_rules(args.rules) if args.rules else default_rules()
    if args.no_model:
        rules = dataclasses.replace(rules, model=None)
    rows = load(args.split)
    scores = evaluate(rows, rules)
    model = f" with the {rules.model.name} model" if rules.model is not None else ", no model"
    print(f"decision recall on {args.split} ({len(rows)} lines, rules: {rules.source}{model})")
    print(report(scores))
    ordinary = [r["text"] for r in rows if r["label"] is None and r["style"] != "report"]
    print(
        f"speed: {throughput(ordinary, rules):,.0f} ordinary desk messages/s, "
        f"{throughput([r['text'] for r in rows], rules):,.0f} messages/s over the split"
    )
    if args.show_misses:
        texts = {r["id"]: r for r in rows}
        for o in scores.outcomes:
            if o.found == o.label:
                continue
            kind = "MISS" if o.found is None else "KEPT" if o.label is None else "TYPE"
            row = texts[o.id]
            parent = f"  <- {row['parent']!r}" if row.get("parent") else ""
            print(f"{kind} {o.id} {o.label} -> {o.found}: {row['text']!r}{parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
