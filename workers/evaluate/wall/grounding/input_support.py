"""Grounding against what the node was given: citations, quotations, names and numbers.

Runs only when the request carries ``sources``: without them there is nothing to check
an output's claims against, and nothing is guessed. Each unsupported or contradicted
span becomes its own issue naming the span and the part of the input it was checked
against, so iteration feedback can say exactly what to fix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from schemas.quality import Dimension
from schemas.request import GroundingPolicy
from schemas.stages import GroundingUse, IssueCode
from workers.evaluate.findings import Finding, finding
from workers.evaluate.wall.certainty import classify
from workers.evaluate.wall.grounding.claims import QUOTE, UnitKind, claim_sentences, looked_up_whole
from workers.evaluate.wall.grounding.lexicon import squash
from workers.evaluate.wall.grounding.sources import InputText, NodeInput
from workers.evaluate.wall.grounding.support import (
    COSTS,
    EXTRACTIVE_COSTS,
    Contradiction,
    Costs,
    SupportReport,
    Unsupported,
    check_support,
    unit_penalty,
)

_G = Dimension.GROUNDING
#: Issues listed one by one; the rest are summed into one issue (their cost kept).
MAX_LISTED = 10
#: What a contradiction costs consistency: a stated fact the input gives differently.
CONTRADICTION_PENALTY = 0.3
#: What a quotation the input does not contain costs.
QUOTE_PENALTY = 0.3
#: What a citation of a source that was not given costs.
UNRESOLVED_PENALTY = 0.3
_ID_MARKER = re.compile(r"(?<![\w\]\[])\[([A-Za-z0-9][A-Za-z0-9_.:@/\-]{0,79})\](?![(\[:])")
_URL = re.compile(r"\bhttps?://[^\s)\]>\"']+", re.I)


def check_against_input(prose: str, given: NodeInput, use: GroundingUse) -> list[Finding]:
    """Citations resolve, quotations occur, names and numbers are supported.

    What the input lacks is read as strictly as the policy says, and is definite or
    suspect as ``certainty`` says (under ``open``, outside facts are allowed: what the
    input lacks is only evidence, at the abstractive costs). What the input contradicts,
    misquotes or does not hold (a cited source) is definite under every policy.
    """
    found = _citations(prose, given) + _quotations(prose, given)
    extractive = use.policy is GroundingPolicy.EXTRACTIVE
    report = check_support(claim_sentences(prose, qualifiers=extractive), given, literal=extractive)
    found += _support_findings(report, EXTRACTIVE_COSTS if extractive else COSTS)
    found += [_contradiction(c) for c in report.contradictions]
    return _bounded([classify(f, use) for f in found])


def _citations(prose: str, given: NodeInput) -> list[Finding]:
    wanted = [m for m in _ID_MARKER.findall(prose) if _looks_cited(m, given)]
    wanted += [u.rstrip(".,;:") for u in _URL.findall(prose)] if _has_urls(given) else []
    missing = [w for w in dict.fromkeys(wanted) if given.resolve(w) is None]
    return [
        finding(
            _G,
            IssueCode.UNRESOLVED_CITATION,
            f"[{w}] cites no source the node was given "
            f"({len(given.sources)} given: {_names(given.sources)})",
            UNRESOLVED_PENALTY,
            field="citations",
            fix=f"Cite one of the given sources (by number, id or URL) instead of {w}",
        )
        for w in missing
    ]


def _looks_cited(marker: str, given: NodeInput) -> bool:
    """A bracketed number, a given id, or something shaped like an id (``doc-3``)."""
    if marker.isdigit():
        return int(marker) >= 1
    if given.resolve(marker) is not None:
        return True
    return any(c.isdigit() for c in marker) and any(c.isalpha() for c in marker)


def _has_urls(given: NodeInput) -> bool:
    return any(s.url for s in given.sources)


def _names(texts: Sequence[InputText]) -> str:
    shown = ", ".join(t.ref for t in texts[:5])
    return shown + (", ..." if len(texts) > 5 else "")


def _quotations(prose: str, given: NodeInput) -> list[Finding]:
    """Each quotation occurs in the source its sentence cites, or in some part of the input.

    Quotation marks are paired over the whole prose: a title with a full stop in it
    (``"L.A. Law"``) must not shift every later pair by one.
    """
    found: list[Finding] = []
    for match in QUOTE.finditer(prose):
        quote = match.group(1)
        if not looked_up_whole(quote):
            continue
        cited = [given.resolve(m) for m in _ID_MARKER.findall(_around(prose, match))]
        targets = [t for t in cited if t is not None] or list(given.texts)
        if any(squash(quote) in t.squashed for t in targets):
            continue
        where = " or ".join(t.label for t in targets[:3])
        found.append(
            finding(
                _G,
                IssueCode.UNSUPPORTED_QUOTE,
                f"the quotation {quote[:120]!r} does not occur in {where}",
                QUOTE_PENALTY,
                field="quotes",
                fix="Quote the source word for word, or paraphrase without quotation marks",
            )
        )
    return found


def _around(prose: str, match: re.Match[str]) -> str:
    """The sentence a quotation stands in (where its citation markers are)."""
    start = max(prose.rfind(". ", 0, match.start()), prose.rfind("\n", 0, match.start())) + 1
    ends = [i for i in (prose.find(". ", match.end()), prose.find("\n", match.end())) if i >= 0]
    return prose[start : min(ends, default=len(prose))]


def _support_findings(report: SupportReport, costs: Costs) -> list[Finding]:
    found: list[Finding] = []
    words: dict[int, list[Unsupported]] = {}
    for item in report.unsupported:
        if item.unit.kind is UnitKind.WORD:
            words.setdefault(item.unit.sentence, []).append(item)
        else:
            found.append(_unsupported(item, unit_penalty(item, report, costs)))
    for group in words.values():
        for unlinked in (False, True):
            mine = [i for i in group if i.unlinked is unlinked]
            if mine:
                penalty = sum(unit_penalty(i, report, costs) for i in mine)
                found.append(_wording(mine, penalty))
    return found


def _wording(group: Sequence[Unsupported], penalty: float) -> Finding:
    spans = ", ".join(repr(i.unit.text) for i in group[:6])
    where = f"{spans} in {_sentence_of(group[0])}"
    if group[0].unlinked:
        return finding(
            _G,
            IssueCode.UNLINKED_WORDING,
            f"{where} occur in the input, but not in the passage that states the rest of "
            f"the sentence (checked against {group[0].checked})",
            penalty,
            field="claims",
            fix="Relate only what the sources relate: check the passage this sentence comes from",
        )
    return finding(
        _G,
        IssueCode.UNSUPPORTED_WORDING,
        f"{where} not found in {group[0].checked}",
        penalty,
        field="claims",
        fix="State only what the sources say, or cite where the rest comes from",
    )


def _sentence_of(item: Unsupported) -> str:
    return f"sentence {item.unit.sentence + 1}"


def _unsupported(item: Unsupported, penalty: float) -> Finding:
    kind = item.unit.kind.value
    if item.unlinked:
        return finding(
            _G,
            IssueCode.UNLINKED_CLAIM,
            f"{item.unit.text!r} occurs in the input, but never together with the other "
            f"names or numbers of {_sentence_of(item)} (checked against {item.checked})",
            penalty,
            field=item.unit.text,
            fix=f"Check what the sources say about {item.unit.text}; relate only what they relate",
        )
    code = (
        IssueCode.UNSUPPORTED_NUMBER
        if item.unit.kind is UnitKind.NUMBER
        else IssueCode.UNSUPPORTED_NAME
    )
    missing = ", ".join(item.missing)
    return finding(
        _G,
        code,
        f"the {kind} {item.unit.text!r} ({missing}) is not in the input "
        f"(checked against {item.checked})",
        penalty,
        field=item.unit.text,
        fix=f"Use the {kind} the sources give, or drop {item.unit.text!r}",
    )


def _contradiction(item: Contradiction) -> Finding:
    about = ", ".join(item.about)
    return finding(
        Dimension.CONSISTENCY,
        IssueCode.CONTRADICTS_INPUT,
        f"the output says {item.unit.text} where {item.checked} says {item.given} (about: {about})",
        CONTRADICTION_PENALTY,
        field=item.unit.text,
        fix=f"Use the input's value ({item.given}) or explain the difference",
    )


def _bounded(found: list[Finding]) -> list[Finding]:
    """At most ``MAX_LISTED`` issues; the rest are folded, by dimension and certainty.

    Definite findings are listed first, so a fold never hides one behind suspicions.
    """
    if len(found) <= MAX_LISTED:
        return found
    found = sorted(found, key=lambda f: f.issue.certainty.value)  # definite < suspect
    kept, rest = found[: MAX_LISTED - 3], found[MAX_LISTED - 3 :]  # at most 3 folds
    groups = dict.fromkeys((f.issue.dimension, f.issue.certainty) for f in rest)
    for dimension, certainty in groups:
        mine = [f for f in rest if (f.issue.dimension, f.issue.certainty) == (dimension, certainty)]
        kept.append(
            finding(
                dimension,
                IssueCode.MORE_UNSUPPORTED,
                f"{len(mine)} more unsupported or contradicted spans, e.g. "
                f"{mine[0].issue.message[:160]}",
                sum(f.penalty for f in mine),
                field="claims",
                fix="Check every name, number and quotation against the sources",
                certainty=certainty,
            )
        )
    return kept
