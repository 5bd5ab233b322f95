"""Incremental derivation: recompute exactly the blocks a set of changed messages affects.

For each changed message the worker re-classifies its current version, then
rebuilds every group its old or new class belongs to, plus its own per-message
block. A block is kept when its id (a hash of its inputs) is unchanged, so
unchanged blocks keep their ``generated_at``. Derived rows and blocks are
written in the caller's transaction, so together they are always a consistent
snapshot of the sources as last processed.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import aiosqlite

from channel_memory.models import MessageKey, RecallBlock, SourceVersion
from channel_memory.store import blocks as block_store
from channel_memory.store import sources
from channel_memory.store.blocks import DerivedRow
from channel_memory.worker.classify import classify
from channel_memory.worker.render import BlockPlan, RenderSettings, block_id, render
from channel_memory.worker.rules import RuleSet

RENDER_VERSION = "1"
"""Bump when rendering changes, so every block is rebuilt with the new text."""

GROUP_PREFIX = {
    "telemetry": "t:",
    "ack": "a:",
    "repeat": "r:",
    "topic": "p:",
    "sequence": "q:",
}
CLASS_OF_PREFIX = {prefix: cls for cls, prefix in GROUP_PREFIX.items()}


@dataclass(frozen=True, slots=True)
class DeriveSettings:
    rules: RuleSet
    bucket_us: int
    rollup_size: int
    hard_event_max_chars: int

    @property
    def fingerprint(self) -> str:
        """Changes whenever a block built from the same sources could come out differently."""
        seed = (
            f"{RENDER_VERSION}|{self.rules.fingerprint}|{self.bucket_us}|{self.rollup_size}|"
            f"{self.hard_event_max_chars}"
        )
        return hashlib.sha256(seed.encode()).hexdigest()[:16]

    def render_settings(self) -> RenderSettings:
        return RenderSettings(self.rules, self.hard_event_max_chars, self.fingerprint)


def group_key_of(row: DerivedRow) -> str | None:
    """The collapse or rollup group a derived row belongs to (beyond its own block)."""
    if row.group_key is None:
        return None
    return GROUP_PREFIX[row.cls] + row.group_key


def _members(rows: Sequence[DerivedRow]) -> tuple[tuple[str, str], ...]:
    return tuple((r.message_id, r.content_hash) for r in rows)


def plan_message(row: DerivedRow | None, repeat_active: bool) -> list[BlockPlan]:
    """A message's own block: hard event, tombstone or raw excerpt (or none when collapsed)."""
    if row is None:
        return []
    key = "m:" + row.message_id
    members = _members([row])
    if row.cls == "tombstone":
        return [BlockPlan("tombstone", key, members, None, row.score)]
    if row.cls == "hard_event":
        return [BlockPlan("hard_event", key, members, row.event_type, row.score)]
    if row.cls in ("telemetry", "ack") or (row.cls == "repeat" and repeat_active):
        return []
    return [BlockPlan("raw_excerpt", key, members, None, 0.5)]


def plan_group(key: str, rows: Sequence[DerivedRow], rollup_size: int) -> list[BlockPlan]:
    """The blocks of one collapse or rollup group, from its chronological members."""
    prefix = key[:2]
    if prefix == "t:" and rows:
        return [BlockPlan("telemetry_count", key, _members(rows), None, 0.1)]
    if prefix == "a:" and rows:
        return [BlockPlan("low_value_ack", key, _members(rows), "low_value_acknowledgement", 0.1)]
    if prefix == "r:" and len(rows) >= 2:
        return [BlockPlan("decision_repeat", key, _members(rows), "repeated_decision", 0.3)]
    if prefix == "p:" and len(rows) >= 2:
        return [BlockPlan("topic_rollup", key, _members(rows), None, 0.4)]
    if prefix == "q:" and len(rows) >= 2:
        return [
            BlockPlan("sequence_rollup", key, _members(chunk), None, 0.4)
            for chunk in sequence_chunks(rows, rollup_size)
        ]
    return []


def sequence_chunks(rows: Sequence[DerivedRow], size: int) -> list[Sequence[DerivedRow]]:
    """Consecutive runs of ``size`` messages; a lone trailing message joins the run before it."""
    chunks = [rows[i : i + size] for i in range(0, len(rows), size)]
    if len(chunks) >= 2 and len(chunks[-1]) == 1:
        chunks[-2] = [*chunks[-2], *chunks[-1]]
        chunks.pop()
    return [chunk for chunk in chunks if len(chunk) >= 2]


