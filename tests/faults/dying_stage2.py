"""A Stage 2 worker that SIGKILLs itself between a review's judgement and its entry.

``celery -A tests.faults.dying_stage2 worker -Q stage2 ...``: the fleet's own worker
(``workers.fleet.worker``), except that publishing a result Stage 2 judged kills the
process the moment it starts: after the round trip that kept the Ceiling's report,
released the claim and recorded the labels, before the entry's own. What a kill -9 (an
OOM, a lost node) leaves at the instant that matters most to a paid judgement.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from celery import Celery

from workers.fleet import worker
from workers.results.stream import ResultStream

_publish_result = ResultStream.publish_result


def _dying(self: ResultStream, result: Any, **kwargs: Any) -> Any:
    if result.stage2 is not None:
        os.kill(os.getpid(), signal.SIGKILL)
    return _publish_result(self, result, **kwargs)


ResultStream.publish_result = _dying  # type: ignore[method-assign]


def __getattr__(name: str) -> Celery:
    """``app``, as ``workers.fleet.worker`` builds it."""
    if name == "app":
        return worker.boot()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
