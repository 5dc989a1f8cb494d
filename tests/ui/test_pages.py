"""The dashboard through the ASGI app: sessions, CSRF, read-only device sessions, the gate
left as closed as before for the API, and each page's pieces (charts, diff, notes)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from lobug.app import create_app, create_memory_app
from lobug.backends import Backends
from lobug.config import Settings
from lobug.ui.access import safe_next
from lobug.ui.charts import Series, bar_chart, last_days
from lobug.ui.diff import DiffRow, side_by_side
from lobug.ui.sessions import Sessions
from lobug.ui.throttle import FAILURES_PER_CLIENT, SIGN_INS_PER_TOKEN, Throttle

ADMIN = "adm-pages-1-Hq7Rz"
DEVICE = "dev-pages-1-Jt5Wk"
LOOPBACK = "http://127.0.0.1"


@pytest.fixture
def guarded(settings: Settings, backends: Backends) -> Iterator[TestClient]:
    app = create_app(
        settings.with_overrides(admin_tokens=(ADMIN,), device_tokens=(DEVICE,)), backends
    )
    with TestClient(app, base_url=LOOPBACK, follow_redirects=False) as client:
        yield client


def sign_in(client: TestClient, token: str) -> str:
    """Sign in; the CSRF token of the new session."""
    answer = client.post("/ui/signin", data={"token": token, "next": "/ui/facts"})
    assert answer.status_code == 303
    assert answer.headers["location"] == "/ui/facts"
    return csrf_of(client)


def csrf_of(client: TestClient) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get("/ui/facts").text)
    assert found
    return found.group(1)


def add_fact(client: TestClient, token: str, content: str) -> str:
    auth = {"Authorization": f"Bearer {token}"}
    client.post("/memory/agents", json={"name": "lobug"}, headers=auth)
    added = client.post("/memory/facts/lobug", json={"content": content}, headers=auth)
    return str(added.json()["id"])


def test_pages_need_a_session_and_a_session_opens_no_api_route(guarded: TestClient) -> None:
    answer = guarded.get("/ui/facts?type=event")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/ui/signin?next=%2Fui%2Ffacts%3Ftype%3Devent"
    assert (
        guarded.post("/ui/facts", data={"content": "x"})
        .headers["location"]
        .startswith("/ui/signin")
    )
    assert guarded.post("/ui/signin", data={"token": "wrong"}).status_code == 401
    assert guarded.post("/ui/signin", data={"token": ""}).status_code == 401
    answer = guarded.post("/ui/signin", data={"token": ADMIN, "next": "/ui"})
    cookie = answer.headers["set-cookie"]
    for flag in ("HttpOnly", "SameSite=strict", "Path=/ui", "Max-Age=43200"):
        assert flag.lower() in cookie.lower()
    assert guarded.get("/ui").status_code == 200
    assert guarded.get("/memory/agents").status_code == 401
    assert guarded.get("/ui/static/ui.css").status_code == 200


def test_a_change_needs_the_sessions_csrf_token(guarded: TestClient) -> None:
    fact_id = add_fact(guarded, ADMIN, "The user likes tea")
    csrf = sign_in(guarded, ADMIN)
    form = {"agent": "lobug", "pinned": "true"}
    for wrong in ({}, {"csrf": ""}, {"csrf": csrf[:-1] + "x"}):
        refused = guarded.post(f"/ui/facts/{fact_id}/pin", data={**form, **wrong})
        assert refused.status_code == 403
        assert "security token" in refused.text
    assert guarded.post(f"/ui/facts/{fact_id}/pin", data={**form, "csrf": csrf}).status_code == 303
    assert "Pinned" in guarded.get(f"/ui/facts/{fact_id}").text
    shown = guarded.get(
        f"/memory/facts/lobug/{fact_id}", headers={"Authorization": f"Bearer {ADMIN}"}
    )
    assert shown.json()["pinned"] is True


def test_a_device_token_gets_a_read_only_view(guarded: TestClient) -> None:
    fact_id = add_fact(guarded, ADMIN, "The user likes tea")
    csrf = sign_in(guarded, DEVICE)
    facts = guarded.get("/ui/facts").text
    assert "The user likes tea" in facts
    assert 'method="post" action="/ui/facts"' not in facts
    pin = {"agent": "lobug", "pinned": "true", "csrf": csrf}
    assert guarded.post(f"/ui/facts/{fact_id}/pin", data=pin).status_code == 403
    assert guarded.get("/ui/audit").status_code == 403  # as GET /memory/audit: admins only


def test_topics_are_rebuilt_and_read_on_their_page(guarded: TestClient) -> None:
    tea = add_fact(guarded, ADMIN, "The user drinks green tea every morning")
    add_fact(guarded, ADMIN, "The user likes green tea with honey")
    csrf = sign_in(guarded, ADMIN)
    assert "No topics yet" in guarded.get("/ui/topics").text
    back = guarded.post("/ui/topics/rebuild", data={"agent": "lobug", "csrf": csrf})
    assert back.headers["location"] == "/ui/topics?agent=lobug"
    shown = guarded.get(back.headers["location"]).text
    assert "Topics rebuilt: " in shown and "No topics yet" not in shown
    assert f'href="/ui/facts/{tea}?agent=lobug">The user drinks green tea every morning' in shown
    auth = {"Authorization": f"Bearer {ADMIN}"}
    topics = guarded.get("/memory/agents/lobug/topics", headers=auth).json()
    assert topics and all(str(escape(t["name"])) in shown for t in topics)
    assert "(in global memory: " in shown  # learned just now: active

    read_only = sign_in(guarded, DEVICE)
    assert "Rebuild topics now" not in guarded.get("/ui/topics").text
    refused = guarded.post("/ui/topics/rebuild", data={"agent": "lobug", "csrf": read_only})
    assert refused.status_code == 403


def test_signing_out_ends_the_session(guarded: TestClient) -> None:
    csrf = sign_in(guarded, ADMIN)
    cookie = guarded.cookies.get("lobug_session")
    assert guarded.post("/ui/signout", data={"csrf": csrf}).status_code == 303
    guarded.cookies.set("lobug_session", cookie or "", path="/ui")
    assert guarded.get("/ui").status_code == 303


def test_failed_changes_come_back_as_notes(guarded: TestClient) -> None:
    fact_id = add_fact(guarded, ADMIN, "The user likes tea")
    csrf = sign_in(guarded, ADMIN)
    back = guarded.post(
        f"/ui/facts/{fact_id}/score", data={"agent": "lobug", "score": "11", "csrf": csrf}
    )
    assert back.headers["location"] == f"/ui/facts/{fact_id}?agent=lobug"
    assert "whole number from 0 to 10" in guarded.get(back.headers["location"]).text
    guarded.post(f"/ui/facts/{fact_id}/forget", data={"agent": "lobug", "csrf": csrf})
    guarded.post(f"/ui/facts/{fact_id}/pin", data={"agent": "lobug", "pinned": "1", "csrf": csrf})
    assert 'class="note failed"' in guarded.get(f"/ui/facts/{fact_id}").text
    assert guarded.get("/ui/facts/999").status_code == 404


def test_without_tokens_loopback_opens_an_admin_session(
    settings: Settings, backends: Backends
) -> None:
    with TestClient(create_memory_app(settings, backends), base_url=LOOPBACK) as client:
        client.post("/agents", json={"name": "lobug"})
        client.post("/facts/lobug", json={"content": "The user likes tea"})
        page = client.get("/ui")  # through the sign-in page, which opens a session at once
        assert page.status_code == 200
        assert "admin" in page.text and "Chat model" not in page.text
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert "score" in client.get("/ui/search", params={"q": "tea"}).text.lower()


def test_turn_timings_and_the_log_reach_the_overview(client: TestClient) -> None:
    client.post("/chat/text", json={"text": "hello there"}, headers={"X-Device-Id": "desk"})
    page = client.get("/ui").text
    assert "persist_user" in page and ">desk<" in page
    assert page.count("<svg") == 2


def test_the_overview_shows_the_exchanges_parked_after_failing(client: TestClient) -> None:
    assert re.search(r'<li><span class="big">0</span> exchanges parked', client.get("/ui").text)
    store = client.app.state.services.store  # type: ignore[attr-defined]
    asked = store.append_message("lobug", "desk", "user", "I keep bees")
    reply = store.append_reply_for_memory_work("lobug", "desk", "Nice.", asked)
    store.park_exchange(reply.id)
    page = client.get("/ui").text
    assert '<li class="bad"><span class="big">1</span> exchanges parked' in page
    assert "lobug learning retry" in page


def test_sign_in_goes_back_only_to_dashboard_pages() -> None:
    assert safe_next("/ui/facts?type=event") == "/ui/facts?type=event"
    for elsewhere in (None, "", "https://example.com/ui", "//example.com", "/memory/agents"):
        assert safe_next(elsewhere) == "/ui"


def test_sessions_expire_and_are_bounded_per_role() -> None:
    now = [1000.0]
    sessions = Sessions(ttl_s=60, capacity=2, clock=lambda: now[0])
    first, second = sessions.open("admin"), sessions.open("device")
    third = sessions.open("admin")
    assert sessions.find(first.id) == first  # two admins fit beside the device
    sessions.open("admin")
    assert sessions.find(first.id) is None  # the oldest admin made room
    assert sessions.find(third.id) == third and sessions.find(second.id) == second
    now[0] += 61
    assert sessions.find(second.id) is None
    assert sessions.find(None) is None


def test_device_sessions_never_sign_an_admin_out() -> None:
    now = [1000.0]
    sessions = Sessions(ttl_s=60, capacity=3, clock=lambda: now[0])
    admin = sessions.open("admin")
    devices = [sessions.open("device") for _ in range(10)]
    assert sessions.find(admin.id) == admin
    assert [sessions.find(d.id) is not None for d in devices] == [False] * 7 + [True] * 3
    now[0] += 30
    late = sessions.open("admin")
    now[0] += 31  # the first admin's session has expired, the late one has not
    sessions.open("admin")
    sessions.open("admin")
    assert sessions.find(late.id) == late  # expired sessions made the room first


def test_a_throttle_counts_events_in_a_sliding_window() -> None:
    now = [0.0]
    throttle = Throttle(limit=2, window_s=10, clock=lambda: now[0], max_keys=2)
    throttle.record("a")
    now[0] = 4
    throttle.record("a")
    assert throttle.wait_s("a") == 6 and throttle.wait_s("b") == 0
    now[0] = 10.5
    assert throttle.wait_s("a") == 0  # the first left the window
    throttle.record("b")
    throttle.record("c")  # a third key: the idle ones go
    assert throttle.wait_s("c") == 0 and len(throttle) <= 2


def test_sign_in_is_throttled_per_client(guarded: TestClient) -> None:
    for _ in range(FAILURES_PER_CLIENT):
        assert guarded.post("/ui/signin", data={"token": "wrong"}).status_code == 401
    throttled = guarded.post("/ui/signin", data={"token": ADMIN})  # even the right one
    assert throttled.status_code == 429 and int(throttled.headers["retry-after"]) >= 1
    assert "Too many sign-in attempts" in throttled.text
    assert guarded.get("/ui").status_code == 303  # no session was opened


def test_sign_in_is_throttled_per_token(guarded: TestClient) -> None:
    for _ in range(SIGN_INS_PER_TOKEN):
        assert guarded.post("/ui/signin", data={"token": DEVICE}).status_code == 303
    assert guarded.post("/ui/signin", data={"token": DEVICE}).status_code == 429
    assert guarded.post("/ui/signin", data={"token": ADMIN}).status_code == 303


def test_side_by_side_diff_pairs_changed_lines() -> None:
    assert side_by_side("a\nb\nc", "a\nB\nc\nd") == [
        DiffRow("a", "a", "same"),
        DiffRow("b", "B", "changed"),
        DiffRow("c", "c", "same"),
        DiffRow(None, "d", "added"),
    ]
    assert side_by_side("a\nb", "a") == [DiffRow("a", "a", "same"), DiffRow("b", None, "removed")]


def test_a_bar_chart_draws_one_bar_per_day_and_series() -> None:
    days = last_days(3, date(2026, 1, 2))
    assert days == ["2025-12-31", "2026-01-01", "2026-01-02"]
    svg = bar_chart("Growth <per day>", days, [Series("a&b", [1, 0, 4], "s1")], "items")
    assert svg.count('<rect class="s1"') == 4  # three bars and the legend's swatch
    assert "Growth &lt;per day&gt;" in svg and "4 a&amp;b" in svg


def test_every_change_of_the_dashboard_reaches_the_store(client: TestClient) -> None:
    """On loopback without tokens: add and correct a fact, write the base memory twice, edit a
    block, forget a span of conversation; each is read back through the API."""
    client.post("/chat/text", json={"text": "my cat is Tom"}, headers={"X-Device-Id": "desk"})
    client.post(
        "/memory/memory-blocks", json={"agent_name": "lobug", "label": "human", "value": ""}
    )
    csrf = csrf_of(client)
    form = {"agent": "lobug", "csrf": csrf}
    client.post("/ui/facts", data={**form, "content": "The user has a cat", "type": "identity"})
    fact_id = client.get("/memory/facts/lobug").json()["facts"][0]["id"]
    client.post(f"/ui/facts/{fact_id}/correct", data={**form, "content": "The user has a cat, Tom"})
    client.post(f"/ui/facts/{fact_id}/score", data={**form, "score": ""})
    for text in ("Tom is a cat.", "Tom is a grey cat."):
        client.post("/ui/base-memory", data={**form, "content": text})
    client.post("/ui/blocks/human", data={**form, "value": "Has a cat"})
    assert [f["content"] for f in client.get("/memory/facts/lobug").json()["facts"]] == [
        "The user has a cat, Tom"
    ]
    assert client.get("/memory/base-memory/lobug").json()["content"] == "Tom is a grey cat."
    assert client.get("/memory/memory-blocks/lobug/human").json()["value"] == "Has a cat"
    diff = client.get("/ui/base-memory").text
    assert 'class="del">Tom is a cat.' in diff and 'class="add">Tom is a grey cat.' in diff

    day = client.get("/ui/conversations", params={"pick": "desk|nonsense", "q": "cat"}).text
    times = re.findall(r'name="since" value="([^"]+)"', day)
    assert len(times) == 2 and "my cat is Tom" in day
    span = {**form, "device": "desk", "day": "x", "since": times[0], "until": times[1]}
    done = client.post("/ui/conversations/forget", data=span, follow_redirects=True)
    assert "Forgot 2 messages" in done.text
    assert client.get("/memory/messages/lobug").json() == []
    for path in ("/ui/blocks", "/ui/audit", "/ui/search", "/ui/facts?history=true&type=event"):
        assert client.get(path).status_code == 200


def test_the_dashboard_deletes_a_block_and_purges_its_texts(client: TestClient) -> None:
    client.post(
        "/memory/memory-blocks", json={"agent_name": "lobug", "label": "pin", "value": "1234"}
    )
    form = {"agent": "lobug", "csrf": csrf_of(client)}
    assert 'action="/ui/blocks/pin/delete"' in client.get("/ui/blocks").text
    done = client.post(
        "/ui/blocks/pin/delete", data={**form, "purge": "true"}, follow_redirects=True
    )
    assert "deleted with its history and its texts erased" in done.text
    assert client.get("/memory/memory-blocks/lobug/pin").status_code == 404
    entries = client.get("/memory/audit/lobug").json()["entries"]
    assert entries[0]["action"] == "purge" and "1234" not in str(entries)
