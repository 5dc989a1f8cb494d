"""Settings: every tunable in one object, built once at start-up and passed in.

Nothing here reads the environment at import time: `Settings.from_env(environ)` does it
when the entry point asks.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lobug.clock import clock_time, zone_named
from lobug.config.wyoming import WyomingConfig, wyoming_env
from lobug.config.xiaozhi import XIAOZHI_ENV, XiaozhiConfig
from lobug.names import AGENT_NAME_RULE, DEVICE_ID, DEVICE_ID_RULE, is_agent_name

LLM_BACKENDS = ("auto", "ollama", "openai", "embedded")
# How memory requests ("forget what I said about my trip") are understood: by the model
# where its backend calls tools (`auto`), or by the language's phrase rules (`rules`).
UNDERSTANDINGS = ("auto", "rules")
EMBED_BACKENDS = ("local", "ollama", "openai")
# What ends a voice turn the server hears (xiaozhi `auto`/`realtime`): the turn-end model on the
# audio (`model`; the words heard where it is missing), or silence and the words alone.
TURN_ENDS = ("model", "silence")

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
    search_vector_weight: float = 0.7
    search_keyword_weight: float = 0.3
    search_recency_weight: float = 0.05
    # The user's time zone, for "yesterday" and "this morning" (empty: the machine's).
    timezone: str = ""
    # A dream retires low-value facts beyond this many current facts per agent.
    max_facts: int = 5000
    # Facts from a conversation less sure than this are not stored (`memory/confidence.py`).
    min_fact_confidence: float = 0.3
    # Directories of skills (`<name>/SKILL.md`), searched in this order (`memory/skills.py`).
    skills_dirs: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        try:
            zone_named(self.timezone)
        except ValueError as exc:
            raise ConfigError(f"LOBUG_TIMEZONE: {exc} (a name such as Europe/Berlin)") from exc
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
        if self.max_facts < 1:
            raise ConfigError("LOBUG_MAX_FACTS must be positive")
        if not 0.0 <= self.min_fact_confidence <= 1.0:
            raise ConfigError("LOBUG_MIN_FACT_CONFIDENCE must be between 0 and 1")
        for name in ("short_term_keep", "long_term_keep", "retrieval_top_k"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must not be negative")
        if self.working_memory_size < 2:
            raise ConfigError("LOBUG_WORKING_MEMORY_SIZE must be at least 2")


# How long a reply may be (`turn/spoken.py`): each at least 1.
REPLY_LIMITS = ("text_max_sentences", "voice_max_sentences", "voice_max_tokens", "voice_max_words")
NOTES_BUDGETS = ("text_notes_tokens", "voice_notes_tokens")


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8321
    db_path: Path = field(default_factory=lambda: default_db_path())
    # `sqlite:///path` or `postgresql://user:pass@host:port/db`; None: SQLite at `db_path`.
    database_url: str | None = None
    db_pool_size: int = 10
    hnsw_ef_search: int = 200  # recall@5 1.000 at 1M bench vectors (docs/operations.md)
    agent: str = "lobug"
    device_agents: Mapping[str, str] = field(default_factory=dict)

    llm_backend: str = "auto"
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_api_key: str | None = None
    ollama_host: str = "http://127.0.0.1:11434"
    llm_timeout_s: float = 60.0
    llm_connect_timeout_s: float = 3.0
    # None: the chat model's own (`ChatBackend.reply_tokens`, `reply_temperature`).
    llm_max_tokens: int | None = None
    llm_temperature: float | None = None
    # A text turn's answer (`/chat/text`, `lobug chat`) ends after this many sentences: the
    # standing prompt asks for one to three (`turn/spoken.py`).
    text_max_sentences: int = 3
    # A text turn's notes (facts, episodes, messages found for its words), read while the
    # person waits: at most this many tokens of them (estimate; voice turns: below).
    text_notes_tokens: int = 200
    llm_context_tokens: int = 4096
    llm_threads: int = 2
    llm_prompt_cache_mib: int = 256
    models_dir: Path | None = None  # chunked models are joined here; None: <user data dir>/models
    understanding: str = "auto"  # UNDERSTANDINGS

    embed_backend: str = "local"
    embed_model: str | None = None
    embed_dim: int | None = None

    speech_enabled: bool = True
    speaker_recognition: bool = False
    stt_model: str | None = None
    # Whisper is as fast on one thread as on two (decoding is most of it), and leaves the
    # other core to the model reading the answer's prompt meanwhile.
    stt_threads: int = 1
    # The conversation's language: speech recognition's, and the one replies, summaries and
    # facts must be in (`auto`: detected by speech recognition, replies not checked for it).
    language: str = "en"
    turn_end: str = "model"  # TURN_ENDS
    tts_voice: Path | None = None
    tts_sample_rate: int | None = None
    max_audio_seconds: float = 30.0
    max_audio_bytes: int = 8 * 1024 * 1024
    voice_max_sentences: int = 2
    voice_max_tokens: int = 96
    # A spoken sentence after the first is said only while the answer stays within this many
    # words (the first is said whole): "two short sentences", about ten seconds of speech.
    voice_max_words: int = 30
    # A voice turn's notes (facts, episodes, messages found for its words) are read after the
    # words are known, while the person waits: at most this many tokens of them (estimate).
    voice_notes_tokens: int = 80

    device_tokens: tuple[str, ...] = ()
    # A device's own token (`kitchen=<token>`): the evidence that a caller is that device, so
    # it reads as the device's person (`memory/evidence.py`); a plain device token: a guest.
    bound_device_tokens: Mapping[str, str] = field(default_factory=dict)
    admin_tokens: tuple[str, ...] = ()
    allow_unauthenticated: bool = False
    # Host names served besides the loopback ones (`lobug.api.cross_site`); lower case.
    allowed_hosts: tuple[str, ...] = ()
    max_text_chars: int = 4000
    max_body_bytes: int = 1024 * 1024
    maintenance_interval_s: float = 300.0
    max_devices: int = 256
    # The nightly dream, local time (LOBUG_TIMEZONE) as HH:MM; empty: no nightly dream.
    dream_at: str = "03:30"

    default_search_limit: int = 5
    max_search_limit: int = 20
    max_context_messages: int = 10

    memory: MemoryConfig = field(default_factory=MemoryConfig)
    xiaozhi: XiaozhiConfig = field(default_factory=XiaozhiConfig)
    wyoming: WyomingConfig = field(default_factory=WyomingConfig)

    def __post_init__(self) -> None:
        if self.llm_backend not in LLM_BACKENDS:
            raise ConfigError(f"LOBUG_LLM_BACKEND must be one of {', '.join(LLM_BACKENDS)}")
        if self.understanding not in UNDERSTANDINGS:
            raise ConfigError(f"LOBUG_UNDERSTANDING must be one of {', '.join(UNDERSTANDINGS)}")
        self._check_turn_end()
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
        if self.dream_at and clock_time(self.dream_at) is None:
            raise ConfigError("LOBUG_DREAM_AT must be a time of day as HH:MM (or empty: never)")
        if self.tts_sample_rate is not None and not 8000 <= self.tts_sample_rate <= 48000:
            raise ConfigError("LOBUG_TTS_SAMPLE_RATE must be between 8000 and 48000")
        for limit in REPLY_LIMITS:
            if getattr(self, limit) < 1:
                raise ConfigError(f"{SETTINGS_ENV[limit][0]} must be positive")
        if min(self.llm_threads, self.stt_threads) < 1:
            raise ConfigError("LOBUG_LLM_THREADS and LOBUG_STT_THREADS must be positive")
        for budget in NOTES_BUDGETS:
            if getattr(self, budget) < 0:
                raise ConfigError(f"{SETTINGS_ENV[budget][0]} must be 0 or more")
        if self.max_audio_seconds <= 0 or self.max_audio_bytes <= 44:
            raise ConfigError("LOBUG_MAX_AUDIO_SECONDS and LOBUG_MAX_AUDIO_BYTES must be positive")
        if not 1 <= self.default_search_limit <= self.max_search_limit:
            raise ConfigError(
                "MEMORY_DEFAULT_SEARCH_LIMIT must be between 1 and MEMORY_MAX_SEARCH_LIMIT"
            )
        if self.max_context_messages < 0:
            raise ConfigError("MEMORY_MAX_CONTEXT_MESSAGES must not be negative")
        if self.database_url is not None and not self.database_url.startswith(DATABASE_SCHEMES):
            raise ConfigError("LOBUG_DATABASE_URL must start with sqlite:/// or postgresql://")
        if self.db_pool_size < 1:
            raise ConfigError("LOBUG_DB_POOL_SIZE must be positive")
        if not 1 <= self.hnsw_ef_search <= 1000:
            raise ConfigError("LOBUG_HNSW_EF_SEARCH must be 1 to 1000 (pgvector's range)")
        for agent in (self.agent, *self.device_agents.values()):
            if not is_agent_name(agent):
                raise ConfigError(f"LOBUG_AGENT / LOBUG_DEVICE_AGENTS {agent!r}: {AGENT_NAME_RULE}")

    def _check_turn_end(self) -> None:
        if self.turn_end not in TURN_ENDS:
            raise ConfigError(f"LOBUG_TURN_END must be one of {', '.join(TURN_ENDS)}")

    @property
    def tokens_required(self) -> bool:
        """Whether any bearer token, device or admin, is configured."""
        return bool(self.device_tokens or self.bound_device_tokens or self.admin_tokens)

    @property
    def token_devices(self) -> frozenset[str] | None:
        """Where tokens are required, the devices with a token of their own: only their
        binding to a person says who speaks (`memory/people.Household`); None without tokens."""
        return frozenset(self.bound_device_tokens) if self.tokens_required else None

    @property
    def every_device_token(self) -> tuple[str, ...]:
        """The plain device tokens and the devices' own (`bound_device_tokens`)."""
        return (*self.device_tokens, *self.bound_device_tokens.values())

    @property
    def embed_model_name(self) -> str:
        return self.embed_model or DEFAULT_EMBED_MODELS[self.embed_backend]

    @property
    def store_url(self) -> str:
        """Where the memory lives: LOBUG_DATABASE_URL, or the SQLite file LOBUG_DB_PATH."""
        return self.database_url or f"sqlite:///{self.db_path}"

    def agent_for_device(self, device_id: str) -> str:
        return self.device_agents.get(device_id, self.agent)

    def reply_limits(self, tokens: int, temperature: float) -> tuple[int, float]:
        """A reply's token limit and temperature: as set here, else the model's own."""
        return (
            tokens if self.llm_max_tokens is None else self.llm_max_tokens,
            temperature if self.llm_temperature is None else self.llm_temperature,
        )

    def with_overrides(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """Build settings from environment variables (see docs/configuration.md for the list). A
        variable that is not set leaves the field's default, written once, above."""
        env = _Env(environ)
        memory = MemoryConfig(**env.read_all(MEMORY_ENV))
        read = env.read_all(SETTINGS_ENV)
        if "llm_api_key" not in read and environ.get("OPENAI_API_KEY", "").strip():
            # The name every OpenAI client reads; LOBUG_LLM_API_KEY wins when both are set.
            read["llm_api_key"] = environ["OPENAI_API_KEY"].strip()
        xiaozhi = XiaozhiConfig(**env.read_all(XIAOZHI_ENV))
        wyoming = WyomingConfig(**env.read_all(wyoming_env(_flag)))
        return cls(**read, memory=memory, xiaozhi=xiaozhi, wyoming=wyoming)

    @classmethod
    def from_memory_env(cls, environ: Mapping[str, str]) -> Settings:
        """Settings for `lobug memory-server`: the seed's MEMORY_* variables (and
        OLLAMA_BASE_URL) take precedence over their LOBUG_* counterparts; tokens and everything
        else come from `from_env`. The database defaults to the device server's; host and port
        do not follow LOBUG_HOST/LOBUG_PORT (the memory server has its own)."""
        settings = cls.from_env(environ)
        own: dict[str, Any] = {"host": cls.host, "port": MEMORY_SERVER_PORT}
        return settings.with_overrides(**(own | _Env(environ).read_all(MEMORY_SERVER_ENV)))


DATABASE_SCHEMES = ("sqlite:///", "postgresql://", "postgres://")


def default_db_path() -> Path:
    from platformdirs import user_data_path

    return user_data_path("lobug", appauthor=False) / "memory.db"


def parse_tokens(raw: str) -> tuple[str, ...]:
    return tuple(token.strip() for token in raw.split(",") if token.strip())


def parse_host_names(raw: str) -> tuple[str, ...]:
    """`lobug.local,192.168.1.50`: host names or addresses, without scheme or port."""
    names = []
    for item in raw.split(","):
        name = item.strip().lower().rstrip(".")
        if name.startswith("[") and name.endswith("]"):
            name = name[1:-1]
        if not name:
            continue
        if "/" in name or (":" in name and not _is_address(name)):
            raise ValueError("host names separated by commas, without scheme or port")
        names.append(name)
    return tuple(names)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def parse_bound_device_tokens(raw: str) -> dict[str, str]:
    """`kitchen=<token>,office=<token>`: each device's own token (a device name has no `=`,
    so the token is everything after the first)."""
    bound: dict[str, str] = {}
    for item in raw.split(","):
        if not item.strip():
            continue
        device, sep, token = item.strip().partition("=")
        if not sep or not DEVICE_ID.fullmatch(device) or not token:
            raise ConfigError(
                f"LOBUG_BOUND_DEVICE_TOKENS entry {len(bound) + 1} is not device=token "
                f"(device: {DEVICE_ID_RULE})"
            )
        bound[device] = token
    return bound


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


class _Env:
    """Typed reads from an environment mapping, with messages naming the variable."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    def text(self, name: str) -> str | None:
        value = self._environ.get(name, "").strip()
        return value or None

    def read_all(self, table: Mapping[str, tuple[str, Parser]]) -> dict[str, Any]:
        """The fields of `table` whose variable is set, each parsed by its parser; a value the
        parser refuses is a ConfigError naming the variable."""
        found = {}
        for field_name, (variable, parse) in table.items():
            raw = self.text(variable)
            if raw is None:
                continue
            try:
                found[field_name] = parse(raw)
            except ConfigError:
                raise
            except ValueError as exc:
                raise ConfigError(f"{variable} must be {exc}, got {raw!r}") from None
        return found


Parser = Callable[[str], Any]


def _integer(raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise ValueError("an integer") from None


def _number(raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise ValueError("a number") from None


def _flag(raw: str) -> bool:
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("1/0, true/false, yes/no or on/off")


def _path(raw: str) -> Path:
    return Path(raw).expanduser()


def _paths(raw: str) -> tuple[Path, ...]:
    """Directories separated as PATH separates them (`:`; `;` on Windows)."""
    return tuple(Path(part).expanduser() for part in raw.split(os.pathsep) if part.strip())


MEMORY_ENV: dict[str, tuple[str, Parser]] = {
    "short_term_threshold": ("LOBUG_SHORT_TERM_THRESHOLD", _integer),
    "short_term_keep": ("LOBUG_SHORT_TERM_KEEP", _integer),
    "long_term_threshold": ("LOBUG_LONG_TERM_THRESHOLD", _integer),
    "long_term_keep": ("LOBUG_LONG_TERM_KEEP", _integer),
    "retrieval_top_k": ("LOBUG_RETRIEVAL_TOP_K", _integer),
    "retrieval_min_similarity": ("LOBUG_RETRIEVAL_MIN_SIMILARITY", _number),
    "duplicate_distance_threshold": ("LOBUG_DUPLICATE_DISTANCE", _number),
    "working_memory_size": ("LOBUG_WORKING_MEMORY_SIZE", _integer),
    "max_facts_per_exchange": ("LOBUG_MAX_FACTS_PER_EXCHANGE", _integer),
    "search_vector_weight": ("LOBUG_SEARCH_VECTOR_WEIGHT", _number),
    "search_keyword_weight": ("LOBUG_SEARCH_KEYWORD_WEIGHT", _number),
    "search_recency_weight": ("LOBUG_SEARCH_RECENCY_WEIGHT", _number),
    "timezone": ("LOBUG_TIMEZONE", str),
    "max_facts": ("LOBUG_MAX_FACTS", _integer),
    "min_fact_confidence": ("LOBUG_MIN_FACT_CONFIDENCE", _number),
    "skills_dirs": ("LOBUG_SKILLS_DIRS", _paths),
}


def _dream_time(raw: str) -> str:
    """`HH:MM` local time of the nightly dream, or `off` for none."""
    return "" if raw.strip().lower() == "off" else raw.strip()


SETTINGS_ENV: dict[str, tuple[str, Parser]] = {
    "host": ("LOBUG_HOST", str),
    "port": ("LOBUG_PORT", _integer),
    "db_path": ("LOBUG_DB_PATH", _path),
    "database_url": ("LOBUG_DATABASE_URL", str),
    "db_pool_size": ("LOBUG_DB_POOL_SIZE", _integer),
    "hnsw_ef_search": ("LOBUG_HNSW_EF_SEARCH", _integer),
    "agent": ("LOBUG_AGENT", str),
    "device_agents": ("LOBUG_DEVICE_AGENTS", parse_device_agents),
    "llm_backend": ("LOBUG_LLM_BACKEND", str.lower),
    "llm_model": ("LOBUG_LLM_MODEL", str),
    "llm_base_url": ("LOBUG_LLM_BASE_URL", str),
    "llm_api_key": ("LOBUG_LLM_API_KEY", str),
    "ollama_host": ("OLLAMA_HOST", str),
    "llm_timeout_s": ("LOBUG_LLM_TIMEOUT", _number),
    "llm_connect_timeout_s": ("LOBUG_LLM_CONNECT_TIMEOUT", _number),
    "llm_max_tokens": ("LOBUG_LLM_MAX_TOKENS", _integer),
    "llm_temperature": ("LOBUG_LLM_TEMPERATURE", _number),
    "llm_context_tokens": ("LOBUG_LLM_CONTEXT_TOKENS", _integer),
    "llm_threads": ("LOBUG_LLM_THREADS", _integer),
    "llm_prompt_cache_mib": ("LOBUG_LLM_PROMPT_CACHE_MIB", _integer),
    "models_dir": ("LOBUG_MODELS_DIR", _path),
    "understanding": ("LOBUG_UNDERSTANDING", str.lower),
    "embed_backend": ("LOBUG_EMBED_BACKEND", str.lower),
    "embed_model": ("LOBUG_EMBED_MODEL", str),
    "embed_dim": ("LOBUG_EMBED_DIM", _integer),
    "speech_enabled": ("LOBUG_SPEECH", _flag),
    "speaker_recognition": ("LOBUG_SPEAKER_RECOGNITION", _flag),
    "stt_model": ("LOBUG_STT_MODEL", str),
    "stt_threads": ("LOBUG_STT_THREADS", _integer),
    "language": ("LOBUG_LANGUAGE", str.lower),
    "turn_end": ("LOBUG_TURN_END", str.lower),
    "tts_voice": ("LOBUG_TTS_VOICE", _path),
    "tts_sample_rate": ("LOBUG_TTS_SAMPLE_RATE", _integer),
    "max_audio_seconds": ("LOBUG_MAX_AUDIO_SECONDS", _number),
    "max_audio_bytes": ("LOBUG_MAX_AUDIO_BYTES", _integer),
    "text_max_sentences": ("LOBUG_TEXT_MAX_SENTENCES", _integer),
    "text_notes_tokens": ("LOBUG_TEXT_NOTES_TOKENS", _integer),
    "voice_max_sentences": ("LOBUG_VOICE_MAX_SENTENCES", _integer),
    "voice_max_tokens": ("LOBUG_VOICE_MAX_TOKENS", _integer),
    "voice_max_words": ("LOBUG_VOICE_MAX_WORDS", _integer),
    "voice_notes_tokens": ("LOBUG_VOICE_NOTES_TOKENS", _integer),
    "device_tokens": ("LOBUG_DEVICE_TOKENS", parse_tokens),
    "bound_device_tokens": ("LOBUG_BOUND_DEVICE_TOKENS", parse_bound_device_tokens),
    "admin_tokens": ("LOBUG_ADMIN_TOKENS", parse_tokens),
    "allow_unauthenticated": ("LOBUG_ALLOW_UNAUTHENTICATED", _flag),
    "allowed_hosts": ("LOBUG_ALLOWED_HOSTS", parse_host_names),
    "max_text_chars": ("LOBUG_MAX_TEXT_CHARS", _integer),
    "max_body_bytes": ("LOBUG_MAX_BODY_BYTES", _integer),
    "maintenance_interval_s": ("LOBUG_MAINTENANCE_INTERVAL_S", _number),
    "default_search_limit": ("MEMORY_DEFAULT_SEARCH_LIMIT", _integer),
    "max_search_limit": ("MEMORY_MAX_SEARCH_LIMIT", _integer),
    "max_context_messages": ("MEMORY_MAX_CONTEXT_MESSAGES", _integer),
    "max_devices": ("LOBUG_MAX_DEVICES", _integer),
    "dream_at": ("LOBUG_DREAM_AT", _dream_time),
}

# `lobug memory-server`: the seed's variables, over what `from_env` read.
MEMORY_SERVER_PORT = 8283
MEMORY_SERVER_ENV: dict[str, tuple[str, Parser]] = {
    "host": ("MEMORY_SERVER_HOST", str),
    "port": ("MEMORY_SERVER_PORT", _integer),
    "db_path": ("MEMORY_SERVER_DB_PATH", _path),
    "database_url": ("MEMORY_SERVER_DATABASE_URL", str),
    "embed_backend": ("MEMORY_EMBEDDING_BACKEND", str.lower),
    "embed_model": ("MEMORY_EMBEDDING_MODEL", str),
    "ollama_host": ("OLLAMA_BASE_URL", str),
}
