"""A household (issues 31, 42): who is speaking, whose a new fact is, and what each may see.

Who is speaking, best source first: a recognised voice (given in by the voice path, from
`speakers/`: `heard`); the device's own person (the one an admin bound it to, or the only
person of a household of one), unless a claim names someone else; a claim in the
conversation ("it's Jordan.", "Jordan here", "this is my friend Sam"), which on a device of no
one's holds for `CLAIM_HOLDS_S` after the turn that last used it, until another voice or
claim; else a guest. Every turn asks `Household.speaker` once and stores its answer with the
message; the viewer that reads memory for the turn follows from it.

Evidence, not words, opens private memory (`establishes`): a voice match, or the device an
admin bound to the person. Where tokens are required, a device's name is proof only when the
device has a token of its own (`token_devices`; its surfaces refuse any other token speaking
as it): a binding of a device without one says nothing, since any device token may send its
name. A claim says who is talking (stored with its source, `claim`) but
opens nothing private, keeps no private fact and authorises no forgetting or correction of
private memory: anyone can say a name.

What each may see (`viewer`): a household without people reads everything as before; a
person reads the household's facts and their own private ones, and (only in a household of
one) the episodes and base memory distilled from every message; a guest (and a claim) reads
household facts marked shareable. The store applies the rule (`store/sql/visibility.py`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from lobug.clock import Clock
from lobug.kept import DeviceKeep, Slot
from lobug.language.people import speaks_for_household, speaks_only_for_household, spoken_claim
from lobug.language.requests import asks_to_forget_me, confirms
from lobug.memory.voice_enrolment import HeardVoice, VoiceEnrolment
from lobug.names import is_person_name
from lobug.speakers.identify import Speaker as VoiceSpeaker
from lobug.store.household import (
    EVERYONE,
    GUEST,
    GUEST_SPEAKER,
    GUEST_VIEWER,
    HOUSEHOLD,
    PRIVATE,
    Person,
    Speaker,
    Viewer,
)
from lobug.store.models import VOICE, Fact, Message, NewFact
from lobug.store.protocol import PeopleStore

# How sure each source is, when it does not say itself (a voice recognizer does).
CLAIM_CONFIDENCE = 0.8
DEVICE_DEFAULT_CONFIDENCE = 0.5
# A claim ("it's Jordan") holds on a device of no one's this long after the last turn it named.
CLAIM_HOLDS_S = 300.0
CLAIM = "claim"  # a speaker's source when only their words said who they are
NAMED = "named"  # a program's caller naming the person (`named`)


@dataclass(frozen=True)
class Claim:
    """A claim heard: the person it names (None: a guest, "my friend Sam"), and whether the
    sentence said nothing else (`alone`: "It's Jordan.")."""

    person_id: int | None
    alone: bool = False


def claim_in(text: str, people: list[Person]) -> Claim | None:
    """The claim that opens `text`, if any (`language.people.spoken_claim`): a known
    person's whole name, and nothing more of the clause, after "it's", "I'm", "this is", ...
    or before "here" ("It's Jordan.", "Jordan here, ...", "its jordan"); or a guest
    introduced as such ("this is my friend Sam"). A name that only starts the clause claims
    nothing: "It's Jordan calling", "this is Jordan singing", "it's May already", "I'm may be
    late", "this is Jordan Peterson on TV"."""
    spoken = spoken_claim(text)
    if spoken is None:
        return None
    known = _named(spoken.name, people)
    if spoken.guest:
        return Claim(known.id if known else None, spoken.alone)
    return None if known is None else Claim(known.id, spoken.alone)


def _named(said: str, people: list[Person]) -> Person | None:
    """The person whose whole name is `said` (any case, any spacing)."""
    words = said.casefold().split()
    return next((p for p in people if p.name.casefold().split() == words), None)


def establishes(speaker: Speaker) -> bool:
    """Whether `speaker` is a person known by more than their word (a voice match, the
    device an admin bound to them, a program's credential): not a guest, not a claim."""
    return speaker.person_id is not None and speaker.source != CLAIM


