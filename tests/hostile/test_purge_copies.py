"""Hostile round 4 (issue 42), "forgetting leaves copies", through a real server process (fake
models: the chat model learns each user message as one fact and answers from the facts its
prompt quotes, so the replies quote the secrets; a real SQLite file). Jordan tells his
secrets on his kitchen device, asks about them (the replies quote them), the admin writes
them into the base memory twice (its history and the audit log keep copies), then:

- an admin purge of one fact leaves no copy of it anywhere, the next prompt included;
- "forget everything about me", confirmed, then a clean stop: no byte of any of his secrets
  in the database files (main, -wal, -shm); Sam's memory stays;
- a kill -9 in the middle of that purge (its messages gone, its facts and the texts made from
  them not yet), then a restart: the background work finishes the job, and after a clean
  stop no byte is left.

`PURGE_SECRETS` (default 40) sets how many secrets Jordan tells; each test prints the copies
it counts (the issue's probe: 400)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from pathlib import Path

import httpx
import pytest

from lobug.store.sqlite.engine import SQLiteStore
from tests.e2e.fake_server import start
from tests.e2e.server import ServerProcess, wait_for_learning

pytestmark = pytest.mark.e2e

AGENT = "lobug"
ADMIN_TOKEN = "admin-purge-Wq83Lz6Vn"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
DEVICE_TOKEN = "device-purge-Kp47Rt2Xm"
# Each person's device has a token of its own: only it speaks as the device (issue 42).
OWN_TOKENS = {"kitchen": "kitchen-purge-Wd83Hq5Ln", "office": "office-purge-Rz29Fm6Tc"}
SECRETS = int(os.environ.get("PURGE_SECRETS") or 40)
SAMS = "kumquat77"


COLOURS = (
    "amber azure beige coral crimson ebony fawn gold hazel indigo "
    "jade khaki lemon mauve ochre olive pearl ruby sable teal"
).split()
ANIMALS = (
    "badger beaver camel coyote dingo eagle ferret gecko heron ibis "
    "jackal koala lemur marmot newt otter panda quail raven stoat"
).split()


# Where the purge is killed: after its messages went, before its facts and the texts made from
# them did (before this issue the purge forgot the messages last: after its facts went).
PAUSE_AT = (
    "purge_facts_and_derived"
    if hasattr(SQLiteStore, "purge_facts_and_derived")
    else "forget_messages"
)


def secret(i: int) -> str:
    return f"zq{i:04d}vx"


def told(i: int) -> str:
    """Jordan's secret `i`, in words no other secret shares (so no fact supersedes another)."""
    return f"My {COLOURS[i % 20]} {ANIMALS[i // 20 % 20]} locker opens with {secret(i)}"


def server_at(folder: Path, **env: str) -> ServerProcess:
    notes = folder / "answer-from-notes"
    notes.touch()
    return start(
        "serve",
        folder / "server.log",
        {
            "LOBUG_DB_PATH": str(folder / "memory.db"),
            "LOBUG_ADMIN_TOKENS": ADMIN_TOKEN,
            "LOBUG_DEVICE_TOKENS": DEVICE_TOKEN,
            "LOBUG_BOUND_DEVICE_TOKENS": ",".join(f"{d}={t}" for d, t in OWN_TOKENS.items()),
            "LOBUG_SPEECH": "0",
            "LOBUG_DREAM_AT": "off",
            # The fake embedder's bag of words finds the secrets' sentences near duplicates.
            "LOBUG_DUPLICATE_DISTANCE": "0.01",
            "FAKE_NOTES_FILE": str(notes),
            **env,
        },
    )


def device(name: str) -> dict[str, str]:
    token = OWN_TOKENS.get(name, DEVICE_TOKEN)
    return {"X-Device-Id": name, "Authorization": f"Bearer {token}"}


def say(client: httpx.Client, at: str, text: str) -> str:
    answer = client.post("/chat/text", json={"text": text}, headers=device(at))
    assert answer.status_code == 200, answer.text
    reply: str = answer.json()["response"]
    return reply


def admin(client: httpx.Client, method: str, path: str, **kwargs: object) -> object:
    answer = client.request(method, path, headers=ADMIN, **kwargs)  # type: ignore[arg-type]
    assert answer.status_code < 300, answer.text
    return answer.json()


