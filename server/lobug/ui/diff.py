"""Two texts side by side, line against line, with what changed marked (difflib)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from itertools import zip_longest
from typing import Literal

Change = Literal["same", "changed", "removed", "added"]


@dataclass(frozen=True)
class DiffRow:
    left: str | None  # None: no line on this side
    right: str | None
    change: Change


def side_by_side(old: str, new: str) -> list[DiffRow]:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        left, right = old_lines[i1:i2], new_lines[j1:j2]
        if tag == "equal":
            rows += [DiffRow(line, line, "same") for line in left]
            continue
        for a, b in zip_longest(left, right):
            change: Change = "changed" if a is not None and b is not None else "removed"
            rows.append(DiffRow(a, b, "added" if a is None else change))
    return rows
