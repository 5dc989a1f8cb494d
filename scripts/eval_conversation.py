"""The conversation evaluation of issue 41: a persona told on one device, asked on another,
through the real server process, once per candidate model, on a fresh data dir each.

A 40-turn sitting: 16 turns on device "kitchen" (a person, Marta, says who she is, her
partner, daughter, dog, hobby, allergy, trip and car in everyday ways, between a recipe, an
explanation and a story), then on device "office" 12 memory questions (8 direct, 4 indirect),
4 questions whose answer was never given, and 8 memory requests in everyday phrasing, each
checked afterwards through the memory API (`/memory/facts`, reminders in `/memory/export`).
Between the two devices it waits for learning: the facts API polled until every stated fact
is there ("current") or `--learning-wait-s` pass after the last kitchen turn.

Counted per model (rules in `conversation_judging.py`): memory questions right, unknowns said
unknown, invented personal details, odd replies, requests honoured and confirmed truthfully,
seconds until the facts are current, text turn p50/p95. Voice first audio comes from
`bench_voice.py`; the command for each model is printed.

    .venv/bin/python scripts/eval_conversation.py                      # the default model
    .venv/bin/python scripts/eval_conversation.py --quick              # 10 turns, a smoke run
    .venv/bin/python scripts/eval_conversation.py --model qwen2.5-coder-0.5b \\
        --model /path/to/other.gguf --json eval.json                   # candidates in turn

Issue 41's goal on the default install: 0 invented details, at most 2 odd replies, at least
11 of 12 memory questions right, 4 of 4 unknowns said unknown, at least 7 of 8 requests
honoured and confirmed truthfully, facts current within 120 s of the conversation's end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "server")]

from scripts.conversation_judging import (  # noqa: E402
    MemoryView,
    RequestVerdict,
    asks_to_confirm,
    change_verdict,
    claim_of,
    holds_any,
    invented_details,
    listing_verdict,
    odd_reasons,
    percentile,
    says_unknown,
    truthful,
)
from scripts.quality_recall import say  # noqa: E402

TOLD_ON = "kitchen"
ASKED_ON = "office"
USER_NAMES = ("Marta",)
GOAL_CURRENT_S = 120
POLL_S = 2.0


@dataclass(frozen=True)
class Line:
    """One thing the person says: `keys` are the words a right answer holds ("a|b")."""

    said: str
    kind: str  # persona, help, chat, direct, indirect, unknown
    keys: str = ""
    quick: bool = False


# What the kitchen hears: the persona, said in varied everyday ways, between ordinary help.
PERSONA: list[Line] = [
    Line("Hi! By the way, my name is Marta.", "persona", quick=True),
    Line("I work as a pediatric nurse at the Riverside clinic.", "persona"),
    Line("My partner Jonas is a carpenter, he builds furniture.", "persona"),
    Line("Can you give me a simple recipe for pancakes?", "help", "flour|egg|milk", quick=True),
    Line("We have a beagle named Biscuit.", "persona", quick=True),
    Line("Our daughter Lina is seven and she's crazy about dinosaurs.", "persona"),
    Line("Explain in a few sentences why the sky is blue.", "help", "light|scatter|sunlight"),
    Line("I play the cello in a community orchestra on Thursdays.", "persona"),
    Line("Oh, and I'm allergic to peanuts, so no peanut recipes please.", "persona", quick=True),
    Line("Tell me a short bedtime story about a dragon.", "help", "dragon"),
    Line("We're off to Lisbon in August for our summer holiday.", "persona"),
    Line("I still drive my old red Volvo.", "persona"),
    Line("How long should I boil an egg for a soft yolk?", "help", "minute|minutes"),
    Line("Lina also loves drawing and strawberries.", "persona"),
    Line("What's a good way to keep a dog busy on a rainy day?", "help", "toy|game|puzzle|treat"),
    Line("Thanks, that's all for now.", "chat"),
]
# The facts the persona states, as the words a stored fact must hold ("a|b"): all of them
# there is "current".
EXPECTED_FACTS: dict[str, str] = {
    "name": "marta",
    "job": "nurse",
    "partner": "jonas",
    "dog": "biscuit",
    "breed": "beagle",
    "daughter": "lina",
    "daughter likes": "dinosaur|dinosaurs|drawing|strawberry|strawberries",
    "hobby": "cello",
    "allergy": "peanut|peanuts",
    "trip": "lisbon",
    "car": "volvo",
}
QUICK_FACTS = ("name", "dog", "allergy")
# Asked on the office device, after learning.
QUESTIONS: list[Line] = [
    Line("What's my name?", "direct", "marta", quick=True),
    Line("What do I do for work?", "direct", "nurse|pediatric"),
    Line("What's my partner called?", "direct", "jonas"),
    Line("What's our dog's name?", "direct", "biscuit", quick=True),
    Line("What breed is our dog?", "direct", "beagle"),
    Line("What's my daughter's name?", "direct", "lina"),
    Line("Which instrument do I play?", "direct", "cello"),
    Line("What car do I drive?", "direct", "volvo"),
    Line(
        "Any idea what to get my daughter, remember what she likes?",
        "indirect",
        "dinosaur|dinosaurs|drawing|strawberry|strawberries",
    ),
    Line("I'm grabbing a snack at work, anything I should stay away from?", "indirect", "peanut"),
    Line("Should I pack shorts or a winter coat for our holiday?", "indirect", "lisbon|august"),
    Line("I'm stuck late at work, who could pick up our daughter today?", "indirect", "jonas"),
]
UNKNOWNS: list[Line] = [
    Line("What's my son's name?", "unknown", quick=True),
    Line("What's my mother's name?", "unknown"),
    Line("What's my cat called?", "unknown"),
    Line("Which football team do I support?", "unknown"),
]


@dataclass(frozen=True)
class Request:
    """A memory request. A change has a `goal` the API must show after it and not before; a
    listing is judged by what its reply names against what the API holds (`listed`, `wrong`:
    the keys it should and should not name)."""

    said: str
    goal: Callable[[MemoryView], bool] | None = None
    listed: Callable[[MemoryView], tuple[list[str], list[str]]] | None = None
    at_least: int = 1
    quick: bool = False


def reminders_listed(view: MemoryView) -> tuple[list[str], list[str]]:
    return (["vet"], []) if view.reminds_of("vet") else ([], ["vet"])


def facts_listed(view: MemoryView) -> tuple[list[str], list[str]]:
    held = [keys for keys in EXPECTED_FACTS.values() if view.holds(keys)]
    gone = [keys for keys in EXPECTED_FACTS.values() if not view.holds(keys)]
    return held, gone


REQUESTS: list[Request] = [
    Request(
        "Actually my dog is called Pretzel now.",
        goal=lambda v: v.holds("pretzel") and not v.holds("biscuit"),
        quick=True,
    ),
    Request(
        "Please don't remember my allergy anymore.",
        goal=lambda v: not v.holds("peanut|peanuts|allergic|allergy"),
        quick=True,
    ),
    Request("Scratch that thing about the car.", goal=lambda v: not v.holds("volvo|car")),
    Request("Forget what I said about my trip.", goal=lambda v: not v.holds("lisbon|trip")),
    Request(
        "Remind me to call the vet tomorrow at 9.", goal=lambda v: v.reminds_of("vet"), quick=True
    ),
    Request("What reminders do I have?", listed=reminders_listed),
    Request("What do you know about me?", listed=facts_listed, at_least=2),
    Request("Cancel the vet reminder.", goal=lambda v: not v.reminds_of("vet")),
]


# ---------------------------------------------------------------------- results


@dataclass
class TurnResult:
    device: str
    kind: str
    said: str
    reply: str
    seconds: float
    keys: str = ""
    failure: str | None = None
    right: bool | None = None
    odd: list[str] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)
    request: dict[str, Any] | None = None


@dataclass
class Learning:
    current_after_s: float | None
    waited_s: float
    missing: list[str]
    facts: list[str]


@dataclass
class ModelRun:
    model: str
    size: str
    llm: dict[str, Any]
    turns: list[TurnResult] = field(default_factory=list)
    learning: Learning | None = None
    seconds: float = 0.0

    def of_kind(self, *kinds: str) -> list[TurnResult]:
        return [t for t in self.turns if t.kind in kinds]

    def summary(self) -> dict[str, Any]:
        questions = self.of_kind("direct", "indirect")
        requests = self.of_kind("request")
        seconds = [t.seconds for t in self.turns]
        return {
            "memory_right": sum(bool(t.right) for t in questions),
            "memory_asked": len(questions),
            "indirect_right": sum(bool(t.right) for t in self.of_kind("indirect")),
            "unknowns_right": sum(bool(t.right) for t in self.of_kind("unknown")),
            "unknowns_asked": len(self.of_kind("unknown")),
            "help_right": sum(bool(t.right) for t in self.of_kind("help")),
            "help_asked": len(self.of_kind("help")),
            "invented": sum(len(t.invented) for t in self.turns),
            "odd": sum(bool(t.odd) for t in self.turns),
            "replies": len(self.turns),
            "honoured": sum(bool(t.request and t.request["honoured"]) for t in requests),
            "truthful": sum(bool(t.request and t.request["truthful"]) for t in requests),
            "requests": len(requests),
            "current_after_s": self.learning.current_after_s if self.learning else None,
            "text_p50_s": percentile(seconds, 0.5),
            "text_p95_s": percentile(seconds, 0.95),
        }


# ---------------------------------------------------------------------- the sitting


class Sitting:
    """One model's conversation on a running server: every turn timed and judged."""

    def __init__(self, http: httpx.Client, run: ModelRun, agent: str) -> None:
        self.http = http
        self.run = run
        self.agent = agent

    def turn(self, device: str, line: Line) -> TurnResult:
        started = time.perf_counter()
        try:
            reply, failure = say(self.http, device, line.said), None
        except httpx.HTTPError as exc:  # counted as an odd reply, the sitting goes on
            reply, failure = "", f"no reply: {exc!r}"
        seconds = time.perf_counter() - started
        result = TurnResult(device, line.kind, line.said, reply, seconds, line.keys, failure)
        judge_text(result, self.run.turns)
        self.run.turns.append(result)
        print(f"  [{device} {result.seconds:5.1f} s] {line.said}\n      -> {reply}", flush=True)
        for problem in [*result.odd, *result.invented]:
            print(f"      ! {problem}", flush=True)
        return result

    def view(self) -> MemoryView:
        """The current facts and the reminders still to ring, as the memory API shows them."""
        page = self.http.get(f"/memory/facts/{self.agent}", params={"limit": 1000})
        page.raise_for_status()
        exported = self.http.get(f"/memory/export/{self.agent}")
        exported.raise_for_status()
        reminders = exported.json()["agents"][0].get("reminders", [])
        return MemoryView(
            facts=tuple(f["content"] for f in page.json()["facts"]),
            reminders=tuple(
                r["what"] for r in reminders if not r.get("cancelled_at") and not r.get("said_at")
            ),
        )

    def wait_for_facts(self, expected: dict[str, str], wait_s: float) -> Learning:
        """Poll the facts until every expected one is there or `wait_s` pass."""
        started = time.monotonic()
        while True:
            view = self.view()
            missing = [name for name, keys in expected.items() if not view.holds(keys)]
            waited = time.monotonic() - started
            if not missing or waited >= wait_s:
                current = round(waited, 1) if not missing else None
                return Learning(current, round(waited, 1), missing, list(view.facts))
            time.sleep(POLL_S)

    def request(self, request: Request, wait_s: float) -> None:
        before = self.view()
        result = self.turn(ASKED_ON, Line(request.said, "request"))
        if asks_to_confirm(result.reply):  # as a person would: "yes", then judge that answer
            confirmed = self.turn(ASKED_ON, Line("Yes.", "confirm"))
            result.reply = f"{result.reply} / {confirmed.reply}"
            result.seconds += confirmed.seconds
        if request.goal is not None:
            after = self.wait_for(request.goal, wait_s)
            verdict = change_verdict(result.reply, request.goal(before), request.goal(after))
        else:
            assert request.listed is not None
            listed, wrong = request.listed(self.view())
            verdict = listing_verdict(result.reply, listed, wrong, request.at_least)
        result.request = {"change": request.goal is not None, **verdict_fields(verdict)}
        result.right = verdict.honoured and verdict.truthful
        print(f"      = {result.request}", flush=True)

    def wait_for(self, goal: Callable[[MemoryView], bool], wait_s: float) -> MemoryView:
        """The memory once `goal` holds, or as it is after `wait_s` (a change may be made by
        the learning after the reply)."""
        deadline = time.monotonic() + wait_s
        while True:
            view = self.view()
            if goal(view) or time.monotonic() >= deadline:
                return view
            time.sleep(POLL_S)


