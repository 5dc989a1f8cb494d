"""Every memory command through `--url` against a real HTTP server (fake models inside), and
`lobug chat` as a device of it. The commands run in this process (`tests/cli/run.py`), the
exit codes' check in a subprocess too."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lobug.app import create_app
from lobug.backends import Backends
from lobug.config import Settings
from tests.cli.run import lobug, ok
from tests.live import LiveServer

ADMIN_TOKEN = "admin-tok-5Hs8-Wq2Lp"
DEVICE_TOKEN = "device-tok-9Xr3-Mb7Kd"


@pytest.fixture
def env(settings: Settings, backends: Backends, tmp_path: Path) -> Iterator[dict[str, str]]:
    guarded = settings.with_overrides(admin_tokens=(ADMIN_TOKEN,), device_tokens=(DEVICE_TOKEN,))
    server = LiveServer(create_app(guarded, backends))
    try:
        yield {
            "LOBUG_URL": server.url,
            "LOBUG_TOKEN": ADMIN_TOKEN,
            "LOBUG_DB_PATH": str(tmp_path / "not-used.db"),
        }
    finally:
        server.stop()


def test_facts_search_blocks_and_base_memory_on_a_server(
    env: dict[str, str], tmp_path: Path
) -> None:
    ok("agents", "create", "lobug", env=env)
    bees = ok("facts", "add", "The user keeps bees", "--type", "preference", "--json", env=env)
    sister = ok("facts", "add", "The user's sister is Ana", "--type", "identity", env=env)
    bee_id = bees.json()["id"]
    assert sister.out.startswith("added fact ")

    listed = ok("facts", "list", env=env).out.splitlines()
    assert listed[0].split() == ["id", "type", "content", "due", "pinned", "score", "created"]
    assert "The user's sister is Ana" in listed[1] and "The user keeps bees" in listed[2]
    ok("facts", "pin", bee_id, env=env)
    ok("facts", "score", bee_id, "7", env=env)
    shown = ok("facts", "show", bee_id, "--json", env=env).json()
    assert (shown["pinned"], shown["user_score"]) == (True, 7)
    wasps = ok("facts", "edit", bee_id, "The user keeps wasps", "--json", env=env).json()
    assert [v["id"] for v in wasps["versions"]] == [bee_id, wasps["id"]]
    assert ok("facts", "list", "--pinned", "--json", env=env).json()["total"] == 1
    purged = ok("facts", "forget", wasps["id"], "--purge", "--json", env=env).json()
    assert purged["purged_at"] and purged["content"] == ""
    history = ok("facts", "list", "--history", "--json", env=env).json()
    assert history["total"] == 3
    hits = ok("search", "sister", "--json", env=env).json()
    assert hits[0]["kind"] == "fact" and "sister" in hits[0]["text"]

    ok("blocks", "set", "human", "Alex", env=env)
    ok("blocks", "set", "human", "Alex B.", env=env)
    assert ok("blocks", "get", "human", env=env).out == "Alex B.\n"
    ok("blocks", "set", "pin", "zebra-quartz-pin", env=env)
    assert ok("blocks", "delete", "pin", "--purge", env=env).out == "block pin purged\n"
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\nopen(sys.argv[1], 'w').write('Keeps bees. Sister Ana.')\n")
    ok("base-memory", "edit", env={**env, "EDITOR": f"{sys.executable} {editor}"})
    assert ok("base-memory", "show", env=env).out == "Keeps bees. Sister Ana.\n"

    audit = ok("audit", "--json", env=env).json()
    actions = [(e["action"], e["target"]) for e in reversed(audit["entries"])]
    assert actions[:3] == [("create", "fact"), ("create", "fact"), ("flag", "fact")]
    assert ("write", "base_memory") in actions and ("purge", "facts") in actions
    assert ("purge", "block") in actions and "zebra-quartz" not in json.dumps(audit)

    assert ok("topics", "--rebuild", "--json", env=env).json() == []  # no two notes alike
    assert ok("topics", "--global", env=env).out.startswith("Pinned facts of lobug:\n(none)")


@pytest.mark.both_engines
def test_chat_messages_export_import_and_exit_codes_on_a_server(
    env: dict[str, str], tmp_path: Path
) -> None:
    ok("agents", "create", "lobug", env=env)
    chat = ok("chat", "--device", "desk", env=env, stdin="I keep bees\n/facts\n/quit\nnever\n")
    assert "lobug> Okay." in chat.out and "talking to" in chat.err
    said = ok("messages", "list", "--device", "desk", "--json", env=env).json()
    assert [m["content"] for m in said] == ["Okay.", "I keep bees"]
    forgotten = ok("messages", "forget", "--device", "desk", "--json", env=env).json()
    assert forgotten["messages"] == 2
    stats = ok("stats", "--json", env=env).json()
    assert stats["agents"][0]["name"] == "lobug" and stats["embedding_model"] == "fake-embed"

    ok("facts", "add", "The user keeps bees", env=env)
    ok("export", "--agent", "lobug", "-o", str(tmp_path / "lobug.json"), env=env)
    first = ok("import", str(tmp_path / "lobug.json"), "--as", "copy", env=env)
    again = ok("import", str(tmp_path / "lobug.json"), "--as", "copy", env=env)
    assert first.out.startswith("copy: added ") and "1 facts" in first.out
    assert again.out == "copy: added nothing (already there)\n"
    pages = ok("export", "--format", "markdown", str(tmp_path / "md"), env=env)
    assert (tmp_path / "md" / "GLOBAL_MEMORY.md").exists() and "wrote" in pages.out
    assert "copy" in ok("agents", "list", env=env).out
    ok("agents", "delete", "copy", "--yes", env=env)

    # The exit codes as the shell sees them: the console script's code, in a process.
    missing = lobug("facts", "show", "999", env=env, process=True)
    assert missing.code == 1 and "fact_not_found" in missing.err
    assert lobug("facts", "score", "1", "eleven", env=env, process=True).code == 2
    assert lobug("messages", "forget", env=env).code == 2
    denied = lobug("facts", "add", "x", env={**env, "LOBUG_TOKEN": "wrong"})
    assert denied.code == 1 and "unauthorized" in denied.err
    assert lobug("backup", str(tmp_path / "b.db"), "--url", env["LOBUG_URL"], env=env).code == 2


def test_a_device_token_reads_but_is_refused_every_change_and_the_export(
    env: dict[str, str], tmp_path: Path
) -> None:
    ok("agents", "create", "lobug", env=env)
    ok("facts", "add", "The user keeps bees", env=env)
    device = {**env, "LOBUG_TOKEN": DEVICE_TOKEN}
    assert "The user keeps bees" in ok("facts", "list", env=device).out
    for args in (
        ("facts", "add", "The user keeps wasps"),
        ("blocks", "set", "human", "Alex"),
        ("export", "--agent", "lobug", "-o", str(tmp_path / "lobug.json")),
        ("audit",),
    ):
        refused = lobug(*args, env=device)
        assert refused.code == 1, args
        assert "admin_required" in refused.err and "--token" in refused.err, args
    assert ok("facts", "list", "--json", env=env).json()["total"] == 1
    assert ok("blocks", "list", "--json", env=env).json() == []
