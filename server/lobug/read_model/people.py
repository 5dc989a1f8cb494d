"""A household's people as the surfaces show them (the API, the CLI, the dashboard)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from lobug.read_model.common import shown
from lobug.store.household import Person


class PersonOut(BaseModel):
    id: str
    name: str
    created_at: str
    devices: list[str] = Field(description="the devices whose default person they are")
    voice_profiles: int = Field(description="voice embeddings enrolled (no audio is kept)")


class ForgottenPersonOut(BaseModel):
    person_id: str
    facts: int = Field(
        description="facts purged (their private ones, and any learned only from what they said)"
    )
    messages: int = Field(description="messages they said, and the replies to them, forgotten")
    deleted: bool


def person_out(person: Person) -> PersonOut:
    return shown(PersonOut, person)


def forgotten_person_out(
    person_id: int, counts: dict[str, int], deleted: bool
) -> ForgottenPersonOut:
    return ForgottenPersonOut(
        person_id=str(person_id),
        facts=counts.get("facts", 0),
        messages=counts.get("messages", 0),
        deleted=deleted,
    )
