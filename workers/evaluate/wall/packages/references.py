"""Which packages an output uses, each resolved to what the snapshot and the mapping know.

A Python output uses what it imports; any output uses what its install commands and
requirement lines name. An import is resolved to the distributions that ship it: the
standard library needs none, the mapping knows the names that differ (``yaml`` is
PyYAML's), a namespace import may be its own distribution (``google.cloud.storage`` is
``google-cloud-storage``), and any other import may be a distribution of the same name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from schemas.request import NodeOutput, OutputKind
from workers.evaluate.parsed import ParseFailure, python_tree
from workers.evaluate.wall.packages.imports import Imported, required_imports
from workers.evaluate.wall.packages.installs import install_names
from workers.evaluate.wall.packages.names import checked_name, normalise
from workers.evaluate.wall.packages.snapshot import distributions_of, is_listed, is_stdlib

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: Outputs whose text may tell a reader what to install.
_TEXT_KINDS = (OutputKind.TEXT, OutputKind.MARKDOWN)


class Use(StrEnum):
    """How the output uses a package."""

    INSTALL = "install"
    REQUIREMENT = "requirement"
    IMPORT = "import"


@dataclass(frozen=True, slots=True)
class Reference:
    """One package the output uses."""

    use: Use
    name: str
    """The normal form looked up: the distribution named, or the import's top module."""
    line: int
    said: str
    """What the output wrote (the command, the requirement, the module)."""
    provided_by: tuple[str, ...] = ()
    """For an import: the distributions known to ship it (empty: none known)."""
    private_index: bool = False


def references(output: NodeOutput) -> list[Reference]:
    """Every package ``output`` uses, in order, the standard library left out."""
    found: list[Reference] = []
    if output.kind is OutputKind.PYTHON:
        tree = python_tree(output.content)
        if not isinstance(tree, ParseFailure):
            found.extend(_imported(i) for i in required_imports(tree) if not is_stdlib(i.top))
    if output.kind in _TEXT_KINDS or output.kind is OutputKind.PYTHON:
        for named in install_names(output.content):
            if output.kind is OutputKind.PYTHON and named.requirement:
                continue  # ``n >= 2`` in code is a comparison, not a requirement
            use = Use.REQUIREMENT if named.requirement else Use.INSTALL
            name = normalise(named.name)
            found.append(Reference(use, name, named.line, named.said, (), named.private_index))
    return found


def _imported(item: Imported) -> Reference:
    return Reference(
        Use.IMPORT, normalise(item.top), item.line, item.module, provided_by(item.module)
    )


def provided_by(module: str) -> tuple[str, ...]:
    """The distributions known to ship ``module`` (its top level, or a dotted prefix)."""
    parts = module.split(".")
    found = list(distributions_of(parts[0]))
    for end in range(1, len(parts) + 1):
        name = checked_name("-".join(parts[:end]))
        if name is not None and name not in found and is_listed(name):
            found.append(name)
    return tuple(found)


def own_names(task: str | None, texts: list[str]) -> frozenset[str]:
    """Normal forms of every word of the task and the sources: the project's own names."""
    words: set[str] = set()
    for text in (task or "", *texts):
        words.update(normalise(w.strip("._-")) for w in _WORD.findall(text))
    return frozenset(words)
