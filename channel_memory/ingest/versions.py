"""The version logic of ingest, as pure functions over loaded message state.

Given the stored state of the messages a batch touches, the batch's commands
and the receive time, :func:`apply_commands` returns the new state and the
exact row changes to write. Nothing here does I/O, so the convergence rules
(out-of-order events, duplicates, edits back, deletes, forgets) are tested as
properties of these functions.

Ordering rule: every version carries the latest event time seen for it
(``edited_at``, else ``created_at``; ``deleted_at`` for a deletion). The newest
version is current; at equal times a deletion wins, then the higher
``observed_seq``. Each other version is superseded by the next newer one.

Identity rule: two events of a message are one version exactly when the
server's digest of their content (:func:`compute_content_hash`) is equal. A
client's ``content_hash`` is only the label a new version is reported under,
and only while no other content of the message carries it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace

from channel_memory.ingest.bounds import is_expired
from channel_memory.ingest.commands import (
    DeleteMessage,
    ForgetMessages,
    MessageCommand,
    PutMessage,
    compute_content_hash,
)
from channel_memory.kernel.models import MessageKey, MessageState, SourceVersion


@dataclass(slots=True)
class MessageResult:
    """What one message or delete command did (reported back to the bridge)."""

    key: MessageKey
    content_hash: str
    observed_seq: int
    inserted: bool
    current: bool
    forgotten: bool = False
    expired: bool = False

    @property
    def source_handle(self) -> str:
        return self.key.handle


@dataclass(frozen=True, slots=True)
class ForgetResult:
    channel_id: str
    messages: int
    forgotten: int


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    channel_id: str
    message_id: str | None
    author_id: str | None
    reason: str | None
    versions_forgotten: int


@dataclass(slots=True)
class BatchChanges:
    """Row-level effects of a batch, ready for the store to write."""

    inserted: list[SourceVersion] = field(default_factory=list)
    updated: list[SourceVersion] = field(default_factory=list)
    fts_removed: list[SourceVersion] = field(default_factory=list)
    fts_added: list[SourceVersion] = field(default_factory=list)
    dirty: list[MessageKey] = field(default_factory=list)
    newly_forgotten: list[MessageKey] = field(default_factory=list)
    ledger: list[LedgerEntry] = field(default_factory=list)


@dataclass(slots=True)
class BatchOutcome:
    results: list[MessageResult | ForgetResult]
    states: dict[MessageKey, MessageState]
    changes: BatchChanges


def _rank(version: SourceVersion) -> tuple[int, bool, int]:
    return (version.event_us, version.deleted, version.observed_seq)


def resolve_current(versions: Iterable[SourceVersion]) -> list[SourceVersion]:
    """Recompute ``is_current`` and ``superseded_by``; returns versions by ``observed_seq``."""
    versions = list(versions)
    if len(versions) == 1:
        only = versions[0]
        if only.forgotten_us is not None or (only.is_current and only.superseded_by is None):
            return versions
    live = sorted((v for v in versions if v.forgotten_us is None), key=_rank)
    changed: dict[int, SourceVersion] = {}
    for position, version in enumerate(live):
        newer = live[position + 1] if position + 1 < len(live) else None
        superseded_by = None if newer is None else newer.observed_seq
        if version.is_current != (newer is None) or version.superseded_by != superseded_by:
            changed[version.id] = replace(
                version, is_current=newer is None, superseded_by=superseded_by
            )
    resolved = [changed.get(v.id, v) for v in versions]
    return sorted(resolved, key=lambda v: v.observed_seq)


def _inherit_identity(versions: list[SourceVersion]) -> list[SourceVersion]:
    """Deletion markers carry the author and creation time of the earliest content version.

    A delete may arrive before the message it deletes; once the message is
    known, its tombstone is completed from it, whatever the arrival order.
    """
    if not any(v.deleted for v in versions):
        return versions
    content_versions = [v for v in versions if not v.deleted and v.forgotten_us is None]
    if not content_versions:
        return versions
    origin = min(content_versions, key=lambda v: (v.event_us, v.observed_seq))
    completed = []
    for version in versions:
        if version.deleted and version.content == "" and version.forgotten_us is None:
            version = replace(
                version,
                author_id=origin.author_id,
                author_name=origin.author_name,
                author_kind=origin.author_kind,
                origin=origin.origin,
                created_us=origin.created_us,
            )
        completed.append(version)
    return completed


def version_digest(version: SourceVersion) -> str:
    """The server's digest of a stored version, computed from the content it stores."""
    return compute_content_hash(version.key, version.content, version.deleted)


