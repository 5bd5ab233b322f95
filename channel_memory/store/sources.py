"""SQL over source message versions, channels and forgets."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from channel_memory.kernel.models import (
    HARD_EVENT_BLOCK,
    Attachment,
    MessageKey,
    MessageState,
    Origin,
    SourceVersion,
    source_handle,
)
from channel_memory.store.connection import Connection
from channel_memory.store.rows import columns, one_row
from channel_memory.store.terms import fold, phrases


class VersionRow(NamedTuple):
    """A ``source_messages`` row as stored (flags as integers, lists and maps as JSON)."""

    id: int
    source_kind: str
    channel_id: str
    message_id: str
    observed_seq: int
    content_hash: str
    content: str
    deleted: int
    author_id: str | None
    author_name: str | None
    author_kind: str | None
    origin: Origin
    created_us: int
    edited_us: int | None
    deleted_us: int | None
    event_us: int
    observed_us: int
    is_current: int
    superseded_by: int | None
    reply_to: str | None
    thread_id: str | None
    attachments: str | None
    tags: str | None
    meta: str | None
    forgotten_us: int | None


VERSION_COLUMNS = columns(VersionRow._fields)
"""The SELECT list that :func:`version_from_row` reads."""


def _dump(value: Sequence[Any]) -> str | None:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False) if value else None


def _version_row(v: SourceVersion) -> VersionRow:
    return VersionRow(
        id=v.id,
        source_kind=v.key.source_kind,
        channel_id=v.key.channel_id,
        message_id=v.key.message_id,
        observed_seq=v.observed_seq,
        content_hash=v.content_hash,
        content=v.content,
        deleted=int(v.deleted),
        author_id=v.author_id,
        author_name=v.author_name,
        author_kind=v.author_kind,
        origin=v.origin,
        created_us=v.created_us,
        edited_us=v.edited_us,
        deleted_us=v.deleted_us,
        event_us=v.event_us,
        observed_us=v.observed_us,
        is_current=int(v.is_current),
        superseded_by=v.superseded_by,
        reply_to=v.reply_to,
        thread_id=v.thread_id,
        attachments=_dump([_attachment_dict(a) for a in v.attachments]),
        tags=_dump(list(v.tags)),
        meta=json.dumps(dict(v.meta), separators=(",", ":"), ensure_ascii=False)
        if v.meta
        else None,
        forgotten_us=v.forgotten_us,
    )


def _attachment_dict(attachment: Attachment) -> dict[str, Any]:
    return {k: getattr(attachment, k) for k in attachment.__slots__ if getattr(attachment, k)}


def version_from_row(row: Iterable[Any]) -> SourceVersion:
    """Build a :class:`SourceVersion` from a row selected with :data:`VERSION_COLUMNS`."""
    r = VersionRow._make(row)
    return SourceVersion(
        id=r.id,
        key=MessageKey(r.source_kind, r.channel_id, r.message_id),
        observed_seq=r.observed_seq,
        content_hash=r.content_hash,
        content=r.content,
        deleted=bool(r.deleted),
        author_id=r.author_id,
        author_name=r.author_name,
        author_kind=r.author_kind,
        origin=r.origin,
        created_us=r.created_us,
        edited_us=r.edited_us,
        deleted_us=r.deleted_us,
        event_us=r.event_us,
        observed_us=r.observed_us,
        is_current=bool(r.is_current),
        superseded_by=r.superseded_by,
        reply_to=r.reply_to,
        thread_id=r.thread_id,
        attachments=tuple(Attachment(**a) for a in json.loads(r.attachments))
        if r.attachments
        else (),
        tags=tuple(json.loads(r.tags)) if r.tags else (),
        meta=tuple(sorted(json.loads(r.meta).items())) if r.meta else (),
        forgotten_us=r.forgotten_us,
    )


async def channel_kinds(conn: Connection, channel_ids: Iterable[str]) -> dict[str, str]:
    """The registered source kind of each known channel among ``channel_ids``."""
    ids = sorted(set(channel_ids))
    if not ids:
        return {}
    fetched = list(
        await conn.execute_fetchall(
            "SELECT channel_id, source_kind FROM channels "
            "WHERE channel_id IN (SELECT value FROM json_each(?))",
            (json.dumps(ids),),
        )
    )
    return {channel_id: source_kind for channel_id, source_kind in fetched}


async def register_channels(conn: Connection, channels: dict[str, str], now_us: int) -> None:
    """Record new channels with their source kind (known ones are left as they are)."""
    await conn.executemany(
        "INSERT INTO channels (channel_id, source_kind, first_seen_us) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        [(channel, kind, now_us) for channel, kind in sorted(channels.items())],
    )


async def message_states(
    conn: Connection, keys: Iterable[MessageKey]
) -> dict[MessageKey, MessageState]:
    """Every stored version (and forgotten flag) of each message in ``keys``."""
    wanted = sorted(set(keys))
    states = {key: MessageState(key) for key in wanted}
    by_channel: dict[tuple[str, str], list[str]] = {}
    for key in wanted:
        by_channel.setdefault((key.source_kind, key.channel_id), []).append(key.message_id)
    # One query per channel with the ids as a JSON array: several times faster than
    # matching (kind, channel, id) row values against the whole batch.
    for (kind, channel), message_ids in by_channel.items():
        ids = json.dumps(message_ids)
        fetched = list(
            await conn.execute_fetchall(
                f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE source_kind = ? AND "
                "channel_id = ? AND message_id IN (SELECT value FROM json_each(?)) "
                "ORDER BY message_id, observed_seq",
                (kind, channel, ids),
            )
        )
        for row in fetched:
            version = version_from_row(row)
            states[version.key].versions.append(version)
        fetched = list(
            await conn.execute_fetchall(
                "SELECT message_id FROM forgotten_messages WHERE source_kind = ? AND channel_id "
                "= ? "
                "AND message_id IN (SELECT value FROM json_each(?))",
                (kind, channel, ids),
            )
        )
        for (message_id,) in fetched:
            states[MessageKey(kind, channel, message_id)].forgotten = True
    return states


async def messages_by_author(conn: Connection, channel_id: str, author_id: str) -> list[MessageKey]:
    """Identities of the messages in a channel with any version by ``author_id``."""
    fetched = list(
        await conn.execute_fetchall(
            "SELECT DISTINCT source_kind, channel_id, message_id FROM source_messages "
            "WHERE channel_id = ? AND author_id = ?",
            (channel_id, author_id),
        )
    )
    return [
        MessageKey(source_kind, channel, message_id) for source_kind, channel, message_id in fetched
    ]


AUTHOR_MATCHES = (
    "(instr(cm_fold(coalesce(author_name, '')), ?) > 0 "
    "OR instr(cm_fold(coalesce(author_id, '')), ?) > 0)"
)
"""A substring of the author's name or id, both folded as search folds words (case,
diacritics and width aside: ``eric`` finds ``Éric``, ``タナカ`` finds ``ﾀﾅｶ``); its
parameters are ``author_parameters(author)``."""


_FRESH_HARD_EVENT_SOURCES = (
    "block_sources s JOIN recall_blocks b ON b.seq = s.block_seq AND b.kind = ? AND b.dirty = 0"
)
"""The versions fresh hard-event blocks cover, as the feed serves them (``s``), with their
blocks (``b``); its parameter: ``HARD_EVENT_BLOCK``. The browse's filter and its types read
the same rows."""
_HARD_EVENT = (
    f"EXISTS (SELECT 1 FROM {_FRESH_HARD_EVENT_SOURCES} "
    "WHERE s.channel_id = source_messages.channel_id "
    "AND s.message_id = source_messages.message_id "
    "AND s.content_hash = source_messages.content_hash)"
)
"""A message version a fresh hard-event block covers (its parameter: ``HARD_EVENT_BLOCK``)."""


ExactKey = tuple[str, str, str]
"""A version's exact key across channels: ``(channel_id, message_id, content_hash)`` (ids and
client-given hashes repeat across channels)."""


def exact_key(version: SourceVersion) -> ExactKey:
    return (version.key.channel_id, version.key.message_id, version.content_hash)


@dataclass(frozen=True, slots=True)
class Decided:
    """What the fresh hard-event blocks say of a version: the decision covering it, and the
    decisions by reply that decide on it."""

    event_type: str | None
    """The decision type of the fresh hard-event block covering it, None when none does."""
    answers: str | None
    """A decision by reply: the handle of the proposal it decides on."""
    decided_by: tuple[str, ...] = ()
    """The handles of the decisions by reply that decide on it ("yes, go", "denied, too
    correlated"): the newest :data:`DECIDED_BY_SHOWN`, oldest first."""
    excerpts: tuple[str, ...] = ()
    """A hard event longer than the feed shows whole: what its block serves of it, longest
    first (its decision lines, each run of the rest marked elided; then its decision
    clauses, ``…`` where text is left out), for a result that cannot hold the message."""

    def fields(self) -> dict[str, Any]:
        """The fields a tool result adds to the message: ``decision``; ``answers`` for a
        decision by reply ("approved, 200 max" names what it approved); ``decided_by`` for
        a message decided on by reply (a proposal names its verdicts, which often repeat
        none of its words: a search for the proposal finds what was decided)."""
        out: dict[str, Any] = {}
        if self.event_type:
            out["decision"] = self.event_type
        if self.answers:
            out["answers"] = self.answers
        if self.decided_by:
            out["decided_by"] = list(self.decided_by)
        return out


DECIDED_BY_SHOWN = 4
"""Verdicts a message names at most (a proposal is rarely decided on more than twice)."""


async def verdicts(conn: Connection, handles: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Source handle -> the handles of the fresh hard events that decide on it by reply
    (their block ``answers`` it): the newest :data:`DECIDED_BY_SHOWN` (the one in force
    among them, as the feed's ``decided:`` names it), oldest first; one query, by the
    index of blocks by what they answer."""
    wanted = sorted(set(handles))
    if not wanted:
        return {}
    fetched = await conn.execute_fetchall(
        f"SELECT b.answers, s.channel_id, s.message_id FROM {_FRESH_HARD_EVENT_SOURCES} "
        "WHERE b.answers IN (SELECT value FROM json_each(?)) "
        "ORDER BY b.answers, b.from_us DESC, s.message_id DESC",
        (HARD_EVENT_BLOCK, json.dumps(wanted)),
    )
    out: dict[str, list[str]] = {}
    for answers, channel_id, message_id in fetched:
        found = out.setdefault(str(answers), [])
        if len(found) < DECIDED_BY_SHOWN:
            found.append(source_handle(str(channel_id), str(message_id)))
    return {handle: tuple(reversed(found)) for handle, found in out.items()}


async def _covering(conn: Connection, versions: Sequence[SourceVersion], columns: str) -> list[Any]:
    """``columns`` of the fresh hard-event blocks covering these exact versions, after each
    version's exact key (channel, message, hash); one query."""
    wanted = sorted({exact_key(v) for v in versions})
    if not wanted:
        return []
    return list(
        await conn.execute_fetchall(
            f"SELECT s.channel_id, s.message_id, s.content_hash, {columns} "
            f"FROM {_FRESH_HARD_EVENT_SOURCES} "
            "WHERE (s.channel_id, s.message_id, s.content_hash) IN "
            "(SELECT value->>0, value->>1, value->>2 FROM json_each(?))",
            (HARD_EVENT_BLOCK, json.dumps(wanted)),
        )
    )


async def hard_event_keys(conn: Connection, versions: Sequence[SourceVersion]) -> set[ExactKey]:
    """The exact keys of those of these versions a fresh hard-event block covers (what a
    feed shows as decisions); one query."""
    rows = await _covering(conn, versions, "b.event_type")
    return {(str(r[0]), str(r[1]), str(r[2])) for r in rows if r[3]}


async def decisions_of(
    conn: Connection, versions: Iterable[SourceVersion]
) -> dict[ExactKey, Decided]:
    """What the fresh hard-event blocks say of each of these exact versions (see
    :class:`Decided`, without its excerpts), for those a block covers or a decision by
    reply decides on, by :func:`exact_key`; two queries."""
    chosen = list(versions)
    out = {
        (str(r[0]), str(r[1]), str(r[2])): Decided(str(r[3]), str(r[4]) if r[4] else None)
        for r in await _covering(conn, chosen, "b.event_type, b.answers")
        if r[3]
    }
    decided = await verdicts(conn, (v.key.handle for v in chosen))
    for version in chosen:
        by = decided.get(version.key.handle)
        if by:
            key = exact_key(version)
            out[key] = replace(out.get(key, Decided(None, None)), decided_by=by)
    return out


async def decision_excerpts(
    conn: Connection, versions: Sequence[SourceVersion]
) -> dict[ExactKey, tuple[str, ...]]:
    """For those of these versions a fresh hard-event block covers, what the block serves
    of them shorter than their content, longest first (see ``Decided.excerpts``); one
    query, made only for decisions too big for a tool result."""
    lengths = {exact_key(v): len(v.content) for v in versions}
    out: dict[ExactKey, tuple[str, ...]] = {}
    for row in await _covering(conn, versions, "b.event_type, b.text, b.cut_text"):
        key = (str(row[0]), str(row[1]), str(row[2]))
        shorter, limit = [], lengths.get(key, 0)
        for text in (row[4], row[5]):
            if row[3] and text and len(str(text)) < limit:
                shorter.append(str(text))
                limit = len(str(text))
        if shorter:
            out[key] = tuple(shorter)
    return out


def author_parameters(author: str) -> list[str]:
    """The parameters of ``AUTHOR_MATCHES``: the folded name, once for the name and once
    for the id."""
    return [fold(author)] * 2


async def next_version_id(conn: Connection) -> int:
    (next_id,) = await one_row(conn, "SELECT coalesce(max(id), 0) + 1 FROM source_messages")
    return int(next_id)


async def write_versions(
    conn: Connection,
    *,
    inserted: Sequence[SourceVersion],
    updated: Sequence[SourceVersion],
    fts_removed: Sequence[SourceVersion],
    fts_added: Sequence[SourceVersion],
) -> None:
    """Insert and update version rows and keep the full-text index in step with them."""
    await conn.dialect.index_source_text(conn, [(v.id, v.content) for v in fts_removed], [])
    if inserted:
        placeholders = ", ".join("?" * len(VersionRow._fields))
        await conn.executemany(
            f"INSERT INTO source_messages ({VERSION_COLUMNS}) VALUES ({placeholders})",
            [_version_row(v) for v in inserted],
        )
    if updated:
        assignments = ", ".join(f"{c} = :{c}" for c in VersionRow._fields if c != "id")
        await conn.executemany(
            f"UPDATE source_messages SET {assignments} WHERE id = :id",
            [_version_row(v)._asdict() for v in updated],
        )
    await conn.dialect.index_source_text(conn, [], [(v.id, v.content) for v in fts_added])


async def record_forgets(
    conn: Connection,
    keys: Sequence[MessageKey],
    ledger: Sequence[tuple[str, str | None, str | None, str | None, int]],
    now_us: int,
) -> None:
    """Remember forgotten identities, write the content-free ledger, owe an erasure."""
    await conn.executemany(
        "INSERT INTO forgotten_messages (source_kind, channel_id, message_id, "
        "forgotten_us) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [(*key, now_us) for key in keys],
    )
    await conn.executemany(
        "INSERT INTO forget_ledger (channel_id, message_id, author_id, reason, "
        "versions_forgotten, forgotten_us) VALUES (?, ?, ?, ?, ?, ?)",
        [(*entry, now_us) for entry in ledger],
    )
    if ledger:
        await conn.execute("INSERT INTO pending_erasures (requested_us) VALUES (?)", (now_us,))


MESSAGE_NOT_DELETED = (
    "NOT EXISTS (SELECT 1 FROM source_messages AS tomb WHERE "
    "tomb.source_kind = source_messages.source_kind "
    "AND tomb.channel_id = source_messages.channel_id "
    "AND tomb.message_id = source_messages.message_id AND tomb.is_current = 1 AND tomb.deleted = 1)"
)
"""The row's message is not deleted: its current version is not a deletion.

A deletion hides the content of every version of the message from readers (only
its tombstone's metadata stays); forget is what erases the bytes."""


def without_content(version: SourceVersion) -> SourceVersion:
    """A deleted version as readers see it: its metadata, never content."""
    return replace(version, content="") if version.deleted and version.content else version


async def versions_of(
    conn: Connection,
    channel_id: str,
    message_ids: Sequence[str],
    *,
    include_history: bool,
) -> list[SourceVersion]:
    """Readable versions of the named messages, by message then ``observed_seq``.

    Without history: the current version of each message that is neither
    deleted nor forgotten. With history: every version of each message that is
    neither deleted nor forgotten. A deleted message has no readable version
    (:func:`tombstones_of` gives its metadata); forgotten content is never returned.
    """
    condition = (
        f"forgotten_us IS NULL AND {MESSAGE_NOT_DELETED}"
        if include_history
        else "is_current = 1 AND deleted = 0 AND forgotten_us IS NULL"
    )
    # The channel's source kind lets the (kind, channel, message) index serve the lookup.
    fetched = await conn.execute_fetchall(
        f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE source_kind = "
        "(SELECT source_kind FROM channels WHERE channel_id = ?1) AND channel_id = ?1 "
        f"AND message_id IN (SELECT value FROM json_each(?2)) AND {condition} "
        "ORDER BY message_id, observed_seq",
        (channel_id, json.dumps(list(message_ids))),
    )
    return [without_content(version_from_row(row)) for row in fetched]


async def tombstones_of(
    conn: Connection, channel_id: str, message_ids: Sequence[str]
) -> list[SourceVersion]:
    """The tombstone of each named message that is deleted (and not forgotten): its
    current version, a deletion, with empty content, by message id."""
    fetched = await conn.execute_fetchall(
        f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE source_kind = "
        "(SELECT source_kind FROM channels WHERE channel_id = ?1) AND channel_id = ?1 "
        "AND message_id IN (SELECT value FROM json_each(?2)) AND is_current = 1 AND deleted = 1 "
        "AND forgotten_us IS NULL ORDER BY message_id",
        (channel_id, json.dumps(list(message_ids))),
    )
    return [without_content(version_from_row(row)) for row in fetched]


async def deleted_messages(
    conn: Connection, channel_id: str, message_ids: Iterable[str]
) -> set[str]:
    """Which of ``message_ids`` are deleted (their current version is a deletion)."""
    fetched = await conn.execute_fetchall(
        "SELECT message_id FROM source_messages WHERE source_kind = "
        "(SELECT source_kind FROM channels WHERE channel_id = ?1) AND channel_id = ?1 "
        "AND message_id IN (SELECT value FROM json_each(?2)) AND is_current = 1 AND deleted = 1",
        (channel_id, json.dumps(sorted(set(message_ids)))),
    )
    return {message_id for (message_id,) in fetched}


async def current_versions(
    conn: Connection, source_kind: str, channel_id: str, message_ids: Iterable[str]
) -> dict[str, SourceVersion]:
    """The current version of each message (deleted ones included; forgotten ones never)."""
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE source_kind = ? AND channel_id "
            "= ? "
            "AND message_id IN (SELECT value FROM json_each(?)) AND is_current = 1 "
            "AND forgotten_us IS NULL",
            (source_kind, channel_id, json.dumps(sorted(set(message_ids)))),
        )
    )
    versions = [version_from_row(row) for row in fetched]
    return {v.key.message_id: v for v in versions}


async def exact_versions(
    conn: Connection,
    source_kind: str,
    channel_id: str,
    pairs: Iterable[tuple[str, str]],
) -> dict[tuple[str, str], SourceVersion]:
    """Versions by exact ``(message_id, content_hash)``, current or superseded, never forgotten."""
    wanted = sorted(set(pairs))
    if not wanted:
        return {}
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE source_kind = ? AND "
            "channel_id = ? AND (message_id, content_hash) IN "
            "(SELECT value->>0, value->>1 FROM json_each(?)) AND forgotten_us IS NULL",
            (source_kind, channel_id, json.dumps(wanted)),
        )
    )
    versions = [version_from_row(row) for row in fetched]
    return {(v.key.message_id, v.content_hash): v for v in versions}


