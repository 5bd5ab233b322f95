"""Ingest endpoints: the native batch and the peer-compatible write endpoints, the
HTTP face of the one write path (``channel_memory.ingest.service``)."""

from __future__ import annotations

from dataclasses import replace

from starlette.requests import Request
from starlette.responses import Response

from channel_memory.http.api import AppContext, Endpoint, json_response, read_json
from channel_memory.http.telemetry import counting, metered
from channel_memory.ingest.bounds import TimeBounds, content_too_long
from channel_memory.ingest.commands import AddCoverageGap, Command, ForgetMessages
from channel_memory.ingest.events import (
    EventResult,
    IngestBatch,
    IngestBatchResponse,
    PeerCoverageGapRequest,
    PeerCoverageGapResponse,
    PeerForgetRequest,
    PeerForgetResponse,
    PeerIngestRequest,
    PeerIngestResponse,
)
from channel_memory.ingest.service import (
    Build,
    IngestRejected,
    IngestReport,
    ingest,
    native_commands,
    resolve_kind,
)
from channel_memory.ingest.versions import ForgetResult, MessageResult
from channel_memory.kernel.errors import ApiError, writer_busy
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import format_rfc3339
from channel_memory.kernel.wire import ErrorDetail
from channel_memory.store import WriterBusy
from channel_memory.store.gaps import CoverageGap


async def _run(
    ctx: AppContext, principal: Principal, channel_ids: list[str], build: Build
) -> IngestReport:
    for index, channel_id in enumerate(channel_ids):
        if not principal.may_see(channel_id):
            raise ApiError(
                403,
                "channel_not_allowed",
                "this token may not write to the channel",
                [
                    ErrorDetail(
                        index=index,
                        field="channel_id",
                        code="channel_not_allowed",
                        message="channel outside the token's allowlist",
                    )
                ],
            )
    now_us = ctx.clock()
    build, commands = counting(build)
    try:
        report = await ingest(
            ctx.store,
            channel_ids,
            build,
            now_us=now_us,
            derive=ctx.derive,
            writer_wait=ctx.settings.ingest.writer_wait,
            bounds=TimeBounds.of(ctx.settings, now_us),
        )
    except IngestRejected as exc:
        detail = ErrorDetail(
            index=exc.index, field=exc.field, code=exc.detail_code, message=exc.message
        )
        raise ApiError(
            422, exc.code, f"{exc.message} (event {exc.index}, field {exc.field})", [detail]
        ) from None
    except WriterBusy:
        raise writer_busy() from None
    ctx.telemetry.ingest_applied(commands, report)
    ctx.wake()
    return report


def _event_result(
    index: int, kind: str, result: MessageResult | ForgetResult | CoverageGap
) -> EventResult:
    if isinstance(result, MessageResult):
        return EventResult(
            index=index,
            type=kind,
            source_handle=result.source_handle,
            content_hash=result.content_hash or None,
            observed_seq=result.observed_seq or None,
            inserted=result.inserted,
            current=result.current,
            forgotten=True if result.forgotten else None,
            expired=True if result.expired else None,
        )
    if isinstance(result, ForgetResult):
        return EventResult(
            index=index,
            type=kind,
            versions_forgotten=result.forgotten,
            messages_forgotten=result.messages,
        )
    return EventResult(index=index, type=kind, gap_id=result.id)


async def ingest_batch(request: Request, ctx: AppContext, principal: Principal) -> Response:
    batch = await read_json(request, IngestBatch, batch_field="events")
    limits = ctx.settings.ingest
    if len(batch.events) > limits.max_events:
        raise ApiError(
            422,
            "too_many_events",
            f"a batch holds at most {limits.max_events} events",
            [ErrorDetail(field="events", code="too_long", message="too many events")],
        )
    for index, event in enumerate(batch.events):
        if content_too_long(event, limits.max_content_chars):
            raise ApiError(
                422,
                "content_too_long",
                f"message content exceeds {limits.max_content_chars} characters (event {index})",
                [
                    ErrorDetail(
                        index=index,
                        field="message.content",
                        code="too_long",
                        message="content too long",
                    )
                ],
            )
    report = await _run(
        ctx, principal, [e.channel_id for e in batch.events], native_commands(batch.events)
    )
    results = [
        _event_result(i, event.type, result)
        for i, (event, result) in enumerate(zip(batch.events, report.results, strict=True))
    ]
    return json_response(
        IngestBatchResponse(
            results=results,
            inserted=report.inserted,
            duplicates=report.duplicates,
            ignored_forgotten=report.ignored_forgotten,
            ignored_expired=report.ignored_expired,
        ),
        exclude_none=True,
    )


