"""`lobug chat`: a conversation at the terminal, with the running server (`/chat/text` as a
device) or, when none answers, with an assistant in this process (the same services `lobug
serve` opens). Line editing and a history file on a terminal; `/facts`, `/forget` (the last
exchange, as "forget that" said to a device) and `/quit`."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Protocol

import click

from lobug.config import Settings
from lobug.store.models import FactQuery

FORGET_LAST = "forget that"
HELP = "/facts lists what I know, /forget forgets the last exchange, /quit ends"


class Conversation(Protocol):
    def say(self, text: str) -> str: ...

    def facts(self) -> list[str]: ...

    def close(self) -> None: ...


class ServerConversation:
    """A device talking to a running server."""

    def __init__(self, url: str, device: str, token: str | None) -> None:
        import httpx

        headers = {"X-Device-Id": device}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=300)
        self.agent = self.http.get("/health").json().get("agent", "lobug")

    def say(self, text: str) -> str:
        answer = self.http.post("/chat/text", json={"text": text})
        if answer.is_error:
            return f"(the server answered {answer.status_code}: {answer.text[:200]})"
        return str(answer.json()["response"])

    def facts(self) -> list[str]:
        answer = self.http.get(f"/memory/facts/{self.agent}")
        return [f["content"] for f in answer.json().get("facts", [])] if answer.is_success else []

    def close(self) -> None:
        self.http.close()


class LocalConversation:
    """The assistant in this process; what it learns is queued like on the server."""

    def __init__(self, settings: Settings, device: str) -> None:
        from lobug.services import open_services

        self.services = open_services(settings)
        self.device = device

    def say(self, text: str) -> str:
        turn = self.services.assistant.reply(self.device, text)
        if turn.exchange is not None:
            self.services.memory_work.submit(turn.exchange)
        return turn.response

    def facts(self) -> list[str]:
        agent = self.services.assistant.session(self.device).state().agent
        found, _ = self.services.store.list_facts(agent, FactQuery(limit=20))
        return [fact.content for fact in found]

    def close(self) -> None:
        self.services.close()


def server_running(url: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def lines(prompt: str) -> Iterator[str]:
    """What the person types: with line editing and history on a terminal."""
    interactive = sys.stdin.isatty()
    if interactive:
        keep_history()
    while True:
        try:
            line = input(prompt) if interactive else sys.stdin.readline()
        except EOFError:
            return
        if not interactive and not line:
            return
        yield line.strip()


def keep_history() -> None:
    import atexit
    import readline

    from platformdirs import user_state_path

    path = user_state_path("lobug") / "chat_history"
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        readline.read_history_file(path)
    readline.set_history_length(1000)
    atexit.register(readline.write_history_file, path)


@click.command()
@click.option("--device", default="terminal", show_default=True, help="the device id to talk as")
@click.option("--url", envvar="LOBUG_URL", help="the server (default: LOBUG_HOST:LOBUG_PORT)")
@click.option("--token", envvar="LOBUG_TOKEN", help="a device or admin token")
@click.option("--local", is_flag=True, help="always talk to an assistant in this process")
def chat(device: str, url: str | None, token: str | None, local: bool) -> None:
    """Talk to the assistant. /facts, /forget, /quit."""
    settings = Settings.from_env(os.environ)
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    url = url or f"http://{host}:{settings.port}"
    conversation: Conversation
    if not local and server_running(url):
        click.echo(f"talking to {url} as {device}; {HELP}", err=True)
        conversation = ServerConversation(url, device, token)
    else:
        click.echo(f"no server at {url}: loading the assistant here; {HELP}", err=True)
        conversation = LocalConversation(settings, device)
    try:
        converse(conversation)
    finally:
        conversation.close()


def converse(conversation: Conversation) -> None:
    for line in lines("you> "):
        if line == "/quit":
            return
        if line == "/facts":
            click.echo("\n".join(f"- {fact}" for fact in conversation.facts()) or "(no facts)")
        elif line == "/forget":
            click.echo(f"lobug> {conversation.say(FORGET_LAST)}")
        elif line.startswith("/"):
            click.echo(HELP)
        elif line:
            click.echo(f"lobug> {conversation.say(line)}")
