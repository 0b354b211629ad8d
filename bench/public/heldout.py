"""The held-out rule, and the dev/test halves of what is left.

An item is held out when the sha256 hex digest of ``"<benchmark>:<item_id>"`` begins with
0, 1, 2 or 3. Loaders call :func:`is_held_out` before they read an item's content, so a
held-out item is never built, printed, tuned on or tested on; it only shows up as a count.
Tuning the engine uses the other three quarters; the held-out quarter is kept for a final,
honest measurement by whoever owns the release.

The tunable items split again in two by another hash of the id (:func:`half_of`): the dev
half is the one anyone may look at and tune on; the test half is read only to report. A
figure measured on the dev half is not a result.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum

#: First hex digits of the held-out quarter.
HELD_OUT_PREFIXES = frozenset("0123")


class Half(StrEnum):
    """Which half of the tunable items a case belongs to."""

    DEV = "dev"
    """Looked at and tuned on."""
    TEST = "test"
    """Read only to report."""


def is_held_out(benchmark: str, item_id: str) -> bool:
    """Whether ``item_id`` of ``benchmark`` belongs to the held-out quarter."""
    digest = hashlib.sha256(f"{benchmark}:{item_id}".encode()).hexdigest()
    return digest[0] in HELD_OUT_PREFIXES


def _rank(benchmark: str, item_id: str, salt: str) -> int:
    return int(hashlib.sha256(f"{benchmark}:{item_id}:{salt}".encode()).hexdigest(), 16)


def half_of(benchmark: str, item_id: str) -> Half:
    """The half of the tunable items ``item_id`` falls in (even hash: dev)."""
    return Half.DEV if _rank(benchmark, item_id, "half") % 2 == 0 else Half.TEST


def sample_rank(benchmark: str, item_id: str) -> int:
    """An item's place in a budgeted sample: the smallest ranks are taken first.

    Independent of :func:`half_of`, so a sample keeps both halves in proportion.
    """
    return _rank(benchmark, item_id, "sample")
