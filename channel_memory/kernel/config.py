"""Configuration: a TOML file plus ``CHANNEL_MEMORY_<SECTION>__<KEY>`` environment variables.

Precedence, highest first: explicit overrides (CLI flags), environment, the TOML
file, defaults. Unknown keys in the file are an error, so a typo is never
silently ignored.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from channel_memory.kernel.timefmt import (
    MICROS_PER_DAY,
    MICROS_PER_SECOND,
    TimeFormatError,
    parse_go_duration,
)

Scope = Literal["ingest", "read", "admin"]
ALL_SCOPES: tuple[Scope, ...] = ("ingest", "read", "admin")


def _seconds(value: Any) -> Any:
    """Accept a Go-style duration string (``"5s"``) or a number of seconds."""
    if isinstance(value, str):
        try:
            return parse_go_duration(value) / MICROS_PER_SECOND
        except TimeFormatError as exc:
            raise ValueError(str(exc)) from exc
    return value


Seconds = Annotated[float, BeforeValidator(_seconds), Field(ge=0)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class IngestSettings(_Section):
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    """Largest request body accepted on any endpoint, in bytes (413 above it)."""
    max_events: int = Field(default=1000, ge=1)
    """Most events in one native batch."""
    max_content_chars: int = Field(default=1_000_000, ge=1)
    """Longest message content accepted, in Unicode code points."""
    writer_wait: Seconds = 5.0
    """How long a batch waits for the single writer before ingest answers 503."""
    max_future_skew: Seconds = 300.0
    """How far ahead of the server clock an event time may be before ingest answers 422."""


class WorkerSettings(_Section):
    enabled: bool = True
    """Run the worker inside ``serve`` (``serve --no-worker`` turns it off)."""
    sweep_interval: Seconds = 60.0
    """How often the worker sweeps for work even when no ingest woke it."""
    poll_interval: Seconds = 1.0
    """How often the worker looks for changes written by another process."""
    lease_ttl: Seconds = Field(default=30.0, ge=5, le=86_400)
    """How long the worker lease outlives its holder's last renewal (the lease lives
    ``max(lease_ttl, 3 * poll_interval)``): a standby takes over a crashed holder's work
    this long after. The holder renews between batches: keep it well above the time one
    batch takes to derive."""
    noise_bucket: Seconds = 3600.0
    """Time bucket (aligned to UTC) for collapsing telemetry and acknowledgements."""
    batch_size: int = Field(default=1000, ge=1, le=100_000)
    """Changed messages derived per transaction."""
    rollup_size: int = Field(default=20, ge=2, le=500)
    """Messages per deterministic sequence rollup."""
    rules_file: Path | None = None
    """Hard-event rules (TOML); the shipped trading-desk rules when unset."""


class FeedSettings(_Section):
    max_chars: int = Field(default=8192, ge=256)
    """Default ``max_chars`` of ``/channel-awareness``."""
    max_chars_limit: int = Field(default=200_000, ge=256)
    """The largest ``max_chars`` a caller may ask for."""
    raw_recent_window: Seconds = 21_600.0
    """Only messages newer than this are served in the raw recent tier."""
    raw_recent_limit: int = Field(default=10, ge=0, le=1000)
    """Default ``limit`` (raw recent tier size) for ``raw_window+digest``."""
    raw_window_limit: int = Field(default=60, ge=0, le=1000)
    """Default ``limit`` for ``raw_window``."""
    hard_event_max_chars: int = Field(default=600, ge=80)
    """Longer hard events keep their decision-bearing lines and elide the rest."""
    trigger_max_chars: int = Field(default=100_000, ge=1)
    """A feed's trigger longer than this is refused (``422 trigger_too_large``), never cut."""


class ToolsSettings(_Section):
    result_budget_chars: int = Field(default=12_000, ge=2_000)
    """Largest tool result, in code points of its compact JSON."""
    default_limit: int = Field(default=20, ge=1)
    """Results per page when the caller gives no ``limit``."""
    max_limit: int = Field(default=100, ge=1)
    """The largest ``limit`` a caller may ask for."""


