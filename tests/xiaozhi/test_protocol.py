"""The xiaozhi protocol's pure parts: binary frames, JSON messages, the OTA answer, Opus."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lobug.config import Settings
from lobug.config.xiaozhi import XiaozhiConfig
from lobug.xiaozhi import frames, messages
from lobug.xiaozhi.limits import MAX_FRAME_BYTES, MAX_TEXT_BYTES, CloseCode, ProtocolError
from lobug.xiaozhi.opus import OpusDecoder, OpusEncoder
from lobug.xiaozhi.ota import ota_answer, websocket_url


@given(st.sampled_from(frames.VERSIONS), st.binary(max_size=600), st.integers(0, 2**32 - 1))
def test_a_packed_frame_unpacks_to_its_payload(version: int, payload: bytes, at: int) -> None:
    frame = frames.unpack(version, frames.pack(version, payload, timestamp_ms=at))
    assert (frame.kind, frame.payload) == (frames.OPUS, payload)
    assert frame.timestamp_ms == (at if version == 2 else 0)


def test_the_headers_are_in_network_byte_order() -> None:
    assert frames.pack(3, b"ab") == b"\x00\x00\x00\x02ab"
    v2 = frames.pack(2, b"ab", timestamp_ms=1)
    assert v2 == b"\x00\x02\x00\x00" + b"\x00" * 4 + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x02ab"


@pytest.mark.parametrize(
    ("version", "data", "code"),
    [
        (3, b"\x00\x00", CloseCode.PROTOCOL_ERROR),  # shorter than its header
        (3, b"\x00\x00\x00\x05abc", CloseCode.PROTOCOL_ERROR),  # payload_size lies
        (3, b"\x07\x00\x00\x00", CloseCode.UNSUPPORTED_DATA),  # unknown type
        (2, b"\x00" * 15, CloseCode.PROTOCOL_ERROR),
        (1, b"\x00" * (MAX_FRAME_BYTES + 1), CloseCode.TOO_BIG),
    ],
)
def test_a_malformed_frame_is_a_protocol_error(version: int, data: bytes, code: int) -> None:
    with pytest.raises(ProtocolError) as error:
        frames.unpack(version, data)
    assert error.value.code == code


def test_the_protocol_version_header() -> None:
    assert [frames.protocol_version(v) for v in (None, "", "1", " 2 ", "3")] == [1, 1, 1, 2, 3]
    for bad in ("0", "4", "two"):
        with pytest.raises(ProtocolError):
            frames.protocol_version(bad)


def test_the_firmware_hello_and_listen_are_read() -> None:
    hello = messages.parse(
        json.dumps(
            {
                "type": "hello",
                "version": 3,
                "features": {"mcp": True, "aec": False},
                "transport": "websocket",
                "audio_params": {
                    "format": "opus",
                    "sample_rate": 16000,
                    "channels": 1,
                    "frame_duration": 60,
                },
            }
        )
    )
    assert hello == messages.Hello(3, messages.AudioParams(), mcp=True)
    listen = messages.parse('{"session_id":"x","type":"listen","state":"detect","text":" hi "}')
    assert listen == messages.Listen("detect", "auto", "hi")
    assert messages.parse('{"type":"abort","reason":"wake_word_detected"}') == messages.Abort(
        "wake_word_detected"
    )
    assert isinstance(messages.parse('{"type":"iot","states":[]}'), messages.Other)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("not json", CloseCode.UNSUPPORTED_DATA),
        ("[1, 2]", CloseCode.UNSUPPORTED_DATA),
        ('{"no": "type"}', CloseCode.UNSUPPORTED_DATA),
        ('{"type": "listen", "state": "sideways"}', CloseCode.UNSUPPORTED_DATA),
        ('{"type": "listen", "state": "start", "mode": "psychic"}', CloseCode.UNSUPPORTED_DATA),
        ('{"type": "hello", "transport": "udp"}', CloseCode.UNSUPPORTED_DATA),
        ('{"type": "hello", "audio_params": {"format": "pcm"}}', CloseCode.UNSUPPORTED_DATA),
        ('{"type": "hello", "version": 7}', CloseCode.PROTOCOL_ERROR),
        ('{"type": "mcp", "payload": 3}', CloseCode.UNSUPPORTED_DATA),
        ('{"type": "x", "deep": ' + "[" * 40 + "]" * 40 + "}", CloseCode.UNSUPPORTED_DATA),
        ('{"type": "x", "pad": "' + "a" * MAX_TEXT_BYTES + '"}', CloseCode.TOO_BIG),
    ],
)
def test_a_bad_message_is_a_protocol_error(text: str, code: int) -> None:
    with pytest.raises(ProtocolError) as error:
        messages.parse(text)
    assert error.value.code == code


def test_the_server_hello_names_the_audio_it_sends() -> None:
    hello = messages.server_hello("s1", 24000)
    assert hello["transport"] == "websocket" and hello["session_id"] == "s1"
    assert hello["audio_params"] == {
        "format": "opus",
        "sample_rate": 24000,
        "channels": 1,
        "frame_duration": 60,
    }


def test_the_ota_answer() -> None:
    open_settings = Settings(allowed_hosts=("192.168.1.5",))
    url = websocket_url(open_settings, "http", "192.168.1.5:8321", ("192.168.1.5", 8321))
    assert url == "ws://192.168.1.5:8321/xiaozhi/v1/"
    answer = ota_answer(open_settings, url, "", {"application": {"version": "1.9.0"}}, 1.5)
    assert answer["websocket"] == {"url": url, "token": ""}
    assert answer["firmware"] == {"version": "1.9.0", "url": ""}
    assert answer["server_time"]["timestamp"] == 1500
    assert ota_answer(open_settings, url, "stray", None)["websocket"]["token"] == ""
    guarded = Settings(
        device_tokens=("dev-token-9fK2mQ7xLp4Z",),
        xiaozhi=XiaozhiConfig(url="wss://bug.example/xiaozhi/v1/"),
    )
    assert websocket_url(guarded, "http", "x", None) == "wss://bug.example/xiaozhi/v1/"
    answer = ota_answer(guarded, url, "dev-token-9fK2mQ7xLp4Z", "not an object")
    assert answer["websocket"]["token"] == "dev-token-9fK2mQ7xLp4Z"
    assert answer["firmware"]["version"] == ""


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("localhost:8321", "ws://localhost:8321/xiaozhi/v1/"),
        ("lobug.lan:8321", "ws://lobug.lan:8321/xiaozhi/v1/"),  # LOBUG_ALLOWED_HOSTS names it
        # Any other Host: the address the connection reached, never the header's
        ("attacker.example", "ws://192.168.1.9:8321/xiaozhi/v1/"),
        ("lobug.lan@attacker.example", "ws://192.168.1.9:8321/xiaozhi/v1/"),
        ("lobug.lan/../x", "ws://192.168.1.9:8321/xiaozhi/v1/"),
        ("lobug.lan:port", "ws://192.168.1.9:8321/xiaozhi/v1/"),
        (None, "ws://192.168.1.9:8321/xiaozhi/v1/"),
    ],
)
def test_the_ota_address_is_configured_or_an_allowed_host_never_any_host(
    host: str | None, url: str
) -> None:
    settings = Settings(allowed_hosts=("lobug.lan",))
    assert websocket_url(settings, "http", host, ("192.168.1.9", 8321)) == url
    assert websocket_url(Settings(), "https", "evil", ("::1", 443)) == "wss://[::1]:443/xiaozhi/v1/"


def test_opus_round_trip_keeps_the_sound() -> None:
    rate = 24000
    tone = (np.sin(2 * np.pi * 440 * np.arange(rate) / rate) * 8000).astype(np.int16)
    encoder, decoder = OpusEncoder(rate), OpusDecoder(rate)
    packets = encoder.encode(tone) + encoder.flush()
    assert len(packets) == 17  # 1 s in 60 ms frames, the last one padded
    decoded = np.concatenate([decoder.decode(p) for p in packets])
    assert abs(len(decoded) - 17 * 1440) < 100
    assert 6000 < np.abs(decoded[2000:20000]).max() < 10000


def test_a_packet_that_is_not_opus_is_refused() -> None:
    with pytest.raises(ProtocolError):
        OpusDecoder(16000).decode(b"\xff\xfe not opus" * 3)
