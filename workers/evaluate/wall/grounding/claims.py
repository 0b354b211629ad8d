"""The checkable parts of an output's prose: names, numbers and content words.

A claim's checkable content is what it names (people, places, works, organisations),
the numbers, dates and quantities it states, and its content words. Function words,
pronouns and discourse markers carry no claim and are skipped. Names and numbers weigh
more than other words: a wrong name or date is the classic hallucination, a paraphrased
verb rarely is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from schemas.request import NodeOutput, OutputKind
from workers.evaluate.findings import sentences
from workers.evaluate.parsed import ParseFailure, json_document
from workers.evaluate.wall.grounding.lexicon import QUALIFIERS, Token, fold, tokens
from workers.evaluate.wall.grounding.sources import Measure, context_keys, measure_of

#: Lower-case words that may sit inside a name (``Bank of England``, ``Ludwig van Beethoven``).
_CONNECTORS = frozenset({"of", "the", "de", "van", "von", "der", "den", "la", "le", "du", "da"})
_COMMON_ENDINGS = (
    "ly",
    "ing",
    "ed",
    "tion",
    "sion",
    "ness",
    "ment",
    "ful",
    "less",
    "able",
    "ible",
    "ous",
    "ive",
    "ity",
    "ers",
    "ists",
    "ors",
    "ies",
    "ally",
    "ward",
    "wise",
    "while",
)
_CODE_BLOCK = re.compile(r"```.*?```|`[^`\n]*`", re.S)
_URL = re.compile(r"\bhttps?://\S+|\bwww\.\S+", re.I)
_MARKERS = re.compile(r"\[[^\[\]\n]{1,80}\](?:\([^)\s]*\))?")
#: A quotation this long is looked up word for word; a shorter one is read as a name.
MIN_QUOTE_WORDS = 3
QUOTE = re.compile(r"[\"“”]([^\"“”\n]{3,400})[\"“”]")


class UnitKind(StrEnum):
    """What a checkable unit is."""

    NAME = "name"
    NUMBER = "number"
    WORD = "word"


#: How much each kind of unit weighs in the unsupported share.
WEIGHTS = {UnitKind.NAME: 3.0, UnitKind.NUMBER: 3.0, UnitKind.WORD: 1.0}


@dataclass(frozen=True, slots=True)
class ClaimUnit:
    """A name, number or content word of one sentence, with the words around it."""

    text: str
    kind: UnitKind
    words: tuple[Token, ...]
    sentence: int
    context: frozenset[str]
    initial: bool = False
    """A lone capitalised word opening its sentence: grammar or a name, the input decides."""
    measure: Measure | None = None
    """For a number: what it measures (``sources.measure_of``)."""


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of prose and its units."""

    text: str
    units: tuple[ClaimUnit, ...]


def prose_of(output: NodeOutput) -> str:
    """The prose an output states: JSON string values, markdown without code."""
    if output.kind is OutputKind.JSON:
        document = json_document(output.content)
        return "" if isinstance(document, ParseFailure) else "\n\n".join(json_strings(document))
    if output.kind is OutputKind.MARKDOWN:
        return _CODE_BLOCK.sub(" ", output.content)
    if output.kind is OutputKind.TEXT:
        return output.content
    return ""


