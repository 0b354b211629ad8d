"""Is each name, number and content word of the output found in the node's input?

Support is lexical and deliberately literal: a unit is supported when the input states
it (after folding case, accents and word endings; a number when the input states the
same value at the output's precision; an acronym when the input spells out the name; a
people when the input names its place). A word the input states, but not in the passage
the rest of its sentence comes from, is unlinked. A number the input gives a different
value for, of the same measure and in the same context, is a contradiction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from workers.evaluate.wall.grounding.claims import WEIGHTS, ClaimUnit, Sentence, UnitKind
from workers.evaluate.wall.grounding.lexicon import Token, fold, prefix
from workers.evaluate.wall.grounding.number_clash import clash, keeps_to, qualifier
from workers.evaluate.wall.grounding.sources import InputText, NodeInput

#: An unlinked name costs this share of an unsupported one: it exists, the relation may not.
UNLINKED = 0.25


@dataclass(frozen=True, slots=True)
class Unsupported:
    """A unit, or the part of a name, that the input does not state."""

    unit: ClaimUnit
    missing: tuple[str, ...]
    weight: float
    checked: str
    """The part of the input it was checked against (the best match for its sentence)."""
    unlinked: bool = False
    """Found in the input, but never with the claim's other names (a name), or not in the
    passage that states the rest of the claim (a word)."""


@dataclass(frozen=True, slots=True)
class Contradiction:
    """A number the input states differently for the same thing."""

    unit: ClaimUnit
    given: str
    checked: str
    about: tuple[str, ...]
    """The context words the two numbers share."""


@dataclass(frozen=True, slots=True)
class SupportReport:
    """What of the output the input supports, by weight."""

    total: float
    """The checkable weight of the whole output."""
    key_units: int
    """How many names and numbers the output states."""
    unsupported: tuple[Unsupported, ...]
    contradictions: tuple[Contradiction, ...]

    @property
    def share(self) -> float:
        """The unsupported share of the output's checkable weight (0 when nothing checkable)."""
        if self.total <= 0:
            return 0.0
        return min(1.0, sum(u.weight for u in self.unsupported) / self.total)


def check_support(
    sentences: Sequence[Sentence], given: NodeInput, *, literal: bool = False
) -> SupportReport:
    """Check every unit of every sentence against the whole input.

    Units that only restate the task (the question's own names, echoed in the answer)
    are left out of the totals: what an answer claims is what it adds to its task.
    ``literal`` (an extractive output, which restates its input): every word of a name must
    be stated, and every number exactly as the input gives it.
    """
    task = next((t for t in given.texts if t.is_task), None)
    total = 0.0
    key_units = 0
    seen: set[str] = set()
    unsupported: list[Unsupported] = []
    contradictions: list[Contradiction] = []
    for sentence in sentences:
        checked: InputText | None = None
        units = [_as_used(u, given) for u in sentence.units]
        keyed = [u for u in units if u.kind is not UnitKind.WORD]
        found_words: list[ClaimUnit] = []
        for unit in units:
            if (task is not None and _restates(unit, task)) or unit.text in seen:
                continue
            seen.add(unit.text)
            weight = WEIGHTS[unit.kind]
            total += weight
            key_units += unit.kind is not UnitKind.WORD
            missing = _missing(unit, given, literal=literal)
            if not missing:
                if unit.kind is UnitKind.WORD:
                    found_words.append(unit)
                elif not _linked(unit, keyed, given):
                    checked = checked or best_match(sentence, given)
                    label = checked.label if checked else "the input"
                    unsupported.append(Unsupported(unit, (), weight * UNLINKED, label, True))
                continue
            bound = qualifier(sentence.text, unit.text) if unit.kind is UnitKind.NUMBER else None
            if bound is not None and not literal and _approximates(unit, bound, given):
                continue
            checked = checked or best_match(sentence, given)
            label = checked.label if checked else "the input"
            share = len(missing) / max(1, len(unit.words))
            unsupported.append(Unsupported(unit, missing, weight * share, label))
            if unit.kind is UnitKind.NUMBER:
                found = clash(unit, given, bound)
                if found is not None:
                    about = found.about
                    contradictions.append(
                        Contradiction(unit, found.mention.text, found.label, about)
                    )
        for unit in _spliced(sentence, found_words, given):
            checked = checked or best_match(sentence, given)
            label = checked.label if checked else "the input"
            unsupported.append(Unsupported(unit, (), WEIGHTS[unit.kind] * UNLINKED, label, True))
    return SupportReport(total, key_units, tuple(unsupported), tuple(contradictions))


