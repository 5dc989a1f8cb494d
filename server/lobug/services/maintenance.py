"""Memory repair in the background: once at start-up, then every few minutes.

Each task returns how much it repaired (re-embedded messages, resumed exchanges) and checks
between units of work whether the server is stopping. A failing task is logged and tried again
on the next pass; it never stops the thread or the server. Where several processes share one
database, each task runs in one of them at a time (`one_process_at_a_time`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

log = logging.getLogger(__name__)

# A task gets a "should I stop?" check to call between units of work, so shutdown is prompt.
Task = tuple[str, Callable[[Callable[[], bool]], int]]
# How long a stopping server waits for each part still at work (this thread, the memory work,
# speech still loading) before it goes on closing: a unit of work in progress (a batch being
# embedded, an exchange being learned from) is left to end with the process, its rows still
# queued for the next start (`lobug.serving` ends the process STOP_DEADLINE_S after the signal).
STOP_WAIT_S = 1.0


def one_process_at_a_time(
    exclusively: Callable[[str], AbstractContextManager[bool]], tasks: Sequence[Task]
) -> list[Task]:
    """The tasks, each run under the store's lock of its name: while another process runs
    one, it is skipped here (it repaired nothing)."""

    def guarded(name: str, task: Callable[[Callable[[], bool]], int]) -> Task:
        def run(should_stop: Callable[[], bool]) -> int:
            with exclusively(f"maintenance:{name}") as held:
                return task(should_stop) if held else 0

        return name, run

    return [guarded(name, task) for name, task in tasks]


class Maintenance:
    def __init__(self, tasks: Sequence[Task], interval_s: float) -> None:
        self.tasks = tuple(tasks)
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="maintenance", daemon=True)
        self._thread.start()

    def ask_to_stop(self) -> None:
        """No unit of work begins after the one in progress (`stop` waits for that one)."""
        self._stop.set()

    def stop(self, timeout_s: float = 30.0) -> bool:
        """Ask the thread to stop and wait (at most `timeout_s`) for the unit of work in
        progress; return whether it ended (a daemon thread still at work ends with the
        process)."""
        self.ask_to_stop()
        if self._thread is not None:
            self._thread.join(timeout_s)
            if self._thread.is_alive():
                log.info("maintenance: still in a unit of work; it ends with the process")
                return False
        return True

    def run_once(self) -> dict[str, int]:
        """Run every task once; return what each repaired (failed tasks are left out)."""
        repaired: dict[str, int] = {}
        for name, task in self.tasks:
            if self._stop.is_set():
                break
            try:
                repaired[name] = task(self._stop.is_set)
            except Exception as exc:
                log.warning("maintenance: %s failed: %s", name, exc)
                continue
            if repaired[name]:
                log.info("maintenance: %s: %d", name, repaired[name])
        return repaired

    def _run(self) -> None:
        while not self._stop.is_set():
            self.run_once()
            self._stop.wait(self.interval_s)