def judge_text(result: TurnResult, earlier: Sequence[TurnResult]) -> None:
    """The verdicts read from the words alone (a request's own comes from the API): odd,
    invented against everything the person said up to this turn, right."""
    said = [*(t.said for t in earlier), result.said]
    result.odd = odd_reasons(result.reply, result.said, USER_NAMES, [t.reply for t in earlier])
    if result.failure:
        result.odd.append(result.failure)
    # A help reply's names are a story's characters or a recipe's, not the person's.
    answer = result.kind in ("direct", "indirect", "unknown")
    result.invented = (
        invented_details(result.reply, said, answer=answer) if result.kind != "help" else []
    )
    if result.kind in ("direct", "indirect", "help"):
        result.right = holds_any(result.reply, result.keys)
    elif result.kind == "unknown":
        result.right = says_unknown(result.reply) and not result.invented


def verdict_fields(verdict: RequestVerdict) -> dict[str, Any]:
    return {
        "claim": verdict.claim.value,
        "honoured": verdict.honoured,
        "truthful": verdict.truthful,
        "notes": verdict.notes,
    }


def converse(sitting: Sitting, args: argparse.Namespace) -> None:
    pick = (lambda items: [i for i in items if i.quick]) if args.quick else list
    expected = {k: EXPECTED_FACTS[k] for k in QUICK_FACTS} if args.quick else EXPECTED_FACTS
    print(f"-- told on {TOLD_ON}", flush=True)
    for line in pick(PERSONA):
        sitting.turn(TOLD_ON, line)
    learning = sitting.wait_for_facts(expected, args.learning_wait_s)
    sitting.run.learning = learning
    print(f"-- learning: current after {learning.current_after_s} s; missing {learning.missing}")
    print(f"-- asked on {ASKED_ON}", flush=True)
    for line in [*pick(QUESTIONS), *pick(UNKNOWNS)]:
        sitting.turn(ASKED_ON, line)
    print("-- memory requests", flush=True)
    for request in pick(REQUESTS):
        sitting.request(request, args.request_wait_s)


