"""The memory dashboard at `/ui`: server-rendered pages to review and curate what Lo-Bug
remembers, on the device server and on `lobug memory-server` alike.

Pages call the same curation and store methods as the REST API, in-process; sessions and CSRF
in `sessions.py` and `access.py`; the templates and the hand-written CSS and script beside
this module (nothing is fetched from elsewhere)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from lobug.ui import conversations, facts, lookups, memory, overview, people, signin, topics
from lobug.ui.access import install_access_handlers
from lobug.ui.sessions import Sessions
from lobug.ui.throttle import SignInThrottle
from lobug.web.roles import UI_PREFIX

STATIC = Path(__file__).parent / "static"


def install_ui(app: FastAPI) -> None:
    app.state.ui_sessions = Sessions()
    app.state.ui_sign_ins = SignInThrottle()
    install_access_handlers(app)
    for module in (signin, overview, conversations, facts, memory, topics, people, lookups):
        app.include_router(module.router)
    app.mount(f"{UI_PREFIX}/static", StaticFiles(directory=STATIC), name="ui-static")
