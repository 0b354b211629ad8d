"""A launcher in a process of its own, for the test that SIGKILLs it.

``python -m tests.faults.launcher_process REDIS_URL LOG_DIR``: starts a ``LocalFleet``
(the fleet environment comes from this process's ``WINDAGS_*`` variables), waits until
every worker answers, prints one JSON line ``{"queue": pid, ...}`` and waits to be killed.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

from workers.local.launcher import LocalFleet


def main(redis_url: str, log_dir: str) -> None:
    """Run the fleet until this process is killed."""
    fleet = LocalFleet(redis_url, start_private_redis=False, log_dir=Path(log_dir))
    with fleet:
        fleet.wait_ready(timeout_s=90)
        pids = {queue.value: process.pid for queue, process in fleet.workers.items()}
        print(json.dumps(pids), flush=True)
        while True:
            signal.pause()


if __name__ == "__main__":
    main(*sys.argv[1:3])
