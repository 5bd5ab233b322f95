"""Incremental derivation: recompute exactly the blocks a set of changed messages affects.

For each changed message the worker re-classifies its current version, then
rebuilds every group its old or new class belongs to, plus its own per-message
block. A short reply is classified with the current version of the message it
answers (its ``reply_to`` target, else its thread's root): a reply deciding on a
proposal is a hard event that ``answers`` it. Its derived row records the message
it read, so a change of that message (an edit, a delete, a forget, or its late
arrival) re-derives every reply that read it. A block is kept when its id (a hash
of its inputs) is unchanged, so unchanged blocks keep their ``generated_at``.
Derived rows and blocks are written in the caller's transaction, so together they
are always a consistent snapshot of the sources as last processed.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from channel_memory.kernel import groups
from channel_memory.kernel.models import (
    DECISION_REPEAT,
    HARD_EVENT_BLOCK,
    LOW_VALUE_ACK,
    RAW_EXCERPT,
    SEQUENCE_ROLLUP,
    TELEMETRY_COUNT,
    TOMBSTONE_BLOCK,
    TOPIC_ROLLUP,
    MessageKey,
    RecallBlock,
    SourceVersion,
)
from channel_memory.store import blocks as block_store
from channel_memory.store import llm as llm_store
from channel_memory.store import sources
from channel_memory.store.blocks import DerivedRow
from channel_memory.store.connection import Connection
from channel_memory.worker import llm_detect
from channel_memory.worker.classify import Classified, classify, hard_event_score, parent_rule
from channel_memory.worker.render import (
    BlockPlan,
    ContentFacts,
    RenderSettings,
    block_id,
    content_facts,
    render,
)
from channel_memory.worker.rules import REASONED_REPLY_CHARS, RuleSet

RENDER_VERSION = "16"
"""Bump when rendering changes, so every block is rebuilt with the new text."""


@dataclass(frozen=True, slots=True)
class DeriveSettings:
    rules: RuleSet
    bucket_us: int
    rollup_size: int
    hard_event_max_chars: int
    promotions: bool = False
    """Apply model-assisted detection's promotions (``llm.detect``); off, they are never read."""

    @property
    def fingerprint(self) -> str:
        """Changes whenever a block built from the same sources could come out differently."""
        seed = (
            f"{RENDER_VERSION}|{self.rules.fingerprint}|{self.bucket_us}|{self.rollup_size}|"
            f"{self.hard_event_max_chars}"
        ) + ("|promotions" if self.promotions else "")
        return hashlib.sha256(seed.encode()).hexdigest()[:16]

    def render_settings(self) -> RenderSettings:
        return RenderSettings(self.rules, self.hard_event_max_chars, self.fingerprint)


VersionId = tuple[object, ...]


def version_id(version: SourceVersion) -> VersionId:
    """Everything classification and rendering read from a version, its content by hash."""
    return (
        version.key,
        version.content_hash,
        version.deleted,
        version.tags,
        version.author_id,
        version.author_name,
        version.created_us,
        version.thread_id,
        version.reply_to,
    )


def parent_id(version: SourceVersion, rules: RuleSet) -> str | None:
    """The message whose content could make ``version`` a decision by reply, if any.

    That is its ``reply_to`` target, else the root of its thread (a thread reply
    carries the root's id as ``thread_id``). None for a deletion, for a message
    outside any reply chain, and for one longer than every reply rule allows (and than
    a verdict with its reasons, ``REASONED_REPLY_CHARS``): its class cannot depend on
    another message, so no other message's change re-derives it.
    """
    if version.deleted or not rules.replies:
        return None
    target = version.reply_to or version.thread_id
    if target is None or target == version.key.message_id:
        return None
    limit = max(REASONED_REPLY_CHARS, rules.reply_chars)
    if len(version.content) > limit and len(version.content.strip()) > limit:
        return None
    return target


@dataclass(frozen=True, slots=True)
class Subject:
    """A version to classify, with the message it replies to (see :func:`parent_id`)."""

    version: SourceVersion
    reads: str | None = None
    """The id of the message whose content could decide its class, stored or not."""
    parent: SourceVersion | None = None
    """The current version of ``reads``, when there is one and it is not deleted."""


