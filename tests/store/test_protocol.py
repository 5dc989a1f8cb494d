from __future__ import annotations

import inspect

from lobug.store.protocol import Store
from lobug.store.sqlite.engine import SQLiteStore


def protocol_methods() -> list[str]:
    return sorted(
        name
        for klass in Store.__mro__
        if klass not in (object,) and getattr(klass, "_is_protocol", False)
        for name, member in vars(klass).items()
        if callable(member) and not name.startswith("_")
    )


def shape(signature: inspect.Signature) -> list[tuple[str, object, object]]:
    """Names, kinds and defaults (mypy checks the types where services open the store)."""
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()]


def test_sqlite_store_implements_the_store_protocol(store: SQLiteStore) -> None:
    typed: Store = store
    assert isinstance(typed, Store)


def test_sqlite_store_methods_take_the_protocols_parameters() -> None:
    assert {"append_message", "add_fact_superseding_duplicate", "close"} <= set(protocol_methods())
    for name in protocol_methods():
        expected = inspect.signature(getattr(Store, name))
        actual = inspect.signature(getattr(SQLiteStore, name))
        assert shape(actual) == shape(expected), name
