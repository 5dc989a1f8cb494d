"""docs/architecture.md's layering table is the one `tests/test_layers.py` checks: every part
of the test's table stands in the document's row of its floor (issue 43, item 5). A part added
to FLOORS without its place in the document fails here by name."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_layers import FLOORS

DOCUMENT = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def table_rows(text: str) -> dict[str, set[str]]:
    """The layering table's rows: floor -> the parts its second column names in backticks."""
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 2 and cells[0] in FLOORS:
            rows[cells[0]] = set(re.findall(r"`([a-z_]+)`", cells[1]))
    return rows


def test_every_floor_of_the_layering_test_is_in_the_architecture_document() -> None:
    rows = table_rows(DOCUMENT.read_text())
    missing = [
        f"{part} (floor {floor!r})"
        for floor, parts in FLOORS.items()
        for part in parts
        if part not in rows.get(floor, set())
    ]
    assert not missing, (
        "docs/architecture.md's layering table lacks what tests/test_layers.py's FLOORS "
        f"holds: {', '.join(missing)}"
    )


def test_a_row_is_read_by_its_floor_and_backticked_parts() -> None:
    rows = table_rows("| floor | parts |\n|---|---|\n| domain | `memory` (the memory) |\n")
    assert rows == {"domain": {"memory"}}
