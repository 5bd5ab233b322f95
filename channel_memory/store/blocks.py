"""SQL over derived data: per-message classes, recall blocks, provenance, worker state."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite

from channel_memory.kernel.models import BlockSource, MessageKey, RecallBlock, source_handle


@dataclass(frozen=True, slots=True)
class DerivedRow:
    """A current message's class and group, as the worker last derived it."""

    source_kind: str
    channel_id: str
    message_id: str
    content_hash: str
    created_us: int
    author: str | None
    """The name (else id) a block's text would show; part of the block id's inputs."""
    cls: str
    event_type: str | None
    score: float
    group_key: str | None
    parent_id: str | None = None
    """The message a reply's class was derived with (stored or not): its change re-derives
    this one."""
    answers: str | None = None
    """A decision by reply: the source handle of the message it decides on."""


_DERIVED_COLUMNS = (
    "source_kind, channel_id, message_id, content_hash, created_us, author, class, event_type, "
    "score, group_key, parent_id, answers"
)
BLOCK_COLUMNS = (
    "seq, id, source_kind, channel_id, group_key, kind, event_type, text, from_us, to_us, sparse, "
    "score, generated_us, dirty, processor, cut_text, author, trust_authors, sources, origin, "
    "answers"
)


def _ids(values: Iterable[str]) -> str:
    return json.dumps(sorted(set(values)))


async def derived_rows(
    conn: aiosqlite.Connection, channel_id: str, message_ids: Iterable[str]
) -> dict[str, DerivedRow]:
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {_DERIVED_COLUMNS} FROM derived_messages WHERE channel_id = ? AND message_id "
            "IN "
            "(SELECT value FROM json_each(?))",
            (channel_id, _ids(message_ids)),
        )
    )
    return {row[2]: DerivedRow(*row) for row in fetched}


async def replies_to(
    conn: aiosqlite.Connection, channel_id: str, message_ids: Iterable[str]
) -> set[str]:
    """Messages of a channel whose derived class was read with one of ``message_ids`` as
    the message they reply to."""
    fetched = await conn.execute_fetchall(
        "SELECT message_id FROM derived_messages WHERE channel_id = ? AND parent_id IN "
        "(SELECT value FROM json_each(?))",
        (channel_id, _ids(message_ids)),
    )
    return {str(row[0]) for row in fetched}


async def group_members(
    conn: aiosqlite.Connection, channel_id: str, cls: str, group_keys: Iterable[str]
) -> dict[str, list[DerivedRow]]:
    """Members of each group of a class, chronological (``created_us``, then message id)."""
    members: dict[str, list[DerivedRow]] = {key: [] for key in group_keys}
    if not members:
        return members
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {_DERIVED_COLUMNS} FROM derived_messages WHERE channel_id = ? AND class = ? "
            "AND group_key IN (SELECT value FROM json_each(?)) "
            "ORDER BY group_key, created_us, message_id",
            (channel_id, cls, _ids(members)),
        )
    )
    for row in fetched:
        members[row[9]].append(DerivedRow(*row))
    return members


async def count_before(
    conn: aiosqlite.Connection,
    channel_id: str,
    cls: str,
    group_key: str,
    created_us: int,
    message_id: str,
) -> int:
    """How many members of a group come before ``(created_us, message_id)``."""
    fetched = list(
        await conn.execute_fetchall(
            "SELECT count(*) FROM derived_messages WHERE channel_id = ? AND class = ? "
            "AND group_key = ? AND (created_us, message_id) < (?, ?)",
            (channel_id, cls, group_key, created_us, message_id),
        )
    )
    row = fetched[0] if fetched else None
    assert row is not None
    return int(row[0])


async def group_members_from(
    conn: aiosqlite.Connection, channel_id: str, cls: str, group_key: str, offset: int
) -> list[DerivedRow]:
    """A group's members in order, skipping the first ``offset``."""
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {_DERIVED_COLUMNS} FROM derived_messages WHERE channel_id = ? AND class = ? "
            "AND group_key = ? ORDER BY created_us, message_id LIMIT -1 OFFSET ?",
            (channel_id, cls, group_key, offset),
        )
    )
    return [DerivedRow(*row) for row in fetched]


