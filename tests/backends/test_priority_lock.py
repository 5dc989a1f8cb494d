from __future__ import annotations

import threading

from lobug.backends.embedded import PriorityLock


def test_foreground_waiters_go_before_background_waiters() -> None:
    lock = PriorityLock()
    order: list[str] = []
    background_started = threading.Event()

    def take(name: str, background: bool) -> None:
        if background:
            background_started.set()
        with lock.hold(background=background):
            order.append(name)

    with lock.hold(background=False):
        worker = threading.Thread(target=take, args=("background", True))
        worker.start()
        background_started.wait()
        reply = threading.Thread(target=take, args=("reply", False))
        reply.start()
        while True:  # until the reply is queued behind us
            with lock._condition:
                if lock._foreground_waiting == 1:
                    break
    worker.join()
    reply.join()
    assert order == ["reply", "background"]


def test_lock_is_released_when_the_holder_fails() -> None:
    lock = PriorityLock()
    try:
        with lock.hold(background=True):
            raise RuntimeError("model crashed")
    except RuntimeError:
        pass
    with lock.hold(background=False):
        pass
