"""The node's input (its task and its sources), indexed once for the support checks.

What the node was given is the only thing an output can be grounded in without a model
or a network: a name, number or quotation that appears nowhere in the input was either
brought in from elsewhere or made up, and the review says which source it checked.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

from schemas.request import Source
from workers.evaluate.findings import sentences
from workers.evaluate.wall.grounding.lexicon import Token, fold, prefix, squash, tokens, unjoin

#: Content words either side of a number that say what it counts.
CONTEXT_WORDS = 4
#: Consecutive input sentences within which two names count as related.
LINK_SENTENCES = 3
_MAX_ACRONYM = 6
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9}


class MeasureKind(StrEnum):
    """What kind of quantity a number states."""

    YEAR = "year"
    DECADE = "decade"
    DATE = "date"
    """A day of a month (``April 7``)."""
    RANK = "rank"
    """An ordinal (``20th``)."""
    COUNT = "count"


@dataclass(frozen=True, slots=True)
class Measure:
    """What a number measures: only numbers of one measure can disagree."""

    kind: MeasureKind
    unit: str = ""
    """For a count, the (stemmed) word it counts; empty when the text does not say."""

    @property
    def known(self) -> bool:
        """Whether it can be compared: anything but a count of an unsaid unit."""
        return self.kind is not MeasureKind.COUNT or bool(self.unit)


@dataclass(frozen=True, slots=True)
class NumberMention:
    """A number in a text and the content words around it (what it is a number of)."""

    text: str
    value: float
    context: frozenset[str]
    measure: Measure
    """What it measures (``measure_of``): only numbers of one measure can disagree."""


class InputRole(StrEnum):
    """What part of the node's input a text is."""

    ASK = "ask"
    """The task's instruction, question or dialogue: what an answer may echo."""
    MATERIAL = "material"
    """A passage pasted into the task: input, like a source, but no source to cite."""
    SOURCE = "source"
    """One of the request's sources."""


@dataclass(frozen=True, slots=True)
class InputText:
    """One part of the node's input: the task's ask, material pasted into it, or a source."""

    ref: str
    """``task``, or the source's id."""
    role: InputRole
    label: str
    """How a review names it: ``the task``, ``source [2] 'doc-7'``."""
    url: str | None
    squashed: str
    """Folded text, one space between words: quotations are looked up in it."""
    keys: frozenset[str]
    prefixes: frozenset[str]
    values: frozenset[float]
    numbers: tuple[NumberMention, ...]
    acronyms: frozenset[str]
    sentences: tuple[frozenset[str], ...]
    """Each sentence's word keys and number values: which claims the text links."""
    capitalised: frozenset[str]
    """Folded words the text capitalises other than at a sentence's start: its names."""
    split: tuple[tuple[str, tuple[Token, ...]], ...] = ()
    """Each sentence as written, with its words: what relation checks read clause by clause."""

    @property
    def is_task(self) -> bool:
        """Whether this is the task's ask (what an answer may restate without adding)."""
        return self.role is InputRole.ASK


@dataclass(frozen=True, slots=True)
class NodeInput:
    """Everything the node was given, and the union the support checks read."""

    texts: tuple[InputText, ...]
    keys: frozenset[str] = field(default=frozenset())
    prefixes: frozenset[str] = field(default=frozenset())
    values: frozenset[float] = field(default=frozenset())
    acronyms: frozenset[str] = field(default=frozenset())
    capitalised: frozenset[str] = field(default=frozenset())
    windows: tuple[frozenset[str], ...] = ()
    """Every text's ``sentences`` windows, in order: where a claim's words are looked for."""

    @property
    def sources(self) -> tuple[InputText, ...]:
        """The sources alone, in request order (index 1 is the first): what cites resolve to."""
        return tuple(t for t in self.texts if t.role is InputRole.SOURCE)

    @property
    def passages(self) -> tuple[InputText, ...]:
        """Everything the node was given to work from: pasted material and the sources."""
        return tuple(t for t in self.texts if t.role is not InputRole.ASK)

    @property
    def source_sentences(self) -> Iterator[tuple[str, tuple[Token, ...]]]:
        """Every sentence of the passages (not the ask), with its words, in order."""
        return (said for passage in self.passages for said in passage.split)

    def resolve(self, citation: str) -> InputText | None:
        """The source a citation names: by 1-based index, by id, or by URL."""
        sources = self.sources
        wanted = citation.strip()
        if wanted.isdigit() and 1 <= int(wanted) <= len(sources):
            return sources[int(wanted) - 1]
        for source in sources:
            if wanted == source.ref or (source.url and _same_url(wanted, source.url)):
                return source
        return None


