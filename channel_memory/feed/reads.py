"""What a feed or tool answer shows a consumer: its trigger, and the read it records.

Every feed answer and ``get_channel_messages`` result names, by ``read_id``, the exact
message versions it showed *complete* to its consumer (the principal's ``agent_id``).
Recording that read is a small write transaction after the read snapshot; the id is
deterministic per consumer and set of versions, so an unchanged answer keeps its bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Annotated, Literal, Protocol

from pydantic import BaseModel, Field

from channel_memory.kernel.config import Settings
from channel_memory.kernel.errors import ApiError
from channel_memory.kernel.models import SourceVersion
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import MICROS_PER_SECOND, Clock
from channel_memory.kernel.wire import StrictModel
from channel_memory.store import StorageError, Store, WriterBusy, sources
from channel_memory.store.connection import Connection
from channel_memory.store.consumption import (
    READ_ID_PATTERN,
    SECRET_KEY,
    Limits,
    Outcome,
    Settled,
    Version,
    read_id_for,
    record_read,
    settle,
)
from channel_memory.store.state import get_state

log = logging.getLogger("channel_memory.feed")

VersionTuple = tuple[str, str, str]
TRIGGER_NOT_FOUND = ("trigger_not_found", "no such trigger message")


class ReadContext(Protocol):
    """What a feed or tool read needs from the face that serves it: the store, the
    settings and the clock. The HTTP application's context offers them, and so does the
    one the MCP server is built with; the stages never import the face itself."""

    @property
    def store(self) -> Store: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def clock(self) -> Clock: ...


def limits(settings: Settings) -> Limits:
    """The store's consumption bounds from the ``consumption.*`` settings."""
    section = settings.consumption
    return Limits(
        read_ttl_us=int(section.read_ttl * MICROS_PER_SECOND),
        max_reads_per_consumer=section.max_reads_per_consumer,
        max_versions_per_consumer=section.max_versions_per_consumer,
    )


def consumer_of(principal: Principal) -> str:
    """Whose consumption a caller records and settles: its token's ``agent_id``."""
    return principal.agent_id


def trigger_not_found() -> ApiError:
    """One answer, byte for byte, for a trigger that is unknown, outside the token's
    channels, deleted or forgotten."""
    return ApiError(404, *TRIGGER_NOT_FOUND)


async def visible_channels(
    conn: Connection, principal: Principal, channels: Sequence[str]
) -> dict[str, str]:
    """The channels' source kinds, or the one ``404 channel_not_found`` when one is unknown
    or outside the caller's channels (the two answer the same): the one visibility check
    of the feed and the tools."""
    known = await sources.channel_kinds(conn, channels)
    if any(c not in known or not principal.may_see(c) for c in channels):
        raise ApiError(404, "channel_not_found", "no such channel")
    return known


async def resolve_trigger(conn: Connection, principal: Principal, handle: str) -> SourceVersion:
    """The current version of the trigger ``handle`` (``channel/message``), or the one
    404 ``trigger_not_found``."""
    channel, _, message_id = handle.partition("/")
    if not principal.may_see(channel):
        raise trigger_not_found()
    kinds = await sources.channel_kinds(conn, [channel])
    if channel not in kinds:
        raise trigger_not_found()
    version = (await sources.current_versions(conn, kinds[channel], channel, [message_id])).get(
        message_id
    )
    if version is None or version.deleted or version.forgotten_us is not None:
        raise trigger_not_found()
    return version


async def known_read_id(
    conn: Connection,
    principal: Principal,
    versions: Sequence[VersionTuple],
    summarized: Sequence[VersionTuple] = (),
) -> str | None:
    """The id a read of ``versions`` (and ``summarized``) gets, when the deployment's
    secret exists already (a read snapshot cannot create it); None otherwise."""
    secret = await get_state(conn, SECRET_KEY)
    if secret is None:
        return None
    shown = [Version(*v) for v in versions]
    summary = [Version(*v) for v in summarized]
    return read_id_for(bytes.fromhex(secret), consumer_of(principal), shown, summary)


async def record(
    ctx: ReadContext,
    principal: Principal,
    versions: Sequence[VersionTuple],
    summarized: Sequence[VersionTuple] = (),
) -> str:
    """Record that ``principal``'s consumer was shown ``versions`` complete (and
    ``summarized`` in summaries); the read id.

    A busy writer or a full or read-only disk does not fail the answer: the read is
    then not recorded, so settling it answers ``404 read_not_found`` and nothing is
    consumed (the safe side: everything stays new).
    """
    consumer = consumer_of(principal)
    try:
        async with ctx.store.write(ctx.settings.ingest.writer_wait) as conn:
            return await record_read(
                conn,
                consumer,
                versions,
                ctx.clock(),
                summarized=summarized,
                limits=limits(ctx.settings),
            )
    except (WriterBusy, StorageError) as exc:
        log.warning("read not recorded: %s", type(exc).__name__)
    async with ctx.store.read() as conn:
        known = await known_read_id(conn, principal, versions, summarized)
    # without a secret yet, an id that was never recorded (settling it is a 404)
    return known or read_id_for(
        b"", consumer, [Version(*v) for v in versions], [Version(*v) for v in summarized]
    )


READ_NOT_FOUND = (
    "read_not_found",
    "no such read for this consumer (a read expires after consumption.read_ttl and is "
    "settled with the token that read it; read again for a new read_id)",
)


class ConsumptionRequest(StrictModel):
    read_id: Annotated[
        str,
        Field(
            pattern=READ_ID_PATTERN,
            description="The read_id a feed answer or get_channel_messages result named "
            "(a feed's header says read_id=).",
        ),
    ]
    outcome: Annotated[
        Literal["handled", "failed"],
        Field(
            description="handled: the messages it showed complete are consumed (no longer "
            "new to you); failed: they stay new."
        ),
    ]


class ConsumptionResponse(BaseModel):
    read_id: str
    outcome: Annotated[
        Literal["handled", "failed"],
        Field(description="As the read was settled (the first settlement)."),
    ]
    versions: Annotated[
        int,
        Field(
            description="Message versions the read showed complete (and, when handled, consumed)."
        ),
    ]


async def settle_read(
    ctx: ReadContext, principal: Principal, read_id: str, outcome: Outcome
) -> Settled:
    """Settle ``principal``'s consumer's read ``read_id`` after its turn (over HTTP and
    MCP alike): ``handled`` consumes the versions it showed complete, ``failed`` leaves
    them pending. The one ``404 read_not_found`` for an unknown, expired or another
    consumer's read; ``409 read_already_settled`` for the other outcome than the first
    settlement's (the same again answers as the first did). Raises ``WriterBusy`` when
    the writer stays busy for ``ingest.writer_wait``."""
    async with ctx.store.write(ctx.settings.ingest.writer_wait) as conn:
        settled = await settle(
            conn, consumer_of(principal), read_id, outcome, ctx.clock(), limits=limits(ctx.settings)
        )
    if settled is None:
        raise ApiError(404, *READ_NOT_FOUND)
    if settled.outcome != outcome:
        raise ApiError(
            409,
            "read_already_settled",
            f"this read was already settled as {settled.outcome}; a read is settled once",
        )
    return settled
