"""What Lo-Bug offers a Wyoming client (`info`, the answer to `describe`): `asr` (the bundled
faster-whisper), `tts` (piper, streamed sentence by sentence) and `handle` (a Lo-Bug turn with
memory, its reply streamed as `handled-chunk`s before the closing `handled`)."""

from __future__ import annotations

import re

from wyoming.info import (
    AsrModel,
    AsrProgram,
    Attribution,
    HandleModel,
    HandleProgram,
    Info,
    TtsProgram,
    TtsVoice,
)

from lobug import __version__
from lobug.services import Services

ATTRIBUTION = Attribution(name="Lo-Bug", url="")  # no public address yet
WHISPER = Attribution(
    name="OpenAI Whisper (faster-whisper)", url="https://github.com/SYSTRAN/faster-whisper"
)
PIPER = Attribution(name="Piper", url="https://github.com/OHF-Voice/piper1-gpl")
VOICE_LANGUAGE = re.compile(r"^([a-z]{2,3})(?:_[A-Z]{2})?-")


def info(svc: Services) -> Info:
    """The programs, as far as the speech models are known now (the names of models still
    loading are the configured ones)."""
    return Info(asr=[_asr(svc)], tts=[_tts(svc)], handle=[_handle(svc)])


def _asr(svc: Services) -> AsrProgram:
    stt = svc.speech.stt
    model = AsrModel(
        name=stt.model if stt is not None else svc.settings.stt_model or "whisper-base (bundled)",
        attribution=WHISPER,
        installed=True,
        description="faster-whisper, transcribing while the audio arrives",
        version=None,
        languages=heard_languages(svc.settings.language),
    )
    return AsrProgram(
        name="lobug-asr",
        attribution=ATTRIBUTION,
        installed=svc.speech.wanted,
        description="Lo-Bug speech to text",
        version=__version__,
        models=[model],
        supports_transcript_streaming=True,
    )


def _tts(svc: Services) -> TtsProgram:
    tts = svc.speech.tts
    name = tts.model if tts is not None else _configured_voice(svc)
    voice = TtsVoice(
        name=name,
        attribution=PIPER,
        installed=True,
        description="piper",
        version=None,
        languages=[voice_language(name, svc.settings.language)],
    )
    return TtsProgram(
        name="lobug-tts",
        attribution=ATTRIBUTION,
        installed=svc.speech.wanted,
        description="Lo-Bug text to speech",
        version=__version__,
        voices=[voice],
        supports_synthesize_streaming=True,
    )


def _handle(svc: Services) -> HandleProgram:
    language = svc.settings.language
    model = HandleModel(
        name="lobug",
        attribution=ATTRIBUTION,
        installed=True,
        description="a conversation with memory across satellites",
        version=__version__,
        languages=[] if language == "auto" else [language],
    )
    return HandleProgram(
        name="lobug",
        attribution=ATTRIBUTION,
        installed=True,
        description="Lo-Bug, the assistant with a memory",
        version=__version__,
        models=[model],
        supports_handled_streaming=True,
    )


def heard_languages(language: str) -> list[str]:
    """The languages speech is heard in: the conversation's, or all the model's (`auto`)."""
    if language != "auto":
        return [language]
    from faster_whisper.tokenizer import _LANGUAGE_CODES  # the multilingual model's

    return sorted(_LANGUAGE_CODES)


def voice_language(voice: str, language: str) -> str:
    """A piper voice's language from its name (`en_US-joe-medium`: en)."""
    match = VOICE_LANGUAGE.match(voice)
    return match.group(1) if match else ("en" if language == "auto" else language)


def _configured_voice(svc: Services) -> str:
    voice = svc.settings.tts_voice
    return voice.stem if voice is not None else "en_US-joe-medium"
