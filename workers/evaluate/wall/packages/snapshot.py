"""The shipped snapshot of the index's project names, read once per process on first use.

The files and their layout are ``snapshot_format``'s; ``snapshot_build`` regenerates them.
Nothing is read at import: a review whose output names no package pays nothing.
"""

from __future__ import annotations

import json
import lzma
import sys
from array import array
from bisect import bisect_left
from collections import defaultdict
from functools import cache

from workers.evaluate.wall.packages import snapshot_format as fmt


@cache
def _digests() -> array[int]:
    values = array("I")
    if values.itemsize != fmt.DIGEST_BYTES:  # pragma: no cover - every platform CPython runs on
        values = array("L")
    values.frombytes(fmt.from_planes(lzma.decompress(fmt.NAMES_FILE.read_bytes())))
    if sys.byteorder != "little":  # pragma: no cover
        values.byteswap()
    return values


def is_listed(normal_name: str) -> bool:
    """Whether the index listed ``normal_name`` (a PEP 503 normal form) on the snapshot's date.

    Never False for a listed name; True for about one unlisted name in 4,800.
    """
    values = _digests()
    wanted = fmt.digest(normal_name)
    at = bisect_left(values, wanted)
    return at < len(values) and values[at] == wanted


@cache
def popular() -> tuple[str, ...]:
    """The most downloaded projects, most downloaded first."""
    return tuple(fmt.POPULAR_FILE.read_text(encoding="utf-8").split())


@cache
def popular_rank() -> dict[str, int]:
    """A popular project's place (1 = the most downloaded)."""
    return {name: rank for rank, name in enumerate(popular(), 1)}


@cache
def _imports() -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for line in fmt.IMPORTS_FILE.read_text(encoding="utf-8").splitlines():
        module, dists, _ = line.split("\t")
        table[module] = tuple(dists.split())
    return table


def distributions_of(module: str) -> tuple[str, ...]:
    """The distributions known to ship top-level ``module`` under another name (``yaml``)."""
    return _imports().get(module, ())


@cache
def _modules_by_distribution() -> dict[str, frozenset[str]]:
    reverse: dict[str, set[str]] = defaultdict(set)
    for module, dists in _imports().items():
        for dist in dists:
            reverse[dist].add(module)
    return {dist: frozenset(modules) for dist, modules in reverse.items()}


def modules_of(distribution: str) -> frozenset[str]:
    """The top-level modules a distribution is known to ship under other names."""
    return _modules_by_distribution().get(distribution, frozenset())


@cache
def _stdlib() -> frozenset[str]:
    shipped = fmt.STDLIB_FILE.read_text(encoding="utf-8").split()
    return frozenset(shipped) | sys.stdlib_module_names


def is_stdlib(module: str) -> bool:
    """Whether top-level ``module`` is in the standard library of some Python version."""
    return module in sys.stdlib_module_names or module in _stdlib()


@cache
def snapshot_date() -> str:
    """The date of the listing the snapshot was built from (ISO 8601)."""
    return str(json.loads(fmt.META_FILE.read_text(encoding="utf-8"))["date"])
