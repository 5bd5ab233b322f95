"""Schema creation and numbered migrations."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite
import pytest

from channel_memory.store import SchemaTooNew, Store
from channel_memory.store.database import migrations, schema_version
from channel_memory.store.sqlite import define_functions, schema_sql, upgrade

pytestmark = pytest.mark.anyio


def schema_of(path: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name"
        ).fetchall()
    finally:
        conn.close()


async def test_fresh_database_gets_schema_sql_and_its_pragmas(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "a.db")
    try:
        async with store.read() as conn:
            version = await (await conn.execute("PRAGMA user_version")).fetchone()
            mode = await (await conn.execute("PRAGMA journal_mode")).fetchone()
            fks = await (await conn.execute("PRAGMA foreign_keys")).fetchone()
    finally:
        await store.close()
    assert version == (schema_version(schema_sql()),)
    assert mode == ("wal",) and fks == (1,)
    names = {name for name, _ in schema_of(tmp_path / "a.db")}
    assert {"source_messages", "source_fts", "dirty_messages", "coverage_gaps"} <= names


async def test_packaged_migrations_reach_the_schema_version() -> None:
    steps = migrations()
    target = schema_version(schema_sql())
    assert list(steps) == list(range(2, target + 1))


async def test_migrations_apply_in_order_once(tmp_path: Path) -> None:
    v1 = "PRAGMA user_version = 1;\nCREATE TABLE a (x INTEGER);\n"
    v3 = "PRAGMA user_version = 3;\nCREATE TABLE a (x INTEGER, y TEXT);\nCREATE TABLE b (z);\n"
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0002_add_y.sql").write_text("ALTER TABLE a ADD COLUMN y TEXT;\n")
    (folder / "0003_add_b.sql").write_text("-- a table for z\nCREATE TABLE b (z);\n")
    (folder / "notes.txt").write_text("ignored")
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    async with aiosqlite.connect(old, isolation_level=None) as conn:
        assert await upgrade(conn, schema=v1, steps={}) == 1
        await conn.execute("INSERT INTO a VALUES (1)")
        assert await upgrade(conn, schema=v3, steps=migrations(folder)) == 3
        assert await upgrade(conn, schema=v3, steps=migrations(folder)) == 3
        rows = await (await conn.execute("SELECT x, y FROM a")).fetchall()
    assert list(rows) == [(1, None)]
    async with aiosqlite.connect(fresh, isolation_level=None) as conn:
        assert await upgrade(conn, schema=v3, steps={}) == 3
    assert [n for n, _ in schema_of(old)] == [n for n, _ in schema_of(fresh)]


async def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaTooNew):
        await Store.open(path)


async def test_a_failed_migration_leaves_the_old_version(tmp_path: Path) -> None:
    v2 = "PRAGMA user_version = 2;\nCREATE TABLE a (x);\n"
    async with aiosqlite.connect(tmp_path / "x.db", isolation_level=None) as conn:
        await upgrade(conn, schema="PRAGMA user_version = 1;\nCREATE TABLE a (x);\n", steps={})
        with pytest.raises(sqlite3.OperationalError):
            await upgrade(conn, schema=v2, steps={2: "CREATE TABLE a (x);\n"})
        version = await (await conn.execute("PRAGMA user_version")).fetchone()
    assert version == (1,)


@pytest.mark.parametrize("version", [1, 2, 3])
async def test_migrating_an_older_schema_gives_schema_sql(tmp_path: Path, version: int) -> None:
    """A database created by an older version and migrated equals one from schema.sql."""
    old = (Path(__file__).parent / "schemas" / f"v{version}.sql").read_text()
    async with aiosqlite.connect(tmp_path / "old.db", isolation_level=None) as conn:
        await define_functions(conn)  # the store's connections define them (migration 9)
        assert await upgrade(conn, schema=old, steps={}) == version
        assert await upgrade(conn) == schema_version(schema_sql())
    store = await Store.open(tmp_path / "fresh.db")
    await store.close()
    assert schema_of(tmp_path / "old.db") == schema_of(tmp_path / "fresh.db")
