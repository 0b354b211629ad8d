"""How the shipped snapshot is laid out on disk: one module, read by the loader and the builder.

- ``index-names.u32.xz``: the index's project names, each the first four bytes of the
  BLAKE2b digest of its normal form, as sorted little-endian unsigned 32-bit integers,
  stored byte plane by byte plane (all first bytes, then all second bytes...) and
  xz-compressed: sorted digests share their high bytes, which is what the planes let xz
  see. A listed name is always found (no false "absent"); a name the index lacks is taken
  for listed with odds of about one in 4,800 (a digest shared with one of 886,000 names).
- ``popular.txt``: the most downloaded projects, most downloaded first: the names "did you
  mean" may suggest.
- ``import-names.tsv``: import name, tab, the distributions that ship it (normal forms,
  space-separated), tab, where that was read; only imports whose name differs from their
  distribution's (``yaml`` -> ``pyyaml``).
- ``stdlib-names.txt``: the top-level modules of the standard library of every Python
  version from 2.6 to 3.14 (``stdlib-list``'s lists) and of the builder's interpreter: code
  written for another version imports ``annotationlib`` or ``urllib2``.
- ``snapshot.json``: the date, the sources and the counts.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

DATA = Path(__file__).parent / "data"
NAMES_FILE = DATA / "index-names.u32.xz"
POPULAR_FILE = DATA / "popular.txt"
IMPORTS_FILE = DATA / "import-names.tsv"
STDLIB_FILE = DATA / "stdlib-names.txt"
META_FILE = DATA / "snapshot.json"
DIGEST_BYTES = 4


def digest(normal_name: str) -> int:
    """The 32-bit digest a normalised name is stored as."""
    raw = hashlib.blake2b(normal_name.encode(), digest_size=DIGEST_BYTES).digest()
    return int.from_bytes(raw, "little")


def to_planes(values: list[int]) -> bytes:
    """Sorted 32-bit values as four byte planes (little-endian order within a value)."""
    packed = b"".join(v.to_bytes(DIGEST_BYTES, "little") for v in values)
    return b"".join(packed[i::DIGEST_BYTES] for i in range(DIGEST_BYTES))


def from_planes(planes: bytes) -> bytes:
    """The little-endian packed values back from their planes."""
    count, rest = divmod(len(planes), DIGEST_BYTES)
    if rest:
        raise ValueError("the snapshot's size is not a whole number of digests")
    packed = bytearray(len(planes))
    for i in range(DIGEST_BYTES):
        packed[i::DIGEST_BYTES] = planes[i * count : (i + 1) * count]
    return bytes(packed)
