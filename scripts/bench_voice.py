"""Voice benchmark: end of speech to first reply audio, against a real server process.

Utterances of about 2 and 5 seconds are spoken by piper (the bundled voice). Each streamed turn
uploads its recording to `/chat/audio/stream` the way a device recording live does: an
`audio/wav` body with chunked transfer, one 100 ms chunk every 100 ms. "End of speech" is the
moment the last chunk has been sent; the figure is the time from there to the first PCM byte of
the reply. The xiaozhi WebSocket turns (`bench_xiaozhi.py`) send 60 ms Opus frames in real
time, the speech and then silence until the reply starts (the server's own endpointing ends
the turn): from the frame with the last speech to the first reply audio, and barge-in, from an
`abort` to the last reply audio frame. The non-streamed `/chat/audio` turns upload the whole
recording and wait for the whole reply. Also printed: the word error rate of the server's
transcripts and how long the spoken replies were.

Each recording ends with the silence a device records before its end-of-speech detection stops
it (`--closing-silence-ms`, the firmware's LOBUG_SILENCE_MS, 800). Every server's agent holds
`--facts` facts (100,000: random vectors, written into its database before it starts, as
`bench_memory.py` does), so "memory after the end of speech" (the turn's `retrieve` stage:
HTTP from `Server-Timing`, xiaozhi from the server log) is measured at that size. Half the
xiaozhi turns are interrupted by an `abort`, half (in `realtime` mode) by speech; the
xiaozhi turns' time after the last speech is broken down by stage (the server's `xiaozhi turn
timings` log lines: endpointing, transcription left, the turn's start with memory and the
prompt, the first sentence, its synthesis, Opus). `--pause-turns` sentences said in two halves
with a 400-700 ms pause count the server's false turn ends. With `--baseline DIR` a
second server runs the code of another checkout (DIR/server) and the two take turns, so both
are measured under the same load; a turn begins once the other server's memory work is
done (its own server's is waited for at most `--learning-wait-s`), so no turn runs beside
the other server's learning.
Each length gets one table: issue 16's goal, its starting point, then each server (with
"met" / "not met" against the goal for this checkout). A turn that gets no answer in time (a
machine too busy) is counted as failed and left out.

    .venv/bin/python scripts/bench_voice.py [--turns 20] [--whole-turns 20] [--baseline DIR]

A small run (main's code unpacked with `git archive main | tar -x -C /tmp/main-code` as the
baseline; about 5-10 minutes on a quiet machine):

    .venv/bin/python scripts/bench_voice.py --turns 3 --whole-turns 0 --device-turns 6 \
        --pause-turns 10 --learning-wait-s 5 --lengths 2s --baseline /tmp/main-code
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from urllib.parse import unquote

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from scripts.bench_xiaozhi import DeviceFigures, device_turn, pause_turn  # noqa: E402
from tests.e2e.server import start_server  # noqa: E402

from lobug.audio import encode_wav, resample  # noqa: E402
from lobug.xiaozhi.timing import STAGES  # noqa: E402

RECORD_RATE = 16_000  # what the device records
CHUNK_S = 0.1
UTTERANCES = {
    "2 s": [
        "What is the weather like today?",
        "Set a timer for ten minutes.",
        "Do you remember my name?",
        "Tell me a joke about cats.",
    ],
    "5 s": [
        "Tomorrow I want to visit my sister Emma in Berlin. What should I bring her?",
        "I just came back from a long walk by the river with my dog, and now I am tired.",
        "My favourite food is pizza with mushrooms. Can you suggest a good recipe?",
        "I am planning a trip to the mountains next week. What should I pack for it?",
    ],
}


# Sentences said in two halves, and the pauses between them (issue 30: 400-700 ms).
PAUSED = [
    ("I would like to call", "my sister tomorrow morning."),
    ("Can you remind me to buy", "milk and bread on the way home?"),
    ("My favourite colour is", "dark green, like a forest."),
    ("Tomorrow I am going to visit", "my grandmother in the city."),
    ("What do you think about", "taking the train to Paris?"),
    # Added in the session that made the turn-end rule read subjects and softeners: a pause
    # after a subject, a preposition, "that", and before a request's verb.
    ("My sister", "lives in Berlin with her two cats."),
    ("The weather tomorrow", "will be sunny, I hope."),
    ("Remind me in", "twenty minutes to check the oven."),
    ("I was thinking that", "we could go to the lake."),
    ("Our neighbour's dog", "barks every night at three."),
    ("Could you please", "turn the lights off in the kitchen?"),
    ("My wife and I", "are going to Rome in May."),
]
PAUSES_MS = (400, 500, 600, 700)
OTHERS_WAIT_S = 120  # the most a turn waits for another server's memory work
QUIET = 300  # |sample| below this at a clip's ends is piper's silence, trimmed


@dataclass
class Clip:
    text: str
    wav: bytes  # 16 kHz mono, as the device records
    seconds: float
    speech: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int16))


@dataclass
class Results:
    first_audio: list[float] = field(default_factory=list)
    whole: list[float] = field(default_factory=list)
    reply_seconds: list[float] = field(default_factory=list)
    stages: list[dict[str, float]] = field(default_factory=list)  # streamed turns' Server-Timing
    errors: list[tuple[int, int]] = field(default_factory=list)  # (word errors, words)
    failed: int = 0  # turns that got no answer in time (a machine too busy), left out
    device: DeviceFigures = field(default_factory=DeviceFigures)  # the xiaozhi WebSocket turns
    breakdown: list[dict[str, float]] = field(default_factory=list)  # xiaozhi turns, server log
    ended_in_pause: dict[str, list[str]] = field(default_factory=dict)  # words heard, by half
    verbose: bool = False  # print each streamed turn as it comes


def synthesize_clips(closing_silence_s: float) -> dict[str, list[Clip]]:
    from lobug.backends.speech import PiperTTS

    tts = PiperTTS()
    closing = np.zeros(int(RECORD_RATE * closing_silence_s), dtype=np.int16)
    clips: dict[str, list[Clip]] = {}
    for length, texts in UTTERANCES.items():
        for text in texts:
            speech = spoken(tts, text)
            wav = encode_wav(np.concatenate([speech, closing]), RECORD_RATE)
            clip = Clip(text, wav, len(speech) / RECORD_RATE, speech)
            clips.setdefault(length, []).append(clip)
    return clips


@dataclass
class PausedClip:
    """A sentence said in two halves, `pause_s` of silence between them."""

    text: str
    first: np.ndarray
    second: np.ndarray
    pause_s: float


def synthesize_paused() -> list[PausedClip]:
    """Each of `PAUSED` with each of `PAUSES_MS`, every sentence once before any twice (the
    first `len(PAUSED)` turns say each sentence), its pauses taking turns."""
    from lobug.backends.speech import PiperTTS

    tts = PiperTTS()
    halves = [(spoken(tts, a, trim=True), spoken(tts, b, trim=True)) for a, b in PAUSED]
    return [
        PausedClip(f"{a} ({pause} ms) {b}", first, second, pause / 1000)
        for turn in range(len(PAUSES_MS))
        for n, ((a, b), (first, second)) in enumerate(zip(PAUSED, halves, strict=True))
        for pause in [PAUSES_MS[(n + turn) % len(PAUSES_MS)]]
    ]


def spoken(tts: object, text: str, *, trim: bool = False) -> np.ndarray:
    """`text` said by piper at the device's rate; with `trim` without its silent ends."""
    pieces = list(tts.synthesize(text))  # type: ignore[attr-defined]
    pcm = np.concatenate(pieces).astype(np.float32) / 32768
    pcm = resample(pcm, tts.sample_rate, RECORD_RATE)  # type: ignore[attr-defined]
    speech = (np.clip(pcm, -1, 1) * 32767).astype(np.int16)
    if trim:
        loud = np.flatnonzero(np.abs(speech) > QUIET)
        speech = speech[loud[0] : loud[-1] + 1] if len(loud) else speech
    return speech


