"""Voice benchmark: one voice turn split by stage, for a short and a long utterance.

Prints speech-to-text and text-to-speech real-time factors (processing time / audio length),
and the time to the first audio byte on `/chat/audio/stream` beside the time of the whole reply
on `/chat/audio`, measured against the same real server process in the same run.

    .venv/bin/python scripts/bench_voice.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from tests.e2e.server import start_server  # noqa: E402

from lobug.audio import STT_RATE, encode_wav, parse_wav, resample  # noqa: E402
from lobug.backends.speech import PiperTTS, WhisperSTT  # noqa: E402

UTTERANCES = {
    "short": "What time is it?",
    "long": (
        "I just came back from a long walk by the river with my dog Rex. "
        "Tomorrow I want to visit my sister Emma in Berlin, so please tell me something "
        "nice to say to her when I arrive."
    ),
}


@dataclass
class Clip:
    name: str
    wav: bytes
    seconds: float


def synthesize_clips(tts: PiperTTS) -> list[Clip]:
    clips = []
    for name, text in UTTERANCES.items():
        pcm = np.concatenate(list(tts.synthesize(text)))
        clips.append(Clip(name, encode_wav(pcm, tts.sample_rate), len(pcm) / tts.sample_rate))
    return clips


def real_time_factors(clips: list[Clip], tts: PiperTTS, runs: int) -> None:
    stt = WhisperSTT()
    print("Speech processing in this process (real-time factor = time / audio length)")
    print(f"{'clip':>6} {'audio s':>8} {'STT s':>7} {'STT RTF':>8} {'TTS s':>7} {'TTS RTF':>8}")
    for clip in clips:
        audio = parse_wav(clip.wav)
        samples = resample(audio.samples, audio.sample_rate, STT_RATE)
        stt_s = median_time(lambda s=samples: stt.transcribe(s), runs)
        text = UTTERANCES[clip.name]
        tts_s = median_time(lambda t=text: list(tts.synthesize(t)), runs)
        print(
            f"{clip.name:>6} {clip.seconds:8.2f} {stt_s:7.2f} {stt_s / clip.seconds:8.2f} "
            f"{tts_s:7.2f} {tts_s / clip.seconds:8.2f}"
        )
    print("  target: STT + TTS under 1x the audio length\n")


def median_time(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def server_turns(clips: list[Clip], runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        server = start_server(Path(folder) / "bench.db", Path(folder) / "server.log")
        try:
            wait_for_speech(server.url)
            with httpx.Client(base_url=server.url, timeout=180) as client:
                for clip in clips:
                    measure_clip(client, clip, runs)
        finally:
            server.stop()


def wait_for_speech(url: str) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if httpx.get(f"{url}/health", timeout=5).json()["speech"]["ready"]:
            return
        time.sleep(0.5)
    raise SystemExit("speech models did not load")


def measure_clip(client: httpx.Client, clip: Clip, runs: int) -> None:
    whole, first_byte, stream_total, stages = [], [], [], []
    for _ in range(runs):
        started = time.perf_counter()
        response = client.post("/chat/audio", files=upload(clip.wav))
        whole.append(time.perf_counter() - started)
        stages.append(parse_server_timing(response.headers.get("server-timing", "")))
        wait_for_learning(client)
        ttfb, total = stream_timing(client, clip)
        first_byte.append(ttfb)
        stream_total.append(total)
        wait_for_learning(client)
    print(f"Voice turn, {clip.name} utterance ({clip.seconds:.1f} s), median of {runs}")
    names = ["decode", "stt", "retrieve", "llm", "tts", "encode"]
    for name in names:
        values = [s[name] for s in stages if name in s]
        if values:
            print(f"  {name:>9}: {statistics.median(values):8.1f} ms")
    print(f"  /chat/audio whole reply:            {statistics.median(whole) * 1000:8.0f} ms")
    print(f"  /chat/audio/stream first PCM byte:  {statistics.median(first_byte) * 1000:8.0f} ms")
    print(f"  /chat/audio/stream complete:        {statistics.median(stream_total) * 1000:8.0f} ms")
    print()


def stream_timing(client: httpx.Client, clip: Clip) -> tuple[float, float]:
    """Seconds to the first PCM byte after the WAV header, and to the end of the stream."""
    started = time.perf_counter()
    first = float("nan")
    received = 0
    with client.stream("POST", "/chat/audio/stream", files=upload(clip.wav)) as response:
        for chunk in response.iter_bytes():
            received += len(chunk)
            if received > 44 and first != first:
                first = time.perf_counter() - started
    return first, time.perf_counter() - started


def wait_for_learning(client: httpx.Client) -> None:
    """Let background fact extraction finish so the next turn is not measured behind it."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if client.get("/health").json()["memory"]["pending_learning"] == 0:
            return
        time.sleep(0.2)


def upload(wav: bytes) -> dict[str, tuple[str, bytes, str]]:
    return {"audio": ("recording.wav", wav, "audio/wav")}


def parse_server_timing(header: str) -> dict[str, float]:
    stages = {}
    for part in header.split(","):
        name, _, duration = part.strip().partition(";dur=")
        if name and duration:
            stages[name] = float(duration)
    return stages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-server", action="store_true")
    args = parser.parse_args()
    tts = PiperTTS()
    clips = synthesize_clips(tts)
    real_time_factors(clips, tts, args.runs)
    if not args.skip_server:
        server_turns(clips, args.runs)


if __name__ == "__main__":
    main()
