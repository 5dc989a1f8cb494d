"""`lobug models`: the chat models that ship in packages (`backends/bundled_models.py`). `list`
(or `lobug models` alone) shows each one's short name, whether its packages are installed, its
size, whether its file is ready, and which one LOBUG_LLM_MODEL chooses now; `prepare NAME`
joins and checks a model's file, or writes it in the form it runs in, now (`make` runs it for
the default, `make models` for the larger one), not at the server's first start."""

from __future__ import annotations

import os
from typing import Any

import click

from lobug.backends.bundled_models import (
    BUNDLED_CHAT_MODELS,
    DEFAULT_CHAT_MODEL,
    BundledModel,
    bundled_model,
    is_bundled_name,
    is_installed,
    joined_file,
    model_file,
)
from lobug.cli.memory import ListByDefault
from lobug.cli.output import Output
from lobug.config import Settings

COLUMNS = [
    ("configured", "configured"),
    ("name", "name"),
    ("title", "model"),
    ("size_mb", "MB"),
    ("installed", "installed"),
    ("ready", "ready"),
    ("install", "install with"),
    ("licence", "licence"),
]
CHOOSE = "LOBUG_LLM_MODEL=NAME chooses one (or a path to any .gguf file)"


@click.group(cls=ListByDefault)
def models() -> None:
    """The chat models that ship in packages; `lobug models` lists them."""


@models.command("list")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
def list_models(as_json: bool) -> None:
    """Each bundled chat model: installed or not, its size, and the one configured now."""
    settings = Settings.from_env(os.environ)
    chosen = configured_model(settings)
    rows = [model_row(model, settings, chosen) for model in BUNDLED_CHAT_MODELS.values()]
    now = configured_text(settings, chosen)
    Output(as_json).table(rows, COLUMNS, data={"models": rows, "configured": now, "choose": CHOOSE})
    if not as_json:
        click.echo(f"\nNow: {now}. {CHOOSE}.\nA model not ready is prepared at its first start.")


@models.command("prepare")
@click.argument("name", type=click.Choice(list(BUNDLED_CHAT_MODELS)), default=DEFAULT_CHAT_MODEL)
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
def prepare(name: str, as_json: bool) -> None:
    """Join NAME's chunks into the models folder (LOBUG_MODELS_DIR) and check its sha256, or
    write it there in the form it runs in, once: a file already done and unchanged is left.
    NAME defaults to the default model (what `make` prepares)."""
    settings = Settings.from_env(os.environ)
    model = bundled_model(name)
    path = model_file(model, settings.models_dir)
    form = model.run_as.form if model.run_as else None
    done = {"name": model.name, "path": str(path), "size": path.stat().st_size, "form": form}
    done["sha256"] = model.sha256  # of the file as published, which `path` was made from
    as_form = f" (run as {form})" if form else ""
    Output(as_json).said(f"{model.title} is ready{as_form}: {path}", done)


def configured_model(settings: Settings) -> str | None:
    """The bundled model the embedded backend would load, if it is one of them."""
    model = settings.llm_model
    if settings.llm_backend in ("ollama", "openai"):
        return None
    if model is None:
        return DEFAULT_CHAT_MODEL
    return bundled_model(model).name if is_bundled_name(model) else None


def configured_text(settings: Settings, chosen: str | None) -> str:
    model = settings.llm_model
    if settings.llm_backend in ("ollama", "openai"):
        return f"LOBUG_LLM_BACKEND={settings.llm_backend} serves {model or 'its default model'}"
    if model is None:
        return f"{chosen} (LOBUG_LLM_MODEL unset: the default)"
    if chosen is not None:
        return f"{chosen} (LOBUG_LLM_MODEL={model})"
    return f"LOBUG_LLM_MODEL={model}"


def model_row(model: BundledModel, settings: Settings, chosen: str | None) -> dict[str, Any]:
    return {
        "configured": model.name == chosen,
        "name": model.name,
        "title": model.title,
        "size_mb": round(model.size / 1e6),
        "installed": is_installed(model),
        "ready": joined_file(model, settings.models_dir) is not None,
        "install": model.install,
        "licence": model.licence,
        "sha256": model.sha256,
        "source": model.source,
    }
