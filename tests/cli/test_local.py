"""The commands on the local database file (`LOBUG_DB_PATH`) with the real bundled embedding
model, each run in this process (`tests/cli/run.py`; the chat, which loads the chat model
itself, in a subprocess): facts and search, export and import, Markdown artifacts,
backup under write load, restore, install-service."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from lobug.backends.embedded import LocalEmbedder
from lobug.store.sqlite.engine import SQLiteStore
from tests.cli.run import lobug, ok
from tests.e2e.server import free_port

pytestmark = pytest.mark.models

DAY = 86_400.0
MONDAY = 1_790_000_000.0  # 2026-09-21 (UTC)


def seeded(path: Path) -> None:
    """A database bound to the bundled embedding model, with a device's talk over two days."""
    now = [MONDAY]
    store = SQLiteStore(path, clock=lambda: now[0])
    store.bind_embedding(LocalEmbedder.model, 384)
    store.append_message("lobug", "kitchen", "user", "My sister Ana visits on Sunday")
    now[0] += 60
    store.append_message("lobug", "kitchen", "assistant", "Lovely, say hi to Ana")
    now[0] += DAY
    store.append_message("lobug", "hall", "user", "Turn on the hall light")
    store.write_base_memory("lobug", "The user has a sister, Ana.", actor="cascade")
    store.close()


def test_memory_commands_export_import_and_markdown_on_the_local_file(tmp_path: Path) -> None:
    env = {"LOBUG_DB_PATH": str(tmp_path / "lobug.db")}
    seeded(tmp_path / "lobug.db")

    added = ok("facts", "add", "The user's sister is Ana", "--type", "identity", env=env)
    assert added.out == "added fact 1\n"
    hits = ok("search", "who is my sister", "--json", env=env).json()
    assert hits[0] == {
        "kind": "fact",
        "id": "1",
        "score": hits[0]["score"],
        "text": "The user's sister is Ana",
    }
    assert any(h["kind"] == "message" and "Ana" in h["text"] for h in hits)
    messages = ok("messages", "list", "--since", "2026-09-22", "--json", env=env).json()
    assert [m["content"] for m in messages] == ["Turn on the hall light"]
    assert ok("audit", "--json", env=env).json()["entries"][0]["actor"] == "cli"
    unknown = lobug("facts", "list", "--agent", "nobody", env=env)
    assert unknown.code == 1 and "no agent named 'nobody'" in unknown.err

    ok("export", "-o", str(tmp_path / "lobug.json"), env=env)
    other = {"LOBUG_DB_PATH": str(tmp_path / "other.db")}
    first = ok("import", str(tmp_path / "lobug.json"), env=other)
    again = ok("import", str(tmp_path / "lobug.json"), env=other)
    assert first.out == ("lobug: added 3 messages, 1 facts, 1 base_memory_versions, 2 audit\n")
    assert again.out == "lobug: added nothing (already there)\n"
    assert ok("search", "sister", "--json", env=other).json()[0]["text"] == (
        "The user's sister is Ana"
    )

    for folder in ("one", "two"):
        ok("export", "--format", "markdown", str(tmp_path / folder), env=env)
    one = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*.md"))
    assert [str(p) for p in one if str(p).startswith("days")] == [
        "days/2026-09-21.md",
        "days/2026-09-22.md",
    ]
    for name in one:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert (
        "- 14:13:20 **user**: My sister Ana visits on Sunday"
        in (tmp_path / "one" / "days" / "2026-09-21.md").read_text()
    )


def test_backup_while_written_and_restore_only_when_nobody_holds_the_file(
    tmp_path: Path,
) -> None:
    env = {"LOBUG_DB_PATH": str(tmp_path / "lobug.db")}
    seeded(tmp_path / "lobug.db")
    server = SQLiteStore(tmp_path / "lobug.db")  # as a running server holds it
    acknowledged: list[int] = []
    stop = threading.Event()

    def write() -> None:
        while not stop.is_set():
            acknowledged.append(server.append_message("lobug", "d", "user", "busy " * 40).id)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(acknowledged) < 20:
            stop.wait(0.01)
        before = list(acknowledged)
        backup = ok("backup", str(tmp_path / "nightly.db"), "--json", env=env).json()
        refused = lobug("restore", str(tmp_path / "nightly.db"), "--yes", env=env)
    finally:
        stop.set()
        writer.join()
        server.close()

    assert backup["integrity"] == "ok"
    assert refused.code == 1 and "is open in another process" in refused.err
    ok("restore", str(tmp_path / "nightly.db"), "--yes", env=env)
    restored = SQLiteStore(tmp_path / "lobug.db")
    held = {m.id for m in restored.agent_messages("lobug", 100_000)}
    restored.close()
    assert set(before) <= held and len(held) < 3 + len(acknowledged)

    unit = ok("install-service", env={**env, "LOBUG_PORT": "8400"}).out
    assert "ExecStart=" in unit and "-m lobug serve" in unit
    assert f"Environment=LOBUG_DB_PATH={tmp_path / 'lobug.db'}" in unit
    assert "Environment=LOBUG_PORT=8400" in unit and "WantedBy=default.target" in unit


def test_chat_in_process_when_no_server_runs(tmp_path: Path) -> None:
    env = {
        "LOBUG_DB_PATH": str(tmp_path / "lobug.db"),
        "LOBUG_PORT": str(free_port()),  # nobody listens there
        "LOBUG_LLM_BACKEND": "embedded",
        "LOBUG_LLM_MAX_TOKENS": "16",
    }
    said = "My name is Alex\n/facts\n/forget\n/help\n/quit\n"

    chat = ok("chat", "--device", "desk", env=env, stdin=said, process=True)

    assert "loading the assistant here" in chat.err
    replies = [line for line in chat.out.splitlines() if line.startswith("lobug> ")]
    assert len(replies) == 2 and replies[1] == "lobug> Okay, I forgot what you just said."
    assert "/facts lists what I know" in chat.out
    store = SQLiteStore(tmp_path / "lobug.db")
    assert store.recent_messages("lobug", "desk", 10) == []  # forgotten, not learned from
    store.close()
