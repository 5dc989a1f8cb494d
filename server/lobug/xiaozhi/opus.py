"""Opus both ways with PyAV (its wheel carries libopus; nothing to install on the system):
the device's packets decoded to 16 kHz mono int16 PCM, the reply's PCM encoded into 60 ms
packets at the rate the server's hello announced."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from lobug.xiaozhi.limits import FRAME_MS, CloseCode, ProtocolError

Pcm16 = npt.NDArray[np.int16]


class OpusDecoder:
    """One device's stream of packets (Opus keeps state from packet to packet)."""

    def __init__(self, sample_rate: int) -> None:
        import av

        self.sample_rate = sample_rate
        self._codec: Any = av.CodecContext.create("libopus", "r")
        self._codec.sample_rate = sample_rate
        self._codec.layout = "mono"
        self._codec.format = "s16"
        # libopus decodes at 48 kHz whatever it is asked: resampled to the device's rate
        self._resampler: Any = av.AudioResampler(format="s16", layout="mono", rate=sample_rate)

    def decode(self, packet: bytes) -> Pcm16:
        """The PCM of one packet; ProtocolError for one that is not Opus."""
        import av

        try:
            frames = self._codec.decode(av.Packet(packet))
        except (av.FFmpegError, ValueError) as exc:
            raise ProtocolError(CloseCode.UNSUPPORTED_DATA, f"not an Opus packet: {exc}") from None
        pieces = [
            _mono_int16(out.to_ndarray())
            for frame in frames
            for out in self._resampler.resample(frame)
        ]
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int16)


def _mono_int16(samples: Any) -> Pcm16:
    array = np.asarray(samples)
    if array.dtype != np.int16:  # libopus may answer float planes
        array = (np.clip(array, -1, 1) * 32767).astype(np.int16)
    return array.reshape(-1) if array.shape[0] == 1 else array[0]


class OpusEncoder:
    """int16 mono PCM at `sample_rate` in, one Opus packet per `FRAME_MS` out. The last
    frame of a reply is padded with silence (`flush`)."""

    def __init__(self, sample_rate: int) -> None:
        import av

        self.sample_rate = sample_rate
        self.frame_samples = sample_rate * FRAME_MS // 1000
        self._codec: Any = av.CodecContext.create("libopus", "w")
        self._codec.sample_rate = sample_rate
        self._codec.layout = "mono"
        self._codec.format = "s16"
        self._codec.bit_rate = 32_000
        self._codec.options = {"frame_duration": str(FRAME_MS), "application": "voip"}
        self._codec.open()
        self._pending = np.zeros(0, dtype=np.int16)
        self._pts = 0

    def encode(self, pcm: Pcm16) -> list[bytes]:
        """The packets of every whole frame `pcm` completes."""
        self._pending = np.concatenate([self._pending, pcm.astype(np.int16)])
        packets: list[bytes] = []
        while len(self._pending) >= self.frame_samples:
            frame, self._pending = (
                self._pending[: self.frame_samples],
                self._pending[self.frame_samples :],
            )
            packets += self._encode_frame(frame)
        return packets

    def flush(self) -> list[bytes]:
        """The rest, padded to a whole frame, and what the codec still holds."""
        packets: list[bytes] = []
        if len(self._pending):
            padding = np.zeros(self.frame_samples - len(self._pending), dtype=np.int16)
            packets += self._encode_frame(np.concatenate([self._pending, padding]))
            self._pending = np.zeros(0, dtype=np.int16)
        return packets

    def _encode_frame(self, samples: Pcm16) -> list[bytes]:
        import av

        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = self.sample_rate
        frame.pts = self._pts
        self._pts += len(samples)
        return [bytes(packet) for packet in self._codec.encode(frame)]