async def peer_ingest(request: Request, ctx: AppContext, principal: Principal) -> Response:
    body = await read_json(request, PeerIngestRequest)
    if content_too_long(body, ctx.settings.ingest.max_content_chars):
        raise ApiError(422, "content_too_long", "message content is too long")
    now_us = ctx.clock()

    def build(kinds: dict[str, str]) -> list[Command]:
        kind = resolve_kind(kinds, 0, body.channel_id, body.source_kind())
        kinds.setdefault(body.channel_id, kind)
        return [body.to_command(kind, now_us)]

    report = await _run(ctx, principal, [body.channel_id], build)
    result = report.results[0]
    assert isinstance(result, MessageResult)
    return json_response(
        PeerIngestResponse(
            inserted=result.inserted,
            source_kind=result.key.source_kind,
            channel_id=result.key.channel_id,
            message_id=result.key.message_id,
            source_handle=result.source_handle,
            content_hash=result.content_hash,
            observed_seq=result.observed_seq,
            current=result.current,
            expired=True if result.expired else None,
        ),
        202,
        exclude_none=True,
    )


async def peer_forget(request: Request, ctx: AppContext, principal: Principal) -> Response:
    body = await read_json(request, PeerForgetRequest)

    def build(kinds: dict[str, str]) -> list[Command]:
        asked = body.source_kind.lower() if body.source_kind else None
        kind = resolve_kind(kinds, 0, body.channel_id, asked)
        return [
            ForgetMessages(
                kind, body.channel_id, tuple(dict.fromkeys(body.message_ids)), None, body.reason
            )
        ]

    report = await _run(ctx, principal, [body.channel_id], build)
    result = report.results[0]
    assert isinstance(result, ForgetResult)
    return json_response(PeerForgetResponse(forgotten=result.forgotten))


async def peer_coverage_gap(request: Request, ctx: AppContext, principal: Principal) -> Response:
    body = await read_json(request, PeerCoverageGapRequest)

    def build(kinds: dict[str, str]) -> list[Command]:
        kind = resolve_kind(kinds, 0, body.channel_id, None)
        kinds.setdefault(body.channel_id, kind)
        return [
            AddCoverageGap(
                kind,
                body.channel_id,
                body.from_,
                body.to,
                body.reason,
            )
        ]

    report = await _run(ctx, principal, [body.channel_id], build)
    gap = report.results[0]
    assert isinstance(gap, CoverageGap)
    return json_response(
        PeerCoverageGapResponse.model_validate(
            {
                "id": gap.id,
                "channel_id": gap.channel_id,
                "from": format_rfc3339(gap.from_us),
                "to": format_rfc3339(gap.to_us),
                "reason": gap.reason,
            }
        ),
        202,
    )


ENDPOINTS = [
    Endpoint(
        "POST",
        "/v1/ingest",
        ingest_batch,
        "Apply a batch of native events (message, delete, forget, coverage_gap, "
        "coverage_gap_resolved) atomically.",
        "ingest",
        IngestBatch,
        IngestBatchResponse,
    ),
    Endpoint(
        "POST",
        "/ingest",
        peer_ingest,
        "Peer-compatible: store one message version.",
        "ingest",
        PeerIngestRequest,
        PeerIngestResponse,
        202,
    ),
    Endpoint(
        "POST",
        "/forget",
        peer_forget,
        "Peer-compatible: forget messages; answers the number of versions forgotten.",
        "ingest",
        PeerForgetRequest,
        PeerForgetResponse,
    ),
    Endpoint(
        "POST",
        "/coverage-gaps",
        peer_coverage_gap,
        "Peer-compatible: record a period the bridge may have missed.",
        "ingest",
        PeerCoverageGapRequest,
        PeerCoverageGapResponse,
        202,
    ),
]
# every ingest endpoint's latency and refusals, by error code, in /metrics
ENDPOINTS = [replace(e, handler=metered(e.path, e.handler)) for e in ENDPOINTS]
