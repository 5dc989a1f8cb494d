"""Recognition by voice through a real server process (LOBUG_SPEAKER_RECOGNITION=1): a real
voice uploaded as it is recorded is embedded while it arrives, and the turn names who spoke.
Nobody can be enrolled through a surface yet (people are stored by the household work), so
the speaker heard is a guest; identification itself is tested in tests/speakers."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from lobug.audio import STT_RATE, encode_wav
from tests.e2e.server import ServerProcess, start_server
from tests.e2e.test_voice_server import wait_for_speech
from tests.speakers.voices import voice

pytestmark = [pytest.mark.e2e, pytest.mark.models]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("speakers")
    process = start_server(
        folder / "memory.db", folder / "server.log", {"LOBUG_SPEAKER_RECOGNITION": "1"}
    )
    try:
        wait_for_speech(process)
        yield process
    finally:
        process.stop()


def as_recorded(wav: bytes, step: int = 3_200) -> Iterator[bytes]:
    """The header, then 100 ms pieces at the pace of speech, as a device uploads them."""
    yield wav[:44]
    for at in range(44, len(wav), step):
        time.sleep(0.1)
        yield wav[at : at + step]


def test_a_voice_turn_names_who_spoke(server: ServerProcess) -> None:
    quiet = np.zeros(STT_RATE // 2, dtype=np.float32)
    samples = np.concatenate([voice("maxim-1"), quiet])
    wav = encode_wav((samples * 32767).astype(np.int16), STT_RATE)
    headers = {"Content-Type": "audio/wav", "X-Device-Id": "kitchen"}
    with httpx.Client(base_url=server.url, timeout=120) as client:
        with client.stream(
            "POST", "/chat/audio/stream", content=as_recorded(wav), headers=headers
        ) as response:
            assert response.status_code == 200, response.read()
            response.read()
        assert "speaker;dur=" in response.headers["Server-Timing"]
        turn = client.get(f"/chat/turns/{response.headers['X-Lobug-Turn']}").json()
    assert turn["speaker"] == ["guest", 0.0, "voice"]


def test_a_whole_upload_names_who_spoke_too(server: ServerProcess) -> None:
    wav = encode_wav((voice("carlo-1") * 32767).astype(np.int16), STT_RATE)
    files = {"audio": ("recording.wav", wav, "audio/wav")}
    with httpx.Client(base_url=server.url, timeout=120) as client:
        with client.stream("POST", "/chat/audio/stream", files=files) as response:
            assert response.status_code == 200, response.read()
            response.read()
        turn = client.get(f"/chat/turns/{response.headers['X-Lobug-Turn']}").json()
    assert turn["speaker"] == ["guest", 0.0, "voice"]
