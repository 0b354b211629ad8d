"""Real text no one here wrote, for measuring how often the self-consistency checks trip.

Three sources, each read only outside its benchmark's held-out quarter
(``bench/public/heldout.py``) and split into a dev half (looked at, tuned on) and a test
half (only counted): an item is in the dev half when
``int(sha256(f"{benchmark}:{item_id}:half").hexdigest(), 16) % 2 == 0``.

- ``halueval-qa`` / ``-summarization`` / ``-dialogue``: the RIGHT answer, summary or
  response of every tunable line (``bench.public.halueval.lines`` skips held-out lines
  before parsing them).
- ``cpython-docstrings``: every docstring (module, class, function) of the interpreter's
  tunable ``Lib/*.py`` modules; the item is the module (``cpython-stdlib``'s id).
- ``site-packages-docstrings``: every docstring of the installed third-party modules
  (``site-packages``' items), a larger body of the same kind of prose as CPython's.
- ``pypi-readme``: the long description of every installed distribution whose name is
  tunable; the name comes from the ``*.dist-info`` folder, so a held-out distribution's
  metadata is never opened.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.public import halueval
from bench.public.cpython_stdlib import BENCHMARK as STDLIB
from bench.public.cpython_stdlib import stdlib_dir
from bench.public.heldout import is_held_out
from bench.public.pypi_readmes import BENCHMARK as README
from bench.public.pypi_readmes import MIN_CHARS, OWN, normalised
from bench.public.site_packages import BENCHMARK as SITE
from bench.public.site_packages import site_dir

DOCSTRINGS = "cpython-docstrings"
SITE_DOCSTRINGS = "site-packages-docstrings"
SOURCES = (*halueval.LAYOUTS, DOCSTRINGS, SITE_DOCSTRINGS, README)


@dataclass(frozen=True, slots=True)
class Text:
    """One text to check: where it comes from, which half it is in, how it is written."""

    source: str
    item_id: str
    dev: bool
    markdown: bool
    content: str


def in_dev_half(benchmark: str, item_id: str) -> bool:
    """Whether a tunable item is in the dev half (the other half is only reported)."""
    digest = hashlib.sha256(f"{benchmark}:{item_id}:half".encode()).hexdigest()
    return int(digest, 16) % 2 == 0


def texts(source: str, *, dev_only: bool) -> Iterator[Text]:
    """Every text of ``source`` (dev half only when ``dev_only``)."""
    if source in halueval.LAYOUTS:
        yield from _halueval(source, dev_only)
    elif source == DOCSTRINGS:
        yield from _docstrings(STDLIB, stdlib_dir(), "*.py", dev_only)
    elif source == SITE_DOCSTRINGS:
        yield from _docstrings(SITE, site_dir(), "**/*.py", dev_only)
    elif source == README:
        yield from _readmes(dev_only)
    else:
        raise ValueError(f"unknown source {source!r}; known: {', '.join(SOURCES)}")


def _halueval(benchmark: str, dev_only: bool) -> Iterator[Text]:
    field = halueval.LAYOUTS[benchmark].right
    for index, record in halueval.lines(benchmark):
        dev = in_dev_half(benchmark, str(index))
        if dev or not dev_only:
            yield Text(benchmark, str(index), dev, False, str(record[field]).strip())


def _docstrings(benchmark: str, root: Path, pattern: str, dev_only: bool) -> Iterator[Text]:
    source = DOCSTRINGS if benchmark == STDLIB else SITE_DOCSTRINGS
    for path in sorted(root.glob(pattern)):
        item_id = str(path.relative_to(root))
        if path.name.startswith("__editable__") or is_held_out(benchmark, item_id):
            continue
        dev = in_dev_half(benchmark, item_id)
        if dev_only and not dev:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    yield Text(source, item_id, dev, False, doc)


def _readmes(dev_only: bool) -> Iterator[Text]:
    for name in sorted(_distribution_names()):
        if name == OWN or is_held_out(README, name):
            continue
        dev = in_dev_half(README, name)
        if dev_only and not dev:
            continue
        try:
            meta = importlib.metadata.metadata(name).json
        except importlib.metadata.PackageNotFoundError:
            continue
        body = str(meta.get("description", ""))
        if len(body) >= MIN_CHARS:
            markdown = "markdown" in str(meta.get("description_content_type", ""))
            yield Text(README, name, dev, markdown, body)


def _distribution_names() -> set[str]:
    """Normalised names of the installed distributions, from their folders' names only."""
    names: set[str] = set()
    for entry in sys.path:
        folder = Path(entry or ".")
        if not folder.is_dir():
            continue
        for info in folder.glob("*.dist-info"):
            names.add(normalised(info.name.removesuffix(".dist-info").split("-")[0]))
    return names