SubjectId = tuple[VersionId, str | None, str | None]


def subject_id(subject: Subject) -> SubjectId:
    """Everything a subject's analysis reads: the version, and its parent's version."""
    parent = subject.parent
    if parent is None:
        return (version_id(subject.version), None, None)
    return (version_id(subject.version), parent.key.message_id, parent.content_hash)


@dataclass(frozen=True, slots=True)
class Analysis:
    """A version's class and the content facts its blocks are rendered from."""

    classified: Classified
    facts: ContentFacts
    answers: str | None = None
    """A decision by reply: the source handle of the message it decides on."""


def analyse(
    version: SourceVersion, settings: DeriveSettings, parent: SourceVersion | None = None
) -> Analysis:
    """Classify a version and compute its content facts: pure, linear in its content.

    With ``parent`` (the current version of the message it replies to), a reply that
    decides on that message (a reply rule matches it under the parent) is a hard event
    that ``answers`` the parent's handle; one that is a decision by itself keeps its
    own event type. A deleted parent decides
    nothing, and nothing of the parent but its handle reaches the analysis.
    """
    rules, bucket = settings.rules, settings.bucket_us
    classified = classify(version, rules, bucket)
    answers = None
    cut_type = None  # the type its cut is chosen as, when not its own (see below)
    if parent is not None and not parent.deleted and classified.cls != groups.TOMBSTONE:
        if classified.cls == groups.HARD_EVENT:
            # a decision by itself ("denied, too correlated") keeps its own type, and
            # still names the proposal it decides on; it ranks as surely as a decision
            # by reply, whatever its own rule and the model make of its reasons
            reply = rules.reply_decision(
                version.content, parent.content, parent_rule(parent, rules)
            )
            if reply is not None:
                answers = parent.key.handle
                # shown cut, it keeps its verdict as a reply does ("go. 150k max, and
                # it's flat by the close" is typed by its own rule, but "150k max" alone
                # approves nothing); a change of view keeps its own choice of clauses
                if classified.event_type != "thesis_change":
                    cut_type = reply.event_type
                sure = hard_event_score(
                    reply, rules, version.content, parent.content, False, version.origin, True
                )
                if sure > classified.score:
                    classified = replace(classified, score=sure)
        else:
            by_reply = classify(version, rules, bucket, parent=parent)
            if by_reply.cls == groups.HARD_EVENT:
                classified, answers = by_reply, parent.key.handle
    hard = classified.cls == groups.HARD_EVENT
    facts = content_facts(
        version, settings.render_settings(), hard, cut_type or classified.event_type
    )
    return Analysis(classified, facts, answers)


def analyse_all(subjects: Iterable[Subject], settings: DeriveSettings) -> dict[SubjectId, Analysis]:
    return {subject_id(s): analyse(s.version, settings, s.parent) for s in subjects}


class Analyses:
    """Analyses of recently derived versions, computed in a worker thread, kept in a bounded
    LRU (by entries and by characters of text held).

    The content-bound work of derivation (rule regexes, rendering facts) happens in
    :meth:`ensure`, never on the event loop thread; the worker calls it before it takes
    the writer, so that work does not hold up ingest either. Only the event loop
    thread touches the cache itself.
    """

    def __init__(
        self, settings: DeriveSettings, max_entries: int = 8192, max_chars: int = 16_000_000
    ) -> None:
        self.settings = settings
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._cache: OrderedDict[SubjectId, Analysis] = OrderedDict()
        self._chars = 0

    @staticmethod
    def _weight(analysis: Analysis) -> int:
        facts = analysis.facts
        return (
            64
            + len(facts.key_line)
            + len(facts.latest_line)
            + len(facts.hard_text or "")
            + (len(facts.cut_text or ""))
            + len(analysis.answers or "")
        )

    async def ensure(self, subjects: Iterable[Subject]) -> dict[SubjectId, Analysis]:
        """The analyses of ``subjects``; those not cached are computed in a worker thread."""
        wanted = {subject_id(s): s for s in subjects}
        found = {k: self._cache[k] for k in wanted if k in self._cache}
        for key in found:
            self._cache.move_to_end(key)
        missing = [s for k, s in wanted.items() if k not in found]
        if missing:
            computed = await asyncio.to_thread(analyse_all, missing, self.settings)
            found.update(computed)
            for key, analysis in computed.items():
                self._put(key, analysis)
        return found

    def _put(self, key: SubjectId, analysis: Analysis) -> None:
        if key in self._cache:
            return
        self._cache[key] = analysis
        self._chars += self._weight(analysis)
        while self._cache and (len(self._cache) > self.max_entries or self._chars > self.max_chars):
            _, evicted = self._cache.popitem(last=False)
            self._chars -= self._weight(evicted)