def json_strings(value: Any) -> Iterator[str]:
    """Every string value (not key) of a decoded JSON document, depth first."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def claim_sentences(prose: str, *, qualifiers: bool = False) -> list[Sentence]:
    """The sentences of ``prose`` with their checkable units.

    Quotations long enough to be looked up whole, and links, are checked on their own; a
    short quoted title (``"Bambi"``) is a name like any other. ``qualifiers`` also makes
    units of the stop words that state something (``both``, ``never``).
    """
    cleaned = _MARKERS.sub(" ", _URL.sub(" ", QUOTE.sub(_checked_whole, prose)))
    out: list[Sentence] = []
    for number, text in enumerate(sentences(cleaned)):
        body = text.lstrip("#>*-+ ")
        out.append(Sentence(text, tuple(_units(body, tokens(body), number, qualifiers))))
    return out


def names_in(text: str, words: Sequence[Token]) -> list[ClaimUnit]:
    """The names among a sentence's words (``words`` being ``tokens(text)``).

    Only the names: no context is gathered, so a long input is read cheaply.
    """
    found: list[ClaimUnit] = []
    i = 0
    while i < len(words):
        end = _name_end(text, words, i)
        if end == i:
            i += 1
            continue
        run = tuple(w for w in words[i:end] if fold(w.text) not in _CONNECTORS)
        if run:
            text_of = " ".join(w.text for w in words[i:end])
            found.append(ClaimUnit(text_of, UnitKind.NAME, run, 0, frozenset()))
        i = end
    return found


def _checked_whole(match: re.Match[str]) -> str:
    """A quotation looked up whole (``input_support``) is blanked; a shorter one stays."""
    quote = match.group(1)
    return " " if looked_up_whole(quote) else f" {quote} "


def looked_up_whole(quote: str) -> bool:
    """A quotation long enough to be looked up word for word (shorter ones are names)."""
    return len(quote.split()) >= MIN_QUOTE_WORDS


def _units(
    text: str, words: list[Token], sentence: int, qualifiers: bool = False
) -> Iterator[ClaimUnit]:
    i = 0
    while i < len(words):
        end = _name_end(text, words, i)
        if end > i:
            run = tuple(w for w in words[i:end] if fold(w.text) not in _CONNECTORS)
            yield ClaimUnit(
                " ".join(w.text for w in words[i:end]),
                UnitKind.NAME,
                run,
                sentence,
                context_keys(words, i),
                initial=i == 0 and end == 1,
            )
            i = end
            continue
        word = words[i]
        stated = not word.stop or (qualifiers and fold(word.text) in QUALIFIERS)
        if stated and (len(word.text) > 1 or word.value is not None):
            kind = UnitKind.NUMBER if word.text[:1].isdigit() else UnitKind.WORD
            measure = measure_of(words, i) if kind is UnitKind.NUMBER else None
            yield ClaimUnit(
                word.text, kind, (word,), sentence, context_keys(words, i), measure=measure
            )
        i += 1


def _name_end(text: str, words: Sequence[Token], start: int) -> int:
    """End of the name starting at ``start``, or ``start`` when there is none.

    A sentence's first word is capitalised by grammar, not because it is a name: alone
    it counts as an ordinary word; followed by more capitalised words it opens a name.
    """
    if not _capital(words[start]) or words[start].stop or len(words[start].text) < 2:
        return start
    end = start + 1
    while end < len(words) and _adjacent(text, words[end - 1], words[end]):
        if _capital(words[end]) and not words[end].stop:
            end += 1
        elif (
            fold(words[end].text) in _CONNECTORS
            and end + 1 < len(words)
            and _capital(words[end + 1])
            and _adjacent(text, words[end], words[end + 1])
        ):
            end += 2
        else:
            break
    if start == 0 and end == 1 and _common_shape(words[0].text):
        return start
    return end


def _common_shape(word: str) -> bool:
    """Whether a capitalised first word looks like an ordinary word rather than a name.

    Without a dictionary, the ending decides: ``Unfortunately``, ``Tourists``,
    ``Investigators`` are words; ``Delhi``, ``Mumbai``, ``Kubernetes`` may be names.
    A bare answer (``Delhi.``) is the common case where the first word is the claim.
    """
    return fold(word).endswith(_COMMON_ENDINGS)


def _adjacent(text: str, left: Token, right: Token) -> bool:
    """Only a space, a hyphen or an initial's full stop between two words of a name."""
    gap = text[left.start + len(left.text) : right.start].strip()
    return gap in ("", "-", "&") or (gap == "." and len(left.text) == 1)


def _capital(word: Token) -> bool:
    return word.capitalised and word.value is None