# ---------------------------------------------------------------------- one model


def evaluate(model: str | None, args: argparse.Namespace) -> ModelRun:
    """A fresh data dir and server for `model` (None: the default), the sitting, the server
    stopped."""
    from tests.e2e.server import start_server

    # The model's own temperature (the test servers' 0 unset), or the one this shell sets.
    env = {
        "LOBUG_SPEECH": "0",
        "LOBUG_LLM_TEMPERATURE": os.environ.get("LOBUG_LLM_TEMPERATURE", ""),
    }
    if model:
        env["LOBUG_LLM_MODEL"] = model
    with tempfile.TemporaryDirectory(prefix="lobug-eval-") as scratch:
        folder = Path(scratch)
        started = time.perf_counter()
        server = start_server(folder / "memory.db", folder / "server.log", env)
        try:
            with httpx.Client(base_url=server.url, timeout=args.turn_timeout_s) as http:
                health = http.get("/health").json()
                label = model or f"default ({health['llm']['model']})"
                run = ModelRun(label, model_size(model, health["llm"]), health["llm"])
                print(f"== {label} ({run.size}) ==", flush=True)
                converse(Sitting(http, run, health["agent"]), args)
        finally:
            server.stop()
            if args.keep:
                kept = args.keep / safe_name(model or "default")
                shutil.copytree(folder, kept, dirs_exist_ok=True)
        run.seconds = round(time.perf_counter() - started, 1)
    return run


