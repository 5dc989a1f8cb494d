"""How a person asks about themselves, in English: the words that make a question one about
the person, what it asks for, and the words a fact answers it with. Read by the answers from
memory (`lobug.turn.recall`), the rules a model that cannot be trusted with the person (the
tiny default) is answered by; a capable model reads questions itself."""

from __future__ import annotations

import re

# Words that say how something is asked, not what about.
ASKING_WORDS = frozenset(
    """remember know tell recall again please lo bug lobug hey hi ok okay say said told
    anything something doing""".split()
)
# A word asked about, and the words of a fact that answer for it.
SYNONYMS = {
    "name": ("name", "named", "called"),
    "called": ("name", "named", "called"),
    "named": ("name", "named", "called"),
    "job": ("job", "work", "works", "worked"),
    "live": ("live", "lives", "lived", "living", "moved"),
    "born": ("born", "birthplace"),
    "birthday": ("birthday", "born"),
    "old": ("old", "age", "aged"),
    "age": ("old", "age", "aged"),
    "mum": ("mum", "mom", "mother"),
    "mom": ("mum", "mom", "mother"),
    "mother": ("mum", "mom", "mother"),
    "dad": ("dad", "father"),
    "car": ("car", "drive", "drives", "drove", "driving"),
    "father": ("dad", "father"),
}
# The kinds a fact names a thing by: a question about "our dog" is answered by "a beagle
# named Biscuit" (a small model does not know that a beagle is a dog; a larger one answers
# such questions itself). Asked word -> the words of a fact that are one of it.
DOG_BREEDS = tuple(
    """beagle labrador retriever poodle terrier spaniel collie shepherd dachshund bulldog
    boxer husky pug chihuahua corgi greyhound whippet schnauzer rottweiler dalmatian
    doberman setter pointer mastiff sheepdog lurcher mutt""".split()
)
CAT_BREEDS = tuple("tabby siamese persian ragdoll bengal sphynx tomcat moggy".split())
KINDS = {
    "dog": ("dog", "puppy", *DOG_BREEDS),
    "cat": ("cat", "kitten", *CAT_BREEDS),
    "breed": (*DOG_BREEDS, *CAT_BREEDS),
    "pet": ("dog", "puppy", "cat", "kitten", "hamster", "rabbit", "parrot", "budgie"),
}
QUESTION_OPENERS = frozenset(
    """what whats who whos whose where wheres when which how do does did is are am was were
    can could have has remind""".split()
)
ADVICE = re.compile(
    r"^(?:how (?:(?:long|much|many|often|soon) )?(?:do|can|could|should|would) (?:i|we)"
    r"|what (?:should|can|could|would) (?:i|we)|(?:should|can|could|would|shall|will) (?:i|we))\b"
)
# Words that make a question one about the person ("me" is what a request for help is for:
# "can you give me a recipe" asks nothing about them).
ABOUT_THE_PERSON = frozenset({"my", "i", "mine", "im", "ive", "our", "we"})
# The words that ask for a name: a name in the fact holds them.
NAME_WORDS = frozenset({"name", "called", "named"})
# The thing a question asks for ("which instrument", "what kind of car"): the fact names it.
ASKED_THING = re.compile(r"^(?:what|which)(?:\s+(?:kind|type|sort)\s+of)?\s+([a-z]+)\b")
WH_OPENERS = frozenset("what whats which who whos whose where wheres when".split())
REMEMBERING = frozenset({"remember", "recall", "know"})  # "remember what she likes?"
POSSESSED = re.compile(r"\b(?:my|our)\s+([a-z]+)")
# A capitalised word after a fact's first: a name ("The user's partner Jonas").
NAME_IN_FACT = re.compile(r"(?<=\s)[A-Z][a-z]+")
YES_NO = re.compile(r"^(?:do|did|can|could) you (?:remember|know|recall)\b")
