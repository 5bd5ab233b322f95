"""A short soak in ``make test`` (``make soak`` runs the long one): 4 ingest clients,
16 feed pollers and 4 tool callers against a real server process with its worker."""

from __future__ import annotations

from bench.soak import report, run_soak


def test_a_soak_has_no_5xx_no_locked_database_and_a_bounded_lag() -> None:
    results = run_soak(seconds=8)
    print(report(results))
    assert results.server_errors() == 0
    assert results.locked == 0  # no "database is locked" ever reached a client
    assert results.max_lag_s < 5.0  # the worker keeps up
    kinds = results.summary()
    assert set(kinds) == {"ingest (20 messages)", "feed", "tools: search", "tools: browse"}
    assert all(figures["requests"] > 10 for figures in kinds.values())
    assert all(code < 400 for codes in results.statuses.values() for code in codes)
