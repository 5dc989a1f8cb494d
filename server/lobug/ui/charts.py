"""Small bar charts drawn as SVG on the server: no script, no library, readable at any width
(the drawing scales with its `viewBox`). One bar per day and series; hovering a bar (or a
screen reader) gives its day and value."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from markupsafe import Markup, escape

WIDTH, HEIGHT = 600, 200
LEFT, RIGHT, TOP, BOTTOM = 44, 8, 12, 40
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float]  # one per day, in the chart's order
    css_class: str


def last_days(count: int, today: date) -> list[str]:
    """`YYYY-MM-DD` of the `count` days up to `today`, oldest first."""
    return [(today - timedelta(days=back)).isoformat() for back in range(count - 1, -1, -1)]


def number(value: float) -> str:
    return f"{value:.0f}" if value >= 10 or value == int(value) else f"{value:.2f}"


def bar_chart(title: str, days: Sequence[str], series: Sequence[Series], unit: str) -> Markup:
    top = max((v for s in series for v in s.values), default=0.0) or 1.0
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" preserveAspectRatio="xMidYMid meet">',
        f"<title>{escape(title)}</title>",
        *axes(days, top, unit),
        *bars(days, series, top),
        *legend(series),
        "</svg>",
    ]
    return Markup("".join(parts))


def axes(days: Sequence[str], top: float, unit: str) -> list[str]:
    base = TOP + PLOT_H
    lines = [
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}"/>',
        f'<line class="axis" x1="{LEFT}" y1="{base}" x2="{LEFT + PLOT_W}" y2="{base}"/>',
        f'<text class="tick" x="{LEFT - 4}" y="{TOP + 10}" text-anchor="end">{number(top)}</text>',
        f'<text class="tick" x="{LEFT - 4}" y="{base}" text-anchor="end">0</text>',
        f'<text class="tick" x="4" y="{TOP + PLOT_H / 2:.0f}">{escape(unit)}</text>',
    ]
    if days:
        lines.append(f'<text class="tick" x="{LEFT}" y="{base + 14}">{escape(days[0])}</text>')
        lines.append(
            f'<text class="tick" x="{LEFT + PLOT_W}" y="{base + 14}" text-anchor="end">'
            f"{escape(days[-1])}</text>"
        )
    return lines


def bars(days: Sequence[str], series: Sequence[Series], top: float) -> list[str]:
    if not days or not series:
        return []
    slot = PLOT_W / len(days)
    width = slot * 0.8 / len(series)
    drawn = []
    for i, day in enumerate(days):
        for j, one in enumerate(series):
            value = one.values[i]
            height = PLOT_H * value / top
            x = LEFT + i * slot + slot * 0.1 + j * width
            drawn.append(
                f'<rect class="{one.css_class}" x="{x:.1f}" y="{TOP + PLOT_H - height:.1f}" '
                f'width="{width:.1f}" height="{height:.1f}"><title>{escape(day)}: '
                f"{number(value)} {escape(one.name)}</title></rect>"
            )
    return drawn


def legend(series: Sequence[Series]) -> list[str]:
    drawn, x = [], LEFT
    for one in series:
        y = HEIGHT - 8
        drawn.append(f'<rect class="{one.css_class}" x="{x}" y="{y - 9}" width="10" height="10"/>')
        drawn.append(f'<text class="tick" x="{x + 14}" y="{y}">{escape(one.name)}</text>')
        x += 14 + 8 * len(one.name) + 16
    return drawn
