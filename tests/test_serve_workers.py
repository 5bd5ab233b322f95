"""``channel-memory serve --workers N``: N real server processes on one SQLite file answer
exactly as one process does, one of them holds the worker lease, and a signal to the
parent stops them all."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from channel_memory.cli import main
from channel_memory.demo.synthetic_desk import desk_events
from tests.conftest import query

AS_OF = "2026-05-21T20:00:00Z"
"""The end of the synthetic desk's day: every feed is read as of then, so the clock of
the moment a request is answered cannot make two answers differ."""

ENV = {
    "CHANNEL_MEMORY_TOKEN": "",
    # the desk's day is older than the default retention on the wall clock
    "CHANNEL_MEMORY_RETENTION__DAYS": "100000",
}
UNSET = ("CHANNEL_MEMORY_CONFIG", "CHANNEL_MEMORY_DB")

STARTED = re.compile(r"^Started server process \[(\d+)\]$")
FINISHED = re.compile(r"^Finished server process \[(\d+)\]$")


def until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Served:
    """A ``channel-memory serve`` subprocess on 127.0.0.1 (the OS picks the port), its
    stderr read line by line as JSON as it comes."""

    def __init__(self, db: Path, *flags: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "channel_memory", "serve", "--db", str(db), "--port", "0",
             *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**{k: v for k, v in os.environ.items() if k not in UNSET}, **ENV, **(env or {})},
        )  # fmt: skip
        assert self.process.stdout is not None and self.process.stderr is not None
        self.banner = self.process.stdout.readline()
        assert " listening on http://127.0.0.1:" in self.banner, self.banner
        self.url = self.banner.split("listening on ")[1].split()[0]
        self.lines: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, args=(self.process.stderr,))
        self._reader.start()

    def _read(self, stream: Any) -> None:
        for raw in stream:
            line = json.loads(raw)  # every line of every process is one JSON object
            with self._lock:
                self.lines.append(line)

    def logged(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.lines)

    def messages(self, pattern: re.Pattern[str]) -> set[int]:
        """The pids named by uvicorn's lines matching ``pattern``."""
        found = (pattern.match(str(line.get("message", ""))) for line in self.logged())
        return {int(match.group(1)) for match in found if match}

    def stop(self, sig: signal.Signals | None = signal.SIGTERM, timeout: float = 60.0) -> int:
        """Signal the parent process alone (``None``: let it end by itself); its exit code
        once it and its output ended."""
        if sig is not None and self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=timeout)
        assert self.process.stdout is not None and self.process.stderr is not None
        self.process.stdout.close()
        self.process.stderr.close()
        return code


