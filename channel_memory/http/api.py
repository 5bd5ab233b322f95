"""HTTP plumbing shared by every stage's endpoints: endpoint declarations, body
parsing, responses.

Each stage's endpoints are declared as :class:`Endpoint` values; the application
turns them into routes and the OpenAPI document, so the models that validate a
request are the ones the document describes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from channel_memory.http.auth import TokenTable
from channel_memory.http.telemetry import Telemetry
from channel_memory.kernel.config import Scope, Settings
from channel_memory.kernel.errors import validation_error
from channel_memory.kernel.principal import Principal
from channel_memory.kernel.timefmt import Clock
from channel_memory.store import DeriveHook, Store
from channel_memory.tools.cursors import CursorKeys

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class AppContext:
    """What a handler needs: the store, settings, tokens, clock and the worker's hooks.

    It is what the stages ask their caller for (``feed.reads.ReadContext``,
    ``tools.retrieval.ToolContext``): they name the parts they use, never this class."""

    store: Store
    settings: Settings
    tokens: TokenTable
    clock: Clock
    derive: DeriveHook
    """Derivation inside a write transaction (used by forgets)."""
    wake: Callable[[], None]
    """Wakes the in-process worker after an ingest (a no-op without one)."""
    telemetry: Telemetry
    cursor_keys: CursorKeys = field(default_factory=CursorKeys)
    """The paging and content cursors' signing keys, read once per store."""


Handler = Callable[[Request, AppContext, Principal], Awaitable[Response]]


@dataclass(frozen=True, slots=True)
class QueryParameter:
    """A query-string (or path) parameter, as the OpenAPI document describes it."""

    name: str
    description: str
    schema: dict[str, Any]
    required: bool = False
    location: str = "query"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One HTTP endpoint: route, required scope (``None``: open) and its wire models."""

    method: str
    path: str
    handler: Handler
    summary: str
    scope: Scope | None
    request: type[BaseModel] | None = None
    response: type[BaseModel] | None = None
    status: int = 200
    parameters: tuple[QueryParameter, ...] = ()
    media_types: tuple[str, ...] = ("application/json",)
    extra_statuses: tuple[int, ...] = ()


async def read_json(request: Request, model: type[M], *, batch_field: str | None = None) -> M:
    """Read the body (413 past the size limit) and validate it against ``model``.

    Raises ``ApiError`` 400 for unparseable JSON and 422 for the wrong shape.
    """
    body = await request.body()
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        raise validation_error(exc, batch_field=batch_field) from None


def json_response(
    model: BaseModel, status: int = 200, *, exclude_none: bool = False, **headers: str
) -> Response:
    """Compact JSON of a response model (aliases applied; ``None`` fields dropped if asked)."""
    data: Any = model.model_dump(mode="json", by_alias=True, exclude_none=exclude_none)
    return JSONResponse(data, status, headers=headers or None)
