"""When a number the output states contradicts one the input gives, and when it only differs.

A contradiction is definite, so it must be about the same thing: the input's number of
the same measure (a year, a date, a count of the same unit) in a context that shares the
output's words. Two readings are not contradictions. An approximation keeps to the
input when its bound holds ("more than 2,000 injured" where the input says 2,226;
"about 640" for 643). A weak link (one shared context word) in a long input, or in one
that gives several values of that measure, does not say which one the output meant: a long
article, or a passage with three April dates, contradicts nothing by sharing "April" or
"year-old" with the output; the number is unsupported, which is suspect.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workers.evaluate.wall.grounding.claims import ClaimUnit
from workers.evaluate.wall.grounding.sources import MeasureKind, NodeInput, NumberMention

#: Context words two numbers must share to be about the same thing on their own.
STRONG_LINK = 2
#: Values of one measure an input may give while one shared word still links a number.
FEW = 3
#: Sentences of input within which one shared context word links two numbers.
SHORT_INPUT = 12
#: How far an "about" figure may be from the input's value.
APPROXIMATION = 0.15
_AT_LEAST = r"more than|over|at least|upwards of|in excess of|no fewer than|no less than"
_AT_MOST = r"less than|under|fewer than|up to|at most|no more than|nearly|almost|just under"
_ABOUT = r"about|around|roughly|some|approximately|close to|an estimated|estimated|nearly|almost"
_BOUND = re.compile(
    rf"\b(?:(?P<least>{_AT_LEAST})|(?P<most>{_AT_MOST})|(?P<about>{_ABOUT}))\s+$", re.I
)


@dataclass(frozen=True, slots=True)
class Clash:
    """The input's number an output's number contradicts, and where."""

    mention: NumberMention
    label: str
    """The part of the input it was found in."""
    about: tuple[str, ...]
    """The context words the two numbers share."""


def qualifier(sentence: str, number: str) -> str | None:
    """``least``, ``most`` or ``about`` when a bound word stands just before ``number``."""
    at = sentence.find(number)
    while at >= 0:
        match = _BOUND.search(sentence[max(0, at - 30) : at])
        if match is not None:
            return next(k for k, v in match.groupdict().items() if v)
        at = sentence.find(number, at + 1)
    return None


def keeps_to(bound: str, value: float, given: float) -> bool:
    """Whether an approximate ``value`` with ``bound`` agrees with the input's ``given``."""
    if bound == "least":
        return given >= value
    if bound == "most":
        return given <= value or abs(given - value) <= APPROXIMATION * max(given, value)
    return abs(given - value) <= APPROXIMATION * max(given, value)


def clash(unit: ClaimUnit, given: NodeInput, bound: str | None = None) -> Clash | None:
    """The input's number ``unit`` contradicts, if one is clearly about the same thing.

    ``12 days`` can contradict ``66 days``, a year another year; a count whose unit
    neither text says (``One of the five``) contradicts nothing, nor does an approximation
    whose bound the input's value keeps (``bound``: see ``qualifier``).
    """
    (word,) = unit.words
    if word.value is None or unit.measure is None or not unit.measure.known:
        return None
    linked: list[tuple[int, NumberMention, str]] = []
    for text in given.texts:
        for mention in text.numbers:
            if mention.measure != unit.measure or _same(word.text, word.value, mention):
                continue
            shared = len(mention.context & unit.context)
            if shared:
                linked.append((shared, mention, text.label))
    if not linked:
        return None
    if bound is not None and any(keeps_to(bound, word.value, m.value) for _, m, _ in linked):
        return None
    shared, mention, label = max(linked, key=lambda c: c[0])
    if shared < STRONG_LINK and _many(unit, given):
        return None
    return Clash(mention, label, tuple(sorted(mention.context & unit.context)))


def _many(unit: ClaimUnit, given: NodeInput) -> bool:
    """Whether one shared word is too weak a link in this input.

    In a short passage a number of the same measure sharing a word with the output's is
    about the same thing; in a long document, or among several values of that measure,
    numbers share common words ("April", "year-old", "points") by chance.
    """
    values = {m.value for t in given.texts for m in t.numbers if m.measure == unit.measure}
    return len(values) > FEW or sum(len(t.split) for t in given.passages) > SHORT_INPUT


def _same(text: str, value: float, mention: NumberMention) -> bool:
    """The same value, a two-digit decade (``80s``) included (``1980s``)."""
    if mention.value == value:
        return True
    decade = mention.measure.kind is MeasureKind.DECADE
    return decade and value < 100 and mention.value % 100 == value
