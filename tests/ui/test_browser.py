"""The dashboard in a real browser (Chromium through Playwright) against a real server process
with the fake model: sign in, curate a fact created through the API, forget a span of
conversation, learn and forget a person's voice from uploaded recordings (the real speaker
model), and check every effect through the API and in the database; screenshots of every
page, desktop and phone width, under the test run's temporary folder. Any console error fails.

Run with `-m browser`; skipped (with the command that installs it) where Chromium is missing.
`LOBUG_UPDATE_SCREENSHOTS=1` also copies the Facts page to docs/dashboard-facts.png."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lobug.store.sqlite.database import open_connection
from tests.e2e.server import ServerProcess, free_port, wait_until_healthy

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
INSTALL = "apt-get install -y chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ADMIN = "adm-browser-7Qx-Lw4"
DEVICE = "dev-browser-2Lp-Nc8"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
TABLET = {"width": 960, "height": 800}  # just wider than where tables turn into cards
REPO = Path(__file__).resolve().parents[2]
FACTS = [
    ("The user's sister is called Ana", "identity"),
    ("The user likes green tea", "preference"),
    ("The user's dog Rex is afraid of thunder", "identity"),
    ("The user's dentist appointment is on Friday at 10", "event"),
    (
        "The user is planning a long summer journey with their sister Ana through the "
        "mountain villages of northern Portugal, staying in small guesthouses, walking "
        "between them with light backpacks and stopping for lunch wherever the view is good",
        "commitment",
    ),
    ("The user bakes sourdough bread on Saturdays", "preference"),
]
PAGES = ["/ui", "/ui/conversations", "/ui/facts", "/ui/base-memory", "/ui/blocks"]
PAGES += ["/ui/topics", "/ui/search?q=sister", "/ui/audit", "/ui/people"]
LONG_MESSAGE = (
    "Tomorrow morning I would like to remember to call the plumber about the dripping kitchen "
    "tap, then pick up the parcel at the post office before it closes, and in the afternoon "
    "water the tomatoes in the greenhouse because the forecast says it will be very hot"
)
# Every word of every table cell on one line: JavaScript listing the words that wrap inside.
BROKEN_WORDS_JS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll('main td, main th')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()]
          .filter(r => r.width > 0).map(r => Math.round(r.bottom)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
  }
  return broken;
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium is missing: install it with `{INSTALL}` (as root)")
    folder = tmp_path_factory.mktemp("dashboard")
    port = free_port()
    env = {
        **os.environ,
        "LOBUG_DB_PATH": str(folder / "memory.db"),
        "LOBUG_PORT": str(port),
        "LOBUG_ADMIN_TOKENS": ADMIN,
        "LOBUG_DEVICE_TOKENS": DEVICE,
        "LOBUG_SPEECH": "off",
        "LOBUG_SPEAKER_RECOGNITION": "1",  # the People page learns voices from uploads
    }
    log_path = folder / "server.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.ui.fake_server"],
            env=env,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    running = ServerProcess(process, f"http://127.0.0.1:{port}", log_path)
    wait_until_healthy(running)
    seed(running.url)
    yield running
    running.stop()


def api(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=10)


def seed(url: str) -> None:
    """Conversation on two devices, facts, a block and two base memory versions."""
    with api(url) as client:
        for device, text in [
            ("kitchen", "good morning"),
            ("kitchen", "my sister Ana visits on Sunday"),
            ("kitchen", "remind me to buy bread"),
            ("desk", "what time is it"),
            ("hall", LONG_MESSAGE),
        ]:
            said = client.post("/chat/text", json={"text": text}, headers={"X-Device-Id": device})
            assert said.status_code == 200
        for content, kind in FACTS:
            added = client.post("/memory/facts/lobug", json={"content": content, "type": kind})
            assert added.status_code == 201
        flags = {"pinned": True, "user_score": 8}
        client.patch(f"/memory/facts/lobug/{added.json()['id']}", json=flags).raise_for_status()
        client.post(
            "/memory/memory-blocks",
            json={
                "agent_name": "lobug",
                "label": "human",
                "value": "Lives in Lisbon",
                "limit": 200,
            },
        ).raise_for_status()
        client.post(
            "/memory/memory-blocks",
            json={"agent_name": "lobug", "label": "persona", "value": "Kind", "read_only": True},
        ).raise_for_status()
        for text in ["Ana is the user's sister.", "Ana is the user's sister.\nThe user bakes."]:
            client.put("/memory/base-memory/lobug", json={"content": text}).raise_for_status()


def database_rows(server: ServerProcess, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    conn = open_connection(server.log_path.parent / "memory.db")
    try:
        return list(conn.execute(sql, params).fetchall())
    finally:
        conn.close()


@pytest.fixture(scope="module")
def browser(server: ServerProcess) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def console_errors() -> Iterator[list[str]]:
    errors: list[str] = []
    yield errors
    assert errors == []


def open_page(
    browser: Any, server: ServerProcess, errors: list[str], viewport: Any = DESKTOP
) -> Any:
    context = browser.new_context(viewport=viewport, base_url=server.url)
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda dialog: dialog.accept())
    return page


def sign_in(page: Any, token: str = ADMIN, wanted: str = "/ui") -> None:
    page.goto(wanted)
    assert "/ui/signin" in page.url
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(re.escape(wanted.split("?")[0])))


def fact_id_of(server: ServerProcess, text: str) -> str:
    with api(server.url) as client:
        found = client.get("/memory/facts/lobug", params={"q": text}).json()["facts"]
    return str(next(f["id"] for f in found if f["content"] == text))


def test_without_a_session_pages_go_to_sign_in_and_writes_need_the_csrf_token(
    browser: Any, server: ServerProcess, console_errors: list[str]
) -> None:
    page = open_page(browser, server, console_errors)
    page.goto("/ui/facts")
    assert re.search(r"/ui/signin\?next=%2Fui%2Ffacts$", page.url)
    page.get_by_label("Token").fill("not-a-token")
    page.get_by_role("button", name="Sign in").click()
    assert page.get_by_role("alert").inner_text() == "That token is not valid."
    console_errors.clear()  # the refused sign-in answers 401, which the console reports
    sign_in(page, wanted="/ui/facts")
    assert page.get_by_role("heading", name="Facts").is_visible()
    fact_id = fact_id_of(server, "The user likes green tea")
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    with httpx.Client(base_url=server.url, cookies=cookies) as client:
        refused = client.post(f"/ui/facts/{fact_id}/pin", data={"agent": "lobug", "pinned": "true"})
        assert refused.status_code == 403
        assert client.get("/memory/facts/lobug").status_code == 401  # a session is no token
    with api(server.url) as client:
        assert client.get(f"/memory/facts/lobug/{fact_id}").json()["pinned"] is False
    page.context.close()


def test_a_fact_created_through_the_api_is_edited_pinned_scored_and_forgotten(
    browser: Any, server: ServerProcess, console_errors: list[str]
) -> None:
    page = open_page(browser, server, console_errors)
    sign_in(page, wanted="/ui/facts")
    page.get_by_label("Text").fill("sister")
    page.get_by_role("button", name="Filter").click()
    page.get_by_role("link", name="The user's sister is called Ana").click()
    old_id = fact_id_of(server, "The user's sister is called Ana")

    page.get_by_label("Corrected text").fill("The user's sister is called Ana Sofia")
    page.get_by_role("button", name="Save correction").click()
    assert "new version" in page.get_by_role("status").inner_text()
    page.get_by_role("link", name="Open the current version").click()
    new_id = fact_id_of(server, "The user's sister is called Ana Sofia")
    with api(server.url) as client:
        chain = client.get(f"/memory/facts/lobug/{new_id}").json()["versions"]
    assert [v["id"] for v in chain] == [old_id, new_id]

    page.get_by_role("button", name="Pin (always in the prompt)").click()
    assert page.locator("#fact-pinned").inner_text() == "yes"
    page.get_by_label("Score 0-10").fill("9")
    page.get_by_role("button", name="Save score").click()
    assert page.locator("#fact-score").inner_text() == "9"
    with api(server.url) as client:
        shown = client.get(f"/memory/facts/lobug/{new_id}").json()
    assert (shown["pinned"], shown["user_score"]) == (True, 9)

    page.get_by_label("also erase its text (purge)").check()
    page.get_by_role("button", name="Forget").click()
    assert page.locator("#fact-state").inner_text() == "purged"
    rows = database_rows(
        server, "SELECT content, forgotten_at FROM facts WHERE id IN (?, ?)", (old_id, new_id)
    )
    assert [(r[0], r[1] is not None) for r in rows] == [("", True), ("", True)]
    with api(server.url) as client:
        current = {f["content"] for f in client.get("/memory/facts/lobug").json()["facts"]}
    assert current == {content for content, _ in FACTS[1:]}
    page.context.close()


def test_a_span_of_conversation_is_forgotten(
    browser: Any, server: ServerProcess, console_errors: list[str]
) -> None:
    page = open_page(browser, server, console_errors)
    sign_in(page, wanted="/ui/conversations?device=kitchen")
    rows = page.locator("table[data-span] tbody tr")
    assert rows.count() == 6  # three turns: each a message and its answer
    rows.nth(2).get_by_label(re.compile("Span starts")).check()
    rows.nth(3).get_by_label(re.compile("Span ends")).check()
    assert page.locator("tr.selected").count() == 2
    page.get_by_role("button", name="Forget the chosen span").click()
    assert "Forgot 2 messages" in page.get_by_role("status").inner_text()
    assert page.locator("table[data-span] tbody tr").count() == 4
    with api(server.url) as client:
        left = [m["content"] for m in client.get("/memory/messages/lobug").json()]
    assert "my sister Ana visits on Sunday" not in left
    assert "remind me to buy bread" in left
    found = database_rows(
        server, "SELECT COUNT(*) FROM conversation_log WHERE content LIKE ?", ("%Sunday%",)
    )
    assert found[0][0] == 0
    page.context.close()


def test_a_persons_voice_is_learnt_from_uploads_and_forgotten(
    browser: Any, server: ServerProcess, console_errors: list[str]
) -> None:
    with api(server.url) as client:
        maxim = client.post("/memory/people/lobug", json={"name": "Maxim"}).json()["id"]
    page = open_page(browser, server, console_errors)
    sign_in(page, wanted=f"/ui/people?agent=lobug&person={maxim}")
    voices = REPO / "tests" / "data" / "voices"
    page.get_by_label("Recordings").set_input_files(
        [voices / "carlo-1.wav", voices / "maxim-1.wav"]
    )
    page.get_by_role("button", name="Learn Maxim's voice").click()
    assert "does not sound like the others" in page.get_by_role("status").inner_text()
    clips = [voices / f"maxim-{n}.wav" for n in (1, 2, 3)]
    page.get_by_label("Recordings").set_input_files(clips)
    page.get_by_role("button", name="Learn Maxim's voice").click()
    assert "from 3 recordings" in page.get_by_role("status").inner_text()
    with api(server.url) as client:
        listed = client.get("/memory/people/lobug").json()
    assert [p["voice_profiles"] for p in listed if p["id"] == maxim] == [1]
    rows = database_rows(server, "SELECT length(embedding) FROM voice_profiles")
    assert rows == [(256 * 4,)]  # one embedding, no audio
    page.get_by_role("button", name="Forget Maxim's voice").click()
    assert "Forgot Maxim's voice" in page.get_by_role("status").inner_text()
    assert database_rows(server, "SELECT COUNT(*) FROM voice_profiles") == [(0,)]
    page.context.close()


def test_every_page_fits_a_phone_and_a_device_token_only_looks(
    browser: Any, server: ServerProcess, console_errors: list[str], tmp_path: Path
) -> None:
    for name, viewport in [("desktop", DESKTOP), ("phone", PHONE)]:
        page = open_page(browser, server, console_errors, viewport)
        sign_in(page)
        for path in PAGES:
            page.goto(path)
            assert page.get_by_role("heading", level=1).is_visible()
            if viewport is PHONE:
                overflow = page.evaluate("document.documentElement.scrollWidth")
                assert overflow <= PHONE["width"], path
            shot = tmp_path / f"{name}-{path.strip('/').split('?')[0].replace('/', '-')}.png"
            page.screenshot(path=str(shot), full_page=True)
        page.context.close()
    if os.environ.get("LOBUG_UPDATE_SCREENSHOTS") == "1":
        shutil.copy(tmp_path / "desktop-ui-facts.png", REPO / "docs" / "dashboard-facts.png")

    page = open_page(browser, server, console_errors)
    sign_in(page, token=DEVICE, wanted="/ui/facts")
    assert page.locator("form[method=post][action^='/ui/facts']").count() == 0
    assert "read-only" in page.locator(".role").inner_text()
    console_errors.clear()
    page.context.close()


def test_table_cells_break_between_words_only_and_headings_sit_above_their_charts(
    browser: Any, server: ServerProcess, console_errors: list[str], tmp_path: Path
) -> None:
    """At 1,280, 960 and 390 px no word of a table cell wraps inside ("Confiden ce", "as si
    st an t", "03 :2 3: 49" before), long texts included, and nothing scrolls sideways; "Last
    30 days" is above its charts."""
    long_fact = fact_id_of(server, FACTS[4][0])
    pages = [*PAGES, "/ui/conversations?device=hall", f"/ui/facts/{long_fact}"]
    for name, viewport in [("desktop", DESKTOP), ("phone", PHONE), ("tablet", TABLET)]:
        page = open_page(browser, server, console_errors, viewport)
        sign_in(page)
        for path in pages:
            page.goto(path)
            shot = tmp_path / f"{name}-{path.strip('/').split('?')[0].replace('/', '-')}.png"
            page.screenshot(path=str(shot), full_page=True)
            assert page.evaluate(BROKEN_WORDS_JS) == [], f"{path} at {viewport['width']} px"
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        page.goto("/ui")
        heading = page.get_by_role("heading", name="Last 30 days (UTC)").bounding_box()
        charts = page.locator(".charts figure").first.bounding_box()
        assert heading["y"] + heading["height"] <= charts["y"]
        page.context.close()
