"""The worker: drains dirty markers into blocks, holds the per-database lease, keeps retention.

One :class:`Worker` runs per process that derives blocks (``serve`` or
``channel-memory worker``); the lease row makes sure only one of them works a
given database at a time. Its schedule comes from APScheduler (sweeps and
retention); ingest wakes it directly. All state lives in the database.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from channel_memory.kernel.config import Settings
from channel_memory.kernel.models import MessageKey
from channel_memory.kernel.timefmt import MICROS_PER_SECOND, Clock
from channel_memory.store import DeriveHook, Store
from channel_memory.store import blocks as block_store
from channel_memory.store import dirty as dirty_store
from channel_memory.store import lease as lease_store
from channel_memory.store import llm as llm_store
from channel_memory.store import retention as retention_store
from channel_memory.store import state as state_store
from channel_memory.store.connection import Connection
from channel_memory.worker.derive import Analyses, DeriveSettings, derive, pending_subjects
from channel_memory.worker.llm import LlmMetrics, LlmProcessor, ModelClient
from channel_memory.worker.rules import RuleSet, load_rules

log = logging.getLogger("channel_memory.worker")

FINGERPRINT_KEY = "derive_fingerprint"


def derive_settings(settings: Settings, rules: RuleSet | None = None) -> DeriveSettings:
    return DeriveSettings(
        rules=rules if rules is not None else load_rules(settings.worker.rules_file),
        bucket_us=int(settings.worker.noise_bucket * MICROS_PER_SECOND),
        rollup_size=settings.worker.rollup_size,
        hard_event_max_chars=settings.feed.hard_event_max_chars,
        promotions=settings.llm.enabled and settings.llm.detect,
    )


def derive_hook(settings: DeriveSettings, analyses: Analyses | None = None) -> DeriveHook:
    """Derivation inside a caller's transaction (ingest uses it for forgets)."""
    shared = analyses if analyses is not None else Analyses(settings)

    async def hook(conn: Connection, keys: Sequence[MessageKey], now_us: int) -> int:
        return await derive(conn, keys, settings, now_us, shared)

    return hook


def _failure(exc: BaseException) -> str:
    """A failure for the log by its types only (its text can quote stored content): the
    error's, and its cause's ("StorageUnavailable (ConnectionRefusedError)")."""
    cause = exc.__cause__
    return type(exc).__name__ + (f" ({type(cause).__name__})" if cause is not None else "")


def lazy_derive_hook(settings: Settings) -> DeriveHook:
    """:func:`derive_hook` whose rules (and their model) are loaded on its first call, not
    when it is made: for a process that may never derive (the MCP server reads only), so
    that it does not spend a second or more loading them at its start."""
    made: list[DeriveHook] = []

    async def hook(conn: Connection, keys: Sequence[MessageKey], now_us: int) -> object:
        if not made:
            made.append(derive_hook(derive_settings(settings)))
        return await made[0](conn, keys, now_us)

    return hook


