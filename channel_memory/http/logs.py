"""Logging for the long-running commands (``serve``, ``worker``, ``mcp``): JSON lines on stderr.

Every record becomes one JSON object on one line with ``ts``, ``level``, ``logger`` and
``event`` (and ``pid`` under ``serve --workers N``, where several processes share stderr):

- a record carrying structured ``fields`` (the ``channel_context_op`` line) is those
  fields, as they are;
- uvicorn's access record is ``{"event": "http_request", "method", "route", "status"}``,
  where ``route`` is the endpoint's path template (``/v1/blocks/{block_id}``) or
  ``unmatched``: never the request target itself, whose query string and path are the
  client's text;
- any other record is ``{"event": "log", "message"}``; an exception adds its type and
  where it was raised, never its text (which can quote stored content).

The project's loggers log at the level asked for; other libraries' loggers only from
``warning`` up, since their debug output is not held to the no-content rule.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import traceback
from collections.abc import Callable, Iterable
from typing import Any

from starlette.routing import compile_path

from channel_memory.kernel.timefmt import format_rfc3339

FIELDS = "fields"
"""The ``extra`` key of a record whose JSON line is exactly these fields (plus the basics)."""

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
          "error": logging.ERROR}  # fmt: skip

PROJECT_LOGGERS = ("channel_memory", "uvicorn.error", "uvicorn.access")
"""Loggers at the asked level; every other logger (the root) stays at ``warning``."""

_UVICORN = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")

RouteOf = Callable[[str], str]


def route_matcher(templates: Iterable[str]) -> RouteOf:
    """A function naming the template a request path matches, else ``unmatched``."""
    compiled = [(compile_path(template)[0], template) for template in templates]

    def route_of(path: str) -> str:
        for regex, template in compiled:
            if regex.match(path):
                return template
        return "unmatched"

    return route_of


def _unmatched(path: str) -> str:
    return "unmatched"


def _access(record: logging.LogRecord, route_of: RouteOf) -> dict[str, Any]:
    """uvicorn's access record (client, method, target, http version, status) without the
    target: its route template only."""
    args = record.args if isinstance(record.args, tuple) else ()
    if len(args) != 5:
        return {"event": "http_request"}
    _client, method, target, _version, status = args
    path = str(target).split("?", 1)[0]
    return {"event": "http_request", "method": str(method), "route": route_of(path),
            "status": status}  # fmt: skip


def _where(exc: BaseException) -> str | None:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return None
    last = frames[-1]
    return f"{last.filename.rsplit('/', 1)[-1]}:{last.lineno} in {last.name}"


class JsonLines(logging.Formatter):
    """Formats a record as one JSON object on one line (see the module's docstring)."""

    def __init__(self, route_of: RouteOf = _unmatched, *, pid: bool = False) -> None:
        super().__init__()
        self.route_of = route_of
        self.pid = pid

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": format_rfc3339(int(record.created * 1_000_000)),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        if self.pid:
            line["pid"] = os.getpid()
        fields = getattr(record, FIELDS, None)
        if isinstance(fields, dict):
            line.update(fields)
        elif record.name == "uvicorn.access":
            line.update(_access(record, self.route_of))
        else:
            line.update(event="log", message=record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            line["error_type"] = type(exc).__name__
            line["error_at"] = _where(exc)
        return json.dumps(line, default=str, separators=(",", ":"))


def configure(level: str, routes: Iterable[str] = (), *, pid: bool = False) -> logging.Handler:
    """Send every log record to stderr as a JSON line; the project's loggers at ``level``;
    with ``pid``, each line names the process that wrote it.

    Called before a server is built: the root logger then has a handler, so a library
    that calls ``logging.basicConfig`` (the MCP SDK does, with a rich-text handler) adds
    nothing. ``routes`` are the HTTP path templates access lines may name.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines(route_matcher(routes), pid=pid))
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    for name in _UVICORN:  # uvicorn's own handlers print plain text; ours print JSON
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = True
    for name in PROJECT_LOGGERS:
        logging.getLogger(name).setLevel(LEVELS[level])
    logging.captureWarnings(True)  # Python warnings, too, as JSON lines
    return handler
