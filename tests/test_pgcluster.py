"""The throwaway PostgreSQL server the tests run the store on (tests/pgcluster.py) and
the fixtures over it: a working server, fresh empty databases, dropping, loopback only,
teardown, and the --backend parametrization."""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path

import asyncpg
import pytest

from tests.pgcluster import (
    PgCluster,
    PgClusterError,
    PostgresNotFound,
    find_bindir,
    process_running,
)

pytestmark = pytest.mark.anyio


async def public_tables(url: str) -> list[str]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
    finally:
        await conn.close()
    return sorted(row["table_name"] for row in rows)


async def test_the_server_stores_and_returns_rows(pg_url: str) -> None:
    conn = await asyncpg.connect(pg_url)
    try:
        await conn.execute("CREATE TABLE notes (id bigint PRIMARY KEY, body text NOT NULL)")
        await conn.executemany(
            "INSERT INTO notes (id, body) VALUES ($1, $2)", [(1, "desk"), (2, "ünïcödé ✓")]
        )
        rows = await conn.fetch("SELECT id, body FROM notes ORDER BY id")
        encoding = await conn.fetchval("SHOW server_encoding")
    finally:
        await conn.close()
    assert [tuple(row) for row in rows] == [(1, "desk"), (2, "ünïcödé ✓")]
    assert encoding == "UTF8"


async def test_each_url_is_a_different_empty_database(pg_cluster: PgCluster, pg_url: str) -> None:
    other = pg_cluster.create_database()
    try:
        assert other != pg_url
        assert await public_tables(pg_url) == []
        assert await public_tables(other) == []
        conn = await asyncpg.connect(pg_url)
        try:
            await conn.execute("CREATE TABLE only_here (x int)")
        finally:
            await conn.close()
        assert await public_tables(pg_url) == ["only_here"]
        assert await public_tables(other) == []
    finally:
        pg_cluster.drop_database(other)


async def test_a_dropped_database_is_gone_even_with_a_connection_open(
    pg_cluster: PgCluster,
) -> None:
    url = pg_cluster.create_database()
    name = url.rsplit("/", 1)[1]
    assert name in pg_cluster.databases()
    held = await asyncpg.connect(url)  # a pool the test forgot must not block the drop
    try:
        pg_cluster.drop_database(url)
        with pytest.raises((asyncpg.PostgresError, asyncpg.InterfaceError, OSError)):
            await held.fetchval("SELECT 1")
    finally:
        held.terminate()
    assert name not in pg_cluster.databases()
    with pytest.raises(asyncpg.InvalidCatalogNameError):
        await asyncpg.connect(url)
    pg_cluster.drop_database(url)  # dropping it again is no error


def listening_addresses(port: int) -> set[str]:
    """The local addresses with a TCP socket in LISTEN state on ``port``, from the
    kernel's own tables (IPv4 and IPv6)."""
    found: set[str] = set()
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:
                continue
            raw = bytes.fromhex(address)
            # the kernel prints each 32-bit word in host byte order
            words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            found.add(socket.inet_ntop(family, words))
    return found


async def test_the_server_listens_on_127_0_0_1_only(pg_cluster: PgCluster) -> None:
    assert listening_addresses(pg_cluster.port) == {"127.0.0.1"}
    conn = await asyncpg.connect(pg_cluster.url())
    try:
        assert await conn.fetchval("SHOW listen_addresses") == "127.0.0.1"
        sockets = await conn.fetchval("SHOW unix_socket_directories")
    finally:
        await conn.close()
    assert pg_cluster.root is not None
    assert Path(sockets) == pg_cluster.socket_dir
    assert Path(sockets).is_relative_to(pg_cluster.root)
    with socket.create_connection(("127.0.0.1", pg_cluster.port), timeout=5):
        pass
    # the whole of 127.0.0.0/8 reaches this host, yet only 127.0.0.1 is bound
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.2", pg_cluster.port), timeout=5).close()