def group_key_of(row: DerivedRow) -> str | None:
    """The collapse or rollup group a derived row belongs to (beyond its own block)."""
    if row.group_key is None:
        return None
    return groups.group_key(row.cls, row.group_key)


def _plan(
    kind: str,
    key: str,
    rows: Sequence[DerivedRow],
    event_type: str | None,
    score: float,
    answers: str | None = None,
) -> BlockPlan:
    members = tuple((r.message_id, r.content_hash) for r in rows)
    return BlockPlan(kind, key, members, event_type, score, _stamp(rows), answers)


def _stamp(rows: Sequence[DerivedRow]) -> str:
    """What a block's text shows beyond the covered hashes: times and author names.

    A tombstone completed after an early delete keeps its hash but gains its author
    and time, so the stamp is part of the block id.
    """
    seed = "\0".join(f"{r.created_us}|{r.author or ''}" for r in rows)
    return hashlib.sha256(seed.encode()).hexdigest()[:16]


def plan_message(row: DerivedRow | None, repeat_active: bool) -> list[BlockPlan]:
    """A message's own block: hard event, tombstone or raw excerpt (or none when collapsed)."""
    if row is None:
        return []
    key = groups.message_key(row.message_id)
    if row.cls == groups.TOMBSTONE:
        return [_plan(TOMBSTONE_BLOCK, key, [row], None, row.score)]
    if row.cls == groups.HARD_EVENT:
        return [_plan(HARD_EVENT_BLOCK, key, [row], row.event_type, row.score, row.answers)]
    if row.cls in groups.COLLAPSED_CLASSES or (row.cls == groups.REPEAT and repeat_active):
        return []
    return [_plan(RAW_EXCERPT, key, [row], None, 0.5)]


def plan_group(key: str, rows: Sequence[DerivedRow]) -> list[BlockPlan]:
    """The block of one collapse or topic group, from its chronological members.

    Sequence groups are planned run by run (:func:`_sequence_tail`).
    """
    found = groups.class_of(key)
    cls = found[0] if found is not None else None
    if cls == groups.TELEMETRY and rows:
        return [_plan(TELEMETRY_COUNT, key, rows, None, 0.1)]
    if cls == groups.ACK and rows:
        return [_plan(LOW_VALUE_ACK, key, rows, "low_value_acknowledgement", 0.1)]
    if cls == groups.REPEAT and len(rows) >= 2:
        return [_plan(DECISION_REPEAT, key, rows, "repeated_decision", 0.3)]
    if cls == groups.TOPIC and len(rows) >= 2:
        return [_plan(TOPIC_ROLLUP, key, rows, None, 0.4)]
    return []


def sequence_chunks(rows: Sequence[DerivedRow], size: int) -> list[Sequence[DerivedRow]]:
    """Consecutive runs of ``size`` messages; a lone trailing message joins the run before it."""
    chunks = [rows[i : i + size] for i in range(0, len(rows), size)]
    if len(chunks) >= 2 and len(chunks[-1]) == 1:
        chunks[-2] = [*chunks[-2], *chunks[-1]]
        chunks.pop()
    return [chunk for chunk in chunks if len(chunk) >= 2]


