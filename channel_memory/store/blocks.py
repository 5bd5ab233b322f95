"""SQL over derived data: per-message classes, recall blocks and their provenance."""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

from channel_memory.kernel.models import BlockSource, RecallBlock, source_handle
from channel_memory.store import dirty
from channel_memory.store.connection import Connection
from channel_memory.store.rows import columns, first_row, one_row


@dataclass(frozen=True, slots=True)
class DerivedRow:
    """A current message's class and group, as the worker last derived it.

    The fields are the columns of ``derived_messages`` in order (``cls`` is ``class``):
    rows are selected with :data:`DERIVED_FIELDS` and built positionally."""

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


DERIVED_FIELDS = tuple("class" if f.name == "cls" else f.name for f in fields(DerivedRow))
"""The ``derived_messages`` columns of :class:`DerivedRow`'s fields, in its order."""
_DERIVED_COLUMNS = columns(DERIVED_FIELDS)
_DERIVED_UPDATES = ", ".join(
    f"{name} = excluded.{name}"
    for name in DERIVED_FIELDS
    if name not in ("channel_id", "message_id")
)
_derived_values = operator.attrgetter(*(f.name for f in fields(DerivedRow)))
"""A :class:`DerivedRow`'s values in column order."""


class BlockRow(NamedTuple):
    """A ``recall_blocks`` row as stored (flags as integers, lists as JSON)."""

    seq: int
    id: str
    source_kind: str
    channel_id: str
    group_key: str
    kind: str
    event_type: str | None
    text: str
    from_us: int
    to_us: int
    sparse: int
    score: float
    generated_us: int
    dirty: int
    processor: str
    cut_text: str | None
    author: str | None
    trust_authors: str
    sources: str
    origin: str
    answers: str | None


BLOCK_COLUMNS = columns(BlockRow._fields)
"""The SELECT list that :func:`block_from_row` reads."""


def _ids(values: Iterable[str]) -> str:
    return json.dumps(sorted(set(values)))


async def derived_rows(
    conn: Connection, channel_id: str, message_ids: Iterable[str]
) -> dict[str, DerivedRow]:
    fetched = await conn.execute_fetchall(
        f"SELECT {_DERIVED_COLUMNS} FROM derived_messages WHERE channel_id = ? AND message_id "
        "IN "
        "(SELECT value FROM json_each(?))",
        (channel_id, _ids(message_ids)),
    )
    rows = [DerivedRow(*row) for row in fetched]
    return {row.message_id: row for row in rows}


async def replies_to(conn: Connection, channel_id: str, message_ids: Iterable[str]) -> set[str]:
    """Messages of a channel whose derived class was read with one of ``message_ids`` as
    the message they reply to."""
    fetched = await conn.execute_fetchall(
        "SELECT message_id FROM derived_messages WHERE channel_id = ? AND parent_id IN "
        "(SELECT value FROM json_each(?))",
        (channel_id, _ids(message_ids)),
    )
    return {str(message_id) for (message_id,) in fetched}


async def group_members(
    conn: Connection, channel_id: str, cls: str, group_keys: Iterable[str]
) -> dict[str, list[DerivedRow]]:
    """Members of each group of a class, chronological (``created_us``, then message id)."""
    members: dict[str, list[DerivedRow]] = {key: [] for key in group_keys}
    if not members:
        return members
    fetched = await conn.execute_fetchall(
        f"SELECT {_DERIVED_COLUMNS} FROM derived_messages WHERE channel_id = ? AND class = ? "
        "AND group_key IN (SELECT value FROM json_each(?)) "
        "ORDER BY group_key, created_us, message_id",
        (channel_id, cls, _ids(members)),
    )
    for row in fetched:
        member = DerivedRow(*row)
        assert member.group_key is not None  # selected by group key
        members[member.group_key].append(member)
    return members


async def count_before(
    conn: Connection,
    channel_id: str,
    cls: str,
    group_key: str,
    created_us: int,
    message_id: str,
) -> int:
    """How many members of a group come before ``(created_us, message_id)``."""
    (count,) = await one_row(
        conn,
        "SELECT count(*) FROM derived_messages WHERE channel_id = ? AND class = ? "
        "AND group_key = ? AND (created_us, message_id) < (?, ?)",
        (channel_id, cls, group_key, created_us, message_id),
    )
    return int(count)


