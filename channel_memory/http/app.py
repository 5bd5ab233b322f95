"""The ASGI application: routes of every stage, auth, errors, lifespan."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from channel_memory.http import (
    consumption,
    feed_peer,
    feed_routes,
    ingest_routes,
    operations,
    tool_peer,
    tool_routes,
)
from channel_memory.http.api import AppContext, Endpoint
from channel_memory.http.auth import ANONYMOUS, TokenTable
from channel_memory.http.body_limit import BodyLimitMiddleware
from channel_memory.http.openapi import openapi_document
from channel_memory.http.telemetry import Telemetry
from channel_memory.kernel.config import Settings
from channel_memory.kernel.errors import ApiError
from channel_memory.kernel.ops import refused_op
from channel_memory.kernel.timefmt import Clock, wall_clock
from channel_memory.store import StorageError, Store
from channel_memory.worker.llm import ModelClient
from channel_memory.worker.runner import Worker, derive_settings

log = logging.getLogger("channel_memory")

_HTTP_CODES = {
    404: ("not_found", "no such endpoint"),
    405: ("method_not_allowed", "method not allowed on this endpoint"),
}


def endpoints() -> list[Endpoint]:
    """Every endpoint the sidecar serves, in documentation order."""
    return [
        operations.HEALTH,
        *ingest_routes.ENDPOINTS,
        *tool_peer.ENDPOINTS,
        *tool_routes.ENDPOINTS,
        *consumption.ENDPOINTS,
        *feed_peer.ENDPOINTS,
        *feed_routes.ENDPOINTS,
        *operations.ENDPOINTS,
    ]


_TOOLS = "/v1/tools/"
_RECORDED: dict[str, tuple[str | None, str | None]] = {
    "/channel-awareness": ("feed", None),
    "/v1/blocks/{block_id}": ("tool", "expand_digest_block"),
}
"""The calls besides ``/v1/tools/…`` whose refusals are recorded as feed or tool calls."""


def _route(endpoint: Endpoint) -> Route:
    kind, tool = _RECORDED.get(endpoint.path, (None, None))
    if endpoint.path.startswith(_TOOLS):
        kind, tool = "tool", endpoint.path.removeprefix(_TOOLS)

    async def handle(request: Request) -> Response:
        ctx: AppContext = request.app.state.ctx
        principal = ANONYMOUS
        if endpoint.scope is not None:
            principal = ctx.tokens.authenticate(request)  # an unknown token: no record
        started = time.perf_counter()
        try:
            if endpoint.scope is not None:
                principal.require(endpoint.scope)
            return await endpoint.handler(request, ctx, principal)
        except (ApiError, StorageError) as exc:
            if kind is not None:  # a feed or tool call refused or failed counts as one too
                error = exc if isinstance(exc, ApiError) else exc.api_error()
                ctx.telemetry.record(
                    refused_op(kind, tool, principal.agent_id, error, started, ctx.clock())
                )
            raise

    return Route(endpoint.path, handle, methods=[endpoint.method], name=endpoint.handler.__name__)


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code, message = _HTTP_CODES.get(exc.status_code, ("http_error", "request failed"))
    return ApiError(exc.status_code, code, message, headers=exc.headers).response()


async def _storage_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StorageError)
    cause = type(exc.__cause__).__name__ if exc.__cause__ is not None else "-"
    log.error("storage error %s on %s (%s)", exc.code, request.url.path, cause)
    return exc.api_error().response()


_LOGGED = "channel_memory.error_logged"


def _log_unhandled(scope: Scope, exc: Exception) -> None:
    """Log an unhandled error by type and path only (its text can quote stored content)."""
    if not scope.get(_LOGGED):
        scope[_LOGGED] = True
        log.error("unhandled %s on %s", type(exc).__name__, scope.get("path", "?"))


async def _internal_error(request: Request, exc: Exception) -> Response:
    # Logged before the 500 is sent, so the line exists by the time a client has its answer.
    _log_unhandled(request.scope, exc)
    return ApiError(500, "internal_error", "internal error").response()


class ChannelMemoryApp(Starlette):
    """Starlette, except that an unhandled error is logged by type only.

    Starlette's outermost middleware answers the 500 (through ``_internal_error``)
    and then re-raises, and the server would log the traceback with the
    exception's text — which can quote stored content.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except Exception as exc:
            if scope["type"] != "http":
                raise
            _log_unhandled(scope, exc)  # a no-op when the 500 handler already logged it


def create_app(
    settings: Settings,
    *,
    clock: Clock = wall_clock,
    store: Store | None = None,
    llm_client: ModelClient | None = None,
) -> Starlette:
    """Build the application. It opens ``settings.db`` (or uses ``store``) in its lifespan.

    ``llm_client`` replaces the litellm client of the worker's LLM processor (when
    ``llm.enabled``); by default litellm calls ``llm.model``.
    """
    routes_ = endpoints()
    document = openapi_document(routes_)
    derivation = derive_settings(settings)
    telemetry = Telemetry()

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        own = store is None
        opened = store if store is not None else await Store.open(settings.db)
        worker = Worker(
            opened,
            settings,
            clock,
            derive_with=derivation,
            on_blocks=telemetry.blocks_written.inc,
            llm_client=llm_client,
            llm_metrics=telemetry,
        )
        app.state.ctx = AppContext(
            opened, settings, TokenTable(settings), clock, worker.hook, worker.wake, telemetry
        )
        app.state.worker = worker
        stop = asyncio.Event()
        running = (
            asyncio.create_task(worker.serve(stop), name="channel-memory-worker")
            if settings.worker.enabled
            else None
        )
        try:
            yield
        finally:
            stop.set()
            if running is not None:
                # finish the batch in flight before the database closes
                await running
            await worker.aclose()
            if own:
                await opened.close()

    routes: list[BaseRoute] = [
        *(_route(e) for e in routes_),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
    if settings.inspector.enabled:
        # off by default: it shows stored content to a browser (see docs/operations.md)
        from channel_memory.inspector import routes as inspector

        routes.append(inspector.mount(settings))
    app = ChannelMemoryApp(
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(BodyLimitMiddleware, max_body_bytes=settings.ingest.max_body_bytes)],
        exception_handlers={
            ApiError: _api_error,
            StorageError: _storage_error,
            HTTPException: _http_error,
            Exception: _internal_error,
        },
    )
    if settings.inspector.enabled:
        inspector.install(app, settings)
    return app