async def write_derived(
    conn: aiosqlite.Connection,
    channel_id: str,
    upserts: Sequence[DerivedRow],
    deletes: Sequence[str],
) -> None:
    if deletes:
        await conn.execute(
            "DELETE FROM derived_messages WHERE channel_id = ? AND message_id IN "
            "(SELECT value FROM json_each(?))",
            (channel_id, _ids(deletes)),
        )
    if upserts:
        await conn.executemany(
            f"INSERT OR REPLACE INTO derived_messages ({_DERIVED_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    r.source_kind,
                    r.channel_id,
                    r.message_id,
                    r.content_hash,
                    r.created_us,
                    r.author,
                    r.cls,
                    r.event_type,
                    r.score,
                    r.group_key,
                    r.parent_id,
                    r.answers,
                )
                for r in upserts
            ],
        )


@dataclass(frozen=True, slots=True)
class StoredBlockRef:
    seq: int
    id: str
    group_key: str
    dirty: bool


async def blocks_in_groups(
    conn: aiosqlite.Connection, channel_id: str, group_keys: Iterable[str]
) -> list[StoredBlockRef]:
    fetched = list(
        await conn.execute_fetchall(
            "SELECT seq, id, group_key, dirty FROM recall_blocks WHERE channel_id = ? AND "
            "group_key IN "
            "(SELECT value FROM json_each(?))",
            (channel_id, _ids(group_keys)),
        )
    )
    return [StoredBlockRef(row[0], row[1], row[2], bool(row[3])) for row in fetched]


async def blocks_in_group_runs(
    conn: aiosqlite.Connection, channel_id: str, group_key: str, first_run: int
) -> list[StoredBlockRef]:
    """Blocks of runs ``group_key:<n>`` with ``n >= first_run``."""
    prefix = group_key + ":"
    fetched = list(
        await conn.execute_fetchall(
            "SELECT seq, id, group_key, dirty FROM recall_blocks WHERE channel_id = ? "
            "AND group_key > ? AND group_key < ?",
            (channel_id, prefix, group_key + ";"),
        )
    )
    refs = [StoredBlockRef(row[0], row[1], row[2], bool(row[3])) for row in fetched]
    return [ref for ref in refs if int(ref.group_key[len(prefix) :]) >= first_run]


async def delete_blocks(conn: aiosqlite.Connection, seqs: Sequence[int]) -> None:
    """Delete blocks with their provenance and index rows."""
    if not seqs:
        return
    payload = json.dumps(list(seqs))
    await conn.execute(
        "DELETE FROM block_fts WHERE rowid IN (SELECT value FROM json_each(?))", (payload,)
    )
    await conn.execute(
        "DELETE FROM recall_blocks WHERE seq IN (SELECT value FROM json_each(?))", (payload,)
    )


async def insert_blocks(conn: aiosqlite.Connection, blocks: Sequence[RecallBlock]) -> None:
    if not blocks:
        return
    fetched = list(
        await conn.execute_fetchall("SELECT coalesce(max(seq), 0) + 1 FROM recall_blocks")
    )
    row = fetched[0] if fetched else None
    assert row is not None
    first = int(row[0])
    rows: list[tuple[Any, ...]] = []
    sources: list[tuple[Any, ...]] = []
    fts: list[tuple[int, str]] = []
    for offset, block in enumerate(blocks):
        seq = first + offset
        rows.append(
            (
                seq,
                block.id,
                block.source_kind,
                block.channel_id,
                block.group_key,
                block.kind,
                block.event_type,
                block.text,
                block.from_us,
                block.to_us,
                int(block.sparse),
                block.score,
                block.generated_us,
                int(block.dirty),
                block.processor,
                block.cut_text,
                block.author,
                json.dumps(list(block.trust_authors)),
                json.dumps([[x.message_id, x.content_hash] for x in block.sources]),
                block.origin,
                block.answers,
            )
        )
        sources += [
            (seq, position, block.channel_id, s.message_id, s.content_hash)
            for position, s in enumerate(block.sources)
        ]
        if block.sparse:
            fts.append((seq, block.text))
    await conn.executemany(
        f"INSERT INTO recall_blocks ({BLOCK_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    await conn.executemany(
        "INSERT INTO block_sources (block_seq, position, channel_id, message_id, content_hash) "
        "VALUES (?, ?, ?, ?, ?)",
        sources,
    )
    await conn.executemany("INSERT INTO block_fts (rowid, text) VALUES (?, ?)", fts)


