"""Kaldi-style log mel filterbank features in numpy (what the WeSpeaker model was trained on):
25 ms frames every 10 ms, DC offset removed, pre-emphasis 0.97, Hamming window, 512-point
power spectrum, 80 triangular mel bins from 20 Hz to Nyquist, natural log. The samples are
scaled to 16-bit integers first, as Kaldi reads them.

Frames are independent, so features for a recording that grows are the features of its first
part followed by those of the rest (`frames_ready` says how many a length allows)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

RATE = 16_000
FRAME = 400  # 25 ms
SHIFT = 160  # 10 ms
FFT = 512
MEL_BINS = 80
LOW_HZ = 20.0
PREEMPHASIS = 0.97
EPSILON = float(np.finfo(np.float32).eps)

Floats = npt.NDArray[np.float32]


def frames_ready(samples: int) -> int:
    """Whole frames in `samples` (Kaldi's `snip_edges`: no frame runs past the end)."""
    return 0 if samples < FRAME else 1 + (samples - FRAME) // SHIFT


def log_mel(samples: npt.NDArray[np.floating], start_frame: int = 0) -> Floats:
    """Features `[frames, 80]` of 16 kHz float samples (-1..1), from frame `start_frame` on."""
    count = frames_ready(len(samples)) - start_frame
    if count <= 0:
        return np.zeros((0, MEL_BINS), dtype=np.float32)
    frames = _frames(np.asarray(samples, dtype=np.float64) * 32768.0, start_frame, count)
    power = np.abs(np.fft.rfft(_shaped(frames), n=FFT)) ** 2
    energies = power[:, : FFT // 2] @ _mel_banks().T
    return np.log(np.maximum(energies, EPSILON)).astype(np.float32)


def _frames(scaled: npt.NDArray[np.float64], start: int, count: int) -> npt.NDArray[np.float64]:
    first = start * SHIFT
    index = first + np.arange(count)[:, None] * SHIFT + np.arange(FRAME)[None, :]
    return scaled[index]


def _shaped(frames: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    frames = frames - frames.mean(axis=1, keepdims=True)
    previous = np.concatenate([frames[:, :1], frames[:, :-1]], axis=1)
    return (frames - PREEMPHASIS * previous) * _window()


@lru_cache(maxsize=1)
def _window() -> npt.NDArray[np.float64]:
    n = np.arange(FRAME)
    return 0.54 - 0.46 * np.cos(2 * np.pi * n / (FRAME - 1))


def _mel(hz: npt.NDArray[np.float64] | float) -> npt.NDArray[np.float64]:
    return 1127.0 * np.log(1.0 + np.asarray(hz, dtype=np.float64) / 700.0)


@lru_cache(maxsize=1)
def _mel_banks() -> npt.NDArray[np.float64]:
    """`[80, 256]` triangles over the FFT bins below Nyquist, equally spaced in mel."""
    low, high = _mel(LOW_HZ), _mel(RATE / 2)
    edges = low + (high - low) / (MEL_BINS + 1) * np.arange(MEL_BINS + 2)
    bins = _mel(np.arange(FFT // 2) * RATE / FFT)
    left, centre, right = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    rising = (bins[None, :] - left) / (centre - left)
    falling = (right - bins[None, :]) / (right - centre)
    return np.maximum(0.0, np.minimum(rising, falling))
