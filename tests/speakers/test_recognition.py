"""Recognition by voice as one running part (`lobug.speakers.recognition`)."""

from __future__ import annotations

import asyncio

import pytest

from lobug.config import Settings
from lobug.speakers.profiles import EnrolmentRefused, InMemoryVoiceProfiles
from lobug.speakers.recognition import VoiceRecognition, voice_recognition
from tests.speakers.voices import SpectrumEmbedder, tone


def test_enrolled_voices_are_heard_until_forgotten() -> None:
    recognition = VoiceRecognition(SpectrumEmbedder(), InMemoryVoiceProfiles())
    recognition.enrol("Low", [tone(200, 1.5), tone(205, 1.5)])
    with pytest.raises(EnrolmentRefused):
        recognition.enrol("High", [tone(2500, 0.5), tone(2600, 1.5)])
    assert [p.person for p in recognition.profiles.list()] == ["Low"]

    async def who(hz: float) -> str | None:
        listener = recognition.listener()
        speaker = await listener.finish(tone(hz, 2.0))
        return None if speaker is None else speaker.name

    assert asyncio.run(who(210)) == "Low"
    assert recognition.forget("Low") and not recognition.forget("Low")
    assert asyncio.run(who(210)) == "guest"


def test_recognition_is_off_unless_the_settings_ask() -> None:
    assert voice_recognition(Settings()) is None
    on = voice_recognition(Settings(speaker_recognition=True))
    assert isinstance(on, VoiceRecognition) and on.profiles.list() == []
