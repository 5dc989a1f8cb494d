"""The --no-deps lock files say which pins they were written from (`scripts/lock_nodeps.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scripts.lock_nodeps import header

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", ["requirements-nodeps", "requirements-models"])
def test_a_lock_names_its_own_source_and_file(name: str) -> None:
    source, target = ROOT / f"{name}.txt", ROOT / f"{name}.lock"
    written = header(source, target)
    assert f"from {name}.txt" in written
    assert f"-r {name}.lock" in written
    assert target.read_text().startswith(written)
