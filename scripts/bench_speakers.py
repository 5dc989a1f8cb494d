"""Recognition by voice, measured on recordings of real people.

Voices (Debian packages, installed with `apt-get install`):
- asterisk-core-sounds-{en,es,fr,it,ru}-wav: the Asterisk prompts, 8 kHz, credited voices:
  Allison Smith (en and es, CC-BY-SA-3.0), June Wallack (fr, CC-BY-SA-3.0), Carlo Flora (it,
  CC-BY-3.0), Maxim of ivrvoice.ru (ru, CC-BY-3.0). Four people; Allison speaks two languages,
  so she is enrolled in English and heard in Spanish too.
- klettres-data (`--klettres`, GPL-2+): letters and syllables, 44.1 kHz, one set per language
  whose speakers are not credited. Each set is taken for one person (an assumption: a set may
  hold several voices, or one person several sets); an utterance is 4 clips run together.

Each person is enrolled (`speakers.profiles.enrol`) from their first `--enrol` utterances; the
others are heard against every profile. Printed: identification accuracy among the enrolled
(closed set), the equal error rate over all (utterance, profile) trials with its threshold,
false accepts and rejects at the threshold in use (`identify.THRESHOLD`), and how often an
unenrolled person is taken for a guest (each person left out of the profiles in turn). The same
for embeddings computed while the person speaks (`speakers.live`, windows of 1 s) beside the
whole utterance at once. Then the time per 2-4 s utterance on `--threads` threads: the whole
utterance embedded at its end (the baseline) against what is left at the end when the windows
were embedded while it arrived.

    .venv/bin/python scripts/bench_speakers.py [--per-speaker 30] [--klettres]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from lobug.audio import STT_RATE, parse_wav, resample, rms
from lobug.speakers.embedder import Embedding, WeSpeakerEmbedder
from lobug.speakers.identify import THRESHOLD, VoiceProfile, identify, similarity
from lobug.speakers.live import WINDOW_S, LiveEmbedding
from lobug.speakers.profiles import MIN_RMS, averaged

ASTERISK = Path("/usr/share/asterisk/sounds")
ASTERISK_VOICES = {  # folder -> (person, language)
    "en_US_f_Allison": ("Allison Smith", "en"),
    "es_MX_f_Allison": ("Allison Smith", "es"),
    "fr_CA_f_June": ("June Wallack", "fr"),
    "it_IT_m_Carlo": ("Carlo Flora", "it"),
    "ru_RU_f_IvrvoiceRU": ("Maxim (ivrvoice.ru)", "ru"),
}
KLETTRES = Path("/usr/share/klettres")
CLIPS_PER_KLETTRES_UTTERANCE = 4
MIN_S, MAX_S = 2.0, 5.0
Samples = np.ndarray


@dataclass(frozen=True)
class Utterance:
    person: str
    language: str
    samples: Samples

    @property
    def seconds(self) -> float:
        return len(self.samples) / STT_RATE


def asterisk_utterances(per_voice: int, seed: int) -> Iterator[Utterance]:
    for folder, (person, language) in ASTERISK_VOICES.items():
        paths = sorted((ASTERISK / folder).rglob("*.wav"))
        random.Random(seed).shuffle(paths)
        found = 0
        for path in paths:
            audio = parse_wav(path.read_bytes())
            speech = MIN_S <= audio.seconds <= MAX_S and rms(audio.samples) >= MIN_RMS
            if found < per_voice and speech:  # the "silence" prompts are left out
                found += 1
                yield Utterance(
                    person, language, resample(audio.samples, audio.sample_rate, STT_RATE)
                )


def klettres_utterances(per_set: int, seed: int) -> Iterator[Utterance]:
    for folder in sorted(p for p in KLETTRES.iterdir() if p.is_dir()):
        clips = [_decoded(path) for path in sorted(folder.rglob("*.ogg"))]
        clips = [c for c in clips if len(c) >= STT_RATE // 4]
        random.Random(seed).shuffle(clips)
        groups = len(clips) // CLIPS_PER_KLETTRES_UTTERANCE
        for n in range(min(per_set, groups)):
            group = clips[n * CLIPS_PER_KLETTRES_UTTERANCE : (n + 1) * CLIPS_PER_KLETTRES_UTTERANCE]
            yield Utterance(f"klettres {folder.name}", folder.name, np.concatenate(group))


def _decoded(path: Path) -> Samples:
    """An ogg clip as 16 kHz mono float, its silent ends trimmed (empty when undecodable)."""
    import av

    resampler = av.AudioResampler(format="flt", layout="mono", rate=STT_RATE)
    try:
        with av.open(str(path)) as container:
            frames = [
                out.to_ndarray().ravel()
                for frame in container.decode(audio=0)
                for out in resampler.resample(frame)
            ]
    except av.FFmpegError:
        return np.zeros(0, dtype=np.float32)
    return _trimmed(np.concatenate(frames)) if frames else np.zeros(0, dtype=np.float32)


def _trimmed(samples: Samples) -> Samples:
    loud = np.flatnonzero(np.abs(samples) > 0.02)
    return samples[loud[0] : loud[-1] + 1] if len(loud) else samples[:0]


Embed = Callable[[Samples], Embedding]


@dataclass(frozen=True)
class Scores:
    accuracy: float  # enrolled, closed set
    eer: float
    eer_threshold: float
    false_accepts: float  # at THRESHOLD, of non-target trials
    false_rejects: float  # at THRESHOLD, of target trials
    guest_rate: float  # unenrolled people taken for a guest at THRESHOLD
    trials: tuple[int, int]  # target, non-target


def evaluate(utterances: list[Utterance], embed: Embed, enrol_count: int) -> Scores:
    enrolment, tests = split(utterances, enrol_count)
    profiles = [
        VoiceProfile(person, averaged([embed(u.samples) for u in heard]), len(heard))
        for person, heard in enrolment.items()
    ]
    tested = [(u.person, embed(u.samples)) for u in tests]
    target, other = trial_scores(tested, profiles)
    eer, at = equal_error_rate(target, other)
    return Scores(
        accuracy=float(np.mean([identify(e, profiles, -1.0).name == p for p, e in tested])),
        eer=eer,
        eer_threshold=at,
        false_accepts=float(np.mean(other >= THRESHOLD)),
        false_rejects=float(np.mean(target < THRESHOLD)),
        guest_rate=guest_rate(tested, profiles),
        trials=(len(target), len(other)),
    )


def split(
    utterances: list[Utterance], enrol_count: int
) -> tuple[dict[str, list[Utterance]], list[Utterance]]:
    """The first `enrol_count` utterances of each person in their first language enrol them."""
    enrolment: dict[str, list[Utterance]] = {}
    first_language: dict[str, str] = {}
    tests = []
    for u in utterances:
        language = first_language.setdefault(u.person, u.language)
        heard = enrolment.setdefault(u.person, [])
        if u.language == language and len(heard) < enrol_count:
            heard.append(u)
        else:
            tests.append(u)
    return enrolment, tests


def trial_scores(
    tested: list[tuple[str, Embedding]], profiles: list[VoiceProfile]
) -> tuple[np.ndarray, np.ndarray]:
    target, other = [], []
    for person, embedding in tested:
        for profile in profiles:
            score = similarity(embedding, profile.embedding)
            (target if profile.person == person else other).append(score)
    return np.asarray(target), np.asarray(other)


def equal_error_rate(target: np.ndarray, other: np.ndarray) -> tuple[float, float]:
    """The rate where false rejects meet false accepts, and the threshold there."""
    best = (1.0, 0.0, 0.0)
    for threshold in np.unique(np.concatenate([target, other])):
        rejects, accepts = float(np.mean(target < threshold)), float(np.mean(other >= threshold))
        gap = abs(rejects - accepts)
        if gap < best[0]:
            best = (gap, (rejects + accepts) / 2, float(threshold))
    return best[1], best[2]


def guest_rate(tested: list[tuple[str, Embedding]], profiles: list[VoiceProfile]) -> float:
    """Each person in turn left unenrolled: how often their utterances come out as a guest."""
    outcomes = []
    for person, embedding in tested:
        others = [p for p in profiles if p.person != person]
        outcomes.append(identify(embedding, others).is_guest)
    return float(np.mean(outcomes))


def margin_sweep(
    utterances: list[Utterance], embed: Embed, enrol_count: int, margins: list[float]
) -> None:
    """For each margin (the best profile must beat the second best by this much, else a
    guest), at THRESHOLD: how often an enrolled person is named (right, or someone else),
    and how often a person left unenrolled (each in turn) is taken for a guest."""
    enrolment, tests = split(utterances, enrol_count)
    profiles = [
        VoiceProfile(person, averaged([embed(u.samples) for u in heard]), len(heard))
        for person, heard in enrolment.items()
    ]
    tested = [(u.person, embed(u.samples)) for u in tests]
    for margin in margins:
        named = [identify(e, profiles, THRESHOLD, margin).name for _, e in tested]
        right = np.mean([name == person for name, (person, _) in zip(named, tested, strict=True)])
        wrong = np.mean(
            [name not in (person, "guest") for name, (person, _) in zip(named, tested, strict=True)]
        )
        strangers = [
            identify(e, [p for p in profiles if p.person != person], THRESHOLD, margin).is_guest
            for person, e in tested
        ]
        print(
            f"  margin {margin:.2f}: enrolled named right {right:6.1%}, named wrong {wrong:5.1%};"
            f" unenrolled -> guest {np.mean(strangers):6.1%}"
        )


def live_embed(embedder: WeSpeakerEmbedder, window_frames: int) -> Embed:
    def embed(samples: Samples) -> Embedding:
        result = LiveEmbedding(embedder, window_frames).finish(samples)
        assert result is not None
        return result

    return embed


def timings(
    utterances: list[Utterance], embedder: WeSpeakerEmbedder, window_frames: int
) -> dict[str, list[float]]:
    """Per 2-4 s utterance: ms to embed it whole, and ms left at its end when embedded live
    (the recording handed over every 100 ms as it would arrive)."""
    whole, left = [], []
    for u in (u for u in utterances if 2.0 <= u.seconds <= 4.0):
        started = time.perf_counter()
        embedder.embed(u.samples)
        whole.append((time.perf_counter() - started) * 1000)
        live = LiveEmbedding(embedder, window_frames)
        for end in range(STT_RATE // 10, len(u.samples), STT_RATE // 10):
            live.advance(u.samples[:end])
        started = time.perf_counter()
        live.finish(u.samples)
        left.append((time.perf_counter() - started) * 1000)
    return {"whole utterance at its end (baseline)": whole, "left at the end, live": left}


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def report(name: str, scores: Scores) -> None:
    print(
        f"  {name:<28} accuracy {scores.accuracy:6.1%}"
        f"  EER {scores.eer:5.1%} at {scores.eer_threshold:.3f}"
        f"  at {THRESHOLD:.2f}: false accepts {scores.false_accepts:5.1%},"
        f" false rejects {scores.false_rejects:5.1%}, unenrolled -> guest {scores.guest_rate:5.1%}"
        f"  ({scores.trials[0]} target / {scores.trials[1]} other trials)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-speaker", type=int, default=30, help="utterances per voice set")
    parser.add_argument("--enrol", type=int, default=3, help="utterances that enrol a person")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--window", type=float, default=WINDOW_S, help="live window, seconds")
    parser.add_argument("--klettres", action="store_true", help="add klettres-data's sets")
    parser.add_argument(
        "--margins",
        type=lambda text: [float(m) for m in text.split(",")],
        help="only sweep these margins (e.g. 0,0.05,0.1) over live embeddings of all voices",
    )
    args = parser.parse_args()
    if not ASTERISK.is_dir():
        sys.exit("install asterisk-core-sounds-{en,es,fr,it,ru}-wav (apt-get) first")
    embedder = WeSpeakerEmbedder(threads=args.threads)
    embedder.load()
    corpora = {
        "asterisk (4 credited people)": list(asterisk_utterances(args.per_speaker, args.seed))
    }
    if args.klettres:
        klettres = list(klettres_utterances(args.per_speaker, args.seed))
        corpora["klettres (uncredited sets)"] = klettres
        corpora["both"] = corpora["asterisk (4 credited people)"] + klettres
    if args.margins is not None:
        everyone = corpora.get("both", corpora["asterisk (4 credited people)"])
        print(f"margins (live, {args.window:g} s windows), {len(everyone)} utterances:")
        live = live_embed(embedder, round(args.window * 100))
        margin_sweep(everyone, live, args.enrol, args.margins)
        return
    for name, utterances in corpora.items():
        people = len({u.person for u in utterances})
        seconds = statistics.median(u.seconds for u in utterances)
        print(f"{name}: {people} people, {len(utterances)} utterances, median {seconds:.1f} s")
        report("whole utterance", evaluate(utterances, embedder.embed, args.enrol))
        live = live_embed(embedder, round(args.window * 100))
        report(f"live, {args.window:g} s windows", evaluate(utterances, live, args.enrol))
    print(f"time per 2-4 s utterance, {args.threads} threads (ms):")
    asterisk = corpora["asterisk (4 credited people)"]
    for kind, values in timings(asterisk, embedder, round(args.window * 100)).items():
        print(
            f"  {kind:<40} p50 {percentile(values, 50):6.1f}"
            f"  p95 {percentile(values, 95):6.1f}  (n={len(values)})"
        )


if __name__ == "__main__":
    main()
