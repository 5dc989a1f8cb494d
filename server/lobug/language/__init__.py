"""What each conversation language (`LOBUG_LANGUAGE`) gets, said once at start-up: replies
are checked for their language where `quality` lists its words; the phrase rules (memory
requests, device settings, turn ends) exist in English only, so in another language those are
understood only by a model that calls tools (`memory/request_tools.py`); the bundled piper
voice speaks English, so another language needs its own (`LOBUG_TTS_VOICE`)."""

from __future__ import annotations

from lobug.language.quality import LANGUAGE_NAMES, LANGUAGE_WORDS

RULE_LANGUAGES = frozenset({"en"})  # the languages the phrase rules are written in
BUNDLED_VOICE_LANGUAGE = "en"


def language_notices(language: str, *, own_voice: bool, speech: bool = True) -> list[str]:
    """What a server in `language` cannot do as it does in English, one sentence each."""
    if language in ("en", "auto"):
        return []
    name = LANGUAGE_NAMES.get(language, language)
    notices = []
    if language not in LANGUAGE_WORDS:
        listed = ", ".join(sorted(LANGUAGE_WORDS))
        notices.append(
            f"LOBUG_LANGUAGE={language}: replies are not checked for their language "
            f"(checked: {listed}), nor told to be in it."
        )
    if language not in RULE_LANGUAGES:
        notices.append(
            f"LOBUG_LANGUAGE={language}: the phrase rules for memory requests, device settings "
            f"and turn ends are English only; in {name} such requests are understood only by a "
            "model that calls tools (Ollama or an OpenAI-compatible server)."
        )
    if speech and not own_voice and language != BUNDLED_VOICE_LANGUAGE:
        notices.append(
            f"LOBUG_LANGUAGE={language}: no voice for {name} is configured, so speech out uses "
            "the bundled English voice; set LOBUG_TTS_VOICE to a piper voice (.onnx) for it."
        )
    return notices


# The server's own sentences in each language they are written in (English is the key):
# said where a reply was refused, so that a German conversation does not fall into English.
OWN_SENTENCES: dict[str, dict[str, str]] = {
    "Sorry, I lost my train of thought. Could you say that again?": {
        "de": "Entschuldige, ich habe den Faden verloren. Kannst du das noch einmal sagen?",
        "fr": "Pardon, j'ai perdu le fil. Tu peux répéter ?",
        "es": "Perdona, he perdido el hilo. ¿Puedes repetirlo?",
        "it": "Scusa, ho perso il filo. Puoi ripetere?",
        "pt": "Desculpa, perdi o fio. Podes repetir?",
    },
    "I don't know that yet. Tell me, and I'll remember.": {
        "de": "Das weiß ich noch nicht. Erzähl es mir, dann merke ich es mir.",
        "fr": "Je ne le sais pas encore. Dis-le-moi et je m'en souviendrai.",
        "es": "Todavía no lo sé. Dímelo y lo recordaré.",
        "it": "Non lo so ancora. Dimmelo e me lo ricorderò.",
        "pt": "Ainda não sei. Diz-me e eu vou lembrar-me.",
    },
}


def said_in(language: str, sentence: str) -> str:
    """One of the server's own English sentences as said in `language` (`OWN_SENTENCES`),
    or as it is where it has no translation."""
    return OWN_SENTENCES.get(sentence, {}).get(language, sentence)
