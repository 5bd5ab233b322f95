"""``POST /v1/consumption``: a consumer settles a read after its turn.

Every feed answer and ``get_channel_messages`` result names, by ``read_id``, the
message versions it showed complete. ``handled`` consumes them for the caller;
``failed`` leaves them pending. The consumer is the authenticated principal
(its ``agent_id``); a read of another consumer answers exactly like an unknown one.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import Response

from channel_memory.feed.reads import consumer_of, limits
from channel_memory.http.api import AppContext, Endpoint, json_response, read_json, writer_busy
from channel_memory.kernel.errors import ApiError
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.wire import StrictModel
from channel_memory.store import WriterBusy, consumption
from channel_memory.store.consumption import READ_ID_PATTERN


class ConsumptionRequest(StrictModel):
    read_id: Annotated[str, Field(pattern=READ_ID_PATTERN)]
    """The ``read_id`` of a feed answer or tool result served to this consumer."""
    outcome: Literal["handled", "failed"]
    """``handled``: the versions it showed are consumed; ``failed``: they stay pending."""


class ConsumptionResponse(BaseModel):
    read_id: str
    outcome: Literal["handled", "failed"]
    """As the read was settled (the first settlement)."""
    versions: int
    """Message versions the read showed complete (and, when handled, consumed)."""


_NOT_FOUND = ApiError(404, "read_not_found", "no such read for this consumer")


async def settle_read(request: Request, ctx: AppContext, principal: Principal) -> Response:
    body = await read_json(request, ConsumptionRequest)
    try:
        async with ctx.store.write(ctx.settings.ingest.writer_wait) as conn:
            settled = await consumption.settle(
                conn,
                consumer_of(principal),
                body.read_id,
                body.outcome,
                ctx.clock(),
                limits=limits(ctx.settings),
            )
    except WriterBusy:
        raise writer_busy() from None
    if settled is None:
        # unknown, expired and another consumer's read: one answer, byte for byte
        raise ApiError(_NOT_FOUND.status, _NOT_FOUND.code, _NOT_FOUND.message)
    if settled.outcome != body.outcome:
        raise ApiError(
            409,
            "read_already_settled",
            f"this read was already settled as {settled.outcome}; a read is settled once",
        )
    return json_response(
        ConsumptionResponse(
            read_id=settled.read_id, outcome=settled.outcome, versions=settled.versions
        )
    )


ENDPOINTS = [
    Endpoint(
        "POST",
        "/v1/consumption",
        settle_read,
        "Settle a read after the consumer's turn: handled consumes the message versions it "
        "showed complete, failed leaves them pending. Idempotent; a read of another consumer "
        "answers 404 like an unknown one.",
        "read",
        ConsumptionRequest,
        ConsumptionResponse,
        extra_statuses=(404, 409),
    ),
]
