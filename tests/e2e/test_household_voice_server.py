"""The done test of issue 31 through the voice path, on a real server process: real speech
to text and text to speech, real recognition by voice and real enrolment by voice; the chat
model is the text path's fake (`test_household_server.py`: it learns each user message as one
fact and answers from the facts its prompt quotes, so what reaches a prompt is heard through
the device API and the run is deterministic), and so is the text embedder.

Everyone speaks to the same device, so only their voices tell them apart. The voices are
piper's bundled voice at three pitches (resampled: x1.0 Jordan, x1.25 Sam, x0.8 the guest):
the scripted English sentences need a voice that can say them, and the speaker model hears
the three as different people (similarity 0.07-0.24 across them, 0.44-0.84 within each,
measured here). The admin adds Jordan and Sam; a guest's "Please learn my voice. My name is
Jordan." enrols no one (issue 42: a voice is learnt only for a person known by evidence);
Jordan and Sam each say "learn my voice, I'm ..." and three sentences while the admin has
bound the device to them (Sam's over the streamed path, Jordan's over `/chat/audio`), then
the device is no one's again; then each states a fact, the
guest too, and each asks: a person hears their own facts and the household's, never the
other's; the guest hears neither; provenance names who said what, by voice; "forget
everything about me", confirmed by the same voice, leaves no byte of Jordan's private fact in
the database files."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path

import httpx
import numpy as np
import pytest

from lobug.audio import STT_RATE, encode_wav, resample
from lobug.config import Settings
from lobug.speakers.identify import THRESHOLD
from tests.e2e.fake_server import start
from tests.e2e.server import wait_for_learning
from tests.e2e.test_household_server import database_bytes
from tests.e2e.test_voice_server import wait_for_speech

pytestmark = [pytest.mark.e2e, pytest.mark.models]

AGENT = "lobug"
DEVICE = {"X-Device-Id": "living-room"}
PITCH = {"Jordan": 1.0, "Sam": 1.25, "guest": 0.8}
QUESTION = "What is my secret word, my favourite colour, and what is our cat called?"
STORY = (
    "This morning I had toast and a cup of tea in the kitchen.",
    "Then I walked to the station and caught the early train.",
    "In the evening I like to read a book before I go to sleep.",
)


@cache
def piper() -> object:
    from lobug.backends import build_tts

    return build_tts(Settings.from_env({}))


def spoken(text: str, who: str) -> bytes:
    """`text` said by `who`: piper's voice without its random noise (the same sentence is
    the same sound in every run; with the noise, a short one's similarity to its speaker's
    profile varied by 0.2 from run to run), resampled to their pitch, as a device's WAV."""
    from piper import SynthesisConfig

    tts = piper()
    steady = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)
    chunks = tts._voice.synthesize(text, steady)  # type: ignore[attr-defined]
    pcm = np.concatenate([c.audio_int16_array for c in chunks]).astype(np.float32) / 32768.0
    samples = resample(pcm, tts.sample_rate, STT_RATE)  # type: ignore[attr-defined]
    samples = resample(samples, int(STT_RATE * PITCH[who]), STT_RATE)
    quiet = np.zeros(STT_RATE // 4, dtype=np.float32)
    whole = np.concatenate([quiet, samples, quiet])
    return encode_wav((np.clip(whole, -1, 1) * 32767).astype(np.int16), STT_RATE)


def say(client: httpx.Client, who: str, text: str) -> str:
    """The device contract's whole upload: the reply's text."""
    files = {"audio": ("recording.wav", spoken(text, who), "audio/wav")}
    answer = client.post("/chat/audio", files=files, headers=DEVICE)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["action"] == "respond", body
    reply: str = body["response"]
    return reply


def say_streamed(client: httpx.Client, who: str, text: str) -> str:
    """The streamed path, the recording uploaded as it is recorded: the reply's text."""
    headers = {**DEVICE, "Content-Type": "audio/wav"}
    wav = spoken(text, who)
    pieces: Iterator[bytes] = (wav[at : at + 3_200] for at in range(0, len(wav), 3_200))
    with client.stream("POST", "/chat/audio/stream", content=pieces, headers=headers) as answer:
        assert answer.status_code == 200, answer.read()
        answer.read()
    turn = client.get(f"/chat/turns/{answer.headers['X-Lobug-Turn']}").json()
    reply: str = turn["response"]
    return reply


def enrol(client: httpx.Client, who: str, request: str, streamed: bool = False) -> None:
    talk = say_streamed if streamed else say
    assert talk(client, who, request).startswith(f"Okay {who}, say three sentences")
    answers = [talk(client, who, sentence) for sentence in STORY]
    assert answers == [
        "Got it. Two more.",
        "Got it. One more.",
        f"Thanks {who}, I've learnt your voice.",
    ]


def test_two_people_and_a_guest_by_voice(tmp_path: Path) -> None:
    notes = tmp_path / "answer-from-notes"
    notes.touch()
    env = {
        "LOBUG_DB_PATH": str(tmp_path / "memory.db"),
        "FAKE_NOTES_FILE": str(notes),
        "FAKE_REAL_SPEECH": "1",
        "LOBUG_SPEAKER_RECOGNITION": "1",
        "LOBUG_VOICE_MAX_WORDS": "80",
        "LOBUG_VOICE_MAX_SENTENCES": "6",
        "LOBUG_VOICE_MAX_TOKENS": "400",
    }
    server = start("serve", tmp_path / "server.log", env)
    try:
        wait_for_speech(server)
        with httpx.Client(base_url=server.url, timeout=60) as client:
            client.post("/memory/agents", json={"name": AGENT})
            ids = {
                name: client.post(f"/memory/people/{AGENT}", json={"name": name}).json()["id"]
                for name in ("Jordan", "Sam")
            }
            refused = say(client, "guest", "Please learn my voice. My name is Jordan.")
            assert refused.startswith("I can only learn the voice of someone I already know")
            for name, request, streamed in (
                ("Jordan", "Please learn my voice. My name is Jordan.", False),
                ("Sam", "Remember my voice, this is Sam.", True),
            ):
                bound = {"person_id": int(ids[name]), "move": True}
                client.put(f"/memory/people/{AGENT}/devices/living-room", json=bound)
                enrol(client, name, request, streamed=streamed)
            client.put(f"/memory/people/{AGENT}/devices/living-room", json={"person_id": None})
            people = {p["name"]: p for p in client.get(f"/memory/people/{AGENT}").json()}
            assert {name: p["voice_profiles"] for name, p in people.items()} == {
                "Jordan": 1,
                "Sam": 1,
            }

            say(client, "Jordan", "My secret word is pineapple.")
            # Not "My favourite colour is purple.": that short sentence scores 0.49-0.50 against
            # either voice's profile, below the threshold of 0.55 (a guest's words, not kept).
            say(client, "Sam", "I really love purple, it is my favourite colour.")
            say(client, "Sam", "Our cat is called Banana.")
            say(client, "guest", "My dog is called Rex.")  # a guest: not kept
            wait_for_learning(client)

            jordan = say(client, "Jordan", QUESTION).lower()
            assert "pineapple" in jordan and "banana" in jordan and "purple" not in jordan
            sam = say(client, "Sam", QUESTION).lower()
            assert "purple" in sam and "banana" in sam and "pineapple" not in sam
            guest = say(client, "guest", QUESTION).lower()
            assert not any(word in guest for word in ("pineapple", "purple", "banana", "rex"))

            said = client.get(f"/memory/messages/{AGENT}", params={"limit": 100}).json()
            heard = sorted((m for m in said if m["role"] == "user"), key=lambda m: m["created_at"])
            # Who said each of the four, in the order they were said: not found by their words,
            # which whisper hears differently from run to run at the guest's pitch ("My dog is
            # called Rex." as "... Brex." or "My dad is cold Rex.").
            assert [(m["speaker"], m["speaker_source"]) for m in heard[:4]] == [
                ("Jordan", "voice"),
                ("Sam", "voice"),
                ("Sam", "voice"),
                ("guest", "guest"),
            ]
            assert "pineapple" in heard[0]["content"] and "banana" in heard[2]["content"].lower()
            assert {m["speaker"] for m in said if m["role"] == "assistant"} == {"assistant"}
            by_voice = [m["speaker_confidence"] for m in said if m["speaker_source"] == "voice"]
            assert by_voice and min(by_voice) >= THRESHOLD  # the similarity: at least that

            asked = say(client, "Jordan", "Forget everything about me.")
            assert "yes, forget me" in asked
            assert say(client, "Sam", "Yes, forget me.").startswith("Done.") is False
            assert say(client, "Jordan", "Forget everything about me.")
            confirmed = say(client, "Jordan", "Yes, please forget everything, thank you.")
            assert confirmed.startswith("Done.")
            facts = client.get(f"/memory/people/{AGENT}/{people['Jordan']['id']}/facts").json()
            assert facts == []
            assert "banana" in say(client, "Sam", QUESTION).lower()  # the household's stays
    finally:
        server.stop()
    stored = database_bytes(tmp_path)
    assert b"banana" in stored and b"purple" in stored
    assert b"pineapple" not in stored