def owned(fact: NewFact, speaker: Speaker, said: str) -> NewFact | None:
    """`fact` as the speaker's (private) or the household's ("our wifi password", "we"),
    or None when a guest of a household with people said it (not kept: a guest's life is
    not the household's memory). Whose it is: what a capable model's extraction said
    (`fact.whose`), else the household's word rules."""
    ours = _ours_by_words(fact, said) if fact.whose is None else fact.whose == "household"
    if ours:
        return replace(fact, owner_person_id=speaker.person_id, scope=HOUSEHOLD)
    if speaker.is_guest:
        return None
    return replace(fact, owner_person_id=speaker.person_id, scope=PRIVATE)


# A "forget everything about me" waits this long for its confirmation on the same device.
FORGET_ME_CONFIRM_S = 60.0


# What a "forget everything about me" waits for (`Confirmations`).
FORGET_ME = "forget me"


class Confirmations:
    """Requests said on a device that wait for the same person's "yes" (`confirms`) as the
    next turn, within `FORGET_ME_CONFIRM_S`; any other turn drops them. Kept in the device's
    keep (`lobug.kept`): dropped with the device. Thread-safe."""

    def __init__(self, clock: Clock, keep: DeviceKeep | None = None) -> None:
        self.clock = clock
        self._waiting: Slot[tuple[int | None, float, object]] = (keep or DeviceKeep()).slot(
            "waiting for yes"
        )

    def ask(self, key: tuple[str, str], person_id: int | None, action: object) -> None:
        agent, device_id = key
        self._waiting.put(device_id, (person_id, self.clock(), action), agent)

    def take(self, key: tuple[str, str], person_id: int | None, text: str) -> object | None:
        """The action waiting on the device when `text` confirms it, said by the person asked
        in time; None otherwise. What waited is dropped either way."""
        agent, device_id = key
        waiting = self._waiting.pop(device_id, agent)
        if waiting is None or not confirms(text):
            return None
        asked_by, asked_at, action = waiting
        if asked_by != person_id or self.clock() - asked_at > FORGET_ME_CONFIRM_S:
            return None
        return action


def owner_of(fact: Fact) -> tuple[int | None, str]:
    """Whose memory a fact is in: its owner and scope."""
    return fact.owner_person_id, fact.scope


def one_owner(a: Fact, b: Fact) -> bool:
    """Whether two facts are in one memory (a dream never lets one person's fact replace
    another's, or a private fact a household one)."""
    return owner_of(a) == owner_of(b)


def attributed(facts: list[NewFact], user: Message, has_people: bool) -> list[NewFact]:
    """The facts learned from `user`'s words, each its speaker's or the household's (see
    `owned`); a household without people keeps them all as the household's, as before."""
    if not has_people:
        return facts
    speaker = Speaker(user.person_id, user.speaker_source or GUEST, 0.0)
    if not establishes(speaker):
        speaker = GUEST_SPEAKER  # a claim keeps nothing private: anyone can say a name
    kept = [owned(fact, speaker, user.content) for fact in facts]
    return [fact for fact in kept if fact is not None]


def _ours_by_words(fact: NewFact, said: str) -> bool:
    """The English rule for a model that cannot say whose a fact is (`language.people`):
    "our"/"we" in both the sentence and the fact, or a plural statement about the home with
    no "I"/"my"."""
    both = speaks_for_household(said) and speaks_for_household(fact.content)
    return both or speaks_only_for_household(said)


