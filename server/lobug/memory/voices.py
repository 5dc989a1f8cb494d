"""A household's voice profiles in the store, as recognition by voice reads and writes them
(`speakers.profiles.VoiceProfiles`): an embedding per person of the household (no audio is
ever kept), saved only for a person the household has, forgotten with them; a profile made by
another model is not compared. `enrol_voice` and `forget_voice` are the one door for uploaded
recordings (the REST API's and the dashboard's); enrolment by voice is `voice_enrolment`."""

from __future__ import annotations

from collections.abc import Sequence

from lobug.audio import STT_RATE, check_audio_size, parse_wav, resample
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
) -> tuple[Person, Enrolment]:
    """Learn the household's person's voice from 2-10 WAV recordings of them (each checked as
    the voice routes check one, 1-30 s): one embedding is kept, no audio. Raises
    RecognitionOff, PersonNotFound, AudioError or EnrolmentRefused (with the reasons). The one
    door for uploads, from the REST API and the dashboard alike."""
    running = _running(recognition, store, agent, actor)
    person = store.person(agent, person_id)
    count = count_problem(len(wavs))
    if count is not None:
        raise EnrolmentRefused([count])
    return person, running.enrol(agent, person.name, [decoded(wav, max_bytes) for wav in wavs])


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
