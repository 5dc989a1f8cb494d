"""A household's people (`memory/people.py` holds the rules): who they are, the devices they
usually use, and forgetting everything about one of them. Which facts each may see is
`visibility.py`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lobug.store import errors
from lobug.store.household import HOUSEHOLD, PRIVATE, Person, StoredVoice
from lobug.store.models import Fact
from lobug.store.sql import audit
from lobug.store.sql.dialect import batches, marks
from lobug.store.sql.forgetting import SqlForgetting
from lobug.store.sql.topics import drop_topics_holding

PERSON_COLUMNS = (
    "p.id, p.name, p.created_at, "
    "(SELECT COUNT(*) FROM voice_profiles v WHERE v.person_id = p.id) AS voice_profiles"
)


def name_key(name: str) -> str:
    """How two names of one household are compared: without case or outer spaces."""
    return " ".join(name.split()).casefold()


class SqlPeople(SqlForgetting):
    # ------------------------------------------------------------------ people

    def add_person(self, agent: str, name: str, *, actor: str) -> Person:
        """A new person of the household (PersonExists when the name is taken)."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            taken = conn.execute(
                "SELECT id FROM people WHERE agent_id = ? AND name_key = ?",
                (agent_id, name_key(name)),
            ).fetchone()
            if taken is not None:
                raise errors.PersonExists(f"{agent!r} already has a person called {name!r}")
            now = self._clock()
            row = conn.execute(
                "INSERT INTO people(agent_id, name, name_key, created_at) VALUES (?, ?, ?, ?) "
                "RETURNING id",
                (agent_id, name, name_key(name), now),
            ).fetchone()
            audit.record(conn, now, agent_id, actor, "create", "person", [row["id"]], after=name)
        return self.person(agent, int(row["id"]))

    def share_household_facts(self, agent: str, *, actor: str) -> int:
        """Let a guest hear every household fact of no one's (every version), as anyone heard
        them before the household had people; how many current facts that was."""
        agent_id = self.agent_id(agent)
        ownerless = "agent_id = ? AND owner_person_id IS NULL AND scope = ? AND shareable = 0"
        with self._transaction() as conn:
            current = conn.execute(
                f"SELECT id FROM facts WHERE {ownerless} AND invalidated_at IS NULL",
                (agent_id, HOUSEHOLD),
            ).fetchall()
            conn.execute(f"UPDATE facts SET shareable = 1 WHERE {ownerless}", (agent_id, HOUSEHOLD))
            ids = [row["id"] for row in current]
            if ids:
                detail = {"after": {"shareable": 1}}
                audit.record(
                    conn, self._clock(), agent_id, actor, "update", "fact", ids, detail=detail
                )
        return len(ids)

    def people(self, agent: str) -> list[Person]:
        """The household's people, oldest first, each with their devices."""
        agent_id = self.agent_id(agent)
        found = self._query(
            f"SELECT {PERSON_COLUMNS} FROM people p WHERE p.agent_id = ? ORDER BY p.id",
            (agent_id,),
        )
        devices = self._devices_by_person(agent_id)
        return [self._person(agent, row, devices.get(row["id"], ())) for row in found]

    def person(self, agent: str, person_id: int) -> Person:
        for person in self.people(agent):
            if person.id == person_id:
                return person
        raise errors.PersonNotFound(f"{agent!r} has no person {person_id}")

    def find_person(self, agent: str, name: str) -> Person | None:
        """The household's person called `name` (any case), or None."""
        key = name_key(name)
        return next((p for p in self.people(agent) if name_key(p.name) == key), None)

    def _devices_by_person(self, agent_id: int) -> dict[int, tuple[str, ...]]:
        found = self._query(
            "SELECT person_id, device_id FROM device_people WHERE agent_id = ? ORDER BY device_id",
            (agent_id,),
        )
        devices: dict[int, tuple[str, ...]] = {}
        for row in found:
            devices[row["person_id"]] = (*devices.get(row["person_id"], ()), row["device_id"])
        return devices

    @staticmethod
    def _person(agent: str, row: Any, devices: Sequence[str]) -> Person:
        return Person(
            row["id"], agent, row["name"], row["created_at"], tuple(devices), row["voice_profiles"]
        )

    # ------------------------------------------------------------------ voices

    def save_voice_profile(
        self, agent: str, person_id: int, embedding: bytes, model: str, *, actor: str
    ) -> None:
        """The person's voice as an embedding (no audio is ever stored), replacing theirs."""
        agent_id = self.agent_id(agent)
        self.person(agent, person_id)  # PersonNotFound
        with self._transaction() as conn:
            conn.execute("DELETE FROM voice_profiles WHERE person_id = ?", (person_id,))
            now = self._clock()
            conn.execute(
                "INSERT INTO voice_profiles(person_id, embedding, model, created_at) "
                "VALUES (?, ?, ?, ?)",
                (person_id, embedding, model, now),
            )
            audit.record(
                conn, now, agent_id, actor, "create", "voice", [person_id], detail={"model": model}
            )

    def voice_profiles(self, agent: str) -> list[StoredVoice]:
        """The household's stored voices, by person."""
        found = self._query(
            "SELECT v.person_id, p.name, v.embedding, v.model, v.created_at FROM voice_profiles v "
            "JOIN people p ON p.id = v.person_id WHERE p.agent_id = ? ORDER BY p.id, v.id",
            (self.agent_id(agent),),
        )
        return [
            StoredVoice(
                row["person_id"], row["name"], bytes(row["embedding"]), row["model"],
                row["created_at"],
            )
            for row in found
        ]  # fmt: skip

    def delete_voice_profile(self, agent: str, person_id: int, *, actor: str) -> bool:
        """Forget the person's voice; False when none was stored."""
        agent_id = self.agent_id(agent)
        self.person(agent, person_id)
        with self._transaction() as conn:
            gone = conn.execute(
                "DELETE FROM voice_profiles WHERE person_id = ?", (person_id,)
            ).rowcount
            if gone:
                audit.record(conn, self._clock(), agent_id, actor, "delete", "voice", [person_id])
        return bool(gone)

    # ------------------------------------------------------------------ devices

    def set_device_person(
        self, agent: str, device_id: str, person_id: int | None, *, actor: str
    ) -> None:
        """`person_id` usually uses `device_id` (None: the device has no default person)."""
        agent_id = self.agent_id(agent)
        if person_id is not None:
            self.person(agent, person_id)
        with self._transaction() as conn:
            conn.execute(
                "DELETE FROM device_people WHERE agent_id = ? AND device_id = ?",
                (agent_id, device_id),
            )
            if person_id is not None:
                conn.execute(
                    "INSERT INTO device_people(agent_id, device_id, person_id) VALUES (?, ?, ?)",
                    (agent_id, device_id, person_id),
                )
            audit.record(
                conn,
                self._clock(),
                agent_id,
                actor,
                "update",
                "device",
                [] if person_id is None else [person_id],
                detail={"device": device_id, "person": person_id},
            )

    def device_person(self, agent: str, device_id: str) -> int | None:
        """The person who usually uses `device_id`, or None."""
        found = self._query(
            "SELECT person_id FROM device_people WHERE agent_id = ? AND device_id = ?",
            (self.agent_id(agent), device_id),
        )
        return int(found[0]["person_id"]) if found else None

    # ------------------------------------------------------------------ facts by person

    def person_facts(self, agent: str, person_id: int) -> list[Fact]:
        """The person's own current facts (private or made household by them), oldest first."""
        self.person(agent, person_id)
        return self._facts_where(
            "f.agent_id = ? AND f.owner_person_id = ? AND f.invalidated_at IS NULL ORDER BY f.id",
            (self.agent_id(agent), person_id),
        )

    def set_fact_scope(
        self, agent: str, fact_id: int, scope: str, *, shareable: bool, actor: str
    ) -> Fact:
        """Move a current fact between its owner's private memory and the household's;
        `shareable`: a household fact a guest may hear. A private fact needs an owner."""
        agent_id = self.agent_id(agent)
        versions = [f.id for f in self.fact_versions(agent, fact_id)]
        with self._transaction() as conn:
            fact = self._lock_current_fact(conn, agent, agent_id, fact_id)
            if scope == PRIVATE and fact.owner_person_id is None:
                raise errors.FactHasNoOwner(f"fact {fact_id} belongs to the household")
            share = int(shareable and scope == HOUSEHOLD)
            conn.execute(  # every version: a purge of private memory takes its history too
                f"UPDATE facts SET scope = ?, shareable = ? WHERE id IN ({marks(versions)})",
                (scope, share, *versions),
            )
            audit.record(
                conn,
                self._clock(),
                agent_id,
                actor,
                "update",
                "fact",
                [fact_id],
                detail={
                    "before": {"scope": fact.scope, "shareable": int(fact.shareable)},
                    "after": {"scope": scope, "shareable": share},
                },
            )
        return self.get_fact(fact_id)

    # ------------------------------------------------------------------ forgetting a person

    def forget_person_memory(self, agent: str, person_id: int, *, actor: str) -> dict[str, int]:
        """Everything about the person leaves the household's memory: every version of their
        private facts is purged, and the messages they said (and the replies to them) are
        forgotten as `forget_messages` forgets (what was learned only from them goes too).
        Household facts they stated stay the household's: their link to the messages is
        cut first. Nothing of the erased text stays in the engine's files."""
        self.person(agent, person_id)
        agent_id = self.agent_id(agent)
        with self._writing():
            with self._transaction() as conn:
                self._lock_fact_writers(conn, agent_id)
                private = self._private_fact_ids(conn, agent_id, person_id)
                now = self._clock()
                for batch in batches(private):
                    self._forget_rows(conn, batch, now)
                    self._purge_rows(conn, batch, now)
                drop_topics_holding(conn, "fact", private)
                conn.execute(
                    "UPDATE facts SET source_message_ids = '[]', owner_person_id = NULL "
                    "WHERE agent_id = ? AND owner_person_id = ? AND scope = ?",
                    (agent_id, person_id, HOUSEHOLD),
                )
                audit.record(
                    conn,
                    now,
                    agent_id,
                    actor,
                    "purge",
                    "person",
                    [person_id],
                    detail={"facts": len(private)},
                )
            self._index_forgotten(private, [])
        said = self._query(
            "SELECT id FROM conversation_log WHERE agent_id = ? AND person_id = ?",
            (agent_id, person_id),
        )
        forgotten = self.forget_messages(agent, [r["id"] for r in said], actor=actor)
        self._erase_free_pages()
        return {"facts": len(private) + len(forgotten.facts), "messages": len(forgotten.messages)}

    def delete_person(self, agent: str, person_id: int, *, actor: str) -> dict[str, int]:
        """Forget everything about the person, then remove them (their devices and voice
        profiles go with them)."""
        counts = self.forget_person_memory(agent, person_id, actor=actor)
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            conn.execute(
                "UPDATE facts SET owner_person_id = NULL WHERE owner_person_id = ?", (person_id,)
            )
            conn.execute("DELETE FROM voice_profiles WHERE person_id = ?", (person_id,))
            conn.execute("DELETE FROM device_people WHERE person_id = ?", (person_id,))
            conn.execute("DELETE FROM people WHERE id = ? AND agent_id = ?", (person_id, agent_id))
            audit.scrub(conn, self.dialect, "person", [person_id])  # their name
            audit.record(
                conn, self._clock(), agent_id, actor, "delete", "person", [person_id], detail=counts
            )
        self._erase_free_pages()
        return counts

    @staticmethod
    def _private_fact_ids(conn: Any, agent_id: int, person_id: int) -> list[int]:
        """Every version of the person's private facts not purged yet (a superseded version
        is private when its current one is)."""
        found = conn.execute(
            "SELECT id FROM facts WHERE agent_id = ? AND owner_person_id = ? "
            "AND scope = ? AND purged_at IS NULL ORDER BY id",
            (agent_id, person_id, PRIVATE),
        ).fetchall()
        return [int(row["id"]) for row in found]
