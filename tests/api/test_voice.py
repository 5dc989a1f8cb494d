from __future__ import annotations

import base64
import io
import logging
import socket
import time
import wave
from collections.abc import Callable, Iterator
from urllib.parse import quote, urlparse

import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.audio import encode_wav, parse_wav
from lobug.backends import Backends
from lobug.config import Settings
from lobug.store.sqlite.engine import SQLiteStore
from lobug.voice.pipeline import StreamedVoice, Voice
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS, unreachable
from tests.live import LiveServer
from tests.polling import eventually, memory_work_done


def speech_wav(seconds: float = 2.0, rate: int = 16000) -> bytes:
    t = np.arange(int(rate * seconds)) / rate
    return encode_wav((np.sin(2 * np.pi * 220 * t) * 6000).astype(np.int16), rate)


def silent_wav(seconds: float = 2.0) -> bytes:
    return encode_wav(np.zeros(int(16000 * seconds), dtype=np.int16), 16000)


def upload(wav: bytes) -> dict[str, tuple[str, bytes, str]]:
    """The multipart layout of the firmware: field `audio`, file `recording.wav`."""
    return {"audio": ("recording.wav", wav, "audio/wav")}


@pytest.fixture
def stt() -> FakeSTT:
    return FakeSTT("What is the weather like today?")


@pytest.fixture
def tts() -> FakeTTS:
    return FakeTTS()


@pytest.fixture
def voice_client(
    settings: Settings,
    fake_chat: FakeChat,
    fake_embedder: FakeEmbedder,
    stt: FakeSTT,
    tts: FakeTTS,
) -> Iterator[TestClient]:
    backends = Backends(fake_chat, fake_embedder, stt, tts)
    with TestClient(create_app(settings, backends)) as client:
        yield client


def test_recording_gets_transcription_reply_and_playable_wav(
    voice_client: TestClient, fake_chat: FakeChat, tts: FakeTTS
) -> None:
    fake_chat.enqueue("It is sunny. Take a hat!")
    response = voice_client.post("/chat/audio", files=upload(speech_wav()))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["transcription"] == "What is the weather like today?"
    assert (body["action"], body["response"]) == ("respond", "It is sunny. Take a hat!")
    with wave.open(io.BytesIO(base64.b64decode(body["audio_b64"]))) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (22050, 1, 2)
        frames = np.frombuffer(wav.readframes(wav.getnframes()), dtype=np.int16)
    assert np.abs(frames).max() > 1000
    assert tts.spoken == ["It is sunny.", "Take a hat!"]  # sentence by sentence
    stages = {p.split(";")[0] for p in response.headers["server-timing"].split(", ")}
    assert {"decode", "stt", "retrieve", "llm", "tts", "encode"} <= stages


@pytest.mark.parametrize("path", ["/chat/audio", "/chat/audio/stream"])
def test_after_a_voice_turn_the_next_prompt_is_read_ahead(
    voice_client: TestClient, fake_chat: FakeChat, path: str
) -> None:
    fake_chat.caches_prompt_prefix = True
    fake_chat.enqueue("It is sunny.")
    assert voice_client.post(path, files=upload(speech_wav())).status_code == 200
    primed = fake_chat.prefilled[-1]
    assert primed[-2:] == [
        {"role": "user", "content": "What is the weather like today?"},
        {"role": "assistant", "content": "It is sunny."},
    ]


def test_voice_turns_use_the_agency_prompt_and_are_learned_from(
    voice_client: TestClient, fake_chat: FakeChat
) -> None:
    voice_client.post("/chat/audio", files=upload(speech_wav()))
    memory_work_done(voice_client)
    assert "[IGNORE]" in fake_chat.chat_requests()[-1][0]["content"]
    assert len(fake_chat.extraction_requests()) == 1


def test_raw_wav_body_is_accepted(voice_client: TestClient) -> None:
    response = voice_client.post(
        "/chat/audio", content=speech_wav(rate=44100), headers={"Content-Type": "audio/wav"}
    )
    assert response.status_code == 200
    assert response.json()["action"] == "respond"


