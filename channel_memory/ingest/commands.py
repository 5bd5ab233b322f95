"""Validated, normalised ingest commands: what the version logic consumes.

Wire models (native events, peer requests) are turned into these; from here on
nothing needs re-validating.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from channel_memory.models import Attachment, MessageKey, Origin


def compute_content_hash(key: MessageKey, content: str, deleted: bool) -> str:
    """The content hash used when a client supplies none (DESIGN section 2)."""
    seed = "\0".join(
        (
            key.source_kind,
            key.channel_id,
            key.message_id,
            content,
            "deleted=" + ("true" if deleted else "false"),
        )
    )
    return "sha256:" + hashlib.sha256(seed.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class PutMessage:
    """A message as the bridge saw it at one moment (create, edit or deleted marker)."""

    key: MessageKey
    content: str
    content_hash: str
    deleted: bool
    author_id: str | None
    author_name: str | None
    author_kind: str | None
    origin: Origin
    created_us: int
    edited_us: int | None
    reply_to: str | None = None
    thread_id: str | None = None
    attachments: tuple[Attachment, ...] = ()
    tags: tuple[str, ...] = ()
    meta: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class DeleteMessage:
    key: MessageKey
    deleted_us: int | None


@dataclass(frozen=True, slots=True)
class ForgetMessages:
    source_kind: str
    channel_id: str
    message_ids: tuple[str, ...]
    author_id: str | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class AddCoverageGap:
    source_kind: str
    channel_id: str
    from_us: int
    to_us: int
    reason: str | None


@dataclass(frozen=True, slots=True)
class ResolveCoverageGap:
    source_kind: str
    channel_id: str
    gap_id: int


Command = PutMessage | DeleteMessage | ForgetMessages | AddCoverageGap | ResolveCoverageGap
MessageCommand = PutMessage | DeleteMessage | ForgetMessages


def command_channel(command: Command) -> tuple[str, str]:
    """``(source_kind, channel_id)`` a command writes to."""
    if isinstance(command, PutMessage | DeleteMessage):
        return command.key.source_kind, command.key.channel_id
    return command.source_kind, command.channel_id
