"""Turn-end benchmark: today's endpointing (silence and the words heard, `words`) beside the
turn-end model (`lobug.backends.turn_end`) as `lobug.voice.endpointing` uses it (`model+words`: its
"not finished" lengthens the wait, its "finished" shortens it where the words agree) and, for
comparison, the model alone (`model alone`), each asked at `--ask-after-ms` of silence, on the
same audio, in one run.

The endpointer (`lobug.voice.endpointing.Endpointer`, with the real Silero VAD) is fed each
recording 32 ms at a time, with no server: figures are counted in audio, not on the wall
clock, so they do not depend on how loaded the machine is. Two things take time in a real
turn and are modelled here in audio time: the words of the speech so far reach the
endpointer `--words-after-ms` after a silence begins (`listening` transcribes a stretch once
its pause is 120 ms long; the transcription itself is counted as free, which flatters
today's endpointing), and the model's answer `--model-ms` after it was asked (its CPU time
per call, measured at the end of the run on this machine).

The recordings:

- the pause set of `bench_voice.py` (12 sentences said by piper in two halves, 400-700 ms of
  silence between them): a false turn end is one that ends in the pause;
- its 2 s and 5 s utterances (piper), each followed by 2 s of silence: the end-of-speech wait
  (last voiced audio to the turn's end), and false ends inside them;
- real recorded speech: the Asterisk prompts (Allison, Debian's `asterisk-core-sounds-en-wav`
  with transcripts from `asterisk-core-sounds-en`), those whose transcript is one sentence of
  at least `--min-words` words. Each is cut at every pause inside it (a turn not finished: right
  when the endpointer waits at least `OPEN_MS` there) and heard whole (finished: right when it
  ends within `OPEN_MS`; its wait measured).

    .venv/bin/python scripts/bench_turn_end.py [--prompts 40] [--model-ms 70]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import re
import statistics
import sys
import time
import wave
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from scripts.bench_voice import PAUSED, PAUSES_MS, UTTERANCES, spoken  # noqa: E402

from lobug.audio import resample  # noqa: E402
from lobug.backends.base import SpeechToText, TurnEnd, VoiceActivity  # noqa: E402
from lobug.voice import endpointing  # noqa: E402
from lobug.voice.endpointing import Answer, Ask, Endpointer  # noqa: E402

RATE = 16_000
STEP = 512  # fed at a time: one VAD chunk (32 ms)
CLOSING_S = 2.0  # silence after each recording
OPEN_MS = 700  # a wait at least this long outlasts the pause set's pauses (400-700 ms)
CUT_PAUSE_MS = 96  # a pause inside a prompt at least this long is cut at
SOUNDS = Path("/usr/share/asterisk/sounds/en")
TRANSCRIPTS = Path("/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz")
ONE_SENTENCE = re.compile(r"^[^.?!\[\]]+[.?!]$")
ENDPOINTERS = ["words"]  # and each model variant (`main`)


@dataclass
class Case:
    """A recording and where its speech must not end the turn (`until`: the sample up to
    which an end is a false one)."""

    name: str
    kind: str  # "pause", "utterance", "prompt cut", "prompt whole"
    pcm: npt.NDArray[np.int16]
    until: int  # an end before this sample is false (0: none is)
    finished: bool  # whether the turn is whole when the speech stops for good
    voiced: list[float] = field(default_factory=list)  # Silero's answer for each chunk


@dataclass
class Outcome:
    ended_at: int | None  # the sample where the turn ended (None: not within the recording)
    last_voice: int  # where the last speech before the end stopped

    @property
    def wait_ms(self) -> float:
        end = self.ended_at if self.ended_at is not None else float("inf")
        return (end - self.last_voice) * 1000 / RATE


@dataclass
class Later:
    """What arrives after a delay counted in audio: the words, and the model's answers."""

    due: list[tuple[int, Callable[[], None]]] = field(default_factory=list)

    def at(self, sample: int, then: Callable[[], None]) -> None:
        self.due.append((sample, then))

    def deliver(self, now: int) -> None:
        ready = [then for at, then in self.due if at <= now]
        self.due = [(at, then) for at, then in self.due if at > now]
        for then in ready:
            then()


