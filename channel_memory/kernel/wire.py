"""Wire shapes shared by several endpoints: errors, source message objects, field types."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
    field_validator,
)

from channel_memory.kernel.models import ID_PATTERN, RecallBlock, SourceVersion, source_handle
from channel_memory.kernel.timefmt import (
    TimeFormatError,
    format_generated,
    format_rfc3339,
    parse_rfc3339,
)

Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
"""A channel or message id: ``[A-Za-z0-9._:-]{1,128}``."""
SourceKind = Annotated[str, StringConstraints(pattern=r"^[a-z0-9._-]{1,64}$")]


def _parse_time(value: object) -> int:
    if not isinstance(value, str) or len(value) > 40:
        raise ValueError("must be an RFC 3339 time string")
    try:
        return parse_rfc3339(value)
    except TimeFormatError as exc:
        raise ValueError(str(exc)) from None


Timestamp = Annotated[
    int,
    BeforeValidator(_parse_time),
    WithJsonSchema({"type": "string", "format": "date-time", "maxLength": 40}),
]
"""An RFC 3339 time with an offset (``2026-05-21T16:00:00Z``), held as UTC epoch microseconds."""


def no_nul(value: Any) -> Any:
    """``value``, refused when a string in it holds U+0000: no backend stores that character
    in text (PostgreSQL refuses it), so it is refused at the door, on every backend."""
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError("must not contain the NUL character (U+0000)")
    elif isinstance(value, list | tuple):
        for item in value:
            no_nul(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            no_nul(key)
            no_nul(item)
    return value


class TextModel(BaseModel):
    """An input model: no string of it may hold U+0000 (see :func:`no_nul`)."""

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        return no_nul(value)


class StrictModel(TextModel):
    """Native request bodies: unknown fields are an error."""

    model_config = ConfigDict(extra="forbid", strict=True)


class LenientModel(TextModel):
    """Peer-compatible request bodies: unknown fields are ignored."""

    model_config = ConfigDict(extra="ignore")


class ErrorDetail(BaseModel):
    index: int | None = None
    field: str | None = None
    code: str
    message: str


class ErrorInfo(BaseModel):
    code: str
    message: str
    details: list[ErrorDetail] = []


class ErrorBody(BaseModel):
    """Every 4xx/5xx answer: ``{"error": {"code", "message", "details"}}``; never content."""

    error: ErrorInfo


class SourceMessageOut(BaseModel):
    """One stored version of a message, as every read endpoint returns it."""

    source_kind: str
    channel_id: str
    message_id: str
    source_handle: str
    content_hash: str
    observed_seq: int
    is_current: bool
    superseded_by: int | None
    author_id: str | None
    author_name: str | None
    created_at: str
    edited_at: str | None
    deleted: bool
    content: str

    @classmethod
    def of(cls, version: SourceVersion) -> SourceMessageOut:
        return cls(
            source_kind=version.key.source_kind,
            channel_id=version.key.channel_id,
            message_id=version.key.message_id,
            source_handle=version.key.handle,
            content_hash=version.content_hash,
            observed_seq=version.observed_seq,
            is_current=version.is_current,
            superseded_by=version.superseded_by,
            author_id=version.author_id,
            author_name=version.author_name,
            created_at=format_rfc3339(version.created_us),
            edited_at=None if version.edited_us is None else format_rfc3339(version.edited_us),
            deleted=version.deleted,
            content=version.content,
        )


class SourceWindow(BaseModel):
    from_: str = Field(alias="from")
    to: str


class BlockOut(BaseModel):
    """A recall block as every endpoint returns it."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    kind: str
    event_type: str | None
    text: str
    source_channel: str
    source_messages: list[str]
    source_handles: list[str]
    covered_content_hashes: list[str]
    source_window: SourceWindow
    sparse: bool
    score: float
    origin: str
    trust: str
    generated_at: str
    stale: bool
    dirty: bool
    processor: str
    answers: str | None = Field(
        None,
        exclude_if=lambda value: value is None,
        description="A decision by reply: the source handle of the message it decides on "
        "(present only then).",
    )
    author_name: str | None = Field(
        None,
        exclude_if=lambda value: value is None,
        description="A block of one message (a hard event, a verbatim excerpt): its author's "
        "name as given (else the author id); absent for a block of several messages.",
    )
    role: str | None = Field(
        None,
        exclude_if=lambda value: value is None,
        description="Who wrote it, relative to the caller: user (people), assistant (the "
        "caller's own agent), other (other agents, apps, imports, system, mixed or LLM-written "
        "blocks). Present in the feed and the tools.",
    )

    @classmethod
    def of(cls, block: RecallBlock, trust: str, role: str | None = None) -> BlockOut:
        return cls(
            id=block.id,
            kind=block.kind,
            event_type=block.event_type,
            text=block.text,
            source_channel=block.channel_id,
            source_messages=[s.message_id for s in block.sources],
            source_handles=[source_handle(block.channel_id, s.message_id) for s in block.sources],
            covered_content_hashes=[s.content_hash for s in block.sources],
            source_window=SourceWindow.model_validate(
                {"from": format_rfc3339(block.from_us), "to": format_rfc3339(block.to_us)}
            ),
            sparse=block.sparse,
            score=block.score,
            origin=block.origin,
            trust=trust,
            generated_at=format_generated(block.generated_us),
            stale=block.dirty,
            dirty=block.dirty,
            processor=block.processor,
            answers=block.answers,
            author_name=block.author if len(block.sources) == 1 else None,
            role=role,
        )


class FeedMessageOut(SourceMessageOut):
    """A source message in the feed: with who produced it, how far the caller trusts it,
    and who wrote it relative to the caller (``role``: user, assistant or other)."""

    origin: str
    trust: str
    role: str
    reply_to: str | None
    thread_id: str | None

    @classmethod
    def of_version(cls, version: SourceVersion, trust: str, role: str) -> FeedMessageOut:
        base = SourceMessageOut.of(version).model_dump()
        return cls(
            **base,
            origin=version.origin,
            trust=trust,
            role=role,
            reply_to=version.reply_to,
            thread_id=version.thread_id,
        )


class ToolMessageOut(FeedMessageOut):
    """A message as the retrieval tools return it: with attachment references.

    ``content`` is None when the message is too large for the result; a
    ``read_content`` locator then says how to read it in fragments.
    """

    content: str | None  # type: ignore[assignment]
    attachments: list[dict[str, Any]]

    @classmethod
    def of_tool(
        cls, version: SourceVersion, trust: str, role: str, with_content: bool = True
    ) -> ToolMessageOut:
        base = FeedMessageOut.of_version(version, trust, role).model_dump()
        base["content"] = version.content if with_content else None
        attachments = [
            {k: v for k, v in (("id", a.id), ("name", a.name), ("mime_type", a.mime_type),
             ("size_bytes", a.size_bytes), ("url", a.url)) if v is not None}
            for a in version.attachments
        ]  # fmt: skip
        return cls(**base, attachments=attachments)
