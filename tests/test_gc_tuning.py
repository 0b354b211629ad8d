"""The worker's collector settings after boot (``workers/fleet/gc_tuning.py``).

Run in a child process: freezing the test runner's heap would outlive the test.
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import gc, json
from workers.fleet import gc_tuning
before = gc.get_freeze_count()
frozen = gc_tuning.settle_after_boot()
print(json.dumps({"before": before, "frozen": frozen, "count": gc.get_freeze_count(),
                  "threshold": gc.get_threshold(), "young": gc_tuning.YOUNG_THRESHOLD}))
"""


def test_settle_freezes_boot_objects_and_widens_the_young_generation() -> None:
    """Everything alive is frozen, and only the young threshold changes."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, timeout=60
    )
    got = json.loads(out.stdout)
    assert got["before"] == 0
    assert got["frozen"] == got["count"] > 1000  # modules, classes, pydantic schemas
    assert got["threshold"] == [got["young"], 10, 10]
