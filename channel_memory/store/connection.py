"""What every store function is handed: a connection that speaks the store's SQL.

The store's modules write their SQL once, in the subset both backends run (ADR 0030):
``?`` and ``?N`` placeholders, ``ON CONFLICT`` upserts, ``json_each(?)`` to bind a list
(integers read back with ``CAST(value AS INTEGER)``), ``value->>N`` on a pair, and
``LIMIT -1``. The SQLite connection runs it as written; the PostgreSQL connection
rewrites the placeholders and ``LIMIT -1`` and finds the rest defined by its schema
(``channel_memory/store/postgres/schema.sql``). What cannot be one statement — the
full-text indexes, the ranked search's postings — is a method of the connection's
:class:`Dialect`, one implementation per backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

Params = Sequence[Any] | Mapping[str, Any]
Row = Sequence[Any]
"""A result row: indexable and unpackable in SELECT order."""


class Result(Protocol):
    """What :meth:`Connection.execute` returns: how many rows a statement changed."""

    @property
    def rowcount(self) -> int: ...


class Connection(Protocol):
    """One database connection, inside the transaction the store opened for it."""

    @property
    def dialect(self) -> Dialect: ...

    async def execute(self, sql: str, parameters: Params = ()) -> Result: ...

    async def execute_fetchall(self, sql: str, parameters: Params = ()) -> Sequence[Row]: ...

    async def executemany(self, sql: str, parameters: Iterable[Params]) -> None: ...


class Dialect(Protocol):
    """The operations whose SQL differs between the backends.

    ``source_match`` and ``block_match`` are conditions on ``source_messages`` and
    ``recall_blocks`` rows for the literal (phrase-free, every word) match of the peer
    search; the ``*_text`` hooks keep the backend's literal-match index in step where
    the schema's own indexes do not (SQLite's FTS5 tables). ``postings`` and ``span``
    read the ranked search's index (see ``channel_memory/store/search.py``).
    ``advance_identity`` makes a generated key column (``AUTOINCREMENT``, ``IDENTITY``)
    continue after the highest value stored, once rows were written with explicit values
    (a copy between databases keeps every id).
    """

    name: str

    def source_match(self) -> str: ...

    def block_match(self) -> str: ...

    def match_parameter(self, words: Sequence[str]) -> str: ...

    async def index_source_text(
        self,
        conn: Connection,
        removed: Sequence[tuple[int, str]],
        added: Sequence[tuple[int, str]],
    ) -> None: ...

    async def unindex_expired_sources(self, conn: Connection, cutoff_us: int) -> None: ...

    async def index_block_text(
        self, conn: Connection, added: Sequence[tuple[int, str]]
    ) -> None: ...

    async def unindex_block_text(self, conn: Connection, seqs: Sequence[int]) -> None: ...

    async def postings(
        self, conn: Connection, parts: Sequence[str], first: int, last: int, limit: int
    ) -> list[int]: ...

    async def span(self, conn: Connection, first: int, last: int) -> tuple[int, int] | None: ...

    async def advance_identity(self, conn: Connection, table: str, column: str) -> None: ...
