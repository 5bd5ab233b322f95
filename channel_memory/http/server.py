"""The listening socket ``serve`` and the demo hand to uvicorn."""

from __future__ import annotations

import socket


def listening_socket(host: str, port: int) -> tuple[socket.socket, str]:
    """A socket bound and listening on ``host:port`` (0: any free port), and its URL."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Inherited by accepted connections: without it a keep-alive client waits ~40 ms
    # (Nagle and delayed ACK) on every response of a socket bound here, not by uvicorn.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    # Listen before announcing, so a client reading the banner can connect at once.
    sock.listen(2048)
    bound_host, bound_port = sock.getsockname()[:2]
    if family == socket.AF_INET6:
        return sock, f"http://[{bound_host}]:{bound_port}"
    return sock, f"http://{bound_host}:{bound_port}"
