"""SQL for LLM rollups: the window inputs, the cache, the daily spend ledger, the breaker.

Spend is per UTC day, per channel and for the whole deployment (the row with
``channel_id = ''``). A call is *reserved* (one call, its projected cost) in a
committed transaction before it is made and *settled* to its actual cost after,
so a crash mid-call leaves the reservation counted: the caps err on the safe side.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

from channel_memory.kernel import groups
from channel_memory.kernel.models import MessageKey
from channel_memory.store.blocks import DERIVED_FIELDS, DerivedRow
from channel_memory.store.connection import Connection
from channel_memory.store.rows import columns, first_row
from channel_memory.store.state import get_state, set_state

DEPLOYMENT = ""
"""The ``llm_usage`` row that sums every channel."""
_MODEL_KEYS = groups.prefix_range(groups.MODEL)
"""Group keys of LLM blocks, as a range to bind; derivation of deterministic blocks never
touches them."""
_BREAKER_KEY = "llm_breaker"
_ORDINARY = json.dumps(groups.ORDINARY_CLASSES)
"""Derived classes whose messages are served by a ``raw_excerpt``: the only ones summarised
(bound as a JSON list)."""
_WINDOW_COLUMNS = columns(DERIVED_FIELDS[: DERIVED_FIELDS.index("group_key") + 1], "d")
"""What rollups and detection read of a derived message: :class:`DerivedRow`'s fields up
to ``group_key`` (the reply links stay unset)."""


async def ordinary_rows_with_chars(
    conn: Connection, channel_id: str, from_us: int, to_us: int
) -> list[tuple[DerivedRow, int]]:
    """Ordinary (never hard, never collapsed) messages created in ``[from_us, to_us)``, with
    their content's length, chronological."""
    fetched = await conn.execute_fetchall(
        f"SELECT {_WINDOW_COLUMNS}, length(s.content) FROM derived_messages d "
        "JOIN source_messages s ON s.source_kind = d.source_kind "
        "AND s.channel_id = d.channel_id AND s.message_id = d.message_id "
        "AND s.content_hash = d.content_hash AND s.forgotten_us IS NULL "
        "WHERE d.channel_id = ? AND d.class IN (SELECT value FROM json_each(?)) "
        "AND d.created_us >= ? AND d.created_us < ? ORDER BY d.created_us, d.message_id",
        (channel_id, _ORDINARY, from_us, to_us),
    )
    return [(DerivedRow(*derived), int(chars)) for *derived, chars in fetched]


async def channels_with_ordinary(conn: Connection, from_us: int, to_us: int) -> list[str]:
    fetched = await conn.execute_fetchall(
        "SELECT DISTINCT channel_id FROM derived_messages "
        "WHERE class IN (SELECT value FROM json_each(?)) AND created_us >= ? "
        "AND created_us < ? ORDER BY channel_id",
        (_ORDINARY, from_us, to_us),
    )
    return [str(channel) for (channel,) in fetched]


def _members(sources: str) -> tuple[tuple[str, str], ...]:
    """A block's ``sources`` column: the ``(message_id, content_hash)`` it covers."""
    return tuple((m, h) for m, h in json.loads(sources))


@dataclass(frozen=True, slots=True)
class StoredLlmBlock:
    seq: int
    group_key: str
    from_us: int
    members: tuple[tuple[str, str], ...]


async def llm_blocks(conn: Connection, channel_id: str) -> list[StoredLlmBlock]:
    """Every LLM block of a channel (few: one per summarised window)."""
    fetched = await conn.execute_fetchall(
        "SELECT seq, group_key, from_us, sources FROM recall_blocks WHERE channel_id = ? "
        "AND group_key >= ? AND group_key < ?",
        (channel_id, *_MODEL_KEYS),
    )
    return [
        StoredLlmBlock(int(seq), str(key), int(from_us), _members(sources))
        for seq, key, from_us, sources in fetched
    ]


async def llm_blocks_in_group(conn: Connection, channel_id: str, group_key: str) -> list[int]:
    fetched = await conn.execute_fetchall(
        "SELECT seq FROM recall_blocks WHERE channel_id = ? AND group_key = ?",
        (channel_id, group_key),
    )
    return [int(seq) for (seq,) in fetched]


@dataclass(frozen=True, slots=True)
class CitingLlmBlock:
    seq: int
    dirty: bool
    members: tuple[tuple[str, str], ...]


async def llm_blocks_citing(
    conn: Connection, channel_id: str, message_ids: Iterable[str]
) -> list[CitingLlmBlock]:
    """LLM blocks citing any of the messages, with every version each one covers."""
    # Derivation asks this for every batch: most channels have no LLM block at all, and one
    # probe of the group index answers that without looking at the batch's messages.
    probe = await conn.execute_fetchall(
        "SELECT 1 FROM recall_blocks WHERE channel_id = ? AND group_key >= ? "
        "AND group_key < ? LIMIT 1",
        (channel_id, *_MODEL_KEYS),
    )
    if not list(probe):
        return []
    fetched = await conn.execute_fetchall(
        "SELECT seq, dirty, sources FROM recall_blocks WHERE seq IN (SELECT b.block_seq "
        "FROM block_sources b WHERE b.channel_id = ? "
        "AND b.message_id IN (SELECT value FROM json_each(?))) "
        "AND group_key >= ? AND group_key < ?",
        (channel_id, json.dumps(sorted(set(message_ids))), *_MODEL_KEYS),
    )
    return [
        CitingLlmBlock(int(seq), bool(dirty), _members(sources)) for seq, dirty, sources in fetched
    ]


