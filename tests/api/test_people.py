"""A household over HTTP (in process, fake models): people curated by an admin, who said each
turn, and every surface that reads memory for a person (the device's prompt, `/context`,
`/v1` with `user`, the memory engine that MCP calls) kept from another person's private
facts. The fake chat learns each user message as one fact (`learn_what_was_said`), so what
is learned is deterministic."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.audio import STT_RATE, Audio, encode_wav
from lobug.backends import Backends
from lobug.backends.base import Transcript, TranscriptSegment
from lobug.config import Settings
from lobug.engine import MemoryEngine
from lobug.memory.voice_enrolment import HeardVoice
from lobug.services.engine_tools import call_tool
from lobug.speakers.identify import Speaker as VoiceSpeaker
from lobug.store.household import Speaker
from lobug.store.sqlite.engine import SQLiteStore
from tests.e2e.fake_server import learn_what_was_said
from tests.fakes import FakeChat, FakeEmbedder, FakeSTT, FakeTTS
from tests.polling import memory_work_done
from tests.speakers.voices import voice

AGENT = "lobug"


@pytest.fixture
def chat() -> FakeChat:
    return FakeChat(responder=learn_what_was_said)


@pytest.fixture
def home(settings: Settings, chat: FakeChat) -> Iterator[TestClient]:
    backends = Backends(chat=chat, embedder=FakeEmbedder())
    with TestClient(create_app(settings, backends)) as client:
        yield client


def store_of(client: TestClient) -> SQLiteStore:
    found: SQLiteStore = client.app.state.services.store  # type: ignore[attr-defined]
    return found


def say(client: TestClient, device: str, text: str) -> str:
    response = client.post("/chat/text", json={"text": text}, headers={"X-Device-Id": device})
    assert response.status_code == 200, response.text
    memory_work_done(client)
    reply: str = response.json()["response"]
    return reply


def add(client: TestClient, name: str, devices: list[str]) -> str:
    response = client.post(f"/memory/people/{AGENT}", json={"name": name, "devices": devices})
    assert response.status_code == 201, response.text
    person_id: str = response.json()["id"]
    return person_id


def wav_bytes(samples: np.ndarray) -> bytes:
    return encode_wav((samples * 32767).astype(np.int16), STT_RATE)


def last_prompt(chat: FakeChat) -> str:
    return " ".join(m["content"] for m in chat.chat_requests()[-1])


@pytest.fixture
def family(home: TestClient) -> tuple[TestClient, str, str]:
    store_of(home).ensure_agent(AGENT)
    jordan = add(home, "Jordan", ["kitchen"])
    sam = add(home, "Sam", ["office"])
    say(home, "kitchen", "My locker code is 4417")
    say(home, "office", "My dentist is Dr Alvarez")
    say(home, "office", "Our wifi password is plum42")
    return home, jordan, sam


def test_people_are_curated_by_an_admin(home: TestClient) -> None:
    store_of(home).ensure_agent(AGENT)
    jordan = add(home, "Jordan", ["kitchen"])
    taken = home.post(f"/memory/people/{AGENT}", json={"name": "jordan"})
    assert taken.json()["error"] == "person_exists"
    bad = home.post(f"/memory/people/{AGENT}", json={"name": "R2-D2"})
    assert bad.status_code == 422 and bad.json()["error"] == "invalid_person"
    assert home.delete(f"/memory/people/{AGENT}/999").json()["error"] == "person_not_found"
    moved = home.put(f"/memory/people/{AGENT}/devices/hall", json={"person_id": int(jordan)})
    assert moved.json()[0]["devices"] == ["hall", "kitchen"]
    listed = home.get(f"/memory/people/{AGENT}").json()
    assert [(p["name"], p["voice_profiles"]) for p in listed] == [("Jordan", 0)]
    assert home.get("/memory/people/nobody").status_code == 404


def test_each_person_is_answered_from_their_own_and_the_households_facts(
    family: tuple[TestClient, str, str], chat: FakeChat
) -> None:
    client, _, _ = family
    say(client, "kitchen", "What is my locker code and my dentist and the wifi password?")
    prompt = last_prompt(chat)
    assert "4417" in prompt and "plum42" in prompt and "Alvarez" not in prompt
    say(client, "office", "What is my locker code and my dentist and the wifi password?")
    prompt = last_prompt(chat)
    assert "Alvarez" in prompt and "plum42" in prompt and "4417" not in prompt
    say(client, "hall", "What is the locker code, the dentist and the wifi password?")
    prompt = last_prompt(chat)  # a guest: nothing private, no household fact not shareable
    assert not any(word in prompt for word in ("4417", "Alvarez", "plum42"))


def test_a_claim_says_who_is_speaking_and_opens_nothing_private(
    family: tuple[TestClient, str, str], chat: FakeChat
) -> None:
    client, _, sam = family
    say(client, "kitchen", "Hi, it's Sam. Who is my dentist?")
    assert "Alvarez" not in last_prompt(chat) and "4417" not in last_prompt(chat)
    messages = client.get(f"/memory/messages/{AGENT}", params={"limit": 2}).json()
    reply, asked = messages
    assert (asked["speaker"], asked["speaker_source"], asked["speaker_confidence"]) == (
        "Sam",
        "claim",
        0.8,
    )
    assert (reply["speaker"], reply["person_id"]) == ("assistant", sam)


def test_programs_read_as_the_person_they_name(family: tuple[TestClient, str, str]) -> None:
    client, _, _ = family
    query = {"query": "locker code dentist wifi password"}
    as_sam = client.post(f"/memory/context/{AGENT}", json={**query, "person": "Sam"}).json()
    assert "Alvarez" in as_sam["prompt"] and "4417" not in as_sam["prompt"]
    as_nobody = client.post(f"/memory/context/{AGENT}", json=query).json()  # several: a guest
    assert not any(w in as_nobody["prompt"] for w in ("4417", "Alvarez", "plum42"))
    bad = client.post(f"/memory/context/{AGENT}", json={**query, "person": "<script>"})
    assert bad.status_code == 422
    engine = MemoryEngine.attached(client.app.state.memory, AGENT)  # type: ignore[attr-defined]
    asked = {"query": "locker code dentist", "person": "Jordan"}
    found = [f["content"] for f in call_tool(engine, "search_memory", asked)]  # MCP's call
    assert any("4417" in f for f in found) and not any("Alvarez" in f for f in found)
    prompt = engine.format_for_injection("locker code dentist", person="Sam")  # get_context
    assert "Alvarez" in prompt and "4417" not in prompt


def test_v1_user_names_the_person(family: tuple[TestClient, str, str], chat: FakeChat) -> None:
    client, _, _ = family
    body = {"messages": [{"role": "user", "content": "locker code dentist wifi?"}], "user": "Sam"}
    answered = client.post("/v1/chat/completions", json=body, headers={"X-Agent": AGENT})
    assert answered.status_code == 200, answered.text
    assert "Alvarez" in last_prompt(chat) and "4417" not in last_prompt(chat)


def test_moving_a_fact_to_the_household_and_sharing_it(
    family: tuple[TestClient, str, str], chat: FakeChat
) -> None:
    client, jordan, _ = family
    [locker] = client.get(f"/memory/people/{AGENT}/{jordan}/facts").json()
    assert locker["scope"] == "private" and locker["owner_person_id"] == jordan
    url = f"/memory/facts/{AGENT}/{locker['id']}/scope"
    assert client.put(url, json={"scope": "household", "shareable": True}).json()["shareable"]
    say(client, "hall", "What is the locker code?")
    assert "4417" in last_prompt(chat)  # a guest hears a shareable household fact
    assert client.put(url, json={"scope": "secret"}).status_code == 422


def test_forget_me_by_voice_is_confirmed_then_purges(
    family: tuple[TestClient, str, str], chat: FakeChat
) -> None:
    client, jordan, _ = family
    asked = len(chat.chat_requests())
    assert "yes, forget me" in say(client, "kitchen", "Forget everything about me")
    assert say(client, "kitchen", "Yes, forget me").startswith("Done.")
    assert len(chat.chat_requests()) == asked  # the model was not asked
    assert client.get(f"/memory/people/{AGENT}/{jordan}/facts").json() == []
    store = store_of(client)
    assert not any("4417" in m.content for m in store.agent_messages(AGENT, 100))
    assert any("plum42" in f.content for f in store.facts(AGENT))
    gone = client.delete(f"/memory/people/{AGENT}/{jordan}").json()
    assert gone["deleted"] is True
    assert [p["name"] for p in client.get(f"/memory/people/{AGENT}").json()] == ["Sam"]


def test_spoken_forgetting_and_correcting_stay_within_what_the_speaker_sees(
    family: tuple[TestClient, str, str],
) -> None:
    client, jordan, sam = family
    said = say(client, "kitchen", "Forget everything about the dentist")
    assert "Alvarez" not in said and "forgot" not in said  # Sam's private fact is not Jordan's
    sams = client.get(f"/memory/people/{AGENT}/{sam}/facts").json()
    assert any("Alvarez" in f["content"] for f in sams)
    corrected = say(client, "kitchen", "Correction: my bike is red")
    assert corrected.startswith("Thanks, I'll remember")
    mine = client.get(f"/memory/people/{AGENT}/{jordan}/facts").json()
    assert any("bike" in f["content"] and f["scope"] == "private" for f in mine)
    assert say(client, "hall", "Correction: my bike is blue").startswith("I only keep notes")


def test_a_recognised_voice_comes_first(
    family: tuple[TestClient, str, str], chat: FakeChat
) -> None:
    """The seam of the voice path: a recognizer's answer (here a fixed Speaker, standing for
    the separate `SpeakerRecognizer` backend) outranks the claim and the device's default."""
    client, _, sam = family
    assistant = client.app.state.services.assistant  # type: ignore[attr-defined]
    voice = HeardVoice(Speaker(int(sam), "voice", 0.93))
    turn = assistant.reply("kitchen", "It's Jordan. Who is my dentist?", voice=voice)
    assert "Alvarez" in last_prompt(chat) and "4417" not in last_prompt(chat)
    assert (turn.user_message.speaker_source, turn.user_message.speaker_confidence) == (
        "voice",
        0.93,
    )


