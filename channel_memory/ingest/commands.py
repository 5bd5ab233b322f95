"""Validated, normalised ingest commands: what the version logic consumes.

Wire models (native events, peer requests) are turned into these; from here on
nothing needs re-validating.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from channel_memory.kernel.models import Attachment, MessageKey, Origin


def compute_content_hash(key: MessageKey, content: str, deleted: bool) -> str:
    """The server's digest of one version of a message: what decides version identity.

    Two events of a message are the same version exactly when their digests
    are equal, whatever ``content_hash`` the client sent. It is also the label
    a version is reported under when the client gives none (or one that
    another content of the message already carries).
    """
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
    """A message as the bridge saw it at one moment (create, edit or deleted marker).

    ``content_hash`` is the client's label for this content, if it sent one: it
    names the version on the wire but never decides whether the content is new.
    """

    key: MessageKey
    content: str
    content_hash: str | None
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
