"""The layering as a test (docs/architecture.md, issue 27): which part of the package may import
which, and which libraries a floor keeps off. Every import counts, at module level or inside
a function; only imports under TYPE_CHECKING do not. Circles (through any import) are
`test_layout.py`'s, over the same walk of the imports.

A part is a top-level module or package of `lobug` (`lobug.memory.search` is in `memory`);
the package itself (its version, and the public names it loads on first use) is none. A part
imports itself and the floors below its own; on its own floor, any part but where the floor's
parts are siblings kept apart (the surfaces: none imports another)."""

from __future__ import annotations

from pathlib import Path

from tests.test_layout import PACKAGE, every_import, modules

FLOORS: dict[str, tuple[str, ...]] = {  # top to bottom
    "entry": ("__main__", "app", "serving"),
    "surfaces": ("api", "ui", "cli", "mcp_server", "xiaozhi", "wyoming"),
    "surface kit": ("web", "read_model"),  # what surfaces share instead of importing each other
    # The running parts wired from settings; MemoryEngine (the Python door, MCP's) opens them.
    "services": ("services", "engine"),
    "voice": ("voice",),  # the spoken turn: listening, the turn's end, speaking
    "turns": ("turn",),  # one turn: prepare, answer, guard, remember
    "domain": ("memory",),
    "store": ("store",),
    "backends": ("backends", "speakers"),  # speakers: recognition by voice
    "leaves": (
        "config",  # the settings, the xiaozhi and Wyoming ones beside them
        "exposure",  # who may reach the server (loopback, tokens)
        "language",  # every rule about words: sentences, claims, reply quality, each language
        "names",
        "kept",  # what a device's turns keep between them: one store, one lock, one drop
        "clock",
        "tokens",
        "audio",
    ),
    "client": ("client",),  # imports nothing of the server; its message helpers are anyone's
}
APART = {"surfaces"}

HTTP = ("fastapi", "starlette", "httpx", "uvicorn", "h11", "mcp")
MODEL_RUNTIMES = ("onnxruntime", "xllamacpp", "tokenizers", "faster_whisper", "piper")
NEVER: dict[str, tuple[str, ...]] = {  # the libraries a floor never imports
    "voice": HTTP,
    "turns": HTTP,
    "domain": HTTP,
    "store": HTTP,
    "leaves": HTTP,
    "client": ("fastapi", "starlette", "uvicorn", *MODEL_RUNTIMES),
}

# Imports the floors refuse, allowed by name: (importing module, imported part).
EXCEPTIONS = {
    # Deliberate: the command line starts the servers (`lobug serve`, `memory-server`, `mcp`).
    ("lobug.cli.servers", "app"),
    ("lobug.cli.servers", "serving"),
    ("lobug.cli.servers", "mcp_server"),
    # Deliberate: on the local file a memory command runs the memory API app in its own
    # process and calls it as it calls a server (`rest.local_access`): the same routes.
    ("lobug.cli.rest", "app"),
}

FLOOR_OF = {part: floor for floor, parts in FLOORS.items() for part in parts}
RANK = {part: rank for rank, parts in enumerate(FLOORS.values()) for part in parts}


def part_of(module: str) -> str | None:
    names = module.split(".")
    return names[1] if names[0] == "lobug" and len(names) > 1 else None


def runs_up_or_across(importer: str, imported: str) -> bool:
    mine, theirs = part_of(importer), part_of(imported)
    if mine is None or theirs is None or mine == theirs:
        return False
    if RANK[theirs] == RANK[mine]:
        return FLOOR_OF[mine] in APART
    return RANK[theirs] < RANK[mine]


def forbidden_imports(name: str, path: Path, known: set[str]) -> set[str]:
    """What `name` (at `path`) imports against the table: package modules up the house or
    across the surfaces, and libraries its floor keeps off."""
    imported = every_import(path)
    found = {
        m
        for m in imported
        if m in known and runs_up_or_across(name, m) and (name, part_of(m)) not in EXCEPTIONS
    }
    part = part_of(name)
    kept_off = NEVER.get(FLOOR_OF[part], ()) if part else ()
    return found | {m for m in imported if m.split(".")[0] in kept_off}


# The top of the package keeps the entry points and true leaves; a turn's stages live in
# packages named for them, so that a newcomer follows one voice turn by folder names.
TOP_MODULES_MAX = 12


def test_the_top_of_the_package_keeps_entry_points_and_leaves() -> None:
    top = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__"}
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert len(top) <= TOP_MODULES_MAX, sorted(top)
    assert {"turn", "voice", "language"} <= packages


def test_every_part_stands_on_one_floor() -> None:
    parts = {part_of(name) for name in modules()} - {None}
    assert parts == set(FLOOR_OF)
    assert len(FLOOR_OF) == sum(len(parts) for parts in FLOORS.values())


def test_no_import_runs_up_the_house_across_the_surfaces_or_into_a_kept_off_library() -> None:
    found = modules()
    refused = [
        f"{name} imports {m}"
        for name, path in found.items()
        for m in sorted(forbidden_imports(name, path, set(found)))
    ]
    assert refused == []


def test_every_exception_is_still_needed() -> None:
    found = modules()
    unused = {
        (name, part)
        for name, part in EXCEPTIONS
        if not any(part_of(m) == part for m in every_import(found[name]) if m in found)
    }
    assert unused == set(), "remove these from EXCEPTIONS"


def test_a_forbidden_import_is_found_in_a_function_too(tmp_path: Path) -> None:
    source = tmp_path / "fake.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from lobug.store.models import Fact\n"
        "if TYPE_CHECKING:\n"
        "    from lobug.services import Services\n"
        "def later() -> None:\n"
        "    from lobug.api.deps import MemoryDep\n"
        "    import fastapi\n"
    )
    known = set(modules())
    assert forbidden_imports("lobug.memory.fake", source, known) == {"lobug.api.deps", "fastapi"}
    assert forbidden_imports("lobug.ui.fake", source, known) == {"lobug.api.deps"}
