"""Check a labelled desk file as its writer must before handing it in (``WRITING_BRIEF.md``).

    python bench/data/check_desk.py desk.jsonl

Prints the desk's counts and every error (or ``OK``); exits 1 when there is an error. Only
the standard library: the writers run it without the project.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

# the nine types of channel_memory.worker.model.DECISION_TYPES, written out: the writers run
# this file alone (a test keeps the two the same)
TYPES = frozenset(
    {
        "trade_proposal",
        "trade_approval",
        "trade_confirmation",
        "trade_fill",
        "stop_or_target_change",
        "route_decision",
        "risk_limit",
        "position_change",
        "thesis_change",
    }
)
KEYS = [
    "id",
    "author_id",
    "author_name",
    "author_kind",
    "created_at",
    "content",
    "reply_to",
    "decision",
    "decision_text",
]
TIME = "%Y-%m-%dT%H:%M:%SZ"


def check(rows: list[dict[str, Any]]) -> list[str]:
    """Every error in ``rows`` (the desk's lines, in file order)."""
    errors: list[str] = []
    ids: set[str] = set()
    previous: datetime | None = None
    for n, row in enumerate(rows, 1):
        name = str(row.get("id"))
        if list(row) != KEYS:
            errors.append(f"{name}: keys must be exactly {KEYS} in that order")
        if row.get("id") != f"m{n:03d}":
            errors.append(f"row {n}: id {name} should be m{n:03d}")
        if row.get("author_kind") not in ("human", "agent", "app"):
            errors.append(f"{name}: author_kind must be human, agent or app")
        if not isinstance(row.get("content"), str) or not row["content"].strip():
            errors.append(f"{name}: empty content")
            continue
        try:
            at = datetime.strptime(str(row.get("created_at")), TIME)
        except ValueError:
            errors.append(f"{name}: created_at must look like 2025-03-11T05:00:03Z")
            continue
        if previous is not None and at < previous:
            errors.append(f"{name}: created_at goes backwards")
        previous = at
        if row.get("reply_to") is not None and row["reply_to"] not in ids:
            errors.append(f"{name}: reply_to {row['reply_to']} is not an earlier id")
        ids.add(name)
        decision, span = row.get("decision"), row.get("decision_text")
        if decision is not None and decision not in TYPES:
            errors.append(f"{name}: unknown decision type {decision}")
        if (decision is None) != (span is None):
            errors.append(f"{name}: decision and decision_text must both be null or both set")
        if span is not None and (not span or span != span.strip() or span not in row["content"]):
            errors.append(f"{name}: decision_text must be an exact, trimmed part of content")
    times = [datetime.strptime(r["created_at"], TIME) for r in rows if _timed(r)]
    if times:
        end = times[-1].replace(minute=0, second=0) + timedelta(hours=1)
        if times[0] < end - timedelta(hours=24):
            errors.append(
                f"the first message is before {end - timedelta(hours=24)}, 24 hours before "
                "the whole hour after the last message: shift or trim"
            )
    return errors


def _timed(row: dict[str, Any]) -> bool:
    try:
        datetime.strptime(str(row.get("created_at")), TIME)
    except ValueError:
        return False
    return True


def main(path: str) -> int:
    rows: list[dict[str, Any]] = []
    errors: list[str] = []
    with open(path, encoding="utf-8") as lines:
        for n, line in enumerate(lines, 1):
            if not line.strip():
                errors.append(f"line {n}: empty line")
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                errors.append(f"line {n}: not JSON ({error.msg})")
    errors += check(rows)
    labels = Counter(r.get("decision") for r in rows if r.get("decision"))
    kinds = Counter(r.get("author_kind") for r in rows)
    replies = sum(1 for r in rows if r.get("reply_to"))
    characters = sum(len(str(r.get("content", ""))) for r in rows)
    print(f"messages {len(rows)}; decisions {sum(labels.values())}; by type {dict(labels)}")
    print(f"kinds {dict(kinds)}; replies {replies}; characters {characters}")
    print("\n".join(errors[:40]) or "OK")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