class Worker:
    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        *,
        derive_with: DeriveSettings | None = None,
        holder: str | None = None,
        on_blocks: Callable[[int], object] | None = None,
        llm_client: ModelClient | None = None,
        llm_metrics: LlmMetrics | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self.derive_settings = derive_with or derive_settings(settings)
        self.analyses = Analyses(self.derive_settings)
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._retention_due = False
        self.processed = 0
        self.blocks_written = 0
        self._holding: bool | None = None  # the lease as last logged (None: not yet)
        self._on_blocks = on_blocks
        self._llm_wake = asyncio.Event()
        self.llm: LlmProcessor | None = None
        if settings.llm.enabled:
            self.llm = LlmProcessor(
                store,
                settings,
                clock,
                self.derive_settings.render_settings(),
                client=llm_client,
                metrics=llm_metrics,
                wake=self.wake,
            )

    @property
    def hook(self) -> DeriveHook:
        return derive_hook(self.derive_settings, self.analyses)

    def wake(self) -> None:
        """Ask for a prompt run (called after every ingest; cheap and idempotent)."""
        self._idle.clear()
        self._wake.set()

    def wake_llm(self) -> None:
        """Ask for an LLM pass now instead of at the next sweep."""
        self._llm_wake.set()

    async def wait_idle(self) -> None:
        """Return once the running worker has drained everything it was woken for."""
        await self._idle.wait()

    async def prepare(self) -> None:
        """Re-derive everything when the rules or rendering settings changed since last run."""
        async with self.store.write() as conn:
            known = await state_store.get_state(conn, FINGERPRINT_KEY)
            fingerprint = self.derive_settings.fingerprint
            if known != fingerprint:
                await block_store.mark_everything_dirty(conn, self.clock())
                await state_store.set_state(conn, FINGERPRINT_KEY, fingerprint)
                if known is not None:
                    log.info("derivation settings changed: every block is queued again")

    async def run_once(self, limit: int | None = None) -> int:
        """Derive one batch of dirty messages in one transaction; returns how many.

        The batch's versions (with the replies they re-derive, and the messages replies
        answer) are analysed first, from a read snapshot and in a worker thread: the
        event loop keeps serving, and the writer is taken only for the bookkeeping, so
        a long message delays neither reads nor ingest.
        """
        batch = limit or self.settings.worker.batch_size
        async with self.store.read() as conn:
            markers = await dirty_store.pending_dirty(conn, batch)
            if not markers:
                return 0
            subjects = await pending_subjects(
                conn, [key for _, key in markers], self.derive_settings.rules
            )
        await self.analyses.ensure(subjects)
        async with self.store.write() as conn:
            markers = await dirty_store.pending_dirty(conn, batch)
            if not markers:
                return 0
            written = await derive(
                conn,
                [key for _, key in markers],
                self.derive_settings,
                self.clock(),
                self.analyses,
            )
            await dirty_store.clear_markers(conn, [seq for seq, _ in markers])
        self.processed += len(markers)
        self.blocks_written += written
        if self._on_blocks is not None:
            self._on_blocks(written)
        return len(markers)

    async def drain(self) -> int:
        """Run until nothing is dirty."""
        total = 0
        while count := await self.run_once():
            total += count
        return total

    async def drain_holding(self) -> bool:
        """Run until nothing is dirty, renewing the lease after every batch; False when
        another process took the lease meanwhile (this one then stops deriving). A drain
        may outlast the lease (a backlog, every block queued again after a rules change):
        renewed, the lease is never free to a standby while its holder still derives."""
        while await self.run_once():
            if not await self._holds_lease():
                return False
        return True

    async def apply_retention(self) -> int:
        """Drop sources older than ``retention.days``, and what was derived from them."""
        now = self.clock()
        cutoff = self.settings.retention.cutoff_us(now)
        async with self.store.write() as conn:
            dropped = await retention_store.drop_sources_before(conn, cutoff)
            await derive(conn, dropped, self.derive_settings, now, self.analyses)
            await llm_store.forget_cached(conn, dropped)
        return len(dropped)

    async def _holds_lease(self) -> bool:
        worker = self.settings.worker
        ttl = int(max(worker.lease_ttl, 3 * worker.poll_interval) * MICROS_PER_SECOND)
        async with self.store.write() as conn:
            return await lease_store.acquire_lease(conn, self.holder, self.clock(), ttl)

    def _log_lease(self, holding: bool) -> None:
        """Say when this process starts or stops deriving (a lease taken, lost or held by
        another process), once per change."""
        if holding == self._holding:
            return
        if holding:
            log.info("holding the derivation lease: deriving (holder %s)", self.holder)
        elif self._holding is None:
            log.info("standing by: another process holds the derivation lease")
        else:
            log.info("lease lost to another process: standing by")
        self._holding = holding

    async def _drain_logged(self) -> bool:
        """:meth:`drain_holding`, logging what a drain that found work derived: how many
        messages, how many blocks written, how long it took (counts only, never content)."""
        processed, written, started = self.processed, self.blocks_written, self.clock()
        holding = await self.drain_holding()
        if self.processed > processed:
            log.info(
                "derived %d message(s), %d block(s) written, in %.1f s",
                self.processed - processed,
                self.blocks_written - written,
                max(0, self.clock() - started) / MICROS_PER_SECOND,
            )
        if not holding:
            self._log_lease(False)
        return holding

    async def run_forever(self, stop: asyncio.Event) -> None:
        """Work while holding the lease, until ``stop`` is set; stand by otherwise."""
        try:
            while not stop.is_set():
                self._wake.clear()
                try:
                    holding = await self._holds_lease()
                    self._log_lease(holding)
                    if holding:
                        if self._retention_due:
                            self._retention_due = False
                            await self.apply_retention()
                        if await self._drain_logged() and not self._wake.is_set():
                            self._idle.set()
                except Exception as exc:  # keep the loop alive; never log content
                    log.error("worker run failed: %s", _failure(exc))
                await _first_of(self._wake, stop, within=self.settings.worker.poll_interval)
        finally:
            async with self.store.write() as conn:
                await lease_store.release_lease(conn, self.holder)

    async def run_llm_forever(self, llm: LlmProcessor, stop: asyncio.Event) -> None:
        """LLM passes beside derivation (a slow provider never delays derivation): one at
        start and one per sweep, while holding the lease, until ``stop``."""
        while not stop.is_set():
            self._llm_wake.clear()
            try:
                if await self._holds_lease():
                    await llm.run_once(stop)
            except Exception as exc:  # keep the loop alive; never log content
                log.error("llm pass failed: %s", _failure(exc))
            await _first_of(self._llm_wake, stop, within=self.settings.worker.sweep_interval)

    async def aclose(self) -> None:
        """Release the LLM client (if any); call before the event loop ends."""
        if self.llm is not None:
            await self.llm.aclose()

    def scheduler(self) -> AsyncIOScheduler:
        """Sweeps every ``worker.sweep_interval`` and applies retention hourly."""
        scheduler = AsyncIOScheduler(
            timezone=UTC,
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 300},
        )

        async def sweep() -> None:
            self._llm_wake.set()
            self.wake()

        async def retention() -> None:
            self._retention_due = True
            self.wake()

        scheduler.add_job(
            sweep, "interval", seconds=self.settings.worker.sweep_interval, id="sweep"
        )
        scheduler.add_job(retention, "interval", hours=1, id="retention")
        return scheduler

    async def serve(self, stop: asyncio.Event) -> None:
        """Prepare, start the schedule and run until ``stop``; retention runs once at start."""
        await self.prepare()
        self._retention_due = True
        scheduler = self.scheduler()
        scheduler.start()
        llm_task = None
        if self.llm is not None:
            llm_task = asyncio.create_task(self.run_llm_forever(self.llm, stop), name="llm-pass")
        try:
            await self.run_forever(stop)
        finally:
            scheduler.shutdown(wait=False)
            if llm_task is not None:
                stop.set()
                await llm_task  # returns promptly: a call in flight is abandoned on stop


async def _first_of(event: asyncio.Event, stop: asyncio.Event, within: float) -> None:
    """Wait until ``event`` or ``stop`` is set, or ``within`` seconds pass."""
    waiter = asyncio.ensure_future(event.wait())
    stopper = asyncio.ensure_future(stop.wait())
    await asyncio.wait({waiter, stopper}, timeout=within, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    stopper.cancel()
