"""Fixtures that build real things: SQLite files under tmp_path, a throwaway PostgreSQL
server, and a real HTTP server."""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import httpx
import pytest
import uvicorn

from channel_memory.feed.layout import HARD_LABELS
from channel_memory.http.app import create_app
from channel_memory.kernel.config import Settings, load_settings
from channel_memory.kernel.models import MessageKey, SourceVersion
from channel_memory.kernel.timefmt import parse_rfc3339
from channel_memory.store.postgres.dialect import translate
from tests.pgcluster import PgCluster

T = TypeVar("T")

HARD_LINE = re.compile(
    r"^\[\d\d:\d\d(?:-\S+)? (?:"
    + "|".join(re.escape(label) for label in HARD_LABELS.values())
    + r"|hard:\S+) (\S+) ",
    re.MULTILINE,
)
"""The metadata line of a hard event in a text feed; group 1 is its handle (the message id
alone in a feed of one channel)."""


class FakeClock:
    """An injectable clock: tests set and advance time instead of sleeping."""

    def __init__(self, start: str = "2026-05-21T20:00:00Z") -> None:
        self.now_us = parse_rfc3339(start)

    def __call__(self) -> int:
        return self.now_us

    def advance(self, seconds: float) -> None:
        self.now_us += int(seconds * 1_000_000)


class LiveServer:
    """The real application under uvicorn on 127.0.0.1, on a port the OS picked."""

    def __init__(self, settings: Settings, clock: FakeClock, llm_client: Any = None) -> None:
        self.settings = settings
        self.clock = clock
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as the CLI does
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(
            create_app(settings, clock=clock, llm_client=llm_client),
            log_level="warning",
            access_log=False,
        )
        self.server = uvicorn.Server(config)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._serve)

    def _serve(self) -> None:
        try:
            self.loop.run_until_complete(self.server.serve(sockets=[self.sock]))
        finally:
            self.loop.close()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the server's own event loop (to reach its store)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=30)

    @property
    def app(self) -> Any:
        return self.server.config.app

    def drain(self) -> int:
        """Run the worker until nothing is dirty (deterministic, instead of waiting for it)."""
        processed: int = self.run(self.app.state.worker.drain())
        return processed

    def __enter__(self) -> LiveServer:
        self.thread.start()
        # the first answer comes after the lifespan startup: the store and worker exist then
        with self.client() as client:
            client.get("/health").raise_for_status()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    """The SQLite file of a test's store."""
    return tmp_path / "channel-memory.db"


@pytest.fixture
def db_path(db_target: Path | str) -> Any:
    """The store of a test: an SQLite file's ``Path`` on the sqlite run, a
    ``postgresql://`` URL on the postgres run (see ``db_target``). Tests that read the
    SQLite file itself are marked ``sqlite_only``."""
    return db_target


@pytest.fixture
def make_settings(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Settings]:
    for name in ("CHANNEL_MEMORY_TOKEN", "CHANNEL_MEMORY_CONFIG", "CHANNEL_MEMORY_DB"):
        monkeypatch.delenv(name, raising=False)

    def make(**overrides: Any) -> Settings:
        return load_settings(None, **{"db": db_path, **overrides})

    return make


@pytest.fixture
def make_server(
    make_settings: Callable[..., Settings], clock: FakeClock
) -> Iterator[Callable[..., LiveServer]]:
    started: list[LiveServer] = []

    def make(llm_client: Any = None, **overrides: Any) -> LiveServer:
        server = LiveServer(make_settings(**overrides), clock, llm_client)
        server.__enter__()
        started.append(server)
        return server

    yield make
    for server in reversed(started):
        server.__exit__()


@pytest.fixture
def server(make_server: Callable[..., LiveServer]) -> LiveServer:
    return make_server()


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client() as http:
        yield http


