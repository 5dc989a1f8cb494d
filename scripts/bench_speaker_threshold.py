"""The voice-match threshold, chosen for a false-accept rate of at most 1% on real recordings
(issue 42): a voice match opens a person's private memory, so a stranger's voice must almost
never pass for them.

Recordings (Debian packages, `apt-get install`): the ones `bench_speakers.py` reads,
asterisk-core-sounds-{en,es,fr,it,ru}-wav (4 credited people, Allison in two languages), and
the Asterisk prompts of three more voices: asterisk-prompt-fr-armelle (Armelle Desjardins),
asterisk-prompt-it-menardi-wav (Menardi's Italian voice), asterisk-prompt-es-co (a Colombian
Spanish voice): 7 people, 8 kHz telephone prompts. With `--klettres`, klettres-data's sets
too (letters and syllables; one set taken for one person, though their speakers are not
credited: a set may hold several voices, or one voice several sets). Embeddings as a voice
turn computes them (`speakers.live`, 1 s windows); each person enrolled from their first
`--enrol` utterances (`speakers.profiles.averaged`), the rest heard against every profile.

Printed, per threshold of a sweep: the false-accept rate over different-speaker trials (an
utterance against another person's profile), the recall over same-speaker trials, and, with
the margin in use (`identify.MARGIN`), how often a person left unenrolled (each in turn) is
taken for someone else and how often an enrolled person is named right. Then the lowest
threshold whose false-accept rate is at most `--far` (1%), and what it costs.

    .venv/bin/python scripts/bench_speaker_threshold.py [--klettres] [--far 0.01]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_speakers import (
    ASTERISK,
    MAX_S,
    MIN_S,
    Embed,
    Utterance,
    _decoded,
    asterisk_utterances,
    klettres_utterances,
    live_embed,
    split,
    trial_scores,
)
from lobug.audio import STT_RATE, rms
from lobug.speakers.embedder import Embedding, WeSpeakerEmbedder
from lobug.speakers.identify import (
    MARGIN,
    THRESHOLD,
    VoiceProfile,
    identify,
    similarity,
)
from lobug.speakers.live import WINDOW_FRAMES
from lobug.speakers.profiles import MIN_RMS, averaged

PROMPT_VOICES = {  # folder of /usr/share/asterisk/sounds -> (person, language, package)
    "fr": ("Armelle Desjardins", "fr", "asterisk-prompt-fr-armelle"),
    "it_IT_f_Menardi": ("Menardi's voice", "it", "asterisk-prompt-it-menardi-wav"),
    "es": ("es-co voice", "es", "asterisk-prompt-es-co"),
}

Tested = list[tuple[str, Embedding]]


@dataclass(frozen=True)
class AtThreshold:
    threshold: float
    false_accepts: float  # different-speaker trials at or above the threshold
    recall: float  # same-speaker trials at or above it
    strangers_named: float  # a person left unenrolled, named as someone (identify, margin)
    named_right: float  # an enrolled person named as themselves (identify, margin)


def prompt_utterances(per_voice: int, seed: int) -> list[Utterance]:
    """The three voices of the asterisk-prompt packages, chosen as `bench_speakers` chooses
    the core voices' (2-5 s, loud enough), their silent ends trimmed."""
    import random

    found: list[Utterance] = []
    for folder, (person, language, package) in PROMPT_VOICES.items():
        paths = sorted(p for p in (ASTERISK / folder).glob("*") if p.suffix in (".gsm", ".wav"))
        if not paths:
            sys.exit(f"install {package} (apt-get) first")
        random.Random(seed).shuffle(paths)
        mine = 0
        for path in paths:
            samples = _decoded(path)
            seconds = len(samples) / STT_RATE
            if mine < per_voice and MIN_S <= seconds <= MAX_S and rms(samples) >= MIN_RMS:
                mine += 1
                found.append(Utterance(person, language, samples))
    return found


def embedded(utterances: list[Utterance], embed: Embed, enrol: int) -> tuple[list, Tested]:
    enrolment, tests = split(utterances, enrol)
    profiles = [
        VoiceProfile(person, averaged([embed(u.samples) for u in heard]), len(heard))
        for person, heard in enrolment.items()
    ]
    return profiles, [(u.person, embed(u.samples)) for u in tests]


def at_threshold(
    threshold: float, target: np.ndarray, other: np.ndarray, profiles: list, tested: Tested
) -> AtThreshold:
    strangers = [
        not identify(e, [p for p in profiles if p.person != person], threshold, MARGIN).is_guest
        for person, e in tested
    ]
    right = [identify(e, profiles, threshold, MARGIN).name == person for person, e in tested]
    return AtThreshold(
        threshold,
        float(np.mean(other >= threshold)),
        float(np.mean(target >= threshold)),
        float(np.mean(strangers)),
        float(np.mean(right)),
    )


