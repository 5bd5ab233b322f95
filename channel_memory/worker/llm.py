"""The LLM processor: writes LLM rollups off the read path, within durable daily caps.

The only module that imports ``litellm``, and only on the first call (the
import is slow and heavy, and the feed must never load it). One pass:

1. plans windows of ordinary messages that ended between ``llm.lookback`` and
   ``feed.raw_recent_window`` ago (newer ones are served raw anyway);
2. skips windows an LLM block already covers with exactly these versions;
   serves the cache for windows asked before (a cached rejection is not bought
   again); otherwise
3. checks the breaker and the four caps against the call's projected cost,
   reserves the call durably, calls with a timeout, retries with backoff, and
   settles the actual cost; a failed call still counts;
4. accepts only output that passes :func:`~channel_memory.worker.llm_rollups.check_output`,
   caches it, and writes the block only if its sources are still current.

With ``llm.detect``, each channel's windows are first asked which of their ordinary
messages carry a decision (:mod:`channel_memory.worker.llm_detect`), through the same
cache, caps, retries and breaker: a promoted message is queued for derivation, which
serves it as a hard event, and no rollup is bought this pass for a window it was in.

Network calls never happen inside a write transaction. On any failure, cap or
timeout nothing is written but the spend: the deterministic blocks keep serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from channel_memory.kernel import groups
from channel_memory.kernel.config import LlmSettings, Settings
from channel_memory.kernel.models import MessageKey, SourceVersion
from channel_memory.kernel.timefmt import MICROS_PER_SECOND, Clock, utc_day
from channel_memory.store import Store, sources
from channel_memory.store import blocks as block_store
from channel_memory.store import dirty as dirty_store
from channel_memory.store import llm as llm_store
from channel_memory.worker import llm_detect
from channel_memory.worker.llm_rollups import (
    Accepted,
    Rejected,
    Window,
    WindowPlan,
    cache_key,
    check_output,
    llm_block,
    plan_windows,
    projected_tokens,
    prompt,
)
from channel_memory.worker.render import RenderSettings

log = logging.getLogger("channel_memory.worker.llm")
Sleep = Callable[[float], Awaitable[None]]


class CallFailed(Exception):
    """A model call failed (timeout, provider error, no answer). Carries no content."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class Completion:
    text: str | None
    usd: float
    """What the call cost: litellm's response cost, else ``llm.cost_per_call_usd``."""


class ModelClient(Protocol):
    def projected_usd(self, messages: Sequence[Mapping[str, str]]) -> float: ...

    async def complete(self, messages: Sequence[Mapping[str, str]]) -> Completion: ...

    async def aclose(self) -> None: ...


def _load_litellm() -> Any:
    """Import litellm offline and quiet: no price-map download, no content in our logs."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        # litellm's loggers can print requests and provider bodies (message content)
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL)
        logger.propagate = False
    return litellm


class LiteLlmClient:
    """Calls any litellm model; ``extra`` is passed through (tests use ``mock_response``)."""

    def __init__(self, settings: LlmSettings, extra: Mapping[str, Any] | None = None) -> None:
        assert settings.model is not None
        self.settings = settings
        self.model = settings.model
        self.extra = dict(extra or {})
        self._litellm: Any = None

    @property
    def litellm(self) -> Any:
        if self._litellm is None:
            self._litellm = _load_litellm()
        return self._litellm

    def projected_usd(self, messages: Sequence[Mapping[str, str]]) -> float:
        """The cost of a call at the model's price for its prompt and a full-length answer."""
        try:
            prompt_usd, answer_usd = self.litellm.cost_per_token(
                model=self.model,
                prompt_tokens=projected_tokens(messages),
                completion_tokens=self.settings.max_output_tokens,
            )
            return float(prompt_usd) + float(answer_usd)
        except Exception:  # not priced: a local or custom model
            return self.settings.cost_per_call_usd

    async def complete(self, messages: Sequence[Mapping[str, str]]) -> Completion:
        s = self.settings
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "timeout": s.timeout,
            "max_tokens": s.max_output_tokens,
            "temperature": 0,
            "num_retries": 0,
            "response_format": {"type": "json_object"},
            "drop_params": True,
            **self.extra,
        }
        if s.api_base:
            kwargs["api_base"] = s.api_base
        if s.api_key is not None:
            kwargs["api_key"] = s.api_key.get_secret_value()
        try:
            response = await asyncio.wait_for(
                self.litellm.acompletion(**kwargs), timeout=s.timeout + 5
            )
        except TimeoutError:
            raise CallFailed("timeout") from None
        except Exception as exc:  # the message may quote the provider's body: type only
            kind = "timeout" if "timeout" in type(exc).__name__.lower() else "provider_error"
            raise CallFailed(kind) from None
        try:
            text = response.choices[0].message.content
        except (AttributeError, IndexError):
            text = None
        return Completion(text, self._actual_usd(response))

    async def aclose(self) -> None:
        """Stop litellm's background logging task on this event loop (if litellm was used)."""
        if self._litellm is None:
            return
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(GLOBAL_LOGGING_WORKER.flush(), timeout=2)
        await GLOBAL_LOGGING_WORKER.stop()

    def _actual_usd(self, response: Any) -> float:
        """litellm's cost for a priced model; the configured estimate for an unpriced one."""
        if not self._priced():
            return self.settings.cost_per_call_usd
        cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
        if cost is None:
            try:
                cost = self.litellm.completion_cost(completion_response=response)
            except Exception:
                return self.settings.cost_per_call_usd
        return float(cost)

    def _priced(self) -> bool:
        try:
            self.litellm.cost_per_token(model=self.model, prompt_tokens=1, completion_tokens=1)
        except Exception:
            return False
        return True