async def clear_block_dirty(conn: aiosqlite.Connection, seqs: Sequence[int]) -> None:
    if seqs:
        await conn.execute(
            "UPDATE recall_blocks SET dirty = 0 WHERE seq IN (SELECT value FROM json_each(?))",
            (json.dumps(list(seqs)),),
        )


async def mark_blocks_citing_dirty(
    conn: aiosqlite.Connection, channel_id: str, message_ids: Iterable[str]
) -> None:
    """Blocks citing a changed message, or deciding on it by reply, are never served as
    fresh until recomputed."""
    ids = _ids(message_ids)
    await conn.execute(
        "UPDATE recall_blocks SET dirty = 1 WHERE dirty = 0 AND seq IN (SELECT block_seq FROM "
        "block_sources WHERE channel_id = ? AND message_id IN (SELECT value FROM json_each(?)))",
        (channel_id, ids),
    )
    handles = _ids(source_handle(channel_id, m) for m in json.loads(ids))
    await conn.execute(
        "UPDATE recall_blocks SET dirty = 1 WHERE dirty = 0 AND answers IN "
        "(SELECT value FROM json_each(?))",
        (handles,),
    )


def block_from_row(row: Sequence[Any]) -> RecallBlock:
    return RecallBlock(
        id=row[1],
        source_kind=row[2],
        channel_id=row[3],
        group_key=row[4],
        kind=row[5],
        event_type=row[6],
        text=row[7],
        from_us=row[8],
        to_us=row[9],
        sparse=bool(row[10]),
        score=row[11],
        generated_us=row[12],
        dirty=bool(row[13]),
        processor=row[14],
        sources=tuple(BlockSource(m, h) for m, h in json.loads(row[18])),
        origin=row[19],
        cut_text=row[15],
        author=row[16],
        trust_authors=tuple(json.loads(row[17])),
        answers=row[20],
    )


async def blocks_overlapping(
    conn: aiosqlite.Connection, channel_id: str, from_us: int, to_us: int
) -> list[RecallBlock]:
    """Blocks of a channel whose source window overlaps ``[from_us, to_us]``, chronological."""
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE channel_id = ? AND to_us >= ? "
            "AND from_us <= ? ORDER BY from_us, to_us, seq",
            (channel_id, from_us, to_us),
        )
    )
    rows = list(fetched)
    return [block_from_row(row) for row in rows]


async def all_blocks(conn: aiosqlite.Connection) -> list[RecallBlock]:
    """Every block, ordered by id (for tests and regeneration checks)."""
    fetched = list(
        await conn.execute_fetchall(f"SELECT {BLOCK_COLUMNS} FROM recall_blocks ORDER BY id")
    )
    rows = list(fetched)
    return [block_from_row(row) for row in rows]


async def search_blocks(
    conn: aiosqlite.Connection,
    channel_id: str,
    match: str | None,
    from_us: int,
    limit: int,
    until_us: int | None = None,
) -> list[RecallBlock]:
    """Fresh sparse blocks of a channel matching an FTS5 expression (any, when None),
    ending in ``[from_us, until_us]``, newest first."""
    conditions = ["channel_id = ?", "sparse = 1", "dirty = 0", "to_us >= ?"]
    params: list[Any] = [channel_id, from_us]
    if until_us is not None:
        conditions.append("to_us <= ?")
        params.append(until_us)
    if match is not None:
        conditions.append("seq IN (SELECT rowid FROM block_fts WHERE block_fts MATCH ?)")
        params.append(match)
    params.append(limit)
    fetched = await conn.execute_fetchall(
        f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE {' AND '.join(conditions)} "
        "ORDER BY to_us DESC, seq DESC LIMIT ?",
        params,
    )
    return [block_from_row(row) for row in fetched]


