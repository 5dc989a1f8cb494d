"""Enrolment by voice (`memory/voice_enrolment.py`) on a real SQLite store: "learn my voice"
said by a person known by evidence (the device bound to them, or their voice), then three
sentences whose embeddings (here fixed unit vectors standing for what the voice path
computes) become their profile by the rule uploads keep; every turn that cannot be learnt
from says why; a guest or a name said enrols no one and makes no person."""

from __future__ import annotations

import numpy as np
import pytest

from lobug.config import MemoryConfig
from lobug.memory.curation import Curation
from lobug.memory.voice_enrolment import (
    NOT_ESTABLISHED,
    UTTERANCES,
    WAIT_S,
    HeardVoice,
    VoiceEnrolment,
)
from lobug.memory.voices import HouseholdVoices
from lobug.speakers.identify import VoiceProfile, VoiceSample
from lobug.store.household import GUEST_SPEAKER, Speaker
from lobug.store.protocol import Store
from tests.fakes import FakeClock, FakeEmbedder

AGENT = "home"
AT = (AGENT, "kitchen")


def voice(*values: float) -> HeardVoice:
    vector = np.array(values, dtype=np.float32)
    return HeardVoice(None, True, VoiceSample(vector / np.linalg.norm(vector)))


@pytest.fixture
def curation(store: Store) -> Curation:
    store.ensure_agent(AGENT)
    return Curation(store, FakeEmbedder(), MemoryConfig())


@pytest.fixture
def jordan(curation: Curation) -> Speaker:
    """Jordan, added by the admin, on the kitchen device the admin bound to him."""
    person = curation.add_person(AGENT, "Jordan", actor="test")
    curation.store.set_device_person(AGENT, "kitchen", person.id, actor="test")
    return Speaker(person.id, "device_default", 0.5)


def say(
    enrolment: VoiceEnrolment,
    curation: Curation,
    text: str,
    heard: HeardVoice | None,
    speaker: Speaker = GUEST_SPEAKER,
) -> str:
    answer = enrolment.turn(curation, AT, speaker, text, heard)
    assert answer is not None, text
    return answer


def test_three_sentences_make_the_known_persons_profile(
    curation: Curation, jordan: Speaker
) -> None:
    enrolment = VoiceEnrolment(FakeClock())
    asked = say(enrolment, curation, "Learn my voice, I'm jordan.", voice(1, 0, 0), jordan)
    assert asked.startswith("Okay Jordan, say three sentences")
    assert say(enrolment, curation, "I had toast.", voice(1, 0.1, 0)) == "Got it. Two more."
    assert say(enrolment, curation, "Then I went out.", voice(1, 0, 0.1)) == "Got it. One more."
    done = say(enrolment, curation, "It rained.", voice(1, 0.05, 0.05))
    assert done == "Thanks Jordan, I've learnt your voice."
    [person] = curation.store.people(AGENT)
    assert (person.name, person.voice_profiles) == ("Jordan", 1)
    [profile] = HouseholdVoices(curation.store, AGENT).list()
    assert profile.person == "Jordan" and np.isclose(np.linalg.norm(profile.embedding), 1.0)
    # Over: the next sentence is an ordinary turn again.
    assert enrolment.turn(curation, AT, GUEST_SPEAKER, "What time is it?", voice(1, 0, 0)) is None


def test_a_guest_or_a_claim_enrols_no_one_and_makes_no_person(curation: Curation) -> None:
    enrolment = VoiceEnrolment(FakeClock())
    for said in ("Please learn my voice. My name is Jordan.", "learn my voice, I'm Mallory"):
        assert say(enrolment, curation, said, voice(1, 0, 0)) == NOT_ESTABLISHED
        assert enrolment.turn(curation, AT, GUEST_SPEAKER, "one", voice(1, 0, 0)) is None
    assert curation.store.people(AGENT) == []
    jordan = curation.add_person(AGENT, "Jordan", actor="test")
    claimed = Speaker(jordan.id, "claim", 0.8)
    said = "Please learn my voice. My name is Jordan."
    assert say(enrolment, curation, said, voice(1, 0, 0), claimed) == NOT_ESTABLISHED
    alone = Speaker(jordan.id, "device_default", 0.5)  # a household of one, a device of no one's
    assert say(enrolment, curation, said, voice(1, 0, 0), alone) == NOT_ESTABLISHED
    assert curation.store.people(AGENT)[0].voice_profiles == 0