async def derive(
    conn: aiosqlite.Connection,
    keys: Iterable[MessageKey],
    settings: DeriveSettings,
    now_us: int,
) -> int:
    """Bring derived rows and blocks up to date for ``keys``; returns blocks written.

    Runs inside the caller's write transaction.
    """
    by_channel: dict[tuple[str, str], set[str]] = defaultdict(set)
    for key in keys:
        by_channel[(key.source_kind, key.channel_id)].add(key.message_id)
    written = 0
    for (kind, channel), message_ids in sorted(by_channel.items()):
        written += await _derive_channel(conn, kind, channel, message_ids, settings, now_us)
    return written


async def _derive_channel(
    conn: aiosqlite.Connection,
    source_kind: str,
    channel: str,
    message_ids: set[str],
    settings: DeriveSettings,
    now_us: int,
) -> int:
    current = await sources.current_versions(conn, source_kind, channel, message_ids)
    old = await block_store.derived_rows(conn, channel, message_ids)
    new: dict[str, DerivedRow] = {}
    for message_id, version in current.items():
        c = classify(version, settings.rules, settings.bucket_us)
        new[message_id] = DerivedRow(
            source_kind,
            channel,
            message_id,
            version.content_hash,
            version.created_us,
            c.cls,
            c.event_type,
            c.score,
            c.group_key,
        )
    affected: set[str] = set()
    for message_id in message_ids:
        affected.add("m:" + message_id)
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

    members = await _load_groups(conn, channel, [k for k in affected if not k.startswith("m:")])
    # A repeat group crossing two members changes its members' own blocks.
    for key, rows in members.items():
        if key.startswith("r:"):
            affected.update("m:" + r.message_id for r in rows)
    own_ids = [k[2:] for k in affected if k.startswith("m:")]
    own = {**await block_store.derived_rows(conn, channel, set(own_ids) - new.keys()), **new}
    missing_repeat_groups = {
        group_key_of(row)
        for row in own.values()
        if row.cls == "repeat" and group_key_of(row) not in members
    }
    members.update(await _load_groups(conn, channel, [k for k in missing_repeat_groups if k]))

    plans: list[BlockPlan] = []
    for key in sorted(affected):
        if key.startswith("m:"):
            row = own.get(key[2:])
            group = group_key_of(row) if row is not None else None
            active = (
                row is not None and row.cls == "repeat" and len(members.get(group or "", [])) >= 2
            )
            plans += plan_message(row, active)
        else:
            plans += plan_group(key, members.get(key, []), settings.rollup_size)
    return await _apply_plans(
        conn, source_kind, channel, affected, plans, current, settings, now_us
    )


async def _load_groups(
    conn: aiosqlite.Connection, channel: str, keys: Iterable[str]
) -> dict[str, list[DerivedRow]]:
    by_class: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        by_class[CLASS_OF_PREFIX[key[:2]]].append(key[2:])
    members: dict[str, list[DerivedRow]] = {}
    for cls, group_keys in by_class.items():
        found = await block_store.group_members(conn, channel, cls, group_keys)
        members.update({GROUP_PREFIX[cls] + gk: rows for gk, rows in found.items()})
    return members


async def _apply_plans(
    conn: aiosqlite.Connection,
    source_kind: str,
    channel: str,
    affected: set[str],
    plans: Sequence[BlockPlan],
    current: dict[str, SourceVersion],
    settings: DeriveSettings,
    now_us: int,
) -> int:
    fingerprint = settings.fingerprint
    desired = {block_id(channel, plan, fingerprint): plan for plan in plans}
    existing = await block_store.blocks_in_groups(conn, channel, affected)
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
    for bid, plan in to_create:
        by_id = {
            m: known[m] if m in known and known[m].content_hash == h else exact[(m, h)]
            for m, h in plan.members
        }
        block = render(plan, bid, source_kind, channel, by_id, render_settings, now_us)
        # A member whose newer version is not yet processed makes the block stale.
        stale = any(m not in known or known[m].content_hash != h for m, h in plan.members)
        built.append(replace(block, dirty=True) if stale else block)
    await block_store.delete_blocks(conn, [ref.seq for ref in existing if ref.id not in desired])
    await block_store.insert_blocks(conn, built)
    await block_store.clear_block_dirty(
        conn, [ref.seq for ref in existing if ref.id in desired and ref.dirty]
    )
    return len(built)