class RetentionSettings(_Section):
    days: float = Field(default=30.0, gt=0)
    """Sources older than this are dropped, with everything derived from them."""

    def cutoff_us(self, now_us: int) -> int:
        """Messages created before this time, at ``now_us``, are past retention."""
        return now_us - int(self.days * MICROS_PER_DAY)


class ConsumptionSettings(_Section):
    read_ttl: Seconds = Field(default=86_400.0, gt=0)
    """How long a read stays settleable after it was served (``404 read_not_found`` after)."""
    max_reads_per_consumer: int = Field(default=1_000, ge=1)
    """Reads one consumer keeps (pending before settled, newest first); older ones are dropped."""
    max_versions_per_consumer: int = Field(default=50_000, ge=1)
    """Consumed versions one consumer's ledger keeps (the most recent); older count as new."""


class InspectorSettings(_Section):
    enabled: bool = False
    """Serve the read-only web inspector at ``/inspect``. Off by default: it shows stored
    message content to a web browser, a second way out for the channels' text."""
    session_lifetime: Seconds = Field(default=28_800.0, gt=0)
    """How long an inspector sign-in lasts (sessions also end when the server restarts)."""


class LlmSettings(_Section):
    enabled: bool = False
    """Write LLM rollups in the worker (needs the ``llm`` extra: ``pip install '.[llm]'``)."""
    model: str | None = None
    """Any litellm model string, e.g. ``openai/gpt-4o-mini`` or ``ollama/llama3.1``."""
    api_base: str | None = None
    """The provider's base URL (a local Ollama or any OpenAI-compatible server)."""
    api_key: SecretStr | None = None
    """The provider's key; best set as ``CHANNEL_MEMORY_LLM__API_KEY``. When unset, litellm
    reads the provider's usual variable (``OPENAI_API_KEY``...)."""
    window: Seconds = 7200.0
    """Ordinary messages are summarised per UTC-aligned time window of this length."""
    min_window: int = Field(default=4, ge=2)
    """Fewer ordinary messages than this in a window are left to the deterministic blocks."""
    max_window: int = Field(default=60, ge=2, le=500)
    """A window with more messages is split into consecutive runs of at most this many."""
    summary_min_chars: int = Field(default=2000, ge=200)
    """A single ordinary message longer than this gets its own ``message_summary``."""
    max_summary_chars: int = Field(default=600, ge=40)
    """Model output with a longer text is rejected."""
    lookback: Seconds = 86_400.0
    """Only windows that ended within this long before now are summarised."""
    timeout: Seconds = 30.0
    """Seconds one call may take before it counts as failed."""
    retries: int = Field(default=2, ge=0, le=10)
    """Further attempts after a failed call (each attempt counts against the caps)."""
    backoff: Seconds = 2.0
    """Wait before the first retry; doubled for each further one."""
    breaker_failures: int = Field(default=5, ge=1)
    """Consecutive failed calls that open the circuit breaker."""
    breaker_cooldown: Seconds = 600.0
    """How long an open breaker stops all calls."""
    max_output_tokens: int = Field(default=400, ge=16)
    """The ``max_tokens`` asked of the model (also used to project a call's cost)."""
    calls_per_channel_day: int = Field(default=24, ge=0)
    """Calls per channel per UTC day."""
    calls_per_day: int = Field(default=96, ge=0)
    """Calls per deployment per UTC day."""
    usd_per_channel_day: float = Field(default=0.50, ge=0)
    """Spend per channel per UTC day, in USD."""
    usd_per_day: float = Field(default=2.00, ge=0)
    """Spend per deployment per UTC day, in USD."""
    cost_per_call_usd: float = Field(default=0.01, ge=0)
    """The cost assumed for one call to a model litellm has no price for (local models: 0)."""
    detect: bool = False
    """Also ask the model which ordinary messages carry a decision no rule matched; those
    are served as hard events (their own text, never the model's), within the same caps."""

    @model_validator(mode="after")
    def _model_when_enabled(self) -> LlmSettings:
        if self.enabled and not self.model:
            raise ValueError("llm.model is required when llm.enabled is true")
        return self


