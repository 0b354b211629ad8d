"""Wall, grounding: the answer to a choice question is the alternative the input supports.

"Which band was founded first, Hole or The Wolfhounds?" answered "Hole was founded
first" names only what the input names, so every support check passes; yet the input
dates Hole to 1989 and The Wolfhounds to 1985. Where the input decides between the two
alternatives a question offers, the output must choose the one it decides on:

- an order in time (``first``, ``older``, ``earliest``; ``younger``, ``latest``): the
  year the input gives each alternative where it names it;
- any other property ("which documentary is about Finnish rock groups"): the
  alternative whose passage states every word of the property that the input states at
  all, while the other's passage states fewer than half of them.

Where the input does not decide (a year missing or shared, both or neither passage
stating the property), or the output does not plainly choose (it names neither or both,
negates, or answers in the other direction: "the younger one"), nothing is reported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from itertools import pairwise

from schemas.quality import Dimension
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding, sentences
from workers.evaluate.wall.grounding.lexicon import Token, fold, tokens
from workers.evaluate.wall.grounding.sources import NodeInput

#: What a choice the input decides the other way costs consistency (as a contradiction).
WRONG_CHOICE_PENALTY = 0.3
#: Sentences after a mention that still describe the alternative ("She was born ...").
PASSAGE_SENTENCES = 3
#: Words of the asked property the input must state before a passage may decide.
MIN_PROPERTY_WORDS = 2
#: Words a year may follow an alternative's name by and still be its year.
YEAR_REACH = 15
#: Position up to which a name opens its sentence (after ``The``, ``In 1990,``): its subject.
SUBJECT_AT = 2
#: Extra words an alternative's words may be spread over in a text (a middle initial).
NAME_SLACK = 3
_EARLIER = frozenset("first earlier earliest older oldest sooner".split())
_LATER = frozenset("later latest younger youngest newer newest recent".split())
#: Orders of age: the first year given after a name (a birth, a founding) decides them.
_AGE = frozenset("older oldest younger youngest newer newest".split())
#: Beginnings the first year after a name dates; any other event (a death, a first
#: command, a closing) has its own year, which the first year after the name is not.
_ORIGINS = frozenset(
    """
    born founded formed established created started begun began launched introduced
    released published premiered aired debuted opened built produced written invented
    discovered incorporated came come
    """.split()
)
_NEGATION = frozenset("not no never nor neither".split())
#: Comparisons of an amount ("more members", "a higher ranking"): both alternatives have
#: the property, in different measure, so whose passage states it decides nothing.
_COMPARATIVES = frozenset(
    """
    more less fewer higher lower larger smaller bigger greater longer shorter taller
    closer farther further better worse heavier lighter wider richer
    """.split()
)
#: Words that put two named alternatives in order, the first being chosen.
_RANKING = frozenset({"than", "before"})
_NAME_CONNECTORS = frozenset({"of", "the", "for", "and", "de", "van", "von", "la", "le", "du"})
_SEGMENTS = re.compile(r"\s*[,:;]\s*")
#: The sources' sentences, each as its words.
Split = Sequence[Sequence[Token]]


class Order(StrEnum):
    """Which end of a time order the question asks for."""

    EARLIER = "earlier"
    LATER = "later"


@dataclass(frozen=True, slots=True)
class Alternative:
    """One of the two things a question offers, as written and as matched."""

    text: str
    words: tuple[Token, ...]
    """Its content words: all must occur, close together, where it is named."""


@dataclass(frozen=True, slots=True)
class Choice:
    """A question offering two alternatives, and what it asks of them."""

    first: Alternative
    second: Alternative
    predicate: frozenset[str]
    """Content keys of the property asked for, the alternatives' own words removed."""
    order: Order | None
    comparative: bool
    """The question compares an amount (``more``, ``higher``) rather than asking who has it."""


def check_choice(prose: str, task: str | None, given: NodeInput) -> list[Finding]:
    """A finding when the output picks the alternative the sources decide against."""
    choice = choice_question(task or "")
    if choice is None:
        return []
    split = [words for _, words in given.source_sentences]
    choice = _as_named(choice, split)
    chosen = _chosen(tokens(prose), choice)
    if chosen is None:
        return []
    decided = _decided(choice, split)
    if decided is None or decided[0] is chosen:
        return []
    expected, evidence = decided
    return [
        finding(
            Dimension.CONSISTENCY,
            IssueCode.CONTRADICTS_INPUT,
            f"the task asks to choose between {choice.first.text!r} and {choice.second.text!r}; "
            f"the output chooses {chosen.text!r}, the input supports {expected.text!r} "
            f"({evidence})",
            WRONG_CHOICE_PENALTY,
            field=chosen.text,
            fix=f"Check the sources: they support {expected.text!r}",
        )
    ]


