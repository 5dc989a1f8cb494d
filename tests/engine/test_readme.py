"""The README's MemoryEngine examples run as written (in a temporary folder, with the fake
models standing in for the configured ones)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lobug import engine
from tests.fakes import FakeChat, FakeEmbedder

README = Path(__file__).resolve().parents[2] / "README.md"


def engine_examples() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Memory in your program: MemoryEngine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


@pytest.mark.parametrize("example", engine_examples())
def test_readme_example_runs(
    example: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(engine, "build_chat", lambda settings: FakeChat())
    monkeypatch.setattr(engine, "build_embedder", lambda settings: FakeEmbedder())
    exec(compile(example, str(README), "exec"), {})
    assert capsys.readouterr().out
    assert (tmp_path / "memory.db").exists()


def test_the_readme_has_engine_examples() -> None:
    assert len(engine_examples()) == 2
