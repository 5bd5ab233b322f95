"""Domain types shared by every stage: identities and stored source versions."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Final, Literal, NamedTuple

Origin = Literal["human", "agent", "app", "import", "system"]
ORIGINS: tuple[Origin, ...] = ("human", "agent", "app", "import", "system")
DEFAULT_SOURCE_KIND = "discord"
ID_PATTERN = r"^[A-Za-z0-9._:-]{1,128}$"


class MessageKey(NamedTuple):
    """A message's identity: ``(source_kind, channel_id, message_id)``."""

    source_kind: str
    channel_id: str
    message_id: str

    @property
    def handle(self) -> str:
        return source_handle(self.channel_id, self.message_id)


def source_handle(channel_id: str, message_id: str) -> str:
    """The stable, edit-proof reference to a message: ``"<channel_id>/<message_id>"``."""
    return f"{channel_id}/{message_id}"


@dataclass(frozen=True, slots=True)
class Attachment:
    id: str
    name: str | None = None
    mime_type: str | None = None
    size_bytes: int | None = None
    url: str | None = None


@dataclass(slots=True)
class SourceVersion:
    """One stored version of a message (one distinct ``content_hash``).

    Treated as immutable (changes go through ``dataclasses.replace``); not
    declared frozen because frozen construction is measurably slower on the
    ingest hot path.

    ``event_us`` is the latest event time observed for this version: the newest
    version is the current one. A forgotten version keeps only ids and times.
    """

    id: int
    key: MessageKey
    observed_seq: int
    content_hash: str
    content: str
    deleted: bool
    author_id: str | None
    author_name: str | None
    author_kind: str | None
    origin: Origin
    created_us: int
    edited_us: int | None
    deleted_us: int | None
    event_us: int
    observed_us: int
    is_current: bool = False
    superseded_by: int | None = None
    reply_to: str | None = None
    thread_id: str | None = None
    attachments: tuple[Attachment, ...] = ()
    tags: tuple[str, ...] = ()
    meta: tuple[tuple[str, str], ...] = ()
    forgotten_us: int | None = None

    @property
    def searchable(self) -> bool:
        """Whether this version belongs in the full-text index and current reads."""
        return self.is_current and not self.deleted and self.forgotten_us is None

    def forgotten(self, at_us: int) -> SourceVersion:
        """This version with everything but ids and times erased."""
        return replace(
            self,
            content="",
            content_hash="",
            author_id=None,
            author_name=None,
            attachments=(),
            tags=(),
            meta=(),
            is_current=False,
            superseded_by=None,
            forgotten_us=at_us,
        )


@dataclass(slots=True)
class MessageState:
    """Everything stored about one message identity: its versions, oldest first."""

    key: MessageKey
    versions: list[SourceVersion] = field(default_factory=list)
    forgotten: bool = False

    @property
    def current(self) -> SourceVersion | None:
        return next((v for v in self.versions if v.is_current), None)


# --- block kinds -----------------------------------------------------------------------------

HARD_EVENT_BLOCK: Final = "hard_event"
RAW_EXCERPT: Final = "raw_excerpt"
TOMBSTONE_BLOCK: Final = "tombstone"
TELEMETRY_COUNT: Final = "telemetry_count"
LOW_VALUE_ACK: Final = "low_value_ack"
DECISION_REPEAT: Final = "decision_repeat"
SEQUENCE_ROLLUP: Final = "sequence_rollup"
TOPIC_ROLLUP: Final = "topic_rollup"
MESSAGE_SUMMARY: Final = "message_summary"
PRIMARY_KINDS = frozenset(
    (
        HARD_EVENT_BLOCK,
        RAW_EXCERPT,
        TOMBSTONE_BLOCK,
        TELEMETRY_COUNT,
        LOW_VALUE_ACK,
        DECISION_REPEAT,
    )
)
"""Kinds that are a message's one primary block; the rest are alternative rollups."""
WINDOW_ROLLUP_KINDS = (SEQUENCE_ROLLUP, TOPIC_ROLLUP)
"""Rollups of a run or a thread of ordinary messages (what a model's window answer may be)."""
ROLLUP_KINDS = frozenset((*WINDOW_ROLLUP_KINDS, MESSAGE_SUMMARY))
"""Alternative coverage of ordinary messages (deterministic or LLM-written)."""
BLOCK_KINDS = (
    HARD_EVENT_BLOCK,
    RAW_EXCERPT,
    TOMBSTONE_BLOCK,
    TELEMETRY_COUNT,
    LOW_VALUE_ACK,
    DECISION_REPEAT,
    *WINDOW_ROLLUP_KINDS,
    MESSAGE_SUMMARY,
)
SPARSE_KINDS = frozenset(BLOCK_KINDS) - {HARD_EVENT_BLOCK, RAW_EXCERPT}
"""Kinds that summarise or omit source content (``sparse=true``)."""


@dataclass(frozen=True, slots=True)
class BlockSource:
    """Provenance: one exact source version a block covers."""

    message_id: str
    content_hash: str


@dataclass(frozen=True, slots=True)
class RecallBlock:
    """A derived recall block. Never the only home of any content."""

    id: str
    source_kind: str
    channel_id: str
    group_key: str
    kind: str
    event_type: str | None
    text: str
    from_us: int
    to_us: int
    sparse: bool
    score: float
    generated_us: int
    processor: str
    sources: tuple[BlockSource, ...]
    dirty: bool = False
    cut_text: str | None = None
    """Hard events: the text cut to its decision-bearing lines, when that is shorter."""
    author: str | None = None
    """Single-source blocks: the author's name (else id), as the feed shows it."""
    origin: str = "mixed"
    """The sources' origin when they all share one, else ``mixed``."""
    trust_authors: tuple[str, ...] = ()
    """Distinct author ids ("" for none) of the sources not of system origin; empty when
    every source is system. Enough to compute the block's trust for any caller."""
    answers: str | None = None
    """Decisions by reply: the source handle of the proposal this block's reply answers."""