async def group_members_from(
    conn: Connection, channel_id: str, cls: str, group_key: str, offset: int
) -> list[DerivedRow]:
    """A group's members in order, skipping the first ``offset``."""
    fetched = await conn.execute_fetchall(
        f"SELECT {_DERIVED_COLUMNS} FROM derived_messages WHERE channel_id = ? AND class = ? "
        "AND group_key = ? ORDER BY created_us, message_id LIMIT -1 OFFSET ?",
        (channel_id, cls, group_key, offset),
    )
    return [DerivedRow(*row) for row in fetched]


async def write_derived(
    conn: Connection,
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
        placeholders = ", ".join("?" * len(DERIVED_FIELDS))
        await conn.executemany(
            f"INSERT INTO derived_messages ({_DERIVED_COLUMNS}) VALUES ({placeholders}) "
            f"ON CONFLICT (channel_id, message_id) DO UPDATE SET {_DERIVED_UPDATES}",
            [_derived_values(r) for r in upserts],
        )


@dataclass(frozen=True, slots=True)
class StoredBlockRef:
    seq: int
    id: str
    group_key: str
    dirty: bool


async def blocks_in_groups(
    conn: Connection, channel_id: str, group_keys: Iterable[str]
) -> list[StoredBlockRef]:
    fetched = await conn.execute_fetchall(
        "SELECT seq, id, group_key, dirty FROM recall_blocks WHERE channel_id = ? AND "
        "group_key IN "
        "(SELECT value FROM json_each(?))",
        (channel_id, _ids(group_keys)),
    )
    return [
        StoredBlockRef(seq, block_id, group_key, bool(is_dirty))
        for seq, block_id, group_key, is_dirty in fetched
    ]


async def blocks_in_group_range(
    conn: Connection, channel_id: str, low: str, high: str
) -> list[StoredBlockRef]:
    """Blocks of a channel whose group key lies in ``[low, high)``."""
    fetched = await conn.execute_fetchall(
        "SELECT seq, id, group_key, dirty FROM recall_blocks WHERE channel_id = ? "
        "AND group_key >= ? AND group_key < ?",
        (channel_id, low, high),
    )
    return [
        StoredBlockRef(seq, block_id, key, bool(is_dirty))
        for seq, block_id, key, is_dirty in fetched
    ]


async def delete_blocks(conn: Connection, seqs: Sequence[int]) -> None:
    """Delete blocks with their provenance and index rows."""
    if not seqs:
        return
    await conn.dialect.unindex_block_text(conn, seqs)
    await conn.execute(
        "DELETE FROM recall_blocks WHERE seq IN (SELECT CAST(value AS INTEGER) FROM json_each(?))",
        (json.dumps(list(seqs)),),
    )


def _block_row(seq: int, block: RecallBlock) -> BlockRow:
    return BlockRow(
        seq=seq,
        id=block.id,
        source_kind=block.source_kind,
        channel_id=block.channel_id,
        group_key=block.group_key,
        kind=block.kind,
        event_type=block.event_type,
        text=block.text,
        from_us=block.from_us,
        to_us=block.to_us,
        sparse=int(block.sparse),
        score=block.score,
        generated_us=block.generated_us,
        dirty=int(block.dirty),
        processor=block.processor,
        cut_text=block.cut_text,
        author=block.author,
        trust_authors=json.dumps(list(block.trust_authors)),
        sources=json.dumps([[x.message_id, x.content_hash] for x in block.sources]),
        origin=block.origin,
        answers=block.answers,
    )


async def insert_blocks(conn: Connection, blocks: Sequence[RecallBlock]) -> None:
    if not blocks:
        return
    (next_seq,) = await one_row(conn, "SELECT coalesce(max(seq), 0) + 1 FROM recall_blocks")
    first = int(next_seq)
    rows: list[BlockRow] = []
    sources: list[tuple[Any, ...]] = []
    fts: list[tuple[int, str]] = []
    for offset, block in enumerate(blocks):
        seq = first + offset
        rows.append(_block_row(seq, block))
        sources += [
            (seq, position, block.channel_id, s.message_id, s.content_hash)
            for position, s in enumerate(block.sources)
        ]
        if block.sparse:
            fts.append((seq, block.text))
    placeholders = ", ".join("?" * len(BlockRow._fields))
    await conn.executemany(
        f"INSERT INTO recall_blocks ({BLOCK_COLUMNS}) VALUES ({placeholders})",
        rows,
    )
    await conn.executemany(
        "INSERT INTO block_sources (block_seq, position, channel_id, message_id, content_hash) "
        "VALUES (?, ?, ?, ?, ?)",
        sources,
    )
    await conn.dialect.index_block_text(conn, fts)


async def clear_block_dirty(conn: Connection, seqs: Sequence[int]) -> None:
    if seqs:
        await conn.execute(
            "UPDATE recall_blocks SET dirty = 0 WHERE seq IN "
            "(SELECT CAST(value AS INTEGER) FROM json_each(?))",
            (json.dumps(list(seqs)),),
        )


async def mark_blocks_citing_dirty(
    conn: Connection, channel_id: str, message_ids: Iterable[str]
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


async def mark_everything_dirty(conn: Connection, now_us: int) -> None:
    """Queue every message with a current version or derived data, and dirty every block
    (nothing derived is served as fresh until derived again)."""
    await dirty.mark_all(conn, now_us)
    await conn.execute("UPDATE recall_blocks SET dirty = 1")


def block_from_row(row: Iterable[Any]) -> RecallBlock:
    """Build a :class:`RecallBlock` from a row selected with :data:`BLOCK_COLUMNS`."""
    r = BlockRow._make(row)
    return RecallBlock(
        id=r.id,
        source_kind=r.source_kind,
        channel_id=r.channel_id,
        group_key=r.group_key,
        kind=r.kind,
        event_type=r.event_type,
        text=r.text,
        from_us=r.from_us,
        to_us=r.to_us,
        sparse=bool(r.sparse),
        score=r.score,
        generated_us=r.generated_us,
        dirty=bool(r.dirty),
        processor=r.processor,
        sources=tuple(BlockSource(m, h) for m, h in json.loads(r.sources)),
        origin=r.origin,
        cut_text=r.cut_text,
        author=r.author,
        trust_authors=tuple(json.loads(r.trust_authors)),
        answers=r.answers,
    )


async def blocks_overlapping(
    conn: Connection, channel_id: str, from_us: int, to_us: int
) -> list[RecallBlock]:
    """Blocks of a channel whose source window overlaps ``[from_us, to_us]``, chronological."""
    fetched = await conn.execute_fetchall(
        f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE channel_id = ? AND to_us >= ? "
        "AND from_us <= ? ORDER BY from_us, to_us, seq",
        (channel_id, from_us, to_us),
    )
    return [block_from_row(row) for row in fetched]


async def all_blocks(conn: Connection) -> list[RecallBlock]:
    """Every block, ordered by id (for tests and regeneration checks)."""
    fetched = await conn.execute_fetchall(f"SELECT {BLOCK_COLUMNS} FROM recall_blocks ORDER BY id")
    return [block_from_row(row) for row in fetched]


async def search_blocks(
    conn: Connection,
    channel_id: str,
    match: Sequence[str] | None,
    from_us: int,
    limit: int,
    until_us: int | None = None,
) -> list[RecallBlock]:
    """Fresh sparse blocks of a channel holding every word of ``match`` (any, when None),
    ending in ``[from_us, until_us]``, newest first."""
    conditions = ["channel_id = ?", "sparse = 1", "dirty = 0", "to_us >= ?"]
    params: list[Any] = [channel_id, from_us]
    if until_us is not None:
        conditions.append("to_us <= ?")
        params.append(until_us)
    if match is not None:
        conditions.append(conn.dialect.block_match())
        params.append(conn.dialect.match_parameter(match))
    params.append(limit)
    fetched = await conn.execute_fetchall(
        f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE {' AND '.join(conditions)} "
        "ORDER BY to_us DESC, seq DESC LIMIT ?",
        params,
    )
    return [block_from_row(row) for row in fetched]


async def block_by_id(conn: Connection, block_id: str) -> RecallBlock | None:
    row = await first_row(
        conn, f"SELECT {BLOCK_COLUMNS} FROM recall_blocks WHERE id = ?", (block_id,)
    )
    return None if row is None else block_from_row(row)