def query(db: Path | str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Read the database directly, as an operator with the sqlite3 shell or psql would:
    the SQLite file, or the PostgreSQL database of a URL (the store's SQL rewritten as
    the store rewrites it)."""
    if isinstance(db, str):
        return _pg_query(db, sql, params)
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def _pg_query(url: str, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    text, _ = translate(sql)

    async def fetch() -> list[tuple[Any, ...]]:
        conn = await asyncpg.connect(url)
        try:
            return [tuple(row) for row in await conn.fetch(text, *params)]
        finally:
            await conn.close()

    # a thread of its own: the caller may be inside an event loop
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, fetch()).result(timeout=60)


def ingest_ok(client: httpx.Client, *events: dict[str, Any]) -> dict[str, Any]:
    """Push events through ``/v1/ingest`` and insist the batch was accepted."""
    response = client.post("/v1/ingest", json={"events": list(events)})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def at(minute: int, hour: int = 16) -> str:
    """An RFC 3339 instant on the fixtures' trading day."""
    return f"2026-05-21T{hour:02d}:{minute:02d}:00Z"


def message_event(
    message_id: str,
    content: str,
    *,
    channel: str = "floor",
    created_at: str = "2026-05-21T16:00:00Z",
    edited_at: str | None = None,
    author: str = "desk-lead",
    **extra: Any,
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": message_id,
        "author_id": "u-" + author,
        "author_name": author,
        "created_at": created_at,
        "content": content,
    }
    if edited_at is not None:
        message["edited_at"] = edited_at
    message.update(extra)
    return {"type": "message", "channel_id": channel, "message": message}


def rules_test_output(
    make_server: Callable[..., LiveServer], *events: dict[str, Any], options: tuple[str, ...] = ()
) -> str:
    """What ``channel-memory rules test`` (the current rules, no file; ``options`` after
    it) prints for a store that holds ``events`` (ingested with the worker off, the server
    stopped first)."""
    server = make_server(worker={"enabled": False})
    with server.client() as client:
        assert client.post("/v1/ingest", json={"events": list(events)}).status_code == 200
    server.__exit__()
    return subprocess.run(
        [
            *(sys.executable, "-m", "channel_memory", "rules", "test"),
            *("--db", str(server.settings.db), *options),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


def source_version(
    message_id: str = "m1",
    content: str = "",
    *,
    author: str = "analyst",
    at_us: int = 1_779_379_200_000_000,  # 2026-05-21T16:00:00Z
    **fields: Any,
) -> SourceVersion:
    """A current, undeleted version in channel ``floor`` for the pure tests (classify,
    render, derivation, ``as_of``); ``fields`` override any other attribute."""
    version = SourceVersion(
        id=1,
        key=MessageKey("discord", "floor", message_id),
        observed_seq=1,
        content_hash="sha256:" + message_id,
        content=content,
        deleted=False,
        author_id=author,
        author_name=author,
        author_kind="human",
        origin="human",
        created_us=at_us,
        edited_us=None,
        deleted_us=None,
        event_us=at_us,
        observed_us=at_us,
        is_current=True,
    )
    for name, value in fields.items():
        setattr(version, name, value)
    return version


# --- PostgreSQL: the throwaway server and the --backend choice (issue 17) ---------------


BACKENDS = ("sqlite", "postgres")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        choices=(*BACKENDS, "both"),
        default="both",
        help="the store backend(s) that tests asking for `backend` or `db_target` run on "
        "(default: both; postgres starts one throwaway server for the session)",
    )


def selected_backends(config: pytest.Config) -> list[str]:
    """The backends chosen with ``--backend``, in a fixed order."""
    choice = config.getoption("backend")
    return list(BACKENDS) if choice == "both" else [choice]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every test that asks for ``backend`` (directly or through ``db_target``) once
    per selected backend, with the ids ``[sqlite]`` and ``[postgres]``."""
    if "backend" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if "backend" in (names.replace(" ", "").split(",") if isinstance(names, str) else names):
            return  # the test pins its backend itself
    backends = selected_backends(metafunc.config)
    if metafunc.definition.get_closest_marker("sqlite_only") is not None:
        backends = ["sqlite"]  # reads the SQLite file or its pragmas: one backend only
    metafunc.parametrize("backend", backends, ids=backends, indirect=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # --backend sqlite says no PostgreSQL server is wanted: tests that need the server
    # itself are deselected (reported as such), not skipped and not failed.
    if "postgres" in selected_backends(config):
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (dropped if "pg_cluster" in getattr(item, "fixturenames", ()) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """One throwaway PostgreSQL server for the whole session, started by the first test
    that needs it (a session that never asks for it starts none) and removed at the end.
    Missing server binaries fail the tests that need it with a message saying what to
    install; they are never skipped."""
    with PgCluster() as cluster:
        yield cluster


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> Iterator[str]:
    """The URL ``postgresql://postgres@127.0.0.1:PORT/NAME`` of a fresh, empty database
    on the session's server; dropped after the test, its open connections cut."""
    url = pg_cluster.create_database()
    yield url
    pg_cluster.drop_database(url)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """The store backend of this run, ``"sqlite"`` or ``"postgres"``.

    A test opts in to running on every selected backend by asking for ``db_target``
    (or for ``backend`` itself); ``pytest_generate_tests`` then runs it once per backend
    chosen with ``--backend sqlite|postgres|both`` (default ``both``, what ``make test``
    runs), as ``test_x[sqlite]`` and ``test_x[postgres]``::

        def test_round_trip(db_target: Path | str) -> None:
            ...  # db_target: a SQLite file's Path, or a postgresql:// URL

    A test that pins one backend parametrizes it itself:
    ``@pytest.mark.parametrize("backend", ["postgres"], indirect=True)``.
    """
    param = getattr(request, "param", None)
    if param not in BACKENDS:
        raise LookupError("`backend` is set by pytest_generate_tests; ask for it as an argument")
    return str(param)


@pytest.fixture
def db_target(backend: str, request: pytest.FixtureRequest) -> Path | str:
    """Where this run's store lives: the ``db_path`` SQLite file for ``sqlite``, the URL
    of a fresh empty database (``pg_url``) for ``postgres``. The server is started only
    when a postgres run needs it."""
    if backend == "sqlite":
        path: Path = request.getfixturevalue("sqlite_path")
        return path
    url: str = request.getfixturevalue("pg_url")
    return url


# --- end of PostgreSQL ---------------------------------------------------------------
