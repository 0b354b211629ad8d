"""A Dockerfile's first instruction: ``docker build`` refuses one that does not start FROM.

Only ``ARG`` may come before the first ``FROM`` (Dockerfile reference, "Understand how
ARG and FROM interact"); parser directives and comments are not instructions.
"""

from __future__ import annotations

import re

_INSTRUCTION = re.compile(r"^[ \t]*([A-Za-z]+)\b")


def first_non_arg_instruction(text: str) -> tuple[str, int] | None:
    """The first instruction other than ARG, with its 1-based line; None if there is none."""
    continued = False
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if continued:
            continued = stripped.endswith("\\")
            continue
        if not stripped or stripped.startswith("#"):
            continue
        continued = stripped.endswith("\\")
        word = _INSTRUCTION.match(line)
        if word is None:
            return line.strip()[:20], number
        if word.group(1).upper() != "ARG":
            return word.group(1).upper(), number
    return None


def lacks_from(text: str) -> tuple[str, int] | None:
    """What stands where FROM must be (an instruction, or the end), or None when it is FROM."""
    first = first_non_arg_instruction(text)
    if first is None:
        return "the end of the file", text.rstrip("\n").count("\n") + 1
    return None if first[0] == "FROM" else first
