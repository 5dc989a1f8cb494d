"""Model backends behind small interfaces, chosen from settings by `build_backends`."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from lobug.backends.base import ChatBackend, Embedder, SpeechToText, TextToSpeech, TurnEnd
from lobug.config import DEFAULT_OLLAMA_CHAT_MODEL, ConfigError, Settings

__all__ = [
    "Backends",
    "ChatBackend",
    "Embedder",
    "build_backends",
    "build_chat",
    "build_embedder",
    "build_stt",
    "build_tts",
    "build_turn_end",
]

log = logging.getLogger(__name__)


@dataclass
class Backends:
    """The models a server runs. Speech is optional: without it /chat/audio answers 503."""

    chat: ChatBackend
    embedder: Embedder
    stt: SpeechToText | None = None
    tts: TextToSpeech | None = None

    def close(self) -> None:
        self.chat.close()
        self.embedder.close()


def build_backends(settings: Settings) -> Backends:
    """Load the configured models (blocking: call from a worker thread)."""
    return Backends(chat=build_chat(settings), embedder=build_embedder(settings))


def build_chat(settings: Settings) -> ChatBackend:
    backend = settings.llm_backend
    if backend == "auto":
        backend = _choose_auto_backend(settings)
    if backend == "ollama":
        from lobug.backends.remote import OllamaChat

        return OllamaChat(
            settings.ollama_host,
            settings.llm_model or DEFAULT_OLLAMA_CHAT_MODEL,
            timeout_s=settings.llm_timeout_s,
            connect_timeout_s=settings.llm_connect_timeout_s,
        )
    if backend == "openai":
        from lobug.backends.remote import OpenAIChat

        if not settings.llm_model:
            raise ConfigError("LOBUG_LLM_BACKEND=openai needs LOBUG_LLM_MODEL (the served model)")
        return OpenAIChat(
            settings.llm_model,
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key,
            timeout_s=settings.llm_timeout_s,
            connect_timeout_s=settings.llm_connect_timeout_s,
        )
    from lobug.backends.bundled_models import bundled_model_at, chat_model_path
    from lobug.backends.embedded import EmbeddedChat

    path = chat_model_path(settings.llm_model, settings.models_dir)
    chat = EmbeddedChat(
        path,
        n_ctx=settings.llm_context_tokens,
        threads=settings.llm_threads,
        prompt_cache_mib=settings.llm_prompt_cache_mib,
    )
    bundled = bundled_model_at(path)
    if bundled is not None and bundled.reply_limits is not None:
        chat.reply_tokens, chat.reply_temperature = bundled.reply_limits
    if bundled is not None:
        chat.answers_about_the_person = bundled.answers_about_the_person
    return chat


def _is_gguf(model: str | None) -> bool:
    return bool(model and model.lower().endswith(".gguf"))


def _choose_auto_backend(settings: Settings) -> str:
    from lobug.backends.bundled_models import is_bundled_name
    from lobug.backends.remote import ollama_has_model

    model = settings.llm_model
    if _is_gguf(model) or is_bundled_name(model):
        return "embedded"
    wanted = model or DEFAULT_OLLAMA_CHAT_MODEL
    if ollama_has_model(settings.ollama_host, wanted):
        log.info("auto: Ollama at %s has %s; using it", settings.ollama_host, wanted)
        return "ollama"
    log.info(
        "auto: no Ollama with %s at %s; using the embedded model", wanted, settings.ollama_host
    )
    return "embedded"


def build_embedder(settings: Settings) -> Embedder:
    if settings.embed_backend == "ollama":
        from lobug.backends.remote import OllamaEmbedder

        return OllamaEmbedder(
            settings.ollama_host,
            settings.embed_model_name,
            dimension=settings.embed_dim,
            timeout_s=settings.llm_timeout_s,
        )
    if settings.embed_backend == "openai":
        from lobug.backends.remote import OpenAIEmbedder

        return OpenAIEmbedder(
            settings.embed_model_name,
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key,
            dimension=settings.embed_dim,
            timeout_s=settings.llm_timeout_s,
        )
    from lobug.backends.embedded import LocalEmbedder

    return LocalEmbedder(threads=settings.llm_threads)


def build_stt(settings: Settings) -> SpeechToText:
    from lobug.backends.speech import WhisperSTT

    return WhisperSTT(settings.stt_model, language=settings.language, threads=settings.stt_threads)


def build_tts(settings: Settings) -> TextToSpeech:
    from lobug.backends.speech import PiperTTS

    return PiperTTS(settings.tts_voice, threads=settings.llm_threads)


def build_turn_end(settings: Settings) -> TurnEnd | None:
    """The turn-end model (LOBUG_TURN_END=model), or None where silence and words decide."""
    if settings.turn_end != "model":
        return None
    from lobug.backends.turn_end import SmartTurn

    return SmartTurn()
