"""WAV in and out, without trusting a 44-byte header: RIFF chunks are walked properly.

Accepted: PCM 16-bit (plain or WAVE_FORMAT_EXTENSIBLE), 8-48 kHz, mono or stereo (mixed down).
Everything else is refused with an `AudioError` that names its HTTP status and error code.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Samples = npt.NDArray[np.float32]
Pcm16 = npt.NDArray[np.int16]

WAVE_FORMAT_PCM = 0x0001
WAVE_FORMAT_EXTENSIBLE = 0xFFFE
MIN_RATE, MAX_RATE = 8_000, 48_000
STT_RATE = 16_000
STREAMING_DATA_SIZE = 0xFFFFFFFF - 36  # "unknown length": players read until the stream ends


class AudioError(ValueError):
    status = 400
    error = "invalid_audio"


class AudioTooLarge(AudioError):
    status = 413
    error = "audio_too_large"


def check_audio_size(size: int, limit: int) -> None:
    """AudioTooLarge when a recording of `size` bytes is over `limit`."""
    if size > limit:
        raise AudioTooLarge(f"The recording is larger than {limit} bytes")


class NotWav(AudioError):
    status = 415
    error = "not_wav"


class UnsupportedAudio(AudioError):
    status = 415
    error = "unsupported_audio"


class CorruptAudio(AudioError):
    status = 400
    error = "corrupt_audio"


class AudioTooLong(AudioError):
    status = 413
    error = "audio_too_long"


@dataclass(frozen=True)
class Audio:
    """Mono float32 samples in [-1, 1] at `sample_rate`."""

    samples: Samples
    sample_rate: int

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.sample_rate if self.sample_rate else 0.0


@dataclass(frozen=True)
class _Format:
    channels: int
    sample_rate: int


def parse_wav(data: bytes, *, max_seconds: float | None = None) -> Audio:
    """Decode a WAV file into mono float32 samples at its own rate."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise NotWav("The upload is not a WAV file (no RIFF/WAVE header)")
    fmt: _Format | None = None
    for chunk_id, body in _chunks(data):
        if chunk_id == b"fmt ":
            fmt = _parse_format(body)
        elif chunk_id == b"data":
            if fmt is None:
                raise CorruptAudio("The WAV data chunk comes before its fmt chunk")
            return _decode(body, fmt, max_seconds)
    raise CorruptAudio("The WAV file has no fmt or data chunk")


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(id, body) for each RIFF chunk; a data chunk cut short is returned as far as it goes."""
    found = []
    position = 12
    while position + 8 <= len(data):
        chunk_id = data[position : position + 4]
        (size,) = struct.unpack_from("<I", data, position + 4)
        start = position + 8
        end = start + size
        if end > len(data):
            if chunk_id != b"data":
                raise CorruptAudio(f"The WAV {chunk_id!r} chunk is truncated")
            end = len(data)  # recorders that stop early leave a too-large size: keep what came
        found.append((chunk_id, data[start:end]))
        if chunk_id == b"data":
            break
        position = end + (size & 1)  # chunks are word-aligned
    return found


def _parse_format(body: bytes) -> _Format:
    if len(body) < 16:
        raise CorruptAudio("The WAV fmt chunk is too short")
    tag, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", body)
    if tag == WAVE_FORMAT_EXTENSIBLE:
        if len(body) < 26:
            raise CorruptAudio("The WAVE_FORMAT_EXTENSIBLE fmt chunk is too short")
        (tag,) = struct.unpack_from("<H", body, 24)  # first two bytes of the sub-format GUID
    if tag != WAVE_FORMAT_PCM:
        raise UnsupportedAudio(f"Only PCM WAV is accepted (format tag {tag:#06x})")
    if bits != 16:
        raise UnsupportedAudio(f"Only 16-bit samples are accepted (got {bits}-bit)")
    if channels not in (1, 2):
        raise UnsupportedAudio(f"Only mono or stereo is accepted (got {channels} channels)")
    if not MIN_RATE <= rate <= MAX_RATE:
        raise UnsupportedAudio(f"Sample rate must be 8-48 kHz (got {rate} Hz)")
    return _Format(channels=channels, sample_rate=rate)


def _decode(body: bytes, fmt: _Format, max_seconds: float | None) -> Audio:
    frame_bytes = fmt.channels * 2
    usable = len(body) - len(body) % frame_bytes
    seconds = usable / frame_bytes / fmt.sample_rate
    if max_seconds is not None and seconds > max_seconds:
        raise AudioTooLong(f"The recording is {seconds:.1f} s; the limit is {max_seconds:g} s")
    pcm = np.frombuffer(body[:usable], dtype="<i2").astype(np.float32) / 32768.0
    if fmt.channels == 2:
        pcm = pcm.reshape(-1, 2).mean(axis=1)
    return Audio(samples=pcm.astype(np.float32), sample_rate=fmt.sample_rate)


def resample(samples: Samples, source_rate: int, target_rate: int) -> Samples:
    """Band-limited resampling: a windowed-sinc low-pass before downsampling, then linear
    interpolation (plenty for speech recognition and playback of speech)."""
    if source_rate == target_rate or len(samples) == 0:
        return samples.astype(np.float32)
    if target_rate < source_rate:
        samples = _low_pass(samples, cutoff=0.5 * target_rate / source_rate)
    duration = len(samples) / source_rate
    count = max(1, round(duration * target_rate))
    positions = np.arange(count, dtype=np.float64) * (source_rate / target_rate)
    original = np.arange(len(samples), dtype=np.float64)
    return np.interp(positions, original, samples).astype(np.float32)


def _low_pass(samples: Samples, cutoff: float, taps: int = 63) -> Samples:
    """FIR low-pass; `cutoff` is a fraction of the sample rate (0.5 = Nyquist)."""
    n = np.arange(taps) - (taps - 1) / 2
    kernel = 2 * cutoff * np.sinc(2 * cutoff * n) * np.hamming(taps)
    kernel /= kernel.sum()
    return np.convolve(samples, kernel, mode="same").astype(np.float32)


def wav_header(sample_rate: int, data_bytes: int, channels: int = 1) -> bytes:
    """A canonical 44-byte PCM 16-bit header (what the M5Stack firmware reads)."""
    byte_rate = sample_rate * channels * 2
    return (
        b"RIFF"
        + struct.pack("<I", min(36 + data_bytes, 0xFFFFFFFF))
        + b"WAVEfmt "
        + struct.pack(
            "<IHHIIHH", 16, WAVE_FORMAT_PCM, channels, sample_rate, byte_rate, channels * 2, 16
        )
        + b"data"
        + struct.pack("<I", data_bytes)
    )


def encode_wav(pcm: Pcm16, sample_rate: int) -> bytes:
    data = pcm.astype("<i2").tobytes()
    return wav_header(sample_rate, len(data)) + data


def rms(samples: Samples) -> float:
    return float(np.sqrt(np.mean(np.square(samples)))) if len(samples) else 0.0
