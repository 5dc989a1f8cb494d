"""What the domain asks of a store about a household's people (`memory/people.py`); part of
`protocol.Store`."""

from __future__ import annotations

from typing import Protocol

from lobug.store.household import Person, StoredVoice
from lobug.store.models import Fact


class PeopleStore(Protocol):
    """A household's people (`memory/people.py`); every change audited."""

    def add_person(self, agent: str, name: str, *, actor: str) -> Person: ...

    def share_household_facts(self, agent: str, *, actor: str) -> int: ...

    def people(self, agent: str) -> list[Person]: ...

    def person(self, agent: str, person_id: int) -> Person: ...

    def find_person(self, agent: str, name: str) -> Person | None: ...

    def set_device_person(
        self, agent: str, device_id: str, person_id: int | None, *, actor: str
    ) -> None: ...

    def device_person(self, agent: str, device_id: str) -> int | None: ...

    def person_facts(self, agent: str, person_id: int) -> list[Fact]: ...

    def set_fact_scope(
        self, agent: str, fact_id: int, scope: str, *, shareable: bool, actor: str
    ) -> Fact: ...

    def forget_person_memory(self, agent: str, person_id: int, *, actor: str) -> dict[str, int]: ...

    def delete_person(self, agent: str, person_id: int, *, actor: str) -> dict[str, int]: ...

    def save_voice_profile(
        self, agent: str, person_id: int, embedding: bytes, model: str, *, actor: str
    ) -> None: ...

    def voice_profiles(self, agent: str) -> list[StoredVoice]: ...

    def delete_voice_profile(self, agent: str, person_id: int, *, actor: str) -> bool: ...
