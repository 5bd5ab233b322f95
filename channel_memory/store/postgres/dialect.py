"""The store's SQL on PostgreSQL: the statement rewrite and the dialect's operations.

The store writes each statement once (see ``channel_memory/store/connection.py``).
:func:`translate` makes one runnable here, and is the only rewrite there is:

- placeholders: ``?`` (numbered in order), ``?N`` and ``:name`` become ``$N``;
- ``json_each(`` becomes ``cm_json_each(`` (defined by the schema: text elements);
- ``LIMIT -1`` (SQLite's "no limit") becomes ``LIMIT ALL``;
- a unary ``+`` before a column (SQLite's hint to skip an index) is dropped.

String literals and quoted identifiers are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from channel_memory.store.connection import Connection

_TOKENS = re.compile(
    r"""
    (?P<string>'(?:[^']|'')*')
  | (?P<ident>"(?:[^"]|"")*")
  | (?P<numbered>\?(?P<number>\d+))
  | (?P<positional>\?)
  | (?P<named>(?<![:\w]):(?P<name>[A-Za-z_]\w*))
  | (?P<json_each>\bjson_each\s*\()
  | (?P<no_limit>\bLIMIT\s+-1\b)
  | (?P<unary>(?<=[\s(=,])\+(?=[A-Za-z_]))
    """,
    re.VERBOSE | re.IGNORECASE,
)


@lru_cache(maxsize=1024)
def translate(sql: str) -> tuple[str, tuple[str, ...]]:
    """The statement as PostgreSQL runs it, and the names of its ``:name`` parameters in
    ``$N`` order (empty for positional ones)."""
    names: list[str] = []
    highest = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal highest
        kind = match.lastgroup
        if kind in ("string", "ident"):
            return match.group()
        if kind == "numbered":
            number = int(match.group("number"))
            highest = max(highest, number)
            return f"${number}"
        if kind == "positional":
            highest += 1
            return f"${highest}"
        if kind == "named":
            name = match.group("name")
            if name not in names:
                names.append(name)
            return f"${names.index(name) + 1}"
        if kind == "json_each":
            return "cm_json_each("
        if kind == "no_limit":
            return "LIMIT ALL"
        return ""  # the unary plus

    return _TOKENS.sub(replace, sql), tuple(names)


class PostgresDialect:
    """PostgreSQL's full text: GIN indexes on each row's distinct words (``cm_words``) for
    literal matches (no index of their own to keep), and the ``search_terms`` table the
    schema's triggers fill for the ranked search."""

    name = "postgres"

    def source_match(self) -> str:
        # the partial index's expression and predicate, as the schema declares them: the
        # first 100,000 characters of a message (a tsvector holds at most 1 MB)
        return "cm_words(left(content, 100000)) @> cm_words(?)"

    def block_match(self) -> str:
        return "cm_words(left(text, 100000)) @> cm_words(?)"

    def match_parameter(self, words: Sequence[str]) -> str:
        return " ".join(words)

    async def index_source_text(
        self,
        conn: Connection,
        removed: Sequence[tuple[int, str]],
        added: Sequence[tuple[int, str]],
    ) -> None:
        """Nothing to do: the literal-match index is an index of ``source_messages``."""

    async def unindex_expired_sources(self, conn: Connection, cutoff_us: int) -> None:
        """Nothing to do: deleting the rows removes their index entries."""

    async def index_block_text(self, conn: Connection, added: Sequence[tuple[int, str]]) -> None:
        """Nothing to do: the literal-match index is an index of ``recall_blocks``."""

    async def unindex_block_text(self, conn: Connection, seqs: Sequence[int]) -> None:
        """Nothing to do: deleting the blocks removes their index entries."""

    async def postings(
        self, conn: Connection, parts: Sequence[str], first: int, last: int, limit: int
    ) -> list[int]:
        """Keys in ``[first, last]`` holding every term of ``parts``, highest first. A
        phrase reads as its words together (the ranking then counts the phrase itself)."""
        ((terms,),) = await conn.execute_fetchall("SELECT cm_terms(?)", (" ".join(parts),))
        if not terms:
            return []
        fetched = await conn.execute_fetchall(
            "SELECT key FROM search_terms AS t WHERE term = ? AND key BETWEEN ? AND ? "
            + "".join(
                f"AND EXISTS (SELECT 1 FROM search_terms WHERE term = ?{n} AND key = t.key) "
                for n in range(5, 5 + len(terms) - 1)
            )
            + "ORDER BY key DESC LIMIT ?4",
            (terms[0], first, last, limit, *terms[1:]),
        )
        return [int(key) for (key,) in fetched]

    async def span(self, conn: Connection, first: int, last: int) -> tuple[int, int] | None:
        ((low, high),) = await conn.execute_fetchall(
            "SELECT min(key), max(key) FROM search_terms WHERE key BETWEEN ? AND ?",
            (first, last),
        )
        return None if low is None else (int(low), int(high))

    async def advance_identity(self, conn: Connection, table: str, column: str) -> None:
        """Set the column's identity sequence to hand out the highest stored value + 1:
        rows inserted with explicit ids leave the sequence where it was. ``table`` and
        ``column`` are the schema's names, never a caller's text."""
        await conn.execute(
            f"SELECT setval(pg_get_serial_sequence(?, ?), "
            f"coalesce((SELECT max({column}) FROM {table}), 0) + 1, false)",
            (table, column),
        )


DIALECT = PostgresDialect()