async def derive(
    conn: Connection,
    keys: Iterable[MessageKey],
    settings: DeriveSettings,
    now_us: int,
    analyses: Analyses | None = None,
) -> int:
    """Bring derived rows and blocks up to date for ``keys``; returns blocks written.

    Runs inside the caller's write transaction. Content-bound work runs in a worker
    thread (see :class:`Analyses`); what ``analyses`` already holds is not recomputed.
    """
    analyses = analyses if analyses is not None else Analyses(settings)
    by_channel: dict[tuple[str, str], set[str]] = defaultdict(set)
    for key in keys:
        by_channel[(key.source_kind, key.channel_id)].add(key.message_id)
    written = 0
    for (kind, channel), message_ids in sorted(by_channel.items()):
        written += await _derive_channel(
            conn, kind, channel, message_ids, settings, now_us, analyses
        )
    return written


async def pending_subjects(
    conn: Connection, keys: Iterable[MessageKey], rules: RuleSet
) -> list[Subject]:
    """What :func:`derive` will classify first for ``keys`` (see :func:`channel_subjects`)."""
    by_channel: dict[tuple[str, str], set[str]] = defaultdict(set)
    for key in keys:
        by_channel[(key.source_kind, key.channel_id)].add(key.message_id)
    found: list[Subject] = []
    for (kind, channel), message_ids in sorted(by_channel.items()):
        _, subjects = await channel_subjects(conn, kind, channel, message_ids, rules)
        found += subjects.values()
    return found


async def channel_subjects(
    conn: Connection,
    source_kind: str,
    channel: str,
    message_ids: Iterable[str],
    rules: RuleSet,
) -> tuple[set[str], dict[str, Subject]]:
    """The messages a change of ``message_ids`` re-derives, and what each is classified from.

    Those are the messages themselves and every message whose derived class was read
    with one of them as its parent (a reply to it). The subjects (by message id) are
    those of them with a current version, each with its parent's current version when
    there is one: the parent's deletion or forgetting leaves the reply on its own.
    """
    ids = set(message_ids) | await block_store.replies_to(conn, channel, message_ids)
    current = await sources.current_versions(conn, source_kind, channel, ids)
    reads = {m: parent_id(v, rules) for m, v in current.items()}
    wanted = {p for p in reads.values() if p is not None}
    found = await sources.current_versions(conn, source_kind, channel, wanted)
    parents = {m: v for m, v in found.items() if not v.deleted}
    subjects = {
        m: Subject(v, reads[m], None if reads[m] is None else parents.get(reads[m] or ""))
        for m, v in current.items()
    }
    return ids, subjects