@dataclass(slots=True)
class PassReport:
    """What one pass did (for tests, telemetry and the benchmark)."""

    windows: int = 0
    calls: int = 0
    written: int = 0
    cache_hits: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    failures: int = 0
    capped: str | None = None
    breaker_open: bool = False
    detect_windows: int = 0
    """Windows asked (or answered from the cache) which messages carry a decision."""
    detect_cached: int = 0
    promoted: int = 0
    """Messages newly promoted to hard events by model-assisted detection."""


class LlmMetrics(Protocol):
    def llm_call(self, outcome: str, usd: float) -> None: ...

    def llm_promoted(self, count: int) -> None: ...

    def llm_state(
        self, calls_today: int, usd_today: float, capped: bool, breaker: bool
    ) -> None: ...


class _Stop(Exception):
    """End the pass (breaker open, deployment cap, shutdown)."""


class LlmProcessor:
    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        render_settings: RenderSettings,
        *,
        client: ModelClient | None = None,
        sleep: Sleep = asyncio.sleep,
        metrics: LlmMetrics | None = None,
        wake: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.llm = settings.llm
        assert self.llm.model is not None, "llm.model is required"
        self.model: str = self.llm.model
        self.clock = clock
        self.render_settings = render_settings
        self.client: ModelClient = client or LiteLlmClient(self.llm)
        self.sleep = sleep
        self.metrics = metrics
        self.wake = wake
        """Called after a promotion queued messages for derivation."""
        self._stop: asyncio.Event | None = None
        self.plan = WindowPlan(
            window_us=max(60, int(self.llm.window)) * MICROS_PER_SECOND,
            min_window=self.llm.min_window,
            max_window=self.llm.max_window,
            summary_min_chars=self.llm.summary_min_chars,
        )

    # --- one pass ------------------------------------------------------------------------

    async def run_once(self, stop: asyncio.Event | None = None) -> PassReport:
        """Summarise every eligible window not yet summarised, newest first, within the caps."""
        report = PassReport()
        self._stop = stop
        now = self.clock()
        w = self.plan.window_us
        raw_recent_us = int(self.settings.feed.raw_recent_window * MICROS_PER_SECOND)
        low = now - int(self.llm.lookback * MICROS_PER_SECOND)
        low -= low % w
        high = now - raw_recent_us
        high -= high % w
        async with self.store.read() as conn:
            channels = await llm_store.channels_with_ordinary(conn, low, high)
            breaker = await llm_store.breaker(conn)
        try:
            for channel in channels:
                await self._channel(channel, low, high, breaker, report)
        except _Stop:
            pass
        report.breaker_open = breaker.open_until_us > self.clock()
        await self._report_state(report)
        log.info(
            "llm pass: %d calls, %d rollups written, %d cache hits, %d failures, %d rejected; "
            "detection: %d windows, %d from cache, %d promoted",
            report.calls, report.written, report.cache_hits, report.failures,
            sum(report.rejected.values()), report.detect_windows, report.detect_cached,
            report.promoted,
        )  # fmt: skip
        return report

    async def _channel(
        self,
        channel: str,
        low: int,
        high: int,
        breaker: llm_store.Breaker,
        report: PassReport,
    ) -> None:
        promoted: set[str] = set()
        if self.llm.detect and not await self._detect_channel(
            channel, low, high, breaker, report, promoted
        ):
            return  # capped or failing here: the next channel may still be served
        async with self.store.read() as conn:
            rows = await llm_store.ordinary_rows_with_chars(conn, channel, low, high)
            existing = await llm_store.llm_blocks(conn, channel)
        windows = plan_windows(rows, self.plan)
        wanted = {window.group_key for window in windows}
        stale = [b.seq for b in existing if low <= b.from_us < high and b.group_key not in wanted]
        if stale:  # a window that no longer exists (its messages left, or fell below minimum)
            async with self.store.write() as conn:
                await block_store.delete_blocks(conn, stale)
        done = {(b.group_key, b.members) for b in existing}
        for window in sorted(windows, key=lambda w: (w.last_us, w.group_key), reverse=True):
            if self._stop is not None and self._stop.is_set():
                raise _Stop
            if (window.group_key, window.members) in done:
                continue
            if promoted.intersection(window.message_ids):
                continue  # its messages change class first: the next pass sees the new window
            report.windows += 1
            if not await self._window(window, breaker, report):
                return  # capped or failing here: the next channel may still be served

    async def _window(self, window: Window, breaker: llm_store.Breaker, report: PassReport) -> bool:
        """Serve one window from the cache or a call; False when the channel should get no
        more calls this pass (its cap, or a window out of retries)."""
        key = cache_key(window, self.model)
        day = utc_day(self.clock())
        async with self.store.read() as conn:
            entry = await llm_store.cached(conn, key)
            versions = await sources.exact_versions(
                conn, window.source_kind, window.channel_id, list(window.members)
            )
        if len(versions) < len(window.members):
            return True  # changed since planned: the next pass sees the new window
        by_id = {m: versions[(m, h)] for m, h in window.members}
        if entry is not None:
            if entry.status == "ok" and entry.kind and entry.text is not None:
                answer = Accepted(entry.kind, entry.text, entry.score or 0.0)
                async with self.store.write() as conn:
                    await llm_store.count_cache_hit(conn, day, window.channel_id)
                    report.written += await self._write_block(conn, window, by_id, answer)
                report.cache_hits += 1
            return True
        messages = prompt(window, by_id, self.llm.max_summary_chars)
        completion = await self._call(window, messages, day, breaker, report)
        if completion is None:
            return False
        source_chars = sum(len(v.content) for v in by_id.values())
        outcome = check_output(completion.text, window, self.llm.max_summary_chars, source_chars)
        async with self.store.write() as conn:
            if isinstance(outcome, Rejected):
                await llm_store.settle_call(conn, day, window.channel_id, 0, rejected=True)
                entry_out = llm_store.CachedRollup("rejected", None, None, None, outcome.reason)
            else:
                entry_out = llm_store.CachedRollup(
                    "ok", outcome.kind, outcome.text, outcome.score, None
                )
            await llm_store.store_cached(
                conn, key, window.channel_id, self.model, window.message_ids, entry_out,
                self.clock(),
            )  # fmt: skip
            if isinstance(outcome, Accepted):
                report.written += await self._write_block(conn, window, by_id, outcome)
        if isinstance(outcome, Rejected):
            report.rejected[outcome.reason] = report.rejected.get(outcome.reason, 0) + 1
            log.warning("llm output rejected: %s", outcome.reason)
        self._metric("rejected" if isinstance(outcome, Rejected) else "ok", completion.usd)
        return True

    # --- model-assisted detection --------------------------------------------------------

    async def _detect_channel(
        self,
        channel: str,
        low: int,
        high: int,
        breaker: llm_store.Breaker,
        report: PassReport,
        promoted: set[str],
    ) -> bool:
        """Ask each detection window of a channel (newest first) which messages carry a
        decision, adding the ids promoted to ``promoted``; False when the channel should
        get no more calls this pass."""
        async with self.store.read() as conn:
            rows = await llm_store.detect_rows(conn, channel, low, high)
        windows = llm_detect.plan_detect_windows(rows, self.plan.window_us, self.llm.max_window)
        for window in sorted(windows, key=lambda w: (w.last_us, w.group_key), reverse=True):
            if self._stop is not None and self._stop.is_set():
                raise _Stop
            report.detect_windows += 1
            if not await self._detect(window, breaker, report, promoted):
                return False
        return True

    async def _detect(
        self,
        window: Window,
        breaker: llm_store.Breaker,
        report: PassReport,
        promoted: set[str],
    ) -> bool:
        """Serve one detection window from the cache or a call; False as :meth:`_window`."""
        key = llm_detect.detect_cache_key(window, self.model)
        day = utc_day(self.clock())
        async with self.store.read() as conn:
            entry = await llm_store.cached(conn, key)
            versions = await sources.exact_versions(
                conn, window.source_kind, window.channel_id, list(window.members)
            )
        if len(versions) < len(window.members):
            return True  # changed since planned: the next pass sees the new window
        if entry is not None:
            report.detect_cached += 1
            if entry.status == "ok" and entry.text is not None:
                found = llm_detect.decode_found(entry.text)
                async with self.store.write() as conn:
                    added = await self._promote(conn, window, found)
                    if added:  # the answer was needed again (e.g. an edit undone)
                        await llm_store.count_cache_hit(conn, day, window.channel_id)
                self._promoted(added, report, promoted)
            return True
        by_id = {m: versions[(m, h)] for m, h in window.members}
        messages = llm_detect.detect_prompt(window, by_id)
        completion = await self._call(window, messages, day, breaker, report)
        if completion is None:
            return False
        outcome = llm_detect.check_detection(completion.text, window)
        ignored = {outcome.reason: 1} if isinstance(outcome, Rejected) else outcome.ignored
        added = []
        async with self.store.write() as conn:
            if ignored:
                await llm_store.settle_call(conn, day, window.channel_id, 0, rejected=True)
            if isinstance(outcome, Rejected):
                entry_out = llm_store.CachedRollup(
                    "rejected", llm_detect.DETECT_KIND, None, None, outcome.reason
                )
            else:
                text = llm_detect.encode_found(outcome.found)
                entry_out = llm_store.CachedRollup("ok", llm_detect.DETECT_KIND, text, None, None)
            await llm_store.store_cached(
                conn, key, window.channel_id, self.model, window.message_ids, entry_out,
                self.clock(),
            )  # fmt: skip
            if not isinstance(outcome, Rejected):
                added = await self._promote(conn, window, outcome.found)
        for reason, count in ignored.items():
            report.rejected[f"detect_{reason}"] = report.rejected.get(f"detect_{reason}", 0) + count
            log.warning("llm detection output ignored: %s (%d)", reason, count)
        self._promoted(added, report, promoted)
        self._metric("rejected" if isinstance(outcome, Rejected) else "ok", completion.usd)
        return True

    async def _promote(
        self, conn: Any, window: Window, found: Sequence[tuple[str, str]]
    ) -> list[str]:
        """Record the promotions of messages still ordinary at the version asked about, and
        queue them for derivation; returns the ids newly promoted."""
        hashes = dict(window.members)
        rows = await block_store.derived_rows(conn, window.channel_id, [m for m, _ in found])
        name = llm_detect.processor(self.model)
        promotions = [
            llm_store.Promotion(message_id, hashes[message_id], event_type, name)
            for message_id, event_type in found
            if (row := rows.get(message_id)) is not None
            and row.content_hash == hashes[message_id]
            and row.cls in groups.ORDINARY_CLASSES
        ]
        now = self.clock()
        added = await llm_store.store_promotions(conn, window.channel_id, promotions, now)
        if added:
            keys = [MessageKey(window.source_kind, window.channel_id, m) for m in added]
            await dirty_store.mark_dirty(conn, keys, now)
            await block_store.mark_blocks_citing_dirty(conn, window.channel_id, added)
        return added

    def _promoted(self, added: Sequence[str], report: PassReport, promoted: set[str]) -> None:
        if not added:
            return
        report.promoted += len(added)
        promoted.update(added)
        if self.metrics is not None:
            self.metrics.llm_promoted(len(added))
        if self.wake is not None:
            self.wake()

    async def _call(
        self,
        window: Window,
        messages: Sequence[Mapping[str, str]],
        day: int,
        breaker: llm_store.Breaker,
        report: PassReport,
    ) -> Completion | None:
        """Call with retries; None when the channel's cap stops it or the retries run out.
        Raises ``_Stop`` when the breaker opens or the deployment is capped."""
        projected = self.client.projected_usd(messages)
        for attempt in range(self.llm.retries + 1):
            if breaker.open_until_us > self.clock():
                raise _Stop
            cap = await self._cap_reached(day, window.channel_id, projected)
            if cap is not None:
                report.capped = cap
                deployment_wide = cap in ("calls_per_day", "usd_per_day")
                async with self.store.write() as conn:
                    where = llm_store.DEPLOYMENT if deployment_wide else window.channel_id
                    await llm_store.mark_capped(conn, day, where, cap)
                log.warning("llm cap reached: %s (channel %s)", cap, window.channel_id)
                if deployment_wide:
                    raise _Stop
                return None
            async with self.store.write() as conn:
                await llm_store.reserve_call(conn, day, window.channel_id, projected)
            report.calls += 1
            try:
                completion = await self._interruptible(self.client.complete(messages))
            except CallFailed as failure:
                report.failures += 1
                breaker.failures += 1
                if breaker.failures >= self.llm.breaker_failures:
                    cooldown = int(self.llm.breaker_cooldown * MICROS_PER_SECOND)
                    breaker.open_until_us = self.clock() + cooldown
                async with self.store.write() as conn:
                    await llm_store.settle_call(conn, day, window.channel_id, 0, failed=True)
                    await llm_store.set_breaker(conn, breaker)
                log.warning("llm call failed: %s (attempt %d)", failure.kind, attempt + 1)
                self._metric("failed", projected)
                if attempt < self.llm.retries and breaker.open_until_us <= self.clock():
                    await self.sleep(self.llm.backoff * 2**attempt)
                continue
            async with self.store.write() as conn:
                await llm_store.settle_call(
                    conn, day, window.channel_id, completion.usd - projected
                )
                if breaker.failures or breaker.open_until_us:
                    breaker.failures, breaker.open_until_us = 0, 0
                    await llm_store.set_breaker(conn, breaker)
            return completion
        if breaker.open_until_us > self.clock():
            raise _Stop
        return None  # out of retries: the next pass tries again, within the caps

    async def _interruptible(self, call: Awaitable[Completion]) -> Completion:
        """Await a call, abandoning it when the worker is asked to stop (its reservation
        stays counted; nothing else was written)."""
        work = asyncio.ensure_future(call)
        if self._stop is None:
            return await work
        stopper = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait({work, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if not work.done():
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError, CallFailed):
                await work
            raise _Stop
        return work.result()

    async def _cap_reached(self, day: int, channel: str, projected: float) -> str | None:
        """The first cap one more call of ``projected`` USD would break, if any."""
        async with self.store.read() as conn:
            mine = await llm_store.usage(conn, day, channel)
            everyone = await llm_store.usage(conn, day, llm_store.DEPLOYMENT)
        s = self.llm
        if everyone.calls + 1 > s.calls_per_day:
            return "calls_per_day"
        if everyone.usd + projected > s.usd_per_day:
            return "usd_per_day"
        if mine.calls + 1 > s.calls_per_channel_day:
            return "calls_per_channel_day"
        if mine.usd + projected > s.usd_per_channel_day:
            return "usd_per_channel_day"
        return None

    async def _write_block(
        self,
        conn: Any,
        window: Window,
        versions: Mapping[str, SourceVersion],
        answer: Accepted,
    ) -> int:
        """Insert the window's block, replacing older LLM blocks of its group, if its sources
        are still the current ordinary versions; returns blocks written."""
        rows = await block_store.derived_rows(conn, window.channel_id, window.message_ids)
        for message_id, content_hash in window.members:
            row = rows.get(message_id)
            if row is None or row.content_hash != content_hash:
                return 0
            if row.cls not in groups.ORDINARY_CLASSES:
                return 0
        block = llm_block(window, versions, answer, self.model, self.render_settings, self.clock())
        existing = await llm_store.llm_blocks_in_group(conn, window.channel_id, window.group_key)
        await block_store.delete_blocks(conn, existing)
        await block_store.insert_blocks(conn, [block])
        return 1

    async def aclose(self) -> None:
        """Release the model client's resources; call before the event loop ends."""
        await self.client.aclose()

    def _metric(self, outcome: str, usd: float) -> None:
        if self.metrics is not None:
            self.metrics.llm_call(outcome, usd)

    async def _report_state(self, report: PassReport) -> None:
        if self.metrics is None:
            return
        day = utc_day(self.clock())
        async with self.store.read() as conn:
            everyone = await llm_store.usage(conn, day, llm_store.DEPLOYMENT)
            capped = bool(await llm_store.capped_any(conn, day))
        self.metrics.llm_state(everyone.calls, everyone.usd, capped, report.breaker_open)
