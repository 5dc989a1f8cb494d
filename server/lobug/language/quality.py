"""Is this text worth saying or keeping? Checks on model output, without a model.

Small models (the bundled SmolLM2-135M) fall into repetition loops ("Oo, oo, oo, ...") and
drift into another language; such text must not be spoken, stored as a summary or learned
from. Everything here is a pure function of the text, so replies, streamed sentences,
summaries and facts are judged by the same rules.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from lobug.language.text import sentences_of, words_of

# A text of at least MIN_WORDS_FOR_RATIO words with fewer distinct words than this share
# of its words is a loop ("Oo, oo, oo, oo" is 1 distinct word in 4). Ordinary replies of
# one to three sentences sit between 0.6 and 1.0.
MIN_DISTINCT_WORD_RATIO = 0.3
MIN_WORDS_FOR_RATIO = 8
# A phrase of up to this many words said this many times in a row is a loop; a single word
# needs MIN_WORD_REPEATS ("Oh no, no no no!" is speech, not a loop).
MAX_LOOP_PHRASE_WORDS = 8
MIN_LOOP_REPEATS = 3
MIN_WORD_REPEATS = 5
# "hahahahahahahahaha..." or a run of one character: no word is this long.
MAX_WORD_CHARS = 40
# A sentence said this many times is a loop even with other words between.
MAX_SENTENCE_REPEATS = 2
# `guard` values in an assistant message's metadata, set by the reply guard.
REGENERATED = "regenerated"  # the first answer was refused, the second one is stored
FALLBACK = "fallback"  # both were refused: the fallback was said, nothing to learn from
CUT = "cut"  # a streamed answer stopped at its first refused sentence
# The `problem` of a cut answer the person interrupted (barge-in): what they heard is stored.
INTERRUPTED = "interrupted"

_SENTENCE = re.compile(r"[^.!?\n]+")

# Common words of each language, none of them common in the others: enough to tell which
# language a sentence is in. Languages not listed are not checked.
LANGUAGE_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "the and you your is are was were have has had this that with what for not it's i'm "
        "my me we they he she it of to in on at be do does did can will would could should "
        "about there their here how when where why who which i a an am so just like know "
        "really very good great sounds love nice that's don't you're no".split()
    ),
    "pt": frozenset(
        "não que uma com para por mais como mas ao dos das pelo pela está estou também já "
        "você eu ele ela nós isso esta este muito bem sim obrigado olá então há mesmo são "
        "sou tem tenho seu sua meu minha nao voce é às à até pode ser mais difícil e o os "
        "as um do da no na em".split()
    ),
    "es": frozenset(
        "que una con para por más como pero los las del al está estoy también ya usted yo "
        "él ella nosotros eso esta este muy bien sí gracias hola entonces hay mismo son soy "
        "tiene tengo su mi es y el la un en".split()
    ),
    "fr": frozenset(
        "que une avec pour par plus comme mais les des du au est suis aussi déjà vous je il "
        "elle nous ça cette ce très bien oui merci bonjour alors il y a sont tu ton ta mon "
        "ma et le la un dans pas".split()
    ),
    "de": frozenset(
        "und der die das ist nicht ein eine mit für auf auch ich du er sie wir ihr sehr gut "
        "ja danke hallo dann gibt sind bin hat habe mein dein kann zu den dem im von einen "
        "einem einer eines als namens seine seinen ihre ihren unser unsere meine deine bei "
        "aus".split()
    ),
    "it": frozenset(
        "che una con per più come ma gli delle della del al è sono anche già lei io lui noi "
        "questo questa molto bene sì grazie ciao allora ci sei hai ho mio mia il non di".split()
    ),
}
# Words that count for a language only when none of its rivals claim them ("a", "e", "de").
_SHARED = frozenset(
    word
    for word, count in Counter(w for words in LANGUAGE_WORDS.values() for w in words).items()
    if count > 1
)
MIN_LANGUAGE_MARKERS = 2
LANGUAGE_NAMES = {
    "en": "English",
    "pt": "Portuguese",
    "es": "Spanish",
    "fr": "French",
    "de": "German",
    "it": "Italian",
}


def distinct_word_ratio(text: str) -> float:
    """Distinct words over all words (1.0 for an empty text)."""
    found = words_of(text)
    return len(set(found)) / len(found) if found else 1.0


def degeneracy(text: str) -> str | None:
    """Why `text` is a repetition loop, or None when it is not."""
    found = words_of(text)
    if any(len(w) > MAX_WORD_CHARS for w in found):
        return "a run-on word"
    if len(found) >= MIN_WORDS_FOR_RATIO and distinct_word_ratio(text) < MIN_DISTINCT_WORD_RATIO:
        return f"under {MIN_DISTINCT_WORD_RATIO:.0%} distinct words"
    if _repeated_phrase(found):
        return "a phrase repeated in a loop"
    if _repeated_sentence(text):
        return "a sentence repeated"
    return None


def _repeated_phrase(found: list[str]) -> bool:
    """A run of 1..MAX_LOOP_PHRASE_WORDS words said MIN_LOOP_REPEATS times in a row (a single
    word MIN_WORD_REPEATS times)."""
    for size in range(1, MAX_LOOP_PHRASE_WORDS + 1):
        needed = MIN_WORD_REPEATS if size == 1 else MIN_LOOP_REPEATS
        for start in range(0, len(found) - size * needed + 1):
            phrase = found[start : start + size]
            if all(
                found[start + k * size : start + (k + 1) * size] == phrase for k in range(needed)
            ):
                return True
    return False


def _repeated_sentence(text: str) -> bool:
    sentences = [" ".join(words_of(s)) for s in _SENTENCE.findall(text)]
    counts = Counter(s for s in sentences if len(s.split()) >= 2)
    return any(count > MAX_SENTENCE_REPEATS for count in counts.values())


def language_scores(text: str) -> dict[str, int]:
    """How many of the text's words are markers of each listed language."""
    found = [w for w in words_of(text) if w not in _SHARED]
    return {lang: sum(1 for w in found if w in vocab) for lang, vocab in LANGUAGE_WORDS.items()}


