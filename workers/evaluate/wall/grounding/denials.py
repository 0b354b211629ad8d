"""Wall, grounding: an output that denies what the input states.

"Snoop Dogg wasn't in Turbo" passes every support check (both names are in the input)
while the input says "Turbo is starring Snoop Dogg". A clause that negates a link
between two names, where one sentence of the input states the two together with the
same relation (or with none named: "wasn't in", "wasn't involved in"), contradicts the
input. The relation is compared by its verb: "did not direct" is no denial of "wrote".
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from schemas.quality import Dimension
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding, sentences
from workers.evaluate.wall.grounding.claims import ClaimUnit, names_in
from workers.evaluate.wall.grounding.lexicon import Token, fold, tokens
from workers.evaluate.wall.grounding.sources import NodeInput

#: What a denial of a stated fact costs consistency (as any contradiction of the input).
DENIAL_PENALTY = 0.3
#: Shortest shared beginning for two forms of one verb (``star`` / ``starring``).
VERB_STEM = 4
_NEGATIONS = frozenset({"not", "never", "nor"})
_NEGATED = re.compile(r"\b(?:not|never|nor)\b|n['’]t\b", re.I)
#: Words that report someone's claim: a reported claim is not the text asserting it, on
#: either side ("X says Bates never trained there" may be what the input reports too).
_REPORTING = frozenset(
    "say says said saying claim claims claimed tell tells told according insist insists "
    "insisted deny denies denied allege alleges alleged reportedly".split()
)
#: Words that make a negation a guess rather than a statement.
_HEDGES = frozenset("probably perhaps maybe possibly likely unlikely".split())
#: Where one claim of a sentence ends and the next begins.
_CLAUSE = re.compile(
    r"\s*(?:[,;:()]|\s[-–—]\s|\b(?:but|however|although|though|while|whereas|yet)\b)\s*", re.I
)
#: Words that state a link without naming it (``wasn't in``, ``wasn't involved in``).
_BARE_LINKS = frozenset({"in", "involv", "involved", "part", "member", "featur", "featured"})
#: Irregular forms, so that ``wasn't written by`` is compared with ``wrote``.
_VERB_FORMS = {
    "wrote": "writ",
    "written": "writ",
    "write": "writ",
    "writes": "writ",
    "sang": "sing",
    "sung": "sing",
    "led": "lead",
    "won": "win",
    "drew": "draw",
    "drawn": "draw",
    "made": "make",
    "built": "build",
    "founded": "found",
    "began": "begin",
    "begun": "begin",
}


@dataclass(frozen=True, slots=True)
class Denial:
    """A clause negating a link between two names."""

    clause: str
    names: tuple[ClaimUnit, ClaimUnit]
    verbs: frozenset[str]
    """The relation's verb stems in the clause, empty for a bare ``wasn't in``."""


def check_denials(prose: str, given: NodeInput) -> list[Finding]:
    """A finding for each clause denying a link one sentence of the sources states."""
    stated = [words for _, words in given.source_sentences]
    found: list[Finding] = []
    for denial in _denials(prose):
        where = _stating(denial, stated)
        if where is not None:
            found.append(
                finding(
                    Dimension.CONSISTENCY,
                    IssueCode.CONTRADICTS_INPUT,
                    f"{denial.clause!r} denies what the input states: {where!r}",
                    DENIAL_PENALTY,
                    field=denial.names[0].text,
                    fix=f"The sources say {where!r}; do not deny it",
                )
            )
    return found


def _denials(prose: str) -> Iterator[Denial]:
    """Clauses that negate the link between their first two names.

    Not a denial: a question ("Aren't the Redskins coached by Jay Gruden?" asserts
    nothing), a hedge ("probably not"), a negation inside a title ("Don't Trust the B----
    in Apartment 23"), or one outside the span between the two names, which negates
    something else ("a crisis for French rugby not English", "Root was 182 not out").
    """
    for sentence in sentences(prose):
        if sentence.rstrip().endswith("?"):
            continue
        for clause in _CLAUSE.split(sentence):
            if not _NEGATED.search(clause):
                continue
            words = tokens(clause)
            if _reports(words) or any(fold(w.text) in _HEDGES for w in words):
                continue
            names = names_in(clause, words)
            if len(names) < 2:
                continue
            left, right = names[0].words[-1].start, names[1].words[0].start
            if not any(
                left < w.start < right and _negation(w) and not w.capitalised for w in words
            ):
                continue
            named = {w.start for n in names for w in n.words}
            verbs = frozenset(
                _verb(w) for w in words if not w.stop and w.start not in named and w.value is None
            )
            yield Denial(clause, (names[0], names[1]), verbs - _BARE_LINKS)


def _negation(word: Token) -> bool:
    folded = fold(word.text)
    return folded in _NEGATIONS or folded.endswith("n't")


def _reports(words: Sequence[Token]) -> bool:
    return any(fold(w.text) in _REPORTING for w in words)


def _verb(word: Token) -> str:
    return _VERB_FORMS.get(fold(word.text), word.key)


def _stating(denial: Denial, stated: Sequence[Sequence[Token]]) -> str | None:
    """The input sentence stating both names with the denied relation, if any.

    An input sentence that negates or reports a claim states no fact to deny.
    """
    for words in stated:
        if any(_negation(w) for w in words) or _reports(words):
            continue  # it may deny the same thing, or only report that someone claims it
        if not all(_named(n, words) for n in denial.names):
            continue
        verbs = {_verb(w) for w in words if not w.stop}
        if all(any(_same_verb(v, s) for s in verbs) for v in denial.verbs):
            return " ".join(w.text for w in words)[:160]
    return None


def _named(name: ClaimUnit, words: Sequence[Token]) -> bool:
    keys = {w.key for w in words}
    return all(w.key in keys for w in name.words)


def _same_verb(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return len(short) >= VERB_STEM and long.startswith(short)
