"""The one write path: every ingest (native batch, peer endpoints, CLI import) goes here.

Events are validated by the wire models before this point; what needs the
database (a channel's source kind, a gap id) is checked inside the write
transaction before anything is written, and any failure rolls the whole batch
back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from channel_memory.ingest.bounds import TimeBounds, first_too_far_ahead, is_expired
from channel_memory.ingest.commands import (
    AddCoverageGap,
    Command,
    DeleteMessage,
    ForgetMessages,
    MessageCommand,
    PutMessage,
    ResolveCoverageGap,
    command_channel,
)
from channel_memory.ingest.events import (
    CoverageGapEvent,
    CoverageGapResolvedEvent,
    DeleteEvent,
    ForgetEvent,
    MessageEvent,
)
from channel_memory.ingest.versions import ForgetResult, MessageResult, apply_commands
from channel_memory.kernel.models import DEFAULT_SOURCE_KIND, MessageKey
from channel_memory.store import DeriveHook, Store, blocks, dirty, gaps, sources
from channel_memory.store import llm as llm_store
from channel_memory.store.connection import Connection
from channel_memory.store.gaps import CoverageGap

NativeEventModel = (
    MessageEvent | DeleteEvent | ForgetEvent | CoverageGapEvent | CoverageGapResolvedEvent
)


class IngestRejected(Exception):
    """An event cannot be applied; the whole batch is rejected and nothing is written.

    ``code`` is the answer's code; ``detail_code`` (default: the same) says what
    is wrong with the named field.
    """

    def __init__(
        self, index: int, field: str, code: str, message: str, detail_code: str | None = None
    ) -> None:
        super().__init__(message)
        self.index = index
        self.field = field
        self.code = code
        self.message = message
        self.detail_code = detail_code or code


def check_not_ahead(commands: Sequence[Command], latest_us: int) -> None:
    """Raise ``IngestRejected`` (``validation_failed``) naming the first event and time field
    later than ``latest_us``: the server clock plus ``ingest.max_future_skew``."""
    found = first_too_far_ahead(commands, latest_us)
    if found is not None:
        index, field = found
        raise IngestRejected(
            index,
            field,
            "validation_failed",
            "the time is further ahead of the server clock than ingest.max_future_skew",
            "too_far_ahead",
        )


@dataclass(slots=True)
class IngestReport:
    """The outcome of one batch, one entry per event in order."""

    results: list[MessageResult | ForgetResult | CoverageGap] = field(default_factory=list)

    @property
    def inserted(self) -> int:
        return sum(1 for r in self.results if isinstance(r, MessageResult) and r.inserted)

    @property
    def duplicates(self) -> int:
        return sum(
            1
            for r in self.results
            if isinstance(r, MessageResult) and not (r.inserted or r.forgotten or r.expired)
        )

    @property
    def ignored_forgotten(self) -> int:
        return sum(1 for r in self.results if isinstance(r, MessageResult) and r.forgotten)

    @property
    def ignored_expired(self) -> int:
        return sum(1 for r in self.results if isinstance(r, MessageResult) and r.expired)

    @property
    def forgot(self) -> bool:
        return any(isinstance(r, ForgetResult) for r in self.results)


Build = Callable[[dict[str, str]], list[Command]]
"""Builds a batch's commands from the registered source kind of its channels (updated in place
with the channels the batch registers)."""


def native_commands(events: Sequence[NativeEventModel]) -> Build:
    """The builder for native events: an event's ``source_kind`` defaults to its channel's."""

    def build(kinds: dict[str, str]) -> list[Command]:
        commands: list[Command] = []
        for index, event in enumerate(events):
            kind = resolve_kind(kinds, index, event.channel_id, event.source_kind)
            if isinstance(event, MessageEvent | DeleteEvent | CoverageGapEvent):
                kinds.setdefault(event.channel_id, kind)
            commands.append(event.to_command(kind))
        return commands

    return build


def resolve_kind(kinds: dict[str, str], index: int, channel_id: str, asked: str | None) -> str:
    """The source kind for an event: as asked, else the channel's, else the default.

    Raises ``IngestRejected`` when the channel is registered under another kind.
    """
    registered = kinds.get(channel_id)
    kind = asked or registered or DEFAULT_SOURCE_KIND
    if registered is not None and kind != registered:
        raise IngestRejected(
            index,
            "source_kind",
            "channel_kind_conflict",
            # the registered kind is an identifier (a-z, 0-9, ".", "_", "-"), never content
            f"the channel is registered under source kind {registered}: send that, or leave "
            "source_kind out",
        )
    return kind


async def ingest(
    store: Store,
    channel_ids: Sequence[str],
    build: Build,
    *,
    now_us: int,
    derive: DeriveHook,
    writer_wait: float | None = None,
    bounds: TimeBounds | None = None,
) -> IngestReport:
    """Apply a batch atomically in one write transaction; erase at once after a forget.

    In the same transaction: the full-text index rows, the dirty markers, dirty
    flags on every block citing a changed message, and — for forgotten
    messages — their derivation, so no block cites them once this returns.
    With ``bounds`` (a server's: the HTTP endpoints and the bulk import pass the
    configured ones) a time too far ahead rejects the batch and a message past
    retention is answered ``expired`` and not stored; without, any time is
    taken as given (loading fixtures and benchmark data).
    Raises ``IngestRejected`` or ``WriterBusy``; in both cases nothing is written.
    """
    async with store.write(writer_wait) as conn:
        kinds = await sources.channel_kinds(conn, channel_ids)
        known = dict(kinds)
        commands = build(kinds)
        if bounds is not None:
            check_not_ahead(commands, bounds.latest_us)
        expired_before_us = None if bounds is None else bounds.expired_before_us
        writing = (
            command_channel(c)
            for c in commands
            if isinstance(c, PutMessage | DeleteMessage | AddCoverageGap)
            and not (expired_before_us is not None and is_expired(c, expired_before_us))
        )
        await sources.register_channels(
            conn, {channel: kind for kind, channel in writing if channel not in known}, now_us
        )
        gap_results = await _apply_gaps(conn, commands, now_us)
        message_commands = [c for c in commands if isinstance(c, _MESSAGE_COMMANDS)]
        message_results = await _apply_messages(
            conn, message_commands, now_us, derive, expired_before_us
        )
    in_order = (iter(message_results), iter(gap_results))
    report = IngestReport(
        [next(in_order[0] if isinstance(c, _MESSAGE_COMMANDS) else in_order[1]) for c in commands]
    )
    if report.forgot:
        await store.erase_pending()
    return report


_MESSAGE_COMMANDS = (PutMessage, DeleteMessage, ForgetMessages)


async def _apply_gaps(
    conn: Connection, commands: Sequence[Command], now_us: int
) -> list[CoverageGap]:
    results: list[CoverageGap] = []
    for index, command in enumerate(commands):
        if isinstance(command, ResolveCoverageGap):
            gap = await gaps.gap_by_id(conn, command.gap_id)
            if gap is None or gap.channel_id != command.channel_id:
                raise IngestRejected(
                    index, "gap_id", "unknown_gap", "no coverage gap with this id in the channel"
                )
            await gaps.resolve_gap(conn, command.gap_id, now_us)
            resolved = await gaps.gap_by_id(conn, command.gap_id)
            assert resolved is not None
            results.append(resolved)
        elif isinstance(command, AddCoverageGap):
            results.append(
                await gaps.insert_gap(
                    conn, command.channel_id, command.from_us, command.to_us, command.reason, now_us
                )
            )
    return results


async def _apply_messages(
    conn: Connection,
    commands: Sequence[MessageCommand],
    now_us: int,
    derive: DeriveHook,
    expired_before_us: int | None,
) -> list[MessageResult | ForgetResult]:
    if not commands:
        return []
    keys: set[MessageKey] = set()
    for command in commands:
        if isinstance(command, ForgetMessages):
            keys.update(
                MessageKey(command.source_kind, command.channel_id, m) for m in command.message_ids
            )
            if command.author_id is not None:
                keys.update(
                    await sources.messages_by_author(conn, command.channel_id, command.author_id)
                )
        else:
            keys.add(command.key)
    stored = await sources.message_states(conn, keys)
    outcome = apply_commands(
        stored,
        commands,
        now_us,
        await sources.next_version_id(conn),
        expired_before_us=expired_before_us,
    )
    changes = outcome.changes
    await sources.write_versions(
        conn,
        inserted=changes.inserted,
        updated=changes.updated,
        fts_removed=changes.fts_removed,
        fts_added=changes.fts_added,
    )
    await dirty.mark_dirty(conn, changes.dirty, now_us)
    for channel_id, message_ids in _by_channel(changes.dirty).items():
        await blocks.mark_blocks_citing_dirty(conn, channel_id, message_ids)
    if changes.newly_forgotten:
        await derive(conn, changes.newly_forgotten, now_us)
        # an LLM answer may quote what was forgotten: it goes with its sources
        await llm_store.forget_cached(conn, changes.newly_forgotten)
        for channel_id, message_ids in _by_channel(changes.newly_forgotten).items():
            await dirty.clear_markers_for(conn, channel_id, message_ids)
    if changes.newly_forgotten or changes.ledger:
        await sources.record_forgets(
            conn,
            changes.newly_forgotten,
            [
                (e.channel_id, e.message_id, e.author_id, e.reason, e.versions_forgotten)
                for e in changes.ledger
            ],
            now_us,
        )
    return outcome.results


def _by_channel(keys: Iterable[MessageKey]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for key in keys:
        grouped.setdefault(key.channel_id, []).append(key.message_id)
    return grouped
