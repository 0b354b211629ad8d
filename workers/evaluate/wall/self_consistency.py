"""Wall, consistency in prose: one output that says a thing and its opposite.

Three kinds of self-contradiction, each certain once found (dag-quality.md's content
validation, before any model judges meaning):

- the same subject stated with opposite polarity: ``the cache is disabled in
  production`` and ``the production cache is enabled``; ``the tests passed`` and ``the
  tests failed``; ``the flag is valid`` and ``the flag is not valid``;
- a universal claim contradicted by a count: ``all 12 tests passed`` and ``three of the
  tests failed``;
- a count that disagrees with the items listed after it, or a total with another total
  (``workers.evaluate.wall.listed_counts``).

Statements are compared within one section of the document, and only when they are
plain assertions about the same subject, in the same tense, with the same qualifiers
(``polarity.statements`` says which clauses are read).
"""

from __future__ import annotations

from itertools import combinations

from schemas.quality import Dimension
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding
from workers.evaluate.wall.listed_counts import count_findings
from workers.evaluate.wall.polarity import Statement, statements
from workers.evaluate.wall.prose_clauses import plain_sentences, sections

PENALTY = 0.45
#: Statements compared per section at most (pairs grow with the square).
MAX_STATEMENTS = 200


def self_contradictions(content: str) -> list[Finding]:
    """Opposite statements about one subject, universal claims a count denies, bad counts."""
    found: list[Finding] = []
    for section in sections(content):
        said = [s for line in plain_sentences(section) for s in statements(line)]
        said = said[:MAX_STATEMENTS]
        found.extend(_opposites(said))
        found.extend(count_findings(section))
    return found[:6]


def _opposites(said: list[Statement]) -> list[Finding]:
    found: list[Finding] = []
    reported: set[tuple[str, str]] = set()
    for a, b in combinations(said, 2):
        if a.axis != b.axis or a.positive == b.positive or a.past != b.past:
            continue
        code = _conflict(a, b)
        if code is None or (a.text, b.text) in reported:
            continue
        reported.add((a.text, b.text))
        found.append(
            finding(
                Dimension.CONSISTENCY,
                code,
                f"{a.text!r} contradicts {b.text!r}",
                PENALTY,
                fix="Decide which statement is true and state only that one",
            )
        )
    return found


def _conflict(a: Statement, b: Statement) -> IssueCode | None:
    """CONTRADICTION for two claims about all of one subject, COUNT_MISMATCH for a count.

    A count denies only an explicit universal (``all``, ``every``, ``no``, ``the 12``):
    ``the server`` may be one of the servers that ``one server`` counts.
    """
    if a.quantity != "count" and b.quantity != "count":
        same_size = a.count is None or b.count is None or a.count == b.count
        if a.subject and b.subject and a.subject | a.tail == b.subject | b.tail and same_size:
            return IssueCode.CONTRADICTION
        return None
    universal, counted = (a, b) if a.quantity == "all" else (b, a)
    if universal.quantity != "all" or counted.count is None or counted.count < 1:
        return None
    if universal.count is not None and counted.count > universal.count:
        return None
    if universal.subject and counted.subject:
        same = _singular(universal.subject | universal.tail) == _singular(
            counted.subject | counted.tail
        )
    else:
        same = universal.tail == counted.tail
    if not same:
        return None
    return IssueCode.COUNT_MISMATCH


def _singular(words: frozenset[str]) -> frozenset[str]:
    return frozenset(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words)
