"""Real inputs for the engine tests: the running interpreter's own standard library.

Only modules outside the held-out quarter of the ``cpython-stdlib`` benchmark are read
(``bench/public/heldout.py``); asking for a held-out one is an error, not a skip.
"""

from __future__ import annotations

import ast
import sysconfig
from collections.abc import Iterator
from pathlib import Path

from bench.public.heldout import is_held_out

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def stdlib_source(name: str) -> str:
    """The source of ``Lib/<name>`` (e.g. ``"cmd.py"``), which must be tunable."""
    if is_held_out("cpython-stdlib", name):
        raise ValueError(f"{name} is in the held-out quarter of cpython-stdlib")
    return (STDLIB / name).read_text(encoding="utf-8")


def tunable_stdlib_trees() -> Iterator[tuple[str, ast.Module]]:
    """(file name, tree) of every tunable ``Lib/*.py`` module that parses here."""
    for path in sorted(STDLIB.glob("*.py")):
        if is_held_out("cpython-stdlib", path.name):
            continue
        try:
            yield path.name, ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
