"""A household's voice profiles in the store, as recognition by voice reads and writes them
(`speakers.profiles.VoiceProfiles`): an embedding per person of the household (no audio is
ever kept), saved only for a person the household has, forgotten with them; a profile made by
another model is not compared. `enrol_voice` and `forget_voice` are the one door for uploaded
recordings (the REST API's and the dashboard's); enrolment by voice is `voice_enrolment`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from lobug.audio import STT_RATE, check_audio_size, parse_wav, resample
from lobug.backends.base import VoiceActivity
from lobug.backends.vad import MAX_SAMPLE
from lobug.speakers.embedder import MODEL
from lobug.speakers.identify import VoiceProfile
from lobug.speakers.profiles import (
    MAX_SECONDS,
    Enrolment,
    EnrolmentRefused,
    Samples,
    count_problem,
    embedding_bytes,
    embedding_from_bytes,
)
from lobug.speakers.recognition import VoiceRecognition
from lobug.store.errors import PersonNotFound
from lobug.store.household import Person
from lobug.store.household_protocol import PeopleStore
from lobug.store.models import VOICE

# An uploaded recording must hold this much speech, and speech in this share of it (Silero VAD,
# 32 ms chunks): the clips of tests/data/voices hold 1.7-2.0 s in 1.9-2.1 s; 30 s of white,
# brown noise or a tone at any level hold none.
MIN_SPEECH_S = 0.5
MIN_SPEECH_SHARE = 0.2
SPEECH_PROBABILITY = 0.5  # a chunk is speech from here, as a turn's end is heard


class HouseholdVoices:
    def __init__(
        self, store: PeopleStore, agent: str, *, model: str = MODEL, actor: str = VOICE
    ) -> None:
        self.store, self.agent, self.model, self.actor = store, agent, model, actor

    def save(self, profile: VoiceProfile) -> None:
        """Store the profile of the household's person `profile.person` (PersonNotFound when
        the household has nobody of that name)."""
        person = self.store.find_person(self.agent, profile.person)
        if person is None:
            raise PersonNotFound(f"{self.agent!r} has no person called {profile.person!r}")
        data = embedding_bytes(profile.embedding)
        self.store.save_voice_profile(self.agent, person.id, data, self.model, actor=self.actor)

    def list(self) -> list[VoiceProfile]:
        return [
            VoiceProfile(voice.person, embedding_from_bytes(voice.embedding))
            for voice in self.store.voice_profiles(self.agent)
            if voice.model == self.model
        ]

    def delete(self, person: str) -> bool:
        found = self.store.find_person(self.agent, person)
        if found is None:
            return False
        return self.store.delete_voice_profile(self.agent, found.id, actor=self.actor)


class RecognitionOff(ValueError):
    """Voices cannot be learnt or forgotten: recognition by voice is off on this server."""

    def __init__(self) -> None:
        super().__init__("Recognition by voice is off (LOBUG_SPEAKER_RECOGNITION=1)")


def enrol_voice(
    recognition: VoiceRecognition | None,
    store: PeopleStore,
    agent: str,
    person_id: int,
    wavs: Sequence[bytes],
    *,
    max_bytes: int,
    actor: str,
    vad: Callable[[], VoiceActivity] | None = None,
) -> tuple[Person, Enrolment]:
    """Learn the household's person's voice from 2-10 WAV recordings of them (each checked as
    the voice routes check one, 1-30 s, and by the voice-activity model `vad`, Silero by
    default: noise or silence is no one's voice): one embedding is kept, no audio. Raises
    RecognitionOff, PersonNotFound, AudioError or EnrolmentRefused (with the reasons). The one
    door for uploads, from the REST API and the dashboard alike."""
    running = _running(recognition, store, agent, actor)
    person = store.person(agent, person_id)
    count = count_problem(len(wavs))
    if count is not None:
        raise EnrolmentRefused([count])
    recordings = [decoded(wav, max_bytes) for wav in wavs]
    silent = [
        f"recording {n}: {problem}"
        for n, samples in enumerate(recordings, 1)
        if (problem := speech_problem(samples, (vad or _silero)())) is not None
    ]
    if silent:
        raise EnrolmentRefused(silent)
    return person, running.enrol(agent, person.name, recordings)


def speech_problem(samples: Samples, vad: VoiceActivity) -> str | None:
    """Why a recording is not someone speaking (the voice-activity model heard less than
    `MIN_SPEECH_S` of speech, or speech in less than `MIN_SPEECH_SHARE` of it), or None."""
    n = vad.chunk_samples
    pcm = (np.clip(samples, -1.0, 1.0) * MAX_SAMPLE).astype(np.int16)
    chunks = range(0, len(pcm) - n + 1, n)
    voiced = sum(vad.speech_probability(pcm[at : at + n]) >= SPEECH_PROBABILITY for at in chunks)
    seconds = voiced * n / STT_RATE
    if seconds < MIN_SPEECH_S or seconds < MIN_SPEECH_SHARE * len(pcm) / STT_RATE:
        return f"no speech heard in it ({seconds:.1f} s of speech)"
    return None


def _silero() -> VoiceActivity:
    from lobug.backends.vad import SileroVAD

    return SileroVAD()


def forget_voice(
    recognition: VoiceRecognition | None,
    store: PeopleStore,
    agent: str,
    person_id: int,
    *,
    actor: str,
) -> Person:
    """Forget the person's voice profile (their embedding is deleted)."""
    running = _running(recognition, store, agent, actor)
    person = store.person(agent, person_id)
    running.forget(agent, person.name)
    return person


def decoded(wav: bytes, max_bytes: int) -> Samples:
    """A WAV recording as 16 kHz samples (AudioError when it is not one, or too large)."""
    check_audio_size(len(wav), max_bytes)
    audio = parse_wav(wav, max_seconds=MAX_SECONDS)
    return resample(audio.samples, audio.sample_rate, STT_RATE)


def _running(
    recognition: VoiceRecognition | None, store: PeopleStore, agent: str, actor: str
) -> VoiceRecognition:
    """The server's recognizer, keeping this household's profiles (audited as `actor`)."""
    if recognition is None:
        raise RecognitionOff()
    voices = HouseholdVoices(store, agent, actor=actor)
    return VoiceRecognition(recognition.embedder, lambda _: voices, recognition.threshold)
