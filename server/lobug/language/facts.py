"""The words by which a learned fact, in English, is about the user, about the assistant, or
is only a report of speech; and the words every fact is written with, which tell no fact
from another.

- `names_the_user`, `names_the_assistant`: a claim the extraction model wrote is a fact
  about the user only when it names them ("The user", "my", "we"; or someone else by name,
  `memory/disclosure.py`) and not the assistant (`memory/extraction.py`, `claim_problem`).
- `NO_CLAIM_WORDS` (English function words and the fact template's own framing) and
  `USER_IN_OTHER_LANGUAGES` are no key words of a fact: a fact is grounded in what the user
  said by its other words (`memory/extraction.py`: `content_words`, `is_grounded`; through
  them `memory/quality.py`).
- `REPORTING_WORDS`, `FRAME_WORDS` and `is_not_a_report`: a summary reports what was said,
  in the third person, and "The user mentioned a dog" claims only the dog
  (`memory/quality.py`: `output_problem`, `is_supported`).
- `ROLE_WORDS`: in no purged fact's key, since every fact is written with them
  (`memory/purges.py`: `secret_of`)."""

from __future__ import annotations

import re

from lobug.language.text import FUNCTION_WORDS

# The fact template's own framing ("The user's sister is named Ana"): words that carry no claim.
TEMPLATE_WORDS = frozenset(
    "user user's users assistant lo-bug lobug person someone named called currently really".split()
)
# Words that carry no claim: function words and the fact template's own framing.
NO_CLAIM_WORDS = FUNCTION_WORDS | TEMPLATE_WORDS
# "The user" as a fact written in another conversation language names them (`prompts.in_language`).
USER_IN_OTHER_LANGUAGES = frozenset(
    "benutzer benutzers benutzerin nutzer nutzers utilisateur utilisatrice usuario usuaria utente "
    "utilizador utilizadora".split()
)

_ABOUT_THE_USER = re.compile(r"\b(user|users|user's|i|i'm|my|me|we|our|us)\b", re.IGNORECASE)
_ABOUT_THE_ASSISTANT = re.compile(r"\b(assistant|lo-?bug|chatbot|ai model)\b", re.IGNORECASE)


def names_the_user(claim: str) -> bool:
    """Whether a claim speaks of the user: "the user", "users", "I", "I'm", "my", "me", "we",
    "our", "us" ("The user's dog is Biscuit", "We live in Leeds")."""
    return _ABOUT_THE_USER.search(claim) is not None


def names_the_assistant(claim: str) -> bool:
    """Whether a claim speaks of the assistant: "assistant", "Lo-Bug", "chatbot", "AI model"
    ("The assistant is helpful": no fact about the user)."""
    return _ABOUT_THE_ASSISTANT.search(claim) is not None


# Words that report speech and claim nothing of their own ("The user mentioned a dog").
REPORTING_WORDS = frozenset(
    """said says mentioned mentions told tells talked talks shared shares discussed discusses
    asked asks explained explains stated states expressed expresses described describes added
    adds noted""".split()
)
# Who a report is about and who it was with: never a detail of the person's own.
FRAME_WORDS = frozenset("user users user's assistant lo bug lobug lo-bug".split())

# A summary reports what was said: no questions, no one speaking, no transcript lines.
_NOT_A_REPORT = re.compile(
    r"\?|\b(I|I'm|I've|I'd|I'll|me|my|you|you're|your)\b|^\s*(User|Assistant|\w+):\s",
    re.MULTILINE,
)


def is_not_a_report(text: str) -> bool:
    """Whether `text` is no third-person account of what was said: it asks a question,
    someone speaks in it ("I", "my", "you"), or a line of it is a transcript's ("User: hi")."""
    return _NOT_A_REPORT.search(text) is not None


# The two roles every fact's text is written with ("the user", "the assistant"): they tell no
# fact from another.
ROLE_WORDS = frozenset({"user", "assistant"})