def _spliced(sentence: Sentence, words: Sequence[ClaimUnit], given: NodeInput) -> list[ClaimUnit]:
    """The sentence's words the input states, but not in the passage that best matches it.

    A claim is stated somewhere: the passage (``LINK_SENTENCES`` sentences) sharing most
    of the sentence's words. Words the input has only elsewhere were spliced in from
    another context, as a name is unlinked when the input never states it with the
    sentence's other names; they cost what an unlinked name does, a quarter.
    """
    if not words:
        return []
    wanted = set().union(*(_keys(u) for u in sentence.units))
    best = max(given.windows, key=lambda w: len(wanted & w), default=frozenset())
    return [u for u in words if not _keys(u) <= best]


def _approximates(unit: ClaimUnit, bound: str, given: NodeInput) -> bool:
    """An approximate number ("more than 2,000") whose bound an input value of its measure keeps."""
    (word,) = unit.words
    if word.value is None or unit.measure is None:
        return False
    return any(
        m.measure == unit.measure
        and m.context & unit.context
        and keeps_to(bound, word.value, m.value)
        for text in given.texts
        for m in text.numbers
    )


def _as_used(unit: ClaimUnit, given: NodeInput) -> ClaimUnit:
    """A sentence's capitalised first word is a name only where the input uses it as one.

    ``Victims``, ``Company``, ``Cast`` open sentences because grammar says so: the input
    writing them in lower case, and never as a name, says they are ordinary words.
    """
    folded = fold(unit.text)
    if not unit.initial or folded in given.capitalised or folded not in given.keys:
        return unit
    return replace(unit, kind=UnitKind.WORD, initial=False)


def _keys(unit: ClaimUnit) -> set[str]:
    if unit.kind is UnitKind.NUMBER and unit.words[0].value is not None:
        return {f"#{unit.words[0].value:g}"}
    return {w.key for w in unit.words}


def _linked(unit: ClaimUnit, keyed: Sequence[ClaimUnit], given: NodeInput) -> bool:
    """Whether the input states ``unit`` near another name or number of its sentence.

    A claim relates its names; the input must relate them too. A sentence with a single
    name or number has nothing to link.
    """
    others = [_keys(u) for u in keyed if u is not unit]
    if not others:
        return True
    mine = _keys(unit)
    windows = [s for s in given.windows if _within(mine, s)]
    if not windows:
        return True  # supported through an acronym, a rounding or a word family: no place to look
    return any(_within(o, s) for s in windows for o in others)


def _within(keys: set[str], window: frozenset[str]) -> bool:
    """Most of a name's words in the window (``Officer Michael Slager`` is ``Michael Slager``)."""
    return 2 * len(keys & window) > len(keys)


def _restates(unit: ClaimUnit, task: InputText) -> bool:
    return all(w.key in task.keys or fold(w.text) in task.keys for w in unit.words)


def best_match(sentence: Sentence, given: NodeInput) -> InputText | None:
    """The part of the input sharing the most words with ``sentence``."""
    keys = {w.key for u in sentence.units for w in u.words}
    ranked = sorted(given.texts, key=lambda t: (len(keys & t.keys), not t.is_task), reverse=True)
    return ranked[0] if ranked else None