def paced(wav: bytes, sent: list[float]) -> Iterator[bytes]:
    """The WAV in 100 ms chunks at the pace of speech; `sent` gets the time the last one left."""
    step = int(RECORD_RATE * CHUNK_S) * 2
    yield wav[:44]
    started = time.perf_counter()
    for n, at in enumerate(range(44, len(wav), step)):
        delay = started + (n + 1) * CHUNK_S - time.perf_counter()
        if delay > 0:
            time.sleep(delay)  # chunk n holds speech that ends (n + 1) * 100 ms in
        yield wav[at : at + step]
    sent.append(time.perf_counter())


def streamed_turn(client: httpx.Client, clip: Clip, results: Results) -> None:
    sent: list[float] = []
    first = None
    body = bytearray()
    headers = {"Content-Type": "audio/wav"}
    with client.stream(
        "POST", "/chat/audio/stream", content=paced(clip.wav, sent), headers=headers
    ) as response:
        response.raise_for_status()
        for chunk in response.iter_bytes():
            body += chunk
            if first is None and len(body) > 44:
                first = time.perf_counter()
        heard = unquote(response.headers["x-lobug-transcription"])
        rate = int(response.headers["x-lobug-sample-rate"])
        results.stages.append(server_timing(response.headers.get("server-timing", "")))
    if first is not None:
        results.first_audio.append(first - sent[0])
        results.reply_seconds.append((len(body) - 44) / 2 / rate)
    else:
        print(f"  (no audio: action {response.headers['x-lobug-action']}, heard {heard!r})")
    results.errors.append(word_errors(clip.text, heard))
    if results.verbose:
        print_turn(first - sent[0] if first is not None else None, results.stages[-1], heard)


