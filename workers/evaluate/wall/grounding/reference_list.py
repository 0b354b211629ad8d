"""An output's reference list, and references dated after the review.

An entry is a line that starts with a bracketed label (``[3] Smith, J. ...``, ``[3]:
https://...``), or an item of a list under a heading that names references (``##
References``, ``Sources:``). A numbered plan ("1. Launch by March 2031") is no reference
list, so a bare numbered item counts only under such a heading.

A reference cannot be dated after the review that reads it. Only dates in the places a
citation puts them count: ``(2031)``, ``2031-05-01``, ``May 2031``, ``3 May 2031``, and a
year after a comma that ends a field (``Press, 2031.``); a year in a title ("The 2030
Climate Target Plan") is not a date.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

from schemas.quality import Dimension
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding

_LABELLED = re.compile(r"^\s*\[(\d{1,3})\]:?\s+(\S.*)$")
_ITEM = re.compile(r"^\s*(?:(\d{1,3})[.)]|[-*+])\s+(\S.*)$")
_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s*|\*\*)?(?:references?|sources?|bibliography|works cited|citations?|"
    r"further reading|notes and references)\b\s*(?:\*\*)?:?\s*$",
    re.I,
)
_MONTHS = (
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
)  # fmt: skip
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATES = (
    re.compile(r"\b(1[89]\d\d|2[01]\d\d)-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b"),
    re.compile(rf"\b(?:(\d{{1,2}}) )?{_MONTH},? (?:(\d{{1,2}}),? )?(1[89]\d\d|2[01]\d\d)\b", re.I),
    re.compile(r"\((1[89]\d\d|2[01]\d\d)[a-z]?(?:[,;][^()]{0,20})?\)"),
    re.compile(r", (1[89]\d\d|2[01]\d\d)[a-z]?(?=[.,;]\s|[.,;]?$)"),
)
FUTURE_PENALTY = 0.35


@dataclass(frozen=True, slots=True)
class Entry:
    """One reference-list entry: its label (``[3]``; None for a bullet), text and line."""

    label: str | None
    text: str
    line: int
    """0-based line number in the prose."""


def reference_entries(prose: str) -> Iterator[Entry]:
    """The output's reference-list entries, in order."""
    listed = False
    for number, line in enumerate(prose.split("\n")):
        labelled = _LABELLED.match(line)
        if labelled:
            yield Entry(f"[{labelled.group(1)}]", labelled.group(2), number)
            continue
        if _HEADING.match(line):
            listed = True
            continue
        item = _ITEM.match(line)
        if listed and item:
            yield Entry(f"[{item.group(1)}]" if item.group(1) else None, item.group(2), number)
        elif line.strip() and not item:
            listed = listed and not line.lstrip().startswith("#")


def latest_date(text: str) -> date | None:
    """The latest date a citation states in ``text`` (a year alone: its first day)."""
    found: list[date] = []
    for pattern in _DATES:
        for match in pattern.finditer(text):
            parsed = _date_of(pattern, match)
            if parsed is not None:
                found.append(parsed)
    return max(found, default=None)


def _date_of(pattern: re.Pattern[str], match: re.Match[str]) -> date | None:
    groups = match.groups()
    try:
        if pattern is _DATES[0]:
            return date(int(groups[0]), int(groups[1]), int(groups[2]))
        if pattern is _DATES[1]:
            day = groups[0] or groups[2] or "1"
            month = _MONTHS.index(groups[1].lower()[:3]) + 1
            return date(int(groups[3]), month, int(day))
        return date(int(groups[0]), 1, 1)
    except ValueError:  # 31 February: not a date
        return None


def future_references(prose: str, today: date) -> list[Finding]:
    """One finding per reference-list entry dated after ``today``."""
    found = []
    for entry in reference_entries(prose):
        when = latest_date(entry.text)
        if when is None or when <= today:
            continue
        shown = f"{entry.label} " if entry.label else ""
        found.append(
            finding(
                Dimension.GROUNDING,
                IssueCode.FUTURE_REFERENCE,
                f"reference {shown}is dated {when.isoformat()}, after this review "
                f"({today.isoformat()}): {entry.text[:100]!r}",
                FUTURE_PENALTY,
                field="references",
                fix="Cite the source's real date, or a source that exists",
            )
        )
    return found[:3]
