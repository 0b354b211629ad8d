"""Regenerate the shipped snapshot: ``python -m workers.evaluate.wall.packages.snapshot_build``.

Reads a listing of the index's project names and the import-name sources, and rewrites
the files ``snapshot_format`` describes. Runs offline: every input is a file.

- ``--listing``: one name per line, or a TSV whose header names a ``name`` column and,
  optionally, a ``rank...`` column (the download rank: the popular names). This machine's
  environment entry ships one (``/work/.library/env/packages/pypi.tsv``).
- ``--simple DIR`` (repeatable): a PEP 503 index on disk (one folder per project): its
  projects are added to the listing (this machine's PyPI mirror is one).
- ``--pipreqs``: pipreqs' wheel (``pip download --no-deps pipreqs``), whose ``mapping``
  file pairs import names with distributions.
- ``--wheels DIR`` (repeatable): wheels whose top-level modules name what they ship.
- the running interpreter's installed distributions (``--no-installed`` leaves them out).
- ``--stdlib-list``: the ``stdlib-list`` wheel, whose lists name each Python version's
  standard library (the running interpreter's own is added).

A pair joins the mapping only when its distribution is in the listing.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import lzma
import sys
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from importlib.metadata import packages_distributions
from pathlib import Path

from workers.evaluate.wall.packages import snapshot_format as fmt
from workers.evaluate.wall.packages.names import checked_name, normalise

#: How many of the most downloaded projects "did you mean" may suggest.
POPULAR = 15_000


def read_listing(path: Path) -> tuple[set[str], list[str]]:
    """Normalised names, and the popular ones in rank order (when the listing ranks them)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t") if lines and "\t" in lines[0] else None
    names: set[str] = set()
    ranked: list[tuple[int, str]] = []
    rank_column = next((i for i, h in enumerate(header or ()) if h.startswith("rank")), None)
    for line in lines[1:] if header else lines:
        cells = line.split("\t")
        name = checked_name(cells[0].strip())
        if name is None:
            continue
        names.add(name)
        if rank_column is not None and len(cells) > rank_column and cells[rank_column].isdigit():
            ranked.append((int(cells[rank_column]), name))
    return names, [name for _, name in sorted(ranked)[:POPULAR]]


def simple_projects(root: Path) -> set[str]:
    """The projects of a PEP 503 index on disk: its folders."""
    return {n for d in root.iterdir() if d.is_dir() and (n := checked_name(d.name))}


def pipreqs_pairs(wheel: Path) -> Iterator[tuple[str, str]]:
    """(import name, distribution) from pipreqs' ``mapping`` (``yaml:PyYAML``)."""
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read("pipreqs/mapping").decode("utf-8")
    for line in text.splitlines():
        module, _, dist = line.strip().partition(":")
        if module.isidentifier() and dist:
            yield module, dist


def _top_level(path: str) -> str | None:
    first, _, rest = path.partition("/")
    if not rest:  # a module at the top: ``six.py``, ``_cffi_backend.cpython-311-...so``
        stem = first.split(".", 1)[0]
        return stem if first.endswith((".py", ".so", ".pyd")) and stem.isidentifier() else None
    if first.endswith((".dist-info", ".data")) or not first.isidentifier():
        return None
    return first


def wheel_pairs(wheel: Path) -> Iterator[tuple[str, str]]:
    """(top-level module, distribution) from a wheel's RECORD."""
    dist = wheel.name.split("-", 1)[0]
    with zipfile.ZipFile(wheel) as archive:
        record = next((n for n in archive.namelist() if n.endswith(".dist-info/RECORD")), None)
        if record is None:
            return
        rows = csv.reader(io.StringIO(archive.read(record).decode("utf-8", "replace")))
        for top in {_top_level(row[0]) for row in rows if row}:
            if top is not None:
                yield top, dist


