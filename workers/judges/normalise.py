"""Text as a model reads it, for finding instructions hidden from a pattern match.

An output can address its judge in ways a regular expression over the raw text misses
and a model still reads: fullwidth or other compatibility letters, zero-width and bidi
control characters inside the words, invisible Unicode tag characters that spell ASCII,
Cyrillic and Greek letters that look Latin, and runs of spaces or line breaks between
the words. Each step below undoes one of these; ``views`` applies them cumulatively so
that a match can say which step exposed it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from enum import StrEnum


class Normalisation(StrEnum):
    """One step toward the text a model reads, in the order they are applied."""

    NFKC = "Unicode NFKC (fullwidth and compatibility letters)"
    TAGS = "invisible tag characters read as ASCII"
    INVISIBLE = "zero-width and bidi control characters removed"
    CONFUSABLES = "Cyrillic/Greek look-alike letters folded to Latin"
    WHITESPACE = "whitespace runs collapsed"


#: Format characters that render as nothing: zero-width space/joiners, word joiner, BOM,
#: soft hyphen, combining grapheme joiner, Mongolian vowel separator, bidi marks,
#: embeddings, overrides and isolates, and variation selectors.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069"
    "\ufe00-\ufe0f\ufeff]"
)
#: Unicode tag characters (U+E0020..U+E007E) mirror printable ASCII, invisibly.
_TAGS = re.compile("[\U000e0020-\U000e007e]")
_TAG_BLOCK = re.compile("[\U000e0000-\U000e007f]")
_WHITESPACE = re.compile(r"\s+")

#: Letters that look Latin, by Unicode name (so that this table can be read and checked).
_LOOKALIKES: dict[str, tuple[str, ...]] = {
    "a": ("CYRILLIC SMALL LETTER A", "GREEK SMALL LETTER ALPHA"),
    "c": ("CYRILLIC SMALL LETTER ES", "GREEK LUNATE SIGMA SYMBOL"),
    "d": ("CYRILLIC SMALL LETTER KOMI DE",),
    "e": ("CYRILLIC SMALL LETTER IE", "GREEK SMALL LETTER EPSILON"),
    "h": ("CYRILLIC SMALL LETTER SHHA",),
    "i": (
        "CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I",
        "GREEK SMALL LETTER IOTA",
        "LATIN SMALL LETTER DOTLESS I",
    ),
    "j": ("CYRILLIC SMALL LETTER JE",),
    "k": ("GREEK SMALL LETTER KAPPA",),
    "l": ("CYRILLIC SMALL LETTER PALOCHKA",),
    "n": ("GREEK SMALL LETTER ETA",),
    "o": ("CYRILLIC SMALL LETTER O", "GREEK SMALL LETTER OMICRON"),
    "p": ("CYRILLIC SMALL LETTER ER", "GREEK SMALL LETTER RHO"),
    "q": ("CYRILLIC SMALL LETTER QA",),
    "r": ("CYRILLIC SMALL LETTER GHE",),
    "s": ("CYRILLIC SMALL LETTER DZE",),
    "t": ("GREEK SMALL LETTER TAU",),
    "u": ("GREEK SMALL LETTER UPSILON",),
    "v": ("GREEK SMALL LETTER NU", "CYRILLIC SMALL LETTER IZHITSA"),
    "w": ("CYRILLIC SMALL LETTER WE",),
    "x": ("CYRILLIC SMALL LETTER HA", "GREEK SMALL LETTER CHI"),
    "y": ("CYRILLIC SMALL LETTER U",),
    "A": ("CYRILLIC CAPITAL LETTER A", "GREEK CAPITAL LETTER ALPHA"),
    "B": ("CYRILLIC CAPITAL LETTER VE", "GREEK CAPITAL LETTER BETA"),
    "C": ("CYRILLIC CAPITAL LETTER ES",),
    "E": ("CYRILLIC CAPITAL LETTER IE", "GREEK CAPITAL LETTER EPSILON"),
    "H": ("CYRILLIC CAPITAL LETTER EN", "GREEK CAPITAL LETTER ETA"),
    "I": ("CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I", "GREEK CAPITAL LETTER IOTA"),
    "J": ("CYRILLIC CAPITAL LETTER JE",),
    "K": ("CYRILLIC CAPITAL LETTER KA", "GREEK CAPITAL LETTER KAPPA"),
    "M": ("CYRILLIC CAPITAL LETTER EM", "GREEK CAPITAL LETTER MU"),
    "N": ("GREEK CAPITAL LETTER NU",),
    "O": ("CYRILLIC CAPITAL LETTER O", "GREEK CAPITAL LETTER OMICRON"),
    "P": ("CYRILLIC CAPITAL LETTER ER", "GREEK CAPITAL LETTER RHO"),
    "S": ("CYRILLIC CAPITAL LETTER DZE",),
    "T": ("CYRILLIC CAPITAL LETTER TE", "GREEK CAPITAL LETTER TAU"),
    "X": ("CYRILLIC CAPITAL LETTER HA", "GREEK CAPITAL LETTER CHI"),
    "Y": ("GREEK CAPITAL LETTER UPSILON",),
    "Z": ("GREEK CAPITAL LETTER ZETA",),
}
_FOLD = str.maketrans(
    {unicodedata.lookup(name): latin for latin, names in _LOOKALIKES.items() for name in names}
)


def _tags_as_ascii(text: str) -> str:
    shown = _TAGS.sub(lambda m: chr(ord(m.group()) - 0xE0000), text)
    return _TAG_BLOCK.sub("", shown)


_STEPS: dict[Normalisation, Callable[[str], str]] = {
    Normalisation.NFKC: lambda text: unicodedata.normalize("NFKC", text),
    Normalisation.TAGS: _tags_as_ascii,
    Normalisation.INVISIBLE: lambda text: _INVISIBLE.sub("", text),
    Normalisation.CONFUSABLES: lambda text: text.translate(_FOLD),
    Normalisation.WHITESPACE: lambda text: _WHITESPACE.sub(" ", text),
}


def views(text: str) -> list[tuple[Normalisation | None, str]]:
    """``text`` itself, then after each step in turn (each view includes the ones before)."""
    found: list[tuple[Normalisation | None, str]] = [(None, text)]
    for step, apply in _STEPS.items():
        text = apply(text)
        found.append((step, text))
    return found


def normalise(text: str) -> str:
    """``text`` after every step."""
    return views(text)[-1][1]
