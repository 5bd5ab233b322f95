"""Consumption: which message versions each consumer has handled.

A *read* names the exact versions ``(channel_id, message_id, content_hash)`` one
answer (a feed, a tool result) showed *complete* to one consumer. The consumer
settles it after its turn: ``handled`` adds those versions to its consumed set
(the ledger), ``failed`` leaves them pending. Partial content is never part of a
read, so it is never consumed; an edit is a new version, so it is unconsumed
until a handled read shows it.

A feed's read also names the versions it showed only *in part* (``whole = 0``): what a
summary stands for (a rollup, a collapse block, one counted in a note), a hard event or a
message shown cut. Handled, they join the ledger as *summarized*: the messages stay
unconsumed (not in :func:`consumed`) until shown complete, but a summary whose every
version was handled (:func:`summarized`) is not new, and under ``unconsumed=only`` nothing
a handled read showed is served again (ADR 0068). A version shown whole and in part counts
as whole; one summarized and later shown whole becomes whole.

Read ids are ``r_`` + 22 url-safe characters: an HMAC, under a secret kept in the
database, of the consumer and the set of versions. The same consumer shown the
same versions gets the same id (so an unchanged feed keeps its bytes and its
``ETag``); recording it again re-opens it for one more settlement. Nobody can
derive another consumer's read id, and settling looks a read up by id *and*
consumer, so a foreign id is indistinguishable from an unknown one.

Bounds (:class:`Limits`): a read lives ``read_ttl_us`` after it was last
recorded, settled or not (later settlements answer "unknown"); a consumer keeps
at most ``max_reads_per_consumer`` reads (pending ones are kept before settled
ones, newer before older); its ledger keeps its ``max_versions_per_consumer``
most recently recorded versions (a version consumed whole again is recorded anew; one
shown in part again keeps its row, and within a settlement the whole ones come last),
and one that falls out counts as unconsumed again — the bound only ever errs towards
showing a version as new.

Ids and hashes only, never content. Forget and retention remove the rows of the
messages they take (triggers in ``schema.sql``, on every write path, in the
same transaction); a read recorded for a version no longer stored (forgotten
or past retention) simply does not hold it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from channel_memory.kernel.models import source_handle
from channel_memory.store.connection import Connection
from channel_memory.store.rows import columns, first_row, one_row
from channel_memory.store.state import get_state, set_state

Outcome = Literal["handled", "failed"]
OUTCOMES: tuple[Outcome, ...] = ("handled", "failed")
READ_ID_PATTERN = r"^r_[A-Za-z0-9_-]{22}$"
SECRET_KEY = "consumption_secret"
MICROS_PER_HOUR = 3_600_000_000


class Version(NamedTuple):
    """One exact message version: ``(channel_id, message_id, content_hash)``."""

    channel_id: str
    message_id: str
    content_hash: str


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds on what consumption keeps (the ``consumption.*`` settings)."""

    read_ttl_us: int = 24 * MICROS_PER_HOUR
    max_reads_per_consumer: int = 1_000
    max_versions_per_consumer: int = 50_000


@dataclass(frozen=True, slots=True)
class Settled:
    """A settled read: its recorded ``outcome`` (the first settlement's), how many
    versions it held when recorded, and whether this call found it settled already."""

    read_id: str
    outcome: Outcome
    versions: int
    repeated: bool


def read_id_for(
    secret: bytes,
    consumer: str,
    versions: Iterable[Version],
    summarized: Iterable[Version] = (),
) -> str:
    """The id of a read: bound to the consumer and the *sets* of versions (shown whole,
    and summarized, the latter only when there are any), unguessable without ``secret``."""
    whole = {tuple(v) for v in versions}
    parts: list[object] = [consumer, sorted(whole)]
    summary = {tuple(v) for v in summarized} - whole
    if summary:
        parts.append(sorted(summary))
    canonical = json.dumps(parts, separators=(",", ":")).encode()
    digest = hmac.new(secret, canonical, hashlib.sha256).digest()
    return "r_" + base64.urlsafe_b64encode(digest).decode()[:22]


