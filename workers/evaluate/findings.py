"""A Wall or Ceiling finding: an issue plus how much it costs its dimension."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from schemas.code import Position
from schemas.quality import Dimension
from schemas.stages import Certainty, IssueCode, WallIssue

#: A sentence ends at ``.``, ``!`` or ``?``, or just after a closing quotation mark that
#: follows one. A full stop after a lone capital followed by a capitalised word is an
#: initial (``J.K. Rowling``, ``George E. Marshall``), not an end (``in D.C. A member``).
#: Every split starts at white space: the leading look-ahead lets the engine pass over any
#: other character with one test instead of trying each look-behind there (three times
#: faster on prose; the splits are the same).
_SENTENCE_END = re.compile(
    r"(?=\s)(?:(?:(?<=[.!?])(?<!\b[A-Z]\.)|(?<=[.!?][\"”]))\s+|(?<=\b[A-Z]\.)\s+(?![A-Z]\w)"
    r"|\n{2,}|\n(?=\s*[-*#]|\s*\d+\.))"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d+(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class Finding:
    """An issue and the penalty it takes off its dimension's score (0..1)."""

    issue: WallIssue
    penalty: float


def finding(
    dimension: Dimension,
    code: IssueCode,
    message: str,
    penalty: float,
    *,
    fix: str,
    field: str | None = None,
    certainty: Certainty = Certainty.DEFINITE,
    position: Position | None = None,
) -> Finding:
    """Build a finding in one line."""
    issue = WallIssue(
        dimension=dimension,
        code=code,
        message=message,
        field=field,
        fix=fix,
        certainty=certainty,
        penalty=round(min(1.0, max(0.0, penalty)), 4),
        position=position,
    )
    return Finding(issue, penalty)


def score_after(findings: Iterable[Finding]) -> float:
    """1.0 less every penalty, never below 0."""
    return max(0.0, 1.0 - sum(f.penalty for f in findings))


def sentences(text: str) -> list[str]:
    """Split prose into sentences and list items, dropping blanks."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def words(text: str) -> list[str]:
    """Lower-cased words and numbers.

    A word holds no space: lowering them joined is one call, not one per word.
    """
    found = _WORD.findall(text)
    return " ".join(found).lower().split(" ") if found else []