async def current_page(conn: Connection, after_id: int, limit: int) -> list[SourceVersion]:
    """Current, readable versions of every channel in row order, after ``after_id``."""
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE id > ? AND is_current = 1 "
            "AND deleted = 0 AND forgotten_us IS NULL ORDER BY id LIMIT ?",
            (after_id, limit),
        )
    )
    return [version_from_row(row) for row in fetched]


async def count_current_in_window(
    conn: Connection, channel_id: str, from_us: int, to_us: int
) -> int:
    """Current, readable messages of a channel created within ``[from_us, to_us]``."""
    (count,) = await one_row(
        conn,
        "SELECT count(*) FROM source_messages WHERE channel_id = ? AND is_current = 1 "
        "AND created_us BETWEEN ? AND ? AND deleted = 0 AND forgotten_us IS NULL",
        (channel_id, from_us, to_us),
    )
    return int(count)


async def search_current(
    conn: Connection,
    channel_id: str,
    match: Sequence[str] | None,
    author: str | None,
    from_us: int,
    limit: int,
    until_us: int | None = None,
) -> list[SourceVersion]:
    """Current readable messages holding every word of ``match`` (any, when None) by
    ``author``, newest first.

    ``author`` is a substring of the author's name or id (``AUTHOR_MATCHES``).
    """
    conditions = [
        "channel_id = ?",
        "is_current = 1",
        "deleted = 0",
        "forgotten_us IS NULL",
        "created_us >= ?",
    ]
    params: list[Any] = [channel_id, from_us]
    if until_us is not None:
        conditions.append("created_us <= ?")
        params.append(until_us)
    if match is not None:
        conditions.append(conn.dialect.source_match())
        params.append(conn.dialect.match_parameter(match))
    if author:
        conditions.append(AUTHOR_MATCHES)
        params += author_parameters(author)
    params.append(limit)
    fetched = list(
        await conn.execute_fetchall(
            f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE {' AND '.join(conditions)} "
            "ORDER BY created_us DESC, id DESC LIMIT ?",
            params,
        )
    )
    return [version_from_row(row) for row in fetched]


