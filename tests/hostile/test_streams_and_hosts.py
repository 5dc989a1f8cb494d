"""Hostile round 3, findings 4, 5, 8 and 9 against real server processes (fake models):
a model server that closes its connection mid-stream, foreign Host and Origin headers and
cross-site content types, a deleted block's text in the audit log, and SIGTERM while a large
import is being embedded."""

from __future__ import annotations

import io
import json
import signal
import time
import wave
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest

from lobug.store.engines import open_database
from lobug.store.models import API_SOURCE
from tests.e2e.fake_server import CUT_CHUNKED, CUT_CLOSE, MODEL_REPLY, model_env, start
from tests.e2e.server import ServerProcess
from tests.fakes import FakeEmbedder

pytestmark = pytest.mark.e2e

AGENT = "hostile"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's servers' files: one model server, one proxy and one open server serve
    all its tests (each test of the proxy talks as an agent of its own)."""
    return tmp_path_factory.mktemp("streams-and-hosts")


@pytest.fixture(scope="module")
def model(folder: Path) -> Iterator[ServerProcess]:
    server = start("model", folder / "model.log", {})
    yield server
    server.stop()


def lobug(tmp_path: Path, **env: str) -> ServerProcess:
    """A Lo-Bug device server (fake embedder) on a fresh SQLite file in `tmp_path`."""
    tmp_path.mkdir(exist_ok=True)
    defaults = {
        "LOBUG_DB_PATH": str(tmp_path / "memory.db"),
        "LOBUG_SPEECH": "0",
        "LOBUG_DREAM_AT": "off",
        "LOBUG_AGENT": AGENT,
    }
    return start("serve", tmp_path / "lobug.log", {**defaults, **env})


@pytest.fixture(scope="module")
def proxy(folder: Path, model: ServerProcess) -> Iterator[ServerProcess]:
    server = lobug(folder / "proxy", **model_env(model))
    yield server
    server.stop()


def streamed_events(server: ServerProcess, said: str, agent: str) -> list[str]:
    body = {"model": "any", "stream": True, "messages": [{"role": "user", "content": said}]}
    url = f"{server.url}/v1/chat/completions"
    with httpx.stream("POST", url, json=body, headers={"X-Agent": agent}, timeout=30) as r:
        assert r.status_code == 200
        return [line for line in r.iter_lines() if line.startswith("data: ")]


def stored_messages(server: ServerProcess, agent: str, role: str) -> list[str]:
    listed = httpx.get(f"{server.url}/memory/messages/{agent}", timeout=10).json()
    return [m["content"] for m in listed if m["role"] == role]


# ------------------------------------------------------------------ 4: a cut model stream


@pytest.mark.parametrize("cut", [CUT_CLOSE, CUT_CHUNKED])
def test_a_model_stream_cut_midway_ends_with_an_error_and_stores_no_reply(
    proxy: ServerProcess, cut: str
) -> None:
    events = streamed_events(proxy, f"Tell me a story ({cut})", agent=f"story-{cut}")
    assert "data: [DONE]" not in events
    chunks = [json.loads(event[6:]) for event in events]
    assert not any(c.get("choices", [{}])[0].get("finish_reason") for c in chunks[:-1])
    error = chunks[-1]["error"]
    assert (error["type"], error["code"]) == ("server_error", "llm_unavailable")
    assert error["param"] is None
    assert "ended the stream before the reply was finished" in error["message"]
    assert stored_messages(proxy, f"story-{cut}", "assistant") == []  # no cut reply is stored
    assert stored_messages(proxy, f"story-{cut}", "user") == [f"Tell me a story ({cut})"]


@pytest.mark.parametrize("cut", [CUT_CLOSE, CUT_CHUNKED])
def test_a_whole_answer_cut_midway_is_a_503_for_v1_and_for_a_device(
    proxy: ServerProcess, cut: str
) -> None:
    body = {"model": "any", "messages": [{"role": "user", "content": f"Hi ({cut})"}]}
    agent = {"X-Agent": f"whole-{cut}"}
    whole = httpx.post(f"{proxy.url}/v1/chat/completions", json=body, headers=agent, timeout=30)
    assert (whole.status_code, whole.json()["error"]) == (503, "llm_unavailable")
    device = httpx.post(f"{proxy.url}/chat/text", json={"text": f"Hello ({cut})"}, timeout=30)
    assert (device.status_code, device.json()["error"]) == (503, "llm_unavailable")
    assert stored_messages(proxy, f"whole-{cut}", "assistant") == []
    assert stored_messages(proxy, AGENT, "assistant") == []  # the device's agent


def test_an_openai_client_sees_the_cut_stream_fail(proxy: ServerProcess) -> None:
    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="none", max_retries=0)
    with client:
        stream = client.chat.completions.create(
            model="any", stream=True, messages=[{"role": "user", "content": f"Go {CUT_CLOSE}"}]
        )
        with pytest.raises(openai.APIError, match="before the reply was finished"):
            for _ in stream:
                pass


def test_a_whole_model_stream_still_ends_with_done_and_is_stored(proxy: ServerProcess) -> None:
    events = streamed_events(proxy, "Tell me a story", agent="whole-story")
    assert events[-1] == "data: [DONE]"
    assert json.loads(events[-2][6:])["choices"][0]["finish_reason"] == "stop"
    assert stored_messages(proxy, "whole-story", "assistant") == ["".join(MODEL_REPLY)]


# ------------------------------------------------------------------ 5: Host and Origin


@pytest.fixture(scope="module")
def open_server(folder: Path) -> Iterator[ServerProcess]:
    """The default setup: loopback, no tokens (whoever reaches it is an admin)."""
    server = lobug(folder / "open", LOBUG_ALLOWED_HOSTS="lobug.local")
    yield server
    server.stop()


def dreams(server: ServerProcess) -> list[object]:
    answer = httpx.get(f"{server.url}/memory/dreams/{AGENT}", timeout=10)
    return list(answer.json()) if answer.status_code == 200 else []


def test_a_rebound_host_name_is_refused_on_every_path_mcp_included(
    open_server: ServerProcess,
) -> None:
    httpx.post(f"{open_server.url}/memory/agents", json={"name": AGENT}, timeout=10)
    rebound = {"Host": "attacker.example:8321"}
    for path in ("/memory/export", "/mcp", f"/memory/messages/{AGENT}", "/ui"):
        answer = httpx.get(f"{open_server.url}{path}", headers=rebound, timeout=10)
        assert (answer.status_code, answer.json()["error"]) == (421, "host_not_allowed"), path
    listed = httpx.get(f"{open_server.url}/memory/export", headers={"Host": "lobug.local"})
    assert listed.status_code == 200
    assert httpx.get(f"{open_server.url}/memory/export", timeout=10).status_code == 200


def test_a_cross_site_post_runs_nothing(open_server: ServerProcess) -> None:
    httpx.post(f"{open_server.url}/memory/agents", json={"name": AGENT}, timeout=10)
    dream = f"{open_server.url}/memory/dream/{AGENT}"
    page = {"Origin": "https://attacker.example"}
    simple = httpx.post(dream, content=b"{}", headers={**page, "Content-Type": "text/plain"})
    assert (simple.status_code, simple.json()["error"]) == (403, "origin_not_allowed")
    no_origin = httpx.post(dream, content=b"{}", headers={"Content-Type": "text/plain"})
    assert (no_origin.status_code, no_origin.json()["error"]) == (415, "unsupported_media_type")
    form = httpx.post(dream, data={"x": "1"}, timeout=10)
    assert form.status_code == 415
    assert httpx.post(dream, headers=page, timeout=10).status_code == 403
    mcp = httpx.post(
        f"{open_server.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={**page, "Accept": "application/json, text/event-stream"},
        timeout=10,
    )
    assert (mcp.status_code, mcp.json()["error"]) == (403, "origin_not_allowed")
    assert dreams(open_server) == []


def test_the_device_contract_still_holds(open_server: ServerProcess) -> None:
    """Devices in the field: no Origin, JSON as application/json, audio as multipart (this
    server has no speech model: 503, past the guard) or audio/wav."""
    with httpx.Client(base_url=open_server.url, timeout=30) as device:
        assert device.get("/health").status_code == 200
        said = device.post("/chat/text", json={"text": "Hello there"})
        assert (said.status_code, said.json()["response"]) == (200, "Okay.")
        sensors = device.post("/context/sensors", json={"orientation": "face_up"})
        assert sensors.json() == {"status": "ok"}
        upload = {"audio": ("recording.wav", recording(), "audio/wav")}
        heard = device.post("/chat/audio", files=upload)
        assert (heard.status_code, heard.json()["error"]) == (503, "speech_unavailable")
        wav = {"Content-Type": "audio/wav"}
        raw = device.post("/chat/audio/stream", content=recording(), headers=wav)
        assert (raw.status_code, raw.json()["error"]) == (503, "speech_unavailable")


def recording() -> bytes:
    """A second of silence as the firmware records: 16 kHz, 16-bit, mono PCM."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16000)
        wav.writeframes(b"\0\0" * 16000)
    return out.getvalue()


