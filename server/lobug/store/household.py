"""A household's stored things (`memory/people.py` holds its rules): people, who said a
message, and who is looking at the facts (`Viewer`, the one argument every fact query that
serves a person takes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

# Where "who is speaking" came from, best first (`memory/people.py`), and the assistant's own.
SPEAKER_SOURCES = ("voice", "claim", "device_default", "named", "guest")
ASSISTANT = "assistant"
GUEST = "guest"
# A fact's scope: its owner's alone, or every person's in the household.
PRIVATE = "private"
HOUSEHOLD = "household"


@dataclass(frozen=True)
class Person:
    id: int
    agent: str
    name: str
    created_at: float
    devices: tuple[str, ...] = ()
    voice_profiles: int = 0


@dataclass(frozen=True)
class StoredVoice:
    """A person's voice as stored: an embedding's bytes (no audio) and the model that made it."""

    person_id: int
    person: str
    embedding: bytes
    model: str
    created_at: float


@dataclass(frozen=True)
class Speaker:
    """Who said a message: a person (`person_id`) or a guest (None), how that was known
    (`source`, one of `SPEAKER_SOURCES`) and how sure (0-1)."""

    person_id: int | None
    source: str
    confidence: float

    @property
    def is_guest(self) -> bool:
        return self.person_id is None


GUEST_SPEAKER = Speaker(None, GUEST, 1.0)


def answering(person_id: int | None) -> Speaker:
    """The assistant, answering `person_id` (None: a guest): its rows name whom it answered."""
    return Speaker(person_id, ASSISTANT, 1.0)


@dataclass(frozen=True)
class Viewer:
    """Whose eyes a fact query reads with: `everyone` (the household's curators, maintenance,
    an install without people: every fact), a `person` (the household's facts and their
    own private ones) or a `guest` (household facts marked shareable)."""

    kind: Literal["everyone", "person", "guest"]
    person_id: int | None = None
    alone: bool = False  # the household's only person: reads what every message made

    def hears(self, person_id: int | None) -> bool:
        """Whether a message said by (or answering) `person_id` may be recalled to this
        viewer: everyone's to everyone; a person's own; a guest's none. The working memory of
        a device is not recalled: who stands at it heard it."""
        if self.sees_everything or self.alone:
            return True
        return self.kind == "person" and person_id == self.person_id

    @property
    def reads_summaries(self) -> bool:
        """Episodes, base memory and topics are made from every person's words: only read
        where that is no one else's (no people, or a household of one)."""
        return self.sees_everything or self.alone

    @staticmethod
    def person(person_id: int) -> Viewer:
        return Viewer("person", person_id)

    @property
    def sees_everything(self) -> bool:
        return self.kind == "everyone"


EVERYONE = Viewer("everyone")
GUEST_VIEWER = Viewer("guest")


class Owned(Protocol):
    @property
    def owner_person_id(self) -> int | None: ...

    @property
    def scope(self) -> str: ...

    @property
    def shareable(self) -> bool: ...


def owned(fact: Owned) -> tuple[int | None, str, int]:
    """A fact's owner, scope and shareable as its columns hold them."""
    return fact.owner_person_id, fact.scope, int(fact.shareable)