async def _derive_channel(
    conn: Connection,
    source_kind: str,
    channel: str,
    message_ids: set[str],
    settings: DeriveSettings,
    now_us: int,
    analyses: Analyses,
) -> int:
    message_ids, subjects = await channel_subjects(
        conn, source_kind, channel, message_ids, settings.rules
    )
    current = {m: s.version for m, s in subjects.items()}
    old = await block_store.derived_rows(conn, channel, message_ids)
    analysed = await analyses.ensure(subjects.values())
    new: dict[str, DerivedRow] = {}
    for message_id, subject in subjects.items():
        version = subject.version
        analysis = analysed[subject_id(subject)]
        c = analysis.classified
        new[message_id] = DerivedRow(
            source_kind,
            channel,
            message_id,
            version.content_hash,
            version.created_us,
            version.author_name or version.author_id,
            c.cls,
            c.event_type,
            c.score,
            c.group_key,
            subject.reads,
            analysis.answers,
        )
    promoted: dict[str, str] = {}
    if settings.promotions:  # an ordinary version the model promoted is a hard event
        new, promoted = await llm_detect.promote_rows(conn, channel, new)
    affected: set[str] = set()
    for message_id in message_ids:
        affected.add(groups.message_key(message_id))
        for row in (old.get(message_id), new.get(message_id)):
            group = group_key_of(row) if row is not None else None
            if group is not None:
                affected.add(group)
    await block_store.write_derived(
        conn,
        channel,
        [row for message_id, row in new.items() if old.get(message_id) != row],
        [message_id for message_id in old if message_id not in new],
    )
    await _invalidate_llm_blocks(conn, source_kind, channel, message_ids, new, current)

    sequences = {k for k in affected if groups.is_class(k, groups.SEQUENCE)}
    affected -= sequences
    members = await _load_groups(
        conn, channel, [k for k in affected if groups.message_of(k) is None]
    )
    # A repeat group crossing two members changes its members' own blocks.
    for key, rows in members.items():
        if groups.is_class(key, groups.REPEAT):
            affected.update(groups.message_key(r.message_id) for r in rows)
    own_ids = [m for m in map(groups.message_of, affected) if m is not None]
    own = {**await block_store.derived_rows(conn, channel, set(own_ids) - new.keys()), **new}
    missing_repeat_groups = {
        group_key_of(row)
        for row in own.values()
        if row.cls == groups.REPEAT and group_key_of(row) not in members
    }
    members.update(await _load_groups(conn, channel, [k for k in missing_repeat_groups if k]))

    plans: list[BlockPlan] = []
    for key in sorted(affected):
        own_id = groups.message_of(key)
        if own_id is not None:
            row = own.get(own_id)
            group = group_key_of(row) if row is not None else None
            active = (
                row is not None
                and row.cls == groups.REPEAT
                and len(members.get(group or "", [])) >= 2
            )
            plans += plan_message(row, active)
        else:
            plans += plan_group(key, members.get(key, []))
    existing = await block_store.blocks_in_groups(conn, channel, affected)
    changed_by_group: dict[str, list[DerivedRow]] = defaultdict(list)
    for row in (*old.values(), *new.values()):
        changed_by_group[group_key_of(row) or ""].append(row)
    for key in sorted(sequences):
        changed = changed_by_group[key]
        tail_plans, tail_existing = await _sequence_tail(conn, channel, key, changed, settings)
        plans += tail_plans
        existing += tail_existing
    plans = [llm_detect.promoted_plan(plan, promoted) for plan in plans]
    return await _apply_plans(
        conn, source_kind, channel, existing, plans, subjects, settings, now_us, analyses, promoted
    )


async def _invalidate_llm_blocks(
    conn: Connection,
    source_kind: str,
    channel: str,
    message_ids: set[str],
    new: dict[str, DerivedRow],
    current: dict[str, SourceVersion],
) -> None:
    """Delete exactly the LLM blocks citing a version that is no longer current and ordinary.

    An LLM block cannot be recomputed here (that costs a call): it goes, the
    deterministic blocks serve its messages, and the LLM pass may buy a new one.
    A block that ingest marked dirty but whose versions are all still current is
    made fresh again.
    """
    citing = await llm_store.llm_blocks_citing(conn, channel, message_ids)
    if not citing:
        return

    def holds(message_id: str, content_hash: str) -> bool:
        row = new.get(message_id)
        return (
            row is not None
            and row.content_hash == content_hash
            and row.cls in groups.ORDINARY_CLASSES
        )

    gone = [b.seq for b in citing if not all(holds(m, h) for m, h in b.members if m in message_ids)]
    await block_store.delete_blocks(conn, gone)
    dirty = [b for b in citing if b.dirty and b.seq not in gone]
    if not dirty:
        return
    others = {m for b in dirty for m, _ in b.members if m not in current}
    latest = {**current, **await sources.current_versions(conn, source_kind, channel, others)}
    fresh = [
        b.seq
        for b in dirty
        if all(
            m in latest and latest[m].content_hash == h and not latest[m].deleted
            for m, h in b.members
        )
    ]
    await block_store.clear_block_dirty(conn, fresh)


