"""Package names as the index spells them: validated, then normalised (PEP 503, PEP 508).

A package name in a node's output is hostile data: it goes into a Redis key and into the
path of an index URL. Only a name PEP 508 allows (letters, digits, ``-``, ``_``, ``.``,
starting and ending with a letter or digit) is ever normalised; anything else is no
package name at all, and is never looked up.
"""

from __future__ import annotations

import re

#: PEP 508's name grammar; the index refuses any other spelling.
_VALID = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_RUNS = re.compile(r"[-_.]+")
#: Longer than any project the index lists (its longest name has well under 100 characters).
MAX_NAME_CHARS = 100


def is_valid_name(name: str) -> bool:
    """Whether ``name`` is a project name PEP 508 allows (and not absurdly long)."""
    return len(name) <= MAX_NAME_CHARS and _VALID.match(name) is not None


def normalise(name: str) -> str:
    """PEP 503's normal form: ``Typing_Extensions`` is ``typing-extensions``."""
    return _RUNS.sub("-", name).lower()


def checked_name(name: str) -> str | None:
    """The normal form of a valid name, or None when ``name`` is not a project name."""
    return normalise(name) if is_valid_name(name) else None
