"""`lobug models`: the bundled chat models listed, the configured one marked, and a model's
file prepared (run as a subprocess, as people run it)."""

from __future__ import annotations

from pathlib import Path

from lobug.backends.bundled_models import BUNDLED_CHAT_MODELS
from tests.cli.run import lobug, ok


def test_models_lists_each_bundled_model_and_marks_the_default(tmp_path: Path) -> None:
    env = {"LOBUG_MODELS_DIR": str(tmp_path), "LOBUG_LLM_BACKEND": "auto", "LOBUG_LLM_MODEL": ""}
    listed = ok("models", "--json", env=env).json()

    rows = {row["name"]: row for row in listed["models"]}
    assert list(rows) == list(BUNDLED_CHAT_MODELS)
    assert [name for name, row in rows.items() if row["configured"]] == ["smollm2-135m"]
    assert rows["smollm2-135m"]["installed"]
    assert not rows["smollm2-135m"]["ready"]  # written as Q8_0 at its first start (or by make)
    assert rows["qwen2.5-coder-0.5b"]["installed"]  # `make run` installs its chunks
    assert not rows["qwen2.5-coder-0.5b"]["ready"]  # joined at its first start, not before
    assert rows["qwen2.5-coder-1.5b"]["size_mb"] == 1117
    assert rows["qwen2.5-coder-1.5b"]["install"] == "make models"
    assert listed["choose"].startswith("LOBUG_LLM_MODEL=NAME")


def test_models_says_which_one_lobug_llm_model_chooses(tmp_path: Path) -> None:
    env = {"LOBUG_MODELS_DIR": str(tmp_path), "LOBUG_LLM_BACKEND": "auto"}
    env["LOBUG_LLM_MODEL"] = "Qwen2.5-Coder-1.5B"
    shown = ok("models", env=env).out

    chosen = [line for line in shown.splitlines() if line.startswith("yes")]
    assert len(chosen) == 1 and "qwen2.5-coder-1.5b" in chosen[0]
    assert "Now: qwen2.5-coder-1.5b (LOBUG_LLM_MODEL=Qwen2.5-Coder-1.5B)." in shown
    assert "LOBUG_LLM_MODEL=NAME chooses one" in shown

    other = ok("models", env={**env, "LOBUG_LLM_MODEL": "/models/mine.gguf"}).out
    assert "Now: LOBUG_LLM_MODEL=/models/mine.gguf." in other
    assert not [line for line in other.splitlines() if line.startswith("yes")]


def test_prepare_readies_a_model_and_refuses_an_unknown_name(tmp_path: Path) -> None:
    env = {"LOBUG_MODELS_DIR": str(tmp_path)}
    done = ok("models", "prepare", "smollm2-135m", "--json", env=env).json()

    assert Path(done["path"]).is_file() and done["size"] == Path(done["path"]).stat().st_size
    assert Path(done["path"]).parent == tmp_path and done["form"] == "Q8_0"
    listed = {row["name"]: row for row in ok("models", "--json", env=env).json()["models"]}
    assert listed["smollm2-135m"]["ready"]
    unknown = lobug("models", "prepare", "qwen-9000", env=env)
    assert unknown.code == 2 and "qwen2.5-coder-0.5b" in unknown.err
