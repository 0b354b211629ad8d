"""Sentences that speak to the reader: questions, instructions, requests, turns of a chat.

What a prompt asks is said to the node ("Answer the question.", "Use the context below.",
"What year ...?", "If you don't know, say so."); what it gives is stated ("The tower was
completed in 1889."). That difference is in the sentence itself, whatever label or tag the
layout put around it, so it is what tells the ask from the material (``task_parts``).
Words inside quotation marks are someone else's and do not count.
"""

from __future__ import annotations

import re

#: A speaker's label (``[Human]:``, ``User:``, ``Q:``): the turns of a dialogue.
SPEAKER = (
    r"\[?(?:human|user|assistant|ai|bot|agent|customer|system|speaker ?\d|person ?\d|[qa])\]?:"
)
#: A sentence ending in a colon this short announces what follows; a longer one states.
MAX_INTRODUCER_WORDS = 12
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”")
#: "you" in any case, but not a capitalised "You" inside a sentence (a title: "Thank You
#: for Smoking"); "please" anywhere.
_TO_READER = re.compile(
    r"(?i:^\W*(?:you|your|please)\b)|\b(?:you|your|yours|yourself|yourselves|please)\b"
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)]|\(\w\))\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
#: Verbs that, opening a sentence, can only be an instruction.
INSTRUCTIONS = frozenset(
    """
    answer reply respond use summarize summarise write rewrite rephrase paraphrase
    translate explain describe tell give provide identify extract classify compare generate
    create consider cite imagine pretend assume ignore avoid ensure include draft produce
    determine evaluate analyze analyse suggest recommend continue keep be do don't dont
    outline condense shorten simplify elaborate clarify discuss justify
    """.split()
)
#: Verbs that are also nouns or names ("State officials said"): an instruction only when an
#: object follows them ("State the answer", "Name the two films").
MAYBE_INSTRUCTIONS = frozenset(
    """
    state name list return review check find help look make complete fill format limit base
    read think focus refer verify decide choose select show add remove fix sort count rank
    rate score label mark group match map convert calculate compute estimate predict solve
    finish begin start stop note try let act
    """.split()
)
_OBJECTS = frozenset(
    """
    the a an this that these those your my our all each every both it them me us one two
    three how what which who whether if why when where up out at to only following above
    below any some no
    """.split()
)
#: Participial openings ("Given the context, answer ...", "Based on the text, list ...").
_OPENINGS = frozenset({"given", "based", "using", "according", "from", "with"})
_REQUEST = re.compile(
    r"^\W*(?:i|we)(?:'d| would)? (?:like|need|want)\b|^\W*(?:can|could|would|will) you\b", re.I
)


def is_directive(sentence: str) -> bool:
    """Whether a sentence asks, instructs or requests, rather than states."""
    text = _QUOTED.sub('""', sentence).strip()
    if not text:
        return False
    found = [w.lower().replace("’", "'") for w in _WORD.findall(_BULLET.sub("", text))]
    if text.endswith("?") or _TO_READER.search(text) or _REQUEST.search(text):
        return True
    if text.endswith(":") and len(found) <= MAX_INTRODUCER_WORDS:  # "Here's what I found:"
        return True
    if not found:
        return False
    if _instructs(found):
        return True
    if found[0] in _OPENINGS:  # "Given ..., answer the query."
        clauses = re.split(r"[,;]\s*", text)
        return any(_instructs(_WORD.findall(c.lower())) for c in clauses[1:])
    return False


def _instructs(found: list[str]) -> bool:
    """Whether words open with an instruction (a verb that takes what follows as object)."""
    if not found:
        return False
    verb, after = found[0], found[1] if len(found) > 1 else ""
    if verb in INSTRUCTIONS:
        return after not in {"of", "on", "in", "is", "was", "are", "were", "has", "had"}
    return verb in MAYBE_INSTRUCTIONS and after in _OBJECTS