def node_input(
    ask: str | None, sources: Sequence[Source], material: Sequence[str] = ()
) -> NodeInput:
    """Index the task's ask, the material pasted into it, and the sources.

    Cached: a node's attempts share their input.
    """
    return _node_input(ask, tuple(sources), tuple(material))


@lru_cache(maxsize=16)
def _node_input(
    ask: str | None, sources: tuple[Source, ...], material: tuple[str, ...]
) -> NodeInput:
    texts: list[InputText] = []
    if ask:
        texts.append(_index("task", "the task", None, ask, InputRole.ASK))
    for body in material:
        texts.append(_index("task", "the task's material", None, body, InputRole.MATERIAL))
    for number, source in enumerate(sources, start=1):
        body = f"{source.title}\n{source.text}" if source.title else source.text
        label = f"source [{number}] {source.id!r}"
        texts.append(_index(source.id, label, source.url, body, InputRole.SOURCE))
    return NodeInput(
        texts=tuple(texts),
        keys=frozenset().union(*(t.keys for t in texts)),
        prefixes=frozenset().union(*(t.prefixes for t in texts)),
        values=frozenset().union(*(t.values for t in texts)),
        acronyms=frozenset().union(*(t.acronyms for t in texts)),
        capitalised=frozenset().union(*(t.capitalised for t in texts)),
        windows=tuple(w for t in texts for w in t.sentences),
    )


def _index(ref: str, label: str, url: str | None, text: str, role: InputRole) -> InputText:
    written = sentences(unjoin(text))
    split = [tokens(s) for s in written]
    words = [w for sentence in split for w in sentence]
    numbers = [m for sentence in split for m in number_mentions(sentence)]
    return InputText(
        ref=ref,
        role=role,
        label=label,
        url=url,
        squashed=squash(text),
        keys=frozenset(w.key for w in words) | frozenset(fold(w.text) for w in words),
        prefixes=frozenset(p for p in (prefix(w.key) for w in words) if p),
        values=frozenset(n.value for n in numbers),
        numbers=tuple(numbers),
        acronyms=_acronyms(words),
        sentences=_windows([signature(s) for s in split]),
        capitalised=frozenset(fold(w.text) for s in split for w in s[1:] if w.capitalised),
        split=tuple(zip(written, (tuple(s) for s in split), strict=True)),
    )


def _windows(signatures: list[set[str]]) -> tuple[frozenset[str], ...]:
    """Runs of ``LINK_SENTENCES`` consecutive sentences.

    A fact and the sentence that continues it (``He was born in 1988.``) are linked
    through the pronoun, so a window, not a single sentence, is what relates two names.
    """
    if len(signatures) <= LINK_SENTENCES:
        return (frozenset().union(*signatures),) if signatures else ()
    return tuple(
        frozenset().union(*signatures[i : i + LINK_SENTENCES])
        for i in range(len(signatures) - LINK_SENTENCES + 1)
    )


def signature(words: Sequence[Token]) -> set[str]:
    """The keys a sentence is matched on: folded words and stems, numbers as values."""
    out: set[str] = set()
    for word in words:
        if word.value is not None:
            out.add(f"#{word.value:g}")  # ``29`` and ``twenty-nine`` link alike
        if not word.text[:1].isdigit():
            out.update((word.key, fold(word.text)))
    return out


