"""Request bodies of the ingest endpoints and their conversion into commands.

Native events (``POST /v1/ingest``) are strict: unknown fields are rejected.
Peer-compatible bodies (``POST /ingest``, ``/forget``, ``/coverage-gaps``)
ignore unknown fields and fill the defaults the peer adapter fills.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from channel_memory.ingest.commands import (
    AddCoverageGap,
    DeleteMessage,
    ForgetMessages,
    PutMessage,
    ResolveCoverageGap,
)
from channel_memory.kernel.models import ORIGINS, Attachment, MessageKey, Origin
from channel_memory.kernel.wire import Id, LenientModel, SourceKind, StrictModel, Timestamp

ShortText = Annotated[str, Field(min_length=1, max_length=256)]
Reason = Annotated[str, Field(max_length=1024)]
ContentHash = Annotated[str, Field(min_length=1, max_length=128)]
Tag = Annotated[str, Field(min_length=1, max_length=64)]

_ORIGIN_BY_AUTHOR_KIND: dict[str, Origin] = {
    "bot": "app",
    "webhook": "app",
    "integration": "app",
    **{origin: origin for origin in ORIGINS},
}


def origin_for(author_kind: str | None, origin: Origin | None) -> Origin:
    """The message's origin: as given, else derived from ``author_kind`` (default human)."""
    if origin is not None:
        return origin
    return _ORIGIN_BY_AUTHOR_KIND.get((author_kind or "human").lower(), "human")


def content_only_empty_when_deleted(content: str, info: ValidationInfo) -> str:
    """The one content rule of every ingest path: empty content is only a deletion.

    A field validator of ``content``; the model declares ``deleted`` before it.
    """
    if content == "" and info.data.get("deleted") is not True:
        raise PydanticCustomError("empty_content", "content may be empty only when deleted is true")
    return content


class AttachmentIn(StrictModel):
    id: Annotated[str, Field(min_length=1, max_length=128)]
    name: Annotated[str, Field(max_length=1024)] | None = None
    mime_type: Annotated[str, Field(max_length=255)] | None = None
    size_bytes: Annotated[int, Field(ge=0, le=2**53)] | None = None
    url: Annotated[str, Field(max_length=4096)] | None = None


class NativeMessage(StrictModel):
    id: Id
    author_id: ShortText | None = None
    author_name: ShortText | None = None
    author_kind: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    origin: Origin | None = None
    created_at: Timestamp
    edited_at: Timestamp | None = None
    deleted: bool = False
    content: str
    content_hash: ContentHash | None = None
    reply_to: Id | None = None
    thread_id: Id | None = None
    attachments: list[AttachmentIn] = Field(default_factory=list, max_length=100)
    tags: list[Tag] = Field(default_factory=list, max_length=32)

    _content = field_validator("content")(content_only_empty_when_deleted)

    @model_validator(mode="after")
    def _required_together(self) -> NativeMessage:
        if self.author_id is None and self.author_name is None:
            raise ValueError("author_id or author_name is required")
        return self


class MessageEvent(StrictModel):
    type: Literal["message"]
    source_kind: SourceKind | None = None
    channel_id: Id
    message: NativeMessage

    def to_command(self, source_kind: str) -> PutMessage:
        m = self.message
        key = MessageKey(source_kind, self.channel_id, m.id)
        return PutMessage(
            key=key,
            content=m.content,
            content_hash=m.content_hash,
            deleted=m.deleted,
            author_id=m.author_id,
            author_name=m.author_name,
            author_kind=m.author_kind,
            origin=origin_for(m.author_kind, m.origin),
            created_us=m.created_at,
            edited_us=m.edited_at,
            reply_to=m.reply_to,
            thread_id=m.thread_id,
            attachments=tuple(Attachment(**a.model_dump()) for a in m.attachments),
            tags=tuple(m.tags),
        )


class DeleteEvent(StrictModel):
    type: Literal["delete"]
    source_kind: SourceKind | None = None
    channel_id: Id
    message_id: Id
    deleted_at: Timestamp | None = None

    def to_command(self, source_kind: str) -> DeleteMessage:
        return DeleteMessage(
            MessageKey(source_kind, self.channel_id, self.message_id),
            self.deleted_at,
        )


class ForgetEvent(StrictModel):
    type: Literal["forget"]
    source_kind: SourceKind | None = None
    channel_id: Id
    message_ids: Annotated[list[Id], Field(max_length=1000)] | None = None
    author_id: ShortText | None = None
    reason: Reason | None = None

    @model_validator(mode="after")
    def _has_target(self) -> ForgetEvent:
        if not self.message_ids and self.author_id is None:
            raise ValueError("message_ids (non-empty) or author_id is required")
        return self

    def to_command(self, source_kind: str) -> ForgetMessages:
        return ForgetMessages(
            source_kind,
            self.channel_id,
            tuple(dict.fromkeys(self.message_ids or ())),
            self.author_id,
            self.reason,
        )


class CoverageGapEvent(StrictModel):
    type: Literal["coverage_gap"]
    source_kind: SourceKind | None = None
    channel_id: Id
    from_: Timestamp = Field(alias="from")
    to: Timestamp
    reason: Reason | None = None

    @model_validator(mode="after")
    def _ordered(self) -> CoverageGapEvent:
        if self.from_ >= self.to:
            raise ValueError("from must be earlier than to")
        return self

    def to_command(self, source_kind: str) -> AddCoverageGap:
        return AddCoverageGap(source_kind, self.channel_id, self.from_, self.to, self.reason)