def lowest_within(far: float, other: np.ndarray) -> float:
    """The lowest threshold (to 0.005) whose false-accept rate over `other` is at most `far`."""
    for threshold in np.arange(0.0, 1.0, 0.005):
        if float(np.mean(other >= threshold)) <= far:
            return round(float(threshold), 3)
    return 1.0


def lowest_where(
    far: float, target: np.ndarray, other: np.ndarray, profiles: list, tested: Tested
) -> AtThreshold:
    """The lowest threshold (to 0.01, from where trials alone allow) at which both the
    different-speaker trials and the people left unenrolled pass at most `far` of the time."""
    for threshold in np.arange(lowest_within(far, other), 1.0, 0.01):
        row = at_threshold(round(float(threshold), 3), target, other, profiles, tested)
        if row.strangers_named <= far:
            return row
    return at_threshold(1.0, target, other, profiles, tested)


def show(row: AtThreshold, note: str = "") -> None:
    print(
        f"  {row.threshold:5.3f}  false accepts {row.false_accepts:6.2%}  recall {row.recall:6.1%}"
        f"  unenrolled named as someone {row.strangers_named:6.2%}"
        f"  enrolled named right {row.named_right:6.1%}{note}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-speaker", type=int, default=30, help="utterances per voice set")
    parser.add_argument("--enrol", type=int, default=3, help="utterances that enrol a person")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--far", type=float, default=0.01, help="false-accept rate allowed")
    parser.add_argument("--klettres", action="store_true", help="add klettres-data's sets")
    args = parser.parse_args()
    if not ASTERISK.is_dir():
        sys.exit("install asterisk-core-sounds-{en,es,fr,it,ru}-wav (apt-get) first")
    embedder = WeSpeakerEmbedder(threads=2)
    embedder.load()
    credited = list(asterisk_utterances(args.per_speaker, args.seed))
    credited += prompt_utterances(args.per_speaker, args.seed)
    corpora = {"credited voices": credited}
    if args.klettres:
        corpora["credited voices and klettres sets"] = credited + list(
            klettres_utterances(args.per_speaker, args.seed)
        )
    live = live_embed(embedder, WINDOW_FRAMES)
    for name, utterances in corpora.items():
        print(f"{name}:")
        measure(utterances, live, args.enrol, args.far)


def measure(utterances: list[Utterance], embed: Embed, enrol: int, far: float) -> None:
    profiles, tested = embedded(utterances, embed, enrol)
    target, other = trial_scores(tested, profiles)
    print(
        f"  {len(profiles)} people, {len(utterances)} utterances ({len(tested)} heard), "
        f"{len(target)} same-speaker / {len(other)} different-speaker trials; live embeddings, "
        f"margin {MARGIN}"
    )
    print(
        f"  different-speaker scores: p99 {np.percentile(other, 99):.3f}, max {other.max():.3f};"
        f" same-speaker: p5 {np.percentile(target, 5):.3f}, median {np.median(target):.3f}"
    )
    chosen = lowest_within(far, other)
    sweep = sorted({0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65, THRESHOLD, chosen})
    for threshold in sweep:
        notes = [" (in use)" if threshold == THRESHOLD else "", " (chosen)" * (threshold == chosen)]
        show(at_threshold(threshold, target, other, profiles, tested), "".join(notes))
    print(f"  lowest threshold with false accepts <= {far:.0%}: {chosen:.3f}")
    both = lowest_where(far, target, other, profiles, tested)
    print(
        f"  lowest threshold with false accepts and unenrolled named as someone <= {far:.0%}: "
        f"{both.threshold:.3f} (recall {both.recall:.1%})"
    )
    print(f"  the pairs with the most false accepts at {THRESHOLD:.3f} (heard / profile):")
    for (heard, profile), count in worst_pairs(tested, profiles, THRESHOLD)[:6]:
        print(f"    {heard:<32} as {profile:<32} {count}")


def worst_pairs(
    tested: Tested, profiles: list, threshold: float
) -> list[tuple[tuple[str, str], int]]:
    """(heard person, other person's profile) pairs by their false accepts at `threshold`:
    sets whose voices are alike, or perhaps one speaker under two names."""
    counts: dict[tuple[str, str], int] = {}
    for person, embedding in tested:
        for profile in profiles:
            if profile.person != person and similarity(embedding, profile.embedding) >= threshold:
                key = (person, profile.person)
                counts[key] = counts.get(key, 0) + 1
    return sorted(counts.items(), key=lambda item: -item[1])


if __name__ == "__main__":
    main()