def stdlib_names(wheel: Path) -> set[str]:
    """Top-level standard-library modules of every version ``stdlib-list`` lists, and ours."""
    names = set(sys.stdlib_module_names)
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.startswith("stdlib_list/lists/") and member.endswith(".txt"):
                text = archive.read(member).decode("utf-8")
                names.update(line.split(".", 1)[0] for line in text.split() if line)
    return {n for n in names if n.isidentifier()}


def installed_pairs() -> Iterator[tuple[str, str]]:
    """(top-level module, distribution) of the running interpreter's distributions."""
    for module, dists in packages_distributions().items():
        if module.isidentifier():
            yield from ((module, d) for d in dists)


def build_mapping(
    sources: Iterable[tuple[str, Iterable[tuple[str, str]]]], listed: set[str]
) -> list[str]:
    """TSV lines: import, distributions, sources; only names that differ, dists listed."""
    dists: dict[str, set[str]] = defaultdict(set)
    seen_in: dict[str, set[str]] = defaultdict(set)
    for source, pairs in sources:
        for module, dist in pairs:
            name = normalise(dist)
            if name in listed and normalise(module) != name:
                dists[module].add(name)
                seen_in[module].add(source)
    return [
        f"{m}\t{' '.join(sorted(dists[m]))}\t{','.join(sorted(seen_in[m]))}" for m in sorted(dists)
    ]


def write(
    names: set[str],
    popular: list[str],
    mapping: list[str],
    stdlib: set[str],
    meta: dict[str, object],
) -> None:
    """Write the five files of the snapshot."""
    digests = sorted({fmt.digest(n) for n in names})
    fmt.DATA.mkdir(parents=True, exist_ok=True)
    fmt.NAMES_FILE.write_bytes(lzma.compress(fmt.to_planes(digests), preset=9))
    fmt.POPULAR_FILE.write_text("".join(f"{n}\n" for n in popular), encoding="utf-8")
    fmt.IMPORTS_FILE.write_text("".join(f"{line}\n" for line in mapping), encoding="utf-8")
    fmt.STDLIB_FILE.write_text("".join(f"{n}\n" for n in sorted(stdlib)), encoding="utf-8")
    meta = {**meta, "projects": len(names), "digests": len(digests), "popular": len(popular)}
    fmt.META_FILE.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    """Build the snapshot from the files named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listing", type=Path, required=True)
    parser.add_argument("--simple", type=Path, action="append", default=[])
    parser.add_argument("--pipreqs", type=Path, required=True)
    parser.add_argument("--wheels", type=Path, action="append", default=[])
    parser.add_argument("--stdlib-list", type=Path, required=True)
    parser.add_argument("--no-installed", action="store_true")
    parser.add_argument("--date", help="the listing's date (default: its file's, UTC)")
    args = parser.parse_args(argv)
    names, popular = read_listing(args.listing)
    for root in args.simple:
        names |= simple_projects(root)
    wheels = sorted(w for d in args.wheels for w in d.glob("*.whl"))
    sources: list[tuple[str, Iterable[tuple[str, str]]]] = [
        ("pipreqs", pipreqs_pairs(args.pipreqs)),
        ("wheel", (p for w in wheels for p in wheel_pairs(w))),
    ]
    if not args.no_installed:
        sources.append(("installed", installed_pairs()))
    mapping = build_mapping(sources, names)
    mtime = datetime.fromtimestamp(args.listing.stat().st_mtime, UTC).date().isoformat()
    meta = {
        "date": args.date or mtime,
        "listing": args.listing.name,
        "simple_indexes": len(args.simple),
        "pipreqs": args.pipreqs.name,
        "wheels": len(wheels),
        "installed": not args.no_installed,
        "imports": len(mapping),
        "stdlib_list": args.stdlib_list.name,
    }
    stdlib = stdlib_names(args.stdlib_list)
    meta["stdlib_modules"] = len(stdlib)
    write(names, popular, mapping, stdlib, meta)
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
