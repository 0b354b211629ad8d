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
#: Markup opening a sentence: tags, bracketed labels, bullets, emphasis, an @mention.
_MARKUP = re.compile(
    r"^(?:\s*(?:<{1,2}[^<>]*>{1,2}|\[[^\]]{0,40}\]|[-*•>#|_]+|\d{1,2}[.)]|@[\w.-]+,?))+\s*"
)
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”")
#: "you" in any case, but not a capitalised "You" inside a sentence (a title: "Thank You
#: for Smoking"); "please" anywhere.
_TO_READER = re.compile(
    r"(?i:^\W*(?:you|your|please)\b)|\b(?:you|your|yours|yourself|yourselves|please)\b"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
#: The first word and, when only a space parts them, the word after it ("Score the essay";
#: not "score=0.91 | The").
_VERB_OBJECT = re.compile(r"(?P<verb>[A-Za-z][A-Za-z'’]*)(?:[ \t]+(?P<after>[A-Za-z][A-Za-z'’]*))?")
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
#: A question written without its mark: "who" opening it, or an interrogative word right
#: before an auxiliary ("When was", "How many"); a statement's "When the war ended" is not.
_AUX = r"(?:is|was|are|were|did|does|do|has|have|had|can|could|will|would|should)"
_UNMARKED_QUESTION = re.compile(
    rf"^(?:who|whom|whose)\b|^(?:what|which|where|when|why|how)\s+(?:{_AUX}|many|much)\b"
    rf"|^which\s+\w+\s+{_AUX}\b",
    re.I,
)
_REQUEST = re.compile(
    r"^\W*(?:i|we)(?:'d| would)? (?:like|need|want)\b|^\W*(?:can|could|would|will) you\b", re.I
)


def without_markup(text: str) -> str:
    """Each line of ``text`` without the markup that opens it (``[1]``, ``- ``, ``<p>``)."""
    return "\n".join(_MARKUP.sub("", line) for line in text.splitlines())


def is_directive(sentence: str) -> bool:
    """Whether a sentence asks, instructs or requests, rather than states.

    Markup before it (``<div>``, ``[query]``, ``- ``, ``**``) is layout; a clause after a
    colon is read too ("... and responds to it: Summarize the document.").
    """
    text = _MARKUP.sub("", _QUOTED.sub('""', sentence)).strip()
    if not text:
        return False
    head, colon, tail = text.rpartition(": ")
    tail = _MARKUP.sub("", tail)
    if colon and head and tail[:1].isupper() and _speaks(tail):
        return True
    return _speaks(text)


def _speaks(text: str) -> bool:
    """Whether text, its markup gone, asks, instructs or requests."""
    if text.endswith("?") or _TO_READER.search(text) or _REQUEST.search(text):
        return True
    if _UNMARKED_QUESTION.match(text):  # "Who was once considered the best kick boxer"
        return True
    if text.endswith(":") and len(_WORD.findall(text)) <= MAX_INTRODUCER_WORDS:
        return True  # "Here's what I found:"
    if _instructs(text):
        return True
    if _opening(text) in _OPENINGS:  # "Given ..., answer the query."
        return any(_instructs(clause) for clause in re.split(r"[,;]\s*", text)[1:])
    return False


def _instructs(text: str) -> bool:
    """Whether text opens with an instruction: a verb, then (a space, then) its object."""
    match = _VERB_OBJECT.match(text)
    if match is None:
        return False
    verb = match.group("verb").lower().replace("’", "'")
    after = (match.group("after") or "").lower()
    if verb in INSTRUCTIONS:
        return after not in {"of", "on", "in", "is", "was", "are", "were", "has", "had"}
    return verb in MAYBE_INSTRUCTIONS and after in _OBJECTS


def _opening(text: str) -> str:
    match = _VERB_OBJECT.match(text)
    return match.group("verb").lower() if match else ""