class Household:
    """Who is speaking on each device, and what they may see. Thread-safe; blocking (the
    store)."""

    def __init__(
        self,
        store: PeopleStore,
        clock: Clock = time.time,
        token_devices: frozenset[str] | None = None,
        keep: DeviceKeep | None = None,
    ) -> None:
        """`token_devices`: where tokens are required, the devices with a token of their own
        (`LOBUG_BOUND_DEVICE_TOKENS`), the only ones whose binding says who speaks; None where
        no token is (every caller is this machine's admin, naming its device). `keep`: where
        what is kept per device lives (`lobug.kept`: the claims here, the requests waiting
        for a "yes", the voices being learnt), dropped with the device."""
        self.store = store
        self.clock = clock
        self.token_devices = token_devices
        keep = keep or DeviceKeep()
        self._claims: Slot[tuple[Speaker, float]] = keep.slot("claim")  # by device, agent
        self.awaiting = Confirmations(clock, keep)  # requests waiting for a "yes", by device
        self.enrolment = VoiceEnrolment(clock, keep)  # voices being learnt, by device

    # ------------------------------------------------------------------ who is speaking

    def speaker(
        self, agent: str, device_id: str, text: str, voice: Speaker | None = None
    ) -> Speaker:
        """Who said `text` on `device_id`, best source first (see the module); only people
        of the household now (a voice or a claim of someone deleted since is no one's)."""
        people = self.store.people(agent)
        if not people:
            return GUEST_SPEAKER
        if voice is not None and voice.person_id in {person.id for person in people}:
            self._drop_claim(agent, device_id)  # another voice ends a claim
            return voice
        own = self._device_default(agent, device_id, people)
        claim = claim_in(text, people)
        if claim is not None and (own is None or claim.person_id != own.person_id):
            claimed = Speaker(claim.person_id, CLAIM, CLAIM_CONFIDENCE)
            # On a device of someone's, a claim is its own turn's only: the next is theirs.
            return claimed if own is not None else self._hold(agent, device_id, claimed)
        if own is not None:
            self._drop_claim(agent, device_id)
            return own
        held = self._held(agent, device_id, {person.id for person in people})
        return held if held is not None else GUEST_SPEAKER

    def _device_default(self, agent: str, device_id: str, people: list[Person]) -> Speaker | None:
        person_id = self.store.device_person(agent, device_id) if self.proven(device_id) else None
        if person_id is None and len(people) == 1:
            person_id = people[0].id  # a household of one: its person, as before people
        if person_id is None:
            return None
        return Speaker(person_id, "device_default", DEVICE_DEFAULT_CONFIDENCE)

    def proven(self, device_id: str) -> bool:
        """Whether a turn on `device_id` comes from that device by evidence, not by its name
        alone (see `token_devices`)."""
        return self.token_devices is None or device_id in self.token_devices

    def _hold(self, agent: str, device_id: str, speaker: Speaker) -> Speaker:
        """Hold the claim on the device; claims run out elsewhere are swept meanwhile."""
        now = self.clock()
        with self._claims.keep.lock:
            for device, held_for, (_, at) in self._claims.items():
                if now - at > CLAIM_HOLDS_S:
                    self._claims.pop(device, held_for)
            self._claims.put(device_id, (speaker, now), agent)
        return speaker

    def _drop_claim(self, agent: str, device_id: str) -> None:
        self._claims.pop(device_id, agent)

    def _held(self, agent: str, device_id: str, known: set[int]) -> Speaker | None:
        """The claim held on the device, refreshed; None when it ran out or names no one of
        the household now."""
        with self._claims.keep.lock:
            held = self._claims.get(device_id, agent)
            if held is None or self.clock() - held[1] > CLAIM_HOLDS_S:
                self._claims.pop(device_id, agent)
                return None
            if held[0].person_id is not None and held[0].person_id not in known:
                return None
            self._claims.put(device_id, (held[0], self.clock()), agent)
            return held[0]

    def named(self, agent: str, name: str) -> Speaker:
        """The speaker a program names (`/v1`'s `user`): a person of the household, or a
        guest when the name is no one's (an install without people: a guest, who sees all).
        Whether the caller may name them is `memory/evidence.py`'s rule."""
        found = self.store.find_person(agent, name) if is_person_name(name.strip()) else None
        return GUEST_SPEAKER if found is None else Speaker(found.id, NAMED, 1.0)

    def forget_me_turn(
        self,
        agent: str,
        device_id: str,
        speaker: Speaker,
        text: str,
        confirmed: object = None,
        purge: Callable[[str, int], str] | None = None,
    ) -> str | None:
        """The answer to a "forget everything about me" turn, or to its confirmation one turn
        later on the same device by the same person (`confirmed`: what `awaiting` gave this
        turn; then everything about them is purged by `purge(agent, person_id)`, the durable
        purge job of `Curation.forget_person`, whose answer, given once it finished, says what
        it erased; without `purge`, `PeopleStore.forget_person_memory`); None for any other
        turn."""
        if asks_to_forget_me(text):
            if speaker.person_id is None:
                return "I don't know who you are, so I have nothing of yours to forget."
            if not establishes(speaker):
                return self.unconfirmed(agent, speaker.person_id, "forget anything")
            self.awaiting.ask((agent, device_id), speaker.person_id, FORGET_ME)
            name = self.store.person(agent, speaker.person_id).name
            return (
                f"That erases everything I know about you, {name}: your private notes and "
                'what you told me. Say "yes, forget me" to go ahead.'
            )
        if confirmed != FORGET_ME or speaker.person_id is None or not establishes(speaker):
            return None
        if purge is not None:  # its answer says what it erased
            return purge(agent, speaker.person_id)
        self.store.forget_person_memory(agent, speaker.person_id, actor=VOICE)
        return "Done. I forgot everything you told me about yourself."

    def unconfirmed(self, agent: str, person_id: int, undone: str) -> str:
        """The answer when a claim asks for what only the person it names may ask."""
        name = self.store.person(agent, person_id).name
        return (
            f"Anyone can say a name, so I won't {undone} for {name} on that alone. {name} can "
            "ask me on their own device, or where I know their voice."
        )

    def check_claim(
        self, agent: str, speaker: Speaker, text: str, heard: HeardVoice | None
    ) -> str | None:
        """The answer to a claim said alone ("It's Jordan.") in a voice turn that listens for
        voices, when the person it names has a voice to check against and this one was not
        theirs: an invitation to speak on. None for any other turn (a claim opens nothing
        either way)."""
        if speaker.source != CLAIM or speaker.person_id is None:
            return None
        if heard is None or not heard.listening:
            return None
        claim = claim_in(text, self.store.people(agent))
        person = self.store.person(agent, speaker.person_id)
        if claim is None or not claim.alone or person.voice_profiles == 0:
            return None
        return f"Are you {person.name}? Say something so I can check your voice."

    def recognised(self, agent: str, name: str, score: float) -> Speaker | None:
        """The household's person a voice recognizer named (its profiles are kept by name),
        with its score as the confidence; None when no person has that name."""
        found = self.store.find_person(agent, name) if is_person_name(name.strip()) else None
        if found is None:
            return None
        return Speaker(found.id, "voice", min(1.0, max(0.0, score)))

    def heard(self, agent: str, voice: VoiceSpeaker | None, listening: bool) -> HeardVoice:
        """What a voice turn heard of the voice (`voice`: what recognition said, None without
        it or enough speech; `listening`: whether recognition is on): the household's person it
        names (None: a guest's voice, or no one of that name) and its sample, for enrolment."""
        person = None
        if voice is not None and not voice.is_guest:
            person = self.recognised(agent, voice.name, voice.score)
        return HeardVoice(person, listening, None if voice is None else voice.sample)

    # ------------------------------------------------------------------ what they may see

    def viewer(self, agent: str, speaker: Speaker) -> Viewer:
        """What `speaker` may read (see the module)."""
        people = self.store.people(agent)
        if not people:
            return EVERYONE
        if not establishes(speaker):
            return GUEST_VIEWER  # a claim opens nothing private: anyone can say a name
        return Viewer("person", speaker.person_id, alone=len(people) == 1)

    def viewer_at(self, agent: str, device_id: str, text: str) -> Viewer:
        """What the one speaking `text` on `device_id` now may read."""
        return self.viewer(agent, self.speaker(agent, device_id, text))
