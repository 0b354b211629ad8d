"""``pypi-readme``: the project descriptions of the installed distributions, as published.

Every distribution installed beside the engine (its dependencies and dev tools) carries
its maintainers' long description (README, changelog) in its ``METADATA``: real prose
and markdown that nobody on this project wrote, each a good output (expect accept) for
the task of writing that package's description. The id is the distribution's normalised
name; this project's own description is left out. Markdown descriptions are reviewed as
``markdown``, reStructuredText and plain ones as ``text``. Which distributions (and
versions) are read is the environment's: ``pip freeze`` says.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path

from bench.public.case import Loaded, add_good
from bench.public.heldout import is_held_out

BENCHMARK = "pypi-readme"
#: This project's own description: written here, so it measures nothing.
OWN = "windags-evaluator"
#: Descriptions shorter than this are a title or a link, not prose to review.
MIN_CHARS = 200
#: The folders a distribution's metadata lives in (wheels' and setuptools').
METADATA_FOLDERS = frozenset({"dist-info", "egg-info"})


def normalised(name: str) -> str:
    """PEP 503 normalisation: ``typing_extensions`` is ``typing-extensions``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed() -> dict[str, Path]:
    """Each installed distribution's metadata folder, by normalised name, in path order.

    The name comes from the folder's name (``typing_extensions-4.16.0.dist-info``, as
    ``importlib.metadata`` reads it too), so a held-out distribution's ``METADATA``, which
    holds its description, is never opened. The first folder of a name wins, as in imports.
    """
    found: dict[str, Path] = {}
    for entry in sys.path:
        root = Path(entry or ".")
        if not root.is_dir():
            continue
        for folder in sorted(root.iterdir()):
            stem, _, suffix = folder.name.rpartition(".")
            if suffix in METADATA_FOLDERS and folder.is_dir():
                found.setdefault(normalised(stem.partition("-")[0]), folder)
    found.pop(OWN, None)
    return found


def load(limit: int | None = None) -> Loaded:
    """Good cases from the installed distributions' descriptions, in name order."""
    loaded = Loaded(BENCHMARK)
    for name, folder in sorted(installed().items()):
        if is_held_out(BENCHMARK, name):
            loaded.held_out += 1
            continue
        if limit is not None and len(loaded.cases) >= limit:
            break
        meta = importlib.metadata.PathDistribution(folder).metadata.json
        body = str(meta.get("description", ""))
        content_type = str(meta.get("description_content_type", ""))
        add_good(
            loaded,
            name,
            body,
            kind="markdown" if "markdown" in content_type else "text",
            skill="readme-writer",
            task=f"Write the project description (README) of the Python package {name}.",
            min_chars=MIN_CHARS,
        )
    return loaded
