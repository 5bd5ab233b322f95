"""SQL behind /v1/stats and readiness: sizes, backlog and ranges, per channel."""

from __future__ import annotations

from typing import Any

from channel_memory.store.connection import Connection
from channel_memory.store.rows import one_row


async def backlog(conn: Connection) -> tuple[int, int | None]:
    """``(messages with unprocessed changes, when the oldest was marked)``."""
    count, oldest = await one_row(conn, "SELECT count(*), min(marked_us) FROM dirty_messages")
    return int(count), oldest


async def channel_stats(conn: Connection) -> list[dict[str, Any]]:
    """Per channel: retained range, readable messages, blocks by kind, backlog, open gaps,
    and ``promotions``: hard events served because model-assisted detection promoted them."""
    out: dict[str, dict[str, Any]] = {}
    fetched = list(
        await conn.execute_fetchall(
            "SELECT c.channel_id, c.source_kind, r.retained_from_us FROM channels c "
            "LEFT JOIN channel_retention r ON r.channel_id = c.channel_id ORDER BY c.channel_id"
        )
    )
    for channel, kind, retained_from in fetched:
        out[channel] = {
            "channel_id": channel,
            "source_kind": kind,
            "retained_from_us": retained_from,
            "messages": 0,
            "oldest_us": None,
            "newest_us": None,
            "blocks": {},
            "dirty_backlog": 0,
            "open_gaps": 0,
            "promotions": 0,
        }
    queries = {
        "messages": "SELECT channel_id, count(*), min(created_us), max(created_us) "
        "FROM source_messages WHERE is_current = 1 AND deleted = 0 GROUP BY channel_id",
        "blocks": "SELECT channel_id, kind, count(*), "
        "coalesce(sum(CASE WHEN processor LIKE 'llm-detect:%' THEN 1 ELSE 0 END), 0) "
        "FROM recall_blocks "
        "GROUP BY channel_id, kind",
        "dirty": "SELECT channel_id, count(*) FROM dirty_messages GROUP BY channel_id",
        "gaps": "SELECT channel_id, count(*) FROM coverage_gaps WHERE resolved_us IS NULL "
        "GROUP BY channel_id",
    }
    fetched = list(await conn.execute_fetchall(queries["messages"]))
    for channel, count, oldest, newest in fetched:
        if channel in out:
            out[channel].update(messages=count, oldest_us=oldest, newest_us=newest)
    fetched = list(await conn.execute_fetchall(queries["blocks"]))
    for channel, kind, count, promoted in fetched:
        if channel in out:
            out[channel]["blocks"][kind] = count
            out[channel]["promotions"] += promoted
    fetched = list(await conn.execute_fetchall(queries["dirty"]))
    for channel, count in fetched:
        if channel in out:
            out[channel]["dirty_backlog"] = count
    fetched = list(await conn.execute_fetchall(queries["gaps"]))
    for channel, count in fetched:
        if channel in out:
            out[channel]["open_gaps"] = count
    return list(out.values())