def print_turn(first_audio: float | None, stages: dict[str, float], heard: str) -> None:
    """One streamed turn's figures, as they come (`--verbose`)."""
    shown = "no audio" if first_audio is None else f"{first_audio * 1000:,.0f} ms"
    timing = " ".join(f"{name}={ms:,.0f}" for name, ms in stages.items())
    print(f"  first audio {shown}; {timing}; heard {heard!r}", flush=True)


def whole_turn(client: httpx.Client, clip: Clip, results: Results) -> None:
    files = {"audio": ("recording.wav", clip.wav, "audio/wav")}
    started = time.perf_counter()
    response = client.post("/chat/audio", files=files)
    results.whole.append(time.perf_counter() - started)
    response.raise_for_status()
    body = response.json()
    results.errors.append(word_errors(clip.text, body["transcription"]))
    if results.verbose:
        stages = server_timing(response.headers.get("server-timing", ""))
        timing = " ".join(f"{name}={ms:,.0f}" for name, ms in stages.items())
        print(f"  whole {results.whole[-1] * 1000:,.0f} ms; {timing}", flush=True)
    if body["audio_b64"]:
        wav = base64.b64decode(body["audio_b64"])
        rate = int.from_bytes(wav[24:28], "little")
        results.reply_seconds.append((len(wav) - 44) / 2 / rate)


def websocket_url(client: httpx.Client) -> str:
    return str(client.base_url).replace("http", "ws", 1).rstrip("/") + "/xiaozhi/v1/"


def xiaozhi_turn(
    client: httpx.Client, clip: Clip, results: Results, barge: Clip | None = None
) -> None:
    """One turn of a xiaozhi device over the WebSocket (`bench_xiaozhi.device_turn`):
    interrupted by an `abort`, or with `barge` by that speech (`realtime` mode)."""
    before, logged = len(results.device.first_audio), logged_messages(client)
    speech = None if barge is None else barge.speech
    asyncio.run(
        device_turn(websocket_url(client), clip.speech, results.device, realtime_barge=speech)
    )
    wait_until_logged(client, logged + 2)
    if len(results.device.first_audio) > before and results.device.heard:
        results.errors.append(word_errors(clip.text, results.device.heard[-1]))
    if results.verbose and len(results.device.first_audio) > before:
        first = results.device.first_audio[-1] * 1000
        heard = results.device.heard[-1] if results.device.heard else ""
        print(f"  xiaozhi first audio {first:,.0f} ms, heard {heard!r}", flush=True)


def paused_turn(client: httpx.Client, clip: PausedClip, results: Results) -> None:
    """A sentence in two halves with a pause between (`bench_xiaozhi.pause_turn`)."""
    device = results.device
    before = device.false_ends
    asyncio.run(pause_turn(websocket_url(client), clip.first, clip.pause_s, clip.second, device))
    ended = device.false_ends > before
    if ended:
        heard = device.heard[-1] if device.heard else ""
        results.ended_in_pause.setdefault(clip.text.split(" (")[0], []).append(heard)
    if results.verbose:
        print(f"  {clip.text!r}: {'ended in the pause' if ended else 'waited'}", flush=True)


def server_timing(header: str) -> dict[str, float]:
    stages = {}
    for part in header.split(","):
        name, _, duration = part.strip().partition(";dur=")
        if name and duration:
            stages[name] = float(duration)
    return stages


