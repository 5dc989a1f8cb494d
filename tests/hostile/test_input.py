"""Hostile round 3 (issue 29), findings 2, 3 and 6 against a real server process (fake models,
a real SQLite file) and the real command line: one input rule for every JSON body whatever
its Content-Type, rows older versions let in (a lone surrogate, a time out of range) mended
on read, and imports held to the API's limits and links. Each case failed before its fix."""

from __future__ import annotations

import copy
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli.run import lobug
from tests.e2e.server import ServerProcess, free_port, wait_until_healthy

pytestmark = pytest.mark.e2e

AGENT = "hostile"
SURROGATE = b'"\\ud800"'
JSON_TYPES = [
    "application/merge-patch+json",
    "application/vnd.api+json; charset=utf-8",
    "APPLICATION/JSON",
    None,  # no Content-Type: FastAPI still reads the body as JSON
]


def start_server(folder: Path) -> ServerProcess:
    """`lobug serve` as `tests/e2e/fake_server.py` builds it (fake chat and embedder)."""
    port = free_port()
    env = {
        **os.environ,
        "LOBUG_DB_PATH": str(folder / "memory.db"),
        "LOBUG_SPEECH": "0",
        "LOBUG_DREAM_AT": "off",
        "LOBUG_AGENT": AGENT,
    }
    log_path = folder / "server.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.fake_server", "serve", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = ServerProcess(process, f"http://127.0.0.1:{port}", log_path)
    wait_until_healthy(server)
    return server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    running = start_server(tmp_path_factory.mktemp("hostile-input"))
    yield running
    running.stop()
    assert "Traceback" not in running.log()  # no request ended in a 500