def _missing(unit: ClaimUnit, given: NodeInput, *, literal: bool = False) -> tuple[str, ...]:
    """The unit's words the input lacks; a name is one thing, not a bag of words.

    ``Craig Williams`` is not supported by ``Craig Newmark``: a name counts as supported
    when most of its words are (``Officer Michael Slager`` by ``Michael Slager``), and
    otherwise as wholly unsupported. ``literal``: a name missing any word is unsupported,
    and a number must be the input's exactly (``300,000`` is not ``286,000`` rounded).
    """
    missing = tuple(w.text for w in unit.words if not _supported(w, unit.kind, given, literal))
    if unit.kind is UnitKind.NAME and missing and literal:
        return tuple(w.text for w in unit.words)
    if unit.kind is UnitKind.NAME and missing:
        return () if 2 * len(missing) < len(unit.words) else tuple(w.text for w in unit.words)
    return missing


def _supported(word: Token, kind: UnitKind, given: NodeInput, literal: bool = False) -> bool:
    if word.value is not None and word.text[:1].isdigit():
        if literal:
            return word.value in given.values
        return value_supported(word.text, word.value, given.values)
    folded = fold(word.text)
    if word.key in given.keys or folded in given.keys:
        return True
    if word.value is not None and word.value in given.values:
        return True
    if kind is UnitKind.NAME and (folded in given.acronyms or _demonym_of(folded, given)):
        return True
    family = prefix(word.key)
    return family is not None and family in given.prefixes


#: Endings that make a people or an adjective of a place: Kenya -> Kenyan, Iraq -> Iraqi.
_DEMONYM_ENDINGS = ("ians", "ian", "ans", "an", "ese", "is", "i", "n")


def _demonym_of(folded: str, given: NodeInput) -> bool:
    """``Kenyan`` is supported by ``Kenya``, ``Canadian`` by ``Canada``, ``Iraqi`` by ``Iraq``."""
    for ending in _DEMONYM_ENDINGS:
        base = folded.removesuffix(ending)
        if base != folded and len(base) >= 4:
            if any(base + vowel in given.keys for vowel in ("", "a", "o", "e")):
                return True
    return False


def value_supported(text: str, value: float, values: frozenset[float]) -> bool:
    """The input states ``value``, exactly or rounded to the output's precision."""
    if value in values:
        return True
    decimals = len(text.split(".")[1]) if "." in text else 0
    if decimals == 0 and value >= 10_000:
        # A round figure (``about 720,000``) is supported by the value it rounds.
        digits = str(int(value))
        decimals = -(len(digits) - len(digits.rstrip("0")))
    return any(round(v, decimals) == value for v in values)


@dataclass(frozen=True, slots=True)
class Costs:
    """What an unsupported unit costs the grounding score (see ``unit_penalty``)."""

    word: float = 0.03
    """Per unsupported content word: seven of them keep an output from acceptance (0.8)."""
    name: float = 0.06
    """Per unsupported name or number: four of them keep it from acceptance."""
    share: float = 0.5
    """Times the unit's share of the output's checkable weight: an answer none of whose
    content is supported scores 0.5: below acceptance, and a Wall fail on the critical path."""
    key_share: float = 0.3
    """Times a name's share of the output's names and numbers (its key claims)."""


COSTS = Costs()
#: An extractive output restates its input: one word or name it adds keeps it from
#: acceptance (0.8), and an output none of whose content is supported scores 0.
EXTRACTIVE_COSTS = Costs(word=0.25, name=0.25, share=1.0, key_share=0.3)


def unit_penalty(item: Unsupported, report: SupportReport, costs: Costs = COSTS) -> float:
    """The larger of an absolute and two relative costs.

    Absolute: every unsupported word or name costs a little, so many of them fail a long
    output however much else it says. Relative: the unit's share of the output's
    checkable weight, and for names and numbers its share of the output's key units, so
    a short answer whose one name is unsupported fails while a long one barely moves.
    """
    part = item.weight / WEIGHTS[item.unit.kind]
    if item.unit.kind is UnitKind.WORD:
        absolute, key = costs.word * part, 0.0
    else:
        absolute = costs.name * part
        key = costs.key_share * part / max(1, report.key_units)
    relative = costs.share * item.weight / report.total if report.total else 0.0
    return max(absolute, relative, key)
