"""Recognition by voice as one running part: the embedder, where the profiles live and the
threshold. A voice turn asks it for a `SpeakerListener` of its device's agent (household);
enrolment goes through `enrol`."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from lobug.audio import STT_RATE, Audio, resample
from lobug.config import Settings
from lobug.speakers.embedder import SpeakerEmbedder, WeSpeakerEmbedder
from lobug.speakers.identify import THRESHOLD, Speaker
from lobug.speakers.live import SpeakerListener
from lobug.speakers.model_file import library_path
from lobug.speakers.profiles import (
    Enrolment,
    InMemoryVoiceProfiles,
    Samples,
    VoiceProfiles,
    enrol,
)

EMBEDDER_THREADS = 2
log = logging.getLogger(__name__)


# Where an agent's (a household's) profiles live: `memory.voices.HouseholdVoices` on a store.
ProfilesOf = Callable[[str], VoiceProfiles]


class VoiceRecognition:
    def __init__(
        self, embedder: SpeakerEmbedder, profiles_of: ProfilesOf, threshold: float = THRESHOLD
    ) -> None:
        self.embedder = embedder
        self.profiles_of = profiles_of
        self.threshold = threshold

    def listener(self, agent: str) -> SpeakerListener:
        """A listener for one recording, compared with the agent's profiles stored when it
        ends (a device hears only its own household's voices)."""
        return SpeakerListener(self.embedder, self.profiles_of(agent).list, self.threshold)

    def speaker_of(self, agent: str, audio: Audio) -> Speaker | None:
        """Who of the agent's household spoke a whole recording, computed as a recording
        heard while it arrives is (blocking); None without enough speech, or when the model
        fails (a failing speaker model never costs the turn)."""
        try:
            samples = resample(audio.samples, audio.sample_rate, STT_RATE)
            return self.listener(agent).identify_whole(samples)
        except Exception:
            log.warning("speaker recognition failed", exc_info=True)
            return None

    def enrol(self, agent: str, person: str, utterances: Sequence[Samples]) -> Enrolment:
        """Learn `person`'s voice (replacing an earlier profile); raises EnrolmentRefused."""
        enrolment = enrol(person, utterances, self.embedder)
        self.profiles_of(agent).save(enrolment.profile)
        return enrolment

    def forget(self, agent: str, person: str) -> bool:
        return self.profiles_of(agent).delete(person)


def in_memory() -> ProfilesOf:
    """Profiles kept in memory, one set per agent (tests; a server without a store of them)."""
    kept: dict[str, VoiceProfiles] = {}
    return lambda agent: kept.setdefault(agent, InMemoryVoiceProfiles())


def voice_recognition(
    settings: Settings, profiles_of: ProfilesOf | None = None
) -> VoiceRecognition | None:
    """Recognition by voice when the settings ask for it (the model's package is looked for
    now, so a missing one stops the start with its name); profiles kept in memory unless a
    store of them is given."""
    if not settings.speaker_recognition:
        return None
    if not library_path().is_file():
        raise RuntimeError(f"LOBUG_SPEAKER_RECOGNITION: {library_path()} is missing")
    return VoiceRecognition(WeSpeakerEmbedder(EMBEDDER_THREADS), profiles_of or in_memory())
