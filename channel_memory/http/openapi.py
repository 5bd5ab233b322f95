"""The OpenAPI document, generated from the endpoints' own pydantic models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from channel_memory import __version__
from channel_memory.http.api import Endpoint, QueryParameter
from channel_memory.kernel.wire import ErrorBody

_OTHER_STATUSES = {
    304: "Not modified (If-None-Match matched the ETag)",
    404: "Not found: a channel, a feed's trigger, or a read to settle (unknown and forbidden "
    "look the same)",
    409: "Conflict: the read was already settled with the other outcome",
    503: "Not ready: the worker lags (the 200 body, ready false); or the database is busy "
    "(an error, with Retry-After)",
}
"""Statuses an endpoint lists beside its success. One that is also an error status is
answered with the endpoint's own model or with the error body."""
_ERROR_STATUSES = {
    "400": "Malformed JSON",
    "401": "Missing or invalid bearer token",
    "403": "The token lacks the scope or channel",
    "413": "Request body too large",
    "422": "The request is invalid (names the event index and field)",
    "503": "The writer is saturated, or the database cannot be reached "
    "(storage_unavailable); retry after Retry-After seconds",
}


def _plain(schema: dict[str, Any]) -> dict[str, Any]:
    """A property's schema as a query parameter states it: no title, no null branch (an
    absent parameter is the null), no null default."""
    schema = {k: v for k, v in schema.items() if k not in ("title", "description")}
    branches = [b for b in schema.pop("anyOf", ()) if b.get("type") != "null"]
    if len(branches) == 1:
        schema = {**branches[0], **schema}
    elif branches:
        schema["anyOf"] = branches
    if schema.get("default", 0) is None:
        del schema["default"]
    return schema


def query_parameters(model: type[BaseModel]) -> tuple[QueryParameter, ...]:
    """The query parameters ``model`` validates, in its field order, described from its
    own JSON schema (types, bounds, enums, defaults and descriptions)."""
    schema = model.model_json_schema(mode="validation")
    required = set(schema.get("required", ()))
    return tuple(
        QueryParameter(name, str(field.get("description", "")), _plain(field), name in required)
        for name, field in schema["properties"].items()
    )


def openapi_document(endpoints: Sequence[Endpoint]) -> dict[str, Any]:
    """An OpenAPI 3.1 document describing ``endpoints``."""
    models: list[tuple[type[BaseModel], Any]] = [(ErrorBody, "serialization")]
    for endpoint in endpoints:
        if endpoint.request is not None:
            models.append((endpoint.request, "validation"))
        if endpoint.response is not None:
            models.append((endpoint.response, "serialization"))
    keys, defs = models_json_schema(models, ref_template="#/components/schemas/{model}")
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in endpoints:
        operation: dict[str, Any] = {
            "summary": endpoint.summary,
            "operationId": endpoint.handler.__name__,
            "responses": {},
        }
        if endpoint.request is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": keys[(endpoint.request, "validation")]}},
            }
        if endpoint.parameters:
            operation["parameters"] = [
                {
                    "name": parameter.name,
                    "in": parameter.location,
                    "required": parameter.required,
                    "description": parameter.description,
                    "schema": parameter.schema,
                    # a list in a query string is comma-separated: a,b,c
                    **({"explode": False} if parameter.schema.get("type") == "array" else {}),
                }
                for parameter in endpoint.parameters
            ]
        success: dict[str, Any] = {"description": "OK"}
        if endpoint.response is not None:
            success["content"] = {
                "application/json": {"schema": keys[(endpoint.response, "serialization")]}
            }
        elif any(media != "application/json" for media in endpoint.media_types):
            # a text answer (the feed, /metrics): a string in each media type it is sent as
            success["content"] = {
                media: {"schema": {"type": "string"}} for media in endpoint.media_types
            }
        operation["responses"][str(endpoint.status)] = success
        error_ref = keys[(ErrorBody, "serialization")]
        error_schema = {"application/json": {"schema": error_ref}}
        for extra in endpoint.extra_statuses:
            described: dict[str, Any] = {"description": _OTHER_STATUSES[extra]}
            if str(extra) in _ERROR_STATUSES and endpoint.response is not None:
                either = [keys[(endpoint.response, "serialization")], error_ref]
                described["content"] = {"application/json": {"schema": {"anyOf": either}}}
            operation["responses"][str(extra)] = described
        for status, description in _ERROR_STATUSES.items():
            if status in operation["responses"]:
                continue
            if endpoint.scope is None and status in ("401", "403"):
                continue
            if endpoint.request is None and status in ("400", "413"):
                continue
            if endpoint.request is None and not endpoint.parameters and status == "422":
                continue
            operation["responses"][status] = {"description": description, "content": error_schema}
        if endpoint.scope is not None:
            operation["security"] = [{"bearer": []}]
            operation["x-scope"] = endpoint.scope
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "channel-memory", "version": __version__},
        "paths": paths,
        "components": {
            "schemas": defs.get("$defs", {}),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