@pytest.mark.parametrize(
    "wav",
    [silent_wav(), b"", speech_wav(seconds=0.3), encode_wav(np.zeros(0, np.int16), 16000)],
    ids=["silence", "empty-upload", "too-short", "no-samples"],
)
def test_silence_and_empty_recordings_are_ignored(
    voice_client: TestClient, fake_chat: FakeChat, settings: Settings, wav: bytes
) -> None:
    response = voice_client.post("/chat/audio", files=upload(wav))
    assert response.status_code == 200
    assert response.json() == {
        "transcription": response.json()["transcription"],
        "response": "",
        "action": "ignore",
        "audio_b64": "",
    }
    assert fake_chat.requests == []
    store = SQLiteStore(settings.db_path)
    assert store.count_messages("lobug") == 0  # never enters the log or working memory
    store.close()


def test_whisper_hallucinations_are_ignored(
    voice_client: TestClient, fake_chat: FakeChat, stt: FakeSTT
) -> None:
    stt.heard = "Thanks for watching!"
    body = voice_client.post("/chat/audio", files=upload(speech_wav())).json()
    assert (body["action"], body["transcription"]) == ("ignore", "Thanks for watching!")
    assert fake_chat.requests == []


@pytest.mark.parametrize(
    ("reply", "action", "text"),
    [("[REACT] *giggles*", "react", "*giggles*"), ("[IGNORE]", "ignore", "")],
)
def test_model_chosen_actions_send_no_audio(
    voice_client: TestClient, fake_chat: FakeChat, reply: str, action: str, text: str
) -> None:
    fake_chat.enqueue(reply)
    body = voice_client.post("/chat/audio", files=upload(speech_wav())).json()
    assert (body["action"], body["response"], body["audio_b64"]) == (action, text, "")
    assert fake_chat.extraction_requests() == []


def test_output_rate_can_be_set(
    settings: Settings,
    fake_chat: FakeChat,
    fake_embedder: FakeEmbedder,
    stt: FakeSTT,
    tts: FakeTTS,
) -> None:
    backends = Backends(fake_chat, fake_embedder, stt, tts)
    with TestClient(create_app(settings.with_overrides(tts_sample_rate=16000), backends)) as c:
        body = c.post("/chat/audio", files=upload(speech_wav())).json()
        audio = parse_wav(base64.b64decode(body["audio_b64"]))
        assert audio.sample_rate == 16000
        assert c.get("/health").json()["speech"]["sample_rate"] == 16000


def wav_with_format(tag: int, bits: int) -> bytes:
    import struct

    fmt = struct.pack("<HHIIHH", tag, 1, 16000, 16000 * bits // 8, bits // 8, bits)
    body = b"WAVEfmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", 8) + b"\0" * 8
    return b"RIFF" + struct.pack("<I", len(body)) + body


@pytest.mark.parametrize(
    ("files", "content", "headers", "status", "error"),
    [
        (upload(b"ID3" + b"\0" * 100), None, None, 415, "not_wav"),
        (upload(wav_with_format(3, 32)), None, None, 415, "unsupported_audio"),
        (upload(wav_with_format(1, 8)), None, None, 415, "unsupported_audio"),
        (
            upload(b"RIFF\x10\x00\x00\x00WAVEfmt \x20\x00\x00\x00\x01"),
            None,
            None,
            400,
            "corrupt_audio",
        ),
        (upload(speech_wav(seconds=31)), None, None, 413, "audio_too_long"),
        ({"sound": ("recording.wav", speech_wav(), "audio/wav")}, None, None, 422, "missing_audio"),
        (
            None,
            b'{"audio": "..."}',
            {"Content-Type": "application/json"},
            415,
            "unsupported_media_type",
        ),
        (
            None,
            b"--xyz\r\nbroken",
            {"Content-Type": "multipart/form-data; boundary=xyz"},
            422,
            "missing_audio",
        ),
        (None, b"x", {"Content-Type": "multipart/form-data"}, 400, "invalid_multipart"),
    ],
)
def test_broken_uploads_get_clear_errors(
    voice_client: TestClient,
    files: dict[str, tuple[str, bytes, str]] | None,
    content: bytes | None,
    headers: dict[str, str] | None,
    status: int,
    error: str,
) -> None:
    response = voice_client.post("/chat/audio", files=files, content=content, headers=headers)
    assert (response.status_code, response.json()["error"]) == (status, error)


