"""Enrolment by voice (issues 31, 42): "learn my voice" said to a device, then a few
sentences. Only a person already known by evidence a sentence cannot fake may ask: on the
device the admin bound to them, or recognised by their voice; never a guest, a claim ("I'm
Jordan") or a name said (enrolment never makes a person: the admin adds people). The request
is answered with what to do ("Okay Jordan, say three sentences ..."); the next voice turns of
that device (each within `WAIT_S` of the last) give their speaker embeddings, computed while
the person spoke (`speakers.live`); after `UTTERANCES` of them the profile is made by the rule
every enrolment keeps (`speakers.profiles.enrolment_of`: 2-10 utterances, one voice) and
stored (`HouseholdVoices`). Embeddings only: no audio is kept. Neither the request nor the
sentences enter the conversation log (they are answered without the model, as the other
spoken requests).

A profile already stored is replaced by voice only by a voice that matches it (a guest at
Jordan's device is taken for Jordan there, but must not become Jordan everywhere); an admin
replaces it by upload."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from lobug.clock import Clock
from lobug.kept import DeviceKeep, Slot
from lobug.language.people import stops_enrolment
from lobug.memory.curation import Curation
from lobug.memory.spoken_requests import recognise_voice_request, request_part
from lobug.memory.voices import HouseholdVoices
from lobug.speakers.embedder import Embedding
from lobug.speakers.identify import THRESHOLD, VoiceSample, similarity
from lobug.speakers.profiles import EnrolmentRefused, enrolment_of
from lobug.store.household import Speaker
from lobug.store.models import VOICE

UTTERANCES = 3  # the sentences asked for (speakers.profiles takes 2-10)
WAIT_S = 180.0  # a learning left this long without a sentence is dropped
NOT_ESTABLISHED = (
    "I can only learn the voice of someone I already know here: on a device the admin gave "
    "them, or where I recognise their voice. The admin adds people."
)
_COUNTS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


@dataclass(frozen=True)
class HeardVoice:
    """What a voice turn heard of the voice: the person of the household it was recognised
    as (`person`, None: nobody's), whether the path listens for voices at all (`listening`:
    recognition on) and the utterance's sample (None: too little speech)."""

    person: Speaker | None = None
    listening: bool = True
    sample: VoiceSample | None = None


@dataclass
class _Learning:
    name: str
    at: float
    embeddings: list[Embedding] = field(default_factory=list)


class VoiceEnrolment:
    """The voices being learnt, one per device (kept in the device's keep, `lobug.kept`:
    dropped with the device). Thread-safe; blocking (the store)."""

    def __init__(self, clock: Clock = time.time, keep: DeviceKeep | None = None) -> None:
        self.clock = clock
        self._learning: Slot[_Learning] = (keep or DeviceKeep()).slot("voice being learnt")

    def turn(
        self,
        curation: Curation,
        at: tuple[str, str],
        speaker: Speaker,
        text: str,
        heard: HeardVoice | None,
    ) -> str | None:
        """The answer to a turn (`at`: agent and device) that asks to learn a voice or gives
        a sentence of one being learnt there; None for any other turn."""
        asked = recognise_voice_request(text)
        if asked is not None:
            return self._start(curation, at, speaker, asked.name, heard)
        learning = self._waiting(at)
        if learning is None:
            return None
        if stops_enrolment(request_part(text) or ""):
            self._drop(at)
            return "Okay, I won't learn your voice."
        if heard is None or not heard.listening:
            return None  # a typed turn meanwhile: answered as any other
        return self._sentence(curation, at, learning, heard.sample)

    def _start(
        self,
        curation: Curation,
        at: tuple[str, str],
        speaker: Speaker,
        name: str | None,
        heard: HeardVoice | None,
    ) -> str:
        if heard is None:
            return "I can only learn your voice when you say that aloud to a device I hear."
        if not heard.listening:
            return "I can't learn voices: recognition by voice is off on this server."
        person = _established(curation, at, speaker)
        if person is None:
            return NOT_ESTABLISHED
        if name is not None and " ".join(name.split()).casefold() != person.casefold():
            return (
                f"This device is {person}'s, so I can only learn {person}'s voice here. "
                "Ask on your own device, or ask the admin to add you."
            )
        self._learning.put(at[1], _Learning(person, self.clock()), at[0])
        return (
            f"Okay {person}, say {_COUNTS[UTTERANCES]} sentences, one at a time, and I'll learn "
            "your voice. Tell me about your day, for instance."
        )

    def _sentence(
        self,
        curation: Curation,
        at: tuple[str, str],
        learning: _Learning,
        sample: VoiceSample | None,
    ) -> str:
        if sample is None:
            return "I couldn't hear enough of your voice there. Please say a longer sentence."
        if sample.problem is not None:
            return f"I couldn't learn from that: {sample.problem}. Please say another sentence."
        with self._learning.keep.lock:
            learning.embeddings.append(sample.embedding)
            learning.at = self.clock()
            left = UTTERANCES - len(learning.embeddings)
        if left > 0:
            return f"Got it. {_COUNTS[left].capitalize()} more."
        self._drop(at)
        return learnt(curation, at[0], learning.name, learning.embeddings)

    def _waiting(self, at: tuple[str, str]) -> _Learning | None:
        agent, device_id = at
        with self._learning.keep.lock:
            learning = self._learning.get(device_id, agent)
            if learning is not None and self.clock() - learning.at > WAIT_S:
                self._learning.pop(device_id, agent)
                return None
            return learning

    def _drop(self, at: tuple[str, str]) -> None:
        self._learning.pop(at[1], at[0])


def learnt(curation: Curation, agent: str, name: str, embeddings: list[Embedding]) -> str:
    """Store `name`'s voice from the embeddings (a person of the household: enrolment by
    voice never makes one); the sentence to say back."""
    try:
        enrolment = enrolment_of(name, embeddings)
    except EnrolmentRefused:
        return (
            "Those sentences didn't sound like one person, so I didn't keep them. "
            'Say "learn my voice" to start again.'
        )
    voices = HouseholdVoices(curation.store, agent, actor=VOICE)
    stored = {profile.person.casefold(): profile for profile in voices.list()}
    earlier = stored.get(name.casefold())
    new = enrolment.profile.embedding
    if earlier is not None and similarity(earlier.embedding, new) < THRESHOLD:
        return (
            f"I already know {name}'s voice and this one doesn't match it, so I kept the one "
            "I had. An admin can replace it from the dashboard."
        )
    person = curation.store.find_person(agent, name)
    if person is None:  # removed by the admin meanwhile
        return f"{name} is no longer one of the household, so I didn't keep that voice."
    voices.save(replace(enrolment.profile, person=person.name))
    return f"Thanks {person.name}, I've learnt your voice."


def _established(curation: Curation, at: tuple[str, str], speaker: Speaker) -> str | None:
    """The name of the person `speaker` is known to be by evidence a sentence cannot fake (a
    voice match, or the device `at` bound to them by the admin); None for a guest, a claim,
    or a household of one's person on a device of no one's."""
    agent, device_id = at
    if speaker.person_id is None:
        return None
    bound = curation.store.device_person(agent, device_id) == speaker.person_id
    if speaker.source != "voice" and not (speaker.source == "device_default" and bound):
        return None
    return curation.store.person(agent, speaker.person_id).name
