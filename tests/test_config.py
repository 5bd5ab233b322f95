"""Configuration from TOML and CHANNEL_MEMORY_<SECTION>__<KEY> environment variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from channel_memory.kernel.config import ConfigError, load_settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CHANNEL_MEMORY_TOKEN", "CHANNEL_MEMORY_CONFIG", "CHANNEL_MEMORY_DB"):
        monkeypatch.delenv(name, raising=False)


def test_defaults() -> None:
    settings = load_settings()
    assert settings.ingest.max_body_bytes == 8 * 1024 * 1024
    assert settings.ingest.max_events == 1000
    assert settings.ingest.max_content_chars == 1_000_000
    assert settings.db == Path("channel-memory.db")
    assert settings.tokens == [] and settings.token is None


def test_file_then_env_then_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "cm.toml"
    config.write_text(
        """
db = "from-file.db"
[ingest]
max_events = 10
max_content_chars = 99
writer_wait = "250ms"

[[tokens]]
token_env = "BRIDGE_TOKEN"
scopes = ["ingest"]
agent_id = "bridge"
"""
    )
    monkeypatch.setenv("BRIDGE_TOKEN", "b" * 20)
    monkeypatch.setenv("CHANNEL_MEMORY_INGEST__MAX_EVENTS", "20")
    monkeypatch.setenv("CHANNEL_MEMORY_DB", "from-env.db")
    monkeypatch.setenv("CHANNEL_MEMORY_CONFIG", str(config))
    settings = load_settings()
    assert settings.ingest.max_events == 20  # env beats the file
    assert settings.ingest.max_content_chars == 99  # the file beats defaults
    assert settings.ingest.writer_wait == 0.25
    assert settings.db == Path("from-env.db")
    assert settings.tokens[0].resolve() == "b" * 20
    assert load_settings(db="cli.db").db == Path("cli.db")  # overrides beat env


def test_single_token_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHANNEL_MEMORY_TOKEN", "t" * 24)
    assert load_settings().token == "t" * 24


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[ingest]\nmax_evnts = 3\n", "ingest.max_evnts"),
        ("[ingest]\nmax_events = 0\n", "ingest.max_events"),
        ('[[tokens]]\ntoken = "secret-value-123456"\nscopes = ["root"]\n', "tokens.0.scopes"),
        ('[[tokens]]\nscopes = ["read"]\n', "tokens.0"),
    ],
)
def test_invalid_config_is_a_clear_error(tmp_path: Path, text: str, where: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_settings(config)
    assert where in str(error.value)
    assert "secret-value" not in str(error.value)


def test_missing_token_env_is_a_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "cm.toml"
    config.write_text('[[tokens]]\ntoken_env = "NOT_SET_ANYWHERE"\nscopes = ["read"]\n')
    with pytest.raises(ConfigError, match="NOT_SET_ANYWHERE is not set"):
        load_settings(config)
    # set but too short: said so, with its length, never its value
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NOT_SET_ANYWHERE", "short-secret")
        with pytest.raises(ConfigError, match="holds 12 characters") as error:
            load_settings(config)
        assert "short-secret" not in str(error.value)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "absent.toml")
