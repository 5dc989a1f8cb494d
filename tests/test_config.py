from __future__ import annotations

from pathlib import Path

import pytest

from lobug.config import ConfigError, MemoryConfig, Settings
from lobug.exposure import check_exposure, is_loopback, is_strong_token


def test_defaults_match_the_documentation() -> None:
    settings = Settings.from_env({})
    assert (settings.host, settings.port) == ("127.0.0.1", 8321)
    assert settings.db_path.name == "memory.db"
    assert "lobug" in str(settings.db_path)
    assert (settings.llm_backend, settings.embed_backend) == ("auto", "local")
    assert settings.ollama_host == "http://127.0.0.1:11434"
    assert settings.max_text_chars == 4000
    assert settings.memory == MemoryConfig(
        short_term_threshold=30,
        short_term_keep=10,
        long_term_threshold=20,
        long_term_keep=10,
        retrieval_top_k=5,
        retrieval_min_similarity=0.3,
        duplicate_distance_threshold=0.15,
    )


def test_environment_overrides_every_tunable(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {
            "LOBUG_HOST": "0.0.0.0",
            "LOBUG_PORT": "9000",
            "LOBUG_DB_PATH": str(tmp_path / "x.db"),
            "LOBUG_LLM_BACKEND": "OpenAI",
            "LOBUG_LLM_MODEL": "qwen",
            "LOBUG_LLM_BASE_URL": "http://127.0.0.1:8000/v1",
            "LOBUG_LLM_API_KEY": "k",
            "OLLAMA_HOST": "http://10.0.0.2:11434",
            "LOBUG_EMBED_BACKEND": "ollama",
            "LOBUG_EMBED_MODEL": "mxbai-embed-large",
            "LOBUG_DEVICE_TOKENS": " a, b ,,",
            "LOBUG_ADMIN_TOKENS": "root-1 ,, root-2 ",
            "LOBUG_DEVICE_AGENTS": "kitchen=family, desk=alex",
            "LOBUG_SHORT_TERM_THRESHOLD": "40",
            "LOBUG_SHORT_TERM_KEEP": "5",
            "LOBUG_LONG_TERM_THRESHOLD": "8",
            "LOBUG_LONG_TERM_KEEP": "2",
            "LOBUG_RETRIEVAL_TOP_K": "7",
            "LOBUG_RETRIEVAL_MIN_SIMILARITY": "0.5",
            "LOBUG_DUPLICATE_DISTANCE": "0.1",
            "LOBUG_MAX_TEXT_CHARS": "100",
            "LOBUG_SPEECH": "off",
            "LOBUG_STT_MODEL": "/models/whisper-small",
            "LOBUG_LANGUAGE": "AUTO",
            "LOBUG_TTS_VOICE": "/voices/amy.onnx",
            "LOBUG_TTS_SAMPLE_RATE": "16000",
            "LOBUG_MAX_AUDIO_SECONDS": "10",
            "LOBUG_MAX_AUDIO_BYTES": "100000",
        }
    )
    assert (settings.host, settings.port, settings.db_path) == ("0.0.0.0", 9000, tmp_path / "x.db")
    assert (settings.llm_backend, settings.llm_model, settings.llm_api_key) == (
        "openai",
        "qwen",
        "k",
    )
    assert settings.embed_model_name == "mxbai-embed-large"
    assert settings.device_tokens == ("a", "b")
    assert settings.admin_tokens == ("root-1", "root-2")
    assert settings.agent_for_device("kitchen") == "family"
    assert settings.agent_for_device("bedroom") == "lobug"
    assert settings.memory.short_term_threshold == 40
    assert settings.memory.long_term_keep == 2
    assert settings.memory.retrieval_top_k == 7
    assert settings.memory.retrieval_min_similarity == 0.5
    assert settings.memory.duplicate_distance_threshold == 0.1
    assert settings.max_text_chars == 100
    assert settings.speech_enabled is False
    assert (settings.stt_model, settings.language) == ("/models/whisper-small", "auto")
    assert settings.tts_voice == Path("/voices/amy.onnx")
    assert settings.tts_sample_rate == 16000
    assert (settings.max_audio_seconds, settings.max_audio_bytes) == (10.0, 100000)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"LOBUG_PORT": "eighty"}, "LOBUG_PORT must be an integer"),
        ({"LOBUG_LLM_BACKEND": "gpt"}, "LOBUG_LLM_BACKEND must be one of"),
        ({"LOBUG_EMBED_BACKEND": "torch"}, "LOBUG_EMBED_BACKEND must be one of"),
        ({"LOBUG_ALLOW_UNAUTHENTICATED": "maybe"}, "LOBUG_ALLOW_UNAUTHENTICATED must be"),
        ({"LOBUG_DEVICE_AGENTS": "kitchen"}, "is not device=agent"),
        ({"LOBUG_SHORT_TERM_KEEP": "30"}, "LOBUG_SHORT_TERM_KEEP must be below"),
        ({"LOBUG_RETRIEVAL_MIN_SIMILARITY": "2"}, "between 0 and 1"),
        ({"LOBUG_VOICE_NOTES_TOKENS": "-1"}, "LOBUG_VOICE_NOTES_TOKENS must be 0 or more"),
        ({"LOBUG_TEXT_NOTES_TOKENS": "-1"}, "LOBUG_TEXT_NOTES_TOKENS must be 0 or more"),
        ({"LOBUG_VOICE_MAX_WORDS": "0"}, "LOBUG_VOICE_MAX_WORDS must be positive"),
        ({"LOBUG_TEXT_MAX_SENTENCES": "0"}, "LOBUG_TEXT_MAX_SENTENCES must be positive"),
    ],
)
def test_bad_values_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.from_env(env)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.0.0.2", True),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("lobug.local", False),
    ],
)
def test_loopback_detection(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_exposed_server_needs_tokens_or_an_explicit_opt_out(tmp_path: Path) -> None:
    exposed = Settings(host="0.0.0.0", db_path=tmp_path / "m.db")
    with pytest.raises(ConfigError, match="LOBUG_DEVICE_TOKENS"):
        check_exposure(exposed)
    assert check_exposure(exposed.with_overrides(device_tokens=("t0ken-Of-16-chars",))) is None
    assert check_exposure(exposed.with_overrides(admin_tokens=("t0ken-Of-16-chars",))) is None
    warning = check_exposure(exposed.with_overrides(allow_unauthenticated=True))
    assert warning is not None and "WITHOUT authentication" in warning
    assert check_exposure(Settings(db_path=tmp_path / "m.db")) is None


@pytest.mark.parametrize(
    ("token", "strong"),
    [
        ("k3V9q2LmZx81RfTa", True),  # 16 characters, 16 different
        ("k3V9q2LmZx81RfT", False),  # 15
        ("abababababababababab", False),  # 2 different characters
        ("abcdefgabcdefgabcdefg", False),  # 7 different
        ("abcdefghabcdefgh", True),  # 8 different
        ("k3V9q2LmZx81Rf é", False),  # not visible ASCII
        ("k3V9q2Lm Zx81RfTa", False),  # a space
    ],
)
def test_tokens_have_a_minimum_strength(token: str, strong: bool) -> None:
    assert is_strong_token(token) is strong


@pytest.mark.parametrize("variable", ["LOBUG_DEVICE_TOKENS", "LOBUG_ADMIN_TOKENS"])
def test_a_weak_token_stops_the_start_naming_its_place_not_its_value(variable: str) -> None:
    settings = Settings.from_env({variable: "Strong-enough-T0ken-1, hunter2"})
    with pytest.raises(ConfigError, match=f"{variable}: token 2 of 2 is too weak") as refused:
        check_exposure(settings)
    assert "hunter2" not in str(refused.value) and "16" in str(refused.value)
    on_loopback = Settings.from_env({variable: "Strong-enough-T0ken-1"})
    assert check_exposure(on_loopback) is None


def test_memory_server_reads_the_seed_variables(tmp_path: Path) -> None:
    settings = Settings.from_memory_env(
        {
            "MEMORY_SERVER_HOST": "127.0.0.2",
            "MEMORY_SERVER_PORT": "9000",
            "MEMORY_SERVER_DB_PATH": str(tmp_path / "m.db"),
            "MEMORY_EMBEDDING_BACKEND": "Ollama",
            "MEMORY_EMBEDDING_MODEL": "all-minilm",
            "OLLAMA_BASE_URL": "http://gpu:11434",
            "MEMORY_DEFAULT_SEARCH_LIMIT": "3",
            "MEMORY_MAX_SEARCH_LIMIT": "7",
            "MEMORY_MAX_CONTEXT_MESSAGES": "4",
            "LOBUG_EMBED_BACKEND": "openai",
            "LOBUG_DEVICE_TOKENS": "t1",
            "LOBUG_ADMIN_TOKENS": "a1,a2",
        }
    )
    assert (settings.host, settings.port) == ("127.0.0.2", 9000)
    assert settings.db_path == tmp_path / "m.db"
    assert (settings.embed_backend, settings.embed_model) == ("ollama", "all-minilm")
    assert settings.ollama_host == "http://gpu:11434"
    assert (settings.default_search_limit, settings.max_search_limit) == (3, 7)
    assert settings.max_context_messages == 4
    assert settings.device_tokens == ("t1",)
    assert settings.admin_tokens == ("a1", "a2")


def test_memory_server_defaults_follow_the_seed() -> None:
    settings = Settings.from_memory_env({})
    assert (settings.device_tokens, settings.admin_tokens) == ((), ())
    assert (settings.host, settings.port) == ("127.0.0.1", 8283)
    assert (settings.default_search_limit, settings.max_search_limit) == (5, 20)
    assert settings.max_context_messages == 10
    assert settings.db_path == Settings.from_env({}).db_path


def test_search_limits_are_checked() -> None:
    with pytest.raises(ConfigError, match="MEMORY_DEFAULT_SEARCH_LIMIT"):
        Settings.from_memory_env({"MEMORY_DEFAULT_SEARCH_LIMIT": "30"})
    with pytest.raises(ConfigError, match="MEMORY_SERVER_PORT"):
        Settings.from_memory_env({"MEMORY_SERVER_PORT": "eighty"})


def test_an_empty_environment_gives_the_field_defaults() -> None:
    settings = Settings.from_env({})
    assert settings.with_overrides(db_path=Settings().db_path) == Settings()


def test_every_settings_field_can_be_set_from_the_environment() -> None:
    from dataclasses import fields

    from lobug.config import MEMORY_ENV, SETTINGS_ENV
    from lobug.config.wyoming import WyomingConfig, wyoming_env
    from lobug.config.xiaozhi import XIAOZHI_ENV, XiaozhiConfig

    nested = {"memory", "xiaozhi", "wyoming"}
    assert {f.name for f in fields(Settings)} - nested == set(SETTINGS_ENV)
    assert {f.name for f in fields(MemoryConfig)} == set(MEMORY_ENV)
    assert {f.name for f in fields(XiaozhiConfig)} == set(XIAOZHI_ENV)
    assert {f.name for f in fields(WyomingConfig)} == set(wyoming_env(bool))


def test_the_xiaozhi_settings_are_read_and_checked() -> None:
    read = Settings.from_env(
        {
            "LOBUG_XIAOZHI_URL": "wss://bug.example/xiaozhi/v1/",
            "LOBUG_XIAOZHI_OUTPUT_RATE": "16000",
        }
    ).xiaozhi
    assert read.url == "wss://bug.example/xiaozhi/v1/" and read.output_rate == 16000
    with pytest.raises(ValueError, match="24000 or 16000"):
        Settings.from_env({"LOBUG_XIAOZHI_OUTPUT_RATE": "44100"})
    with pytest.raises(ValueError, match="ws:// or wss://"):
        Settings.from_env({"LOBUG_XIAOZHI_URL": "http://bug.example/"})


def test_max_devices_is_read_and_checked() -> None:
    assert Settings.from_env({}).max_devices == 256
    assert Settings.from_env({"LOBUG_MAX_DEVICES": "8"}).max_devices == 8
    with pytest.raises(ConfigError, match="LOBUG_MAX_DEVICES must be positive"):
        Settings.from_env({"LOBUG_MAX_DEVICES": "0"})


def test_the_database_url_names_the_engine() -> None:
    default = Settings.from_env({"LOBUG_DB_PATH": "/data/m.db"})
    assert default.store_url == "sqlite:////data/m.db"
    pg = Settings.from_env(
        {"LOBUG_DATABASE_URL": "postgresql://u:p@h/db", "LOBUG_DB_POOL_SIZE": "4"}
    )
    assert (pg.store_url, pg.db_pool_size) == ("postgresql://u:p@h/db", 4)
    memory = Settings.from_memory_env(
        {"LOBUG_DATABASE_URL": "postgresql://h/a", "MEMORY_SERVER_DATABASE_URL": "postgresql://h/b"}
    )
    assert memory.store_url == "postgresql://h/b"
    with pytest.raises(ConfigError):
        Settings.from_env({"LOBUG_DATABASE_URL": "mysql://h/db"})
    with pytest.raises(ConfigError):
        Settings.from_env({"LOBUG_DB_POOL_SIZE": "0"})
    assert Settings.from_env({}).hnsw_ef_search == 200
    with pytest.raises(ConfigError, match="pgvector's range"):
        Settings.from_env({"LOBUG_HNSW_EF_SEARCH": "1001"})


def test_the_nightly_dream_can_be_turned_off() -> None:
    assert Settings.from_env({"LOBUG_DREAM_AT": "off"}).dream_at == ""
    assert Settings.from_env({"LOBUG_DREAM_AT": "04:15"}).dream_at == "04:15"


def test_a_devices_own_token_is_bound_to_its_device() -> None:
    """`LOBUG_BOUND_DEVICE_TOKENS` (issue 42): `device=token` pairs; the token is everything
    after the first `=` (a device name has none); each is a device token, checked for
    strength like the others."""
    raw = "kitchen=K1tchen-own-token-=x, office:2=0ffice-own-token"
    settings = Settings.from_env({"LOBUG_BOUND_DEVICE_TOKENS": raw})
    assert settings.bound_device_tokens == {
        "kitchen": "K1tchen-own-token-=x",
        "office:2": "0ffice-own-token",
    }
    assert settings.tokens_required
    assert settings.every_device_token == ("K1tchen-own-token-=x", "0ffice-own-token")
    exposed = settings.with_overrides(host="0.0.0.0")
    assert check_exposure(exposed) is None
    for wrong in ("kitchen", "=token-of-16-chars!", "kit chen=token-of-16-chars!", "kitchen="):
        with pytest.raises(ConfigError, match="LOBUG_BOUND_DEVICE_TOKENS entry 1"):
            Settings.from_env({"LOBUG_BOUND_DEVICE_TOKENS": wrong})
    weak = Settings(host="0.0.0.0", bound_device_tokens={"kitchen": "short"})
    with pytest.raises(ConfigError, match="LOBUG_BOUND_DEVICE_TOKENS: token 1 of 1"):
        check_exposure(weak)