# ------------------------------------------------------------------ 8: a block's texts


def test_a_block_deleted_with_purge_leaves_no_bytes_of_its_texts(
    open_server: ServerProcess, folder: Path
) -> None:
    secret = "Quaxilotl"
    with httpx.Client(base_url=f"{open_server.url}/memory", timeout=30) as memory:
        memory.post("/agents", json={"name": AGENT})
        block = {"agent_name": AGENT, "label": "door", "value": f"The code is {secret}"}
        assert memory.post("/memory-blocks", json=block).status_code == 200
        changed = memory.put(f"/memory-blocks/{AGENT}/door", json={"value": f"Still {secret}"})
        assert changed.status_code == 200
        kept = {"agent_name": AGENT, "label": "plain", "value": "Plain words"}
        memory.post("/memory-blocks", json=kept)
        assert memory.delete(f"/memory-blocks/{AGENT}/plain").status_code == 204
        purged = memory.delete(f"/memory-blocks/{AGENT}/door", params={"purge": "true"})
        assert purged.status_code == 204
        audit = memory.get(f"/audit/{AGENT}").json()["entries"]
    assert [e["action"] for e in audit[:2]] == ["purge", "delete"]
    assert audit[1]["before"] == "Plain words"  # a plain delete keeps its texts, as before
    assert secret not in json.dumps(audit)
    files = (folder / "open").glob("memory.db*")
    assert secret.encode() not in b"".join(path.read_bytes() for path in files)