async def _secret(conn: Connection) -> bytes:
    known = await get_state(conn, SECRET_KEY)
    if known is None:
        known = secrets.token_hex(32)
        await set_state(conn, SECRET_KEY, known)
    return bytes.fromhex(known)


def _json(versions: Iterable[Version]) -> str:
    return json.dumps([list(v) for v in versions], separators=(",", ":"))


async def record_read(
    conn: Connection,
    consumer: str,
    versions: Sequence[tuple[str, str, str]],
    now_us: int,
    *,
    summarized: Sequence[tuple[str, str, str]] = (),
    limits: Limits = Limits(),
) -> str:
    """Record that ``consumer`` was shown ``versions`` complete, and ``summarized``
    in a summary; returns the read id.

    Runs inside the caller's write transaction. Only versions still stored (not
    forgotten, not past retention) join the read. Recording the same consumer and
    versions again returns the same id and makes that read pending again, its
    lifetime starting anew. Expired reads (of anyone) and this consumer's reads
    beyond ``limits.max_reads_per_consumer`` are dropped here.
    """
    shown = sorted({Version(*v) for v in versions})
    summary = sorted({Version(*v) for v in summarized} - set(shown))
    read_id = read_id_for(await _secret(conn), consumer, shown, summary)
    await _drop_reads(
        conn,
        "SELECT read_id FROM consumption_reads WHERE created_us < ?",
        (now_us - limits.read_ttl_us,),
    )
    await conn.execute("DELETE FROM consumption_read_versions WHERE read_id = ?", (read_id,))
    for whole, listed in ((1, shown), (0, summary)):
        if not listed:
            continue
        await conn.execute(
            "INSERT INTO consumption_read_versions "
            "(read_id, channel_id, message_id, content_hash, whole) "
            f"SELECT DISTINCT ?, v.value->>0, v.value->>1, v.value->>2, {whole} "
            "FROM json_each(?) AS v "
            "JOIN channels AS c ON c.channel_id = v.value->>0 "
            "JOIN source_messages AS m ON m.source_kind = c.source_kind "
            "AND m.channel_id = v.value->>0 AND m.message_id = v.value->>1 "
            "AND m.content_hash = v.value->>2 AND m.forgotten_us IS NULL",
            (read_id, _json(listed)),
        )
    await conn.execute(
        "INSERT INTO consumption_reads (read_id, consumer, created_us, versions, outcome, "
        "settled_us) VALUES (?1, ?2, ?3, "
        "(SELECT count(*) FROM consumption_read_versions WHERE read_id = ?1 AND whole = 1), "
        "NULL, NULL) "
        "ON CONFLICT (read_id) DO UPDATE SET created_us = excluded.created_us, "
        "versions = excluded.versions, outcome = NULL, settled_us = NULL",
        (read_id, consumer, now_us),
    )
    # keep pending reads before settled ones, newer before older
    await _drop_reads(
        conn,
        "SELECT read_id FROM consumption_reads WHERE consumer = ? "
        "ORDER BY outcome IS NULL DESC, created_us DESC, read_id DESC LIMIT -1 OFFSET ?",
        (consumer, limits.max_reads_per_consumer),
    )
    return read_id


async def _drop_reads(conn: Connection, select: str, params: tuple[str | int, ...]) -> None:
    await conn.execute(f"DELETE FROM consumption_read_versions WHERE read_id IN ({select})", params)
    await conn.execute(f"DELETE FROM consumption_reads WHERE read_id IN ({select})", params)