class Words:
    """Whisper's words for the speech so far, transcribed once per piece of audio."""

    def __init__(self, stt: SpeechToText) -> None:
        self._stt = stt
        self._known: dict[str, str] = {}
        self.seconds: list[float] = []

    def of(self, pcm: npt.NDArray[np.int16]) -> str:
        key = hashlib.sha1(pcm.tobytes()).hexdigest()
        if key not in self._known:
            started = time.process_time()
            self._known[key] = self._stt.transcribe(pcm.astype(np.float32) / np.float32(32768)).text
            self.seconds.append(time.process_time() - started)
        return self._known[key]


class ModelAlone(Endpointer):
    """A variant for comparison: the model's answer alone sets the wait (the words decide only
    where it failed); until it answers, the turn waits."""

    def _silence_needed_ms(self) -> float:
        answer = self._answer
        if answer is None or answer[0] != self._last_voice_end:
            return endpointing.INCOMPLETE_SILENCE_MS
        if answer[1] is None:
            return self._silence_for_words_ms()
        if answer[1] >= endpointing.COMPLETE_PROBABILITY:
            return endpointing.COMPLETE_SILENCE_MS
        return endpointing.INCOMPLETE_SILENCE_MS


class Replayed(VoiceActivity):
    """Silero's answers for one recording, heard once and replayed for each endpointer."""

    def __init__(self, probabilities: list[float]) -> None:
        self._probabilities = iter(probabilities)

    def speech_probability(self, chunk: npt.NDArray[np.int16]) -> float:
        return next(self._probabilities)


class Remembered(TurnEnd):
    """The model, each piece of audio asked about once."""

    def __init__(self, model: TurnEnd) -> None:
        self._model = model
        self._known: dict[str, float] = {}

    def completion_probability(self, pcm: npt.NDArray[np.int16]) -> float:
        key = hashlib.sha1(pcm.tobytes()).hexdigest()
        if key not in self._known:
            self._known[key] = self._model.completion_probability(pcm)
        return self._known[key]


def run_case(
    case: Case,
    model: TurnEnd | None,
    words: Words,
    args: argparse.Namespace,
    *,
    ask_after_ms: int = 0,
    reask_after_ms: int = 0,
    kind: type[Endpointer] = Endpointer,
) -> Outcome:
    """Feed `case` to an endpointer (with `model` asked at `ask_after_ms` and, after a "no",
    again each `reask_after_ms` (0: never); or the words alone)."""
    endpointing.ASK_AFTER_MS = ask_after_ms
    endpointing.REASK_AFTER_MS = reask_after_ms or 1_000_000
    later = Later()
    fed = 0
    ask = delayed_ask(model, later, lambda: fed, args) if model else None
    endpointer = kind(Replayed(case.voiced), ask)
    told_for = -1
    while fed < len(case.pcm) and not endpointer.ended:
        fed += STEP
        endpointer.feed(case.pcm[fed - STEP : fed])
        later.deliver(fed)
        voice_end = round(endpointer.last_voice_s * RATE)
        silence_ms = (fed - voice_end) * 1000 / RATE
        if endpointer.spoke and voice_end != told_for and silence_ms >= args.words_after_ms:
            told_for = voice_end
            endpointer.heard(words.of(case.pcm[:voice_end]), voice_end)
    ended = fed if endpointer.ended else None
    return Outcome(ended, round(endpointer.last_voice_s * RATE))


def delayed_ask(
    model: TurnEnd, later: Later, now: Callable[[], int], args: argparse.Namespace
) -> Ask:
    """Asks `model` at once but tells its answer `--model-ms` of audio later."""
    delay = int(args.model_ms * RATE / 1000)

    def ask(pcm: npt.NDArray[np.int16], answer: Answer) -> None:
        probability = model.completion_probability(pcm)
        later.at(now() + delay, lambda: answer(probability))

    return ask


def pause_cases(tts: object) -> list[Case]:
    closing = silence(CLOSING_S)
    cases = []
    for first_words, second_words in PAUSED:
        first, second = spoken(tts, first_words, trim=True), spoken(tts, second_words, trim=True)
        for pause_ms in PAUSES_MS:
            pcm = np.concatenate([first, silence(pause_ms / 1000), second, closing])
            name = f"{first_words} ({pause_ms} ms) {second_words}"
            cases.append(Case(name, "pause", pcm, len(pcm) - len(closing), True))
    return cases