def test_the_streamed_voice_path_hands_a_recognised_voice_to_the_turn(
    settings: Settings, chat: FakeChat
) -> None:
    """`Voice.answer_streaming` with what the recognizer heard (its Speaker, by name): the
    stored words are the person's, by voice, and their turn reads their memory."""
    backends = Backends(chat, FakeEmbedder(), FakeSTT(), FakeTTS())
    with TestClient(create_app(settings, backends)) as client:
        store_of(client).ensure_agent(AGENT)
        sam = int(add(client, "Sam", ["office"]))
        add(client, "Jordan", ["default"])
        voice = client.app.state.services.voice  # type: ignore[attr-defined]
        words = "Who is my dentist?"
        heard = Transcript(words, (TranscriptSegment(words, 0.01, -0.2),), "en")
        streamed = voice.answer_streaming(
            "default", heard, 2.0, {}, None, VoiceSpeaker("Sam", 0.91)
        )
        b"".join(voice.stream_audio(streamed))  # the turn said and closed
        [said] = [m for m in store_of(client).agent_messages(AGENT, 5) if m.role == "user"]
        assert (said.person_id, said.speaker_source, said.speaker_confidence) == (
            sam,
            "voice",
            0.91,
        )


@pytest.mark.models
def test_each_device_hears_the_voices_of_its_own_household(
    settings: Settings, chat: FakeChat
) -> None:
    """Profiles are read per agent: a voice enrolled in one household is a guest's on a
    device of another (the real speaker model, real voices)."""
    cottage = settings.with_overrides(
        speaker_recognition=True, device_agents={"cottage-hall": "cottage"}
    )
    backends = Backends(chat, FakeEmbedder(), FakeSTT(), FakeTTS())
    with TestClient(create_app(cottage, backends)) as client:
        store_of(client).ensure_agent(AGENT)
        maxim = add(client, "Maxim", [])
        noise = np.random.default_rng(42).uniform(-0.5, 0.5, STT_RATE * 30).astype(np.float32)
        noisy = [("audio", (f"{n}.wav", wav_bytes(noise), "audio/wav")) for n in range(2)]
        refused = client.put(f"/memory/people/{AGENT}/{maxim}/voice", files=noisy)
        assert refused.status_code == 422 and refused.json()["error"] == "voice_refused"
        assert "recording 1: no speech heard" in refused.json()["detail"]
        clips = [
            ("audio", (f"{n}.wav", wav_bytes(voice(n)), "audio/wav"))
            for n in ("maxim-1", "maxim-2")
        ]
        enrolled = client.put(f"/memory/people/{AGENT}/{maxim}/voice", files=clips)
        assert enrolled.status_code == 200, enrolled.text
        hearing = client.app.state.services.voice  # type: ignore[attr-defined]
        heard = Audio(voice("maxim-3"), STT_RATE)
        assert hearing.hear("kitchen", heard, {}).speaker.name == "Maxim"
        assert hearing.hear("cottage-hall", heard, {}).speaker.name == "guest"