async def settle(
    conn: Connection,
    consumer: str,
    read_id: str,
    outcome: Outcome,
    now_us: int,
    *,
    limits: Limits = Limits(),
) -> Settled | None:
    """Settle ``consumer``'s read ``read_id``; ``None`` when there is no such read of
    this consumer (unknown, another consumer's, expired or dropped — alike).

    Runs inside the caller's write transaction. The first settlement decides:
    ``handled`` adds the read's versions to the consumer's ledger (then trims it to
    ``limits.max_versions_per_consumer``), ``failed`` consumes nothing. A settled
    read is answered as it was settled (``repeated``), whatever ``outcome`` asks
    now; the caller tells a repeat from a contradiction by comparing outcomes.
    """
    row = await first_row(
        conn,
        "SELECT outcome, versions FROM consumption_reads "
        "WHERE read_id = ? AND consumer = ? AND created_us >= ?",
        (read_id, consumer, now_us - limits.read_ttl_us),
    )
    if row is None:
        return None
    recorded, versions = row
    if recorded is not None:
        assert recorded in OUTCOMES
        return Settled(read_id, recorded, int(versions), repeated=True)
    if outcome == "handled":
        # a version the ledger holds whole stays whole when shown again in part
        await conn.execute(
            "UPDATE consumption_read_versions SET whole = 1 WHERE read_id = ? AND whole = 0 "
            "AND (channel_id, message_id, content_hash) IN (SELECT channel_id, message_id, "
            "content_hash FROM consumed_versions WHERE consumer = ? AND whole = 1)",
            (read_id, consumer),
        )
        # a version consumed whole again is replaced with a new id (the bound keeps the
        # newest); one shown in part again keeps its row, so a summary read turn after
        # turn does not push out what was consumed since
        await conn.execute(
            "DELETE FROM consumed_versions WHERE consumer = ? AND "
            "(channel_id, message_id, content_hash) IN (SELECT channel_id, message_id, "
            "content_hash FROM consumption_read_versions WHERE read_id = ? AND whole = 1)",
            (consumer, read_id),
        )
        # in part first, then whole: within a settlement the whole rows are the newest
        for whole in (0, 1):
            await conn.execute(
                "INSERT INTO consumed_versions "
                "(consumer, channel_id, message_id, content_hash, consumed_us, whole) "
                "SELECT ?1, r.channel_id, r.message_id, r.content_hash, ?2, r.whole "
                "FROM consumption_read_versions AS r WHERE r.read_id = ?3 AND r.whole = ?4 "
                "AND NOT EXISTS (SELECT 1 FROM consumed_versions AS c WHERE c.consumer = ?1 "
                "AND c.channel_id = r.channel_id AND c.message_id = r.message_id "
                "AND c.content_hash = r.content_hash) "
                "ORDER BY r.channel_id, r.message_id, r.content_hash",
                (consumer, now_us, read_id, whole),
            )
        await conn.execute(
            "DELETE FROM consumed_versions WHERE consumer = ?1 AND id IN "
            "(SELECT id FROM consumed_versions WHERE consumer = ?1 "
            "ORDER BY id DESC LIMIT -1 OFFSET ?2)",
            (consumer, limits.max_versions_per_consumer),
        )
    await conn.execute(
        "UPDATE consumption_reads SET outcome = ?, settled_us = ? WHERE read_id = ?",
        (outcome, now_us, read_id),
    )
    # a settled read is remembered for its repeats; its versions are no longer needed
    await conn.execute("DELETE FROM consumption_read_versions WHERE read_id = ?", (read_id,))
    return Settled(read_id, outcome, int(versions), repeated=False)


async def consumed(
    conn: Connection, consumer: str, versions: Iterable[tuple[str, str, str]]
) -> set[Version]:
    """Which of ``versions`` ``consumer`` has consumed, shown whole (read or write
    transaction)."""
    return await _in_ledger(conn, consumer, versions, whole_only=True)


async def summarized(
    conn: Connection, consumer: str, versions: Iterable[tuple[str, str, str]]
) -> set[Version]:
    """Which of ``versions`` ``consumer`` has handled at least in a summary (whole or
    summarized): a summary all of whose versions are among them is no longer new."""
    return await _in_ledger(conn, consumer, versions, whole_only=False)