def choose_label(asked: str | None, digest: str, taken: Collection[str]) -> str:
    """The ``content_hash`` a new version is reported under.

    ``taken`` holds the labels of the message's other (live) versions, all of
    other contents. The client's label when it sent one that is not taken, else
    the server digest; should a client label already hold the digest's text,
    the digest with the first free ``~n`` suffix. Labels stay unique per
    message, as the versions they name are distinct.
    """
    for candidate in (asked, digest):
        if candidate and candidate not in taken:
            return candidate
    suffix = 2
    while f"{digest}~{suffix}" in taken:
        suffix += 1
    return f"{digest}~{suffix}"


class _Batch:
    """Row ids handed out and server digests of the versions a batch compares."""

    def __init__(self, next_id: int) -> None:
        self._next = next_id
        self._digests: dict[int, str] = {}

    def take(self) -> int:
        value = self._next
        self._next += 1
        return value

    def digest(self, version: SourceVersion) -> str:
        known = self._digests.get(version.id)
        if known is None:
            known = self._digests[version.id] = version_digest(version)
        return known

    def remember(self, version: SourceVersion, digest: str) -> None:
        self._digests[version.id] = digest


def _put(
    state: MessageState, command: PutMessage, now_us: int, batch: _Batch
) -> tuple[SourceVersion, bool]:
    if command.deleted:
        event_us = command.edited_us if command.edited_us is not None else now_us
    else:
        event_us = command.edited_us if command.edited_us is not None else command.created_us
    digest = compute_content_hash(command.key, command.content, command.deleted)
    live = [v for v in state.versions if v.forgotten_us is None]
    existing = next((v for v in live if batch.digest(v) == digest), None)
    if existing is not None:
        if event_us > existing.event_us:
            newer = replace(
                existing,
                event_us=event_us,
                edited_us=command.edited_us,
                deleted_us=event_us if command.deleted else existing.deleted_us,
            )
            state.versions = [newer if v is existing else v for v in state.versions]
            return newer, False
        return existing, False
    version = SourceVersion(
        id=batch.take(),
        key=state.key,
        observed_seq=1 + max((v.observed_seq for v in state.versions), default=0),
        content_hash=choose_label(command.content_hash, digest, {v.content_hash for v in live}),
        content=command.content,
        deleted=command.deleted,
        author_id=command.author_id,
        author_name=command.author_name,
        author_kind=command.author_kind,
        origin=command.origin,
        created_us=command.created_us,
        edited_us=command.edited_us,
        deleted_us=event_us if command.deleted else None,
        event_us=event_us,
        observed_us=now_us,
        # the usual case, a message's first version, needs no re-ranking afterwards
        is_current=not any(v.forgotten_us is None for v in state.versions),
        reply_to=command.reply_to,
        thread_id=command.thread_id,
        attachments=command.attachments,
        tags=command.tags,
        meta=command.meta,
    )
    state.versions = [*state.versions, version]
    batch.remember(version, digest)
    return version, True


def _delete_as_put(command: DeleteMessage, now_us: int) -> PutMessage:
    deleted_us = command.deleted_us if command.deleted_us is not None else now_us
    return PutMessage(
        key=command.key,
        content="",
        content_hash=None,
        deleted=True,
        author_id=None,
        author_name=None,
        author_kind=None,
        origin="human",
        created_us=deleted_us,
        edited_us=deleted_us,
    )


