from __future__ import annotations

import threading

from lobug.backends.embedded import PriorityLock
from tests.polling import eventually


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
        # until the reply is queued behind us
        assert eventually(lambda: lock.waiting(background=False) == 1), "the reply never queued"
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


def test_each_kind_is_served_in_arrival_order() -> None:
    lock = PriorityLock()
    order: list[int] = []

    def take(n: int) -> None:
        with lock.hold(background=False):
            order.append(n)

    with lock.hold(background=False):
        workers = []
        for n in range(6):
            worker = threading.Thread(target=take, args=(n,))
            worker.start()
            workers.append(worker)
            queued = eventually(lambda q=n + 1: lock.waiting(background=False) == q)
            assert queued, f"taker {n} never queued"
    for worker in workers:
        worker.join()
    assert order == list(range(6))
