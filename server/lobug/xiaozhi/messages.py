"""The JSON messages of the xiaozhi protocol: each one a small value parsed once at the
edge (`parse`), and the server's messages built by the functions below. Parsing is strict
about what a turn depends on (a `listen` names its state, a hello its transport) and lenient
about the rest: the firmware adds fields over time, and a message of a type this server does
not handle (the old `iot`, a `goodbye`) is read as `Other` and let pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from lobug.memory.limits import json_problem
from lobug.xiaozhi.limits import (
    FRAME_MS,
    MAX_TEXT_BYTES,
    SAMPLE_RATE_IN,
    CloseCode,
    ProtocolError,
)

ListenState = Literal["start", "stop", "detect"]
ListenMode = Literal["auto", "manual", "realtime"]
LISTEN_STATES = ("start", "stop", "detect")
LISTEN_MODES = ("auto", "manual", "realtime")
MAX_DETECT_CHARS = 500  # the text of a `listen detect` (a wake word, or words typed)


@dataclass(frozen=True)
class AudioParams:
    format: str = "opus"
    sample_rate: int = SAMPLE_RATE_IN
    channels: int = 1
    frame_duration: int = FRAME_MS


@dataclass(frozen=True)
class Hello:
    version: int
    audio: AudioParams
    mcp: bool


@dataclass(frozen=True)
class Listen:
    state: ListenState
    mode: ListenMode = "auto"
    text: str = ""


@dataclass(frozen=True)
class Abort:
    reason: str = ""


@dataclass(frozen=True)
class Mcp:
    payload: dict[str, Any]


@dataclass(frozen=True)
class Other:
    type: str
    body: dict[str, Any] = field(default_factory=dict)


Message = Hello | Listen | Abort | Mcp | Other


def bad(reason: str) -> ProtocolError:
    return ProtocolError(CloseCode.UNSUPPORTED_DATA, reason)


def parse(text: str) -> Message:
    """One text frame from the device; ProtocolError for one that is not a message."""
    if len(text.encode("utf-8", errors="surrogatepass")) > MAX_TEXT_BYTES:
        raise ProtocolError(CloseCode.TOO_BIG, f"a text message over {MAX_TEXT_BYTES} bytes")
    try:
        body = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise bad("a text message that is not JSON") from None
    if not isinstance(body, dict) or not isinstance(body.get("type"), str):
        raise bad("a JSON message without a 'type'")
    problem = json_problem(body)
    if problem is not None:
        raise bad(f"a JSON message that {problem}")
    kind = body["type"]
    reader = READERS.get(kind)
    return reader(body) if reader else Other(kind, body)


def _hello(body: dict[str, Any]) -> Hello:
    if body.get("transport", "websocket") != "websocket":
        raise bad("hello: transport must be 'websocket'")
    version = body.get("version", 1)
    if version not in (1, 2, 3):
        raise ProtocolError(CloseCode.PROTOCOL_ERROR, f"hello: unsupported version {version!r}")
    features = body.get("features") or {}
    return Hello(version, _audio_params(body.get("audio_params")), _flag(features, "mcp"))


def _audio_params(raw: object) -> AudioParams:
    if raw is None:
        return AudioParams()
    if not isinstance(raw, dict):
        raise bad("hello: audio_params must be an object")
    params = AudioParams(
        format=raw.get("format", "opus"),
        sample_rate=raw.get("sample_rate", SAMPLE_RATE_IN),
        channels=raw.get("channels", 1),
        frame_duration=raw.get("frame_duration", FRAME_MS),
    )
    if params.format != "opus":
        raise bad(f"hello: audio format {params.format!r}; only opus is spoken here")
    if params.sample_rate not in (8000, 12000, 16000, 24000, 48000) or params.channels != 1:
        raise bad("hello: audio must be mono Opus at 8, 12, 16, 24 or 48 kHz")
    if params.frame_duration not in (10, 20, 40, 60, 80, 100, 120):
        raise bad("hello: frame_duration must be 10-120 ms (an Opus frame size)")
    return params


def _flag(features: object, name: str) -> bool:
    return isinstance(features, dict) and features.get(name) is True


def _listen(body: dict[str, Any]) -> Listen:
    state, mode, text = body.get("state"), body.get("mode", "auto"), body.get("text", "")
    if state not in LISTEN_STATES:
        raise bad("listen: state must be start, stop or detect")
    if mode not in LISTEN_MODES:
        raise bad("listen: mode must be auto, manual or realtime")
    if not isinstance(text, str) or len(text) > MAX_DETECT_CHARS:
        raise bad(f"listen: text must be a string of at most {MAX_DETECT_CHARS} characters")
    return Listen(state, mode, text.strip())


def _abort(body: dict[str, Any]) -> Abort:
    reason = body.get("reason", "")
    return Abort(reason if isinstance(reason, str) else "")


def _mcp(body: dict[str, Any]) -> Mcp:
    payload = body.get("payload")
    if not isinstance(payload, dict):
        raise bad("mcp: payload must be a JSON-RPC object")
    return Mcp(payload)


READERS: dict[str, Callable[[dict[str, Any]], Message]] = {
    "hello": _hello,
    "listen": _listen,
    "abort": _abort,
    "mcp": _mcp,
}


# ------------------------------------------------------------------ the server's messages


def dumps(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def server_hello(session_id: str, sample_rate: int) -> dict[str, Any]:
    audio = {
        "format": "opus",
        "sample_rate": sample_rate,
        "channels": 1,
        "frame_duration": FRAME_MS,
    }
    return {
        "type": "hello",
        "transport": "websocket",
        "session_id": session_id,
        "audio_params": audio,
    }


def stt(session_id: str, text: str) -> dict[str, Any]:
    return {"session_id": session_id, "type": "stt", "text": text}


def llm_emotion(session_id: str, emotion: str, emoji: str) -> dict[str, Any]:
    return {"session_id": session_id, "type": "llm", "emotion": emotion, "text": emoji}


def tts(session_id: str, state: str, text: str | None = None) -> dict[str, Any]:
    message = {"session_id": session_id, "type": "tts", "state": state}
    return message if text is None else {**message, "text": text}


def alert(session_id: str, status: str, message: str, emotion: str = "sad") -> dict[str, Any]:
    """Shown by the device as a notice (the firmware's `alert`): a turn refused, and why."""
    return {
        "session_id": session_id,
        "type": "alert",
        "status": status,
        "message": message,
        "emotion": emotion,
    }


def mcp(session_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"session_id": session_id, "type": "mcp", "payload": payload}


def mcp_request(
    request_id: int, method: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    return body if params is None else {**body, "params": params}
