"""The labelled desks ``bench/train_model.py`` learns from, named in one place so that a
benchmark can read them without the trainer's dependencies (``bench/answered.py``)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESKS = [
    ROOT / "bench" / "data" / name
    for name in (
        "desk_independent.jsonl",
        "desk_train2.jsonl",
        "desk_train3.jsonl",
        "desk_train4.jsonl",
        "desk_train5.jsonl",
        "desk_train6.jsonl",
        "desk_train7.jsonl",
    )
]
"""The labelled desks trained on (each its own writer for ``--cross``)."""
EARLIER_DEVELOPMENT = [
    ROOT / "bench" / "data" / f"desk_heldout{n}.jsonl"
    for n in (
        *range(41, 54),
        97,
        98,
        99,
        *range(108, 113),
        116,
        117,
        118,
        *(n for n in range(125, 182) if (n - 125) % 6 < 3),
    )
]
"""The fifty-four development desks up to ``desk_heldout181``, their misses read in the
rounds that added them, learnt from since the forty-eighth round (ADR 0073); the
development desks after them are not trained on: they measure what this training adds."""
READ_DESKS = [
    ROOT / "bench" / "data" / name
    for name in ("desk_heldout.jsonl", *(f"desk_heldout{n}.jsonl" for n in range(2, 41)))
] + EARLIER_DEVELOPMENT
"""The development desks the desk reading also learns from (not the decision model: it
keeps to the phrasing sets' balance): the first forty, and since ADR 0073 the fifty-four of
:data:`EARLIER_DEVELOPMENT`; the development desks after ``desk_heldout181`` are left out
of its training: they measure what it learns (ADR 0039)."""
RUNS_DESKS = [ROOT / "bench" / "data" / f"desk_heldout{n}.jsonl" for n in (91, 92, 96)]
"""Development desks mostly in Korean, Chinese and Japanese that the clause selector and
the ranker learn from besides, so that they weigh what the reading of text holding runs
reads apart (ADR 0044); not the desk reading (taught them, it read English desks lower).
``desk_heldout97`` and ``98``, written in the same round, measured it until ADR 0073
(since then the desk reading learns them, with the other earlier development desks)."""
RANK_DESKS = [*DESKS, *READ_DESKS, *RUNS_DESKS]
"""The desks the clause selector and the ranker learn from, out of fold."""
