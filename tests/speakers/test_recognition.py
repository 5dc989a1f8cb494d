"""Recognition by voice as one running part (`lobug.speakers.recognition`)."""

from __future__ import annotations

import asyncio

import pytest

from lobug.audio import STT_RATE, Audio
from lobug.config import Settings
from lobug.speakers.profiles import EnrolmentRefused
from lobug.speakers.recognition import VoiceRecognition, in_memory, voice_recognition
from tests.speakers.voices import SpectrumEmbedder, tone


def test_enrolled_voices_are_heard_until_forgotten() -> None:
    recognition = VoiceRecognition(SpectrumEmbedder(), in_memory())
    recognition.enrol("home", "Low", [tone(200, 1.5), tone(205, 1.5)])
    with pytest.raises(EnrolmentRefused):
        recognition.enrol("home", "High", [tone(2500, 0.5), tone(2600, 1.5)])
    assert [p.person for p in recognition.profiles_of("home").list()] == ["Low"]

    async def who(hz: float, agent: str = "home") -> str | None:
        listener = recognition.listener(agent)
        speaker = await listener.finish(tone(hz, 2.0))
        return None if speaker is None else speaker.name

    assert asyncio.run(who(210)) == "Low"
    assert asyncio.run(who(210, "next-door")) == "guest"  # another household's voices
    whole = recognition.speaker_of("home", Audio(tone(210, 2.0), STT_RATE))
    assert whole is not None and whole.name == "Low" and whole.sample is not None
    assert recognition.forget("home", "Low") and not recognition.forget("home", "Low")
    assert asyncio.run(who(210)) == "guest"


def test_recognition_is_off_unless_the_settings_ask() -> None:
    assert voice_recognition(Settings()) is None
    on = voice_recognition(Settings(speaker_recognition=True))
    assert isinstance(on, VoiceRecognition) and on.profiles_of("lobug").list() == []
