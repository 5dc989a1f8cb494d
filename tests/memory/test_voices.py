"""A household's voice profiles in the store (issue 31, items 5-6): recognition by voice reads
and writes them through `HouseholdVoices`; embeddings only, for the household's people, gone
with the person; both engines."""

from __future__ import annotations

import numpy as np
import pytest

from lobug.memory.voices import HouseholdVoices
from lobug.speakers.identify import VoiceProfile, identify
from lobug.store.errors import PersonNotFound
from lobug.store.protocol import Store


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


@pytest.mark.both_engines
def test_profiles_are_kept_for_the_households_people_and_go_with_them(store: Store) -> None:
    jo = store.add_person("home", "Jo", actor="test")
    store.add_person("home", "Sam", actor="test")
    voices = HouseholdVoices(store, "home", model="m1")
    voices.save(VoiceProfile("jo", unit(1, 0, 0)))  # names match as the household's do
    voices.save(VoiceProfile("Sam", unit(0, 1, 0)))
    voices.save(VoiceProfile("Jo", unit(1, 0.1, 0)))  # a new enrolment replaces the old one
    with pytest.raises(PersonNotFound):
        voices.save(VoiceProfile("Stranger", unit(0, 0, 1)))
    listed = voices.list()
    assert [p.person for p in listed] == ["Jo", "Sam"]
    assert np.allclose(listed[0].embedding, unit(1, 0.1, 0))
    assert identify(unit(1, 0.05, 0), listed).name == "Jo"
    assert [p.voice_profiles for p in store.people("home")] == [1, 1]
    assert HouseholdVoices(store, "home", model="other").list() == []  # another model's
    assert HouseholdVoices(store, "elsewhere", model="m1").list() == []
    store.delete_person("home", jo.id, actor="test")
    assert [p.person for p in voices.list()] == ["Sam"]
    assert voices.delete("Sam") and not voices.delete("Sam") and not voices.delete("Nobody")
    assert voices.list() == []
    actions = [(e.action, e.target) for e in store.audit_entries("home", 20)]
    assert ("create", "voice") in actions and ("delete", "voice") in actions
