"""Time as Lo-Bug reads and writes it, in one leaf module: the configured time zone, clock
times ("03:30"), and every epoch-to-text form (prompts, the dashboard, the API, the CLI).
Times are Unix seconds (floats) everywhere inside; this module is where they become text."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, time, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

Clock = Callable[[], float]

# The times Lo-Bug keeps: 1970-01-01 to 2200-01-01, UTC. `memory/limits.py` refuses any other
# where a time enters (imports, the API, MemoryEngine); the store reads one that an older
# version let in as the nearest end (`clamped`), so it still shows and exports.
EARLIEST = 0.0
LATEST = 7_258_118_400.0


def clamped(at: float) -> float:
    """`at` moved into EARLIEST..LATEST (NaN: EARLIEST)."""
    return min(max(float(at), EARLIEST), LATEST) if at == at else EARLIEST


def zone_named(name: str) -> tzinfo | None:
    """The time zone `LOBUG_TIMEZONE` names; None (the machine's own) when empty. Raises
    ValueError for a name the time zone database does not know."""
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r}") from exc


def local_time(at: float, zone: tzinfo | None) -> datetime:
    """`at` as an aware datetime in `zone` (None: the machine's time zone)."""
    return datetime.fromtimestamp(at, zone) if zone else datetime.fromtimestamp(at).astimezone()


def clock_time(text: str) -> time | None:
    """ "03:30" as a time of day; None when `text` is not HH:MM."""
    try:
        return datetime.strptime(text.strip(), "%H:%M").time()
    except ValueError:
        return None


def time_text(at: float, zone: tzinfo | None) -> str:
    """`at` as people read it in a prompt: "Tue 2024-03-12 19:00"."""
    return local_time(at, zone).strftime("%a %Y-%m-%d %H:%M")


def span_text(start: float | None, end: float | None, fallback: float, zone: tzinfo | None) -> str:
    """A span of time ("Tue 2024-03-12 19:00 to 19:45", the end's date only when it differs);
    `fallback` alone when the span is not known."""
    if start is None or end is None:
        return time_text(fallback, zone)
    first, last = time_text(start, zone), time_text(end, zone)
    return f"{first} to {last[-5:] if first[:14] == last[:14] else last}"


def utc_iso(at: float) -> str:
    """`at` in ISO 8601 UTC with a `Z`, as the API shows times: "2024-03-12T19:00:00Z"."""
    return datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")


def utc_text(at: float) -> str:
    """`at` as the dashboard and stored artifacts show it, in UTC: "2024-03-12 19:00:00"."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S")


def utc_day(at: float) -> str:
    """The UTC day of `at`: "2024-03-12"."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d")
