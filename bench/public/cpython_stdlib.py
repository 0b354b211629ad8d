"""``cpython-stdlib``: the reviewing interpreter's own ``Lib/*.py`` modules.

Real, reviewed, shipped Python: every module is a good output (expect accept). The id is
the module file name. Modules longer than the fleet's intake limit are left out (the
intake refuses them before any review) and counted.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

from bench.public.case import Loaded, add_good
from bench.public.heldout import is_held_out

BENCHMARK = "cpython-stdlib"


def stdlib_dir() -> Path:
    """The interpreter's ``Lib`` directory (pure-Python standard library)."""
    return Path(sysconfig.get_paths()["stdlib"])


def load(limit: int | None = None) -> Loaded:
    """Good cases from ``Lib/*.py``, in file-name order, at most ``limit`` of them."""
    loaded = Loaded(BENCHMARK)
    for path in sorted(stdlib_dir().glob("*.py")):
        if is_held_out(BENCHMARK, path.name):
            loaded.held_out += 1
            continue
        if limit is not None and len(loaded.cases) >= limit:
            break
        source = path.read_text(encoding="utf-8", errors="replace")
        add_good(loaded, path.name, source, kind="python", skill="python-module-writer")
    return loaded
