"""Enrolment by voice (issue 31): "learn my voice, I'm Jordan" said to a device, then a few
sentences. The request is answered with what to do ("Okay Jordan, say three sentences ...");
the next voice turns of that device (each within `WAIT_S` of the last) give their speaker
embeddings, computed while the person spoke (`speakers.live`); after `UTTERANCES` of them the
profile is made by the rule every enrolment keeps (`speakers.profiles.enrolment_of`: 2-10
utterances, one voice) and stored (`HouseholdVoices`), the person created when the household
has nobody of that name. Embeddings only: no audio is kept. Neither the request nor the
sentences enter the conversation log (they are answered without the model, as the other
spoken requests).

A profile already stored is replaced by voice only by a voice that matches it (else anyone
could take over Jordan's memory by saying "I'm Jordan"); an admin replaces it by upload."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field, replace

from lobug.clock import Clock
from lobug.memory.curation import Curation
from lobug.memory.spoken_requests import recognise_voice_request, request_part
from lobug.memory.voices import HouseholdVoices
from lobug.names import is_person_name
from lobug.speakers.embedder import Embedding
from lobug.speakers.identify import THRESHOLD, VoiceSample, similarity
from lobug.speakers.profiles import EnrolmentRefused, enrolment_of
from lobug.store.household import Speaker
from lobug.store.models import VOICE

UTTERANCES = 3  # the sentences asked for (speakers.profiles takes 2-10)
WAIT_S = 180.0  # a learning left this long without a sentence is dropped
_COUNTS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
_STOP = re.compile(r"(?:stop|cancel|never\s?mind|forget\s+it|no|don'?t)(?:\s+\w+){0,3}", re.I)


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
    """The voices being learnt, one per device. Thread-safe; blocking (the store)."""

    def __init__(self, clock: Clock = time.time) -> None:
        self.clock = clock
        self._learning: dict[tuple[str, str], _Learning] = {}
        self._lock = threading.Lock()

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
        if _STOP.fullmatch(request_part(text) or ""):
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
        if name is None and speaker.person_id is not None:
            name = curation.store.person(at[0], speaker.person_id).name
        if name is None or not is_person_name(name):
            return 'Tell me your name too: say "learn my voice, I\'m" and then your name.'
        known = curation.store.find_person(at[0], name)
        name = known.name if known is not None else _capitalised(name)
        with self._lock:
            self._learning[at] = _Learning(name, self.clock())
        return (
            f"Okay {name}, say {_COUNTS[UTTERANCES]} sentences, one at a time, and I'll learn "
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
        with self._lock:
            learning.embeddings.append(sample.embedding)
            learning.at = self.clock()
            left = UTTERANCES - len(learning.embeddings)
        if left > 0:
            return f"Got it. {_COUNTS[left].capitalize()} more."
        self._drop(at)
        return learnt(curation, at[0], learning.name, learning.embeddings)

    def _waiting(self, at: tuple[str, str]) -> _Learning | None:
        with self._lock:
            learning = self._learning.get(at)
            if learning is not None and self.clock() - learning.at > WAIT_S:
                del self._learning[at]
                return None
            return learning

    def _drop(self, at: tuple[str, str]) -> None:
        with self._lock:
            self._learning.pop(at, None)


def learnt(curation: Curation, agent: str, name: str, embeddings: list[Embedding]) -> str:
    """Store `name`'s voice from the embeddings (creating the person when the household has
    nobody of that name); the sentence to say back."""
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
    if person is None:
        person = curation.add_person(agent, name, actor=VOICE)
    voices.save(replace(enrolment.profile, person=person.name))
    return f"Thanks {person.name}, I've learnt your voice."


def _capitalised(name: str) -> str:
    return " ".join(word[:1].upper() + word[1:] for word in name.split())
