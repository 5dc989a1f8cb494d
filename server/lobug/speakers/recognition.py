"""Recognition by voice as one running part: the embedder, where the profiles live and the
threshold. A voice turn asks it for a `SpeakerListener`; enrolment goes through `enrol`."""

from __future__ import annotations

import logging
from collections.abc import Sequence

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


class VoiceRecognition:
    def __init__(
        self, embedder: SpeakerEmbedder, profiles: VoiceProfiles, threshold: float = THRESHOLD
    ) -> None:
        self.embedder = embedder
        self.profiles = profiles
        self.threshold = threshold

    def listener(self) -> SpeakerListener:
        """A listener for one recording, compared with the profiles stored when it ends."""
        return SpeakerListener(self.embedder, self.profiles.list, self.threshold)

    def speaker_of(self, samples: Samples) -> Speaker | None:
        """Who spoke a whole 16 kHz recording, computed as a recording heard while it arrives
        is (blocking); None without enough speech, or when the model fails (a failing speaker
        model never costs the turn)."""
        try:
            return self.listener().identify_whole(samples)
        except Exception:
            log.warning("speaker recognition failed", exc_info=True)
            return None

    def enrol(self, person: str, utterances: Sequence[Samples]) -> Enrolment:
        """Learn `person`'s voice (replacing an earlier profile); raises EnrolmentRefused."""
        enrolment = enrol(person, utterances, self.embedder)
        self.profiles.save(enrolment.profile)
        return enrolment

    def forget(self, person: str) -> bool:
        return self.profiles.delete(person)


def voice_recognition(
    settings: Settings, profiles: VoiceProfiles | None = None
) -> VoiceRecognition | None:
    """Recognition by voice when the settings ask for it (the model's package is looked for
    now, so a missing one stops the start with its name); profiles kept in memory unless a
    store of them is given."""
    if not settings.speaker_recognition:
        return None
    if not library_path().is_file():
        raise RuntimeError(f"LOBUG_SPEAKER_RECOGNITION: {library_path()} is missing")
    return VoiceRecognition(
        WeSpeakerEmbedder(EMBEDDER_THREADS), profiles or InMemoryVoiceProfiles()
    )
