"""A launcher in a process of its own, for the tests that SIGKILL it.

``python -m tests.faults.launcher_process REDIS_URL [LOG_DIR]``: starts a ``LocalFleet``
(the fleet environment comes from this process's ``WINDAGS_*`` variables), waits until
every worker answers, prints one JSON line and waits to be killed. With a ``LOG_DIR`` the
fleet uses the Redis at ``REDIS_URL``; without, it makes its own folders and starts a
private redis-server when none answers there, as ``windags-eval fleet`` does. The line
holds the workers' pids by queue, the private server's pid, and the folders it made.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

from workers.local.launcher import LocalFleet


def main(redis_url: str, log_dir: str | None = None) -> None:
    """Run the fleet until this process is killed."""
    if log_dir is None:
        fleet = LocalFleet(redis_url, start_private_redis=True)
    else:
        fleet = LocalFleet(redis_url, start_private_redis=False, log_dir=Path(log_dir))
    with fleet:
        fleet.wait_ready(timeout_s=90)
        private = fleet.private
        line = {
            "workers": {queue.value: process.pid for queue, process in fleet.workers.items()},
            "redis": private.process.pid if private and private.process else None,
            "folders": [str(fleet.log_dir)] + ([str(private.directory)] if private else []),
        }
        print(json.dumps(line), flush=True)
        while True:
            signal.pause()


if __name__ == "__main__":
    main(*sys.argv[1:3])
