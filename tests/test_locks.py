"""Installs are pinned to their bytes (issue 17, item 12): every pin people edit has an entry in
a lock file with the same version and at least one sha256, and `make` installs only the lock
files, with --require-hashes. A pin changed without `make lock` fails here before it fails an
install."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s\\;#]+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        if match := PIN.match(line):
            found[canonical(match.group(1))] = match.group(2)
    return found


def locked_entries(path: Path) -> dict[str, tuple[str, list[str]]]:
    """name → (version, hashes) of each requirement of a pip lock file (continued lines joined)."""
    text = path.read_text().replace("\\\n", " ")
    entries = {}
    for line in text.splitlines():
        if match := PIN.match(line):
            hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", line)
            entries[canonical(match.group(1))] = (match.group(2), hashes)
    return entries


def test_every_edited_pin_is_locked_at_its_version() -> None:
    lock = locked_entries(ROOT / "requirements.lock")
    wanted = pins(ROOT / "requirements.txt") | pins(ROOT / "requirements-dev.txt")
    assert {name: lock.get(name, ("missing",))[0] for name in wanted} == wanted


def test_the_no_deps_pins_are_locked_at_their_versions() -> None:
    lock = locked_entries(ROOT / "requirements-nodeps.lock")
    wanted = pins(ROOT / "requirements-nodeps.txt")
    assert wanted
    assert {name: lock.get(name, ("missing",))[0] for name in wanted} == wanted


def test_the_installer_is_locked_at_its_version() -> None:
    lock = locked_entries(ROOT / "requirements-uv.lock")
    wanted = pins(ROOT / "requirements-uv.txt")
    assert set(wanted) == {"uv"}
    assert {name: lock.get(name, ("missing",))[0] for name in wanted} == wanted


def test_every_locked_requirement_carries_a_hash() -> None:
    for lock_name in ("requirements.lock", "requirements-nodeps.lock", "requirements-uv.lock"):
        entries = locked_entries(ROOT / lock_name)
        assert len(entries) > 0
        assert [name for name, (_, hashes) in entries.items() if not hashes] == []


def test_make_installs_only_the_locks_and_requires_their_hashes() -> None:
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("$(STAMP):", 1)[1].split("\n\n", 1)[0]
    installs = [line for line in recipe.splitlines() if "$(PIP)" in line or "$(INSTALL)" in line]
    assert installs, recipe
    for line in installs:
        if "-r " in line:
            assert "--require-hashes" in line and ".lock" in line, line
        else:
            assert "--no-deps --no-build-isolation -e ." in line, line
    assert "requirements.txt" not in recipe