def test_oversized_upload_is_refused(
    settings: Settings,
    fake_chat: FakeChat,
    fake_embedder: FakeEmbedder,
    stt: FakeSTT,
    tts: FakeTTS,
) -> None:
    small = settings.with_overrides(max_audio_bytes=50_000)
    with TestClient(create_app(small, Backends(fake_chat, fake_embedder, stt, tts))) as client:
        response = client.post("/chat/audio", files=upload(speech_wav(seconds=2)))
        assert (response.status_code, response.json()["error"]) == (413, "audio_too_large")
        raw = client.post(
            "/chat/audio", content=speech_wav(seconds=5), headers={"Content-Type": "audio/wav"}
        )
        assert raw.status_code == 413


def test_without_speech_models_audio_gets_503_and_text_still_works(client: TestClient) -> None:
    response = client.post("/chat/audio", files=upload(speech_wav()))
    assert (response.status_code, response.json()["error"]) == (503, "speech_unavailable")
    assert client.get("/health").json()["speech"]["ready"] is False
    assert client.post("/chat/text", json={"text": "hi"}).status_code == 200


def test_stream_sends_wav_header_then_pcm_and_a_sidecar(
    voice_client: TestClient, fake_chat: FakeChat
) -> None:
    fake_chat.enqueue("First sentence here. And a second one!")
    response = voice_client.post("/chat/audio/stream", files=upload(speech_wav()))
    assert response.status_code == 200
    assert response.headers["content-type"] == "audio/wav"
    assert response.headers["x-lobug-action"] == "respond"
    assert (
        response.headers["x-lobug-transcription"] == "What%20is%20the%20weather%20like%20today%3F"
    )
    assert response.headers["x-lobug-sample-rate"] == "22050"
    body = response.content
    assert body[:4] == b"RIFF" and body[36:40] == b"data"
    pcm = np.frombuffer(body[44:], dtype=np.int16)
    assert len(pcm) > 22050 * 0.5 and np.abs(pcm).max() > 1000
    sidecar = voice_client.get(f"/chat/turns/{response.headers['x-lobug-turn']}").json()
    assert sidecar["done"] is True
    assert sidecar["response"] == "First sentence here. And a second one!"
    assert sidecar["transcription"] == "What is the weather like today?"
    memory_work_done(voice_client)
    assert len(fake_chat.extraction_requests()) == 1  # learned after the stream


def test_stream_ignore_and_react_have_empty_bodies(
    voice_client: TestClient, fake_chat: FakeChat, stt: FakeSTT
) -> None:
    fake_chat.enqueue("[REACT] *purrs*")
    react = voice_client.post("/chat/audio/stream", files=upload(speech_wav()))
    assert (react.headers["x-lobug-action"], react.content) == ("react", b"")
    stt.heard = "um"
    ignore = voice_client.post("/chat/audio/stream", files=upload(speech_wav()))
    assert (ignore.headers["x-lobug-action"], ignore.content) == ("ignore", b"")
    assert voice_client.get("/chat/turns/nope").status_code == 404


def test_first_audio_leaves_before_the_reply_is_generated(
    voice_client: TestClient, fake_chat: FakeChat
) -> None:
    """Observed through the stream itself: when the first PCM arrives, the model has handed
    out only part of its reply."""
    reply = (  # within the 30 words a spoken answer may have
        "One. Lisbon sits on seven hills above the river Tagus, and its old trams climb "
        "through Alfama past tiled houses and small bakeries."
    )
    total_pieces = len(reply.split())
    fake_chat.enqueue(reply)
    voice = voice_client.app.state.services.voice  # type: ignore[attr-defined]
    audio = parse_wav(speech_wav())
    streamed = voice.answer_streaming("default", voice.transcribe(audio, {}), audio.seconds, {})
    chunks = voice.stream_audio(streamed)
    assert next(chunks)[:4] == b"RIFF"
    first_pcm = next(chunks)
    assert len(first_pcm) > 0
    assert fake_chat.streamed < total_pieces
    rest = b"".join(chunks)
    assert fake_chat.streamed == total_pieces and len(rest) > len(first_pcm)


