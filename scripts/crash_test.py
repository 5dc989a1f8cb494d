"""Crash safety: kill the real server with SIGKILL at random moments under load, restart it,
and prove that nothing acknowledged was lost.

Several clients talk at once: device clients post `/chat/text` (answered by the real embedded
model), memory clients post `/memory/messages` (embedded by the real MiniLM). Every request
carries a unique text. The server is killed at a random moment (`--kills` times) and started
again; clients keep going, retrying while it is down. At the end the database is checked as a
restart would find it:

- every message whose request got a 2xx is in the log exactly once (and an acknowledged
  `/memory/messages` one has its vector);
- `PRAGMA integrity_check` is ok;
- the full-text indexes agree with their tables (FTS5 `integrity-check` against the content);
- the vector tables agree with their tables (current facts <-> `fact_vectors`, every
  `message_vectors` row has its message);
- after one more start, every device's working memory is the tail of its log.

Prints requests acknowledged, kills, messages lost (must be 0); exits 1 on any failure.

    .venv/bin/python scripts/crash_test.py --kills 5
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from tests.e2e.server import ServerProcess, run_with_scratch_files, start_server

from lobug.store.sqlite.database import open_connection

MEMORY_AGENT = "crash"
WORDS = "apple river stone cloud piano lantern meadow copper violet harbor".split()
WORKING_MEMORY = 20
LEARNING_WAIT_S = 120.0  # for the restarted server to resume the interrupted memory work


@dataclass
class Ledger:
    """What the clients sent and what the server acknowledged, shared by all client threads."""

    acknowledged: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, device, text)
    outcomes: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, outcome: str, ack: tuple[str, str, str] | None = None) -> None:
        with self.lock:
            self.outcomes[outcome] += 1
            if ack is not None:
                self.acknowledged.append(ack)


Sender = Callable[[str, str, str], int]  # (url, client name, text) -> HTTP status


@dataclass
class Target:
    """Where the server is now; None while it is down."""

    url: str | None = None
    stop: threading.Event = field(default_factory=threading.Event)


def unique_text(rng: random.Random, client: str, seq: int, kind: str) -> str:
    """A device asks the model (a statement about the person is said back without it, in no
    time, and would flood the learning queue past what a person says); the memory API stores
    what someone saw."""
    first, second = rng.choice(WORDS), rng.choice(WORDS)
    if kind == "device":
        return f"{client} message {seq}: is a {first} ever near a {second}?"
    return f"{client} message {seq}: I saw a {first} near the {second}"


def classify(exc: Exception) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    if isinstance(exc, httpx.TransportError):
        return "connection"
    return type(exc).__name__


def client(kind: str, name: str, target: Target, ledger: Ledger, seed: int, send: Sender) -> None:
    """Send unique texts until stopped; a 200 is recorded as acknowledged. Waits while the
    server is down."""
    rng = random.Random(seed)
    seq = 0
    while not target.stop.is_set():
        url = target.url
        if url is None:
            time.sleep(0.1)
            continue
        seq += 1
        text = unique_text(rng, name, seq, kind)
        try:
            status = send(url, name, text)
        except Exception as exc:
            ledger.record(classify(exc))
            continue
        ledger.record(str(status), (kind, name, text) if status == 200 else None)


def say_to_device_api(url: str, device: str, text: str) -> int:
    response = httpx.post(
        f"{url}/chat/text", json={"text": text}, headers={"X-Device-Id": device}, timeout=60
    )
    return response.status_code


def store_through_memory_api(url: str, _: str, text: str) -> int:
    body = {"agent_name": MEMORY_AGENT, "role": "user", "content": text}
    httpx.post(f"{url}/memory/agents", json={"name": MEMORY_AGENT}, timeout=30)
    status = httpx.post(f"{url}/memory/messages", json=body, timeout=30).status_code
    time.sleep(0.2)  # leave the CPU to the device turns too
    return status


# ------------------------------------------------------------------ checks on the database


def check_database(db_path: Path, ledger: Ledger) -> dict[str, Any]:
    """What a restart would find, read with a plain connection (no repair on open)."""
    conn = open_connection(db_path)
    try:
        logged = Counter(
            content
            for (content,) in conn.execute("SELECT content FROM conversation_log WHERE role='user'")
        )
        embedded = {
            content
            for (content,) in conn.execute(
                "SELECT c.content FROM conversation_log c JOIN message_vectors v "
                "ON v.message_id = c.id"
            )
        }
        lost = [text for _, _, text in ledger.acknowledged if logged[text] == 0]
        duplicated = [text for _, _, text in ledger.acknowledged if logged[text] > 1]
        unembedded = [
            text
            for kind, _, text in ledger.acknowledged
            if kind == "memory" and text not in embedded
        ]
        return {
            "lost": lost,
            "duplicated": duplicated,
            "unembedded": unembedded,
            "integrity": conn.execute("PRAGMA integrity_check").fetchone()[0],
            "fts": full_text_problems(conn),
            "vectors": vector_problems(conn),
            "queued": conn.execute("SELECT COUNT(*) FROM learning_queue").fetchone()[0],
        }
    finally:
        conn.close()


def full_text_problems(conn: Any) -> list[str]:
    problems = []
    for table in ("messages_fts", "facts_fts"):
        try:
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
        except Exception as exc:
            problems.append(f"{table}: {exc}")
    return problems


def vector_problems(conn: Any) -> list[str]:
    current = {i for (i,) in conn.execute("SELECT id FROM facts WHERE invalidated_at IS NULL")}
    with_vectors = {i for (i,) in conn.execute("SELECT fact_id FROM fact_vectors")}
    messages = {i for (i,) in conn.execute("SELECT id FROM conversation_log")}
    message_vectors = {i for (i,) in conn.execute("SELECT message_id FROM message_vectors")}
    problems = []
    if current - with_vectors:
        problems.append(f"{len(current - with_vectors)} current facts without a vector")
    if with_vectors - current:
        problems.append(f"{len(with_vectors - current)} vectors of facts that are not current")
    if message_vectors - messages:
        problems.append(f"{len(message_vectors - messages)} message vectors without a message")
    return problems


def working_memory_problems(server: ServerProcess, db_path: Path, devices: list[str]) -> list[str]:
    conn = open_connection(db_path)
    problems = []
    try:
        for device in devices:
            rows = conn.execute(
                "SELECT role, content FROM conversation_log WHERE device_id = ? "
                "ORDER BY id DESC LIMIT ?",
                (device, WORKING_MEMORY),
            ).fetchall()
            expected = [{"role": role, "content": content} for role, content in reversed(rows)]
            state = httpx.get(
                f"{server.url}/context/working-memory", headers={"X-Device-Id": device}, timeout=10
            ).json()
            if state["messages"] != expected:
                problems.append(f"{device}: working memory is not the tail of its log")
    finally:
        conn.close()
    return problems


# ------------------------------------------------------------------ the run


def run(
    db_path: Path,
    log_path: Path,
    *,
    kills: int,
    devices: int,
    memory_clients: int,
    seed: int,
    uptime_s: tuple[float, float] = (2.0, 8.0),
    learning_wait_s: float = LEARNING_WAIT_S,
) -> bool:
    rng = random.Random(seed)
    # Short replies: more device turns finish between kills.
    env = {"LOBUG_SPEECH": "0", "LOBUG_LLM_MAX_TOKENS": "24"}
    ledger, target = Ledger(), Target()
    names = [f"dev{i}" for i in range(devices)]
    clients = [("device", n, say_to_device_api) for n in names] + [
        ("memory", f"mem{i}", store_through_memory_api) for i in range(memory_clients)
    ]
    threads = [
        threading.Thread(
            target=client, args=(kind, name, target, ledger, seed + i, send), daemon=True
        )
        for i, (kind, name, send) in enumerate(clients)
    ]
    server = start_server(db_path, log_path, env)
    target.url = server.url
    for thread in threads:
        thread.start()
    for kill in range(1, kills + 1):
        time.sleep(rng.uniform(*uptime_s))
        server.process.kill()  # SIGKILL: no shutdown code runs
        server.process.wait()
        target.url = None
        print(f"kill {kill}/{kills}: {len(ledger.acknowledged)} acknowledged so far", flush=True)
        if kill < kills:
            server = start_server(db_path, log_path, env)
            target.url = server.url
    target.stop.set()
    for thread in threads:
        thread.join(timeout=90)

    found = check_database(db_path, ledger)
    server = start_server(db_path, log_path, env)
    try:
        found["working_memory"] = working_memory_problems(server, db_path, names)
        found["queue_left"] = learning_left_after(server, learning_wait_s)
    finally:
        server.stop()
    return report(ledger, kills, found)


def learning_left_after(server: ServerProcess, wait_s: float) -> int:
    """Exchanges still in the learning queue once the restarted server had `wait_s` to
    resume what the kills interrupted."""
    deadline = time.monotonic() + wait_s
    while True:
        left = int(httpx.get(f"{server.url}/health", timeout=10).json()["memory"]["learning_queue"])
        if left == 0 or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def report(ledger: Ledger, kills: int, found: dict[str, Any]) -> bool:
    kinds = Counter(kind for kind, _, _ in ledger.acknowledged)
    print()
    print(f"requests            {sum(ledger.outcomes.values())}")
    print(f"acknowledged        {len(ledger.acknowledged)} ({dict(kinds)})")
    print(f"outcomes            {dict(sorted(ledger.outcomes.items()))}")
    print(f"kills               {kills}")
    print(f"messages lost       {len(found['lost'])}")
    print(f"duplicated          {len(found['duplicated'])}")
    print(f"acked, no vector    {len(found['unembedded'])}")
    print(f"integrity_check     {found['integrity']}")
    print(f"full-text indexes   {'; '.join(found['fts']) or 'agree with their tables'}")
    print(f"vector tables       {'; '.join(found['vectors']) or 'agree with their tables'}")
    print(f"working memory      {'; '.join(found['working_memory']) or 'rebuilt from the log'}")
    print(f"learning queued     {found['queued']} at the last kill, {found['queue_left']} left")
    server_errors = sum(n for outcome, n in ledger.outcomes.items() if outcome.startswith("5"))
    ok = (
        not found["lost"]
        and not found["duplicated"]
        and not found["unembedded"]
        and found["integrity"] == "ok"
        and not found["fts"]
        and not found["vectors"]
        and not found["working_memory"]
        and found["queue_left"] == 0
        and server_errors == 0
        and len(ledger.acknowledged) > 0
    )
    print("PASS" if ok else "FAIL")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--devices", type=int, default=3)
    parser.add_argument("--memory-clients", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--uptime", type=float, nargs=2, default=(2.0, 8.0), help="seconds between kills: min max"
    )
    args = parser.parse_args()
    ok = run_with_scratch_files(
        lambda db_path, log_path: run(
            db_path,
            log_path,
            kills=args.kills,
            devices=args.devices,
            memory_clients=args.memory_clients,
            seed=args.seed,
            uptime_s=tuple(args.uptime),
        )
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
