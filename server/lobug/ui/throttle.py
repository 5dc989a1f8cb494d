"""How often the dashboard's sign-in may be tried: a small in-memory limiter, per client address
and per token, so guessing a token costs minutes, not seconds.

- A client address may fail `FAILURES_PER_CLIENT` sign-ins within `WINDOW_S`; after that every
  sign-in from it, right token or wrong, is refused (429, `Retry-After`) until its oldest
  failure leaves the window.
- One token may open `SIGN_INS_PER_TOKEN` sessions within `WINDOW_S` (whichever clients sign in
  with it), so a token cannot churn through the session table.

The counts live in this process's memory (a restart forgets them) and hold at most `MAX_KEYS`
addresses and tokens (tokens are kept as their SHA-256); behind a reverse proxy every client has
the proxy's address, so the limit is the proxy's whole."""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import deque

from lobug.store.models import Clock

WINDOW_S = 60.0
FAILURES_PER_CLIENT = 5
SIGN_INS_PER_TOKEN = 10
MAX_KEYS = 10_000


class Throttle:
    """At most `limit` events per key within `window_s` seconds (a sliding window).
    Thread-safe."""

    def __init__(
        self, limit: int, window_s: float, clock: Clock = time.monotonic, max_keys: int = MAX_KEYS
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self.max_keys = max_keys
        self._clock = clock
        self._events: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many keys are held."""
        return len(self._events)

    def wait_s(self, key: str) -> int:
        """Whole seconds until `key` may act again; 0 when it may now."""
        with self._lock:
            events = self._recent(key, self._clock())
            if events is None or len(events) < self.limit:
                return 0
            return max(1, math.ceil(events[0] + self.window_s - self._clock()))

    def record(self, key: str) -> None:
        now = self._clock()
        with self._lock:
            events = self._recent(key, now)
            if events is None:
                self._make_room(now)
                events = self._events[key] = deque(maxlen=self.limit)
            events.append(now)

    def _recent(self, key: str, now: float) -> deque[float] | None:
        events = self._events.get(key)
        while events and events[0] <= now - self.window_s:
            events.popleft()
        return events

    def _make_room(self, now: float) -> None:
        if len(self._events) < self.max_keys:
            return
        for key in [k for k, e in self._events.items() if not e or e[-1] <= now - self.window_s]:
            del self._events[key]
        while len(self._events) >= self.max_keys:
            del self._events[next(iter(self._events))]


class SignInThrottle:
    """The sign-in's two limits: failures per client address, sessions per token."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.failures = Throttle(FAILURES_PER_CLIENT, WINDOW_S, clock)
        self.sign_ins = Throttle(SIGN_INS_PER_TOKEN, WINDOW_S, clock)

    def client_wait_s(self, client: str) -> int:
        return self.failures.wait_s(client)

    def failed(self, client: str) -> None:
        self.failures.record(client)

    def token_wait_s(self, token: str) -> int:
        return self.sign_ins.wait_s(token_key(token))

    def signed_in(self, token: str) -> None:
        self.sign_ins.record(token_key(token))


def token_key(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
