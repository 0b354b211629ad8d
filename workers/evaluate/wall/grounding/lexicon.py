"""Words as the grounding checks compare them: folded, stemmed, numbers read as values.

An output is compared with its input word by word, so both sides must be normalised the
same way: case and accents folded (``Kōbō`` is ``kobo``), run-together sentences split
(``1846).First`` and ``DreamDancing`` are common in scraped sources), plural and tense
endings stripped, and numbers read as values (``2,466`` is ``2466``; ``22%`` is 22).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

_JOINED = re.compile(
    r"(?:(?<=[a-z]{3})|(?<=[0-9.)\]])|(?<=[.!?][\"”]))(?=[A-Z][a-z])"
    # A sentence run into an all-capitals name: ``(... Die Linke).ZÈRTZ is``.
    r"|(?<=[a-z)\]]\.)(?=[A-ZÀ-ÖØ-Þ][A-ZÀ-ÖØ-Þ]+\b)"
)
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
#: A year run into the day of the date after it: ``26 September 188926 May 1976``.
_JOINED_DATES = re.compile(rf"(?<=\b[12]\d{{3}})(?=(?:[1-9]|[12]\d|3[01]) (?:{_MONTHS})\b)")
_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?(?:st|nd|rd|th|s)?\b|[^\W\d_]+(?:['’][^\W\d_]+)*")
_SUFFIXES = ("iness", "ness", "ment", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s")
_ORDINAL = re.compile(r"(?:st|nd|rd|th|s)$")
#: Length of the prefix two long words must share to count as forms of one word.
PREFIX_CHARS = 5

#: Words that carry no checkable claim: function words, pronouns, auxiliaries, common
#: discourse markers and reporting verbs. A claim is judged by its other words.
STOPWORDS = frozenset(
    """
    a about above across after again against ago all almost along already also although
    always am among an and another any anyone anything are around as at away back be
    because been before being below besides between both but by can could did do does
    doing done down during each either else enough even ever every everyone everything
    few for from further get gets got had has have having he her here hers herself him
    himself his how however i if in indeed instead into is it its itself just least less
    let like likely many may me might mine more most much must my myself neither never no
    nobody none nor not nothing now of off often on once one only onto or other others
    otherwise our ours ourselves out over own perhaps quite rather really same several
    shall she should since so some someone something sometimes still such than that the
    their theirs them themselves then there therefore these they thing things this those
    though through thus to too toward towards under until up upon us very via was we well
    were what whatever when whenever where whereas wherever whether which while who whom
    whose why will with within without would yes yet you your yours yourself yourselves
    s t d ll re ve m dont didnt doesnt isnt wasnt werent arent wont wouldnt couldnt
    shouldnt cant im ive youre theyre weve theyve youve id youd ill youll hes shes lets
    oh ok okay sure yeah yep yup nope hi hello hey thanks thank please great cool nice
    actually absolutely certainly definitely basically really probably maybe
    say says said saying tell tells told according reportedly report reports reported
    think thinks thought believe believes know knows knew known seem seems seemed
    make makes made go goes went going gone come comes came take takes took see sees saw
    seen want wants wanted good better best lot lots kind sort way ways
    """.split()
)

#: Stop words that still state something (how many, how often, whether, since when): an
#: output that only restates its input must not add them either (``both``, ``never``).
#: ``yes`` and ``no`` are not among them: they are how a question is answered.
QUALIFIERS = frozenset(
    """
    all both each every few many most much several some none not never nor neither only
    always often sometimes now still already yet ever again almost must
    """.split()
)

NUMBER_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
    "million": 1_000_000,
    "billion": 1_000_000_000,
    "dozen": 12,
}


@dataclass(frozen=True, slots=True)
class Token:
    """One word or number of a text, as written and as compared."""

    text: str
    """As written, case and accents kept."""
    key: str
    """Folded and stemmed: what support is decided on."""
    start: int
    """Offset in the text it came from."""
    value: float | None = None
    """The number it states, for digits and number words."""
    stop: bool = False
    """A word that carries no checkable claim by itself."""

    @property
    def capitalised(self) -> bool:
        """Starts with an upper-case letter (a name, or a sentence's first word)."""
        return self.text[:1].isupper()


def fold(text: str) -> str:
    """Lower-case with accents removed and curly apostrophes made straight."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.replace("’", "'"))
    if max(decomposed) <= "\uffff":  # the common case, at C speed: a source is long
        return decomposed.translate(_combining_marks()).lower()
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


@lru_cache(maxsize=1)
def _combining_marks() -> dict[int, None]:
    """A ``str.translate`` table deleting the Basic Multilingual Plane's combining marks."""
    return {cp: None for cp in range(0x10000) if unicodedata.combining(chr(cp))}


def unjoin(text: str) -> str:
    """Put a space where scraped text ran two sentences, names or dates together."""
    return _JOINED_DATES.sub(" ", _JOINED.sub(" ", text))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude, stable stem: possessive, plural and common verb endings removed."""
    word = fold(word)
    if word.endswith("'s"):
        word = word[:-2]
    word = word.replace("'", "")
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def number_value(text: str) -> float | None:
    """The value of a digit string (``2,466``, ``6.213``) or a number word, else None."""
    if text[:1].isdigit():
        try:
            return float(_ORDINAL.sub("", text).replace(",", ""))
        except ValueError:
            return None
    word = NUMBER_WORDS.get(fold(text))
    return None if word is None else float(word)


def tokens(text: str) -> list[Token]:
    """The words and numbers of ``text`` in order (``twenty-nine`` is one number, 29)."""
    out: list[Token] = []
    for match in _TOKEN.finditer(text):
        word = match.group().rstrip(",")
        start = match.start()
        value, key, stop = _read(word)
        if value is not None and out and _compound(out[-1], value, text, start):
            tens = out.pop()
            word, start = text[tens.start : start + len(word)], tens.start
            _, key, stop = _read(word)
            value = (tens.value or 0) + value
        out.append(Token(word, key, start, value, stop))
    return out


@lru_cache(maxsize=65536)
def _read(word: str) -> tuple[float | None, str, bool]:
    """(value, key, stop) of one word: a source's words repeat, so each is read once."""
    folded = fold(word)
    key = folded.replace(",", "") if word[:1].isdigit() else stem(folded)
    stop = key in STOPWORDS or folded in STOPWORDS or _pronoun_contraction(folded)
    return number_value(word), key, stop


def _compound(tens: Token, units: float, text: str, at: int) -> bool:
    """``twenty-nine``: a tens word, a hyphen, a units word."""
    return (
        tens.value is not None
        and not tens.text[:1].isdigit()
        and tens.value in _TENS
        and 1 <= units <= 9
        and text[tens.start + len(tens.text) : at] == "-"
    )


_TENS = frozenset(float(v) for v in range(20, 100, 10))


def _pronoun_contraction(folded: str) -> bool:
    """``he'll``, ``it's``, ``they'd``: a pronoun with an auxiliary carries no claim."""
    head, apostrophe, _ = folded.partition("'")
    return bool(apostrophe) and head in STOPWORDS


def prefix(key: str) -> str | None:
    """The prefix under which long words of one family meet (``rescuer``, ``rescued``)."""
    return key[:PREFIX_CHARS] if len(key) > PREFIX_CHARS and key.isalpha() else None


@lru_cache(maxsize=32)
def squash(text: str) -> str:
    """Folded text with every run of non-word characters made one space (for quotes).

    Cached: one review squashes the same source for the task splitter, the policy and
    each quote check; 32 entries bound the memory at a few outputs of the largest size.
    """
    return " ".join(re.findall(r"[^\W_]+", fold(unjoin(text))))
