"""Enrolment: a person's voice learnt from a few utterances, kept as one averaged, unit-length
embedding and nothing else (the audio is never stored). Each utterance is checked first (long
enough, loud enough) and the set must agree with itself (every utterance close to the others:
one person, not a mix), else enrolment is refused with the reasons.

`VoiceProfiles` is the store interface (save, list, delete by person); `InMemoryVoiceProfiles`
keeps them in a dict for tests and for a server without a database of people."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from lobug.audio import STT_RATE, rms
from lobug.speakers.embedder import Embedding, SpeakerEmbedder, normalised
from lobug.speakers.identify import THRESHOLD, VoiceProfile, similarity

MIN_UTTERANCES = 2
MAX_UTTERANCES = 10
MIN_SECONDS = 1.0  # of each utterance
MAX_SECONDS = 30.0
MIN_RMS = 0.003  # about -50 dBFS: quieter is a microphone too far or muted
# Each utterance must lie at least this close to the mean of the others: the bar for being
# recognised at all, so a profile never holds a voice it would not recognise.
MIN_AGREEMENT = THRESHOLD

Samples = npt.NDArray[np.floating]


class EnrolmentRefused(ValueError):
    """The utterances cannot make a profile; `reasons` says why, one line each."""

    def __init__(self, reasons: Sequence[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = tuple(reasons)


@dataclass(frozen=True)
class Enrolment:
    profile: VoiceProfile
    agreement: float  # the lowest similarity of an utterance to the others


def enrol(person: str, utterances: Sequence[Samples], embedder: SpeakerEmbedder) -> Enrolment:
    """A profile for `person` from 16 kHz float utterances, or EnrolmentRefused."""
    refused = audio_problems(utterances)
    if refused:
        raise EnrolmentRefused(refused)
    embeddings = [embedder.embed(np.asarray(u, dtype=np.float32)) for u in utterances]
    return enrolment_of(person, embeddings)


def enrolment_of(person: str, embeddings: Sequence[Embedding]) -> Enrolment:
    """A profile for `person` from the embeddings of utterances already checked
    (`utterance_problem`), or EnrolmentRefused: too few or too many, or not one voice. The
    rule every enrolment keeps, from uploads and by voice alike."""
    count = count_problem(len(embeddings))
    if count is not None:
        raise EnrolmentRefused([count])
    agreements = [_agreement(embeddings, n) for n in range(len(embeddings))]
    outliers = [n + 1 for n, a in enumerate(agreements) if a < MIN_AGREEMENT]
    if outliers:
        raise EnrolmentRefused(
            [f"utterance {n} does not sound like the others (one person, please)" for n in outliers]
        )
    profile = VoiceProfile(person, averaged(embeddings), len(embeddings))
    return Enrolment(profile, round(min(agreements), 4))


def count_problem(count: int) -> str | None:
    if MIN_UTTERANCES <= count <= MAX_UTTERANCES:
        return None
    return f"give {MIN_UTTERANCES} to {MAX_UTTERANCES} utterances, not {count}"


def audio_problems(utterances: Sequence[Samples]) -> list[str]:
    """Why these utterances cannot be used (empty when they can)."""
    count = count_problem(len(utterances))
    if count is not None:
        return [count]
    found = [utterance_problem(u, f"utterance {n}") for n, u in enumerate(utterances, 1)]
    return [problem for problem in found if problem is not None]


def utterance_problem(samples: Samples, label: str = "it") -> str | None:
    """Why one utterance cannot be learnt from (`label` names it), or None."""
    seconds = len(samples) / STT_RATE
    if seconds < MIN_SECONDS:
        return f"{label} is too short ({seconds:.1f} s, {MIN_SECONDS:.0f} s at least)"
    if seconds > MAX_SECONDS:
        return f"{label} is too long ({seconds:.0f} s, {MAX_SECONDS:.0f} s at most)"
    if rms(np.asarray(samples, dtype=np.float32)) < MIN_RMS:
        return f"{label} is too quiet"
    return None


def averaged(embeddings: Sequence[Embedding]) -> Embedding:
    """The normalised mean of unit embeddings."""
    return normalised(np.mean(np.stack(embeddings), axis=0))


def _agreement(embeddings: Sequence[Embedding], n: int) -> float:
    others = [e for m, e in enumerate(embeddings) if m != n]
    return similarity(embeddings[n], averaged(others))


def embedding_bytes(embedding: Embedding) -> bytes:
    """The embedding as little-endian float32 bytes (how a store keeps it)."""
    return np.asarray(embedding, dtype="<f4").tobytes()


def embedding_from_bytes(data: bytes) -> Embedding:
    if not data or len(data) % 4:
        raise ValueError("stored voice embedding has a bad length")
    return np.frombuffer(data, dtype="<f4").astype(np.float32)


class VoiceProfiles(Protocol):
    """Where voice profiles live: embeddings only, by person."""

    def save(self, profile: VoiceProfile) -> None:
        """Store (or replace) the person's profile."""

    def list(self) -> list[VoiceProfile]:
        """Every profile, by person name."""

    def delete(self, person: str) -> bool:
        """Forget the person's profile; False when there was none."""


class InMemoryVoiceProfiles:
    def __init__(self) -> None:
        self._profiles: dict[str, VoiceProfile] = {}

    def save(self, profile: VoiceProfile) -> None:
        self._profiles[profile.person] = profile

    def list(self) -> list[VoiceProfile]:
        return [self._profiles[name] for name in sorted(self._profiles)]

    def delete(self, person: str) -> bool:
        return self._profiles.pop(person, None) is not None
