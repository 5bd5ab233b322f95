"""SQL over coverage gaps: periods the bridge may have missed."""

from __future__ import annotations

from dataclasses import dataclass, fields

from channel_memory.store.connection import Connection
from channel_memory.store.rows import columns, first_row, one_row


@dataclass(frozen=True, slots=True)
class CoverageGap:
    id: int
    channel_id: str
    from_us: int
    to_us: int
    reason: str | None
    created_us: int
    resolved_us: int | None


_COLUMNS = columns([f.name for f in fields(CoverageGap)])


async def insert_gap(
    conn: Connection,
    channel_id: str,
    from_us: int,
    to_us: int,
    reason: str | None,
    now_us: int,
) -> CoverageGap:
    """Record a gap; the same gap again (channel, span and reason, open or resolved since)
    is the one already recorded: a batch sent again records nothing twice."""
    same = await first_row(
        conn,
        f"SELECT {_COLUMNS} FROM coverage_gaps WHERE channel_id = ? AND from_us = ? "
        "AND to_us = ? AND "
        + ("reason IS NULL" if reason is None else "reason = ?")
        + " ORDER BY id LIMIT 1",
        (channel_id, from_us, to_us) + (() if reason is None else (reason,)),
    )
    if same is not None:
        return CoverageGap(*same)
    row = await one_row(
        conn,
        "INSERT INTO coverage_gaps (channel_id, from_us, to_us, reason, created_us) "
        f"VALUES (?, ?, ?, ?, ?) RETURNING {_COLUMNS}",
        (channel_id, from_us, to_us, reason, now_us),
    )
    return CoverageGap(*row)


async def gap_by_id(conn: Connection, gap_id: int) -> CoverageGap | None:
    row = await first_row(conn, f"SELECT {_COLUMNS} FROM coverage_gaps WHERE id = ?", (gap_id,))
    return None if row is None else CoverageGap(*row)


async def resolve_gap(conn: Connection, gap_id: int, now_us: int) -> None:
    """Mark a gap closed by a backfill (a gap already closed keeps its first time)."""
    await conn.execute(
        "UPDATE coverage_gaps SET resolved_us = ? WHERE id = ? AND resolved_us IS NULL",
        (now_us, gap_id),
    )


async def open_gaps_overlapping(
    conn: Connection, channel_id: str, from_us: int, to_us: int
) -> list[CoverageGap]:
    """Unresolved gaps of a channel that overlap ``[from_us, to_us]``."""
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {_COLUMNS} FROM coverage_gaps WHERE channel_id = ? AND resolved_us IS NULL "
            "AND to_us >= ? AND from_us <= ? ORDER BY from_us, id",
            (channel_id, from_us, to_us),
        )
    )
    return [CoverageGap(*row) for row in fetched]
