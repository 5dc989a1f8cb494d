"""The README's examples run as written: the MemoryEngine examples (in a temporary folder, the
fake models standing in for the configured ones), the quick start's commands, the database
one-liner, the `learning()`, proxy and memory API examples against a real server process (the
bundled models, as `make run` serves them), and the command line session on a fresh database
(the real embedding model), compared with what the README shows."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from lobug import engine
from tests.e2e.server import ServerProcess, start_server
from tests.fakes import FakeChat, FakeEmbedder

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
# The manual's guides, where the examples below stand (the README links them).
GUIDES = (README, *sorted((REPO / "docs").glob("*.md")))
SPEECH_READY_S = 240
SHELL_TIMEOUT_S = 300
README_HOME = "/home/alex"  # the home folder the README's session shows
SCORE = re.compile(r"\d\.\d{3}")


def section(title: str) -> str:
    """The manual's text under the heading `title` (`## Name`), up to the next `## `: in the
    README or the guide of `docs/` that holds it."""
    text = next(
        found
        for found in (guide.read_text(encoding="utf-8") for guide in GUIDES)
        if f"\n{title}\n" in found
    )
    return text.split(f"\n{title}\n", 1)[1].split("\n## ", 1)[0]


def blocks(title: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section(title), flags=re.DOTALL)


def block_with(title: str, language: str, needle: str) -> str:
    return next(b for b in blocks(title, language) if needle in b)


def engine_examples() -> list[str]:
    return blocks("## Memory in your program: MemoryEngine", "python")


@pytest.mark.parametrize("example", engine_examples())
def test_readme_example_runs(
    example: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(engine, "build_chat", lambda settings: FakeChat())
    monkeypatch.setattr(engine, "build_embedder", lambda settings: FakeEmbedder())
    exec(compile(example, str(README), "exec"), {})
    assert capsys.readouterr().out
    assert (tmp_path / "memory.db").exists()


def test_the_readme_has_engine_examples() -> None:
    assert len(engine_examples()) == 2


# ---------------------------------------------------------------------- against a server


def shell(script: str, env: dict[str, str] | None = None, cwd: Path = REPO) -> str:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=SHELL_TIMEOUT_S,
    )
    assert done.returncode == 0, f"{script}\n{done.stderr}"
    return done.stdout


def json_documents(text: str) -> list[Any]:
    """The JSON documents `curl -s` printed one after another."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text.rstrip()):
        document, at = decoder.raw_decode(text, at)
        found.append(document)
        while at < len(text) and text[at].isspace():
            at += 1
    return found


def wait_for_speech(server: ServerProcess) -> None:
    deadline = time.monotonic() + SPEECH_READY_S
    while time.monotonic() < deadline:
        speech = httpx.get(f"{server.url}/health", timeout=10).json()["speech"]
        if speech["ready"]:
            return
        assert speech["loading"], speech
        time.sleep(0.5)
    raise AssertionError("the speech models did not load")


def at(server: ServerProcess, text: str, readme_address: str) -> str:
    return text.replace(readme_address, server.url.removeprefix("http://"))


def run_python_example(example: str, capsys: pytest.CaptureFixture[str]) -> str:
    exec(compile(example, str(README), "exec"), {})
    return capsys.readouterr().out


@pytest.mark.e2e
@pytest.mark.models
@pytest.mark.timeout(900)  # the bundled models load, then reply to five turns, on 2 cores
def test_the_quick_start_and_the_examples_run_against_a_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The quick start's curl commands (the sample recording included) and its database
    one-liner, then `learning()`, the proxy and the memory API examples, each as written but
    for the server's port; the samples ask questions, so nobody's identity is planted."""
    db_path = tmp_path / "memory.db"
    server = start_server(db_path, tmp_path / "server.log")
    try:
        wait_for_speech(server)
        quick = block_with("## Quick start", "sh", "curl")
        asked = re.findall(r'"text":"([^"]*)"', quick)
        assert asked and all(text.endswith("?") for text in asked), asked
        said, health, heard = json_documents(shell(at(server, quick, "localhost:8321")))
        assert set(said) == {"response", "action"} and health["status"] == "ok"
        assert heard["action"] == "respond"
        assert "help me with" in heard["transcription"].lower()

        inspect = block_with("## Quick start", "sh", "open_database")
        python = inspect.replace(".venv/bin/python", sys.executable)
        shown = shell(python, {"LOBUG_DB_PATH": str(db_path)})
        assert f"     user: {asked[0]}" in shown
        assert "base memory:" in shown

        learning = at(server, blocks("## learning()", "python")[0], "127.0.0.1:8321")
        assert run_python_example(learning, capsys).strip()
        kept = httpx.get(f"{server.url}/memory/messages/my_agent", timeout=10).json()
        assert "Hi" in [m["content"] for m in kept]
        proxy = blocks("## OpenAI-compatible memory proxy", "python")[0]
        run_python_example(at(server, proxy, "127.0.0.1:8321"), capsys)

        example = blocks("## Memory API", "sh")[0]
        curls = "\n".join(c for c in example.splitlines() if c.startswith("curl"))
        created = shell(at(server, curls, "localhost:8283").replace("/agents", "/memory/agents"))
        assert json.loads(created)["name"] == "my_agent"
    finally:
        server.stop()


# ---------------------------------------------------------------------- the command line


def cli_session() -> list[tuple[str, list[str]]]:
    """The `$ command` lines of the README's example session, each with what it prints."""
    example = block_with("## Command line", "sh", "$ lobug facts add")
    session: list[tuple[str, list[str]]] = []
    for line in example.splitlines():
        if line.startswith("$ "):
            session.append((line[2:], []))
        else:
            session[-1][1].append(line)
    return session


def normalized(lines: list[str], home: str) -> list[list[str]]:
    """Each line's words, times and byte counts aside, the home folder as the README's."""
    words = []
    for line in lines:
        line = line.replace(home, README_HOME)
        line = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "<time>", line)
        words.append(re.sub(r"\(\d+ bytes", "(<n> bytes", line).split())
    return words


def same_words(printed: list[str], shown: list[str]) -> bool:
    """The same words; scores (0.580) may differ by 0.01 (another CPU's arithmetic)."""
    if len(printed) != len(shown):
        return False
    for got, want in zip(printed, shown, strict=True):
        if SCORE.fullmatch(got) and SCORE.fullmatch(want):
            if abs(float(got) - float(want)) > 0.01:
                return False
        elif got != want:
            return False
    return True


@pytest.mark.models
def test_the_command_line_session_runs_as_written_on_a_fresh_database(tmp_path: Path) -> None:
    home = tmp_path / "alex"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "LOBUG_LOG_LEVEL": "warning",
    }
    unset = "unset LOBUG_DB_PATH LOBUG_DATABASE_URL LOBUG_URL LOBUG_TOKEN XDG_DATA_HOME; "
    session = cli_session()
    assert len(session) >= 6
    for command, shown in session:
        printed = shell(unset + command, env, cwd=home).splitlines()
        got, want = normalized(printed, str(home)), normalized(shown, str(home))
        assert len(got) == len(want) and all(
            same_words(g, w) for g, w in zip(got, want, strict=True)
        ), f"$ {command}\nprinted:\n" + "\n".join(printed)