def test_stop_shuts_the_server_down_and_removes_its_directory(pg_cluster: PgCluster) -> None:
    cluster = PgCluster(pg_cluster.bindir).start()
    root, port = cluster.root, cluster.port
    assert root is not None
    pid = int((cluster.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
    assert process_running(pid)
    cluster.stop()
    assert not root.exists()
    assert not process_running(pid)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    cluster.stop()  # a second stop has nothing left to do


def test_a_server_that_fails_to_start_leaves_nothing_behind(
    pg_cluster: PgCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    created: list[Path] = []
    mkdtemp = tempfile.mkdtemp

    def recording_mkdtemp(**kwargs: str) -> str:
        path = mkdtemp(**kwargs)
        created.append(Path(path))
        return path

    monkeypatch.setattr("tests.pgcluster.tempfile.mkdtemp", recording_mkdtemp)
    cluster = PgCluster(pg_cluster.bindir, settings={"shared_buffers": "'plenty'"})
    with pytest.raises(PgClusterError) as failure:
        cluster.start()
    message = str(failure.value)
    assert "pg_ctl start failed" in message
    assert "shared_buffers" in message  # the server log's complaint is in the error
    assert len(created) == 1
    assert not created[0].exists()
    assert cluster.root is None


def test_missing_server_binaries_are_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no pg_config
    partial = tmp_path / "16" / "bin"
    partial.mkdir(parents=True)
    (partial / "initdb").write_text("")  # a bindir without pg_ctl and postgres does not count
    with pytest.raises(PostgresNotFound) as failure:
        find_bindir(tmp_path)
    assert "postgresql" in str(failure.value)
    assert "--backend sqlite" in str(failure.value)
    with pytest.raises(PostgresNotFound, match="pg_ctl, postgres not found"):
        PgCluster(bindir=partial).start()


def test_db_target_follows_the_backend(
    backend: str, db_target: Path | str, request: pytest.FixtureRequest
) -> None:
    assert request.node.name.endswith(f"[{backend}]")
    if backend == "sqlite":
        assert db_target == request.getfixturevalue("db_path")
    else:
        assert isinstance(db_target, str)
        assert db_target.startswith("postgresql://postgres@127.0.0.1:")
        assert db_target.rsplit("/", 1)[1] in request.getfixturevalue("pg_cluster").databases()


class Collection:
    """A pytest plugin that records what a collection kept and what it deselected."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.deselected: list[str] = []

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += [item.name for item in items]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.kept = [item.name for item in session.items]


def collected(*options: str) -> Collection:
    """Collect this file as ``pytest [options]`` would (in this process: the package is
    imported already), without running anything."""
    collection = Collection()
    code = pytest.main(
        ["--collect-only", "-q", "-p", "no:cacheprovider", *options, __file__],
        plugins=[collection],
    )
    assert code == pytest.ExitCode.OK
    return collection


def test_plain_pytest_runs_both_backends_and_sqlite_alone_drops_the_server() -> None:
    default = collected()
    assert "test_db_target_follows_the_backend[sqlite]" in default.kept
    assert "test_db_target_follows_the_backend[postgres]" in default.kept
    assert "test_the_server_stores_and_returns_rows" in default.kept
    assert default.deselected == []
    sqlite_only = collected("--backend", "sqlite")
    assert "test_db_target_follows_the_backend[sqlite]" in sqlite_only.kept
    assert "test_db_target_follows_the_backend[postgres]" not in sqlite_only.kept
    assert "test_missing_server_binaries_are_a_clear_error" in sqlite_only.kept
    # tests that need the server itself are deselected, not skipped
    assert "test_the_server_stores_and_returns_rows" in sqlite_only.deselected
    assert "test_the_server_stores_and_returns_rows" not in sqlite_only.kept
    postgres_only = collected("--backend", "postgres")
    assert "test_db_target_follows_the_backend[sqlite]" not in postgres_only.kept
    assert "test_db_target_follows_the_backend[postgres]" in postgres_only.kept
