"""Real inputs for the engine tests: the running interpreter's own standard library.

Only modules outside the held-out quarter of the ``cpython-stdlib`` benchmark are read
(``bench/public/heldout.py``); asking for a held-out one is an error, not a skip.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

from bench.public.heldout import is_held_out

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def stdlib_source(name: str) -> str:
    """The source of ``Lib/<name>`` (e.g. ``"cmd.py"``), which must be tunable."""
    if is_held_out("cpython-stdlib", name):
        raise ValueError(f"{name} is in the held-out quarter of cpython-stdlib")
    return (STDLIB / name).read_text(encoding="utf-8")
