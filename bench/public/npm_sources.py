"""TypeScript as people write it: the sources that a few npm packages publish beside their build.

The TypeScript compiler's own declaration files (``typescript/lib``) are one team's
generated style. These packages ship their hand-written ``.ts`` and ``.tsx`` sources (and
hand-written declarations), each by its own authors, none by this project:

- ``rxjs@7.8.2``: ``src/``, operators and schedulers;
- ``@tanstack/query-core@5.108.4`` and ``@tanstack/react-query@5.108.4``: ``src/``,
  with React components in ``.tsx``;
- ``zod@4.6.7``: ``src/``, heavy generic types;
- ``type-fest@5.10.0``: hand-written declaration files (conditional and mapped types);
- ``ts-pattern@5.9.2``: declarations of a pattern-matching library.

Each is fetched once by exact version with the ordinary client (``npm pack``: the
published tarball, no dependencies, nothing run) and unpacked into the bench cache, where
``code_corpus`` finds its TypeScript files. Only ``.ts``/``.tsx`` files are taken from
here: the packages' built JavaScript is their compiler's output, not anyone's writing.
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from bench.public.archives import cache_dir

PACKAGES = (
    "rxjs@7.8.2",
    "@tanstack/query-core@5.108.4",
    "@tanstack/react-query@5.108.4",
    "zod@4.6.7",
    "type-fest@5.10.0",
    "ts-pattern@5.9.2",
)


def sources_dir() -> Path:
    """Where the packages are unpacked, one folder per package and version."""
    return cache_dir() / "npm-sources"


def _folder(spec: str) -> Path:
    return sources_dir() / spec.lstrip("@").replace("/", "-")


def fetch_sources() -> list[Path]:
    """Every package of ``PACKAGES`` unpacked (fetched the first time); those to be had."""
    found = []
    for spec in PACKAGES:
        folder = _folder(spec)
        if not folder.is_dir() and not _unpack(spec, folder):
            continue
        found.append(folder)
    return found


def npm_pack(spec: str, into: Path, *, timeout_s: float) -> tuple[Path | None, str] | None:
    """``npm pack`` of ``spec`` into ``into``: the tarball and what npm said on stderr.

    The tarball is None when npm made none; the whole answer is None without npm.
    """
    npm = shutil.which("npm")
    if npm is None:
        return None
    done = subprocess.run(
        [npm, "pack", "--loglevel", "error", "--pack-destination", str(into), spec],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        cwd=into,
    )
    tarballs = sorted(into.glob("*.tgz"))
    return (tarballs[0] if done.returncode == 0 and tarballs else None), done.stderr


def _unpack(spec: str, folder: Path) -> bool:
    sources_dir().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=sources_dir()) as scratch:
        packed = npm_pack(spec, Path(scratch), timeout_s=600)
        if packed is None or packed[0] is None:
            return False
        unpacked = Path(scratch) / "unpacked"
        with tarfile.open(packed[0]) as tarred:
            tarred.extractall(unpacked, filter="data")
        # A rename, so a concurrent run never reads a half-unpacked package.
        unpacked.rename(folder)
    return True