def number_mentions(words: Sequence[Token]) -> list[NumberMention]:
    """Every number with its context; ``2.5 million`` is also read as 2,500,000."""
    out: list[NumberMention] = []
    for i, word in enumerate(words):
        if word.value is None:
            continue
        context, measure = context_keys(words, i), measure_of(words, i)
        out.append(NumberMention(word.text, word.value, context, measure))
        scale = _SCALES.get(fold(words[i + 1].text)) if i + 1 < len(words) else None
        if scale is not None:
            out.append(NumberMention(word.text, word.value * scale, context, measure))
    return out


_MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)


def measure_of(words: Sequence[Token], at: int) -> Measure:
    """What the number at ``at`` measures, as far as its neighbours and its form say.

    A year, a decade (``1930s``), a day of a month (``April 7``), a rank (``20th``), or a
    count: of ``X`` in ``X of 2,586``, else of the word after it (``12 days``; ``2.5
    million people`` and ``nine of its robots`` count people and robots), else of the
    content word just before it (``the population was 2,586``). ``One of the five`` says
    nothing of its unit.
    """
    word, text = words[at], words[at].text
    beside = {fold(w.text) for w in words[max(0, at - 1) : at + 2]}
    if beside & _MONTHS:
        return Measure(MeasureKind.DATE)
    if text[:1].isdigit() and text[-1:] == "s":
        return Measure(MeasureKind.DECADE)
    if text[:1].isdigit() and text[-1:].isalpha():
        return Measure(MeasureKind.RANK)
    value = word.value or 0.0
    if len(text) == 4 and text.isdigit() and 1000 <= value <= 2100:
        return Measure(MeasureKind.YEAR)
    if at >= 2 and fold(words[at - 1].text) == "of" and _names_unit(words[at - 2]):
        return Measure(MeasureKind.COUNT, words[at - 2].key)  # ``a population of 2,586``
    following = list(words[at + 1 : at + 5])
    if following and fold(following[0].text) in _SCALES:
        following = following[1:]
    if following and fold(following[0].text) == "of":  # ``twenty-nine of its robots``
        following = [w for w in following if not w.stop]
    if following and _names_unit(following[0]):
        return Measure(MeasureKind.COUNT, following[0].key)
    before = [w for w in words[max(0, at - 3) : at] if not w.stop]
    if before and _names_unit(before[-1]):  # ``the population was 2,586``
        return Measure(MeasureKind.COUNT, before[-1].key)
    return Measure(MeasureKind.COUNT)


def _names_unit(word: Token) -> bool:
    return not word.stop and word.value is None


def context_keys(words: Sequence[Token], at: int) -> frozenset[str]:
    """Up to ``CONTEXT_WORDS`` content words each side of position ``at``."""
    found: list[str] = []
    for step in (-1, 1):
        taken, i = 0, at + step
        while 0 <= i < len(words) and taken < CONTEXT_WORDS:
            if not words[i].stop and words[i].value is None:
                found.append(words[i].key)
                taken += 1
            i += step
    return frozenset(found)


def _acronyms(words: Sequence[Token]) -> frozenset[str]:
    """Initials of each run of capitalised words (``Robert Downey Jr.`` gives ``rdj``)."""
    found: set[str] = set()
    run: list[str] = []
    for word in [*words, Token("", "", -1)]:
        if word.capitalised and word.value is None:
            run.append(fold(word.text)[0])
            continue
        run = run[:_MAX_ACRONYM]
        if len(run) >= 2:
            ends = range(len(run) + 1)
            found.update("".join(run[i:j]) for i in ends for j in ends if j - i >= 2)
        run = []
    return frozenset(found)


def _same_url(a: str, b: str) -> bool:
    def norm(url: str) -> str:
        return fold(url).rstrip("/.,;:").removeprefix("https://").removeprefix("http://")

    return norm(a) == norm(b)