def test_a_device_of_anothers_moves_only_when_asked(home: TestClient) -> None:
    store_of(home).ensure_agent(AGENT)
    jordan = add(home, "Jordan", ["kitchen"])
    taken = home.post(f"/memory/people/{AGENT}", json={"name": "Sam", "devices": ["kitchen"]})
    assert taken.status_code == 409 and taken.json()["error"] == "device_taken"
    assert "Jordan's" in taken.json()["detail"]
    assert [p["name"] for p in home.get(f"/memory/people/{AGENT}").json()] == ["Jordan"]
    sam = add(home, "Sam", ["office"])
    url = f"/memory/people/{AGENT}/devices/kitchen"
    refused = home.put(url, json={"person_id": int(sam)})
    assert refused.status_code == 409 and refused.json()["error"] == "device_taken"
    assert store_of(home).device_person(AGENT, "kitchen") == int(jordan)
    moved = home.put(url, json={"person_id": int(sam), "move": True}).json()
    assert [p["devices"] for p in moved] == [[], ["kitchen", "office"]]
    assert home.put(url, json={"person_id": None}).status_code == 200  # no one's: always
    added = home.post(
        f"/memory/people/{AGENT}", json={"name": "Alex", "devices": ["office"], "move": True}
    )
    assert added.status_code == 201 and added.json()["devices"] == ["office"]


def test_the_first_people_keep_what_was_known_and_warn(home: TestClient, chat: FakeChat) -> None:
    store_of(home).ensure_agent(AGENT)
    say(home, "kitchen", "My dog is called Biscuit")
    first = home.post(f"/memory/people/{AGENT}", json={"name": "Jordan", "devices": ["hall"]})
    assert first.status_code == 201 and "1 facts learnt before" in first.json()["warning"]
    second = home.post(f"/memory/people/{AGENT}", json={"name": "Sam", "devices": ["office"]})
    assert second.json()["warning"] is None
    say(home, "kitchen", "What's my dog called?")  # a guest now: the household's facts stay
    assert "Biscuit" in last_prompt(chat)