@pytest.fixture(scope="module")
def memory(server: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{server.url}/memory", timeout=60) as client:
        assert client.post("/agents", json={"name": AGENT}).status_code == 200
        said = {"agent_name": AGENT, "role": "user", "content": "I keep bees", "learn": False}
        assert client.post("/messages", json=said).status_code == 200
        yield client


def db_path(server: ServerProcess) -> Path:
    return server.log_path.with_name("memory.db")


def export_document(memory: httpx.Client, path: str = "/export") -> dict[str, Any]:
    answer = memory.get(path)
    assert answer.status_code == 200
    document: dict[str, Any] = json.loads(answer.content)  # whole, and valid UTF-8
    return document


def everything_reads(server: ServerProcess, memory: httpx.Client, agent: str) -> None:
    """The lists, the context, /v1, the export and `lobug export` of `agent` all answer."""
    assert memory.get("/agents").status_code == 200
    assert memory.get(f"/messages/{agent}").status_code == 200
    assert memory.post(f"/context/{agent}", json={"query": "bees"}).status_code == 200
    asked = {"model": "x", "user": agent, "messages": [{"role": "user", "content": "hi"}]}
    assert httpx.post(f"{server.url}/v1/chat/completions", json=asked, timeout=60).is_success
    export_document(memory)
    target = server.log_path.with_name(f"{agent}.json")
    ran = lobug("export", "--url", server.url, "--agent", agent, "-o", str(target), env={})
    assert ran.code == 0, ran.err
    assert json.loads(target.read_bytes())["agents"][0]["name"] == agent


# ---------------------------------------------------------------------- finding 2


@pytest.mark.parametrize("content_type", JSON_TYPES)
def test_every_json_content_type_meets_the_guard(
    server: ServerProcess, memory: httpx.Client, content_type: str | None
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    bodies = [
        ("/memory/agents", b'{"name": "surrogate", "metadata": {"k": %s}}'),
        ("/memory/messages", b'{"agent_name": "hostile", "role": "user", "content": %s}'),
        (
            "/memory/messages",
            b'{"agent_name": "hostile", "role": "user", "content": "hi", "metadata": {%s: 1}}',
        ),
        ("/v1/chat/completions", b'{"messages": [{"role": "user", "content": %s}]}'),
    ]
    for path, template in bodies:
        sent = httpx.post(f"{server.url}{path}", content=template % SURROGATE, headers=headers)
        assert (sent.status_code, sent.json()["error"]) == (400, "invalid_json"), path
        deep = b"[" * 40 + b"]" * 40
        sent = httpx.post(f"{server.url}{path}", content=template % deep, headers=headers)
        assert (sent.status_code, sent.json()["error"]) == (400, "invalid_json"), path

    assert memory.get("/agents/surrogate").status_code == 404
    everything_reads(server, memory, AGENT)


def test_rows_an_older_version_stored_are_mended_on_read(
    server: ServerProcess, memory: httpx.Client
) -> None:
    """A lone surrogate (as the escape older versions wrote) in an agent's and a message's
    metadata and an audit row's detail, and a message from the year 1e300, written straight
    into the SQLite file."""
    with sqlite3.connect(db_path(server), timeout=10) as db:
        agent_id = db.execute(
            "INSERT INTO agents(name, created_at, metadata) VALUES ('old', 1e300, ?)",
            ('{"k": "\\ud800", "\\udfff": "fine \\ud83d\\ude00"}',),
        ).lastrowid
        for at, metadata in ((1_700_000_000.0, '{"k": "x\\udc00"}'), (1e300, None)):
            db.execute(
                "INSERT INTO conversation_log(agent_id, device_id, role, content, created_at, "
                "summarized, metadata) VALUES (?, 'api', 'user', 'I keep bees', ?, 0, ?)",
                (agent_id, at, metadata),
            )
        db.execute(
            "INSERT INTO audit_log(agent_id, at, actor, action, target, target_ids, detail) "
            "VALUES (?, -1e12, 'api', 'create', 'agent', '[]', '{\"why\": \"\\ud800\"}')",
            (agent_id,),
        )

    everything_reads(server, memory, "old")
    for page in ("/ui", "/ui/conversations", "/ui/audit"):  # the dashboard lists them too
        shown = httpx.get(f"{server.url}{page}", params={"agent": "old"}, follow_redirects=True)
        assert shown.status_code == 200, page
    agent = memory.get("/agents/old").json()
    assert agent["metadata"] == {"k": "\ufffd", "\ufffd": "fine \U0001f600"}
    assert agent["created_at"].startswith("2200-01-01")
    listed = memory.get("/messages/old").json()
    assert {"2023", "2200"} <= {m["created_at"][:4] for m in listed}
    assert {"k": "x\ufffd"} in [m["metadata"] for m in listed]

    mended = export_document(memory, "/export/old")  # re-imports: nothing left out of rule
    imported = memory.post("/import", params={"as": "old-copy"}, json=mended)
    assert imported.status_code == 200, imported.text
    assert imported.json()["imported"][0]["added"]["messages"] == len(listed)


# ---------------------------------------------------------------------- findings 3 and 6


@pytest.fixture(scope="module")
def document(memory: httpx.Client) -> dict[str, Any]:
    """An export of one agent holding one of everything an import checks."""
    name = "source"
    assert memory.post("/agents", json={"name": name, "metadata": {"room": "hall"}}).is_success
    said = {"agent_name": name, "role": "user", "content": "I keep bees", "learn": False}
    assert memory.post("/messages", json=said).is_success
    for fact in ("The user keeps bees", "The user keeps wasps"):
        assert memory.post(f"/facts/{name}", json={"content": fact}).is_success
    block = {"agent_name": name, "label": "human", "value": "Alex", "limit": 10}
    assert memory.post("/memory-blocks", json=block).is_success
    assert memory.put(f"/base-memory/{name}", json={"content": "Keeps bees."}).is_success
    exported = export_document(memory, f"/export/{name}")
    exported["agents"][0]["name"] = "imported"
    return exported


def changed(document: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `document` with the value at `path` (`agents.0.facts.1.content`) set."""
    copied = copy.deepcopy(document)
    *parents, last = path.split(".")
    target: Any = copied
    for step in parents:
        target = target[int(step)] if isinstance(target, list) else target[step]
    target[int(last) if isinstance(target, list) else last] = value
    return copied


# (where in the document, the value, the JSON path named after `$.agents[0].`)
OUT_OF_RULE = [
    pytest.param(
        "agents.0.messages.0.created_at", 1e300, "messages[0].created_at", id="year-1e300"
    ),
    pytest.param(
        "agents.0.messages.0.created_at", -1e12, "messages[0].created_at", id="before-1970"
    ),
    pytest.param("agents.0.facts.0.due_at", 1e300, "facts[0].due_at", id="due-1e300"),
    pytest.param("agents.0.created_at", 9e18, "created_at", id="agent-created-9e18"),
    pytest.param("agents.0.facts.0.content", "x" * 100_000, "facts[0].content", id="fact-100k"),
    pytest.param(
        "agents.0.base_memory.content", "x" * 200_000, "base_memory.content", id="base-200k"
    ),
    pytest.param("agents.0.blocks.0.value", "x" * 500_000, "blocks[0].value", id="block-500k"),
    pytest.param("agents.0.blocks.0.value", "x" * 11, "blocks[0].value", id="over-char-limit"),
    pytest.param("agents.0.blocks.0.label", "../<x>", "blocks[0].label", id="label-path"),
    pytest.param("agents.0.metadata", {"k": "x" * 900_000}, "metadata", id="metadata-900k"),
    pytest.param(
        "agents.0.messages.0.metadata",
        {"k": "x" * 17_000},
        "messages[0].metadata",
        id="message-metadata-17k",
    ),
    pytest.param("agents.0.facts.0.confidence", 99, "facts[0].confidence", id="confidence-99"),
    pytest.param("agents.0.facts.1.id", "same", "facts[1].id", id="duplicate-id"),
    pytest.param(
        "agents.0.facts.0.superseded_by", 0, "facts[0].superseded_by", id="missing-successor"
    ),
    pytest.param(
        "agents.0.facts.0.superseded_by", "cycle", "facts[0].superseded_by", id="supersede-cycle"
    ),
]


@pytest.mark.parametrize(("path", "value", "named"), OUT_OF_RULE)
def test_an_import_out_of_the_api_rules_is_refused_naming_the_path(
    server: ServerProcess,
    memory: httpx.Client,
    document: dict[str, Any],
    path: str,
    value: Any,
    named: str,
) -> None:
    facts = document["agents"][0]["facts"]
    if value == "same":
        value = facts[0]["id"]
    elif value == "cycle":  # 1 superseded by 2, 2 by 1
        document = changed(document, "agents.0.facts.1.superseded_by", facts[0]["id"])
        value = facts[1]["id"]
    elif value == 0:
        value = max(f["id"] for f in facts) + 1000
    bad = changed(document, path, value)

    answer = memory.post("/import", json=bad)

    assert (answer.status_code, answer.json()["error"]) == (422, "invalid_export"), answer.text
    assert f"$.agents[0].{named}:" in answer.json()["detail"]
    assert memory.get("/agents/imported").status_code == 404
    file = server.log_path.with_name("bad.json")
    file.write_text(json.dumps(bad))
    remote = lobug("import", str(file), "--url", server.url, env={})
    assert remote.code == 1 and named in remote.err, remote.err


def test_the_command_line_imports_within_the_same_rules(
    server: ServerProcess, memory: httpx.Client, document: dict[str, Any]
) -> None:
    """`lobug import` on the database file itself: a 3 MB fact, a 5 MB message, a lone
    surrogate and deep nesting are refused with the path, before anything is embedded; the
    document itself imports."""
    env = {"LOBUG_DB_PATH": str(db_path(server))}
    file = server.log_path.with_name("local.json")
    cases = [
        (changed(document, "agents.0.facts.0.content", "x" * 3_000_000), "facts[0].content"),
        (changed(document, "agents.0.messages.0.content", "x" * 5_000_000), "messages[0]"),
    ]
    for bad, named in cases:
        file.write_text(json.dumps(bad))
        ran = lobug("import", str(file), env=env)
        assert ran.code == 1 and named in ran.err, ran.err
    for text, problem in (
        (json.dumps(document).replace("Keeps bees.", "\\ud800"), "lone surrogate"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper"),
    ):
        file.write_text(text)
        ran = lobug("import", str(file), env=env)
        assert ran.code == 1 and problem in ran.err, ran.err
    assert memory.get("/agents/imported").status_code == 404

    file.write_text(json.dumps(document))  # (the file's fake embedder is the server's alone)
    ran = lobug("import", str(file), "--as", "cli-copy", "--url", server.url, env={})
    assert ran.code == 0, ran.err
    assert memory.get("/agents/cli-copy").json()["metadata"] == {"room": "hall"}


def test_metadata_has_one_size_limit_on_every_surface(memory: httpx.Client) -> None:
    within, beyond = {"k": "x" * 16_000}, {"k": "x" * 16_400}
    message = {"agent_name": AGENT, "role": "user", "content": "hi", "learn": False}
    assert memory.post("/messages", json={**message, "metadata": within}).status_code == 200
    for path, body in (
        ("/messages", {**message, "metadata": beyond}),
        ("/agents", {"name": "big", "metadata": beyond}),
        ("/agents", {"name": "big", "metadata": {"k": "x" * 900_000}}),
    ):
        answer = memory.post(path, json=body)
        assert (answer.status_code, answer.json()["error"]) == (422, "invalid_request")
        assert "16384" in answer.text
    assert memory.get("/agents/big").status_code == 404
