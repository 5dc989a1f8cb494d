"""The device keep: what the parts keep per device, in one store under one lock, dropped
together with the device."""

from __future__ import annotations

import threading

from lobug.kept import DeviceKeep, Slot


def test_each_slot_keeps_its_own_values_by_device_and_key() -> None:
    keep = DeviceKeep()
    claims: Slot[str] = keep.slot("claim")
    waiting: Slot[str] = keep.slot("waiting")
    assert claims.put("kitchen", "Sam", key="home") is None
    assert claims.put("kitchen", "Jordan", key="home") == "Sam"  # replaced: the earlier back
    waiting.put("kitchen", "forget me")
    claims.put("kitchen", "Ana", key="office agent")
    assert (claims.get("kitchen", "home"), claims.get("kitchen"), waiting.get("kitchen")) == (
        "Jordan",
        None,
        "forget me",
    )
    assert sorted(claims.items()) == [
        ("kitchen", "home", "Jordan"),
        ("kitchen", "office agent", "Ana"),
    ]
    assert waiting.pop("kitchen") == "forget me" and waiting.pop("kitchen") is None


def test_dropping_a_device_drops_all_its_values_and_tells_each_slot() -> None:
    stopped: list[str] = []
    keep = DeviceKeep()
    ahead: Slot[str] = keep.slot("answer ahead", stopped.append)
    claims: Slot[str] = keep.slot("claim")
    ahead.put("kitchen", "the answer being written")
    claims.put("kitchen", "Sam")
    claims.put("hall", "Jordan")
    keep.drop("kitchen")
    assert (ahead.get("kitchen"), claims.get("kitchen"), claims.get("hall")) == (
        None,
        None,
        "Jordan",
    )
    assert stopped == ["the answer being written"]
    assert keep.devices() == {"hall"}
    keep.drop("nowhere")  # nothing kept: nothing happens


def test_pop_if_takes_only_the_value_still_kept() -> None:
    keep = DeviceKeep()
    ahead: Slot[object] = keep.slot("answer ahead")
    first, second = object(), object()
    ahead.put("kitchen", first)
    ahead.put("kitchen", second)  # a newer answer replaced it
    assert not ahead.pop_if("kitchen", first)  # the first one's expiry leaves the newer one
    assert ahead.get("kitchen") is second
    assert ahead.pop_if("kitchen", second) and keep.devices() == set()


def test_a_read_then_change_holds_the_one_lock() -> None:
    keep = DeviceKeep()
    counts: Slot[int] = keep.slot("count")
    counts.put("kitchen", 0)

    def add() -> None:
        for _ in range(2000):
            with keep.lock:  # re-entrant: the slot's own calls take it again
                counts.put("kitchen", (counts.get("kitchen") or 0) + 1)

    threads = [threading.Thread(target=add) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counts.get("kitchen") == 8000