# --- cache ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CachedRollup:
    status: str
    """``ok`` or ``rejected``."""
    kind: str | None
    text: str | None
    score: float | None
    reason: str | None


async def cached(conn: Connection, key: str) -> CachedRollup | None:
    row = await first_row(
        conn, "SELECT status, kind, text, score, reason FROM llm_cache WHERE key = ?", (key,)
    )
    if row is None:
        return None
    status, kind, text, score, reason = row
    return CachedRollup(status=status, kind=kind, text=text, score=score, reason=reason)


async def store_cached(
    conn: Connection,
    key: str,
    channel_id: str,
    model: str,
    message_ids: Sequence[str],
    entry: CachedRollup,
    now_us: int,
) -> None:
    # replaced, not updated: the old entry's source rows go with it (ON DELETE CASCADE)
    await conn.execute("DELETE FROM llm_cache WHERE key = ?", (key,))
    await conn.execute(
        "INSERT INTO llm_cache (key, channel_id, model, status, kind, text, score, "
        "reason, created_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (key, channel_id, model, entry.status, entry.kind, entry.text, entry.score, entry.reason,
         now_us),
    )  # fmt: skip
    await conn.executemany(
        "INSERT INTO llm_cache_sources (cache_key, channel_id, message_id) "
        "VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        [(key, channel_id, message_id) for message_id in message_ids],
    )


async def forget_cached(conn: Connection, keys: Sequence[MessageKey]) -> int:
    """Delete every cache entry computed from any of these messages, and every promotion
    of them (see :func:`store_promotions`); returns how many cache entries."""
    removed = 0
    for key in keys:
        cursor = await conn.execute(
            "DELETE FROM llm_cache WHERE key IN (SELECT cache_key FROM llm_cache_sources "
            "WHERE channel_id = ? AND message_id = ?)",
            (key.channel_id, key.message_id),
        )
        removed += max(cursor.rowcount, 0)
        await conn.execute(
            "DELETE FROM llm_promotions WHERE channel_id = ? AND message_id = ?",
            (key.channel_id, key.message_id),
        )
    return removed


# --- model-assisted detection ---------------------------------------------------------------


async def detect_rows(
    conn: Connection, channel_id: str, from_us: int, to_us: int
) -> list[DerivedRow]:
    """The messages detection asks about in ``[from_us, to_us)``, chronological: ordinary
    ones, and those a promotion of their current version made hard events (so a window
    stays the same window after its promotions, and its cached answer keeps serving)."""
    fetched = await conn.execute_fetchall(
        f"SELECT {_WINDOW_COLUMNS} FROM derived_messages d "
        "WHERE d.channel_id = ? AND d.created_us >= ? AND d.created_us < ? "
        "AND (d.class IN (SELECT value FROM json_each(?)) OR EXISTS (SELECT 1 FROM "
        "llm_promotions p WHERE p.channel_id = d.channel_id AND p.message_id = d.message_id "
        "AND p.content_hash = d.content_hash)) ORDER BY d.created_us, d.message_id",
        (channel_id, from_us, to_us, _ORDINARY),
    )
    return [DerivedRow(*row) for row in fetched]


@dataclass(frozen=True, slots=True)
class Promotion:
    """A message version the model found to carry a decision: served as a hard event."""

    message_id: str
    content_hash: str
    event_type: str
    processor: str


async def promotions_of(
    conn: Connection, channel_id: str, versions: Iterable[tuple[str, str]]
) -> dict[str, Promotion]:
    """The promotions of exactly these ``(message_id, content_hash)`` versions, by message id."""
    wanted = sorted(set(versions))
    if not wanted:
        return {}
    fetched = await conn.execute_fetchall(
        "SELECT message_id, content_hash, event_type, processor FROM llm_promotions "
        "WHERE channel_id = ? AND (message_id, content_hash) IN "
        "(SELECT value->>0, value->>1 FROM json_each(?))",
        (channel_id, json.dumps(wanted)),
    )
    promotions = [
        Promotion(str(message_id), str(content_hash), str(event_type), str(processor))
        for message_id, content_hash, event_type, processor in fetched
    ]
    return {p.message_id: p for p in promotions}


async def store_promotions(
    conn: Connection,
    channel_id: str,
    promotions: Sequence[Promotion],
    now_us: int,
) -> list[str]:
    """Record promotions; a version already promoted keeps its first one. Returns the
    message ids newly promoted."""
    added: list[str] = []
    for p in promotions:
        cursor = await conn.execute(
            "INSERT INTO llm_promotions (channel_id, message_id, content_hash, "
            "event_type, processor, created_us) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (channel_id, p.message_id, p.content_hash, p.event_type, p.processor, now_us),
        )
        if cursor.rowcount > 0:
            added.append(p.message_id)
    return added


