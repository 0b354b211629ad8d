"""Plain statements about a subject, read from prose: what, how many, which way.

A clause such as ``the production cache is enabled``, ``all 12 tests passed``, ``three
of the tests failed`` or ``the cache is not persistent`` becomes a :class:`Statement`:
its subject (content words), a quantity, a predicate on an axis (``enabled`` and
``disabled`` are the two ends of one axis; ``persistent`` and ``not persistent`` too), a
polarity, a tense and the rest of the clause. Only a clause that is a whole, plain
assertion is read: the sentence may not be a question, a condition, a quotation, a
report of what someone said or thinks, a modal, a contrast or a statement about a change
in time (``now``, ``no longer``, ``after``), any of which lets a statement and its
opposite both hold. Pronoun subjects (``it``, ``they``) are not read: what they refer
to is unknown here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workers.evaluate.wall.prose_clauses import clauses

#: (axis, words for its positive end, words for its negative end).
AXES = (
    ("enabled", "enabled", "disabled"),
    ("pass", "passed passes passing succeeded succeeds successful", "failed fails failing"),
    ("increase", "increased increases rose rises", "decreased decreases fell falls"),
    ("true", "true", "false"),
    ("valid", "valid", "invalid"),
    ("available", "available", "unavailable"),
    ("supported", "supported", "unsupported"),
    ("active", "active", "inactive"),
    ("visible", "visible", "hidden invisible"),
    ("allowed", "allowed permitted", "forbidden disallowed prohibited"),
    ("correct", "correct", "incorrect"),
    ("complete", "complete", "incomplete"),
    ("locked", "locked", "unlocked"),
    ("connected", "connected", "disconnected"),
    ("included", "included", "excluded"),
    ("accepted", "accepted approved", "rejected"),
    ("mutable", "mutable", "immutable"),
    ("synchronous", "synchronous", "asynchronous"),
    ("online", "online", "offline"),
    ("successful", "successful", "unsuccessful"),
)
_ENDS = {
    word: (axis, positive)
    for axis, positives, negatives in AXES
    for positive, words in ((True, positives), (False, negatives))
    for word in words.split()
}
_VERBS = "passed|failed|passes|fails|succeeded|succeeds|increased|decreased|increases|" + (
    "decreases|rose|rises|fell|falls"
)
_PRESENT = frozenset("is are has have remains remain passes fails succeeds increases".split())
_PRESENT |= frozenset("decreases rises falls".split())

#: A sentence with any of these words is not a plain assertion of one state.
_NOT_PLAIN_WORDS = frozenset(
    """if unless when whenever whether otherwise once until provided assuming suppose
    example e.g i.e may might can could should would must will shall cannot can't won't
    wouldn't shouldn't couldn't now longer anymore previously formerly initially
    originally later after before then again yet still since soon eventually recently
    earlier first today yesterday tomorrow said says say think thinks thought believe
    believes believed claim claims claimed report reports reported according allegedly
    seem seems seemed appear appears appeared suggest suggests suggested heard except
    only either neither nor also sometimes often usually rarely partly partially mostly
    instead unlike whereas while but however although though despite versus vs""".split()
)
_NOT_PLAIN_MARKS = frozenset('?"\u201c\u201d')
_SENTENCE_WORD = re.compile(r"[a-z]+(?:['.][a-z]+)*")
#: A sentence needs one of these to state anything this module reads.
_CUES = frozenset("is are was were been remains remain".split()) | _ENDS.keys()

NUMBER_WORDS = {
    w: n
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
NUMBER = r"(?:\d{1,6}|" + "|".join(NUMBER_WORDS) + r")"
_ADVERBS = "currently|actually|indeed|definitely|always|officially"
_AUX = r"is|are|was|were|has\s+been|have\s+been|remains|remain"
_WORD = rf"(?!(?:{_AUX}|{_VERBS}|not|never|has|have)\b)[a-z0-9_][\w'-]*"
_CLAUSE = re.compile(
    rf"(?:(?:because|as|and|thus|hence|therefore|so)\s+)?"
    rf"(?:(?P<all>all|every|each|both)(?:\s+of)?(?:\s+the)?\s+"
    rf"|(?P<no>none(?:\s+of\s+the)?|no)\s+"
    rf"|(?P<count>{NUMBER})(?:\s+of\s+the(?:\s+(?P<whole>{NUMBER}))?)?\s+"
    rf"|(?P<det>the|this|these|our|your|its|their)\s+)?"
    rf"(?:(?P<total>{NUMBER})\s+)?"
    rf"(?P<subject>{_WORD}(?:\s+{_WORD}){{0,3}}\s+)?"
    rf"(?:(?P<aux>{_AUX})\s+(?P<neg>not\s+|never\s+)?(?P<adverb>(?:{_ADVERBS})\s+)?"
    rf"(?P<article>an?\s+)?(?P<predicate>[a-z][\w-]*)"
    rf"|(?P<verb>{_VERBS}))"
    rf"(?P<tail>(?:\s+[\w'-]+){{0,6}})",
    re.I,
)
#: Subjects whose referent is not in the clause: pronouns and other stand-ins.
_NOT_SUBJECT = frozenset(
    """it they he she we i you this that these those which who what there here one
    something anything nothing everything someone everyone some many most several few
    certain other others various any more less fewer half part parts majority rest
    remaining multiple numerous lots""".split()
)
#: Subjects too generic to be one thing across a text (``the default``, ``the result``).
_GENERIC = frozenset("default value result return output input answer status state case".split())
_FUNCTION = frozenset("a an the of to in on at by for with from as into per via".split())
#: After ``not``: words that make a negation partial (``not always enabled``).
_PARTIAL = frozenset("always necessarily fully entirely completely quite just all".split())


@dataclass(frozen=True, slots=True)
class Statement:
    """One plain assertion: ``<quantity> <subject> <predicate on axis> <tail>``."""

    subject: frozenset[str]
    """Content words of the subject; empty when it is elided (``all 12 passed``)."""
    tail: frozenset[str]
    """Content words after the predicate (``in production``)."""
    axis: str
    """What is stated: an axis of ``AXES`` or the predicate itself (``a list``)."""
    positive: bool
    """Which end of the axis, negations applied (``not disabled`` is positive)."""
    past: bool
    """Stated in the past tense (a state then may differ from a state now)."""
    quantity: str
    """``all`` (``all``, ``every``, ``no``, ``the 12``), ``the`` (a definite subject:
    ``the cache``) or ``count`` (``three of the tests``)."""
    count: int | None
    """How many, when the clause says (``all 12``, ``three of the``)."""
    text: str


def statements(sentence: str) -> list[Statement]:
    """The plain assertions of one sentence (none when it is hedged in any way)."""
    if len(sentence) > 400 or _NOT_PLAIN_MARKS.intersection(sentence):
        return []
    said = set(_SENTENCE_WORD.findall(sentence.lower()))
    if said.isdisjoint(_CUES) or not said.isdisjoint(_NOT_PLAIN_WORDS):
        return []
    found = (_statement(c) for c in clauses(sentence))
    return [s for s in found if s is not None]


def _statement(clause: str) -> Statement | None:
    match = _CLAUSE.fullmatch(clause.lower())
    if match is None:
        return None
    subject = (match["subject"] or "").split()
    tail = match["tail"].split()
    predicate = match["predicate"] or match["verb"]
    quantity, count = _quantity(match)
    elided = not subject and (count is not None or match["no"] is not None)
    if quantity is None or not (subject or elided) or _NOT_SUBJECT & set(subject):
        return None
    if subject and set(subject) <= _GENERIC:
        return None
    partial = predicate in _PARTIAL or bool(match["neg"] and match["adverb"])
    if partial or (tail and tail[0] in _PARTIAL):
        return None
    axis, positive = _ENDS.get(predicate, ((match["article"] or "") + predicate, True))
    if match["neg"]:
        positive = not positive
    if match["no"]:
        positive = not positive
    aux = (match["aux"] or "").split()
    return Statement(
        subject=_content(subject),
        tail=_content(tail),
        axis=axis,
        positive=positive,
        past=(aux[0] if aux else predicate) not in _PRESENT,
        quantity=quantity,
        count=count,
        text=clause,
    )


def _quantity(match: re.Match[str]) -> tuple[str | None, int | None]:
    """``all``, ``the`` or ``count`` and the number the clause gives.

    None for a subject that is neither quantified nor definite, with a verb of its own
    (``tests passed``: which tests is not said).
    """
    total = _number(match["total"])
    if match["count"]:
        if total is not None:
            return None, None  # ``3 4 tests``: not a clause we read
        return "count", _number(match["count"])
    if match["all"] or match["no"] or total is not None:
        return "all", total
    if match["det"]:
        return "the", None
    return (None, None) if match["aux"] is None else ("the", None)


def _number(text: str | None) -> int | None:
    if text is None:
        return None
    return int(text) if text.isdigit() else NUMBER_WORDS.get(text)


def _content(words: list[str]) -> frozenset[str]:
    return frozenset(w for w in words if w not in _FUNCTION)
