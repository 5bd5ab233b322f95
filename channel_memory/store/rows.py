"""Reading rows: the single-row fetches, and SELECT lists named once.

A query whose rows are read by name declares its columns as the fields of a
``NamedTuple``; :func:`columns` writes the SELECT list from those fields, so the
list and the names the code reads cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from channel_memory.store.connection import Connection, Row


class MissingRow(LookupError):
    """A query that always yields a row (an aggregate, a ``RETURNING``, a pragma) yielded none."""


def columns(fields: Sequence[str], alias: str | None = None) -> str:
    """The SELECT list of ``fields`` (a row type's ``_fields``), each qualified by ``alias``."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + name for name in fields)


async def first_row(conn: Connection, sql: str, params: Sequence[Any] = ()) -> Row | None:
    """The first row ``sql`` yields, or None when it yields none."""
    fetched = await conn.execute_fetchall(sql, params)
    return fetched[0] if fetched else None


async def one_row(conn: Connection, sql: str, params: Sequence[Any] = ()) -> Row:
    """The row a query always yields (an aggregate, a ``RETURNING``, a pragma).

    Raises :class:`MissingRow` when there is none: that is a defect, not a state of the data.
    """
    row = await first_row(conn, sql, params)
    if row is None:
        raise MissingRow("the query yielded no row")
    return row
