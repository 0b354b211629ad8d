"""Wall, grounding: who made a work, when the input says someone else did.

"A Wind in the Door was written by J.K. Rowling" where the input says "A Wind in the Door
is written by Madeleine L'Engle" swaps the maker of a work the input names: the kind of
substitution a model makes most. A work has one author, director, composer or founder
as far as a text about it goes, so an output naming a maker the input never gives that
work, for a relation the input does give it, contradicts the input. The other way round
is no contradiction: an author writes many works ("Jim Butcher also wrote ...").

Read from plain clauses only: ``X was written by Y``, ``Y wrote X``, ``Y was the author
of X``, and in the input also ``X is a 2007 film directed by Y`` (X opening its sentence).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise

from schemas.quality import Dimension
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding, sentences
from workers.evaluate.wall.grounding.claims import ClaimUnit, names_in
from workers.evaluate.wall.grounding.lexicon import Token, fold, tokens
from workers.evaluate.wall.grounding.sources import NodeInput

#: What naming another maker costs consistency (as any contradiction of the input).
SWAP_PENALTY = 0.3
#: Shortest word that, as the start or end of another, is taken for the same word.
AFFIX_MIN = 4
#: Shortest word a one-letter misspelling of which is taken for the same word.
SPELLING_MIN = 5
#: The relations, by the forms that state them: a past participle (``written by``), an
#: active past (``wrote``), a maker's noun (``the author of``). Only ``write`` is irregular.
_REGULAR = ("direct", "compose", "found", "create", "paint", "design", "invent")
_PAST = {(verb + "d" if verb.endswith("e") else verb + "ed"): verb for verb in _REGULAR}
_PARTICIPLES = {"written": "write", **_PAST}
_ACTIVE = {"wrote": "write", **_PAST}
_MAKERS = {
    "author": "write",
    "writer": "write",
    "director": "direct",
    "composer": "compose",
    "founder": "found",
    "creator": "create",
    "painter": "paint",
    "designer": "design",
    "inventor": "invent",
}
_RELATION_WORDS = re.compile(
    r"\b(?:" + "|".join(sorted({*_PARTICIPLES, *_ACTIVE, *_MAKERS})) + r")\b", re.I
)
#: Words that may stand beside the relation's own (``is actually written by``, ``was the
#: author of``).
_FILLERS = frozenset("is was were are has had been actually also originally the a an".split())


@dataclass(frozen=True, slots=True)
class Attribution:
    """A work, the relation, and who the text says made it."""

    work: ClaimUnit
    relation: str
    maker: ClaimUnit


def check_attributions(prose: str, given: NodeInput) -> list[Finding]:
    """A finding for each work the output gives a maker the input does not give it."""
    given_makers = [
        a for text, words in given.source_sentences for a in _attributions(text, words, True)
    ]
    if not given_makers:
        return []
    found: list[Finding] = []
    for sentence in sentences(prose):
        for claimed in _attributions(sentence, tokens(sentence)):
            stated = [
                g
                for g in given_makers
                if g.relation == claimed.relation and _same(g.work, claimed.work)
            ]
            if stated and not any(_same(g.maker, claimed.maker) for g in stated):
                found.append(_swapped(claimed, stated))
    return found


def _swapped(claimed: Attribution, stated: Sequence[Attribution]) -> Finding:
    makers = ", ".join(dict.fromkeys(g.maker.text for g in stated))
    return finding(
        Dimension.CONSISTENCY,
        IssueCode.CONTRADICTS_INPUT,
        f"the output gives {claimed.work.text!r} the maker {claimed.maker.text!r} "
        f"({claimed.relation}) where the input gives {makers}",
        SWAP_PENALTY,
        field=claimed.work.text,
        fix=f"The sources name {makers}; use that, or say where yours comes from",
    )


def _attributions(
    text: str, words: Sequence[Token], from_input: bool = False
) -> Iterator[Attribution]:
    """Each (work, relation, maker) one sentence states plainly.

    Names are read only in a sentence with a relation's word: most input sentences have
    none, and a long document is read on every review.
    """
    if not _RELATION_WORDS.search(text):
        return
    names = names_in(text, words)
    for left, right in pairwise(names):
        found = _between(fold(w.text) for w in _words_between(words, left, right))
        if found is not None:
            relation, passive = found
            yield Attribution(*((left, relation, right) if passive else (right, relation, left)))
    if from_input and names:
        yield from _described(words, names)


def _between(between_words: Iterable[str]) -> tuple[str, bool] | None:
    """The relation the words between two names state, and whether it is passive.

    ``is actually written by`` (the work first), ``also wrote`` and ``was the author of``
    (the maker first).
    """
    between = list(between_words)
    if not between or len(between) > 4:
        return None
    *lead, last = between
    if last == "by" and lead and lead[-1] in _PARTICIPLES and _FILLERS.issuperset(lead[:-1]):
        return _PARTICIPLES[lead[-1]], True
    if last in _ACTIVE and _FILLERS.issuperset(lead):
        return _ACTIVE[last], False
    if last == "of" and lead and lead[-1] in _MAKERS and _FILLERS.issuperset(lead[:-1]):
        return _MAKERS[lead[-1]], False
    return None


def _described(words: Sequence[Token], names: Sequence[ClaimUnit]) -> Iterator[Attribution]:
    """The makers of the name opening an input sentence.

    ``Beowulf is a 2007 film directed by Robert Zemeckis``: Beowulf's director.
    """
    subject = names[0]
    if subject.words[0].start != words[0].start and fold(words[0].text) != "the":
        return
    for maker in names[1:]:
        before = [fold(w.text) for w in words if w.start < maker.words[0].start][-2:]
        if len(before) == 2 and before[1] == "by" and before[0] in _PARTICIPLES:
            yield Attribution(subject, _PARTICIPLES[before[0]], maker)


def _words_between(words: Sequence[Token], left: ClaimUnit, right: ClaimUnit) -> list[Token]:
    """The words between two names, less initials (``J.K.`` of ``J.K. Rowling``)."""
    end = left.words[-1].start + len(left.words[-1].text)
    return [
        w
        for w in words
        if end <= w.start < right.words[0].start and not (len(w.text) == 1 and w.text.isupper())
    ]


def _same(a: ClaimUnit, b: ClaimUnit) -> bool:
    """One name: every word of the shorter in the longer (``Rowell``, ``Rainbow Rowell``).

    Words are compared as spellings of one word (:func:`_spelled_alike`): a maker whose
    name is misspelt ("Wood Allen", "Seasmus Heaney") or run into the word before it in
    scraped text ("Long WarTerry Pratchett") is the same maker, not a different one.
    """
    keys_a, keys_b = [w.key for w in a.words], [w.key for w in b.words]
    short, long = sorted((keys_a, keys_b), key=len)
    return all(any(_spelled_alike(s, k) for k in long) for s in short)


def _spelled_alike(a: str, b: str) -> bool:
    """Whether two words are spellings of one: equal, or close enough.

    Close enough: one a prefix or suffix of the other (``steve``, ``warterry``), or, for
    words of ``SPELLING_MIN`` letters or more, one letter added, dropped or changed.
    """
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    if len(short) >= AFFIX_MIN and (long.startswith(short) or long.endswith(short)):
        return True
    if len(short) < SPELLING_MIN or len(long) - len(short) > 1:
        return False
    return _one_edit(short, long)


def _one_edit(short: str, long: str) -> bool:
    """Whether one insertion (lengths differ) or substitution turns ``short`` into ``long``."""
    at = next((i for i, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    if len(short) == len(long):
        return short[at + 1 :] == long[at + 1 :]
    return short[at:] == long[at + 1 :]