async def readable_by_ids(
    conn: Connection,
    channel_id: str,
    ids: Sequence[int],
    author: str | None,
    from_us: int,
) -> list[SourceVersion]:
    """The versions among ``ids`` a reader may see: the channel's current, readable,
    not deleted messages created at or after ``from_us``, by ``author`` when given."""
    if not ids:
        return []
    # the unary + keeps the planner on the id lookups: an index on the channel would
    # read every message of it
    conditions = [
        "id IN (SELECT CAST(value AS INTEGER) FROM json_each(?))",
        "+channel_id = ?",
        "is_current = 1",
        "deleted = 0",
        "forgotten_us IS NULL",
        "+created_us >= ?",
        MESSAGE_NOT_DELETED,
    ]
    params: list[Any] = [json.dumps(list(ids)), channel_id, from_us]
    if author:
        conditions.append(AUTHOR_MATCHES)
        params += author_parameters(author)
    fetched = await conn.execute_fetchall(
        f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE {' AND '.join(conditions)}", params
    )
    return [version_from_row(row) for row in fetched]


def literal_match(query: str) -> tuple[str, ...] | None:
    """The words of ``query``, to be matched literally, every one (no search syntax):
    phrases of index terms (see ``terms.phrases``).

    Returns None when the query has no words (the caller decides what that means).
    """
    return phrases(query) or None