@pytest.mark.parametrize("chunks_heard", [1, 2], ids=["after-header", "after-first-pcm"])
def test_device_can_talk_again_after_an_abandoned_stream(
    voice_client: TestClient, fake_chat: FakeChat, chunks_heard: int
) -> None:
    fake_chat.enqueue("A long answer. With sentences. Many of them.")
    voice = voice_client.app.state.services.voice  # type: ignore[attr-defined]
    streamed = started_stream(voice)
    chunks = voice.stream_audio(streamed)
    for _ in range(chunks_heard):
        next(chunks)
    chunks.close()  # the device hung up
    assert fake_chat.abandoned_streams == 1  # the model was told to stop
    response = voice_client.post("/chat/text", json={"text": "still there?"})
    assert response.status_code == 200
    said = [m["content"] for m in voice_client.get("/context/working-memory").json()["messages"]]
    assert said[-2:] == ["still there?", "Okay."]
    assert not any("Many of them." in text for text in said)  # only what the device heard


def test_a_stream_closed_before_it_started_still_frees_the_device(
    voice_client: TestClient, fake_chat: FakeChat
) -> None:
    voice = voice_client.app.state.services.voice  # type: ignore[attr-defined]
    streamed = started_stream(voice)
    voice.stream_audio(streamed).close()  # never stepped: its own finally never runs
    voice.finish_stream(streamed)
    assert voice_client.post("/chat/text", json={"text": "still there?"}).status_code == 200


def test_a_stream_whose_model_fails_before_any_audio_is_a_503(
    voice_client: TestClient, fake_chat: FakeChat
) -> None:
    fake_chat.fail_with = unreachable()
    response = voice_client.post("/chat/audio/stream", files=upload(speech_wav()))
    assert (response.status_code, response.json()["error"]) == (503, "llm_unavailable")
    fake_chat.fail_with = None
    fake_chat.enqueue("Back again.")
    again = voice_client.post("/chat/audio/stream", files=upload(speech_wav()))
    assert again.status_code == 200 and again.headers["x-lobug-action"] == "respond"


def test_two_audio_parts_are_refused(voice_client: TestClient) -> None:
    files = [
        ("audio", ("a.wav", speech_wav(), "audio/wav")),
        ("audio", ("b.wav", silent_wav(), "audio/wav")),
    ]
    response = voice_client.post("/chat/audio", files=files)
    assert (response.status_code, response.json()["error"]) == (422, "invalid_request")


def live_recording() -> bytes:
    """What a device recording live sends: a stretch of speech, a pause, another, and the
    silence it records before its own end-of-speech detection stops it."""
    speech = parse_wav(speech_wav(0.5)).samples
    pause = np.zeros(int(16000 * 0.3), dtype=np.float32)
    closing = np.zeros(int(16000 * 0.5), dtype=np.float32)
    pcm = np.concatenate([speech, pause, speech, closing])
    return encode_wav((pcm * 32767).astype(np.int16), 16000)


def send_as_recorded(
    live: Backends, settings: Settings, wav: bytes, before_piece: Callable[[int], None]
) -> httpx.Response:
    """`wav` posted to a real server over real HTTP (the test client reads a body whole before
    the app sees it) the way a device recording live sends it: 100 ms at a time, each piece
    when its audio has been recorded; `before_piece(at)` runs before the piece at byte `at`."""

    def as_recorded() -> Iterator[bytes]:
        yield wav[:44]
        for at in range(44, len(wav), 3200):
            before_piece(at)
            time.sleep(0.1)
            yield wav[at : at + 3200]

    server = LiveServer(create_app(settings, live))
    try:
        wait_for_speech(server.url)
        return httpx.post(
            f"{server.url}/chat/audio/stream",
            content=as_recorded(),
            headers={"Content-Type": "audio/wav"},
            timeout=30,
        )
    finally:
        server.stop()


def primed_with(fake_chat: FakeChat, words: str) -> Callable[[], bool]:
    """Whether the model has read ahead a prompt that ends with the person's `words`."""
    said = {"role": "user", "content": words}
    return lambda: any(p[-1] == said for p in fake_chat.prefilled)


