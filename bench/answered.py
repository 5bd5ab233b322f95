"""How much a reply tells about a hard event: the odds ratios the feed weighs answered
and unanswered hard events by (``ANSWERED_ODDS``, ``UNANSWERED_ODDS`` in
``channel_memory/feed/layout.py``, ADR 0049).

Run ``python bench/answered.py``. Over the labelled desks the hard-event ranker learns
from (``RANK_DESKS`` in ``bench/training_desks.py``; never a development desk it does not
learn from, never a held-out one), every hard event as the worker finds it (by its own
rules and model, else as a reply to its parent) is counted by whether it is a labelled
decision and whether a message answers it: a reply short enough for its class to read the
message it answers, as ``derived_messages.parent_id`` records it
(``channel_memory.worker.derive.parent_id``).
The likelihood ratio of being answered (the share of the decisions answered over the share
of the look-alikes answered) multiplies a hard event's odds when some message answers it;
the ratio of being left unanswered, when none does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.training_desks import RANK_DESKS
from channel_memory.worker.rules import REASONED_REPLY_CHARS, default_rules


def counts(desks: list[Path]) -> dict[tuple[bool, bool], int]:
    """``(decision, answered) -> hard events`` over ``desks``."""
    rules = default_rules()
    limit = max(REASONED_REPLY_CHARS, rules.reply_chars)  # as derive.parent_id reads
    found: dict[tuple[bool, bool], int] = {(d, a): 0 for d in (False, True) for a in (False, True)}
    for path in desks:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        by_id = {row["id"]: row for row in rows}
        answered = {
            row["reply_to"]
            for row in rows
            if row.get("reply_to") and len(row["content"].strip()) <= limit
        }
        for row in rows:
            parent = by_id[row["reply_to"]]["content"] if row.get("reply_to") else None
            author = (row["author_id"], row["author_name"])
            decision = rules.decide(row["content"], (), *author)
            if decision is None and parent is not None:
                decision = rules.decide(row["content"], (), *author, parent)
            if decision is not None:
                found[(row["decision"] is not None, row["id"] in answered)] += 1
    return found


def main() -> int:
    found = counts(RANK_DESKS)
    decisions = found[(True, False)] + found[(True, True)]
    others = found[(False, False)] + found[(False, True)]
    print(f"{len(RANK_DESKS)} desks: {decisions:,} hard events labelled decisions, {others:,} not")
    for answered, name in ((True, "answered"), (False, "unanswered")):
        share_decisions = found[(True, answered)] / decisions
        share_others = found[(False, answered)] / others
        print(
            f"{name:>10}: {found[(True, answered)]:,} decisions ({share_decisions:.1%}), "
            f"{found[(False, answered)]:,} look-alikes ({share_others:.1%}); "
            f"odds ratio {share_decisions / share_others:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
