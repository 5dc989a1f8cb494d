"""The limits that keep the house readable (issue 9): no function over 50 lines, no circular
imports between the package's modules, and modules kept small. Which part may import which is
`test_layers.py`'s, over the same walk of the imports.

Module size is a guide, not a squeeze (issue 43, item 7): a module over 500 lines is named at
the end of every run that includes this file (the "modules over 500 lines" section that
`tests/conftest.py` writes; a pytest warning would fail the run, warnings being errors here),
so that the next change to it splits it by responsibility; over 700 lines fails. Trimming
docstrings to fit is not the fix."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "lobug"
GUIDE_MODULE_LINES = 500  # named in the run's summary: split it by responsibility
MAX_MODULE_LINES = 700  # fails
MAX_FUNCTION_LINES = 50


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def long_modules(limit: int) -> dict[str, int]:
    """The package's modules over `limit` lines, with their lengths."""
    return {
        name: n
        for name, path in modules().items()
        if (n := len(path.read_text().splitlines())) > limit
    }


def size_guide_report() -> list[str]:
    """The lines of the run's summary section: each module over the guide, longest first."""
    over = sorted(long_modules(GUIDE_MODULE_LINES).items(), key=lambda item: -item[1])
    return [f"{name}: {n} lines (fails over {MAX_MODULE_LINES})" for name, n in over]


def test_no_module_is_over_700_lines() -> None:
    assert long_modules(MAX_MODULE_LINES) == {}


def test_the_size_guide_names_each_module_over_500_lines() -> None:
    report = size_guide_report()
    assert len(report) == len(long_modules(GUIDE_MODULE_LINES))
    assert all(line.endswith(f"lines (fails over {MAX_MODULE_LINES})") for line in report)
    assert long_modules(-1).keys() == modules().keys()


def test_no_function_is_over_50_lines() -> None:
    long = {}
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long[f"{name}.{node.name}"] = length
    assert long == {}


def named_modules(node: ast.AST) -> set[str]:
    """The modules an import statement names: `from m import n` names `m` and `m.n` (`n` may
    be a module). The package has no relative imports."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return set()


def type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def every_import(path: Path) -> set[str]:
    """Every module the file imports, at import time or later (inside functions and
    classes); only imports under TYPE_CHECKING are left out."""
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text())]
    while pending:
        node = pending.pop()
        if type_checking_only(node):
            assert isinstance(node, ast.If)
            pending.extend(node.orelse)
            continue
        found |= named_modules(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


def test_no_circular_imports() -> None:
    """No circle through any import, at import time or inside a function (a lazy import
    hides a circle from Python, not from a reader)."""
    found = modules()
    graph = {
        name: {m for m in every_import(path) if m in found and m != name}
        for name, path in found.items()
    }
    cycles = []

    def visit(name: str, trail: list[str]) -> None:
        for dependency in sorted(graph[name]):
            if dependency in trail:
                cycles.append([*trail[trail.index(dependency) :], dependency])
            elif dependency not in done:
                visit(dependency, [*trail, dependency])
        done.add(name)

    done: set[str] = set()
    for name in graph:
        if name not in done:
            visit(name, [name])
    # A package's __init__ importing its own submodules is not a cycle of the design.
    cycles = [c for c in cycles if not any(b.startswith(f"{a}.") for a, b in itertools.pairwise(c))]
    assert cycles == []
