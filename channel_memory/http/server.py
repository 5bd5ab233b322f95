"""How ``serve`` runs uvicorn: the listening socket (the demo uses it too), the garbage
collector's tuning, and ``serve --workers N`` — N server processes on that one socket and
one database, under uvicorn's process supervisor.

Every process opens the database itself: readers run in parallel (WAL), writes take
turns (SQLite's lock, waited for through ``busy_timeout``), and the worker lease lets
exactly one process derive blocks while the others stand by. Everything a process
answers from — messages, blocks, the cursor and read-id secrets, the LLM breaker —
lives in the database, so every process gives the same answer for the same state.
"""

from __future__ import annotations

import gc
import logging
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from channel_memory.kernel.config import Settings

if TYPE_CHECKING:
    from starlette.applications import Starlette

log = logging.getLogger("channel_memory")


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


def tune_gc() -> None:
    """Collect garbage less often in a serving process.

    A feed call allocates a few thousand short-lived objects; with the default
    thresholds a full collection every few hundred calls costs more than the
    call itself (p99 30 ms against p50 11 ms on the 1,000,000-message benchmark).
    Objects alive at startup are frozen out of future collections.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)


@dataclass(frozen=True, slots=True)
class AppFactory:
    """What each server process of ``serve --workers N`` builds its application from.

    The supervisor starts every process afresh (multiprocessing's ``spawn``): nothing of
    the parent is inherited but what is pickled here, so the settings travel as the
    parent loaded and checked them — the same values in every process, never re-read
    from a file that may have changed since.
    """

    settings: Settings
    log_level: str
    routes: tuple[str, ...]
    """The HTTP path templates access lines may name."""

    def __call__(self) -> Starlette:
        """Set up this process's JSON-lines logging (each line naming the process) and
        build the application, tuned as a one-process ``serve`` is. A failure exits with
        ``STARTUP_FAILURE``, which stops the supervisor instead of restarting forever."""
        from uvicorn.config import STARTUP_FAILURE

        from channel_memory.http import logs
        from channel_memory.http.app import create_app

        logs.configure(self.log_level, self.routes, pid=True)
        try:
            app = create_app(self.settings)
        except Exception as exc:  # its text may quote a file; the type says enough
            log.error("server process cannot build the application: %s", type(exc).__name__)
            raise SystemExit(STARTUP_FAILURE) from None
        tune_gc()
        return app


def serve_processes(factory: AppFactory, sock: socket.socket, processes: int) -> int:
    """Serve ``sock`` from ``processes`` server processes until SIGINT or SIGTERM.

    uvicorn's supervisor starts the processes, pings them, replaces one that dies, and on
    SIGINT or SIGTERM stops each (its lifespan ends: the worker finishes its batch and
    gives the lease up) and waits for it. Returns 0, or uvicorn's ``STARTUP_FAILURE`` (3)
    when a process could not start (the supervisor then stops the others).
    """
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config(
        factory,
        factory=True,
        workers=processes,
        # no handlers of uvicorn's: each process logs JSON lines (AppFactory), with access
        # lines naming the route template, as one process does
        log_config=None,
        access_log=True,
        log_level=factory.log_level,
        # A new process answers the supervisor's pings only once Python has started in it
        # and imported what its pickled configuration names; on a busy two-core host that
        # can take longer than uvicorn's 5 s, and a process killed for it is started again.
        timeout_worker_healthcheck=30,
    )
    supervisor = Multiprocess(config, sockets=[sock])
    supervisor.run()
    if any(p.exitcode == STARTUP_FAILURE for p in supervisor.processes):
        return STARTUP_FAILURE
    return 0
