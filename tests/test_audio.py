from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lobug.audio import (
    AudioError,
    AudioTooLong,
    CorruptAudio,
    NotWav,
    UnsupportedAudio,
    encode_wav,
    parse_wav,
    resample,
    rms,
    wav_header,
)


def tone(rate: int, seconds: float, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (np.sin(2 * np.pi * freq * t) * 10000).astype(np.int16)


def riff(*chunks: tuple[bytes, bytes]) -> bytes:
    body = b"WAVE" + b"".join(
        cid + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")
        for cid, data in chunks
    )
    return b"RIFF" + struct.pack("<I", len(body)) + body


def fmt(channels: int = 1, rate: int = 16000, bits: int = 16, tag: int = 1) -> bytes:
    return struct.pack(
        "<HHIIHH", tag, channels, rate, rate * channels * bits // 8, channels * bits // 8, bits
    )


def extensible_fmt(channels: int, rate: int, sub_format: int = 1) -> bytes:
    guid_tail = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
    return (
        fmt(channels, rate, 16, 0xFFFE)
        + struct.pack("<HHI", 22, 16, 0x3 if channels == 2 else 0x4)
        + struct.pack("<H", sub_format)
        + guid_tail
    )


def test_round_trip_of_our_own_wav() -> None:
    pcm = tone(22050, 0.5)
    audio = parse_wav(encode_wav(pcm, 22050))
    assert audio.sample_rate == 22050
    assert audio.seconds == pytest.approx(0.5, abs=1e-3)
    assert np.allclose(audio.samples, pcm / 32768.0, atol=1e-6)


def test_extra_chunks_before_and_after_data_are_skipped() -> None:
    pcm = tone(16000, 0.25)
    data = riff(
        (b"LIST", b"INFOISFT\x05\x00\x00\x00Lavf\x00"),
        (b"fmt ", fmt()),
        (b"fact", struct.pack("<I", len(pcm))),
        (b"odd ", b"abc"),  # odd size: a pad byte follows
        (b"data", pcm.tobytes()),
        (b"id3 ", b"trailing"),
    )
    audio = parse_wav(data)
    assert len(audio.samples) == len(pcm)


def test_stereo_extensible_is_mixed_down() -> None:
    left, right = tone(48000, 0.1), np.zeros(4800, dtype=np.int16)
    interleaved = np.column_stack([left, right]).reshape(-1)
    audio = parse_wav(riff((b"fmt ", extensible_fmt(2, 48000)), (b"data", interleaved.tobytes())))
    assert audio.sample_rate == 48000
    assert np.allclose(audio.samples, left / 32768.0 / 2, atol=1e-6)


def test_recording_cut_short_keeps_what_arrived() -> None:
    pcm = tone(16000, 0.5)
    whole = encode_wav(pcm, 16000)
    audio = parse_wav(whole[: 44 + 1001])  # header promises more; odd byte dropped
    assert len(audio.samples) == 500


def test_streaming_header_has_unknown_length() -> None:
    header = wav_header(22050, 0xFFFFFFFF - 36)
    assert len(header) == 44
    assert header[:4] == b"RIFF" and header[8:16] == b"WAVEfmt "
    assert struct.unpack_from("<I", header, 24)[0] == 22050


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"", NotWav),
        (b"ID3\x03garbage" * 10, NotWav),
        (b"RIFF\x00\x00\x00\x00WAVE", CorruptAudio),
        (riff((b"data", b"\0\0")), CorruptAudio),
        (riff((b"fmt ", b"\x01\x00")), CorruptAudio),
        (riff((b"fmt ", fmt(bits=8)), (b"data", b"\0" * 10)), UnsupportedAudio),
        (riff((b"fmt ", fmt(bits=24)), (b"data", b"\0" * 12)), UnsupportedAudio),
        (riff((b"fmt ", fmt(tag=3, bits=32)), (b"data", b"\0" * 8)), UnsupportedAudio),
        (riff((b"fmt ", fmt(tag=0x55)), (b"data", b"\0" * 8)), UnsupportedAudio),
        (riff((b"fmt ", fmt(rate=96000)), (b"data", b"\0" * 8)), UnsupportedAudio),
        (riff((b"fmt ", fmt(rate=4000)), (b"data", b"\0" * 8)), UnsupportedAudio),
        (riff((b"fmt ", fmt(channels=6)), (b"data", b"\0" * 12)), UnsupportedAudio),
        (
            riff((b"fmt ", extensible_fmt(1, 16000, sub_format=3)), (b"data", b"\0" * 8)),
            UnsupportedAudio,
        ),
    ],
)
def test_bad_files_raise_the_right_error(data: bytes, error: type[AudioError]) -> None:
    with pytest.raises(error):
        parse_wav(data)


def test_length_limit() -> None:
    data = encode_wav(tone(8000, 3.0), 8000)
    assert parse_wav(data, max_seconds=3.0).seconds == pytest.approx(3.0)
    with pytest.raises(AudioTooLong):
        parse_wav(data, max_seconds=2.9)


def test_error_classes_carry_http_status() -> None:
    assert (NotWav.status, UnsupportedAudio.status, CorruptAudio.status, AudioTooLong.status) == (
        415,
        415,
        400,
        413,
    )


@given(st.binary(max_size=2048))
def test_random_bytes_never_escape_as_other_errors(data: bytes) -> None:
    try:
        audio = parse_wav(data, max_seconds=30)
    except AudioError:
        return
    assert np.isfinite(audio.samples).all() and 8000 <= audio.sample_rate <= 48000


@given(st.binary(max_size=512), st.integers(0, 0xFFFFFFFF))
def test_random_chunks_after_a_valid_header_are_handled(body: bytes, size: int) -> None:
    data = (
        b"RIFF"
        + struct.pack("<I", 4 + len(body))
        + b"WAVE"
        + b"fmt "
        + struct.pack("<I", 16)
        + fmt()
        + b"data"
        + struct.pack("<I", size)
        + body
    )
    try:
        audio = parse_wav(data, max_seconds=30)
    except AudioError:
        return
    assert len(audio.samples) == min(size, len(body)) // 2


@pytest.mark.parametrize("source", [8000, 22050, 44100, 48000])
def test_resampling_keeps_length_and_pitch(source: int) -> None:
    samples = tone(source, 1.0, freq=440).astype(np.float32) / 32768.0
    out = resample(samples, source, 16000)
    assert len(out) == 16000
    spectrum = np.abs(np.fft.rfft(out))
    assert np.argmax(spectrum) == pytest.approx(440, abs=2)  # 1 Hz bins over 1 s


def test_downsampling_removes_what_cannot_be_represented() -> None:
    high = tone(48000, 1.0, freq=12000).astype(np.float32) / 32768.0
    assert rms(resample(high, 48000, 16000)) < 0.1 * rms(high)


def test_resampling_nothing_or_same_rate() -> None:
    empty = np.zeros(0, dtype=np.float32)
    assert len(resample(empty, 48000, 16000)) == 0
    same = np.ones(10, dtype=np.float32)
    assert np.array_equal(resample(same, 16000, 16000), same)