@contextmanager
def serving(db: Path, *flags: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    served = Served(db, *flags, env=env)
    try:
        yield served
    finally:
        if served.process.poll() is None:
            served.stop()


def child_pids(served: Served, count: int) -> set[int]:
    """The pids of the ``count`` server processes, once each has finished starting."""
    until(lambda: len(served.messages(STARTED)) >= count, f"{count} server processes")
    until(
        lambda: sum(line.get("message") == "Application startup complete." for line in
                    served.logged()) >= count,
        "every server process's startup",
    )  # fmt: skip
    pids = served.messages(STARTED)
    assert len(pids) == count and served.process.pid not in pids
    return pids


def lease_holder_pid(db: Path) -> int | None:
    rows = query(db, "SELECT holder FROM worker_lease")
    assert len(rows) <= 1  # one row names the one holder
    return int(rows[0][0].split(":")[1]) if rows else None


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


# --- requests and their answers -------------------------------------------------------------

Request = tuple[str, str, str, str]
"""(method, path with query string, JSON body or "", If-None-Match or "") — hashable."""
Answer = tuple[int, str | None, str]
"""(status, ETag, body)."""


def feed(**params: str) -> Request:
    query_string = "&".join(f"{k}={v}" for k, v in {"as_of": AS_OF, **params}.items())
    return ("GET", f"/channel-awareness?{query_string}", "", "")


def tool(name: str, **body: Any) -> Request:
    return ("POST", f"/v1/tools/{name}", json.dumps(body, sort_keys=True), "")


FIRST: list[Request] = [
    feed(channels="desk"),
    feed(channels="desk", max_chars="1500"),
    feed(channels="desk,floor", format="json"),
    feed(channels="floor", context_kind="raw_window", limit="20"),
    tool("search_channel_context", channels=["desk"], query="FILLED NVDA", limit=3),
    tool("search_channel_context", channels=["desk", "floor"], query="stop moved", limit=4),
    tool("search_channel_context", channels=["floor"], query="approved", sort="newest", limit=2),
    tool("get_channel_messages", channels=["desk"], after="2026-05-21T06:00:00Z", limit=5),
    tool("get_channel_messages", source_handles=["desk/m0010", "floor/m0020", "desk/none"]),
    tool("get_channel_messages", channels=["floor"], before="floor/m0150", limit=4),
]


def then(answers: dict[Request, Answer]) -> list[Request]:
    """Requests built from the first answers: every paging cursor followed once, the
    digest blocks expanded, the feeds polled again with the ETag they answered."""
    following: list[Request] = []
    for (method, path, body, _), (status, etag, text) in answers.items():
        assert status == 200, (path, text)
        if path.startswith("/v1/tools/"):
            cursor = json.loads(text).get("next_cursor")
            if cursor:
                paged = json.dumps({**json.loads(body), "cursor": cursor}, sort_keys=True)
                following.append((method, path, paged, ""))
        elif "format=json" in path:
            blocks = sorted({b["id"] for b in json.loads(text)["digest"] if b.get("id")})
            following += [("GET", f"/v1/blocks/{block}", "", "") for block in blocks[:6]]
        if etag is not None:
            following.append((method, path, body, etag))
    return following


def ask(client: httpx.Client, request: Request) -> Answer:
    method, path, body, etag = request
    headers = {"connection": "close"}  # a connection each: the kernel spreads them
    if etag:
        headers["if-none-match"] = etag
    response = client.request(method, path, content=body or None, headers=headers)
    return response.status_code, response.headers.get("etag"), response.text


def answers_of(url: str, requests: list[Request], threads: int = 1) -> list[Answer]:
    """The answer to each request, in order, asked from ``threads`` threads at once."""
    with httpx.Client(base_url=url, timeout=60) as client, ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda request: ask(client, request), requests))


def ingest_desk(url: str) -> None:
    """Two channels of the synthetic desk (hard events, reports, chatter, acks, repeats)."""
    events = desk_events(seed=7)
    for event in desk_events(seed=11):
        events.append({**event, "channel_id": "floor"})
    with httpx.Client(base_url=url, timeout=60) as client:
        for start in range(0, len(events), 100):
            answer = client.post("/v1/ingest", json={"events": events[start : start + 100]})
            assert answer.status_code == 200, answer.text
            assert answer.json()["inserted"] == len(events[start : start + 100])


def settled(url: str) -> bool:
    stats = httpx.get(url + "/v1/stats", timeout=60).json()
    channels = {c["channel_id"]: c for c in stats["channels"]}
    return (
        stats["worker"]["queue_depth"] == 0
        and set(channels) == {"desk", "floor"}
        and all(c["messages"] == 200 and sum(c["blocks"].values()) > 0 for c in channels.values())
    )


# --- the tests ------------------------------------------------------------------------------


