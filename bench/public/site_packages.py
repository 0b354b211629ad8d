"""``site-packages``: the Python modules of the installed third-party distributions.

Released, reviewed, widely used code that nobody on this project wrote (the engine's own
dependencies and dev tools: celery, pydantic, rich, sqlglot, pygments...): every module
is a good output (expect accept). The id is the module's path under ``site-packages``.
The sample is spread over all distributions: modules are taken in the order of the
sha256 of their id, not by name. This project's own packages are left out. Which
distributions (and versions) are read is the environment's: ``pip freeze`` says.
"""

from __future__ import annotations

import hashlib
import sysconfig
from pathlib import Path

from bench.public.case import Loaded, add_good
from bench.public.heldout import is_held_out

BENCHMARK = "site-packages"
#: Modules this short (an empty ``__init__``) say nothing to review.
MIN_CHARS = 50


def site_dir() -> Path:
    """Where the running interpreter's third-party pure-Python packages live."""
    return Path(sysconfig.get_paths()["purelib"])


def _order(item_id: str) -> str:
    return hashlib.sha256(item_id.encode()).hexdigest()


def load(limit: int | None = None) -> Loaded:
    """Good cases from ``site-packages/**/*.py``, at most ``limit`` of them."""
    loaded = Loaded(BENCHMARK)
    root = site_dir()
    paths = (p for p in root.rglob("*.py") if not p.name.startswith("__editable__"))
    ids = sorted((str(p.relative_to(root)) for p in paths), key=_order)
    for item_id in ids:
        if is_held_out(BENCHMARK, item_id):
            loaded.held_out += 1
            continue
        if limit is not None and len(loaded.cases) >= limit:
            break
        source = (root / item_id).read_text(encoding="utf-8", errors="replace")
        add_good(
            loaded,
            item_id,
            source,
            kind="python",
            skill="python-module-writer",
            min_chars=MIN_CHARS,
        )
    return loaded