def word_errors(reference: str, heard: str) -> tuple[int, int]:
    """Levenshtein distance over normalised words, and the reference's word count."""
    ref, hyp = words(reference), words(heard)
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        previous, row[0] = row[0], i
        for j, other in enumerate(hyp, 1):
            previous, row[j] = (
                row[j],
                min(row[j] + 1, row[j - 1] + 1, previous + (word != other)),
            )
    return row[-1], len(ref)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# Issue 16's goals, and its starting point (a quiet machine, 2 s utterances, 12 streamed turns).
GOALS = {
    "first audio p50": "<= 1,000 ms",
    "first audio p95": "<= 1,500 ms",
    "xiaozhi p50": "<= 500 ms",
    "xiaozhi p95": "<= 700 ms",
    "barge-in": "p95 <= 150 ms",
    "speech barge-in": "p95 <= 150 ms",
    "memory http": "p95 <= 5 ms",
    "memory xiaozhi": "p95 <= 5 ms",
    "whole p50": "<= 3,000 ms",
}
STARTING_POINT = {
    "2 s": {"first audio p50": "1,755 ms", "first audio p95": "2,276 ms", "whole p50": "6,300 ms"}
}
GOAL_MS = {
    "first audio p50": 1000.0,
    "first audio p95": 1500.0,
    "xiaozhi p50": 500.0,
    "xiaozhi p95": 700.0,
    "whole p50": 3000.0,
}
# Rows whose goal is on the p95 after the slash ("p50 / p95 ms").
GOAL_P95_MS = {
    "barge-in": 150.0,
    "speech barge-in": 150.0,
    "memory http": 5.0,
    "memory xiaozhi": 5.0,
}


def p50_p95(values: list[float], digits: int = 0) -> str:
    return f"{statistics.median(values):,.{digits}f} / {percentile(values, 0.95):,.{digits}f} ms"


def figures(results: Results) -> dict[str, str]:
    """What is printed for one server, by row."""
    out = {}
    fa = [s * 1000 for s in results.first_audio]
    if fa:
        out["first audio p50"] = f"{statistics.median(fa):,.0f} ms"
        out["first audio p95"] = f"{percentile(fa, 0.95):,.0f} ms"
    device = [s * 1000 for s in results.device.first_audio]
    if device:
        out["xiaozhi p50"] = f"{statistics.median(device):,.0f} ms"
        out["xiaozhi p95"] = f"{percentile(device, 0.95):,.0f} ms"
    for key, values in (
        ("barge-in", results.device.barge_in),
        ("speech barge-in", results.device.speech_barge_in),
    ):
        if values:
            out[key] = p50_p95([s * 1000 for s in values])
    memory = [stage["retrieve"] for stage in results.stages if "retrieve" in stage]
    if memory:
        out["memory http"] = p50_p95(memory, digits=1)
    memory = [turn["turn_retrieve"] for turn in results.breakdown if "turn_retrieve" in turn]
    if memory:
        out["memory xiaozhi"] = p50_p95(memory, digits=1)
    if results.whole:
        out["whole p50"] = f"{statistics.median(results.whole) * 1000:,.0f} ms"
    for name in ("stt", "retrieve", "llm_start"):
        values = [stage.get(name, 0.0) for stage in results.stages]
        if values:
            out[name] = f"{statistics.median(values):,.0f} ms"
    wrong = sum(e for e, _ in results.errors)
    total = sum(n for _, n in results.errors)
    if total:
        out["word error rate"] = f"{wrong / total:.1%} ({wrong}/{total})"
    if results.reply_seconds:
        spoken = results.reply_seconds
        out["spoken reply"] = f"{statistics.median(spoken):.1f} s / {max(spoken):.1f} s"
    out["turns"] = f"{len(fa)} streamed, {len(results.whole)} whole, {len(device)} xiaozhi"
    if results.failed or results.device.failed:
        out["turns"] += f", {results.failed + results.device.failed} failed"
    return out