def apply_commands(
    stored: Mapping[MessageKey, MessageState],
    commands: Iterable[MessageCommand],
    now_us: int,
    next_id: int,
    *,
    expired_before_us: int | None = None,
) -> BatchOutcome:
    """Apply message, delete and forget commands, in order, to the stored states.

    ``stored`` must hold every message the commands name (absent ones count as
    never seen) and, for a forget by author, every stored message of that
    author in the channel. ``next_id`` is the first free row id. A message or
    delete command of a message already past retention (created before
    ``expired_before_us``) changes nothing and is answered ``expired``, as one
    of a forgotten message is answered ``forgotten``. The input is not modified.
    """
    states = {
        key: MessageState(key, list(state.versions), state.forgotten)
        for key, state in stored.items()
    }
    batch = _Batch(next_id)
    pending: list[tuple[int, MessageKey, SourceVersion, bool]] = []
    results: list[MessageResult | ForgetResult | None] = []
    ledger: list[LedgerEntry] = []
    newly_forgotten: list[MessageKey] = []

    for command in commands:
        if isinstance(command, ForgetMessages):
            results.append(_forget(states, command, now_us, ledger, newly_forgotten))
            continue
        state = states.get(command.key)
        if state is None:
            state = states[command.key] = MessageState(command.key)
        if state.forgotten:
            results.append(
                MessageResult(command.key, "", 0, inserted=False, current=False, forgotten=True)
            )
            continue
        if expired_before_us is not None and is_expired(command, expired_before_us):
            results.append(
                MessageResult(command.key, "", 0, inserted=False, current=False, expired=True)
            )
            continue
        put = command if isinstance(command, PutMessage) else _delete_as_put(command, now_us)
        version, inserted = _put(state, put, now_us, batch)
        state.versions = resolve_current(_inherit_identity(state.versions))
        pending.append((len(results), command.key, version, inserted))
        results.append(None)

    final_by_id = {v.id: v for key in {p[1] for p in pending} for v in states[key].versions}
    for position, key, version, inserted in pending:
        final = final_by_id[version.id]
        results[position] = MessageResult(
            key,
            version.content_hash,
            version.observed_seq,
            inserted=inserted,
            current=final.is_current,
        )

    changes = diff_states(stored, states)
    changes.ledger = ledger
    changes.newly_forgotten = newly_forgotten
    return BatchOutcome(
        results=[r for r in results if r is not None], states=states, changes=changes
    )


def _forget(
    states: dict[MessageKey, MessageState],
    command: ForgetMessages,
    now_us: int,
    ledger: list[LedgerEntry],
    newly_forgotten: list[MessageKey],
) -> ForgetResult:
    keys = [MessageKey(command.source_kind, command.channel_id, m) for m in command.message_ids]
    if command.author_id is not None:
        keys += [
            key
            for key, state in states.items()
            if key.channel_id == command.channel_id
            and not state.forgotten
            and any(v.author_id == command.author_id for v in state.versions)
        ]
    total = 0
    messages = 0
    seen: set[MessageKey] = set()
    for key in keys:
        if key in seen:
            continue
        seen.add(key)
        state = states.setdefault(key, MessageState(key))
        count = sum(1 for v in state.versions if v.forgotten_us is None)
        if not state.forgotten:
            state.forgotten = True
            newly_forgotten.append(key)
            messages += 1
        state.versions = [
            v if v.forgotten_us is not None else v.forgotten(now_us) for v in state.versions
        ]
        total += count
        if command.author_id is None:
            ledger.append(LedgerEntry(key.channel_id, key.message_id, None, command.reason, count))
    if command.author_id is not None:
        ledger.append(
            LedgerEntry(command.channel_id, None, command.author_id, command.reason, total)
        )
    return ForgetResult(command.channel_id, messages=messages, forgotten=total)


def diff_states(
    before: Mapping[MessageKey, MessageState], after: Mapping[MessageKey, MessageState]
) -> BatchChanges:
    """The rows to insert or update, index entries to change and messages to mark dirty."""
    changes = BatchChanges()
    for key, state in after.items():
        old = before.get(key)
        old_versions = {v.id: v for v in old.versions} if old else {}
        touched = False
        for version in state.versions:
            previous = old_versions.get(version.id)
            if previous is None:
                changes.inserted.append(version)
                touched = True
            elif previous != version:
                changes.updated.append(version)
                touched = True
            indexed_before = previous.content if previous and previous.searchable else None
            indexed_after = version.content if version.searchable else None
            if indexed_before != indexed_after:
                if previous is not None and indexed_before is not None:
                    changes.fts_removed.append(previous)
                if indexed_after is not None:
                    changes.fts_added.append(version)
        if touched or (old.forgotten if old else False) != state.forgotten:
            changes.dirty.append(key)
    return changes
