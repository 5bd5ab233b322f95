"""A throwaway PostgreSQL server for the tests.

``PgCluster`` runs ``initdb`` into a fresh temporary directory, starts the server with
``pg_ctl`` on a free port on 127.0.0.1 (its Unix socket inside that directory, trust
authentication, superuser ``postgres``), hands out empty databases by URL, and on
``stop()`` shuts the server down and removes the directory. Nothing outside the
directory is touched, so several test sessions can run side by side.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import Any, TypeVar

import asyncpg

T = TypeVar("T")

HOST = "127.0.0.1"
SUPERUSER = "postgres"
# DROP DATABASE ... WITH (FORCE) arrived in PostgreSQL 13.
MIN_SERVER_VERSION = 13

# A test cluster holds nothing worth keeping and the tests kill the sidecar, never the
# database server, so durability is traded for speed: no fsync, no waiting for the WAL
# at commit, no full-page images after checkpoints.
TEST_SETTINGS: Mapping[str, str] = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}

_DATABASE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class PostgresNotFound(RuntimeError):
    """The PostgreSQL server binaries (initdb, pg_ctl, postgres) are not installed."""


class PgClusterError(RuntimeError):
    """The throwaway cluster could not be created, started or stopped."""


def find_bindir(versions_dir: Path = Path("/usr/lib/postgresql")) -> Path:
    """The directory holding ``initdb``, ``pg_ctl`` and ``postgres``: what ``pg_config
    --bindir`` names, else the newest ``versions_dir/*/bin`` (Debian's layout). Raises
    ``PostgresNotFound`` naming the places it looked."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        result = subprocess.run(
            [pg_config, "--bindir"], capture_output=True, text=True, check=False
        )
        if result.returncode == 0 and result.stdout.strip():
            candidates.append(Path(result.stdout.strip()))
    versioned = [p for p in versions_dir.glob("*/bin") if p.parent.name.isdigit()]
    candidates += sorted(versioned, key=lambda p: int(p.parent.name), reverse=True)
    for bindir in candidates:
        if all((bindir / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
            return bindir
    looked = ", ".join(str(c) for c in candidates) or f"no pg_config, no {versions_dir}/*/bin"
    raise PostgresNotFound(
        "the PostgreSQL server binaries (initdb, pg_ctl, postgres) are not installed "
        f"(looked in: {looked}); install Debian's `postgresql` package (.ci/run does), "
        "or run pytest with --backend sqlite"
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on at this moment."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def process_running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie awaiting its reaper
    has exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    # the state follows the parenthesised command name, which may itself hold spaces
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _recorded_pid(pid_file: Path) -> int | None:
    try:
        first_line = pid_file.read_text().split("\n", 1)[0]
    except FileNotFoundError:
        return None
    return int(first_line) if first_line.strip().isdigit() else None


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, also when the calling thread
    already runs an event loop (an async test calling a cluster method)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class PgCluster:
    """One throwaway PostgreSQL server. Use as a context manager, or ``start()`` and
    ``stop()``; ``stop()`` is safe to call at any point, also after a failed start."""

    def __init__(
        self,
        bindir: Path | None = None,
        *,
        settings: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.bindir = bindir
        self.settings = {**TEST_SETTINGS, **(settings or {})}
        self.timeout = timeout
        self.root: Path | None = None
        self.port = 0
        self.timings: dict[str, float] = {}
        self.server_major = 0
        self._names = itertools.count(1)
        self._lock = threading.Lock()

    # -- paths and URLs ---------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        return self._root / "data"

    @property
    def socket_dir(self) -> Path:
        return self._root / "socket"

    @property
    def log_file(self) -> Path:
        return self._root / "server.log"

    @property
    def _root(self) -> Path:
        if self.root is None:
            raise PgClusterError("the cluster has not been started")
        return self.root

    def url(self, dbname: str = "postgres") -> str:
        """The connection URL of database ``dbname`` as the superuser over TCP."""
        return f"postgresql://{SUPERUSER}@{HOST}:{self.port}/{dbname}"

    # -- life cycle -------------------------------------------------------------------

    def start(self) -> PgCluster:
        """Create the cluster and start the server; return once it accepts connections.
        On any failure everything created so far is removed before the error propagates."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        began = time.monotonic()
        bindir = self.bindir = self.bindir or find_bindir()
        missing = [n for n in ("initdb", "pg_ctl", "postgres") if not (bindir / n).is_file()]
        if missing:
            raise PostgresNotFound(f"{', '.join(missing)} not found in {bindir}")
        self.root = Path(tempfile.mkdtemp(prefix="channel-memory-pg-"))
        self.socket_dir.mkdir()
        if os.geteuid() == 0:
            # initdb refuses to run as root: the server runs as the `postgres` account,
            # which must own the directory.
            try:
                account = pwd.getpwnam(SUPERUSER)
            except KeyError:
                raise PgClusterError(
                    "running as root, but there is no `postgres` account to run initdb as"
                ) from None
            for path in (self._root, self.socket_dir):
                os.chown(path, account.pw_uid, account.pw_gid)
        self._run(
            bindir / "initdb",
            "--pgdata",
            str(self.data_dir),
            "--username",
            SUPERUSER,
            "--auth",
            "trust",
            "--encoding",
            "UTF8",
            "--locale",
            "C",
            # character classes and lower() for text outside ASCII (the search index's
            # words), as a production database's UTF-8 locale gives them; sorting stays
            # byte-wise (the schema sorts with COLLATE "C" anyway)
            "--lc-ctype",
            "C.UTF-8",
            # the cluster is deleted at the end, never recovered: skip flushing it to disk
            "--no-sync",
            what="initdb",
        )
        settings = {
            "listen_addresses": f"'{HOST}'",
            "unix_socket_directories": f"'{self.socket_dir}'",
            **self.settings,
        }
        with (self.data_dir / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write("\n# throwaway test cluster\n")
            conf.writelines(f"{name} = {value}\n" for name, value in settings.items())
        self.timings["initdb"] = time.monotonic() - began

        began = time.monotonic()
        # The port is free when probed but may be taken before the server binds it;
        # try a few fresh ports before giving up.
        for attempt in range(3):
            self.port = free_port()
            self.log_file.unlink(missing_ok=True)  # judge each attempt by its own log
            try:
                self._run(
                    bindir / "pg_ctl",
                    "start",
                    "--pgdata",
                    str(self.data_dir),
                    "--log",
                    str(self.log_file),
                    "--options",
                    f"-p {self.port}",
                    # pg_ctl polls the server's status until it reports "ready to accept
                    # connections", for at most this many seconds
                    "--wait",
                    "--timeout",
                    str(int(self.timeout)),
                    what="pg_ctl start",
                )
                break
            except PgClusterError:
                if attempt == 2 or "already in use" not in self._log_tail():
                    raise
        run_sync(self._check_server())
        self.timings["start"] = time.monotonic() - began

    async def _check_server(self) -> None:
        conn = await asyncpg.connect(self.url(), timeout=self.timeout)
        try:
            major = self.server_major = conn.get_server_version().major
        finally:
            await conn.close()
        if major < MIN_SERVER_VERSION:
            raise PgClusterError(
                f"PostgreSQL {major} is too old for the tests; {MIN_SERVER_VERSION}+ needed"
            )

    def stop(self) -> None:
        """Stop the server (immediate shutdown: nothing is worth a checkpoint) and remove
        the directory. Does nothing when there is nothing to stop or remove."""
        root, self.root = self.root, None
        if root is None:
            return
        pid_file = root / "data" / "postmaster.pid"
        pid = _recorded_pid(pid_file)
        if pid is not None and self.bindir is not None:
            result = subprocess.run(
                self._as_owner(
                    self.bindir / "pg_ctl",
                    "stop",
                    "--pgdata",
                    str(root / "data"),
                    "--mode",
                    "immediate",
                    "--wait",
                    "--timeout",
                    str(int(self.timeout)),
                ),
                capture_output=True,
                text=True,
                env=self._env(),
                cwd=root,
                check=False,
            )
            if result.returncode != 0 and pid_file.exists():
                # pg_ctl could not stop it: kill the postmaster this cluster started, by
                # the pid it recorded, so no server outlives the test session
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            # the postmaster removes its pid file (which ends pg_ctl's wait) just before
            # it exits: wait for the exit itself, so that stop() means stopped
            deadline = time.monotonic() + self.timeout
            while process_running(pid) and time.monotonic() < deadline:
                time.sleep(0.005)
        shutil.rmtree(root)

    def __enter__(self) -> PgCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- databases --------------------------------------------------------------------

    def create_database(self, name: str | None = None) -> str:
        """Create an empty database (a fresh name unless ``name`` is given) and return
        its URL ``postgresql://postgres@127.0.0.1:PORT/NAME``."""
        if name is None:
            with self._lock:
                name = f"test_{next(self._names)}"
        statement = f"CREATE DATABASE {_identifier(name)}"
        if self.server_major >= 15:
            # copying the few files of the empty template is quicker than WAL-logging
            # them block by block (15's default) when nothing is synced to disk anyway
            statement += " STRATEGY FILE_COPY"
        run_sync(self._admin(statement))
        return self.url(name)

    def drop_database(self, name_or_url: str) -> None:
        """Drop a database, given by name or by its URL. Its open connections are
        terminated first (``WITH (FORCE)``), so a test that left a pool open cannot keep
        it alive; dropping a database that does not exist is not an error."""
        name = name_or_url.rsplit("/", 1)[-1] if "://" in name_or_url else name_or_url
        run_sync(self._admin(f"DROP DATABASE IF EXISTS {_identifier(name)} WITH (FORCE)"))

    def databases(self) -> list[str]:
        """The names of the databases that accept connections, templates excluded."""
        return run_sync(self._list_databases())

    async def _list_databases(self) -> list[str]:
        conn = await asyncpg.connect(self.url(), timeout=self.timeout)
        try:
            rows = await conn.fetch(
                "SELECT datname FROM pg_database WHERE NOT datistemplate ORDER BY datname"
            )
        finally:
            await conn.close()
        return [row["datname"] for row in rows]

    async def _admin(self, statement: str) -> None:
        conn = await asyncpg.connect(self.url(), timeout=self.timeout)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    # -- subprocesses -----------------------------------------------------------------

    def _as_owner(self, *argv: str | Path) -> list[str]:
        if os.geteuid() != 0:
            return [str(arg) for arg in argv]
        # runuser lives in sbin, which a non-login PATH may lack
        runuser = shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin")
        if runuser is None:
            raise PgClusterError("running as root, but there is no runuser to drop to `postgres`")
        return [runuser, "-u", SUPERUSER, "--", *(str(arg) for arg in argv)]

    @staticmethod
    def _env() -> dict[str, str]:
        # PG* variables of the calling shell (PGDATA, PGPORT, ...) must not steer the
        # throwaway cluster; messages in English so failures read the same everywhere.
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        return env

    def _run(self, *argv: str | Path, what: str) -> None:
        try:
            result = subprocess.run(
                self._as_owner(*argv),
                capture_output=True,
                text=True,
                env=self._env(),
                cwd=self._root,  # the `postgres` account may not enter the caller's cwd
                timeout=self.timeout + 10,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise PgClusterError(f"{what} did not finish in {exc.timeout:.0f} s") from None
        if result.returncode != 0:
            output = (result.stdout + result.stderr).strip()
            raise PgClusterError(
                f"{what} failed (exit {result.returncode}):\n{output}\n"
                f"--- server log ---\n{self._log_tail()}"
            )

    def _log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_file.read_text(encoding="utf-8", errors="replace")
        except (FileNotFoundError, PgClusterError):
            return "(no server log)"
        return "\n".join(text.splitlines()[-lines:])


def _identifier(name: str) -> str:
    if not _DATABASE_NAME.fullmatch(name):
        raise ValueError(f"not a test database name: {name!r}")
    return f'"{name}"'