ROWS = {
    "first audio p50": "streamed: end of speech -> first audio, p50",
    "first audio p95": "streamed: end of speech -> first audio, p95",
    "xiaozhi p50": "xiaozhi WebSocket: last speech -> first audio, p50",
    "xiaozhi p95": "xiaozhi WebSocket: last speech -> first audio, p95",
    "barge-in": "xiaozhi: abort -> last reply frame, p50 / p95",
    "speech barge-in": "xiaozhi realtime: speech onset -> last reply frame, p50 / p95",
    "memory http": "memory after the end of speech (retrieve), streamed, p50 / p95",
    "memory xiaozhi": "memory after the end of speech (retrieve), xiaozhi, p50 / p95",
    "whole p50": "/chat/audio whole reply, p50",
    "stt": "  stt left after the upload (median)",
    "retrieve": "  retrieve (median)",
    "llm_start": "  prompt read, action known (median)",
    "word error rate": "word error rate of the transcripts",
    "spoken reply": "spoken reply, median / longest",
    "turns": "turns",
}


def report(length: str, clips: list[Clip], results: dict[str, Results]) -> None:
    """One table per utterance length: the goal, issue 16's starting point, then each server."""
    seconds = statistics.mean(c.seconds for c in clips)
    print(f"\n{length} utterances (mean {seconds:.1f} s of speech)")
    columns = {"goal": GOALS, "starting point": STARTING_POINT.get(length, {})}
    columns.update({name: figures(r) for name, r in results.items()})
    widths = [max(len(h), *(len(c.get(k, "")) for k in ROWS)) for h, c in columns.items()]
    label = max(len(text) for text in ROWS.values())
    print(" " * label + "  " + "  ".join(h.rjust(w) for h, w in zip(columns, widths, strict=True)))
    for key, text in ROWS.items():
        cells = [c.get(key, "-").rjust(w) for c, w in zip(columns.values(), widths, strict=True)]
        print(f"{text.ljust(label)}  {'  '.join(cells)}{verdict(key, results)}")
    print_breakdown(results)


def print_breakdown(results: dict[str, Results]) -> None:
    """Where a xiaozhi turn's time went after the last speech (the servers' log lines)."""
    names = [stage for stage, _ in STAGES] + [
        "total",
        "turn_retrieve",
        "turn_llm_start",
        "turn_ahead",
        "words",
    ]
    for name, result in results.items():
        turns = result.breakdown
        if not turns:
            continue
        print(f"  xiaozhi, after the last speech, {name} ({len(turns)} turns), p50 / p95 ms:")
        cells = []
        for stage in names:
            values = [turn[stage] for turn in turns if stage in turn]
            if values:
                cells.append(
                    f"{stage} {statistics.median(values):,.0f}/{percentile(values, 0.95):,.0f}"
                )
        print("    " + "  ".join(cells))


def verdict(key: str, results: dict[str, Results]) -> str:
    """Whether this checkout meets the goal of the row, if it has one."""
    if key not in {**GOAL_MS, **GOAL_P95_MS} or "this checkout" not in results:
        return ""
    value = figures(results["this checkout"]).get(key)
    if value is None:
        return ""
    if key in GOAL_P95_MS:
        p95 = float(value.split("/")[1].split()[0].replace(",", ""))
        return "  met" if p95 <= GOAL_P95_MS[key] else "  not met"
    return "  met" if float(value.split()[0].replace(",", "")) <= GOAL_MS[key] else "  not met"


