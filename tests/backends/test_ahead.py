"""Answers begun in the person's pause (`backends/ahead.py`): adopted by the turn whose
prompt they were begun for, dropped otherwise, never leaving the model waiting."""

from __future__ import annotations

import threading

import pytest

from lobug.backends import ahead as ahead_module
from lobug.backends.ahead import AnswersAhead
from lobug.backends.base import BackendError, ChatMessage, ToolBox
from tests.fakes import FakeChat
from tests.polling import eventually

ASKED: list[ChatMessage] = [{"role": "user", "content": "What is the capital of France?"}]
OTHER: list[ChatMessage] = [{"role": "user", "content": "What is the capital of France and Spain?"}]
REPLY = "Paris is the capital. It is lovely in spring."
PIECES = len(REPLY.split())


def stopped_ahead() -> bool:
    """No answer is being written ahead any more."""
    return not any(thread.name == "answer-ahead" for thread in threading.enumerate())


def answered(answers: AnswersAhead, messages: list[ChatMessage], **kwargs: object) -> str:
    return "".join(
        answers.stream("desk", messages, max_tokens=64, temperature=0.5, **kwargs)  # type: ignore[arg-type]
    )


def begin(answers: AnswersAhead, messages: list[ChatMessage] = ASKED) -> None:
    answers.start("desk", messages, max_tokens=64, temperature=0.5)


def test_the_turn_adopts_the_answer_begun_for_its_prompt() -> None:
    chat = FakeChat()
    chat.enqueue(REPLY, "A second answer.")
    answers = AnswersAhead(chat)
    begin(answers)
    # Read as the model writes it, before any turn asks: the model is never left waiting.
    assert eventually(lambda: chat.streamed == PIECES)
    timings: dict[str, float] = {}
    assert answered(answers, ASKED, timings=timings) == REPLY
    assert len(chat.requests) == 1  # no second call
    assert timings["ahead"] > 0
    assert (answers.adopted, answers.missed) == (1, 0)


def test_a_turn_with_another_prompt_gets_its_own_answer_and_the_one_ahead_stops() -> None:
    chat = FakeChat()
    chat.piece_delay_s = 0.05  # still writing when the turn comes
    chat.enqueue("One two three four five six seven eight nine ten.", "Paris and Madrid.")
    answers = AnswersAhead(chat)
    begin(answers)
    assert eventually(lambda: chat.streamed >= 1)
    timings: dict[str, float] = {}
    assert answered(answers, OTHER, timings=timings) == "Paris and Madrid."
    assert [request[0] for request in chat.requests] == [ASKED, OTHER]
    assert eventually(stopped_ahead)  # stopped at its next piece
    assert chat.streamed < 10 + 3
    assert timings["ahead"] == 0
    assert (answers.adopted, answers.missed) == (0, 1)


def test_an_answer_dropped_is_not_adopted_later() -> None:
    chat = FakeChat()
    chat.piece_delay_s = 0.05
    chat.enqueue("One two three four five six seven eight nine ten.", REPLY)
    answers = AnswersAhead(chat)
    begin(answers)
    answers.drop("desk")  # the person spoke on
    assert eventually(stopped_ahead)
    assert chat.streamed < 10
    assert answered(answers, ASKED) == REPLY
    assert len(chat.requests) == 2


def test_the_same_words_heard_again_do_not_begin_a_second_answer() -> None:
    chat = FakeChat()
    chat.enqueue(REPLY, "A second answer.")
    answers = AnswersAhead(chat)
    begin(answers)
    begin(answers)
    assert answered(answers, ASKED) == REPLY
    assert len(chat.requests) == 1


def test_new_words_replace_the_answer_begun_for_the_earlier_ones() -> None:
    chat = FakeChat()
    chat.piece_delay_s = 0.05
    chat.enqueue("One two three four five six seven eight nine ten.", "Paris and Madrid.")
    answers = AnswersAhead(chat)
    begin(answers)
    begin(answers, OTHER)
    assert answered(answers, OTHER) == "Paris and Madrid."
    assert len(chat.requests) == 2
    assert eventually(stopped_ahead)
    assert chat.streamed < 10 + 3  # the first one stopped when the second began


def test_an_adopted_answer_stops_when_its_turn_stops_waiting() -> None:
    chat = FakeChat()
    chat.piece_delay_s = 0.05
    chat.enqueue("One two three four five six seven eight nine ten.")
    answers = AnswersAhead(chat)
    begin(answers)
    said: list[str] = []
    for piece in answers.stream(
        "desk", ASKED, max_tokens=64, temperature=0.5, abandoned=lambda: len(said) >= 2
    ):
        said.append(piece)
    assert len(said) < 10  # a barge-in stops it as it stops any answer
    assert chat.streamed < 10


def test_a_model_that_failed_ahead_fails_the_turn_that_adopts_it() -> None:
    chat = FakeChat()
    chat.fail_with = BackendError("model down")
    answers = AnswersAhead(chat)
    begin(answers)
    with pytest.raises(BackendError, match="model down"):
        answered(answers, ASKED)


def test_an_answer_no_turn_adopts_is_dropped_after_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ahead_module, "TTL_S", 0.2)
    chat = FakeChat()
    chat.piece_delay_s = 0.05
    chat.enqueue("One two three four five six seven eight nine ten eleven twelve.", REPLY)
    answers = AnswersAhead(chat)
    begin(answers)
    assert eventually(stopped_ahead)
    assert chat.streamed < 12
    assert answered(answers, ASKED) == REPLY  # begun anew


def test_an_answer_that_may_call_the_devices_tools_is_never_taken_from_ahead() -> None:
    chat = FakeChat()
    chat.supports_tools = True
    chat.enqueue(REPLY, "Volume set.")
    answers = AnswersAhead(chat)
    tools = ToolBox((), lambda name, arguments: "done")
    assert answers.calls(tools) and not answers.calls(None)
    begin(answers)
    assert answered(answers, ASKED, tools=tools) == "Volume set."
    assert len(chat.requests) == 2
