"""The store's face: one interface over two backends, chosen by the ``db`` setting.

A filesystem path opens SQLite (``channel_memory/store/sqlite.py``, the embedded
default); a ``postgresql://`` URL opens PostgreSQL (``channel_memory/store/postgres/``),
which several replicas may share (ADR 0030). Both hand the store's functions a
:class:`~channel_memory.store.connection.Connection` inside a transaction:

- :meth:`Store.write` — a write transaction. Writes are serialised: by one lock per
  process and, across processes, by SQLite's ``BEGIN IMMEDIATE`` or PostgreSQL's
  transaction-level advisory lock. Every write path reads what it needs and writes
  within it, so the outcome of concurrent batches is that of some serial order.
- :meth:`Store.read` — a read-only transaction on a snapshot: every query inside sees
  the same committed state.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from importlib import resources
from pathlib import Path

from channel_memory.kernel.errors import ApiError
from channel_memory.kernel.models import MessageKey
from channel_memory.store.connection import Connection

DeriveHook = Callable[[Connection, Sequence[MessageKey], int], Awaitable[object]]
"""Derivation of blocks for some messages, run inside the caller's write transaction.

The worker provides it; ingest calls it for forgotten messages, so that no
block cites them once the forget returns (ingest never imports the worker).
"""

_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_URL = re.compile(r"^postgres(?:ql)?://", re.IGNORECASE)


def is_postgres_url(target: str | Path) -> bool:
    """Whether ``target`` names a PostgreSQL database rather than an SQLite file."""
    return isinstance(target, str) and _URL.match(target) is not None


def redacted(target: str | Path) -> str:
    """``target`` as logs may show it: a URL without its password, wherever it is written
    (``user:pass@``, a password with an ``@`` in it, ``?password=``)."""
    text = str(target)
    if not is_postgres_url(text):
        return text
    scheme, rest = text.split("://", 1)
    # the host part ends at the first "/", "?" or "#" after the last "@" before any query
    last_at = re.split(r"[?#]", rest, maxsplit=1)[0].rfind("@")
    cut = len(rest)
    for mark in "/?#":
        at = rest.find(mark, last_at + 1)
        if at != -1:
            cut = min(cut, at)
    netloc, tail = rest[:cut], rest[cut:]
    userinfo, at_sign, host = netloc.rpartition("@")
    if at_sign and ":" in userinfo:
        netloc = userinfo.split(":", 1)[0] + ":***@" + host
    tail = re.sub(r"(?i)([?&]password=)[^&#]*", r"\1***", tail)
    return f"{scheme}://{netloc}{tail}"


def failure_reason(exc: BaseException) -> str:
    """Why a database could not be opened, for a one-line refusal: the error's type and the
    words of the OS, SQLite, the server or the driver (a path, a state, a database's name;
    never stored content)."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class WriterBusy(Exception):
    """The single writer stayed busy longer than the caller was willing to wait."""


class StorageError(Exception):
    """A write failed for a reason outside the request: nothing of it was written."""

    status = 503
    code = "storage_error"
    message = "the database could not be written; nothing was written"
    retry_after: str | None = None
    """``Retry-After`` seconds when retrying shortly helps (a lock, a lost server)."""

    def api_error(self) -> ApiError:
        """The answer HTTP and the MCP tools give: its status, code and message."""
        headers = {"Retry-After": self.retry_after} if self.retry_after else None
        return ApiError(self.status, self.code, self.message, headers=headers)


class StorageUnavailable(StorageError):
    """The database server cannot be reached (stopped, restarting, the connection lost)."""

    code = "storage_unavailable"
    message = "the database cannot be reached; retry shortly"
    retry_after = "1"


class StorageFull(StorageError):
    """The disk (or the database's ``max_page_count``) is full."""

    status = 507
    code = "storage_full"
    message = "the database is out of space; nothing was written, retry once space is freed"


class StorageReadOnly(StorageError):
    """The database cannot be written (a read-only file, disk or connection)."""

    code = "storage_read_only"
    message = "the database is read-only; nothing was written"


class StorageLocked(StorageError):
    """Another process held a lock on the database longer than ``busy_timeout``."""

    code = "database_busy"
    message = "the database is locked by another process; retry shortly"
    retry_after = "1"


class DatabaseUnavailable(Exception):
    """The database cannot be opened; the message names why (never a password)."""


class DatabaseUnreachable(DatabaseUnavailable):
    """The PostgreSQL server cannot be reached, or refuses the connection."""


class SchemaTooNew(DatabaseUnavailable):
    """The database was written by a newer channel-memory than this one."""


def schema_version(sql: str) -> int:
    """The version a schema script declares (``PRAGMA user_version = N`` in both scripts)."""
    match = re.search(r"PRAGMA\s+user_version\s*=\s*(\d+)", sql)
    if match is None:
        raise ValueError("a schema script must declare PRAGMA user_version")
    return int(match.group(1))


def migrations(directory: Path | None = None, *, backend: str = "sqlite") -> dict[int, str]:
    """Numbered migrations of a backend: ``{target_version: sql}``."""
    if directory is None:
        folder = resources.files("channel_memory").joinpath("store")
        if backend != "sqlite":
            folder = folder.joinpath(backend)
        folder = folder.joinpath("migrations")
        entries = [(entry.name, entry) for entry in folder.iterdir()] if folder.is_dir() else []
    else:
        entries = [(entry.name, entry) for entry in directory.iterdir()]
    found: dict[int, str] = {}
    for name, entry in entries:
        match = _MIGRATION_NAME.match(name)
        if match:
            found[int(match.group(1))] = entry.read_text(encoding="utf-8")
    return dict(sorted(found.items()))


class Store(ABC):
    """A channel-memory database: open it with :meth:`open`, always :meth:`close` it."""

    backend: str
    """``sqlite`` or ``postgres``."""
    location: str
    """Where the data lives, as logs may show it (a path, or a URL without password)."""

    @classmethod
    async def open(cls, target: str | Path, *, readers: int = 4) -> Store:
        """Open (creating or upgrading) the database ``target`` names: a path or a URL."""
        if is_postgres_url(target):
            from channel_memory.store.postgres.database import PostgresStore

            return await PostgresStore.connect(str(target), readers=readers)
        from channel_memory.store.sqlite import SqliteStore

        return await SqliteStore.connect(Path(target), readers=readers)

    @abstractmethod
    async def close(self) -> None:
        """Finish owed erasures, then close every connection."""

    @abstractmethod
    async def erase_pending(self) -> bool:
        """Complete owed physical erasures; False when one must be retried later."""

    @abstractmethod
    async def pending_erasures(self) -> int:
        """How many forgets still owe their physical erasure."""

    @abstractmethod
    def write(self, wait: float | None = None) -> AbstractAsyncContextManager[Connection]:
        """A write transaction, committed on success, rolled back on an exception.

        ``wait`` bounds the time spent queueing for this process's writer (``None``:
        no bound); past it ``WriterBusy`` is raised and nothing is written.
        """

    @abstractmethod
    def read(self) -> AbstractAsyncContextManager[Connection]:
        """A read-only transaction on one snapshot."""