class CoverageGapResolvedEvent(StrictModel):
    type: Literal["coverage_gap_resolved"]
    source_kind: SourceKind | None = None
    channel_id: Id
    gap_id: Annotated[int, Field(ge=1, le=2**62)]

    def to_command(self, source_kind: str) -> ResolveCoverageGap:
        return ResolveCoverageGap(source_kind, self.channel_id, self.gap_id)


NativeEvent = Annotated[
    MessageEvent | DeleteEvent | ForgetEvent | CoverageGapEvent | CoverageGapResolvedEvent,
    Field(discriminator="type"),
]


class IngestBatch(StrictModel):
    """``POST /v1/ingest``: a batch of native events, applied all or nothing."""

    events: list[NativeEvent]


class EventResult(StrictModel):
    """What one event did; fields that do not apply to its type are left out.

    Message and delete events carry the version fields (``forgotten`` only when
    the message was forgotten before, ``expired`` only when it is already past
    retention: neither stores anything); forget events the counts; gap events
    ``gap_id``.
    """

    index: int
    type: str
    source_handle: str | None = None
    content_hash: str | None = None
    observed_seq: int | None = None
    inserted: bool | None = None
    current: bool | None = None
    forgotten: bool | None = None
    expired: bool | None = None
    versions_forgotten: int | None = None
    messages_forgotten: int | None = None
    gap_id: int | None = None


class IngestBatchResponse(StrictModel):
    results: list[EventResult]
    inserted: int
    duplicates: int
    ignored_forgotten: int
    ignored_expired: int


# --- peer-compatible bodies ---------------------------------------------------------------


def _blank_to_none(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        return None
    return value


Optional = BeforeValidator(_blank_to_none)


class PeerMessage(LenientModel):
    id: Id
    author_id: Annotated[ShortText | None, Optional] = None
    author_name: Annotated[ShortText | None, Optional] = None
    created_at: Annotated[Timestamp | None, Optional] = None
    edited_at: Annotated[Timestamp | None, Optional] = None
    deleted: bool = False
    content: str = Field(default="", validate_default=True)
    content_hash: Annotated[ContentHash | None, Optional] = None
    # beyond the peer's wire, as the native message has them: a reply to a proposal is
    # read as its verdict only when the reply says what it answers
    author_kind: Annotated[str | None, Field(min_length=1, max_length=64), Optional] = None
    reply_to: Annotated[Id | None, Optional] = None
    thread_id: Annotated[Id | None, Optional] = None

    _content = field_validator("content")(content_only_empty_when_deleted)


class PeerSource(LenientModel):
    kind: Annotated[str | None, Field(max_length=64), Optional] = None
    service: Annotated[str | None, Field(max_length=256), Optional] = None
    surface: Annotated[str | None, Field(max_length=256), Optional] = None
    guild_id: Annotated[str | None, Field(max_length=256), Optional] = None


class PeerIngestRequest(LenientModel):
    """``POST /ingest``: one message, in the peer adapter's shape."""

    channel_id: Id
    message: PeerMessage
    source: PeerSource | None = None
    metadata: (
        Annotated[dict[str, Annotated[str, Field(max_length=1024)]], Field(max_length=32)] | None
    ) = None
    scope: Annotated[str | None, Field(max_length=256), Optional] = None

    def source_kind(self) -> str | None:
        """As the peer does: ``source.kind``, else ``source.surface``, lower-cased."""
        if self.source is None:
            return None
        for candidate in (self.source.kind, self.source.surface):
            if candidate and candidate.strip():
                return candidate.strip().lower()
        return None

    def to_command(self, source_kind: str, now_us: int) -> PutMessage:
        m = self.message
        key = MessageKey(source_kind, self.channel_id, m.id)
        meta: dict[str, str] = {}
        if self.source is not None:
            for name in ("service", "surface", "guild_id"):
                value = getattr(self.source, name)
                if value:
                    meta[name] = value
        scope = self.scope or (self.metadata or {}).get("visibility_scope")
        if scope:
            meta["visibility_scope"] = scope
        return PutMessage(
            key=key,
            content=m.content,
            content_hash=m.content_hash,
            deleted=m.deleted,
            author_id=m.author_id,
            author_name=m.author_name,
            author_kind=m.author_kind,
            origin=origin_for(m.author_kind, None),
            created_us=now_us if m.created_at is None else m.created_at,
            edited_us=m.edited_at,
            reply_to=m.reply_to,
            thread_id=m.thread_id,
            meta=tuple(sorted(meta.items())),
        )


class PeerIngestResponse(StrictModel):
    inserted: bool
    source_kind: str
    channel_id: str
    message_id: str
    source_handle: str
    content_hash: str
    observed_seq: int
    current: bool
    expired: bool | None = None
    """Only ``true``, when the message is already past retention and was not stored."""


class PeerForgetRequest(LenientModel):
    """``POST /forget``."""

    source_kind: Annotated[str | None, Field(max_length=64), Optional] = None
    channel_id: Id
    message_ids: Annotated[list[Id], Field(min_length=1, max_length=1000)]
    reason: Annotated[Reason | None, Optional] = None


class PeerForgetResponse(StrictModel):
    forgotten: int


class PeerCoverageGapRequest(LenientModel):
    """``POST /coverage-gaps``."""

    channel_id: Id
    from_: Timestamp = Field(alias="from")
    to: Timestamp
    reason: Annotated[Reason | None, Optional] = None

    @model_validator(mode="after")
    def _ordered(self) -> PeerCoverageGapRequest:
        if self.from_ > self.to:
            raise ValueError("from must not be later than to")
        return self


class PeerCoverageGapResponse(StrictModel):
    id: int
    channel_id: str
    from_: str = Field(alias="from")
    to: str
    reason: str | None
