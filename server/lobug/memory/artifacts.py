"""Memory as Markdown a person can read, keep in git and diff (`lobug export --format
markdown DIR`): `GLOBAL_MEMORY.md` (pinned facts, base memory, current facts by type),
`facts/<type>.md` (each type's facts with their history), `days/YYYY-MM-DD.md` (each day's
conversation per device, and the summaries covering it) and `audit.md`.

Rendered from an agent's export records only, with no clock and in a fixed order, so the same
database always gives byte-identical files. Times are UTC.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from lobug.clock import utc_day, utc_text
from lobug.store.models import FACT_TYPES
from lobug.store.records import AgentRecords, Record


def write_markdown(agent: AgentRecords, directory: Path) -> list[Path]:
    """Write the agent's artifacts under `directory`; return the files written, sorted."""
    files = {"GLOBAL_MEMORY.md": global_memory(agent), "audit.md": audit_log(agent)}
    for fact_type in FACT_TYPES:
        files[f"facts/{fact_type}.md"] = facts_of_type(agent, fact_type)
    for day, text in days(agent).items():
        files[f"days/{day}.md"] = text
    for folder in ("days", "facts"):  # pages of days or types no longer in the memory
        for old in (directory / folder).glob("*.md"):
            if f"{folder}/{old.name}" not in files:
                old.unlink()
    written = []
    for name, text in sorted(files.items()):
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def fact_line(fact: Record) -> str:
    marks = [f"#{fact['id']}"]
    if fact["pinned"]:
        marks.append("pinned")
    if fact["user_score"] is not None:
        marks.append(f"score {fact['user_score']}")
    return f"- {one_line(fact['content'])} ({', '.join(marks)})"


def current(facts: Iterable[Record]) -> list[Record]:
    return [f for f in facts if f["invalidated_at"] is None]


def global_memory(agent: AgentRecords) -> str:
    facts = current(agent.of("facts"))
    lines = [f"# Global memory of {agent.name}", "", "## Pinned facts", ""]
    lines += [fact_line(f) for f in facts if f["pinned"]] or ["(none)"]
    lines += ["", "## Base memory", "", agent.base_memory.strip() or "(empty)"]
    if agent.base_memory_stale:
        lines += ["", "(stale: something it was distilled from was forgotten)"]
    lines += ["", "## Facts"]
    for fact_type in FACT_TYPES:
        of_type = [f for f in facts if f["type"] == fact_type]
        if of_type:
            lines += ["", f"### {fact_type}", "", *(fact_line(f) for f in of_type)]
    blocks = agent.of("blocks")
    if blocks:
        lines += ["", "## Memory blocks", ""]
        lines += [f"- **{b['label']}**: {one_line(b['value'])}" for b in blocks]
    return "\n".join(lines) + "\n"


def facts_of_type(agent: AgentRecords, fact_type: str) -> str:
    facts = [f for f in agent.of("facts") if f["type"] == fact_type]
    lines = [f"# {fact_type.capitalize()} facts of {agent.name}", "", "## Current", ""]
    lines += [fact_line(f) for f in current(facts)] or ["(none)"]
    history = [f for f in facts if f["invalidated_at"] is not None]
    if history:
        lines += ["", "## History", ""]
        lines += [history_line(f) for f in history]
    return "\n".join(lines) + "\n"


def history_line(fact: Record) -> str:
    if fact["purged_at"] is not None:
        return f"- #{fact['id']}: purged {utc_text(fact['purged_at'])}"
    if fact["forgotten_at"] is not None:
        forgotten = utc_text(fact["forgotten_at"])
        return f"- {one_line(fact['content'])} (#{fact['id']}, forgotten {forgotten})"
    return (
        f"- {one_line(fact['content'])} (#{fact['id']}, superseded by "
        f"#{fact['superseded_by']} {utc_text(fact['invalidated_at'])})"
    )


def days(agent: AgentRecords) -> dict[str, str]:
    """Day -> its page: the conversation by device, then the summaries covering the day."""
    by_day: dict[str, dict[str, list[Record]]] = defaultdict(lambda: defaultdict(list))
    ids: list[int] = []
    message_days: list[str] = []
    for message in sorted(agent.of("messages"), key=lambda m: int(m["id"])):
        day = utc_day(message["created_at"])
        by_day[day][message["device_id"]].append(message)
        ids.append(message["id"])
        message_days.append(day)
    covering: dict[str, list[Record]] = defaultdict(list)
    for summary in agent.of("summaries"):
        first = bisect.bisect_left(ids, summary["source_from_id"])
        last = bisect.bisect_right(ids, summary["source_to_id"])
        for day in sorted(set(message_days[first:last])):
            covering[day].append(summary)
    return {day: day_page(agent.name, day, by_day[day], covering[day]) for day in sorted(by_day)}


def day_page(
    agent: str, day: str, devices: dict[str, list[Record]], summaries: list[Record]
) -> str:
    lines = [f"# {day} ({agent})"]
    for device in sorted(devices):
        lines += ["", f"## Device {device}", ""]
        for message in devices[device]:
            time_of_day = utc_text(message["created_at"])[11:]
            lines.append(f"- {time_of_day} **{message['role']}**: {one_line(message['content'])}")
    if summaries:
        lines += ["", "## Summaries", ""]
        lines += [f"- {one_line(s['content'])} (#{s['id']})" for s in summaries]
    return "\n".join(lines) + "\n"


def audit_log(agent: AgentRecords) -> str:
    lines = [
        f"# Audit log of {agent.name}",
        "",
        "| when (UTC) | actor | action | target | ids | after |",
        "|---|---|---|---|---|---|",
    ]
    for entry in agent.of("audit"):
        ids = ", ".join(str(i) for i in entry["target_ids"])
        after = one_line(entry["after"]).replace("|", "\\|")
        lines.append(
            f"| {utc_text(entry['at'])} | {entry['actor']} | {entry['action']} | "
            f"{entry['target']} | {ids} | {after} |"
        )
    return "\n".join(lines) + "\n"
