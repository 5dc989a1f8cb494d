"""The dashboard's first page: health of the models and speech, the chosen agent's counts,
the learning queue (with the exchanges parked after failing), the database's size, each
device with its last message, and two charts of the last 30 days: memory growth (messages and
facts stored) and reply latency (from the log's timestamps). On the device server, the stage
timings of the last turns (`Server-Timing`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from lobug.services import HEALTH_PROBE_TTL_S, MemoryServices, Services
from lobug.ui.access import ViewerDep
from lobug.ui.charts import Series, bar_chart, last_days
from lobug.ui.render import AgentChoice, choose_agent, page
from lobug.web.deps import MemoryDep

router = APIRouter(include_in_schema=False)
CHART_DAYS = 30
RECENT_TURNS_SHOWN = 10
DEVICE_DAYS_READ = 1000


@dataclass(frozen=True)
class Check:
    name: str
    state: str
    ok: bool


@dataclass(frozen=True)
class Activity:
    queued: int
    parked: int  # exchanges whose learning failed MAX_ATTEMPTS times, kept for a retry
    db_bytes: int
    devices: list[tuple[str, float]]  # (device, its last message), newest first
    growth: Markup
    latency: Markup


def device_services(request: Request) -> Services | None:
    """The device server's services; None on `lobug memory-server`."""
    return getattr(request.app.state, "services", None)


async def health_checks(svc: MemoryServices, device: Services | None) -> list[Check]:
    embedder = svc.embedder
    checks = [Check("Embeddings", f"{embedder.name} {embedder.model} ({embedder.dimension})", True)]
    if device is not None:
        reachable = await device.llm_reachable(HEALTH_PROBE_TTL_S)
        state = "reachable" if reachable else "unreachable"
        checks.append(
            Check("Chat model", f"{device.chat.name} {device.chat.model}: {state}", reachable)
        )
        checks.append(speech_check(device.speech_status()))
    auth = "tokens" if svc.settings.tokens_required else "open (no tokens configured)"
    checks.append(Check("Access", auth, True))
    return checks


def speech_check(status: dict[str, Any]) -> Check:
    if status["ready"]:
        return Check("Speech", f"ready: {status['stt']} / {status['tts']}", True)
    if status["loading"]:
        return Check("Speech", "loading", True)
    return Check("Speech", f"off: {status['error'] or 'not configured'}", False)


def database_bytes(db_path: Path) -> int:
    """The database file with its write-ahead log and shared-memory file."""
    files = [db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")]
    return sum(f.stat().st_size for f in files if f.exists())


def last_seen(svc: MemoryServices, agent: str) -> list[tuple[str, float]]:
    seen: dict[str, float] = {}
    for day in svc.store.conversation_days(agent, DEVICE_DAYS_READ):
        seen[day.device_id] = max(seen.get(day.device_id, 0.0), day.last_at)
    return sorted(seen.items(), key=lambda pair: -pair[1])


def charts(svc: MemoryServices, agent: str | None) -> tuple[Markup, Markup]:
    today = datetime.now(UTC).date()
    days = last_days(CHART_DAYS, today)
    since = datetime.combine(datetime.fromisoformat(days[0]), time(), UTC).timestamp()
    growth = {g.day: g for g in svc.store.growth_by_day(agent, since)} if agent else {}
    latency = (
        {d.day: d.mean_s for d in svc.store.reply_latency_by_day(agent, since)} if agent else {}
    )
    growth_chart = bar_chart(
        "Memory growth per day",
        days,
        [
            Series("messages", [growth[d].messages if d in growth else 0 for d in days], "s1"),
            Series("facts", [growth[d].facts if d in growth else 0 for d in days], "s2"),
        ],
        "items",
    )
    latency_chart = bar_chart(
        "Reply latency per day (mean)",
        days,
        [Series("seconds", [latency.get(d, 0.0) for d in days], "s3")],
        "s",
    )
    return growth_chart, latency_chart


def activity(svc: MemoryServices, agent: str | None) -> Activity:
    """Blocking."""
    growth, latency = charts(svc, agent)
    return Activity(
        queued=svc.store.count_queued_exchanges(),
        parked=svc.store.count_parked_exchanges(),
        db_bytes=database_bytes(svc.settings.db_path),
        devices=last_seen(svc, agent) if agent else [],
        growth=growth,
        latency=latency,
    )


@router.get("/ui")
async def overview(
    request: Request, viewer: ViewerDep, svc: MemoryDep, agent: str | None = None
) -> HTMLResponse:
    device = device_services(request)
    checks = await health_checks(svc, device)

    def gather() -> tuple[AgentChoice, Activity]:
        choice = choose_agent(svc, agent)
        return choice, activity(svc, choice.name)

    choice, figures = await asyncio.to_thread(gather)
    return page(
        request,
        "overview.html",
        viewer,
        choice,
        checks=checks,
        figures=figures,
        pending=device.memory_work.pending if device else None,
        turns=device.timings.recent()[:RECENT_TURNS_SHOWN] if device else [],
    )
