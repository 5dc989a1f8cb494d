"""Settings: every tunable in one object, built once at start-up and passed in.

Nothing here reads the environment at import time: `Settings.from_env(environ)` does it
when the entry point asks.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

LLM_BACKENDS = ("auto", "ollama", "openai", "embedded")
EMBED_BACKENDS = ("local", "ollama", "openai")

DEFAULT_OLLAMA_CHAT_MODEL = "llama3.2"
DEFAULT_EMBED_MODELS = {
    "local": "all-MiniLM-L6-v2-onnx-int8",
    "ollama": "nomic-embed-text",
    "openai": "text-embedding-3-small",
}


class ConfigError(ValueError):
    """A setting is missing, malformed or unsafe; the message says which and how to fix it."""


@dataclass(frozen=True)
class MemoryConfig:
    """The tunables of the memory pipeline (the seed's MemoryConfig, same defaults)."""

    short_term_threshold: int = 30
    short_term_keep: int = 10
    long_term_threshold: int = 20
    long_term_keep: int = 10
    retrieval_top_k: int = 5
    retrieval_min_similarity: float = 0.3
    duplicate_distance_threshold: float = 0.15
    working_memory_size: int = 20
    max_facts_per_exchange: int = 5
    search_vector_weight: float = 0.6
    search_keyword_weight: float = 0.4
    search_recency_weight: float = 0.05

    def __post_init__(self) -> None:
        if (
            min(self.search_vector_weight, self.search_keyword_weight, self.search_recency_weight)
            < 0
        ):
            raise ConfigError("LOBUG_SEARCH_*_WEIGHT must not be negative")
        if self.short_term_keep >= self.short_term_threshold:
            raise ConfigError("LOBUG_SHORT_TERM_KEEP must be below LOBUG_SHORT_TERM_THRESHOLD")
        if self.long_term_keep >= self.long_term_threshold:
            raise ConfigError("LOBUG_LONG_TERM_KEEP must be below LOBUG_LONG_TERM_THRESHOLD")
        if not 0.0 <= self.retrieval_min_similarity <= 1.0:
            raise ConfigError("LOBUG_RETRIEVAL_MIN_SIMILARITY must be between 0 and 1")
        if not 0.0 <= self.duplicate_distance_threshold <= 2.0:
            raise ConfigError("LOBUG_DUPLICATE_DISTANCE must be between 0 and 2")
        for name in ("short_term_keep", "long_term_keep", "retrieval_top_k"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must not be negative")
        if self.working_memory_size < 2:
            raise ConfigError("LOBUG_WORKING_MEMORY_SIZE must be at least 2")


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8321
    db_path: Path = field(default_factory=lambda: default_db_path())
    agent: str = "lobug"
    device_agents: Mapping[str, str] = field(default_factory=dict)

    llm_backend: str = "auto"
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_api_key: str | None = None
    ollama_host: str = "http://127.0.0.1:11434"
    llm_timeout_s: float = 60.0
    llm_connect_timeout_s: float = 3.0
    llm_max_tokens: int = 256
    llm_temperature: float = 0.7
    llm_context_tokens: int = 4096
    llm_threads: int = 2
    llm_prompt_cache_mib: int = 256

    embed_backend: str = "local"
    embed_model: str | None = None
    embed_dim: int | None = None

    speech_enabled: bool = True
    stt_model: str | None = None
    stt_language: str = "en"
    tts_voice: Path | None = None
    tts_sample_rate: int | None = None
    max_audio_seconds: float = 30.0
    max_audio_bytes: int = 8 * 1024 * 1024

    device_tokens: tuple[str, ...] = ()
    allow_unauthenticated: bool = False
    max_text_chars: int = 4000
    max_body_bytes: int = 1024 * 1024
    maintenance_interval_s: float = 300.0
    max_devices: int = 256

    default_search_limit: int = 5
    max_search_limit: int = 20
    max_context_messages: int = 10

    memory: MemoryConfig = field(default_factory=MemoryConfig)

    def __post_init__(self) -> None:
        if self.llm_backend not in LLM_BACKENDS:
            raise ConfigError(f"LOBUG_LLM_BACKEND must be one of {', '.join(LLM_BACKENDS)}")
        if self.embed_backend not in EMBED_BACKENDS:
            raise ConfigError(f"LOBUG_EMBED_BACKEND must be one of {', '.join(EMBED_BACKENDS)}")
        if not 0 < self.port < 65536:
            raise ConfigError("LOBUG_PORT must be between 1 and 65535")
        if self.llm_prompt_cache_mib < 0:
            raise ConfigError("LOBUG_LLM_PROMPT_CACHE_MIB must not be negative")
        if self.max_body_bytes < 1024:
            raise ConfigError("LOBUG_MAX_BODY_BYTES must be at least 1024")
        if not self.maintenance_interval_s > 0:
            raise ConfigError("LOBUG_MAINTENANCE_INTERVAL_S must be positive")
        if self.max_text_chars < 1:
            raise ConfigError("LOBUG_MAX_TEXT_CHARS must be positive")
        if self.max_devices < 1:
            raise ConfigError("LOBUG_MAX_DEVICES must be positive")
        if self.tts_sample_rate is not None and not 8000 <= self.tts_sample_rate <= 48000:
            raise ConfigError("LOBUG_TTS_SAMPLE_RATE must be between 8000 and 48000")
        if self.max_audio_seconds <= 0 or self.max_audio_bytes <= 44:
            raise ConfigError("LOBUG_MAX_AUDIO_SECONDS and LOBUG_MAX_AUDIO_BYTES must be positive")
        if not 1 <= self.default_search_limit <= self.max_search_limit:
            raise ConfigError(
                "MEMORY_DEFAULT_SEARCH_LIMIT must be between 1 and MEMORY_MAX_SEARCH_LIMIT"
            )
        if self.max_context_messages < 0:
            raise ConfigError("MEMORY_MAX_CONTEXT_MESSAGES must not be negative")

    @property
    def embed_model_name(self) -> str:
        return self.embed_model or DEFAULT_EMBED_MODELS[self.embed_backend]

    def agent_for_device(self, device_id: str) -> str:
        return self.device_agents.get(device_id, self.agent)

    def with_overrides(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """Build settings from environment variables (see the README for the list)."""
        env = _Env(environ)
        memory = MemoryConfig(
            short_term_threshold=env.integer("LOBUG_SHORT_TERM_THRESHOLD", 30),
            short_term_keep=env.integer("LOBUG_SHORT_TERM_KEEP", 10),
            long_term_threshold=env.integer("LOBUG_LONG_TERM_THRESHOLD", 20),
            long_term_keep=env.integer("LOBUG_LONG_TERM_KEEP", 10),
            retrieval_top_k=env.integer("LOBUG_RETRIEVAL_TOP_K", 5),
            retrieval_min_similarity=env.number("LOBUG_RETRIEVAL_MIN_SIMILARITY", 0.3),
            duplicate_distance_threshold=env.number("LOBUG_DUPLICATE_DISTANCE", 0.15),
            working_memory_size=env.integer("LOBUG_WORKING_MEMORY_SIZE", 20),
            max_facts_per_exchange=env.integer("LOBUG_MAX_FACTS_PER_EXCHANGE", 5),
            search_vector_weight=env.number("LOBUG_SEARCH_VECTOR_WEIGHT", 0.6),
            search_keyword_weight=env.number("LOBUG_SEARCH_KEYWORD_WEIGHT", 0.4),
            search_recency_weight=env.number("LOBUG_SEARCH_RECENCY_WEIGHT", 0.05),
        )
        db_path = env.text("LOBUG_DB_PATH")
        tts_voice = env.text("LOBUG_TTS_VOICE")
        return cls(
            host=env.text("LOBUG_HOST") or "127.0.0.1",
            port=env.integer("LOBUG_PORT", 8321),
            db_path=Path(db_path).expanduser() if db_path else default_db_path(),
            agent=env.text("LOBUG_AGENT") or "lobug",
            device_agents=parse_device_agents(env.text("LOBUG_DEVICE_AGENTS") or ""),
            llm_backend=(env.text("LOBUG_LLM_BACKEND") or "auto").lower(),
            llm_model=env.text("LOBUG_LLM_MODEL"),
            llm_base_url=env.text("LOBUG_LLM_BASE_URL"),
            llm_api_key=env.text("LOBUG_LLM_API_KEY"),
            ollama_host=env.text("OLLAMA_HOST") or "http://127.0.0.1:11434",
            llm_timeout_s=env.number("LOBUG_LLM_TIMEOUT", 60.0),
            llm_connect_timeout_s=env.number("LOBUG_LLM_CONNECT_TIMEOUT", 3.0),
            llm_max_tokens=env.integer("LOBUG_LLM_MAX_TOKENS", 256),
            llm_temperature=env.number("LOBUG_LLM_TEMPERATURE", 0.7),
            llm_context_tokens=env.integer("LOBUG_LLM_CONTEXT_TOKENS", 4096),
            llm_threads=env.integer("LOBUG_LLM_THREADS", 2),
            llm_prompt_cache_mib=env.integer("LOBUG_LLM_PROMPT_CACHE_MIB", 256),
            embed_backend=(env.text("LOBUG_EMBED_BACKEND") or "local").lower(),
            embed_model=env.text("LOBUG_EMBED_MODEL"),
            embed_dim=env.optional_integer("LOBUG_EMBED_DIM"),
            speech_enabled=env.flag("LOBUG_SPEECH", True),
            stt_model=env.text("LOBUG_STT_MODEL"),
            stt_language=(env.text("LOBUG_STT_LANGUAGE") or "en").lower(),
            tts_voice=Path(tts_voice).expanduser() if tts_voice else None,
            tts_sample_rate=env.optional_integer("LOBUG_TTS_SAMPLE_RATE"),
            max_audio_seconds=env.number("LOBUG_MAX_AUDIO_SECONDS", 30.0),
            max_audio_bytes=env.integer("LOBUG_MAX_AUDIO_BYTES", 8 * 1024 * 1024),
            device_tokens=parse_tokens(env.text("LOBUG_DEVICE_TOKENS") or ""),
            allow_unauthenticated=env.flag("LOBUG_ALLOW_UNAUTHENTICATED", False),
            max_text_chars=env.integer("LOBUG_MAX_TEXT_CHARS", 4000),
            max_body_bytes=env.integer("LOBUG_MAX_BODY_BYTES", 1024 * 1024),
            maintenance_interval_s=env.number("LOBUG_MAINTENANCE_INTERVAL_S", 300.0),
            max_devices=env.integer("LOBUG_MAX_DEVICES", 256),
            default_search_limit=env.integer("MEMORY_DEFAULT_SEARCH_LIMIT", 5),
            max_search_limit=env.integer("MEMORY_MAX_SEARCH_LIMIT", 20),
            max_context_messages=env.integer("MEMORY_MAX_CONTEXT_MESSAGES", 10),
            memory=memory,
        )

    @classmethod
    def from_memory_env(cls, environ: Mapping[str, str]) -> Settings:
        """Settings for `lobug memory-server`: the seed's MEMORY_* variables (and
        OLLAMA_BASE_URL) take precedence over their LOBUG_* counterparts; tokens and everything
        else come from `from_env`. The database defaults to the device server's."""
        settings = cls.from_env(environ)
        env = _Env(environ)
        db_path = env.text("MEMORY_SERVER_DB_PATH")
        backend = env.text("MEMORY_EMBEDDING_BACKEND")
        return settings.with_overrides(
            host=env.text("MEMORY_SERVER_HOST") or "127.0.0.1",
            port=env.integer("MEMORY_SERVER_PORT", 8283),
            db_path=Path(db_path).expanduser() if db_path else settings.db_path,
            embed_backend=backend.lower() if backend else settings.embed_backend,
            embed_model=env.text("MEMORY_EMBEDDING_MODEL") or settings.embed_model,
            ollama_host=env.text("OLLAMA_BASE_URL") or settings.ollama_host,
        )


def default_db_path() -> Path:
    from platformdirs import user_data_path

    return user_data_path("lobug", appauthor=False) / "memory.db"


def parse_tokens(raw: str) -> tuple[str, ...]:
    return tuple(token.strip() for token in raw.split(",") if token.strip())


def parse_device_agents(raw: str) -> dict[str, str]:
    """`kitchen=family,desk=alex` maps devices to memory namespaces (agents)."""
    mapping: dict[str, str] = {}
    for item in raw.split(","):
        if not item.strip():
            continue
        device, sep, agent = item.partition("=")
        if not sep or not device.strip() or not agent.strip():
            raise ConfigError(f"LOBUG_DEVICE_AGENTS entry {item!r} is not device=agent")
        mapping[device.strip()] = agent.strip()
    return mapping


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings) -> str | None:
    """Refuse an unauthenticated server beyond loopback; return a warning if explicitly allowed."""
    if is_loopback(settings.host) or settings.device_tokens:
        return None
    if settings.allow_unauthenticated:
        return (
            f"Serving on {settings.host} WITHOUT authentication "
            "(LOBUG_ALLOW_UNAUTHENTICATED=1): anyone on the network can talk to the memory."
        )
    raise ConfigError(
        f"LOBUG_HOST={settings.host} is reachable from other machines. Set LOBUG_DEVICE_TOKENS "
        "(comma-separated bearer tokens) or, for old firmware without tokens, "
        "LOBUG_ALLOW_UNAUTHENTICATED=1."
    )


class _Env:
    """Typed reads from an environment mapping, with messages naming the variable."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    def text(self, name: str) -> str | None:
        value = self._environ.get(name, "").strip()
        return value or None

    def integer(self, name: str, default: int) -> int:
        value = self.optional_integer(name)
        return default if value is None else value

    def optional_integer(self, name: str) -> int | None:
        raw = self.text(name)
        if raw is None:
            return None
        try:
            return int(raw)
        except ValueError:
            raise ConfigError(f"{name} must be an integer, got {raw!r}") from None

    def number(self, name: str, default: float) -> float:
        raw = self.text(name)
        if raw is None:
            return default
        try:
            return float(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a number, got {raw!r}") from None

    def flag(self, name: str, default: bool) -> bool:
        raw = self.text(name)
        if raw is None:
            return default
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{name} must be 1/0, true/false, yes/no or on/off, got {raw!r}")
