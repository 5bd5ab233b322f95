"""The ``channel-memory`` command: serve, ingest (bulk import), --version."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import logging
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from channel_memory import __version__
from channel_memory.http.server import tune_gc
from channel_memory.ingest.events import IngestBatch
from channel_memory.ingest.service import IngestRejected, ingest, native_commands
from channel_memory.kernel.config import ConfigError, Settings, load_settings
from channel_memory.kernel.timefmt import format_rfc3339
from channel_memory.store import DatabaseUnavailable, Store
from channel_memory.store.database import is_postgres_url, redacted
from channel_memory.worker.rules import RulesError, load_rules
from channel_memory.worker.runner import derive_hook, derive_settings, lazy_derive_hook


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _settings(
    args: argparse.Namespace, *, tokens_used: bool = True, **overrides: object
) -> Settings:
    return load_settings(args.config, tokens_used=tokens_used, db=args.db, **overrides)


TRY_LINE_AGE_US = 60_000_000
"""The try line's message is stamped a minute before the server started: within retention,
never ahead of the clock."""


def ingest_auth_header(settings: Settings, environ: Mapping[str, str]) -> str:
    """The ``-H`` option a pasted curl needs to ingest, naming where the token is (never the
    secret itself); empty on an open server."""
    if settings.token:
        where = "$CHANNEL_MEMORY_TOKEN" if environ.get("CHANNEL_MEMORY_TOKEN") else "<token>"
        return f' -H "authorization: Bearer {where}"'
    for entry in settings.tokens:
        if {"ingest", "admin"} & set(entry.scopes):
            where = f"${entry.token_env}" if entry.token_env else f"<token of {entry.agent_id}>"
            return f' -H "authorization: Bearer {where}"'
    return ""


def try_line(url: str, settings: Settings, now_us: int, environ: Mapping[str, str]) -> str:
    """A curl line that works when pasted: one message stamped a minute before ``now_us``,
    with the token header the server needs."""
    created = format_rfc3339(now_us - TRY_LINE_AGE_US)
    return (
        f"  try: curl -s -X POST {url}/v1/ingest -H 'content-type: application/json'"
        + ingest_auth_header(settings, environ)
        + ' -d \'{"events":[{"type":"message","channel_id":"floor",'
        '"message":{"id":"1","author_name":"desk-lead",'
        f'"created_at":"{created}","content":"hello"}}}}]}}\''
    )


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from channel_memory.http.app import create_app
    from channel_memory.http.server import AppFactory, listening_socket, serve_processes
    from channel_memory.kernel.timefmt import wall_clock

    settings = _settings(args, worker={"enabled": False} if args.no_worker else None)
    if not settings.token and not settings.tokens and not is_loopback(args.host):
        print(
            f"channel-memory: refusing to listen on {args.host} without any token configured; "
            "set CHANNEL_MEMORY_TOKEN or [[tokens]] in the config file, or bind 127.0.0.1",
            file=sys.stderr,
        )
        return 2
    if args.workers > 1 and settings.inspector.enabled:
        # its sign-in sessions live in the memory of the process that signed in
        print(
            "channel-memory: the inspector needs a single server process; "
            "serve it with --workers 1, or set inspector.enabled = false",
            file=sys.stderr,
        )
        return 2
    # Built here with N processes too, though each process builds its own: a bad rules
    # file then fails here, as it does with one process, not in every process started.
    app = create_app(settings)
    try:
        sock, url = listening_socket(args.host, args.port)
    except OSError as exc:  # the port taken, an address not this host's, a privileged port
        print(
            f"channel-memory: cannot listen on {args.host}:{args.port} ({exc.strerror or exc})",
            file=sys.stderr,
        )
        return 2
    routes = tuple(http_routes())
    several = args.workers > 1
    if several:
        from channel_memory.http import logs

        logs.configure(args.log_level, routes, pid=True)  # processes share stderr
    # the database is opened once before serving, so an unreachable server or a schema
    # from a newer version is named here (exit 2), not in a traceback from every process
    try:
        asyncio.run(_check_opens(settings.db))
    except BaseException:
        sock.close()
        raise
    processes = f", {args.workers} server processes" if several else ""
    where = redacted(settings.db)  # never a URL's password
    print(f"channel-memory {__version__} listening on {url} (db: {where}{processes})")
    print(try_line(url, settings, wall_clock(), os.environ), flush=True)
    if several:
        return serve_processes(AppFactory(settings, args.log_level, routes), sock, args.workers)
    # log_config=None: the JSON-lines logging set up in main() stays; uvicorn's access
    # records come out as JSON naming the route template, never the request target
    config = uvicorn.Config(app, log_config=None, access_log=True, log_level=args.log_level)
    tune_gc()
    uvicorn.Server(config).run(sockets=[sock])
    return 0


async def _open(target: str | Path, *, logged: bool = False) -> Store:
    """The database ``target`` names, opened; one that is not there is created, and said
    so (a mistyped path would otherwise fill a database nothing else reads): a JSON log
    line from a command that logs so (``logged``), else a line on stderr."""
    created = not is_postgres_url(target) and not await asyncio.to_thread(_exists, target)
    store = await Store.open(target)
    if created:
        where = await asyncio.to_thread(Path(target).resolve)
        if logged:
            logging.getLogger("channel_memory").warning("created a new database at %s", where)
        else:
            print(f"channel-memory: created a new database at {where}", file=sys.stderr)
    return store


def _exists(target: str | Path) -> bool:
    """Whether a path is there (one that cannot be looked at counts as there: opening it
    says why it cannot be used)."""
    try:
        return Path(target).exists()
    except OSError:
        return True


async def _check_opens(target: str | Path) -> None:
    store = await _open(target, logged=True)
    await store.close()


def _read_lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield number, line


def _ingest(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from channel_memory.ingest.bounds import TimeBounds
    from channel_memory.ingest.jsonl import line_problem
    from channel_memory.kernel.timefmt import wall_clock

    settings = _settings(args, tokens_used=False)
    path = Path(args.file)
    if not path.exists():
        raise ConfigError(f"ingest file not found: {path}")
    if not path.is_file():  # it is read twice: a pipe would be empty the second time
        raise ConfigError(f"ingest file is not a regular file (save the stream first): {path}")
    limits = settings.ingest
    # Pass 1: check every line, so a bad line anywhere writes nothing at all.
    errors = 0
    numbers: list[int] = []
    checked_at = wall_clock()
    for number, line in _read_lines(path):
        numbers.append(number)
        problem = line_problem(line, settings, checked_at)
        if problem is not None:
            print(f"{path}:{number}: {problem}", file=sys.stderr)
            errors += 1
    if errors:
        print(f"channel-memory: {errors} invalid line(s); nothing was imported", file=sys.stderr)
        return 1

    derive = derive_hook(derive_settings(settings))
    counts = dict.fromkeys(("inserted", "duplicates", "ignored_forgotten", "ignored_expired"), 0)

    async def run() -> None:
        store = await _open(settings.db)
        try:
            with tqdm(total=len(numbers), unit="event", desc="ingest", disable=None) as bar:
                lines = [line for _, line in _read_lines(path)]
                for start in range(0, len(lines), limits.max_events):
                    pending = lines[start : start + limits.max_events]
                    batch = IngestBatch.model_validate_json(
                        '{"events":[' + ",".join(p.strip() for p in pending) + "]}"
                    )
                    now_us = wall_clock()
                    try:
                        report = await ingest(
                            store,
                            [e.channel_id for e in batch.events],
                            native_commands(batch.events),
                            now_us=now_us,
                            derive=derive,
                            bounds=TimeBounds.of(settings, now_us),
                        )
                    except IngestRejected as exc:
                        exc.index += start  # the event's position in the file
                        raise
                    counts["inserted"] += report.inserted
                    counts["duplicates"] += report.duplicates
                    counts["ignored_forgotten"] += report.ignored_forgotten
                    counts["ignored_expired"] += report.ignored_expired
                    bar.update(len(pending))
        finally:
            await store.close()

    try:
        asyncio.run(run())
    except IngestRejected as exc:
        imported = exc.index - exc.index % limits.max_events
        print(
            f"{path}:{numbers[exc.index]}: {exc.code}, field {exc.field} ({exc.detail_code}); "
            f"its batch was not imported, the {imported} event(s) before that batch were",
            file=sys.stderr,
        )
        return 1
    print(json.dumps({"events": len(numbers), **counts}))
    return 0


def _worker(args: argparse.Namespace) -> int:
    import signal

    from channel_memory.kernel.timefmt import wall_clock
    from channel_memory.worker.runner import Worker

    settings = _settings(args, tokens_used=False)
    derivation = derive_settings(settings)

    async def run() -> int:
        store = await _open(settings.db, logged=True)
        worker: Worker | None = None
        try:
            worker = Worker(store, settings, wall_clock, derive_with=derivation)
            if args.once:
                await worker.prepare()
                dropped = await worker.apply_retention()
                processed = await worker.drain()
                done: dict[str, object] = {"processed": processed, "retention_dropped": dropped}
                if worker.llm is not None:
                    report = await worker.llm.run_once()
                    done["llm"] = {"calls": report.calls, "written": report.written,
                                   "capped": report.capped}  # fmt: skip
                print(json.dumps(done))
                return 0
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            print(f"channel-memory worker {worker.holder} on {redacted(settings.db)}", flush=True)
            await worker.serve(stop)
            return 0
        finally:
            if worker is not None:
                await worker.aclose()
            await store.close()

    return asyncio.run(run())


def _rules_test(args: argparse.Namespace) -> int:
    from channel_memory.worker.rules_report import compare_rules

    settings = _settings(args, tokens_used=False)
    if not is_postgres_url(settings.db) and not Path(settings.db).is_file():
        # reading rules against a database that is not there would create an empty one
        raise ConfigError(f"database not found: {settings.db}")
    current = load_rules(settings.worker.rules_file)
    # without a file: what the current rules (configured or default) match
    candidate = load_rules(args.file) if args.file is not None else None

    async def run() -> int:
        store = await _open(settings.db)
        try:
            report = await compare_rules(
                store, current, candidate, limit=args.limit, unmatched=args.unmatched
            )
        finally:
            await store.close()
        print(report.render())
        return 0

    return asyncio.run(run())


def _mcp(args: argparse.Namespace) -> int:
    import os

    from channel_memory.http.api import AppContext
    from channel_memory.http.auth import TokenTable
    from channel_memory.http.telemetry import Telemetry
    from channel_memory.kernel.errors import ApiError
    from channel_memory.kernel.timefmt import wall_clock
    from channel_memory.tools.mcp_server import acting_principal, build

    # the tokens of other clients (a bridge's token_env) need not be in an agent's environment
    settings = _settings(args, tokens_used=False)
    tokens = TokenTable(settings, unset_skipped=True)
    presented = args.token or os.environ.get("CHANNEL_MEMORY_MCP_TOKEN")
    try:
        principal = acting_principal(tokens.principal_for, presented, settings.token)
    except ApiError as exc:
        # a token of the config whose token_env this environment lacks cannot match: say
        # which variables (names only), as a newcomer's valid token looked refused
        unset = (
            "; tokens left out because their token_env variable is not set here: "
            + ", ".join(tokens.unset)
            + " (set the variable of the token it acts with)"
            if tokens.unset and exc.status == 401
            else ""
        )
        # stdout carries the protocol: the refusal goes to the log (stderr)
        logging.getLogger("channel_memory.mcp").error(
            "channel-memory mcp: refusing to start: %s (%s)%s; it needs a token with the read "
            "scope: --token, CHANNEL_MEMORY_MCP_TOKEN or CHANNEL_MEMORY_TOKEN",
            exc.message,
            exc.code,
            unset,
        )
        return 2
    # the MCP tools only read: rules and their model are loaded if a derivation ever asks
    derive = lazy_derive_hook(settings)

    async def run() -> int:
        store = await _open(settings.db, logged=True)
        try:
            ctx = AppContext(store, settings, tokens, wall_clock, derive, lambda: None, Telemetry())
            await build(ctx, principal).run_stdio_async()
        finally:
            await store.close()
        return 0

    return asyncio.run(run())


def _copy(args: argparse.Namespace) -> int:
    from channel_memory.store.copy import copy_command

    return copy_command(args.source, args.dest, chunk_rows=args.chunk_rows)


def _demo(args: argparse.Namespace) -> int:
    from channel_memory.demo.run import run_demo

    return asyncio.run(run_demo(sys.stdout, llm_model=args.llm, feed_chars=args.feed_chars))


def process_count(text: str) -> int:
    """``--workers``: a whole number of processes, at least 1."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"at least 1 server process, got {count}")
    return count