def test_every_turn_that_cannot_be_learnt_from_says_why(
    curation: Curation, jordan: Speaker
) -> None:
    clock = FakeClock()
    enrolment = VoiceEnrolment(clock)
    assert "aloud" in say(enrolment, curation, "learn my voice", None, jordan)  # typed
    off = HeardVoice(None, listening=False)
    assert "recognition by voice is off" in say(enrolment, curation, "learn my voice", off, jordan)
    other = say(enrolment, curation, "learn my voice, I'm Sam", voice(1, 0, 0), jordan)
    assert other.startswith("This device is Jordan's")
    say(enrolment, curation, "remember my voice, this is Jordan", voice(1, 0, 0), jordan)
    mumble = HeardVoice(None, True, None)
    assert "longer sentence" in say(enrolment, curation, "hm", mumble)
    short = HeardVoice(None, True, VoiceSample(voice(1, 0, 0).sample.embedding, "it is too short"))  # type: ignore[union-attr]
    assert "it is too short" in say(enrolment, curation, "yes", short)
    # A typed turn meanwhile is an ordinary turn; the learning waits.
    assert enrolment.turn(curation, AT, GUEST_SPEAKER, "what's the time", None) is None
    assert say(enrolment, curation, "One.", voice(1, 0, 0)) == "Got it. Two more."
    clock.now += WAIT_S + 1  # left too long: dropped
    assert enrolment.turn(curation, AT, GUEST_SPEAKER, "Two.", voice(1, 0, 0)) is None
    say(enrolment, curation, "learn my voice", voice(1, 0, 0), jordan)
    assert (
        say(enrolment, curation, "never mind", voice(1, 0, 0)) == "Okay, I won't learn your voice."
    )
    assert curation.store.people(AGENT)[0].voice_profiles == 0


def test_a_person_recognised_by_voice_may_learn_it_again(curation: Curation) -> None:
    sam = curation.add_person(AGENT, "Sam", actor="test")
    enrolment = VoiceEnrolment(FakeClock())
    by_voice = Speaker(sam.id, "voice", 0.9)
    asked = enrolment.turn(curation, AT, by_voice, "learn my voice", voice(0, 1, 0))
    assert asked is not None and asked.startswith("Okay Sam,")
    for _ in range(UTTERANCES):
        answer = say(enrolment, curation, "words", voice(0, 1, 0))
    assert answer == "Thanks Sam, I've learnt your voice."
    assert [p.name for p in curation.store.people(AGENT)] == ["Sam"]


def test_not_one_voice_or_someone_elses_profile_is_refused(
    curation: Curation, jordan: Speaker
) -> None:
    enrolment = VoiceEnrolment(FakeClock())
    say(enrolment, curation, "learn my voice, I'm Jordan", voice(1, 0, 0), jordan)
    say(enrolment, curation, "one", voice(1, 0, 0))
    say(enrolment, curation, "two", voice(1, 0, 0))
    assert "one person" in say(enrolment, curation, "three", voice(0, 1, 0))
    assert curation.store.people(AGENT)[0].voice_profiles == 0
    HouseholdVoices(curation.store, AGENT).save(
        VoiceProfile("Jordan", voice(1, 0, 0).sample.embedding)  # type: ignore[union-attr]
    )
    say(enrolment, curation, "learn my voice, I'm Jordan", voice(0, 0, 1), jordan)
    for _ in range(UTTERANCES):
        answer = say(enrolment, curation, "words", voice(0, 0, 1))
    assert "doesn't match" in answer  # a guest at Jordan's device cannot replace his voice
    [kept] = HouseholdVoices(curation.store, AGENT).list()
    assert np.allclose(kept.embedding, [1, 0, 0]) and kept.person == "Jordan"
