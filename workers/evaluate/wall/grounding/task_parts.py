"""A task's two parts: what the node was asked, and the material it was given to work on.

Prompts carry their input inline as often as beside them, in whatever layout the runtime's
template uses: LangChain's "Use the following pieces of context ...", a ``<context>`` or
``<kb_entry>`` block, "Context: ...", a passage in its own paragraph, a JSON payload. Pasted
material is input, exactly as a source is: an output is grounded in it, and never has to
cover or repeat it. Only the ask (the instruction, the question, the dialogue so far) is
what an answer may echo without adding anything, and what says which grounding policy
fits.

The task is cut into blocks by its layout (``task_blocks``), and each block is read by its
own shape, not by what it is called: a dialogue, a question, an instruction to the reader
are the ask; a run of plain statements is material. A label the engine knows ("Context",
"Question") settles a block the shape leaves open; a layout nobody listed reads the same.
A block that is neither clearly one nor the other stays in the ask, which is input too:
nothing the task holds can be "unsupported". Material that repeats a given source is
dropped, since the source already holds it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from schemas.request import Source
from workers.evaluate.findings import sentences, words
from workers.evaluate.wall.grounding.lexicon import squash, tokens
from workers.evaluate.wall.grounding.task_blocks import Block, blocks_of
from workers.evaluate.wall.grounding.task_speech import SPEAKER, is_directive, without_markup
from workers.evaluate.wall.grounding.task_structure import as_turns, without_examples

#: Label words that say a block is material to work on (a hint; the shape decides without).
#: Not "input" nor "note": an "Input:" is as often the question and a "Note:" an instruction.
MATERIAL_LABELS = frozenset(
    """
    abstract article background content context data document email evidence excerpt
    fact information knowledge paper passage reference report result retrieved source
    story text transcript
    """.split()
)
#: Label words that say a block is the ask (a hint, like ``MATERIAL_LABELS``).
ASK_LABELS = frozenset(
    """
    answer assistant chat conversation dialog dialogue format history human instruction
    output prompt query question reply request response summary system task user
    """.split()
)
#: A speaker's turn anywhere in a text: ``[Human]:``, ``User:``, ``Assistant:``, ``Q:``. It
#: opens a line, follows a sentence's end, or is bracketed; "reply as the voice assistant:"
#: names the role inside a sentence and starts no turn.
_TURN = re.compile(r"(?:^|(?<=[.!?)\]\"'\u201d])\s+|\s+(?=\[))" + SPEAKER, re.I | re.M)
#: Words a block of plain statements needs before it counts as material.
MIN_MATERIAL_WORDS = 8
#: A shorter statement is material when it names things: these many words, these many names
#: or numbers (capitalised words after the first, figures).
MIN_FACT_WORDS = 3
MIN_FACT_NAMES = 1
_TOKEN = re.compile(r"[A-Za-z][\w'’-]*|\d[\d,.]*")
#: Words a run of statements cut from a block that also asks needs to count as material.
MIN_RUN_WORDS = 25
#: Sentences such a run needs: one long "sentence" is more likely a question an
#: abbreviation cut in two ("... in Greater St." / "Louis?") than a passage.
MIN_RUN_SENTENCES = 2
#: Words a sentence of a block needs for a source holding it to count ("Yes." is everywhere).
MIN_HELD_WORDS = 3
#: What ends the speaker, timestamp or column a transcript or table opens a sentence with.
_LABEL_ENDS = (": ", "\t", " | ")
#: Words a labelled block needs when its label says it is material. A label of the ask
#: settles only a block shorter than ``MIN_RUN_WORDS``: a passage stays a passage.
MIN_LABELLED_WORDS = 3
#: A line ending so is a unit of its own (a sentence, an introducer, a tag or a heading).
_LINE_END = re.compile(r"[.!?:;>*\]\)\"']\s*$")
#: In a block this long (sentences), a few questions or asides do not make it the ask.
LONG_BLOCK = 4
MOSTLY_STATEMENTS = 0.75


class Role(StrEnum):
    """What a piece of the task is to the node."""

    ASK = "ask"
    MATERIAL = "material"


@dataclass(frozen=True, slots=True)
class TaskParts:
    """A task split into its ask and its material."""

    ask: str | None
    """The instruction, question or dialogue: null when the task held only material."""
    material: tuple[str, ...]
    """Passages pasted into the task that no given source already holds."""
    pasted: bool
    """Whether the task held any material (a copy of a source included)."""
    subject: str | None = None
    """What the ask is about (``subject_of``): what an answer may echo and must address."""


def split_task(task: str | None, sources: Sequence[Source] = ()) -> TaskParts:
    """The ask and the material of ``task``; material a source already holds is dropped.

    Cached: the Wall, the router's cost estimate and the judges each read the same split.
    """
    if not task or not task.strip():
        return TaskParts(None, (), False)
    return _split(task, tuple(sources))


@lru_cache(maxsize=32)
def _split(task: str, sources: tuple[Source, ...]) -> TaskParts:
    blocks = as_turns(without_examples(blocks_of(task)))
    pieces = [piece for block in blocks if block.text.strip() for piece in _pieces(block)]
    if len(pieces) > 1 and all(role is Role.MATERIAL for role, _ in pieces):
        pieces = _with_an_ask(pieces)
    asks = [text for role, text in pieces if role is Role.ASK]
    found = [text for role, text in pieces if role is Role.MATERIAL]
    if not asks and len(found) == 1:  # one passage alone: what the node was asked
        return TaskParts(task.strip(), (), False, task.strip())
    given = [squash(s.text) for s in sources]
    material = tuple(rest for b in found if (rest := _unheld(given, b)))
    # Blank lines keep the ask's pieces apart as sentences ("Here's the text:" / "Summarize it.").
    ask = "\n\n".join(asks).strip() or None
    subject = subject_of(ask, [*found, *(s.text for s in sources)])
    return TaskParts(ask, material, bool(found), subject)


def task_for_judge(task: str | None, sources: Sequence[Source] = ()) -> str | None:
    """The task as a judge should read it: material a given source holds appears once.

    "Summarize the document. Document: <article>" sent with the article as a source
    would put the article in the judge's prompt twice, and price the review by that:
    the ask and any material no source holds are kept, copies are left to the sources.
    """
    parts = split_task(task, sources)
    if not task or not parts.pasted or not sources:
        return task
    kept = [text for text in (parts.ask, *parts.material) if text]
    return "\n\n".join(kept) or None


def subject_of(ask: str | None, given: Sequence[str]) -> str | None:
    """What an ask is about: the part an answer has to address, and may echo.

    A prompt's standing instructions ("If you don't know the answer, just say so", "Use
    three sentences maximum") speak to the reader about the form of an answer and name
    nothing the node was given; the question, the dialogue, or a request that names the
    input does. Those instructions are left out, so that the same question reads the same
    in any template, and an answer is not "supported" by a template's words. Without
    input the whole ask is what was asked.
    """
    if not ask or not given:
        return ask
    named = {name for text in given for name in _names(text)}
    return " ".join(s for s in sentences(ask) if _about_input(s, named)) or None


def _about_input(sentence: str, named: set[str]) -> bool:
    """A turn of the dialogue, a question, a statement, or a request naming something given."""
    if speaker_turns(sentence) or sentence.rstrip().endswith("?"):
        return True
    if is_directive(sentence):
        return not _names(sentence).isdisjoint(named)
    return _enough(sentence, MIN_FACT_WORDS)  # not a scrap of layout ("retrieved.txt")


def _names(text: str) -> set[str]:
    """The folded names and figures of a text: capitalised words after its first, digits."""
    found = tokens(text)
    return {
        t.key
        for i, t in enumerate(found)
        if t.text[:1].isdigit() or (i and t.text[:1].isupper() and len(t.text) > 1)
    }


def speaker_turns(text: str) -> int:
    """How many speakers' turns ``text`` holds (a dialogue has two or more)."""
    return len(_TURN.findall(text))