def test_a_raw_wav_streamed_as_recorded_is_heard_while_it_arrives(
    settings: Settings, fake_chat: FakeChat, fake_embedder: FakeEmbedder, stt: FakeSTT
) -> None:
    wav = live_recording()
    heard_before_the_end: list[int] = []
    primed_before_the_end: list[int] = []
    fake_chat.caches_prompt_prefix = True
    heard = "What is the weather like today? What is the weather like today?"

    def before_piece(at: int) -> None:
        if at >= len(wav) - 3200:  # the last piece: speech ended 0.5 s ago
            stt.called.wait(10)
            eventually(primed_with(fake_chat, heard))
            heard_before_the_end.extend(stt.heard_samples)
            primed_before_the_end.append(len(fake_chat.prefilled))

    fake_chat.enqueue("Sunny. Take a hat!")
    backends = Backends(fake_chat, fake_embedder, stt, FakeTTS())
    response = send_as_recorded(backends, settings, wav, before_piece)
    assert response.status_code == 200, response.text
    assert response.headers["x-lobug-action"] == "respond"
    assert heard_before_the_end  # transcribed while the upload went on
    # Read while the upload went on: the prompt's start at once, then the words of the first
    # stretch after its pause, then of both: the whole prompt of the turn.
    assert primed_before_the_end[0] == 3
    first_words = [p[-1]["content"] for p in fake_chat.prefilled[1:3]]
    assert first_words == ["What is the weather like today?", heard]
    assert stt.calls == 2  # both stretches, and not the closing silence
    assert response.headers["x-lobug-transcription"] == quote(heard, safe="")
    assert fake_chat.chat_requests()[-1] == fake_chat.prefilled[2]


def test_a_long_stretch_is_read_ahead_before_the_person_pauses(
    settings: Settings, fake_chat: FakeChat, fake_embedder: FakeEmbedder, stt: FakeSTT
) -> None:
    speech = parse_wav(speech_wav(2.8)).samples
    closing = np.zeros(int(16000 * 0.8), dtype=np.float32)
    wav = encode_wav((np.concatenate([speech, closing]) * 32767).astype(np.int16), 16000)
    fake_chat.caches_prompt_prefix = True
    words = "What is the weather like today?"
    primed_while_speaking: list[bool] = []

    def before_piece(at: int) -> None:
        if at == 44 + 3200 * 27:  # 2.7 s: the person is still speaking
            primed_while_speaking.append(eventually(primed_with(fake_chat, words), 5))

    fake_chat.enqueue("Sunny.")
    response = send_as_recorded(
        Backends(fake_chat, fake_embedder, stt, FakeTTS()), settings, wav, before_piece
    )
    assert response.status_code == 200, response.text
    assert primed_while_speaking == [True]
    assert 1 * 16000 <= stt.heard_samples[0] < 1.2 * 16000  # its first second, heard early
    assert stt.heard_samples[-1] > 2.8 * 16000  # then the whole stretch, once it ended
    assert response.headers["x-lobug-transcription"] == quote(words, safe="")


def test_an_upload_closed_before_its_end_is_dropped_quietly(
    settings: Settings,
    fake_chat: FakeChat,
    fake_embedder: FakeEmbedder,
    stt: FakeSTT,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A device that recorded too little to answer hangs up in the middle of its upload."""
    caplog.set_level(logging.INFO)
    wav = live_recording()
    server = LiveServer(create_app(settings, Backends(fake_chat, fake_embedder, stt, FakeTTS())))
    try:
        wait_for_speech(server.url)
        url = urlparse(server.url)
        with socket.create_connection((url.hostname, url.port)) as device:
            device.sendall(
                b"POST /chat/audio/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: audio/wav"
                b"\r\nTransfer-Encoding: chunked\r\n\r\n"
            )
            for piece in (wav[:44], wav[44:3244]):
                device.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        for _ in range(500):
            if any("skipped a reply" in r.getMessage() for r in caplog.records):
                break
            time.sleep(0.01)
        assert httpx.get(f"{server.url}/health").status_code == 200
    finally:
        server.stop()
    assert any("closed its upload" in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert fake_chat.chat_requests() == []


def wait_for_speech(url: str) -> None:
    for _ in range(500):
        if httpx.get(f"{url}/health").json()["speech"]["ready"]:
            return
        time.sleep(0.01)


def test_a_broken_raw_wav_stream_gets_a_clear_error(voice_client: TestClient) -> None:
    def body() -> Iterator[bytes]:
        yield b"RIFF\x00\x00\x00\x00WAVEjunk" + b"\x00" * 5000

    response = voice_client.post(
        "/chat/audio/stream", content=body(), headers={"Content-Type": "audio/wav"}
    )
    assert response.status_code in (400, 415, 422)
    assert response.json()["error"]


def started_stream(voice: Voice) -> StreamedVoice:
    """A streamed answer to the test recording, as the upload route starts one."""
    audio = parse_wav(speech_wav())
    return voice.answer_streaming("default", voice.transcribe(audio, {}), audio.seconds, {})
