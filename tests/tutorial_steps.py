"""The steps of docs/tutorials/first-dag.md, read from the page as a reader reads them.

Each ```bash block is a step; an HTML comment right before it (invisible on the page) says
how a test runs it: ``<!-- tutorial-test: KIND ... -->`` with KIND ``skip "why"``,
``environment`` (its ``export`` lines set the variables of every later step),
``background until "TEXT"`` (started and left running once TEXT is printed), ``until
"TEXT"`` (run again until its output holds TEXT), or no comment (run once, must exit 0).
A comment that is not followed by a block is a step of its own that the test performs as a
person would (``the person's verdict on the page``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "tutorials" / "first-dag.md"
ANNOTATION = re.compile(r"^<!-- tutorial-test: (?P<kind>[a-z' ]+?)(?: \"(?P<text>[^\"]*)\")? -->$")


@dataclass(frozen=True)
class Step:
    """One thing the reader does, in page order."""

    kind: str
    """``run``, ``skip``, ``environment``, ``background until``, ``until`` or a person's act."""
    code: str = ""
    """The block's commands ('' for a person's act)."""
    text: str = ""
    """The reason to skip, or the text to wait for."""


def steps(page: Path = PAGE) -> list[Step]:
    """The page's steps in order."""
    found: list[Step] = []
    pending: tuple[str, str] | None = None
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        match = ANNOTATION.match(line)
        if match:
            if pending is not None:
                found.append(Step(pending[0], text=pending[1]))
            pending = (match["kind"], match["text"] or "")
        elif line == "```bash":
            end = lines.index("```", index + 1)
            kind, text = pending if pending is not None else ("run", "")
            found.append(Step(kind, "\n".join(lines[index + 1 : end]), text))
            pending, index = None, end
        elif line.strip() and pending is not None and not line.startswith("<!--"):
            found.append(Step(pending[0], text=pending[1]))
            pending = None
        index += 1
    return found


def exported(code: str) -> dict[str, str]:
    """The variables an ``environment`` block's ``export`` lines set."""
    values: dict[str, str] = {}
    for line in code.splitlines():
        words = shlex.split(line)
        if words[:1] == ["export"]:
            for word in words[1:]:
                name, _, value = word.partition("=")
                values[name] = value
    return values