async def block_by_id(conn: aiosqlite.Connection, block_id: str) -> RecallBlock | None:
    fetched = await conn.execute_fetchall(
        f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE id = ?", (block_id,)
    )
    rows = list(fetched)
    return block_from_row(rows[0]) if rows else None


# --- worker bookkeeping ---------------------------------------------------------------------


async def pending_dirty(conn: aiosqlite.Connection, limit: int) -> list[tuple[int, MessageKey]]:
    """The oldest dirty markers, ``(seq, key)``."""
    fetched = list(
        await conn.execute_fetchall(
            "SELECT seq, source_kind, channel_id, message_id FROM dirty_messages ORDER BY seq "
            "LIMIT ?",
            (limit,),
        )
    )
    return [(row[0], MessageKey(row[1], row[2], row[3])) for row in fetched]


async def dirty_count(conn: aiosqlite.Connection, channel_ids: Iterable[str] | None = None) -> int:
    params: tuple[str, ...] = ()
    if channel_ids is None:
        sql = "SELECT count(*) FROM dirty_messages"
    else:
        sql = (
            "SELECT count(*) FROM dirty_messages WHERE channel_id IN "
            "(SELECT value FROM json_each(?))"
        )
        params = (_ids(channel_ids),)
    fetched = list(await conn.execute_fetchall(sql, params))
    row = fetched[0] if fetched else None
    assert row is not None
    return int(row[0])


async def clear_markers(conn: aiosqlite.Connection, seqs: Sequence[int]) -> None:
    """Clear processed markers; a message re-marked since has a new seq and stays queued."""
    if seqs:
        await conn.execute(
            "DELETE FROM dirty_messages WHERE seq IN (SELECT value FROM json_each(?))",
            (json.dumps(list(seqs)),),
        )


async def clear_markers_for(
    conn: aiosqlite.Connection, channel_id: str, message_ids: Iterable[str]
) -> None:
    await conn.execute(
        "DELETE FROM dirty_messages WHERE channel_id = ? AND message_id IN "
        "(SELECT value FROM json_each(?))",
        (channel_id, _ids(message_ids)),
    )


async def mark_everything_dirty(conn: aiosqlite.Connection, now_us: int) -> None:
    """Queue every message with a current version or derived data, and dirty every block."""
    await conn.execute(
        "INSERT OR REPLACE INTO dirty_messages (source_kind, channel_id, message_id, marked_us) "
        "SELECT source_kind, channel_id, message_id, ? FROM source_messages WHERE is_current = 1 "
        "UNION SELECT source_kind, channel_id, message_id, ? FROM derived_messages",
        (now_us, now_us),
    )
    await conn.execute("UPDATE recall_blocks SET dirty = 1")


async def get_state(conn: aiosqlite.Connection, key: str) -> str | None:
    fetched = list(
        await conn.execute_fetchall("SELECT value FROM worker_state WHERE key = ?", (key,))
    )
    row = fetched[0] if fetched else None
    return None if row is None else str(row[0])


async def set_state(conn: aiosqlite.Connection, key: str, value: str) -> None:
    await conn.execute(
        "INSERT OR REPLACE INTO worker_state (key, value) VALUES (?, ?)", (key, value)
    )


async def acquire_lease(conn: aiosqlite.Connection, holder: str, now_us: int, ttl_us: int) -> bool:
    """Take or renew the single worker lease; False while another live holder has it."""
    await conn.execute(
        "INSERT INTO worker_lease (id, holder, expires_us) VALUES (1, ?, ?) "
        "ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_us = excluded.expires_us "
        "WHERE worker_lease.holder = excluded.holder OR worker_lease.expires_us < ?",
        (holder, now_us + ttl_us, now_us),
    )
    fetched = list(await conn.execute_fetchall("SELECT holder FROM worker_lease WHERE id = 1"))
    row = fetched[0] if fetched else None
    return row is not None and row[0] == holder


async def release_lease(conn: aiosqlite.Connection, holder: str) -> None:
    await conn.execute("DELETE FROM worker_lease WHERE id = 1 AND holder = ?", (holder,))