def off_language(text: str, language: str) -> str | None:
    """The language `text` is written in when that is clearly not `language`, else None.

    Undecided (too few marker words, an unlisted language, `auto`) counts as in language:
    a short "Okay!" or a name is never refused."""
    if language not in LANGUAGE_WORDS:
        return None
    scores = language_scores(text)
    best = max(scores, key=lambda lang: scores[lang])
    if best == language or scores[best] < MIN_LANGUAGE_MARKERS:
        return None
    return best if scores[best] > 2 * scores[language] else None


def text_problem(text: str, language: str) -> str | None:
    """Why `text` should not be said or kept (a loop, another language), or None."""
    loop = degeneracy(text)
    if loop is not None:
        return f"degenerate: {loop}"
    other = off_language(text, language)
    if other is not None:
        return f"off-language: {other}, not {language}"
    return None


# A reply that opens as a script does, with a speaker's name of two or three words ("El
# Fuego: ...") or a role's ("User: ...", "Assistant: ..."). One word alone ("Sterra: ...")
# is no sure sign: "Done: ...", "Note: ...", "Ingredients: ..." open good replies. Only a
# reply's opening is read so (a recipe may list "Eggs: two" later).
SPEAKER_LABEL = re.compile(
    r"^\s*(?:[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){1,2}"
    r"|(?i:user|assistant|human|ai|bot|system|lo-?bug))\s*:\s"
)
# A stage direction: a part in brackets where a sentence starts ("(repeat of your message)
# Hello."), or an action between asterisks ("*smiles*"). Brackets within a sentence stay
# ("Preheat the oven (180 C)").
STAGE_DIRECTION = re.compile(
    r"(?P<before>^|[.!?]\s+)\s*(?:\([^()]*\)|\[[^\[\]]*\])\s*|\*[^\W\d_][^*\n]{0,60}\*\s*"
)
STAGED = "role-play: a stage direction"
MIN_SENTENCE_WORDS_FOR_LANGUAGE = 4


def reply_problem(text: str, language: str, *, opening: bool = True) -> str | None:
    """Why a reply (or its next piece; `opening`: the piece it starts with) must not be said:
    `text_problem`, a speaker's label or a stage direction (it plays a script rather than
    answering), or a sentence of several words in another language among the conversation's."""
    problem = text_problem(text, language)
    if problem is not None:
        return problem
    if opening and SPEAKER_LABEL.match(text):
        return "role-play: a speaker's label"
    if STAGE_DIRECTION.search(text):
        return STAGED
    for sentence in sentences_of(text):
        if len(words_of(sentence)) >= MIN_SENTENCE_WORDS_FOR_LANGUAGE:
            other = off_language(sentence, language)
            if other is not None:
                return f"off-language: a sentence in {other}, not {language}"
    return None


def without_stage_directions(text: str) -> str:
    """`text` less the stage directions it acts out ("(smiling warmly) Hello." -> "Hello."):
    what is said or shown of a reply is its words, not the acting (the tiny default model
    opens some replies so)."""
    return STAGE_DIRECTION.sub(lambda found: found.group("before") or "", text)


def is_learnable(metadata: Mapping[str, Any] | None) -> bool:
    """Whether an assistant message's words may feed summaries and facts: not the fallback
    said after two refused replies."""
    return not metadata or metadata.get("guard") != FALLBACK


def language_rule(language: str) -> str:
    """ "Write in English only." for a listed language, else ""."""
    name = LANGUAGE_NAMES.get(language)
    return f"Write in {name} only." if name else ""
