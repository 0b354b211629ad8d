"""The held-out rule: a quarter of every public benchmark is never looked at.

An item is held out when the sha256 hex digest of ``"<benchmark>:<item_id>"`` begins with
0, 1, 2 or 3. Loaders call :func:`is_held_out` before they read an item's content, so a
held-out item is never built, printed, tuned on or tested on; it only shows up as a count.
Tuning the engine uses the other three quarters; the held-out quarter is kept for a final,
honest measurement by whoever owns the release.
"""

from __future__ import annotations

import hashlib

#: First hex digits of the held-out quarter.
HELD_OUT_PREFIXES = frozenset("0123")


def is_held_out(benchmark: str, item_id: str) -> bool:
    """Whether ``item_id`` of ``benchmark`` belongs to the held-out quarter."""
    digest = hashlib.sha256(f"{benchmark}:{item_id}".encode()).hexdigest()
    return digest[0] in HELD_OUT_PREFIXES
