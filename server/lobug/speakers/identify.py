"""Who is speaking: the enrolled profile nearest to an utterance's embedding by cosine, or
`guest` when none is near enough. Pure: no model, no store."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from lobug.speakers.embedder import Embedding

GUEST = "guest"
SOURCE = "voice"
# Cosine similarity at or above which a voice is taken for an enrolled person: a match opens
# their private memory (issue 42), so it is chosen for a false-accept rate of at most 1% on
# real recordings, by scripts/bench_speaker_threshold.py --klettres (embeddings computed while
# the person speaks, 1 s windows, 3 utterances enrol each). The 7 credited Asterisk voices
# (1,314 different-speaker trials): false accepts 0.08%, recall 95.0% (100% at 0.40), a person
# never enrolled named as someone 0.46%. With klettres-data's 20 uncredited sets too (27
# voices, 12,558 trials): false accepts 0.93%, recall 80.7% (96.9% at 0.40). It was 0.40, the
# equal-error point, where a never-enrolled voice passed for someone (0.515 in a probe; here
# 3.0% of the trials). docs/devices.md has the sweep.
THRESHOLD = 0.55
# How far the nearest profile must beat the second nearest (cosine): a voice close to two
# profiles is nobody's. scripts/bench_speakers.py --klettres --margins, live embeddings, 24
# voices, each left unenrolled in turn against the 23 others: without a margin a stranger
# passed for someone in 26.1% of trials and 2.7% of enrolled people were named as another;
# with 0.08, 7.2% and 0.0%, for 90.3% named right instead of 94.3% (the rest: guests, who
# fall back on a claim or the device's person). A wrong person hears private facts; a guest
# does not: privacy first. docs/devices.md has the sweep.
MARGIN = 0.08


@dataclass(frozen=True)
class VoiceProfile:
    """A person's voice as an averaged, unit-length embedding (no audio is kept)."""

    person: str
    embedding: Embedding
    utterances: int = 1


@dataclass(frozen=True)
class VoiceSample:
    """An utterance as enrolment may use it: its embedding (no audio), and why it cannot be
    learnt from when it cannot (`profiles.utterance_problem`: too short, too long, too quiet)."""

    embedding: Embedding
    problem: str | None = None


@dataclass(frozen=True)
class Speaker:
    """Who spoke, how sure (cosine similarity, -1..1), from which source (`voice`); `sample`:
    the utterance it was judged from, for enrolment by voice (`memory/voice_enrolment.py`)."""

    name: str
    score: float
    source: str = SOURCE
    sample: VoiceSample | None = field(default=None, compare=False, repr=False)

    @property
    def is_guest(self) -> bool:
        return self.name == GUEST

    def as_tuple(self) -> tuple[str, float, str]:
        return (self.name, self.score, self.source)


def identify(
    embedding: Embedding,
    profiles: Iterable[VoiceProfile],
    threshold: float = THRESHOLD,
    margin: float = MARGIN,
) -> Speaker:
    """The profile nearest to `embedding` if its similarity reaches `threshold` and beats
    the second nearest by `margin`, else a guest (with the best similarity seen, 0 when
    nobody is enrolled)."""
    best: VoiceProfile | None = None
    best_score = second = -1.0
    for profile in profiles:
        score = similarity(embedding, profile.embedding)
        if score > best_score:
            best, best_score, second = profile, score, best_score
        elif score > second:
            second = score
    if best is None:
        return Speaker(GUEST, 0.0)
    if best_score < threshold or best_score - second < margin:
        return Speaker(GUEST, round(best_score, 4))
    return Speaker(best.person, round(best_score, 4))


def similarity(a: Embedding, b: Embedding) -> float:
    """Cosine similarity of two embeddings (unit vectors are not assumed)."""
    denominator = float(np.linalg.norm(a) * np.linalg.norm(b))
    return 0.0 if denominator == 0.0 else float(np.dot(a, b) / denominator)