def utterance_cases(tts: object) -> list[Case]:
    cases = []
    for length, texts in UTTERANCES.items():
        for text in texts:
            speech = spoken(tts, text, trim=True)
            pcm = np.concatenate([speech, silence(CLOSING_S)])
            cases.append(Case(text, f"utterance {length}", pcm, len(speech), True))
    return cases


def prompt_cases(count: int, min_words: int, max_seconds: float) -> list[Case]:
    """The Asterisk prompts of one sentence (at most `max_seconds` long): each whole, and cut
    at each pause inside it."""
    cases: list[Case] = []
    for name, text in one_sentence_prompts(min_words):
        speech = trimmed(read_prompt(SOUNDS / f"{name}.wav"))
        if len(speech) > max_seconds * RATE:
            continue
        if sum(case.kind == "prompt whole" for case in cases) == count:
            break
        cases.append(
            Case(text, "prompt whole", np.concatenate([speech, silence(CLOSING_S)]), 0, True)
        )
        for cut in pauses_in(speech):
            cut_text = f"{text} [cut at {cut / RATE:.2f} s]"
            pcm = np.concatenate([speech[:cut], silence(CLOSING_S)])
            cases.append(Case(cut_text, "prompt cut", pcm, len(pcm), False))
    return cases


def one_sentence_prompts(min_words: int) -> list[tuple[str, str]]:
    if not TRANSCRIPTS.is_file() or not SOUNDS.is_dir():
        sys.exit("install asterisk-core-sounds-en-wav and asterisk-core-sounds-en (apt-get) first")
    lines = gzip.decompress(TRANSCRIPTS.read_bytes()).decode("utf-8", "replace").splitlines()
    found = []
    for line in lines:
        name, _, text = line.partition(": ")
        text = text.strip()
        if "/" in name or not ONE_SENTENCE.match(text) or len(text.split()) < min_words:
            continue
        if (SOUNDS / f"{name}.wav").is_file():
            found.append((name, text))
    return sorted(found)


def read_prompt(path: Path) -> npt.NDArray[np.int16]:
    with wave.open(str(path)) as file:
        rate = file.getframerate()
        pcm = np.frombuffer(file.readframes(file.getnframes()), dtype="<i2")
    audio = resample(pcm.astype(np.float32) / np.float32(32768), rate, RATE)
    return (np.clip(audio, -1, 1) * 32767).astype(np.int16)


def speech_probabilities(pcm: npt.NDArray[np.int16]) -> list[float]:
    from lobug.backends.vad import SileroVAD

    vad = SileroVAD()
    return [
        vad.speech_probability(pcm[at : at + STEP]) for at in range(0, len(pcm) - STEP + 1, STEP)
    ]


def voiced_chunks(pcm: npt.NDArray[np.int16]) -> list[bool]:
    return [p >= endpointing.SPEECH_PROBABILITY for p in speech_probabilities(pcm)]


def trimmed(pcm: npt.NDArray[np.int16]) -> npt.NDArray[np.int16]:
    """`pcm` up to the end of its last voiced chunk."""
    voiced = np.flatnonzero(voiced_chunks(pcm))
    return pcm[: (voiced[-1] + 1) * STEP] if len(voiced) else pcm