# ------------------------------------------------------------------ 9: SIGTERM, promptly


def stop_seconds(server: ServerProcess) -> float:
    """How long SIGTERM took to end the server; it ended as a clean stop does (by SIGTERM)."""
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    try:
        server.process.wait(timeout=30)
    finally:
        server.stop()
    assert server.process.returncode == -signal.SIGTERM
    return time.monotonic() - started


def backlog_database(path: Path, messages: int) -> None:
    """A memory whose `messages` memory-API messages still wait to be embedded (a large
    import, or messages stored while the embedder was down)."""
    embedder = FakeEmbedder()
    store = open_database(f"sqlite:///{path}")
    try:
        store.bind_embedding(embedder.model, embedder.dimension)
        for n in range(messages):
            store.append_embedded_message(AGENT, API_SOURCE, "user", f"imported message {n}", None)
    finally:
        store.close()


def test_sigterm_stops_the_start_up_pass_embedding_a_large_backlog_within_5_s(
    tmp_path: Path,
) -> None:
    db_path = tmp_path / "memory.db"
    backlog_database(db_path, 3000)  # 32 a batch, 1.6 s a batch: about 150 s of embedding
    server = lobug(tmp_path, FAKE_EMBED_DELAY_S="0.05")
    time.sleep(2)  # the start-up pass is embedding
    export = httpx.get(f"{server.url}/memory/export/{AGENT}", timeout=30)
    assert export.status_code == 200
    assert stop_seconds(server) < 5, server.log()
    again = lobug(tmp_path)  # the file is whole; the pass goes on where it stopped
    try:
        counts = httpx.get(f"{again.url}/health", timeout=10).json()["memory"]
        assert counts["messages"] == 3000
    finally:
        again.stop()


def test_sigterm_stops_a_server_embedding_a_large_import_within_5_s(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    backlog_database(source / "memory.db", 2000)
    exporter = lobug(source)
    document = httpx.get(f"{exporter.url}/memory/export/{AGENT}", timeout=30).json()
    exporter.stop()
    server = lobug(tmp_path, FAKE_EMBED_DELAY_S="0.02")  # 256 a batch: 5 s a batch
    with ThreadPoolExecutor(1) as pool:
        importing = pool.submit(
            httpx.post, f"{server.url}/memory/import", json=document, timeout=60
        )
        time.sleep(1.5)
        assert not importing.done()
        assert stop_seconds(server) < 5, server.log()
        answer = importing.result()  # never acknowledged
        assert (answer.status_code, answer.json()["error"]) == (503, "server_stopping")
    again = lobug(tmp_path)
    try:  # nothing half-imported: the import is one transaction, after the embedding
        assert httpx.get(f"{again.url}/health", timeout=10).json()["memory"]["messages"] == 0
    finally:
        again.stop()