def model_size(model: str | None, llm: dict[str, Any]) -> str:
    """The model file's size: the path given, or the file the server names, looked for where
    packages and the user data dir's models keep it."""
    found = model_file(model, str(llm.get("model") or ""))
    return f"{found.stat().st_size / 2**20:.0f} MiB" if found else "?"


def model_file(model: str | None, served: str) -> Path | None:
    from platformdirs import user_data_path

    for candidate in (model, served):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    if not served or Path(served).name != served:
        return None
    packages = Path(sysconfig.get_paths()["purelib"])
    places = [user_data_path("lobug", appauthor=False) / "models", packages]
    for place in places:
        for pattern in (served, f"*/{served}", f"*/*/{served}"):
            hit = next(place.glob(pattern), None)
            if hit and hit.is_file():
                return hit
    return None


def safe_name(model: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in Path(model).name)


# ---------------------------------------------------------------------- the table

HEADER = (
    "| model | size | memory questions right /12 | unknowns said unknown /4 | invented details "
    "| odd replies /N | requests honoured /8 | truthful confirmations /8 | facts current after s "
    "| text p50/p95 s | voice first audio p95 s |"
)


def table_row(run: ModelRun) -> str:
    s = run.summary()
    current = f"{s['current_after_s']:.0f}" if s["current_after_s"] is not None else "not current"
    return (
        f"| {run.model} | {run.size} | {s['memory_right']}/{s['memory_asked']} "
        f"({s['indirect_right']} indirect) | {s['unknowns_right']}/{s['unknowns_asked']} "
        f"| {s['invented']} | {s['odd']}/{s['replies']} | {s['honoured']}/{s['requests']} "
        f"| {s['truthful']}/{s['requests']} | {current} "
        f"| {seconds(s['text_p50_s'])}/{seconds(s['text_p95_s'])} | (bench_voice.py) |"
    )


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def voice_command(model: str | None) -> str:
    """`bench_voice.py` takes no model argument; the server it starts inherits the environment."""
    setting = f"LOBUG_LLM_MODEL={model} " if model else ""
    return (
        f"{setting}.venv/bin/python scripts/bench_voice.py --turns 20 --whole-turns 0 "
        "--device-turns 20 --pause-turns 0"
    )