def tell_secrets(client: httpx.Client) -> None:
    """Jordan (kitchen) and Sam (office); Jordan's secrets everywhere the memory copies them."""
    admin(client, "POST", "/memory/agents", json={"name": AGENT})
    for name, device in (("Jordan", "kitchen"), ("Sam", "office")):
        admin(client, "POST", f"/memory/people/{AGENT}", json={"name": name, "devices": [device]})
    say(client, "office", f"My bike lock code is {SAMS}")
    for i in range(SECRETS):
        say(client, "kitchen", told(i))
    wait_for_learning(client)
    for _ in range(3):  # the answers quote the secrets their prompts were given
        assert "vx" in say(client, "kitchen", "What are my locker codes?")
    listed = " ".join(f"{told(i)}." for i in range(SECRETS))
    for version in ("Jordan keeps lockers.", "Jordan keeps lockers at the gym."):
        admin(
            client, "PUT", f"/memory/base-memory/{AGENT}", json={"content": f"{version} {listed}"}
        )
    wait_for_learning(client)


def forget_me(client: httpx.Client) -> str:
    assert "yes, forget me" in say(client, "kitchen", "Forget everything about me")
    return say(client, "kitchen", "Yes, forget me")


def confirm_until_killed(server: ServerProcess) -> None:
    """ "Yes, forget me", whose answer never comes: the server is killed while it purges."""
    with (
        httpx.Client(base_url=server.url, timeout=120) as client,
        contextlib.suppress(httpx.HTTPError),
    ):
        client.post("/chat/text", json={"text": "Yes, forget me"}, headers=device("kitchen"))


def copies_left(folder: Path, indices: range) -> int:
    """How many times any of the secrets `indices` is in the database files."""
    stored = b"".join(path.read_bytes() for path in sorted(folder.glob("memory.db*")))
    return sum(stored.count(secret(i).encode()) for i in indices)


def unfinished_purges(folder: Path) -> int:
    """Purge jobs not finished, read from the file beside the running server (0 on a store
    that keeps none)."""
    with sqlite3.connect(f"file:{folder / 'memory.db'}?mode=ro", uri=True) as conn:
        try:
            return int(
                conn.execute(
                    "SELECT COUNT(*) FROM purge_jobs WHERE finished_at IS NULL"
                ).fetchone()[0]
            )
        except sqlite3.OperationalError:
            return 0


def test_a_purge_and_forget_me_leave_no_byte_after_a_clean_stop(tmp_path: Path) -> None:
    server = server_at(tmp_path)
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            tell_secrets(client)
            before = copies_left(tmp_path, range(SECRETS))
            print(f"\n{SECRETS} secrets told: {before} copies in the files")
            # An admin purge of one fact: the messages and replies quoting it go too, and
            # the next prompt (the answer quotes what its prompt was given) holds none.
            facts = admin(client, "GET", f"/memory/facts/{AGENT}", params={"q": secret(0)})
            (first,) = [f for f in facts["facts"] if secret(0) in f["content"]]  # type: ignore[index]
            admin(
                client, "DELETE", f"/memory/facts/{AGENT}/{first['id']}", params={"purge": "true"}
            )
            asked = say(client, "kitchen", f"What opens my {COLOURS[0]} {ANIMALS[0]} locker?")
            purged = copies_left(tmp_path, range(1))
            print(f"after the admin purge of one fact: {purged} copies of it")
            started = time.monotonic()
            assert forget_me(client).startswith("Done.")
            print(f"forget-me answered (done) in {time.monotonic() - started:.1f} s")
            assert SAMS in say(client, "office", "What is my bike lock code?")
    finally:
        server.stop()
    left = copies_left(tmp_path, range(SECRETS))
    print(f"after forget-me and a clean stop: {left} copies")
    assert secret(0) not in asked and purged == 0
    assert left == 0
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("memory.db*"))
    assert SAMS.encode() in stored


def test_a_purge_killed_midway_is_finished_after_a_restart(tmp_path: Path) -> None:
    pause = tmp_path / "pause-purge"
    server = server_at(tmp_path, FAKE_PURGE_PAUSE_FILE=str(pause), FAKE_PURGE_PAUSE_AT=PAUSE_AT)
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            tell_secrets(client)
            assert "yes, forget me" in say(client, "kitchen", "Forget everything about me")
            pause.touch()
            confirming = threading.Thread(target=confirm_until_killed, args=(server,), daemon=True)
            confirming.start()
            reached = Path(f"{pause}.reached")
            deadline = time.monotonic() + 60
            while not reached.exists():
                assert time.monotonic() < deadline, "the purge never reached its messages"
                time.sleep(0.02)
            server.process.kill()  # kill -9 in the middle of the purge
            server.process.wait()
            confirming.join(10)
    finally:
        server.stop()
    pause.unlink()
    print(f"\nkilled midway: {copies_left(tmp_path, range(SECRETS))} copies in the files")
    again = server_at(tmp_path)
    try:
        deadline = time.monotonic() + 60
        while unfinished_purges(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert unfinished_purges(tmp_path) == 0
    finally:
        again.stop()
    left = copies_left(tmp_path, range(SECRETS))
    print(f"restarted, then a clean stop: {left} copies")
    assert left == 0
