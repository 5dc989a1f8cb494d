"""Dashboard sessions: who signed in, with which role, until when, and the CSRF token their
forms carry.

A session is a random id in an HttpOnly, SameSite=Strict cookie scoped to `/ui`, looked up in
this process's memory: signing out ends it at once, and a restart ends them all (sign in
again). The CSRF token is a second random value per session, compared in constant time.

Each role has its own budget of `MAX_SESSIONS` sessions: a sign-in past it ends the oldest
session of its own role, so signing in with device tokens never signs an admin out. What a
session may do is the role rule's (`lobug.web.roles.may`)."""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from dataclasses import dataclass

from lobug.memory.evidence import ADMIN_EVIDENCE, Evidence
from lobug.store.models import Clock
from lobug.web.roles import ADMIN, Access, Role, may

COOKIE = "lobug_session"
SESSION_TTL_S = 12 * 3600
MAX_SESSIONS = 1000  # per role


@dataclass(frozen=True)
class Note:
    text: str
    failed: bool = False


@dataclass(frozen=True)
class Session:
    id: str
    role: Role
    csrf: str
    expires_at: float
    device: str | None = None  # signed in with this device's own token

    def may(self, access: Access) -> bool:
        return may(self.role, access)

    @property
    def evidence(self) -> Evidence:
        """What the token typed at sign-in proved (`memory.evidence`): what pages show."""
        if self.role == ADMIN:
            return ADMIN_EVIDENCE
        return Evidence(device=self.device)

    @property
    def can_edit(self) -> bool:
        """Admins change the memory; a device token's session only looks."""
        return self.may(Access.CHANGE)


class Sessions:
    """Thread-safe. At most `capacity` sessions per role: opening one more ends the oldest
    of the same role (expired ones go first)."""

    def __init__(
        self, ttl_s: float = SESSION_TTL_S, capacity: int = MAX_SESSIONS, clock: Clock = time.time
    ) -> None:
        self.ttl_s = ttl_s
        self.capacity = capacity
        self._clock = clock
        self._sessions: dict[str, Session] = {}
        self._notes: dict[str, Note] = {}
        self._lock = threading.Lock()

    def open(self, role: Role, device: str | None = None) -> Session:
        session = Session(
            secrets.token_urlsafe(32),
            role,
            secrets.token_urlsafe(32),
            self._clock() + self.ttl_s,
            device,
        )
        with self._lock:
            self._make_room(role)
            self._sessions[session.id] = session
        return session

    def _make_room(self, role: Role) -> None:
        """Room for one more session of `role`: its expired sessions end, then its oldest."""
        same_role = [s for s in self._sessions.values() if s.role == role]
        if len(same_role) < self.capacity:
            return
        now = self._clock()
        live = [s for s in same_role if s.expires_at > now]
        ended = [s for s in same_role if s.expires_at <= now]
        ended += live[: max(0, len(live) - self.capacity + 1)]
        for session in ended:
            self._end(session.id)

    def find(self, session_id: str | None) -> Session | None:
        """The live session with this id; an expired one is ended."""
        if not session_id:
            return None
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None and session.expires_at <= self._clock():
                self._end(session_id)
                return None
            return session

    def close(self, session_id: str) -> None:
        with self._lock:
            self._end(session_id)

    def _end(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
        self._notes.pop(session_id, None)

    def leave_note(self, session: Session, note: Note) -> None:
        """What the last change did (or why it failed), for the next page to show once."""
        with self._lock:
            if session.id in self._sessions:
                self._notes[session.id] = note

    def take_note(self, session: Session) -> Note | None:
        with self._lock:
            return self._notes.pop(session.id, None)


def csrf_matches(session: Session, presented: str | None) -> bool:
    return hmac.compare_digest(session.csrf.encode(), (presented or "").encode())