# --- spend ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Usage:
    calls: int = 0
    usd: float = 0.0
    failures: int = 0
    rejected: int = 0
    cache_hits: int = 0
    capped: str | None = None


_USAGE_COLUMNS = columns([f.name for f in fields(Usage)])
"""The ``llm_usage`` columns of :class:`Usage`'s fields, in its order."""


async def usage(conn: Connection, day_us: int, channel_id: str) -> Usage:
    """A channel's (or, with ``DEPLOYMENT``, everyone's) spend on one UTC day."""
    row = await first_row(
        conn,
        f"SELECT {_USAGE_COLUMNS} FROM llm_usage WHERE day_us = ? AND channel_id = ?",
        (day_us, channel_id),
    )
    return Usage() if row is None else Usage(*row)


async def _bump(conn: Connection, day_us: int, channel_id: str, column: str, amount: float) -> None:
    for who in (channel_id, DEPLOYMENT):
        await conn.execute(
            f"INSERT INTO llm_usage (day_us, channel_id, {column}) VALUES (?, ?, ?) "
            "ON CONFLICT (day_us, channel_id) "
            f"DO UPDATE SET {column} = llm_usage.{column} + excluded.{column}",
            (day_us, who, amount),
        )


async def reserve_call(
    conn: Connection, day_us: int, channel_id: str, projected_usd: float
) -> None:
    """Count one call and its projected cost, for the channel and the deployment."""
    await _bump(conn, day_us, channel_id, "calls", 1)
    await _bump(conn, day_us, channel_id, "usd", projected_usd)


async def settle_call(
    conn: Connection,
    day_us: int,
    channel_id: str,
    usd_delta: float,
    *,
    failed: bool = False,
    rejected: bool = False,
) -> None:
    """Replace a reservation's projected cost by the actual one; count failures/rejections."""
    if usd_delta:
        await _bump(conn, day_us, channel_id, "usd", usd_delta)
    if failed:
        await _bump(conn, day_us, channel_id, "failures", 1)
    if rejected:
        await _bump(conn, day_us, channel_id, "rejected", 1)


async def count_cache_hit(conn: Connection, day_us: int, channel_id: str) -> None:
    await _bump(conn, day_us, channel_id, "cache_hits", 1)


async def mark_capped(conn: Connection, day_us: int, channel_id: str, cap: str) -> None:
    """Record which cap stopped calls (on the deployment row for deployment-wide caps)."""
    await conn.execute(
        "INSERT INTO llm_usage (day_us, channel_id, capped) VALUES (?, ?, ?) "
        "ON CONFLICT (day_us, channel_id) DO UPDATE SET capped = excluded.capped",
        (day_us, channel_id, cap),
    )


async def capped_today(conn: Connection, day_us: int, channel_ids: Sequence[str]) -> list[str]:
    """The caps recorded as reached on ``day_us`` for these channels or the deployment."""
    fetched = await conn.execute_fetchall(
        "SELECT capped FROM llm_usage WHERE day_us = ? AND capped IS NOT NULL AND "
        "(channel_id = '' OR channel_id IN (SELECT value FROM json_each(?))) ORDER BY channel_id",
        (day_us, json.dumps(list(channel_ids))),
    )
    return [str(cap) for (cap,) in fetched]


async def capped_any(conn: Connection, day_us: int) -> list[str]:
    """Every cap recorded as reached on ``day_us``, for any channel or the deployment."""
    fetched = await conn.execute_fetchall(
        "SELECT DISTINCT capped FROM llm_usage WHERE day_us = ? AND capped IS NOT NULL",
        (day_us,),
    )
    return sorted(str(cap) for (cap,) in fetched)


async def spend_by_channel(conn: Connection, day_us: int) -> dict[str, Usage]:
    """Every channel's (and the deployment's, under ``''``) spend on one day."""
    fetched = await conn.execute_fetchall(
        f"SELECT channel_id, {_USAGE_COLUMNS} FROM llm_usage WHERE day_us = ?",
        (day_us,),
    )
    return {str(channel): Usage(*spend) for channel, *spend in fetched}


# --- breaker --------------------------------------------------------------------------------


@dataclass(slots=True)
class Breaker:
    """Consecutive failed calls; no calls at all until ``open_until_us`` after too many."""

    failures: int = 0
    open_until_us: int = 0


async def breaker(conn: Connection) -> Breaker:
    """The LLM circuit breaker's state (kept in ``worker_state``)."""
    value = await get_state(conn, _BREAKER_KEY)
    if not value:
        return Breaker()
    data = json.loads(value)
    return Breaker(int(data.get("failures", 0)), int(data.get("open_until_us", 0)))


async def set_breaker(conn: Connection, state: Breaker) -> None:
    value = {"failures": state.failures, "open_until_us": state.open_until_us}
    await set_state(conn, _BREAKER_KEY, json.dumps(value))
