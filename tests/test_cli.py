"""The channel-memory command: --version, serve, ingest (bulk JSON Lines import)."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from channel_memory import __version__
from channel_memory.cli import main, parser
from tests.conftest import message_event, query
from tests.pgcluster import free_port


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "channel_memory", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"channel-memory {__version__}"


def test_ingest_imports_a_jsonl_file(tmp_path: Path) -> None:
    events = [message_event(str(i), f"message number {i}") for i in range(2500)]
    events.append(message_event("7", "message number 7"))  # a duplicate
    source = tmp_path / "events.jsonl"
    source.write_text("\n".join(json.dumps(e) for e in events) + "\n\n")
    db = tmp_path / "cm.db"
    # the fixtures' day is older than the default retention on the wall clock
    result = run_cli(
        "ingest", "--db", str(db), str(source), env={"CHANNEL_MEMORY_RETENTION__DAYS": "100000"}
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "events": 2501,
        "inserted": 2500,
        "duplicates": 1,
        "ignored_forgotten": 0,
        "ignored_expired": 0,
    }
    assert query(db, "SELECT count(*) FROM source_messages") == [(2500,)]


def test_ingest_with_a_bad_line_imports_nothing(tmp_path: Path) -> None:
    lines = [
        json.dumps(message_event("1", "fine")),
        json.dumps(message_event("2", "SECRETcontent", created_at="not a time")),
        "{broken json",
    ]
    source = tmp_path / "events.jsonl"
    source.write_text("\n".join(lines) + "\n")
    db = tmp_path / "cm.db"
    result = run_cli("ingest", "--db", str(db), str(source))
    assert result.returncode == 1
    assert f"{source}:2: validation_failed, field message.created_at" in result.stderr
    assert f"{source}:3: invalid_json" in result.stderr
    assert "SECRETcontent" not in result.stderr + result.stdout
    assert not db.exists() or query(db, "SELECT count(*) FROM source_messages") == [(0,)]


def test_an_http_batch_given_to_the_import_is_named_as_one(tmp_path: Path) -> None:
    # a new user's trial: a {"events": [...]} file (what POST /v1/ingest takes) was refused
    # as "field type (union_tag_not_found)"; the import reads one event per line
    source = tmp_path / "batch.json"
    source.write_text(json.dumps({"events": [message_event("1", "SECRETcontent")]}) + "\n")
    result = run_cli("ingest", "--db", str(tmp_path / "cm.db"), str(source))
    assert result.returncode == 1
    assert f'{source}:1: validation_failed, a {{"events": [...]}} batch' in result.stderr
    assert "one event per line" in result.stderr and "SECRETcontent" not in result.stderr


def test_a_missing_file_or_database_is_named_not_created(tmp_path: Path) -> None:
    # a new user's trial: ingest of a missing file printed a traceback, and `rules test`
    # on a mistyped database created an empty one and reported that nothing matched
    missing = tmp_path / "nofile.jsonl"
    result = run_cli("ingest", "--db", str(tmp_path / "cm.db"), str(missing))
    assert result.returncode == 2
    assert result.stderr.strip() == f"channel-memory: ingest file not found: {missing}"
    result = run_cli("ingest", "--db", str(tmp_path / "cm.db"), str(tmp_path))
    assert result.returncode == 2
    assert "ingest file is not a regular file (save the stream first)" in result.stderr
    db = tmp_path / "typo.db"
    result = run_cli("rules", "test", "--db", str(db))
    assert result.returncode == 2
    assert result.stderr.strip() == f"channel-memory: database not found: {db}"
    assert not db.exists()


@pytest.mark.parametrize("command", [["serve"], ["worker", "--once"], ["mcp"], ["rules", "test"]])
def test_a_database_that_cannot_be_opened_is_named_without_a_traceback(
    tmp_path: Path, command: list[str]
) -> None:
    # a new user's trial: an unreachable PostgreSQL server (or a schema from a newer
    # version) printed a traceback from every command, from uvicorn's startup under serve
    url = f"postgresql://memory:s3cret@127.0.0.1:{free_port()}/cm"
    result = run_cli(*command, "--db", url)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "s3cret" not in result.stderr + result.stdout
    assert result.stderr.startswith(
        "channel-memory: cannot connect to the database at postgresql://memory:***@127.0.0.1:"
    )
    assert "ConnectionRefusedError" in result.stderr
    newer = tmp_path / "newer.db"
    with sqlite3.connect(newer) as conn:
        conn.execute("PRAGMA user_version = 999")
    result = run_cli(*command, "--db", str(newer))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("channel-memory: database schema version 999 is newer than")


def test_copy_from_a_source_that_cannot_be_reached_is_refused_at_its_start(
    tmp_path: Path,
) -> None:
    # a review: an unreachable PostgreSQL source said "copy stopped: …; the chunks already
    # copied are kept", as if it had stopped part way
    dest = tmp_path / "dest.db"
    url = f"postgresql://memory:s3cret@127.0.0.1:{free_port()}/cm"
    result = run_cli("copy", url, str(dest))
    assert result.returncode == 2
    assert result.stderr.startswith(
        "channel-memory: copy refused: cannot connect to the source postgresql://memory:***@"
    )
    assert "s3cret" not in result.stderr and not dest.exists()


def test_a_port_already_in_use_is_named_without_a_traceback(tmp_path: Path) -> None:
    # a new user's trial: serve on a taken port printed uvicorn's and Python's traceback
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("serve", "--db", str(tmp_path / "cm.db"), "--port", str(port))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"channel-memory: cannot listen on 127.0.0.1:{port} (Address already in use)" in (
        result.stderr
    )


def test_a_database_a_command_creates_is_said_so(tmp_path: Path) -> None:
    # a new user's trial: a mistyped --db under ingest or worker made a new database and
    # said nothing, so a backlog went where the server never reads
    db = tmp_path / "typo" / "cm.db"
    source = tmp_path / "events.jsonl"
    source.write_text(json.dumps(message_event("1", "fine")) + "\n")
    env = {"CHANNEL_MEMORY_RETENTION__DAYS": "100000"}
    first = run_cli("ingest", "--db", str(db), str(source), env=env)
    assert first.returncode == 0, first.stderr
    assert first.stderr.strip() == f"channel-memory: created a new database at {db}"
    again = run_cli("worker", "--once", "--db", str(db))
    assert again.returncode == 0, again.stderr
    assert "created a new database" not in again.stderr  # it was there
    other = tmp_path / "other.db"
    fresh = run_cli("worker", "--once", "--db", str(other))
    assert fresh.returncode == 0 and f"created a new database at {other}" in fresh.stderr


def test_serve_refuses_a_public_address_without_tokens(tmp_path: Path) -> None:
    env = {"CHANNEL_MEMORY_TOKEN": ""}
    result = run_cli("serve", "--db", str(tmp_path / "x.db"), "--host", "0.0.0.0", env=env)
    assert result.returncode == 2
    assert "refusing to listen on 0.0.0.0 without any token" in result.stderr


def test_invalid_config_exits_with_a_message(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[ingest]\nmax_events = -1\n")
    result = run_cli("serve", "--config", str(config), "--db", str(tmp_path / "x.db"))
    assert result.returncode == 2
    assert "ingest.max_events" in result.stderr


def test_a_command_that_answers_no_request_needs_no_token_secret(tmp_path: Path) -> None:
    # the server's configuration names its tokens' variables; an offline import, the worker
    # and rules test run with it without them (a new user's trial), serve does not
    config = tmp_path / "cm.toml"
    config.write_text('[[tokens]]\ntoken_env = "CM_NOT_SET_ANYWHERE"\nscopes = ["ingest"]\n')
    source = tmp_path / "events.jsonl"
    source.write_text(json.dumps(message_event("m1", "bought 5k AAPL 189.40")) + "\n")
    db = tmp_path / "cm.db"
    env = {"CHANNEL_MEMORY_RETENTION__DAYS": "100000"}
    imported = run_cli("ingest", "--config", str(config), "--db", str(db), str(source), env=env)
    assert imported.returncode == 0, imported.stderr
    worked = run_cli("worker", "--config", str(config), "--db", str(db), "--once", env=env)
    assert worked.returncode == 0, worked.stderr
    served = run_cli("serve", "--config", str(config), "--db", str(db), "--port", "0", env=env)
    assert served.returncode == 2
    assert "CM_NOT_SET_ANYWHERE is not set; it must hold a token" in served.stderr


def test_serve_prints_where_it_listens_and_accepts_ingest(tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "channel_memory", "serve", "--db", str(db), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CHANNEL_MEMORY_TOKEN": "", "CHANNEL_MEMORY_RETENTION__DAYS": "100000"},
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert "listening on http://127.0.0.1:" in banner
        url = banner.split("listening on ")[1].split()[0]
        assert "curl -s -X POST " + url + "/v1/ingest" in process.stdout.readline()
        response = httpx.post(
            url + "/v1/ingest", json={"events": [message_event("1", "hi")]}, timeout=30
        )
        assert response.status_code == 200
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)
    # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal
    assert process.returncode in (0, -15)
    assert "Application shutdown complete." in errors
    assert query(db, "SELECT content FROM source_messages") == [("hi",)]


def test_serve_without_worker_leaves_derivation_to_another_process(tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "channel_memory",
            "serve",
            "--db",
            str(db),
            "--port",
            "0",
            "--no-worker",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CHANNEL_MEMORY_TOKEN": "", "CHANNEL_MEMORY_RETENTION__DAYS": "100000"},
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split("listening on ")[1].split()[0]
        events = {"events": [message_event("1", "stop moved to 408")]}
        assert httpx.post(url + "/v1/ingest", json=events, timeout=30).status_code == 200
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert query(db, "SELECT count(*) FROM dirty_messages") == [(1,)]
    assert query(db, "SELECT count(*) FROM recall_blocks") == [(0,)]
    drained = run_cli(
        "worker", "--once", "--db", str(db), env={"CHANNEL_MEMORY_RETENTION__DAYS": "100000"}
    )
    assert drained.returncode == 0, drained.stderr
    assert query(db, "SELECT kind FROM recall_blocks") == [("hard_event",)]


SERVE = [sys.executable, "-m", "channel_memory", "serve", "--port", "0"]


@pytest.mark.parametrize("token", ["", "a-single-token-for-everything"])
def test_the_printed_try_line_works_when_pasted(tmp_path: Path, token: str) -> None:
    """The line `serve` prints is pasted into a shell as a new user would: it must be
    accepted today (within retention, not ahead of the clock) and carry the token header."""
    env = {**os.environ, "CHANNEL_MEMORY_TOKEN": token}
    process = subprocess.Popen(
        [*SERVE, "--db", str(tmp_path / "t.db")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        process.stdout.readline()
        line = process.stdout.readline()
        assert line.lstrip().startswith("try: ")
        assert token not in line or not token  # the secret itself is never printed
        pasted = subprocess.run(
            ["bash", "-c", line.split("try: ", 1)[1]],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=True,
        )
        answer = json.loads(pasted.stdout)
        assert answer["inserted"] == 1, answer
        assert answer["results"][0].get("expired") is None
    finally:
        process.terminate()
        process.communicate(timeout=30)


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--worker", "2"],  # --workers
        ["ingest", "--d", "x.db", "events.jsonl"],  # --db
        ["copy", "a.db", "b.db", "--chunk", "10"],  # --chunk-rows
        ["rules", "test", "--conf", "cm.toml"],  # --config
    ],
)
def test_an_abbreviated_option_is_refused_not_read_as_the_whole(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # parsed only: were the option read as the whole one, serve would start
    with pytest.raises(SystemExit) as exited:
        parser().parse_args(argv)
    assert exited.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err