def choice_question(task: str) -> Choice | None:
    """The last question of ``task`` that offers ``A or B``, else None."""
    asked = [s for s in sentences(task) if s.rstrip().endswith("?") and " or " in s]
    if not asked:
        return None
    head, _, tail = asked[-1].rstrip(" ?").rpartition(" or ")
    second, rest = _leading_name(tail)
    segments = [s for s in _SEGMENTS.split(head) if s]
    if len(segments) > 1:
        named = [s for s in segments[1:] if s[:1].isupper()]
        first_text = named[-1] if named else ""
        clause = segments[0]
    else:
        first_text, clause = _trailing_name(head)
    first, other = _alternative(first_text), _alternative(second)
    if first is None or other is None or _keys(first.words) == _keys(other.words):
        return None
    asked_words = tokens(f"{clause} {rest}")[1:]
    content = frozenset(w.key for w in asked_words if not w.stop)
    keys = content - _keys(first.words) - _keys(other.words)
    folded = {fold(w.text) for w in asked_words}
    order = Order.EARLIER if folded & _EARLIER else Order.LATER if folded & _LATER else None
    if order is not None and not folded & (_AGE | _ORIGINS):
        # "Who was the first ESA astronaut to command a mission", "who passed away first":
        # an order of some other event, which no first year after a name dates.
        return None
    return Choice(first, other, keys, order, bool(folded & _COMPARATIVES))


def _leading_name(text: str) -> tuple[str, str]:
    """``MedStar Hospital the largest ...``: the name it opens with, and the rest."""
    words = tokens(text)
    end = 0
    while end < len(words) and (
        words[end].capitalised or (end and fold(words[end].text) in _NAME_CONNECTORS)
    ):
        end += 1
    while end and not words[end - 1].capitalised:
        end -= 1
    if end == 0:
        return "", text
    cut = words[end - 1].start + len(words[end - 1].text)
    return text[:cut], text[cut:]


def _trailing_name(text: str) -> tuple[str, str]:
    """``Who is older Glenn Hughes``: the name it ends with (never its first word), the rest."""
    words = tokens(text)
    start = len(words)
    while start > 1 and (
        words[start - 1].capitalised or fold(words[start - 1].text) in _NAME_CONNECTORS
    ):
        start -= 1
    while start < len(words) and not words[start].capitalised:
        start += 1
    if start >= len(words):
        return "", text
    return text[words[start].start :], text[: words[start].start]


def _alternative(text: str) -> Alternative | None:
    words = tuple(w for w in tokens(text.strip()) if not w.stop)
    return Alternative(text.strip(), words) if words else None


def _keys(words: Sequence[Token]) -> frozenset[str]:
    return frozenset(w.key for w in words)


def _find(alternative: Alternative, words: Sequence[Token]) -> int | None:
    """Where ``words`` name the alternative: all its words, capitalised as it has them.

    A word may be two adjacent ones run together: ``Solarquest`` is ``SolarQuest``, which
    scraped-text repair reads as ``Solar Quest``.
    """
    wanted = {w.key: w.capitalised for w in alternative.words}
    span = len(wanted) + NAME_SLACK
    keys = [(w.key, w.capitalised) for w in words]
    joined = [(a.key + b.key, a.capitalised) for a, b in pairwise(words)]
    for start in range(len(words)):
        here = {keys[start][0], *(j for j, _ in joined[start : start + 1])}
        if here.isdisjoint(wanted):
            continue
        window = keys[start : start + span] + joined[start : start + span]
        if all(_named_in(window, key, cap) for key, cap in wanted.items()):
            return start
    return None


def _named_in(window: Sequence[tuple[str, bool]], key: str, capitalised: bool) -> bool:
    return any(k == key and (cap or not capitalised) for k, cap in window)


def _as_named(choice: Choice, split: Split) -> Choice:
    """Each alternative as the input names it.

    ``Massachusetts Boston College`` (the end of a place, then the name) is ``Boston
    College`` when only that is named there.
    """
    named = [_named_part(a, split) for a in (choice.first, choice.second)]
    if _keys(named[0].words) == _keys(named[1].words):
        return choice
    return replace(choice, first=named[0], second=named[1])


def _named_part(alternative: Alternative, split: Split) -> Alternative:
    if any(_find(alternative, s) is not None for s in split):
        return alternative
    for drop in range(1, len(alternative.words)):
        words = alternative.words[drop:]
        part = Alternative(alternative.text[words[0].start :], words)
        if any(_find(part, s) is not None for s in split):
            return part
    return alternative