def pauses_in(pcm: npt.NDArray[np.int16]) -> list[int]:
    """Where each pause of at least `CUT_PAUSE_MS` inside the speech begins (a sample)."""
    voiced = voiced_chunks(pcm)
    cuts, quiet = [], 0
    for n, is_voiced in enumerate(voiced):
        if is_voiced:
            if quiet * STEP * 1000 >= CUT_PAUSE_MS * RATE and n - quiet > 0:
                cuts.append((n - quiet) * STEP)
            quiet = 0
        else:
            quiet += 1
    return [cut for cut in cuts if any(voiced[: cut // STEP])]


def silence(seconds: float) -> npt.NDArray[np.int16]:
    return np.zeros(int(RATE * seconds), dtype=np.int16)


def right(case: Case, outcome: Outcome) -> bool:
    """A cut prompt is right to wait at least `OPEN_MS`; a whole one to end sooner; any
    other recording to end neither before its speech is over nor never."""
    if case.kind == "prompt cut":
        return outcome.wait_ms >= OPEN_MS
    if case.kind == "prompt whole":
        return outcome.wait_ms < OPEN_MS
    return not false_end(case, outcome) and outcome.ended_at is not None


def false_end(case: Case, outcome: Outcome) -> bool:
    return outcome.ended_at is not None and outcome.ended_at < case.until


def p50_p95(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered):.0f} / {p95:.0f}"


def report(cases: list[Case], outcomes: dict[str, list[Outcome]]) -> None:
    kinds = list(dict.fromkeys(case.kind for case in cases))
    print(f"\n{'':30}" + "".join(f"{name:>21}" for name in ENDPOINTERS))
    for kind in kinds:
        chosen = [n for n, case in enumerate(cases) if case.kind == kind]
        print(f"{kind} ({len(chosen)})")
        for label, test in (("right", right), ("false ends", false_end)):
            counts = [
                sum(test(cases[n], outcomes[name][n]) for n in chosen) for name in ENDPOINTERS
            ]
            print(f"  {label:28}" + "".join(f"{c:>21}" for c in counts))
        if kind == "prompt cut":
            continue
        waits = [
            p50_p95(
                [
                    outcomes[name][n].wait_ms
                    for n in chosen
                    if not false_end(cases[n], outcomes[name][n])
                ]
            )
            for name in ENDPOINTERS
        ]
        print(f"  {'wait p50 / p95 (ms)':28}" + "".join(f"{w:>21}" for w in waits))


def print_wrong(cases: list[Case], outcomes: dict[str, list[Outcome]]) -> None:
    print("\nwrong (endpointer: recording, wait after the last speech)")
    for name in ENDPOINTERS:
        for case, outcome in zip(cases, outcomes[name], strict=True):
            if not right(case, outcome):
                print(f"  {name}: [{case.kind}] {case.name!r}: {outcome.wait_ms:.0f} ms")


def model_cpu_ms(model: TurnEnd, cases: list[Case], calls: int = 20) -> list[float]:
    times = []
    for case in cases[:calls]:
        started = time.process_time()
        model.completion_probability(case.pcm[: case.until or len(case.pcm)])
        times.append((time.process_time() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=40, help="Asterisk prompts (one sentence)")
    parser.add_argument("--min-words", type=int, default=5)
    parser.add_argument("--max-seconds", type=float, default=6.0, help="the longest prompt")
    parser.add_argument("--words-after-ms", type=float, default=120.0)
    parser.add_argument("--model-ms", type=float, default=70.0)
    parser.add_argument("--ask-after-ms", type=int, nargs="+", default=[endpointing.ASK_AFTER_MS])
    parser.add_argument(
        "--reask-after-ms",
        type=int,
        nargs="+",
        default=[endpointing.REASK_AFTER_MS, 0],
        help="after a 'no', asked again this much later (0: asked once)",
    )
    parser.add_argument("--wrong", action="store_true", help="list what each got wrong")
    args = parser.parse_args()

    from lobug.backends.speech import PiperTTS, WhisperSTT
    from lobug.backends.turn_end import SmartTurn

    tts = PiperTTS()
    prompts = prompt_cases(args.prompts, args.min_words, args.max_seconds)
    cases = pause_cases(tts) + utterance_cases(tts) + prompts
    words, model = Words(WhisperSTT(threads=1)), SmartTurn()
    for case in cases:
        case.voiced = speech_probabilities(case.pcm)
    remembered = Remembered(model)
    outcomes = {"words": [run_case(case, None, words, args) for case in cases]}
    variants = [("model alone", ModelAlone, at, 0) for at in args.ask_after_ms]
    variants += [
        ("model+words", Endpointer, at, again)
        for at in args.ask_after_ms
        for again in args.reask_after_ms
    ]
    for label, kind, at, again in variants:
        name = f"{label} @{at}" + (f"+{again}" if again else "")
        ENDPOINTERS.append(name)
        outcomes[name] = [
            run_case(
                case, remembered, words, args, ask_after_ms=at, reask_after_ms=again, kind=kind
            )
            for case in cases
        ]
    print(
        f"turn end, in audio time (words {args.words_after_ms:.0f} ms after a silence begins,"
        f" the model asked at @ ms of silence and answering {args.model_ms:.0f} ms later)"
    )
    report(cases, outcomes)
    if args.wrong:
        print_wrong(cases, outcomes)
    cpu = model_cpu_ms(model, cases)
    print(
        f"\nthe model's CPU time per call on this machine (loaded by others?): p50 / p95"
        f" {p50_p95(cpu)}; whisper per transcription {p50_p95([s * 1000 for s in words.seconds])}"
    )


if __name__ == "__main__":
    main()
