"""The cycle collector in a long-running worker: boot frozen, a young generation sized for it.

Measured with ``gc.callbacks`` in the Stage 1 worker of ``bench.stage1_io`` (gevent pool,
100 reviews in flight): about 250 000 container objects exist once a worker has booted
and built its collaborators (modules, classes, pydantic and SDK schemas), and every full
collection walked all of them again: 5 to 8 collections of 100-170 ms while 900 reviews
ran, with the young collections over a fifth of the worker's CPU. None of those objects
ever becomes garbage.

- ``gc.freeze()`` moves everything alive at boot to the permanent generation, which the
  collector never walks. Reference counting still frees those objects as usual; only a
  cycle among them would never be collected, and boot makes none that dies.
- A hundred concurrent tasks allocate fast and hold what they allocate for the length
  of a model call, so at the default young threshold (700) a collection ran every couple
  of reviews, found its objects alive and promoted them to be walked again by the older
  generations. At ``YOUNG_THRESHOLD`` most of them are freed by reference counting before
  a collection sees them; the cyclic garbage waits a little longer (a few MB at most).
"""

from __future__ import annotations

import gc

#: Allocations (net, of container objects) between two young collections.
YOUNG_THRESHOLD = 10_000


def settle_after_boot() -> int:
    """Collect boot's garbage, freeze what is left, widen the young generation.

    Call once, after the worker has imported its code and built its collaborators and
    before it runs tasks. Returns how many objects were frozen.
    """
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
    return gc.get_freeze_count()
