"""One long message must not stall the server: derivation is linear in a message's
length and its content-bound work runs off the event loop, before the writer is taken."""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from channel_memory.worker import derive as derive_module
from channel_memory.worker.render import signal_count
from tests.conftest import LiveServer, at, ingest_ok, message_event, query, source_version

# The signal pattern as it was: kept to show the linear one counts exactly the same.
_QUADRATIC_SIGNAL = re.compile(r"\S*\d\S*|\b[A-Z]{2,}\b")
BLOB_CHARS = 1_000_000


def _blob(size: int, seed: int = 7) -> str:
    """No spaces and no digits: a pasted token, the worst shape for the old pattern."""
    rng = random.Random(seed)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGH_-") for _ in range(size))


def _fastest(run: Callable[[], object], repeats: int = 5, give_up: float = 5.0) -> float:
    """The fastest of a few runs, in seconds (stops early once a run is clearly slow)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        took = time.perf_counter() - started
        best = min(best, took)
        if took > give_up:
            break
    return best


def test_signal_count_matches_the_former_pattern_on_every_shape() -> None:
    rng = random.Random(12)
    alphabet = "aZ7 AB\n-.x9Q\t_é٣"  # letters, capitals, digits (an Arabic-Indic one), spaces
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert signal_count(text) == len(_QUADRATIC_SIGNAL.findall(text)), repr(text)


def test_signal_count_is_linear_in_a_token_without_digits() -> None:
    small, large = _blob(4_000), _blob(32_000)
    small_s = _fastest(lambda: signal_count(small))
    large_s = _fastest(lambda: signal_count(large))
    # 8x the characters: linear is ~8x, the former quadratic pattern was ~64x.
    assert large_s < 24 * max(small_s, 1e-4), (small_s, large_s)


def test_analysis_of_a_blob_grows_linearly() -> None:
    settings = derive_module_settings()
    small, large = _version("s", _blob(20_000)), _version("l", _blob(160_000))
    small_s = _fastest(lambda: derive_module.analyse(small, settings), repeats=3)
    assert small_s < 5.0, small_s  # the quadratic step took seconds here already
    large_s = _fastest(lambda: derive_module.analyse(large, settings), repeats=3)
    assert large_s < 24 * max(small_s, 1e-3), (small_s, large_s)


def derive_module_settings() -> derive_module.DeriveSettings:
    from channel_memory.kernel.config import Settings
    from channel_memory.worker.runner import derive_settings

    return derive_settings(Settings())


def _version(message_id: str, content: str) -> Any:
    return source_version(message_id, content, author="u1")


class HeldClassification:
    """Wraps classification: records the thread of every call, and holds the call for the
    blob until released, so the test can act while the blob's derivation is in progress."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        self.threads: set[int] = set()
        self.blob_entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, version: Any, *args: Any) -> Any:
        self.threads.add(threading.get_ident())
        if len(version.content) >= BLOB_CHARS:
            self.blob_entered.set()
            self.release.wait(timeout=60)
        return self.real(version, *args)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldClassification]:
    wrapper = HeldClassification(derive_module.classify)
    monkeypatch.setattr(derive_module, "classify", wrapper)
    try:
        yield wrapper
    finally:
        wrapper.release.set()


def _wait_for(condition: Callable[[], bool], within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_requests_are_answered_while_a_million_character_message_is_derived(
    make_server: Callable[..., LiveServer], held: HeldClassification
) -> None:
    server = make_server()
    db = server.settings.db

    def pending() -> int:
        return int(query(db, "SELECT count(*) FROM dirty_messages")[0][0])

    with server.client() as client:
        ingest_ok(client, message_event("1", "Watching the range.", created_at=at(0)))
        assert _wait_for(lambda: pending() == 0, within=30)
        ingest_ok(client, message_event("2", _blob(BLOB_CHARS), created_at=at(1)))
        assert held.blob_entered.wait(timeout=30), "the worker never started on the blob"

        # The blob's classification is in progress (held): the server keeps answering.
        with httpx.Client(base_url=server.url, timeout=10) as other:
            started = time.monotonic()
            answer = other.post(
                "/v1/ingest",
                json={"events": [message_event("3", "FILLED 200 NVDA @ 131.20", created_at=at(2))]},
            )
            assert answer.status_code == 200, answer.text
            feed = other.get("/channel-awareness", params={"channels": "floor"})
            assert feed.status_code == 200
            assert "floor/1" in feed.text or "Watching the range." in feed.text
            answered_in = time.monotonic() - started
        assert not held.release.is_set()
        assert pending() >= 1  # the blob is still being derived
        assert answered_in < 10

        held.release.set()
        assert _wait_for(lambda: pending() == 0, within=120), "derivation did not finish"

    loop_thread = server.thread.ident
    assert held.threads and loop_thread not in held.threads
    blob_blocks = query(
        db,
        "SELECT b.kind, length(b.text) FROM recall_blocks b JOIN block_sources s "
        "ON s.block_seq = b.seq WHERE s.message_id = '2' ORDER BY b.kind",
    )
    assert ("raw_excerpt", BLOB_CHARS) in blob_blocks
    assert query(
        db,
        "SELECT count(*) FROM recall_blocks b JOIN block_sources s ON s.block_seq = b.seq "
        "WHERE s.message_id = '3' AND b.kind = 'hard_event'",
    ) == [(1,)]
