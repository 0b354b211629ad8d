"""Hallucinated package names, made the way the literature finds models make them.

Spracklen et al. (USENIX Security 2025) found most hallucinated names are plausible
compounds of real projects' words (``flask-jwt-autorefresh``) and that a share are near
misses of real names (13.4% within edit distance 2 of a real one). Both kinds are built
here from the index listing's most downloaded projects, deterministically (a hash of the
source name picks each edit and word), and each is kept only if the listing lacks it:
checked against the exact names, not the shipped snapshot's digests.

The held-out rule applies to the popular name a construction starts from
(benchmark ``pypi-popular``): held-out names are never used; the rest split into halves.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.public.heldout import Half, half_of, is_held_out
from workers.evaluate.wall.packages.names import checked_name

BENCHMARK = "pypi-popular"
LISTING = Path("/work/.library/env/packages/pypi.tsv")
_LETTERS = string.ascii_lowercase + string.digits


@dataclass(frozen=True, slots=True)
class Made:
    """One constructed name and where it came from."""

    name: str
    kind: str
    """``near-miss`` or ``compound``."""
    source: str
    """The popular name it was made from."""
    half: Half


def listing(path: Path = LISTING) -> tuple[set[str], list[str]]:
    """Every listed name, normalised, and the ranked ones in rank order."""
    names: set[str] = set()
    ranked: list[tuple[int, str]] = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        cells = line.split("\t")
        name = checked_name(cells[0])
        if name is None:
            continue
        names.add(name)
        if len(cells) > 3 and cells[3].isdigit():
            ranked.append((int(cells[3]), name))
    return names, [n for _, n in sorted(ranked)]


def _draw(seed: str, n: int) -> int:
    return int(hashlib.sha256(seed.encode()).hexdigest(), 16) % n


def _edit(name: str, seed: str) -> str:
    """One edit: delete, insert, substitute a character, or swap two neighbours."""
    op, at = _draw(f"{seed}:op", 4), _draw(f"{seed}:at", len(name))
    letter = _LETTERS[_draw(f"{seed}:letter", len(_LETTERS))]
    if op == 0 and len(name) > 2:
        return name[:at] + name[at + 1 :]
    if op == 1:
        return name[:at] + letter + name[at:]
    if op == 2:
        return name[:at] + letter + name[at + 1 :]
    at = min(at, len(name) - 2)
    return name[:at] + name[at + 1] + name[at] + name[at + 2 :]


def near_misses(popular: list[str], listed: set[str], per_name: int = 1) -> Iterator[Made]:
    """Names one or two edits from a popular one, absent from the listing."""
    for source in popular:
        if is_held_out(BENCHMARK, source):
            continue
        for k in range(per_name):
            edits = 1 + _draw(f"{source}:{k}:edits", 2)
            made = source
            for e in range(edits):
                made = _edit(made, f"{source}:{k}:{e}")
            name = checked_name(made)
            if name and name != source and name not in listed:
                yield Made(name, "near-miss", source, half_of(BENCHMARK, source))


def compounds(popular: list[str], listed: set[str], per_name: int = 1) -> Iterator[Made]:
    """A popular project's first word joined to one or two words of other popular names."""
    vocabulary = sorted({w for n in popular for w in n.split("-")[1:] if len(w) > 2})
    for source in popular:
        if is_held_out(BENCHMARK, source):
            continue
        head = source.split("-")[0]
        for k in range(per_name):
            words = [head]
            for e in range(1 + _draw(f"{source}:{k}:words", 2)):
                words.append(vocabulary[_draw(f"{source}:{k}:{e}:w", len(vocabulary))])
            name = checked_name("-".join(words))
            if name and name not in listed:
                yield Made(name, "compound", source, half_of(BENCHMARK, source))