def _pieces(block: Block) -> list[tuple[Role, str]]:
    """A block's ask and material, read from its shape; its label settles what shape leaves."""
    text = block.text.strip()
    # "Summarize the following article: ..." is asked by its label.
    asked = [(Role.ASK, block.label)] if block.label and is_directive(block.label) else []
    if speaker_turns(text) >= 2:
        return [*asked, *_dialogue(text)]
    hint = _hint(block.label)
    if hint is Role.ASK and not _enough(text, MIN_RUN_WORDS):
        return [*asked, (Role.ASK, text)]  # "Question: ... in what city" lacks its "?"
    if hint is Role.MATERIAL and _enough(text, MIN_LABELLED_WORDS):
        return [*asked, (Role.MATERIAL, text)]
    return [*asked, *_by_shape(text)]


def _dialogue(text: str) -> list[tuple[Role, str]]:
    """A dialogue is the ask; lines of a longer block that hold no turn are read by shape.

    A chat export pastes the passage in one message and the conversation in another.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if all(speaker_turns(line) for line in lines):
        return [(Role.ASK, text)]
    pieces: list[tuple[Role, str]] = []
    rest: list[str] = []
    for line in [*lines, ""]:
        if line and not speaker_turns(line):
            rest.append(line)
            continue
        if rest:
            pieces += _by_shape("\n".join(rest))
            rest = []
        if line:
            pieces.append((Role.ASK, line))
    return pieces


def _by_shape(text: str) -> list[tuple[Role, str]]:
    """Statements are material; what is said to the reader around them is the ask.

    The ask sits at a block's edges ("Read this. <passage> Answer briefly."): directive
    sentences before the first statement and after the last go to the ask. Between them,
    a block of mostly statements is material whole (an article quotes a question or
    two), unless a line of its own asks (a chat export's message); otherwise each long
    enough run of statements is.
    """
    said = _units(text)
    flags = [is_directive(u.text) for u in said]
    stated = [i for i, directive in enumerate(flags) if not directive]
    if not stated:
        return [(Role.ASK, text)]
    first, last = stated[0], stated[-1]
    core = said[first : last + 1]
    if len(stated) == len(said):
        return [(Role.MATERIAL if _passage(text) else Role.ASK, text)]
    pieces = [(Role.ASK, _joined(said[:first]))] if first else []
    core_flags = flags[first : last + 1]
    asides = [u for u, directive in zip(core, core_flags, strict=True) if directive]
    lines_asked = any(u.opens_line and u.closes_line for u in asides)  # a chat export's line
    if len(core) >= LONG_BLOCK and len(stated) >= MOSTLY_STATEMENTS * len(core) and not lines_asked:
        pieces.append((Role.MATERIAL, _joined(core)))
    else:
        pieces += _runs(core, core_flags)
    if last + 1 < len(said):
        pieces.append((Role.ASK, _joined(said[last + 1 :])))
    return pieces


@dataclass(frozen=True, slots=True)
class _Unit:
    """A sentence of a block, and whether it opens or closes a line of it."""

    text: str
    opens_line: bool
    closes_line: bool


def _units(text: str) -> list[_Unit]:
    """A block's sentences, a line break counting as an end where the text is laid out.

    Prompts set their parts on lines of their own ("**Request**" over "Summarize it."); a
    line that wraps a sentence ends without a stop and goes on in lower case.
    """
    lines: list[str] = []
    for line in (row.strip() for row in text.splitlines() if row.strip()):
        if lines and not _LINE_END.search(lines[-1]) and line[:1].islower():
            lines[-1] = f"{lines[-1]} {line}"
        else:
            lines.append(line)
    units = []
    for line in lines:
        said = sentences(line)
        units += [_Unit(s, i == 0, i == len(said) - 1) for i, s in enumerate(said)]
    return units


def _runs(said: list[_Unit], flags: list[bool]) -> list[tuple[Role, str]]:
    """Each run of statements that is a passage; the rest stays in the ask.

    A run on lines of its own is a passage as a whole block is; one cut from inside a line
    needs more (``MIN_RUN_SENTENCES``, ``MIN_RUN_WORDS``).
    """
    pieces: list[tuple[Role, str]] = []
    run: list[_Unit] = []
    for unit, directive in [*zip(said, flags, strict=True), (None, True)]:
        if unit is not None and not directive:
            run.append(unit)
            continue
        if run:
            joined = _joined(run)
            own_lines = run[0].opens_line and run[-1].closes_line
            inline = len(run) >= MIN_RUN_SENTENCES and _enough(joined, MIN_RUN_WORDS)
            passage = inline or (own_lines and _passage(joined))
            pieces.append((Role.MATERIAL if passage else Role.ASK, joined))
            run = []
        if unit is not None:
            pieces.append((Role.ASK, unit.text))
    return pieces


def _joined(units: Sequence[_Unit]) -> str:
    return " ".join(u.text for u in units)


def _passage(text: str) -> bool:
    """Statements set apart that are long enough, or name something, to be material."""
    return _enough(text, MIN_MATERIAL_WORDS) or _fact(text)


def _with_an_ask(pieces: list[tuple[Role, str]]) -> list[tuple[Role, str]]:
    """Every task asks something: with only statements, the shortest block is the ask.

    A question written without its mark ("X is based in what city") reads as a statement;
    beside the passage it asks about, it is the shorter of the two.
    """
    shortest = min(range(len(pieces)), key=lambda i: len(pieces[i][1]))
    return [(Role.ASK if i == shortest else role, text) for i, (role, text) in enumerate(pieces)]


def _enough(text: str, least: int) -> bool:
    return len(words(text)) >= least


def _fact(text: str) -> bool:
    """A short statement that names something ("The Martian is starring Matt Damon")."""
    found = _TOKEN.findall(text)
    named = sum(1 for i, w in enumerate(found) if w[0].isdigit() or (i and w[0].isupper()))
    return len(found) >= MIN_FACT_WORDS and named >= MIN_FACT_NAMES


def _hint(label: str) -> Role | None:
    """What a label's words say the block is, when they say it."""
    found = re.findall(r"[a-z]+", label.lower())
    if not 0 < len(found) <= 3:
        return None
    last = _stem(found[-1])
    if last in MATERIAL_LABELS:
        return Role.MATERIAL
    if last in ASK_LABELS or any(_stem(w) in ASK_LABELS for w in found):
        return Role.ASK
    return None


def _stem(word: str) -> str:
    return word.removesuffix("s") if len(word) > 3 else word


def _unheld(given: Sequence[str], block: str) -> str:
    """What of a block no source holds: all of it, none, or the sentences left.

    A transcript or a table pastes a passage a sentence at a time, each behind a speaker,
    a timestamp or a column of its own; the sentences a source holds are its words and are
    left to it, the host's "Welcome back" and any sentence with something new stay.
    """
    if not given:
        return block
    if any(_holds(g, block) for g in given):
        return ""
    units = [line for sentence in sentences(block) for line in sentence.splitlines()]
    held = [_held_by_any(given, unit) for unit in units]
    if not any(held):
        return block
    return " ".join(unit for unit, h in zip(units, held, strict=True) if not h).strip()


def _holds(source: str, block: str) -> bool:
    """Whether a source already holds a block: the folded text of one occurs in the other.

    The markers a layout opens its lines with ("[1]", "- ") are not the source's words.
    """
    folded = squash(without_markup(block))
    return bool(folded) and (folded in source or source in folded)


def _held_by_any(given: Sequence[str], unit: str) -> bool:
    """Whether a source holds a sentence of a few words, less the label or columns before it."""
    text = without_markup(unit)
    cuts = [(text.split(sep, 1)[1], text.rsplit(sep, 1)[1]) for sep in _LABEL_ENDS if sep in text]
    tails = (text, *(tail for pair in cuts for tail in pair))
    found = [squash(t) for t in tails if _enough(t, MIN_HELD_WORDS)]
    return any(t in source for t in found for source in given)
