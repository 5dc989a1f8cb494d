"""scripts/device_sim.py end to end: the simulator as a subprocess, the server as a real process
with its real models, plain HTTP between them, as between the M5Stack and the server."""

from __future__ import annotations

import subprocess
import sys
import wave
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from tests.e2e.server import ServerProcess, start_server
from tests.firmware.sim import SIM_PATH

pytestmark = [pytest.mark.e2e, pytest.mark.models]

TOKEN = "tok-sim-Fw3Nx8Lp"
DEVICE = "sim-e2e"
QUESTION = "Hello! Who are you?"
ACTIONS = ("respond", "ignore", "react")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("device-sim")
    process = start_server(
        folder / "memory.db", folder / "server.log", {"LOBUG_DEVICE_TOKENS": TOKEN}
    )
    try:
        yield process
    finally:
        process.stop()  # learning still under way stays queued: the stop ends in its deadline
    assert process.process.returncode == 0, process.log()


def run_sim(
    server: ServerProcess, *args: str, token: str = TOKEN
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SIM_PATH), "--url", server.url, "--token", token]
    command += ["--device-id", DEVICE, "--health-timeout", "180", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


def test_text_turn_and_sensors_reach_the_server(server: ServerProcess, tmp_path: Path) -> None:
    done = run_sim(server, "--text", QUESTION, "--sensors-every", "1", "--duration", "2.5")
    assert done.returncode == 0, done.stdout + done.stderr + server.log()
    assert "action: respond" in done.stdout
    assert done.stdout.count("sensors: 200 ") >= 2  # posted at start, then every second

    headers = {"Authorization": f"Bearer {TOKEN}", "X-Device-Id": DEVICE}
    state = httpx.get(f"{server.url}/context/working-memory", headers=headers, timeout=10).json()
    assert state["messages"][0] == {"role": "user", "content": QUESTION}
    assert state["messages"][1]["role"] == "assistant"
    assert state["sensors"]["orientation"] == "face_up"
    assert state["sensors"]["accel"] == [0.01, -0.02, 0.98]


def test_a_wrong_token_is_reported_not_hidden(server: ServerProcess) -> None:
    done = run_sim(server, "--text", "hi", "--sensors-every", "0", token="wrong")
    assert done.returncode == 1
    assert "error: 401 unauthorized" in done.stdout


@pytest.fixture(scope="module")
def hum_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second of a hum in stereo at 44.1 kHz: the simulator converts it to what the device
    records (16 kHz mono). Not speech: the server should not answer it with words."""
    rate = 44100
    t = np.arange(rate) / rate
    hum = (np.sin(2 * np.pi * 120 * t) * 3000).astype("<i2")
    path = tmp_path_factory.mktemp("audio") / "hum.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(2)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(np.repeat(hum, 2).tobytes())
    return path


@pytest.mark.parametrize("mode", [[], ["--stream"]], ids=["whole", "stream"])
def test_audio_turn_over_the_firmwares_wire_format(
    server: ServerProcess, hum_wav: Path, tmp_path: Path, mode: list[str]
) -> None:
    done = run_sim(
        server, "--wav", str(hum_wav), "--sensors-every", "0", "--out", str(tmp_path), *mode
    )
    assert done.returncode == 0, done.stdout + done.stderr + server.log()
    assert "transcription:" in done.stdout
    action = done.stdout.split("action: ", 1)[1].split()[0]
    assert action in ACTIONS
    saved = list(tmp_path.glob("turn-*.wav"))
    assert bool(saved) == (action == "respond")