async def _in_ledger(
    conn: Connection, consumer: str, versions: Iterable[tuple[str, str, str]], whole_only: bool
) -> set[Version]:
    asked = {Version(*v) for v in versions}
    if not asked:
        return set()
    fetched = await conn.execute_fetchall(
        f"SELECT {columns(Version._fields)} FROM consumed_versions "
        "WHERE consumer = ? AND whole >= ? AND (channel_id, message_id, content_hash) IN "
        "(SELECT value->>0, value->>1, value->>2 FROM json_each(?))",
        (consumer, 1 if whole_only else 0, _json(sorted(asked))),
    )
    return {Version._make(row) for row in fetched}


async def shown_blocks(
    conn: Connection, consumer: str, channels: Sequence[str], kind: str, from_us: int, to_us: int
) -> set[str]:
    """The source handles of the window's single-message blocks of ``kind`` (fresh) whose
    version ``consumer`` handled, whole or in part: under ``unconsumed=only`` such blocks
    are not served again, loaded or not (ADR 0068)."""
    fetched = await conn.execute_fetchall(
        "SELECT b.channel_id, s.message_id FROM recall_blocks AS b "
        "JOIN block_sources AS s ON s.block_seq = b.seq "
        "JOIN consumed_versions AS c ON c.consumer = ? AND c.channel_id = s.channel_id "
        "AND c.message_id = s.message_id AND c.content_hash = s.content_hash "
        "WHERE b.channel_id IN (SELECT value FROM json_each(?)) AND b.kind = ? "
        "AND b.from_us BETWEEN ? AND ? AND b.dirty = 0 "
        "AND (SELECT count(*) FROM block_sources AS o WHERE o.block_seq = b.seq) = 1",
        (consumer, json.dumps(sorted(set(channels))), kind, from_us, to_us),
    )
    return {source_handle(channel, message_id) for channel, message_id in fetched}


async def shown_other_blocks(
    conn: Connection, consumer: str, channels: Sequence[str], from_us: int, to_us: int
) -> int:
    """How many of the window's fresh blocks other than hard events show only versions
    ``consumer`` handled, whole or in part: the tiers under ``unconsumed=only`` read past
    them (ADR 0068)."""
    (count,) = await one_row(
        conn,
        "SELECT count(*) FROM recall_blocks AS b "
        "WHERE b.channel_id IN (SELECT value FROM json_each(?)) AND b.kind <> 'hard_event' "
        "AND b.from_us BETWEEN ? AND ? AND b.dirty = 0 AND NOT EXISTS (SELECT 1 FROM "
        "block_sources AS s WHERE s.block_seq = b.seq AND NOT EXISTS (SELECT 1 FROM "
        "consumed_versions AS c WHERE c.consumer = ? AND c.channel_id = s.channel_id "
        "AND c.message_id = s.message_id AND c.content_hash = s.content_hash))",
        (json.dumps(sorted(set(channels))), from_us, to_us, consumer),
    )
    return int(count)


async def ledger_size(conn: Connection, consumer: str) -> int:
    """How many versions ``consumer``'s ledger holds."""
    (count,) = await one_row(
        conn, "SELECT count(*) FROM consumed_versions WHERE consumer = ?", (consumer,)
    )
    return int(count)


async def consumed_in_window(
    conn: Connection,
    consumer: str,
    channels: Sequence[str],
    from_us: int,
    to_us: int,
    *,
    summarized: bool = False,
) -> int:
    """How many readable current messages of the window ``consumer`` has consumed (with
    ``summarized``: or handled in a summary).

    Read through the consumer's ledger (bounded by ``consumption.max_versions_per_consumer``),
    never through the window's history.
    """
    (count,) = await one_row(
        conn,
        "SELECT count(*) FROM consumed_versions AS c JOIN source_messages AS m "
        "ON m.channel_id = c.channel_id AND m.message_id = c.message_id "
        "AND m.content_hash = c.content_hash "
        "WHERE c.consumer = ? AND c.whole >= ? "
        "AND c.channel_id IN (SELECT value FROM json_each(?)) "
        "AND m.is_current = 1 AND m.deleted = 0 AND m.forgotten_us IS NULL "
        "AND m.created_us BETWEEN ? AND ?",
        (consumer, 0 if summarized else 1, json.dumps(sorted(set(channels))), from_us, to_us),
    )
    return int(count)
