"""What the built-in judge measures against the task: completeness and relevance.

Each function returns ``(score, notes)``, so every score carries its observations.
"""

from __future__ import annotations

import re

from schemas.request import NodeOutput, OutputKind
from workers.evaluate.findings import words
from workers.evaluate.wall.grounding.lexicon import NUMBER_WORDS
from workers.evaluate.wall.grounding.task_parts import MATERIAL_LABELS

Measure = tuple[float, list[str]]

_TRUNCATED_END = re.compile(r"[A-Za-z,;:(\-]$")
_COUNTED = re.compile(
    r"\b(\d{1,2}|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?:\w+\s+)?(recommendations|steps|items|examples|reasons|points|"
    r"sections|options|tips|questions)\b",
    re.I,
)
#: Lines that end without a full stop by convention: list items, headings, table rows.
_UNPUNCTUATED_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#{1,6}|\|)\s")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S", re.M)
_STOPWORDS = set(
    "a an the and or of to in on for with by from is are be as at it this that these those "
    "write create generate produce make give provide return list your you should must into "
    "about which what how when where who whose than then also each all any some using use "
    "function functions code script query json document output file program python sql "
    "markdown text one two three four five six seven eight nine ten write draft summarise "
    "summarize assess design optimise optimize describe explain announce announcing "
    "implement build compose prepare review analyse analyze compare propose email".split()
)
#: Words that set an answer's form or length, or point at its input or the ask, not its
#: subject: "in a few sentences", "a short summary", "the article below", "answer the
#: question". An answer never has to repeat them, so asking the same thing in other words
#: does not change relevance.
_FORM_WORDS = {
    *"few several brief briefly short shortly concise concisely sentence sentences word words "
    "line lines paragraph paragraphs bullet bullets point points summary above below "
    "following provided given based".split(),
    *"answer question query reply response request instruction prompt task dialogue dialog "
    "conversation chat format output".split(),
    *MATERIAL_LABELS,
    *(f"{label}s" for label in MATERIAL_LABELS),
    *"input inputs note notes".split(),
}


def completeness(output: NodeOutput, task: str | None) -> Measure:
    """Asked-for items present, nothing truncated, no empty sections."""
    notes: list[str] = []
    score = 0.92
    content = output.content.rstrip()
    last_line = content.rsplit("\n", 1)[-1]
    if (
        output.kind in (OutputKind.TEXT, OutputKind.MARKDOWN)
        and _TRUNCATED_END.search(content)
        and not _UNPUNCTUATED_LINE.match(last_line)
    ):
        score, notes = score - 0.25, [*notes, "ends mid-sentence (truncated?)"]
    if output.kind is OutputKind.MARKDOWN:
        empty = _empty_sections(content)
        if empty:
            score, notes = (
                score - min(0.4, 0.15 * len(empty)),
                [*notes, f"empty sections: {', '.join(empty[:3])}"],
            )
    wanted = _asked_count(task)
    if wanted is not None:
        noun, count = wanted
        have = len(_LIST_ITEM.findall(content))
        if have < count:
            score = min(score, 0.35 + 0.5 * have / count)
            notes.append(f"only {have} of {count} requested {noun} provided")
        else:
            notes.append(f"all {count} requested {noun} provided")
    return max(0.0, score), notes or ["no truncation, empty sections or missing requested items"]


def _asked_count(task: str | None) -> tuple[str, int] | None:
    if not task:
        return None
    match = _COUNTED.search(task)
    if match is None:
        return None
    raw = match.group(1).lower()
    return match.group(2).lower(), NUMBER_WORDS.get(raw) or int(raw)


def _empty_sections(content: str) -> list[str]:
    """Headings with no body: followed directly by a heading of the same or higher level."""
    lines = [ln.strip() for ln in content.splitlines() if ln.strip()]
    empty = []
    for index, line in enumerate(lines):
        level = _heading_level(line)
        if level == 0:
            continue
        following = lines[index + 1] if index + 1 < len(lines) else None
        if following is None or 0 < _heading_level(following) <= level:
            empty.append(line.lstrip("# "))
    return empty


def _heading_level(line: str) -> int:
    return len(line) - len(line.lstrip("#")) if line.startswith("#") else 0


def relevance(output: NodeOutput, task: str | None) -> Measure:
    """How much of the task's vocabulary the output takes up."""
    if not task:
        return 0.85, ["no task given: relevance judged on coherence alone"]
    wanted = {
        w
        for w in words(task)
        if len(w) > 2 and w not in _STOPWORDS | _FORM_WORDS and not w.isdigit()
    }
    if not wanted:
        return 0.85, ["the task has no content words to match"]
    have = set(words(output.content.replace("_", " ")))
    stems = {w[:5] for w in have}
    hit = {w for w in wanted if w in have or w[:5] in stems}
    recall = len(hit) / len(wanted)
    missing = sorted(wanted - hit)[:5]
    note = f"covers {len(hit)} of {len(wanted)} task terms"
    return min(0.95, 0.3 + 1.25 * recall), [
        note + (f"; missing {', '.join(missing)}" if missing else "")
    ]
