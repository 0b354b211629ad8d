"""Counts in prose that disagree with what they count.

``three endpoints: /a and /b`` states three and lists two; a list in bullets after
``the two settings:`` has as many items as bullets. A list is counted only when it is
plainly complete: it runs to the end of its sentence, its items are short, nothing says
it is partial (``such as``, ``including``, ``etc.``) and it has no nested lists; an
inline list is counted every way its separators allow (commas only, ``and``/``or``
only, both), and a count is wrong only when it matches none of them. A total
(``five endpoints in total``, ``a total of 5 endpoints``) must agree with any other
total of the same thing and cannot be smaller than a list of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from schemas.quality import Dimension
from schemas.stages import IssueCode
from workers.evaluate.findings import Finding, finding
from workers.evaluate.wall.polarity import NUMBER, NUMBER_WORDS
from workers.evaluate.wall.prose_clauses import BULLET, bullet_count, lines_after

PENALTY = 0.45
_NOUN = r"(?:[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)"
#: A count just before a colon: ``three endpoints:``, ``four PRs as follows:``.
_INTRO = re.compile(
    rf"(?<![\w.,-])(?P<number>{NUMBER})\s+(?P<noun>{_NOUN})(?:\s+as\s+follows|\s+below)?\s*$",
    re.I,
)
#: What follows the colon: the rest of its paragraph.
_REST = re.compile(r"[ \t]*(?P<rest>[^\n]*(?:\n(?![ \t]*\n)[^\n]*)*)")
_BEFORE = re.compile(r"(\w+)\s+$")
#: How far before a colon its count may start.
_WINDOW = 80
_TOTAL = re.compile(
    rf"\ba\s+total\s+of\s+(?P<n1>{NUMBER})\s+(?P<noun1>{_NOUN})"
    rf"|(?<![\w.,-])(?P<n2>{NUMBER})\s+(?P<noun2>{_NOUN}?)\s+(?:in\s+total|altogether)\b",
    re.I,
)
#: Words before a number that make it part of a larger or vaguer set.
_VAGUE = frozenset("first last top next other least most over under than about around".split())
_NOT_NOUN = frozenset(
    """of the a an to in on at by for from with and or is are was were times more less
    other others such""".split()
)
#: A list that says it is partial, or that goes on past its items.
_PARTIAL = re.compile(
    r"\b(?:etc|e\.g|i\.e|such as|including|includes|like|among|others|more|other|various|"
    r"example|examples|respectively|which|that|who|where|each|both|all|whose|plus|vs|"
    r"versus|with|without|per)\b|[()\[\]`]|\w/\w",
    re.I,
)
_SEPARATORS = {
    "both": re.compile(r"\s*[,;]\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", re.I),
    "commas": re.compile(r"\s*[,;]\s*", re.I),
    "words": re.compile(r"\s+(?:and|or)\s+", re.I),
}
_SENTENCE_END = re.compile(r"(?<!\.)\.(?=\s|$)")
#: Plurals that do not end in ``s``.
_IRREGULAR = frozenset("people children men women data criteria media feet teeth mice".split())
MAX_ITEM_WORDS = 4
#: Larger numbers are not counts of a list someone writes out.
MAX_COUNT = 30
_ANY_NUMBER = re.compile(rf"\b{NUMBER}\b", re.I)
#: Text just before a number that makes it a value, not a count.
_LABELS = (":", "=", "<", ">", "/", "#", "(")


def _label(word: str) -> bool:
    """``PEP``, ``RFC``, ``Python``: a name the number after it belongs to."""
    return len(word) > 1 and (word.isupper() or (word[0].isupper() and word[1:].islower()))


@dataclass(frozen=True, slots=True)
class _Count:
    number: int
    noun: str
    listed: tuple[int, ...]
    """How many items the list after it has, by each reading of its separators."""
    text: str


def count_findings(section: str) -> list[Finding]:
    """Stated counts the items after them deny, and totals that disagree."""
    counts: list[_Count] = []
    colon = section.find(":")
    while colon >= 0:
        if section.startswith("//", colon + 1):  # a URL's scheme
            colon = section.find(":", colon + 1)
            continue
        start = max(0, colon - _WINDOW)
        intro = _INTRO.search(section, start, colon)
        if intro is not None and (intro.start() > start or start == 0):
            counted = _count(intro, colon, section)
            if counted is not None:
                counts.append(counted)
        colon = section.find(":", colon + 1)
    found = [
        _finding(
            IssueCode.COUNT_MISMATCH,
            f"{c.text!r} says {c.number} but lists {c.listed[0]}",
            f"Make the number match the {c.noun}s listed",
        )
        for c in counts
        if c.number not in c.listed
    ]
    found.extend(_totals(section, counts))
    return found


def _count(match: re.Match[str], colon: int, section: str) -> _Count | None:
    preceding = _BEFORE.search(section, max(0, match.start() - 40), match.start())
    before = preceding.group(1) if preceding else ""
    noun_words = match["noun"].lower().split()
    if before.lower() in _VAGUE or _NOT_NOUN.intersection(noun_words) or _label(before):
        return None
    number = _number(match["number"])
    if number > 1 and not (_plural(noun_words[-1]) and not any(map(_plural, noun_words[:-1]))):
        return None  # ``10 bit variant``, ``two patches fixes``: not a count of the noun
    paragraph = section.rfind("\n\n", 0, match.start()) + 1
    opening = re.split(r"(?<=[.!?])\s", section[paragraph : match.start()])[-1]
    if number > MAX_COUNT or _ANY_NUMBER.search(opening) or opening.rstrip().endswith(_LABELS):
        return None  # a label (``RFC 1123``), a value (``default: 1``) or two counts at once
    after = _REST.match(section, colon + 1)
    rest = after["rest"] if after else ""
    first_line, _, _ = rest.partition("\n")
    intro = " ".join(section[match.start() : colon + 1].split())
    if first_line.strip():
        body = _list_body(" ".join(rest.split()))
        listed, text = _inline(body), f"{intro} {body}"
    else:
        line_start = section.rfind("\n", 0, match.start()) + 1
        line = section[line_start : colon + 1]
        head_indent = len(line) - len(line.lstrip())
        deeper = head_indent + 1 if BULLET.match(line) else head_indent  # items sit under it
        listed, text = bullet_count(lines_after(section, colon), deeper), intro
    if not listed:
        return None
    return _Count(number, _singular(noun_words[-1]), listed, text[:160])


def _list_body(rest: str) -> str:
    """An inline list: what follows the colon, to the end of its sentence."""
    end = _SENTENCE_END.search(rest)
    return rest[: end.start()] if end else rest


def _inline(body: str) -> tuple[int, ...]:
    """How many items an inline list has, by each reading (the usual one first).

    Empty when the list is not counted: it says it is partial, or its items are long.
    """
    if body.endswith((":", "!", "?")) or _PARTIAL.search(body):
        return ()
    usual = [i for i in _SEPARATORS["both"].split(body.strip(" .")) if i.strip()]
    if any(len(i.split()) > MAX_ITEM_WORDS or _ANY_NUMBER.search(i) for i in usual):
        return ()  # long items, or items that count things of their own
    readings = [len(usual)]
    by_comma = _SEPARATORS["commas"].split(body)
    if any(_SEPARATORS["words"].search(i) for i in by_comma[:-1]):
        readings.append(len(by_comma))  # ``read and write, append``: two items
    by_word = _SEPARATORS["words"].split(body)
    if len(by_word) > 1 and len({i.count(",") for i in by_word}) == 1 and "," in by_word[0]:
        readings.append(len(by_word))  # ``May 1, 2020 and June 2, 2021``: two items
    return tuple(readings) if max(readings) >= 2 else ()


def _plural(word: str) -> bool:
    return word in _IRREGULAR or (word.endswith("s") and not word.endswith(("ss", "us", "is")))


def _totals(section: str, counts: list[_Count]) -> list[Finding]:
    folded = section.lower()
    if "total" not in folded and "altogether" not in folded:
        return []
    totals: dict[str, set[int]] = {}
    for match in _TOTAL.finditer(section):
        noun = match["noun1"] or match["noun2"]
        words = noun.lower().split()
        if words and words[-1] not in _NOT_NOUN:
            totals.setdefault(_singular(words[-1]), set()).add(_number(match["n1"] or match["n2"]))
    found = [
        _finding(
            IssueCode.CONFLICTING_QUANTITY,
            f"the total number of {noun}s is given as {', '.join(map(str, sorted(numbers)))}",
            f"State one total of {noun}s",
        )
        for noun, numbers in totals.items()
        if len(numbers) > 1
    ]
    found.extend(
        _finding(
            IssueCode.COUNT_MISMATCH,
            f"{c.text!r} lists {min(c.listed)} {c.noun}s, more than the total of {total}",
            f"Make the total of {c.noun}s match the ones listed",
        )
        for c in counts
        for total in totals.get(c.noun, ())
        if total < min(c.listed)
    )
    return found


def _finding(code: IssueCode, message: str, fix: str) -> Finding:
    return finding(Dimension.CONSISTENCY, code, message, PENALTY, fix=fix)


def _number(text: str) -> int:
    return int(text) if text.isdigit() else NUMBER_WORDS[text.lower()]


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word
