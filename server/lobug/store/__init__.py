"""Persistence behind the `Store` protocol (`protocol.py`): the domain's dataclasses
(`models.py`), its errors (`errors.py`) and the engines (`sqlite/`)."""