def print_results(runs: Sequence[ModelRun], models: Sequence[str | None]) -> None:
    print("\n" + HEADER)
    print("|" + " --- |" * HEADER.count(" | ") + " --- |")
    for run in runs:
        print(table_row(run))
    for run in runs:
        s = run.summary()
        print(f"\n{run.model}: help answered {s['help_right']}/{s['help_asked']}; ", end="")
        missing = run.learning.missing if run.learning else []
        print(f"facts never current: {missing or 'none'}; sitting {run.seconds:.0f} s")
    print("\nVoice first audio p95 (streamed HTTP and xiaozhi turns), one command per model:")
    for model in models:
        print(f"  {voice_command(model)}")


def rejudged(path: Path) -> list[ModelRun]:
    """The runs of a `--json` file with the word verdicts judged again by today's rules (the
    requests' verdicts, which read the API, stay as they were)."""
    runs = []
    for saved in json.loads(path.read_text()):
        run = ModelRun(saved["model"], saved["size"], saved["llm"], seconds=saved["seconds"])
        run.learning = Learning(**saved["learning"]) if saved.get("learning") else None
        for fields in saved["turns"]:
            keys = {line.said: line.keys for line in [*PERSONA, *QUESTIONS, *UNKNOWNS]}
            result = TurnResult(**{"keys": keys.get(fields["said"], ""), **fields})
            judge_text(result, run.turns)
            if result.request is not None:
                changes = {r.said for r in REQUESTS if r.goal is not None}
                result.request.setdefault("change", result.said in changes)
                rejudge_request(result.request, result.reply)
                result.right = result.request["honoured"] and result.request["truthful"]
            run.turns.append(result)
        runs.append(run)
    return runs


def rejudge_request(verdict: dict[str, Any], reply: str) -> None:
    """A change's claim and truthfulness judged again from its reply; whether it was
    honoured is what the API showed then. A listing's verdict stays."""
    if verdict.get("change"):
        claim = claim_of(reply)
        verdict["claim"] = claim.value
        verdict["truthful"] = truthful(claim, verdict["honoured"])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--model",
        action="append",
        help="LOBUG_LLM_MODEL for the server: a short name or a .gguf path (repeat for several; "
        "default: the server's default model)",
    )
    parser.add_argument("--quick", action="store_true", help="a 10-turn smoke run")
    parser.add_argument("--json", type=Path, help="write every turn and verdict here")
    parser.add_argument("--keep", type=Path, help="keep each model's database and log here")
    parser.add_argument("--learning-wait-s", type=float, default=GOAL_CURRENT_S)
    parser.add_argument(
        "--request-wait-s", type=float, default=60, help="most to wait for a request's change"
    )
    parser.add_argument("--turn-timeout-s", type=float, default=600)
    parser.add_argument(
        "--rejudge", type=Path, help="judge the replies of a --json file again, run nothing"
    )
    args = parser.parse_args()
    models: list[str | None] = list(args.model) if args.model else [None]
    if args.rejudge:
        runs = rejudged(args.rejudge)
        models = [None if r.model.startswith("default (") else r.model for r in runs]
    else:
        runs = [evaluate(model, args) for model in models]
    print_results(runs, models)
    if args.json:
        details = [{**asdict(run), "summary": run.summary()} for run in runs]
        args.json.write_text(json.dumps(details, indent=1, ensure_ascii=False))
        print(f"details: {args.json}")


if __name__ == "__main__":
    main()
