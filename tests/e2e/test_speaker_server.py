"""Recognition by voice through a real server process (LOBUG_SPEAKER_RECOGNITION=1): a real
voice uploaded as it is recorded is embedded while it arrives, and the turn names who spoke.
Nobody enrolled, the speaker heard is a guest; a person enrolled through
`PUT /memory/people/{agent}/{id}/voice` is named by their voice (the profile kept in the
database as an embedding) until their voice is forgotten."""

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


def wav_of(name: str) -> bytes:
    return encode_wav((voice(name) * 32767).astype(np.int16), STT_RATE)


def spoken_by(client: httpx.Client, name: str) -> list[object]:
    quiet = np.zeros(STT_RATE // 2, dtype=np.float32)
    samples = np.concatenate([voice(name), quiet])
    wav = encode_wav((samples * 32767).astype(np.int16), STT_RATE)
    headers = {"Content-Type": "audio/wav", "X-Device-Id": "hall"}
    with client.stream(
        "POST", "/chat/audio/stream", content=as_recorded(wav), headers=headers
    ) as response:
        assert response.status_code == 200, response.read()
        response.read()
    speaker: list[object] = client.get(f"/chat/turns/{response.headers['X-Lobug-Turn']}").json()[
        "speaker"
    ]
    return speaker


def test_a_voice_enrolled_through_the_api_is_named_until_it_is_forgotten(
    server: ServerProcess,
) -> None:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        maxim = client.post("/memory/people/lobug", json={"name": "Maxim"}).json()["id"]
        path = f"/memory/people/lobug/{maxim}/voice"
        one = [("audio", ("a.wav", wav_of("maxim-1"), "audio/wav"))]
        assert client.put(path, files=one).json()["error"] == "voice_refused"  # one is too few
        mixed = [("audio", (f"{n}.wav", wav_of(n), "audio/wav")) for n in ("maxim-1", "carlo-1")]
        refused = client.put(path, files=mixed)
        assert (refused.status_code, refused.json()["error"]) == (422, "voice_refused")
        clips = [("audio", (f"{n}.wav", wav_of(n), "audio/wav")) for n in ("maxim-1", "maxim-2")]
        enrolled = client.put(path, files=clips)
        assert enrolled.status_code == 200, enrolled.text
        assert enrolled.json()["utterances"] == 2
        (person,) = client.get("/memory/people/lobug").json()
        assert person["voice_profiles"] == 1
        name, score, source = spoken_by(client, "maxim-3")
        assert (name, source) == ("Maxim", "voice") and isinstance(score, float) and score > 0.4
        # A stranger's voice lies far below his own, and below the threshold (June scored
        # 0.40-0.43 here: she passed for Maxim at the old threshold of 0.40, issue 42).
        stranger = spoken_by(client, "june-1")
        assert isinstance(stranger[1], float) and stranger[1] < score - 0.2
        assert stranger[0] == "guest"
        assert client.delete(path).json()["enrolled"] is False
        assert client.get("/memory/people/lobug").json()[0]["voice_profiles"] == 0
        assert spoken_by(client, "maxim-3")[0] == "guest"