def _chosen(words: Sequence[Token], choice: Choice) -> Alternative | None:
    """The alternative the output plainly picks, or None when it hedges or names both."""
    folded = {fold(w.text) for w in words}
    if folded & _NEGATION or any(f.endswith("n't") for f in folded):
        return None
    opposite = _LATER if choice.order is Order.EARLIER else _EARLIER
    if choice.order is not None and folded & (opposite | {"after"}):
        return None
    alternatives = (choice.first, choice.second)
    found = sorted(
        (at, n) for n, a in enumerate(alternatives) if (at := _find(a, words)) is not None
    )
    if len(found) == 1:
        return alternatives[found[0][1]]
    if len(found) == 2:
        between = {fold(w.text) for w in words[found[0][0] : found[1][0]]}
        return alternatives[found[0][1]] if between & _RANKING else None
    return None


def _decided(choice: Choice, split: Split) -> tuple[Alternative, str] | None:
    """The alternative the input supports, with the evidence, or None if it does not say.

    An input that never names one of the two says nothing about it: no decision.
    """
    for alternative in (choice.first, choice.second):
        if all(_find(alternative, words) is None for words in split):
            return None
    if choice.order is not None:
        return _by_year(choice, split)
    return _by_property(choice, split)


def _by_year(choice: Choice, split: Split) -> tuple[Alternative, str] | None:
    years = {
        a: _year_of(a, b, split)
        for a, b in ((choice.first, choice.second), (choice.second, choice.first))
    }
    first, second = years[choice.first], years[choice.second]
    if first is None or second is None or first == second:
        return None
    earlier = choice.first if first < second else choice.second
    later = choice.second if earlier is choice.first else choice.first
    evidence = f"{choice.first.text}: {first}, {choice.second.text}: {second}"
    return (earlier if choice.order is Order.EARLIER else later), evidence


def _year_of(alternative: Alternative, other: Alternative, split: Split) -> int | None:
    """The first year the input gives the alternative where it describes it.

    Read in turn: the sentences it opens (``Odysseas Elytis (Greek: ...; 2 November 1911 -
    ...)``), anywhere in them; the sentences continuing one of those ("It was introduced
    in 1995"); then a passing mention, within ``YEAR_REACH`` words, which in another's
    sentence ("... killed Manfred von Richthofen on 21 April 1918") dates that event.
    """
    found = [_find(alternative, words) for words in split]
    opened = [i for i, at in enumerate(found) if at is not None and at <= SUBJECT_AT]
    continued = [
        i for o in opened for i in _continuations(o, alternative, other, split) if i not in opened
    ]
    mentioned = [i for i, at in enumerate(found) if at is not None and at > SUBJECT_AT]
    for index in [*opened, *continued, *mentioned]:
        at = found[index] or 0
        words = split[index]
        reach = at + YEAR_REACH if index in mentioned else len(words)
        for word in words[at:reach]:
            if word.value is not None and len(word.text) == 4 and word.text.isdigit():
                if 1000 <= word.value <= 2100:
                    return int(word.value)
    return None


def _continuations(
    index: int, alternative: Alternative, other: Alternative, split: Split
) -> list[int]:
    """The sentences after ``split[index]`` that still describe the alternative.

    They stop at the next sentence naming either alternative.
    """
    following = []
    for after in range(index + 1, min(index + PASSAGE_SENTENCES, len(split))):
        words = split[after]
        if _find(other, words) is not None or _find(alternative, words) is not None:
            break
        following.append(after)
    return following


def _by_property(choice: Choice, split: Split) -> tuple[Alternative, str] | None:
    if choice.comparative:
        return None
    stated = frozenset(w.key for words in split for w in words)
    asked = choice.predicate & stated
    if len(asked) < MIN_PROPERTY_WORDS or 2 * len(asked) < len(choice.predicate):
        # One word ("singer", "born"), or a property the input mostly does not state:
        # which passage holds it says little about which alternative has it.
        return None
    covered = {a: asked & _passage(a, choice, split) for a in (choice.first, choice.second)}
    for mine, other in ((choice.first, choice.second), (choice.second, choice.first)):
        if covered[mine] == asked and 2 * len(covered[other]) < len(asked):
            return mine, f"its passage states {', '.join(sorted(asked))}"
    return None


def _passage(alternative: Alternative, choice: Choice, split: Split) -> frozenset[str]:
    """Keys of the sentences that name the alternative and of those continuing them.

    A continuation stops at a sentence naming the other alternative: that is its passage.
    """
    other = choice.second if alternative is choice.first else choice.first
    keys: set[str] = set()
    for index, words in enumerate(split):
        if _find(alternative, words) is None:
            continue
        keys.update(w.key for w in words)
        for after in _continuations(index, alternative, other, split):
            keys.update(w.key for w in split[after])
    return frozenset(keys)
