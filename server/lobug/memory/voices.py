"""A household's voice profiles in the store, as recognition by voice reads and writes them
(`speakers.profiles.VoiceProfiles`): an embedding per person of the household (no audio is
ever kept), saved only for a person the household has, forgotten with them; a profile made by
another model is not compared."""

from __future__ import annotations

from lobug.speakers.embedder import MODEL
from lobug.speakers.identify import VoiceProfile
from lobug.speakers.profiles import embedding_bytes, embedding_from_bytes
from lobug.store.errors import PersonNotFound
from lobug.store.household_protocol import PeopleStore
from lobug.store.models import VOICE


class HouseholdVoices:
    def __init__(
        self, store: PeopleStore, agent: str, *, model: str = MODEL, actor: str = VOICE
    ) -> None:
        self.store, self.agent, self.model, self.actor = store, agent, model, actor

    def save(self, profile: VoiceProfile) -> None:
        """Store the profile of the household's person `profile.person` (PersonNotFound when
        the household has nobody of that name)."""
        person = self.store.find_person(self.agent, profile.person)
        if person is None:
            raise PersonNotFound(f"{self.agent!r} has no person called {profile.person!r}")
        data = embedding_bytes(profile.embedding)
        self.store.save_voice_profile(self.agent, person.id, data, self.model, actor=self.actor)

    def list(self) -> list[VoiceProfile]:
        return [
            VoiceProfile(voice.person, embedding_from_bytes(voice.embedding))
            for voice in self.store.voice_profiles(self.agent)
            if voice.model == self.model
        ]

    def delete(self, person: str) -> bool:
        found = self.store.find_person(self.agent, person)
        if found is None:
            return False
        return self.store.delete_voice_profile(self.agent, found.id, actor=self.actor)