async def browse_current(
    conn: Connection,
    channel_id: str,
    after: tuple[int, int] | None,
    before: tuple[int, int] | None,
    author: str | None,
    limit: int,
    *,
    newest_first: bool = False,
    hard_events: bool = False,
) -> list[SourceVersion]:
    """Readable current messages of a channel strictly between two ``(created_us, id)``
    positions, at most ``limit``: the oldest of them in time order, or with
    ``newest_first`` the newest of them, newest first. ``author`` is a case-insensitive
    substring of the author's name or id; ``hard_events`` keeps the messages whose current
    version a hard-event block covers (those the feed shows as decisions, or names or
    counts among its omitted hard events)."""
    conditions = ["channel_id = ?", "is_current = 1", "deleted = 0"]
    params: list[Any] = [channel_id]
    if after is not None:
        conditions.append("(created_us, id) > (?, ?)")
        params += list(after)
    if before is not None:
        conditions.append("(created_us, id) < (?, ?)")
        params += list(before)
    if author:
        conditions.append(AUTHOR_MATCHES)
        params += author_parameters(author)
    if hard_events:
        conditions.append(_HARD_EVENT)
        params.append(HARD_EVENT_BLOCK)
    params.append(limit)
    order = "created_us DESC, id DESC" if newest_first else "created_us, id"
    fetched = await conn.execute_fetchall(
        f"SELECT {VERSION_COLUMNS} FROM source_messages WHERE {' AND '.join(conditions)} "
        f"ORDER BY {order} LIMIT ?",
        params,
    )
    return [version_from_row(row) for row in fetched]


async def version_status(
    conn: Connection, channel_id: str, pairs: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], tuple[bool, bool]]:
    """``(is_current, deleted)`` of exact versions that still exist (not forgotten)."""
    wanted = sorted(set(pairs))
    if not wanted:
        return {}
    fetched = await conn.execute_fetchall(
        "SELECT message_id, content_hash, is_current, deleted FROM source_messages "
        "WHERE source_kind = (SELECT source_kind FROM channels WHERE channel_id = ?1) "
        "AND channel_id = ?1 AND (message_id, content_hash) IN "
        "(SELECT value->>0, value->>1 FROM json_each(?2)) AND forgotten_us IS NULL",
        (channel_id, json.dumps(wanted)),
    )
    return {
        (message_id, content_hash): (bool(is_current), bool(deleted))
        for message_id, content_hash, is_current, deleted in fetched
    }
