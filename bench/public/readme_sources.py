"""``doc-blocks`` widened: the READMEs of the most-used npm and PyPI packages, fetched once.

The documentation installed on this machine holds too few fenced blocks of some languages
to show why the engine flags one: its dev half had 27 TypeScript blocks. Package READMEs
are where people write the ```` ```ts ````, ```` ```python ````, ```` ```json ```` and
```` ```bash ```` blocks a chat model learned from. ``readme_packages.txt`` pins which
packages and versions (the rule that chose them is at its top), so the corpus is the same
on every machine:

- npm: ``npm pack <name>@<version>`` (the published tarball; no dependency is fetched and
  nothing is run), and only its top-level ``README.md`` is kept;
- PyPI: ``pip download --no-deps`` of the version's pure-Python wheel (``--platform any``,
  so a project without one answers "no" at once instead of pulling a large binary), and
  only its ``METADATA`` description is kept, when it is markdown.

Fetching is a separate, cached step (``python -m bench.public.readme_sources``; the code
figures run it too, and it costs nothing once done): each README is written to the bench
cache, a package that has none (or cannot be had) leaves an empty file so that it is not
asked for again. Nothing fetched is committed. The id of a document is
``<registry>:<name>``; a caller passes the held-out rule so that a held-out package is
never fetched.
"""

from __future__ import annotations

import email.parser
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bench.public.archives import cache_dir, pip_download
from bench.public.npm_sources import npm_pack

LISTED = Path(__file__).with_name("readme_packages.txt")
#: Fetches at once: each is mostly waiting on the registry, not on these two cores.
PARALLEL = 8
_README_NAMES = ("readme.md", "readme.markdown", "readme")
#: The registries' "no" (no such version, no pure wheel), told apart from a failed fetch.
_NPM_NO = ("code E404", "code ETARGET")
_PIP_NO = "No matching distribution"


@dataclass(frozen=True)
class Package:
    """One pinned package: its registry (``npm`` or ``pypi``), name and version."""

    registry: str
    name: str
    version: str

    @property
    def item_id(self) -> str:
        """The document's id in ``doc-blocks``."""
        return f"{self.registry}:{self.name}"

    @property
    def cached(self) -> Path:
        """Where its README is kept (empty: it has none to read)."""
        safe = self.name.lstrip("@").replace("/", "__")
        return readmes_dir() / self.registry / f"{safe}@{self.version}.md"


def readmes_dir() -> Path:
    """The cache folder of the fetched READMEs."""
    return cache_dir() / "readmes"


def packages() -> list[Package]:
    """The pinned list, in its order."""
    found = []
    for line in LISTED.read_text().splitlines():
        if line and not line.startswith("#"):
            registry, name, version = line.split()
            found.append(Package(registry, name, version))
    return found


def fetch_readmes(wanted: Callable[[str], bool]) -> dict[str, int]:
    """Fetch the README of every listed package whose id is ``wanted`` and not yet cached.

    Returns how many were fetched, found cached, or had none to read.
    """
    todo = [p for p in packages() if wanted(p.item_id) and not p.cached.exists()]
    counts = {"fetched": 0, "none": 0}
    with ThreadPoolExecutor(PARALLEL) as pool:
        for text in pool.map(_fetch_one, todo):
            counts["fetched" if text else "none"] += 1
    return counts


def cached_readmes(wanted: Callable[[str], bool]) -> Iterator[tuple[str, Path]]:
    """Each wanted package's cached, non-empty README, by id (nothing is read but sizes)."""
    for package in packages():
        path = package.cached
        if wanted(package.item_id) and path.is_file() and path.stat().st_size:
            yield package.item_id, path


def _fetch_one(package: Package) -> str:
    try:
        text = _npm_readme(package) if package.registry == "npm" else _pypi_readme(package)
    except (OSError, subprocess.SubprocessError, tarfile.TarError, zipfile.BadZipFile):
        text = None
    if text is None:
        return ""  # not had this time (no client, a time-out): asked again next run
    package.cached.parent.mkdir(parents=True, exist_ok=True)
    scratch = package.cached.with_suffix(".part")
    scratch.write_text(text)
    scratch.replace(package.cached)  # a rename: a concurrent reader never sees half a file
    return text


def _npm_readme(package: Package) -> str | None:
    """The tarball's top-level README; "" when it has none or npm says no."""
    with tempfile.TemporaryDirectory() as scratch:
        packed = npm_pack(f"{package.name}@{package.version}", Path(scratch), timeout_s=300)
        if packed is None:
            return None
        tarball, said = packed
        if tarball is None:
            return "" if any(no in said for no in _NPM_NO) else None
        with tarfile.open(tarball) as tarred:
            for member in tarred:
                _, _, name = member.name.partition("/")
                if "/" in name or name.lower() not in _README_NAMES or not member.isfile():
                    continue
                handle = tarred.extractfile(member)
                if handle is not None:
                    return handle.read().decode("utf-8", errors="replace")
    return ""


def _pypi_readme(package: Package) -> str | None:
    """The pure wheel's markdown description; "" when there is none to be had."""
    with tempfile.TemporaryDirectory() as scratch:
        pure = ["--only-binary", ":all:", "--platform", "any", "--python-version", "3.12"]
        spec = f"{package.name}=={package.version}"
        fetched, said = pip_download(spec, Path(scratch), pure, timeout_s=300)
        wheels = [p for p in fetched if p.suffix == ".whl"]
        if not wheels:
            return "" if _PIP_NO in said else None
        with zipfile.ZipFile(wheels[0]) as zipped:
            names = [n for n in zipped.namelist() if n.endswith(".dist-info/METADATA")]
            if not names:
                return ""
            raw = zipped.read(names[0]).decode("utf-8", errors="replace")
    meta = email.parser.Parser().parsestr(raw)
    if "markdown" not in str(meta.get("Description-Content-Type", "")).lower():
        return ""
    body = meta.get_payload() or meta.get("Description", "")
    return body if isinstance(body, str) else ""


def main() -> int:
    """Fetch every README the doc-blocks benchmark may read (the held-out ones never)."""
    from bench.public.doc_blocks import fetch

    print(fetch())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