class _WholeWords(argparse.ArgumentParser):
    """No command takes an abbreviated option: ``--worker 2`` is refused, not read as
    ``--workers 2`` (argparse's default reads a prefix of an option as the option). The
    subcommands' parsers are of the root's class, so they refuse them too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


def parser() -> argparse.ArgumentParser:
    root = _WholeWords(
        prog="channel-memory",
        description="Memory sidecar for LLM agents sharing chat channels.",
    )
    root.add_argument("--version", action="version", version=f"channel-memory {__version__}")
    commands = root.add_subparsers(dest="command", required=True)

    def common(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--db", help="SQLite database file (env CHANNEL_MEMORY_DB)")
        sub.add_argument("--config", help="TOML config file (env CHANNEL_MEMORY_CONFIG)")

    serve = commands.add_parser("serve", help="run the HTTP sidecar")
    common(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="port to bind (default 8765; 0: any)")
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.add_argument(
        "--no-worker",
        action="store_true",
        help="do not derive blocks in this process (run `channel-memory worker` instead)",
    )
    serve.add_argument(
        "--workers",
        type=process_count,
        default=1,
        metavar="N",
        help="server processes sharing the port and the database (default 1); one of them "
        "at a time derives blocks",
    )
    serve.set_defaults(run=_serve)

    worker = commands.add_parser("worker", help="derive recall blocks in a process of its own")
    common(worker)
    worker.add_argument(
        "--once", action="store_true", help="apply retention, derive what is pending, then exit"
    )
    worker.set_defaults(run=_worker)

    mcp = commands.add_parser("mcp", help="serve the retrieval tools over MCP (stdio)")
    common(mcp)
    mcp.add_argument("--token", help="the read token to act for (env CHANNEL_MEMORY_MCP_TOKEN)")
    mcp.set_defaults(run=_mcp)

    rules = commands.add_parser("rules", help="hard-event rules")
    rule_commands = rules.add_subparsers(dest="rules_command", required=True)
    rules_test = rule_commands.add_parser(
        "test",
        help="show what the current rules, or a rules file, match on the stored messages",
        description="Without FILE: what the current rules (worker.rules_file, or the shipped "
        "defaults) match on the stored messages, with examples. With FILE: what that file "
        "would match, and what would start matching, stop matching or change type.",
    )
    common(rules_test)
    rules_test.add_argument(
        "file",
        nargs="?",
        help="a rules file (TOML) to compare with the current rules (default: none, show "
        "what the current rules match)",
    )
    rules_test.add_argument(
        "--limit", type=int, default=20, help="examples listed per list (default 20)"
    )
    rules_test.add_argument(
        "--unmatched",
        action="store_true",
        help="also list the messages the rules decide nothing in (the first --limit), "
        "to find a decision they miss",
    )
    rules_test.set_defaults(run=_rules_test)

    importer = commands.add_parser(
        "ingest", help="bulk-import native events from a JSON Lines file"
    )
    common(importer)
    importer.add_argument("file", help="one native event (JSON object) per line")
    importer.set_defaults(run=_ingest)

    demo = commands.add_parser(
        "demo", help="run the sidecar on a synthetic busy desk and print what it serves"
    )
    demo.add_argument(
        "--llm",
        metavar="MODEL",
        help="also run one LLM pass with this litellm model (needs the llm extra and a provider)",
    )
    demo.add_argument(
        "--feed-chars",
        type=int,
        default=8192,
        help="max_chars of the text feed printed at the end (default 8192)",
    )
    demo.set_defaults(run=_demo)

    copier = commands.add_parser(
        "copy",
        help="copy a store into another database (SQLite file or PostgreSQL URL), verified",
        description="Copy every stored version, forget, gap, LLM cache and spend row, "
        "consumption and secret from SRC into DST, which must be empty or hold an unfinished "
        "copy of SRC (it is resumed); then verify both sides. The worker derives the blocks "
        "when it next runs on DST.",
    )
    copier.add_argument("source", metavar="SRC", help="an SQLite file or a postgresql:// URL")
    copier.add_argument("dest", metavar="DST", help="an SQLite file or a postgresql:// URL")
    copier.add_argument(
        "--chunk-rows",
        type=int,
        default=1000,
        metavar="N",
        help="rows per transaction (default 1000): an interrupted copy resumes after the "
        "last chunk committed",
    )
    copier.set_defaults(run=_copy)
    return root


LOGGING_COMMANDS = ("serve", "worker", "mcp")
"""The long-running commands: they log JSON lines to stderr."""


def http_routes() -> list[str]:
    """The path templates ``serve`` answers (access log lines name these)."""
    from channel_memory.http.app import endpoints

    return [e.path for e in endpoints()] + ["/openapi.json"]


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command in LOGGING_COMMANDS:
        from channel_memory.http import logs

        routes = http_routes() if args.command == "serve" else []
        logs.configure(getattr(args, "log_level", "info"), routes)
    try:
        code: int = args.run(args)
    except (ConfigError, RulesError, DatabaseUnavailable) as exc:
        print(f"channel-memory: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