class TokenSettings(_Section):
    token: str | None = Field(default=None, min_length=16)
    token_env: str | None = None
    scopes: list[Scope] = Field(min_length=1)
    agent_id: str = "agent"
    channels: list[str] = Field(default_factory=lambda: ["*"])
    self_author_ids: list[str] = Field(default_factory=list)
    authorized_author_ids: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_source(self) -> TokenSettings:
        if (self.token is None) == (self.token_env is None):
            raise ValueError("set exactly one of token or token_env")
        return self

    def resolve(self) -> str:
        """The secret itself, read from the environment when ``token_env`` is set."""
        if self.token is not None:
            return self.token
        assert self.token_env is not None
        value = os.environ.get(self.token_env)
        if value is None:
            raise ValueError(
                f"environment variable {self.token_env} is not set; it must hold a token of "
                "16+ characters"
            )
        if len(value) < 16:
            raise ValueError(
                f"environment variable {self.token_env} holds {len(value)} characters; it must "
                "hold a token of 16+ characters"
            )
        return value


_config_file: ContextVar[Path | None] = ContextVar("channel_memory_config_file", default=None)


class Settings(BaseSettings):
    """Every setting of the sidecar. Build it with :func:`load_settings`."""

    model_config = SettingsConfigDict(
        env_prefix="CHANNEL_MEMORY_",
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
    )

    db: Path | str = Path("channel-memory.db")
    """The database (``CHANNEL_MEMORY_DB``): an SQLite file's path, or a
    ``postgresql://user@host:port/dbname`` URL for PostgreSQL (a ``Path`` or a ``str``)."""

    @field_validator("db", mode="before")
    @classmethod
    def _db_target(cls, value: Any) -> Path | str:
        text = str(value)
        if text.lower().startswith(("postgresql://", "postgres://")):
            return text
        if text == ":memory:" or text.lower().startswith("file:"):
            # every connection of the store would open a database of its own
            raise ValueError("give an SQLite file's path (an in-memory database is not one)")
        return Path(value)

    token: str | None = None
    """A single token granting every scope (``CHANNEL_MEMORY_TOKEN``), for peer compatibility."""
    tokens: list[TokenSettings] = Field(default_factory=list)
    ingest: IngestSettings = IngestSettings()
    worker: WorkerSettings = WorkerSettings()
    feed: FeedSettings = FeedSettings()
    tools: ToolsSettings = ToolsSettings()
    retention: RetentionSettings = RetentionSettings()
    llm: LlmSettings = LlmSettings()
    consumption: ConsumptionSettings = ConsumptionSettings()
    inspector: InspectorSettings = InspectorSettings()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = _config_file.get()
        sources: tuple[PydanticBaseSettingsSource, ...] = (init_settings, env_settings)
        if path is not None:
            sources += (TomlConfigSettingsSource(settings_cls, toml_file=path),)
        return sources


class ConfigError(Exception):
    """The configuration file or environment is invalid; the message says where."""


def load_settings(
    config_file: Path | str | None = None, *, tokens_used: bool = True, **overrides: Any
) -> Settings:
    """Load settings from ``config_file`` (or ``CHANNEL_MEMORY_CONFIG``), env and overrides.

    Raises ``ConfigError`` when the file is missing or a value is invalid. A token read
    from the environment (``token_env``) is checked only when ``tokens_used``: a command
    that answers no request (``ingest``, ``worker``, ``rules test``) runs with the
    server's configuration file without the server's secrets.
    """
    raw = config_file if config_file is not None else os.environ.get("CHANNEL_MEMORY_CONFIG")
    path = Path(raw) if raw else None
    if path is not None and not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    marker = _config_file.set(path)
    try:
        settings = Settings(**{k: v for k, v in overrides.items() if v is not None})
        for entry in settings.tokens if tokens_used else ():
            entry.resolve()
    except ValidationError as exc:
        # Never print input values: a bad token line would leak its secret.
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'config'}: {error['msg']}"
            for error in exc.errors(include_input=False, include_url=False)
        )
        raise ConfigError(f"invalid configuration: {problems}") from None
    except ValueError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from None
    finally:
        _config_file.reset(marker)
    return settings