@dataclass
class Server:
    client: httpx.Client
    log: Path

    def log_size(self) -> int:
        return self.log.stat().st_size

    def timings_since(self, offset: int) -> list[dict[str, float]]:
        """The `xiaozhi turn timings` lines the server logged after `offset` bytes."""
        with self.log.open("rb") as log:
            log.seek(offset)
            text = log.read().decode("utf-8", "replace")
        return [
            {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", line.partition("device=")[2])}
            for line in text.splitlines()
            if "xiaozhi turn timings:" in line
        ]


def run(args: argparse.Namespace) -> None:
    clips = synthesize_clips(args.closing_silence_ms / 1000)
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        facts_db = Path(folder) / "facts.db"
        fill_seconds = fill_facts(facts_db, args.facts)
        print(f"{args.facts:,} facts written in {fill_seconds:.1f} s", flush=True)
        servers = {
            "this checkout": stack.enter_context(
                served(Path(folder) / "this", None, args.keep_log, facts_db)
            )
        }
        if args.baseline:
            kept = args.keep_log and args.keep_log.with_suffix(".baseline.log")
            baseline = served(Path(folder) / "baseline", args.baseline, kept, facts_db)
            servers["baseline"] = stack.enter_context(baseline)
        for server in servers.values():
            warm_up(server.client, clips, args.learning_wait_s)
        for length, group in clips.items():
            if args.lengths and length.replace(" ", "") not in args.lengths.split(","):
                continue
            results = run_length(args, servers, group, clips["2 s"][0])
            report(length, group, results)
        if args.pause_turns:
            run_pauses(args, servers)


def run_length(
    args: argparse.Namespace, servers: dict[str, Server], group: list[Clip], barge: Clip
) -> dict[str, Results]:
    """One utterance length's turns, the servers taking turns; the xiaozhi turns alternate
    between an `abort` and speech (`realtime`) to interrupt the reply."""
    results = {name: Results(verbose=args.verbose) for name in servers}
    offsets = {name: server.log_size() for name, server in servers.items()}
    for n in range(max(args.turns, args.whole_turns, args.device_turns)):
        clip = group[n % len(group)]
        for name, server in servers.items():
            client, result = server.client, results[name]
            if n < args.turns:
                settle(servers, name, args.learning_wait_s)
                measured(streamed_turn, client, clip, result)
            if n < args.device_turns:
                interrupt = barge if n % 2 else None
                settle(servers, name, args.learning_wait_s)
                measured(partial(xiaozhi_turn, barge=interrupt), client, clip, result)
            if n < args.whole_turns:
                settle(servers, name, args.learning_wait_s)
                measured(whole_turn, client, clip, result)
    for name, server in servers.items():
        results[name].breakdown = server.timings_since(offsets[name])
    return results


def run_pauses(args: argparse.Namespace, servers: dict[str, Server]) -> None:
    """The sentences said in two halves: how often each server ended the turn in the pause."""
    paused = synthesize_paused()
    results = {name: Results(verbose=args.verbose) for name in servers}
    for n in range(args.pause_turns):
        for name, server in servers.items():
            settle(servers, name, args.learning_wait_s)
            measured(paused_turn, server.client, paused[n % len(paused)], results[name])
    print(
        f"\nfalse turn ends: a sentence said in two halves, {PAUSES_MS[0]}-{PAUSES_MS[-1]} ms "
        "of silence between them (goal <= 5%)"
    )
    for name, result in results.items():
        device = result.device
        share = device.false_ends / device.pause_turns if device.pause_turns else float("nan")
        ended = f"{device.false_ends} of {device.pause_turns}"
        print(f"  {name}: {ended} ended in the pause ({share:.0%})")
        for half, heard in result.ended_in_pause.items():
            print(f"    {half!r} ...: {len(heard)} time(s), heard as {heard!r}")


def measured(
    turn: Callable[[httpx.Client, Clip, Results], None],
    client: httpx.Client,
    clip: Clip,
    results: Results,
) -> None:
    """One turn; a turn without an answer in time is counted as failed, not fatal."""
    try:
        turn(client, clip, results)
    except httpx.TimeoutException as exc:
        results.failed += 1
        print(f"  ({turn.__name__} got no answer in time: {exc!r})")


@contextlib.contextmanager
def served(
    folder: Path, code: Path | None, keep_log: Path | None, facts_db: Path
) -> Iterator[Server]:
    """A server of this checkout (or of `code`'s server/ folder), on a copy of `facts_db`,
    and a client for it; with `keep_log` its log (at DEBUG level: it shows the prompt tokens
    each model call read) is copied there at the end."""
    folder.mkdir()
    env = {"PYTHONPATH": str(code.resolve() / "server")} if code else {}
    env["LOBUG_MAX_FACTS"] = "10000000"  # the facts written are the agent's, none retired
    if keep_log:
        env["LOBUG_LOG_LEVEL"] = "debug"
    shutil.copyfile(facts_db, folder / "bench.db")
    server = start_server(folder / "bench.db", folder / "server.log", env)
    try:
        wait_for_speech(server.url)
        with httpx.Client(base_url=server.url, timeout=180) as client:
            yield Server(client, folder / "server.log")
    except Exception:
        print(f"{folder.name} server log, last lines:\n{server.log()[-3000:]}")
        raise
    finally:
        server.stop()
        if keep_log:
            shutil.copyfile(folder / "server.log", keep_log)


def fill_facts(path: Path, count: int) -> float:
    """`count` facts of the default agent, with random unit vectors, written in bulk before a
    server opens the database (as `bench_memory.py` does); the seconds it took."""
    from scripts.bench_memory import FILL_CHUNK, SEED, random_unit_vectors, synthetic_fact

    from lobug.backends.embedded import LocalEmbedder
    from lobug.config import Settings
    from lobug.store.sqlite.engine import SQLiteStore

    started = time.perf_counter()
    rng = np.random.default_rng(SEED)
    store = SQLiteStore(path)
    try:
        store.bind_embedding(LocalEmbedder.model, 384)
        for start in range(0, count, FILL_CHUNK):
            size = min(FILL_CHUNK, count - start)
            vectors = random_unit_vectors(rng, size)
            facts = [(synthetic_fact(start + i), vectors[i]) for i in range(size)]
            store.add_facts_bulk(Settings().agent, facts)
    finally:
        store.close()
    return time.perf_counter() - started


def warm_up(client: httpx.Client, clips: dict[str, list[Clip]], learning_wait_s: float) -> None:
    """One turn first, unmeasured: the first one pays for lazy set-up."""
    whole_turn(client, clips["2 s"][0], Results())
    wait_for_learning(client, learning_wait_s)


def wait_for_learning(client: httpx.Client, timeout_s: float) -> None:
    """Let the memory work of the last turn finish, so the next turn is measured alone (on a
    busy machine it may take minutes; after `timeout_s` the next turn runs beside it)."""
    if not learning_done(client, time.monotonic() + timeout_s):
        print("  (memory work of the last turn still running; the next turn runs beside it)")


def settle(servers: dict[str, Server], turn_of: str, timeout_s: float) -> None:
    """Before a turn of `turn_of`: the other servers' memory work finished (at most
    `OTHERS_WAIT_S`: one server runs in a home, so a turn never runs beside another server's
    learning), and its own server's for at most `timeout_s` (after it, the turn runs beside
    its own memory work, as it would at home)."""
    for name, server in servers.items():
        wait_s = timeout_s if name == turn_of else max(timeout_s, OTHERS_WAIT_S)
        if not learning_done(server.client, time.monotonic() + wait_s):
            print(f"  (memory work still running on {name}; the next turn runs beside it)")


def learning_done(client: httpx.Client, deadline: float) -> bool:
    """Whether the server's memory work finished before `deadline` (none running, and no
    exchange queued for it: a reply is logged and queued in one transaction)."""
    while time.monotonic() < deadline:
        memory = memory_health(client)
        if memory["pending_learning"] == 0 and memory["learning_queue"] == 0:
            return True
        time.sleep(0.3)
    return False


def memory_health(client: httpx.Client) -> dict[str, int]:
    """The `memory` counts of the server's `/health`."""
    return dict(client.get("/health").json()["memory"])


def logged_messages(client: httpx.Client) -> int:
    return int(memory_health(client)["messages"])


def wait_until_logged(client: httpx.Client, count: int, timeout_s: float = 10) -> None:
    """A xiaozhi device hangs up once it has heard enough; the server then stores what was
    said and queues its memory work. Until then the server looks idle to `settle`, and the
    next turn (the other server's) would run beside that memory work."""
    deadline = time.monotonic() + timeout_s
    while logged_messages(client) < count and time.monotonic() < deadline:
        time.sleep(0.05)


def wait_for_speech(url: str) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if httpx.get(f"{url}/health", timeout=5).json()["speech"]["ready"]:
            return
        time.sleep(0.5)
    raise SystemExit("speech models did not load")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=20, help="streamed turns per length")
    parser.add_argument("--whole-turns", type=int, default=20, help="/chat/audio turns per length")
    parser.add_argument(
        "--device-turns", type=int, default=20, help="xiaozhi WebSocket turns per length"
    )
    parser.add_argument(
        "--pause-turns", type=int, default=20, help="sentences with a pause mid-way (xiaozhi)"
    )
    parser.add_argument("--facts", type=int, default=100_000, help="facts in the agent")
    parser.add_argument("--closing-silence-ms", type=int, default=800)
    parser.add_argument(
        "--learning-wait-s", type=float, default=60, help="most to wait for memory work"
    )
    parser.add_argument("--baseline", type=Path, help="a checkout to compare with, turn by turn")
    parser.add_argument("--verbose", action="store_true", help="print each turn as it comes")
    parser.add_argument("--lengths", help="only these utterance lengths, e.g. 5s (default: all)")
    parser.add_argument(
        "--keep-log",
        type=Path,
        help="copy this checkout's server log here (the baseline's beside it)",
    )
    run(parser.parse_args())


if __name__ == "__main__":
    main()
