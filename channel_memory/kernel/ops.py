"""The record of one feed or tool call (a ``channel_context_op``), and what takes it.

The feed and the tools build these records, over HTTP and over MCP alike; the HTTP
face's telemetry (``channel_memory.http.telemetry``) counts them in ``/metrics`` and
writes each as one log line. The record holds counts, sizes, statuses and the
consumer's agent id — never message content, author names or query text.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

from channel_memory.kernel.errors import ApiError
from channel_memory.kernel.timefmt import format_rfc3339


@dataclass(slots=True)
class ContextOp:
    """The fields of one ``channel_context_op`` line (``docs/operations.md`` lists them)."""

    ts: str
    type: str
    consumer: str
    kind: str | None = None
    channels: list[str] = field(default_factory=list)
    retained: int = 0
    returned: int = 0
    omitted: int = 0
    raw_bytes: int = 0
    digest_bytes: int = 0
    digest_blocks: int = 0
    coverage_gaps: int = 0
    deterministic_only: bool = True
    status: str | None = None
    tool_name: str | None = None
    latency_ms: float = 0.0
    status_code: int = 200
    error: str | None = None


class OpRecorder(Protocol):
    """Where a served call's record goes (the application's telemetry)."""

    def record(self, op: ContextOp) -> None:
        """Count ``op`` and write its one ``channel_context_op`` line."""
        ...


def refused_op(
    kind: str, tool: str | None, consumer: str, error: ApiError, started: float, now_us: int
) -> ContextOp:
    """The ``channel_context_op`` of a feed or tool call that was refused or failed: its
    status code and error code (never a value the caller sent)."""
    return ContextOp(
        ts=format_rfc3339(now_us),
        type=kind,
        consumer=consumer,
        tool_name=tool,
        status="error",
        status_code=error.status,
        error=error.code,
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
    )
