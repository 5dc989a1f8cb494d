"""Facts typed and dated, and derived memory that says how it was made, through a real server
process (fake models: the chat learns the user's words as a fact and answers every summary
with "Okay.", so each summary and base memory is built without it) over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.e2e.fake_server import start
from tests.e2e.server import ServerProcess, wait_for_learning

pytestmark = pytest.mark.e2e

HIKE = "On Friday I'm hiking at Multnomah Falls with my sister."
SAID = (HIKE, "I have a dog called Biscuit.", "My name is Maya and I live in Edinburgh.")
NOTES = ("Extractive summary", "the model's summary failed", "Key facts (listed")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    env = {
        "LOBUG_DB_PATH": str(tmp_path / "memory.db"),
        "LOBUG_SPEECH": "0",
        "LOBUG_DREAM_AT": "off",
        "LOBUG_TIMEZONE": "UTC",
        "LOBUG_SHORT_TERM_THRESHOLD": "4",
        "LOBUG_SHORT_TERM_KEEP": "1",
        "LOBUG_LONG_TERM_THRESHOLD": "1",
        "LOBUG_LONG_TERM_KEEP": "0",
    }
    process = start("serve", tmp_path / "server.log", env)
    yield process
    process.stop()


def test_a_plan_is_a_dated_event_and_derived_text_says_how_it_was_made(
    server: ServerProcess,
) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as http:
        for text in SAID:
            assert http.post("/chat/text", json={"text": text}).status_code == 200
        wait_for_learning(http)
        facts = http.get("/memory/facts/lobug").json()["facts"]
        (hike,) = [f for f in facts if "Multnomah" in f["content"]]
        assert hike["type"] == "event"
        due = datetime.fromisoformat(hike["due_at"].replace("Z", "+00:00"))
        said = datetime.fromisoformat(hike["created_at"].replace("Z", "+00:00"))
        assert due.weekday() == 4 and timedelta(0) < due - said <= timedelta(days=7)
        assert due.tzinfo is not None and due.astimezone(UTC).hour == 0
        assert {f["confidence"] for f in facts} == {0.6}  # grounded extractions

        summaries = http.get("/memory/summaries/lobug").json()
        assert summaries and {s["made_by"] for s in summaries} == {"extractive"}
        assert all("dropped_sentences" in s for s in summaries)
        base = http.get("/memory/base-memory/lobug").json()
        assert base["made_by"] == "extractive" and base["content"]
        rebuilt = http.post("/memory/agents/lobug/topics/rebuild").json()
        shown = [s["content"] for s in summaries] + [base["content"]]
        shown += [t["summary"] for t in rebuilt]
        assert not [text for text in shown for note in NOTES if note in text]
        # no token: the sign-in page opens a session at once, then the page is shown
        page = http.get("/ui/base-memory", params={"agent": "lobug"}, follow_redirects=True)
        assert page.status_code == 200 and "Made by: extractive" in page.text