async def _sequence_tail(
    conn: Connection,
    channel: str,
    key: str,
    changed: Sequence[DerivedRow],
    settings: DeriveSettings,
) -> tuple[list[BlockPlan], list[block_store.StoredBlockRef]]:
    """Plans and stored blocks of a sequence group from the run before the earliest change.

    Runs are consecutive, so runs ending before the earliest changed message are
    unchanged: only the tail is reloaded, which keeps the cost of an append
    independent of how many messages the bucket already holds. Each run's block
    group is ``q:<bucket>:<run index>``.
    """
    size = settings.rollup_size
    found = groups.class_of(key)
    assert found is not None and found[0] == groups.SEQUENCE, "a sequence group"
    bucket = found[1]
    earliest = min((r.created_us, r.message_id) for r in changed)
    position = await block_store.count_before(conn, channel, groups.SEQUENCE, bucket, *earliest)
    first_run = max(0, position // size - 1)  # the run before may absorb a lone trailer
    rows = await block_store.group_members_from(
        conn, channel, groups.SEQUENCE, bucket, first_run * size
    )
    plans = []
    if first_run > 0 or len(rows) >= 2:
        for offset, chunk in enumerate(sequence_chunks(rows, size)):
            run = groups.run_key(key, first_run + offset)
            plans.append(_plan(SEQUENCE_ROLLUP, run, chunk, None, 0.4))
    in_runs = await block_store.blocks_in_group_range(
        conn, channel, *groups.prefix_range(key + groups.RUN_SEPARATOR)
    )
    stored = [ref for ref in in_runs if (groups.run_of(key, ref.group_key) or 0) >= first_run]
    return plans, stored


async def _load_groups(
    conn: Connection, channel: str, keys: Iterable[str]
) -> dict[str, list[DerivedRow]]:
    by_class: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        found_class = groups.class_of(key)
        assert found_class is not None, "only class groups are loaded"
        by_class[found_class[0]].append(found_class[1])
    members: dict[str, list[DerivedRow]] = {}
    for cls, group_keys in by_class.items():
        found = await block_store.group_members(conn, channel, cls, group_keys)
        members.update({groups.group_key(cls, gk): rows for gk, rows in found.items()})
    return members


async def _apply_plans(
    conn: Connection,
    source_kind: str,
    channel: str,
    existing: Sequence[block_store.StoredBlockRef],
    plans: Sequence[BlockPlan],
    subjects: Mapping[str, Subject],
    settings: DeriveSettings,
    now_us: int,
    analyses: Analyses,
    promoted: Mapping[str, str],
) -> int:
    current = {m: s.version for m, s in subjects.items()}
    fingerprint = settings.fingerprint
    desired = {block_id(channel, plan, fingerprint): plan for plan in plans}
    existing_ids = {ref.id for ref in existing}
    to_create = [(bid, plan) for bid, plan in desired.items() if bid not in existing_ids]
    members = {member for _, plan in to_create for member in plan.members}
    # Versions already loaded as current are reused; the rest are read by exact hash.
    known = {m: v for m, v in current.items() if v.content_hash}
    unknown_ids = {m for m, _ in members if m not in known}
    known.update(await sources.current_versions(conn, source_kind, channel, unknown_ids))
    exact = await sources.exact_versions(
        conn,
        source_kind,
        channel,
        [(m, h) for m, h in members if m not in known or known[m].content_hash != h],
    )
    built: list[RecallBlock] = []
    render_settings = settings.render_settings()
    chosen = [
        (
            bid,
            plan,
            {
                m: known[m] if m in known and known[m].content_hash == h else exact[(m, h)]
                for m, h in plan.members
            },
        )
        for bid, plan in to_create
    ]
    # A version classified in this pass is rendered from that analysis (a reply's
    # depends on its parent); any other only needs facts no parent changes.
    rendered = {
        (m, v.content_hash): subjects[m]
        if m in subjects and subjects[m].version.content_hash == v.content_hash
        else Subject(v)
        for _, _, by_id in chosen
        for m, v in by_id.items()
    }
    analysed = await analyses.ensure(rendered.values())
    for bid, plan, by_id in chosen:
        facts = {
            m: analysed[subject_id(rendered[(m, v.content_hash)])].facts for m, v in by_id.items()
        }
        block = render(plan, bid, source_kind, channel, by_id, render_settings, now_us, facts)
        block = llm_detect.promoted_block(block, promoted)
        # A member whose newer version is not yet processed makes the block stale.
        stale = any(m not in known or known[m].content_hash != h for m, h in plan.members)
        built.append(replace(block, dirty=True) if stale else block)
    await block_store.delete_blocks(conn, [ref.seq for ref in existing if ref.id not in desired])
    await block_store.insert_blocks(conn, built)
    await block_store.clear_block_dirty(
        conn, [ref.seq for ref in existing if ref.id in desired and ref.dirty]
    )
    return len(built)
