"""A local OpenAI-compatible chat completions server, for LLM calls over real HTTP.

litellm reaches it as model ``openai/<name>`` with ``api_base`` = :attr:`FakeProvider.api_base`.
It records every request body it receives and answers through a *responder*:
a function from the request's JSON to a :class:`Reply`. The default responder
summarises like a well-behaved model: it reads the sources document the worker
sends and answers with the JSON object the prompt asks for, citing every id.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    content: str | None = None
    status: int = 200
    hang: bool = False
    """Never answer (until the server closes): the client's timeout must fire."""


Responder = Callable[[dict[str, Any]], Reply]


def sources_document(request: dict[str, Any]) -> dict[str, Any]:
    """The sources the worker quoted in a request (its last user message, as JSON)."""
    user = [m for m in request["messages"] if m["role"] == "user"][-1]
    document: dict[str, Any] = json.loads(user["content"])
    return document


def summary(document: dict[str, Any], *, echo: bool = False) -> dict[str, Any]:
    """A short, valid answer for a sources document (``echo`` quotes each message's start)."""
    messages = document["messages"]
    ids = document["cite_exactly"]
    authors = sorted({m["author"] for m in messages})
    kind = "message_summary" if len(ids) == 1 else "sequence_rollup"
    text = f"{len(ids)} msgs {messages[0]['time'][11:16]}-{messages[-1]['time'][11:16]}"
    text += f" by {', '.join(authors)}"
    if echo:
        text += ": " + " | ".join(m["content"][:40] for m in messages)
    return {"kind": kind, "text": text, "source_messages": ids, "score": 0.4}


def summarise(request: dict[str, Any]) -> Reply:
    return Reply(json.dumps(summary(sources_document(request))))


def echoing(request: dict[str, Any]) -> Reply:
    return Reply(json.dumps(summary(sources_document(request), echo=True)))


class FakeProvider:
    """Serve on 127.0.0.1, on a port the OS picked; use as a context manager."""

    def __init__(self, responder: Responder = summarise) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._release = threading.Event()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                provider.requests.append(body)
                provider.paths.append(self.path)
                reply = provider.responder(body)
                if reply.hang:
                    provider._release.wait(timeout=30)
                    return
                if reply.status != 200:
                    payload = {"error": {"message": "provider failure", "type": "server_error"}}
                    self._send(reply.status, payload)
                    return
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(provider.requests)}",
                        "object": "chat.completion",
                        "created": 1_779_000_000,
                        "model": body.get("model", "fake"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply.content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": 100,
                            "completion_tokens": 20,
                            "total_tokens": 120,
                        },
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.api_base = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeProvider:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