def test_two_processes_answer_exactly_as_one_does(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    with serving(db, "--workers", "2") as served:
        assert "2 server processes" in served.banner
        pids = child_pids(served, 2)
        ingest_desk(served.url)
        until(lambda: settled(served.url), "the worker to derive everything")
        holder = lease_holder_pid(db)
        assert holder in pids  # a server process derives, not the supervising parent

        first = dict(zip(FIRST, answers_of(served.url, FIRST), strict=True))
        requests = FIRST + then(first)
        assert any('"cursor"' in body for _, _, body, _ in requests)  # paging crosses processes
        assert any(path.startswith("/v1/blocks/") for _, path, _, _ in requests)
        assert any(etag for _, _, _, etag in requests)

        # Every request again and again, each on a connection of its own, until each kind
        # of request has been answered by both processes (their access lines say which).
        routes = {"/channel-awareness", "/v1/tools/search_channel_context",
                  "/v1/tools/get_channel_messages", "/v1/blocks/{block_id}"}  # fmt: skip
        seen: dict[Request, set[Answer]] = {r: set() for r in requests}
        for request, answer in first.items():
            seen[request].add(answer)

        def answered_by_both() -> bool:
            by: dict[str, set[int]] = {route: set() for route in routes}
            for line in served.logged():
                if line.get("event") == "http_request" and line.get("route") in by:
                    by[line["route"]].add(line["pid"])
            return all(found == pids for found in by.values())

        rounds = 0
        while rounds < 3 or not answered_by_both():
            assert rounds < 40, "one process answered every request of some kind"
            asked = requests * 3
            for request, answer in zip(asked, answers_of(served.url, asked, 6), strict=True):
                seen[request].add(answer)
            rounds += 1
        assert answered_by_both()
        assert lease_holder_pid(db) == holder  # the lease stayed where it was
        assert served.stop() == 0

    # Both processes finished their lifespan (the worker handed its lease back) and exited.
    assert served.messages(FINISHED) == pids
    assert all(gone(pid) for pid in pids)
    assert query(db, "SELECT count(*) FROM worker_lease") == [(0,)]
    assert {line["pid"] for line in served.logged()} == pids | {served.process.pid}

    # The same database, copied as an operator backs it up, served by one process.
    copy = tmp_path / "copy.db"
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    with serving(copy) as single:
        assert "server processes" not in single.banner
        alone = dict(zip(requests, answers_of(single.url, requests), strict=True))
        assert single.stop() in (0, -signal.SIGTERM)
    assert all("pid" not in line for line in single.logged())  # one process logs as before

    statuses = {answer[0] for answer in alone.values()}
    assert statuses == {200, 304}
    for request in requests:
        assert seen[request] == {alone[request]}, request


def test_sigint_to_the_parent_stops_every_process_and_releases_the_lease(tmp_path: Path) -> None:
    db = tmp_path / "stop.db"
    with serving(db, "--workers", "2") as served:
        pids = child_pids(served, 2)
        until(lambda: lease_holder_pid(db) in pids, "a server process to hold the lease")
        assert served.stop(signal.SIGINT) == 0
    assert served.messages(FINISHED) == pids
    assert all(gone(pid) for pid in pids)
    assert query(db, "SELECT count(*) FROM worker_lease") == [(0,)]


@pytest.mark.parametrize(
    ("value", "says"),
    [("0", "at least 1 server process, got 0"), ("-2", "at least 1 server process, got -2"),
     ("two", "expected a whole number, got 'two'")],
)  # fmt: skip
def test_a_bad_process_count_is_a_command_line_error(
    value: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--workers", value])
    assert exit_.value.code == 2
    assert f"argument --workers: {says}" in capsys.readouterr().err


def test_the_inspector_refuses_several_processes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    for name in UNSET:
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "cm.toml"
    config.write_text("[inspector]\nenabled = true\n")
    code = main(["serve", "--config", str(config), "--db", str(tmp_path / "i.db"),
                 "--port", "0", "--workers", "2"])  # fmt: skip
    assert code == 2
    assert "the inspector needs a single server process" in capsys.readouterr().err
    assert not (tmp_path / "i.db").exists()  # refused before anything was opened


SERVER_PROCESSES_CANNOT_OPEN = """
import multiprocessing

from channel_memory.store import database

_open = database.Store.open.__func__


async def _refused(cls, target, *, readers=4):
    # only in the server processes the supervisor spawns: the parent's check passes, as
    # when the database goes away between the parent's start and its processes'
    if multiprocessing.parent_process() is not None:
        raise database.DatabaseUnreachable("cannot connect to the database (injected)")
    return await _open(cls, target, readers=readers)


database.Store.open = classmethod(_refused)
"""


def test_a_process_that_cannot_start_stops_them_all(tmp_path: Path) -> None:
    faults = tmp_path / "faults"
    faults.mkdir()
    (faults / "sitecustomize.py").write_text(SERVER_PROCESSES_CANNOT_OPEN)
    path = os.pathsep.join(p for p in (str(faults), os.environ.get("PYTHONPATH")) if p)
    with serving(tmp_path / "x.db", "--workers", "2", env={"PYTHONPATH": path}) as served:
        assert served.stop(None) == 3  # uvicorn's startup failure, as with one process
    assert "Application startup failed. Exiting." in {line.get("message") for line in
                                                      served.logged()}  # fmt: skip
    assert all(gone(pid) for pid in served.messages(STARTED))
    assert served.messages(STARTED)  # processes were started, and failed in their startup


def test_a_database_that_cannot_be_opened_is_refused_before_any_process_starts(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code = subprocess.run(
        [sys.executable, "-m", "channel_memory", "serve", "--db", str(blocker / "x.db"),
         "--port", "0", "--workers", "2"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**{k: v for k, v in os.environ.items() if k not in UNSET}, **ENV},
    )  # fmt: skip
    assert code.returncode == 2
    assert code.stdout == ""  # nothing listened
    assert code.stderr.startswith(f"channel-memory: cannot open the database at {blocker}")
    assert "Traceback" not in code.stderr
