"""``POST /v1/consumption``: a consumer settles a read after its turn.

Every feed answer and ``get_channel_messages`` result names, by ``read_id``, the
message versions it showed complete. ``handled`` consumes them for the caller;
``failed`` leaves them pending. The consumer is the authenticated principal
(its ``agent_id``); a read of another consumer answers exactly like an unknown one.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from channel_memory.feed import reads
from channel_memory.feed.reads import ConsumptionRequest, ConsumptionResponse
from channel_memory.http.api import AppContext, Endpoint, json_response, read_json
from channel_memory.kernel.errors import writer_busy
from channel_memory.kernel.principal import Principal
from channel_memory.store import WriterBusy


async def settle_read(request: Request, ctx: AppContext, principal: Principal) -> Response:
    body = await read_json(request, ConsumptionRequest)
    try:
        # unknown, expired and another consumer's read: one 404, byte for byte
        settled = await reads.settle_read(ctx, principal, body.read_id, body.outcome)
    except WriterBusy:
        raise writer_busy() from None
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
