"""An outage interrupts a try; it never fails one (issue 22, item 3).

A connection fault of Redis (the broker's or the state's) met while a task runs is not the
task's doing. Counted as a failed try, it dead-lettered reviews that three Redis restarts
each caught mid-Ceiling under the threads pool, where a running task outlives its worker's
connection. So the handlers' guard lets such a fault through uncounted
(``workers/fleet/guard.py``), the task raises ``Interrupted``, and its message goes back
marked as a replay of the try it interrupted (``workers/fleet/replay.py``), as a live
worker's hand-back does. The next delivery counts no new try, unless the message was
handed back more than ``max_task_replays`` times: a try that breaks its own connection
every time is no outage, and is dead-lettered as any poison is.

Where the worker's connection died too, its channel has handed the delivery back already,
and the reject is dropped (``recovery.disowned``). Where Redis refuses the reject, the
delivery stays with the channel, which hands it back when it closes.
"""

from __future__ import annotations

from typing import Any

import kombu.exceptions
import redis
from celery.exceptions import Reject
from celery.worker.request import Request

from workers.fleet import recovery

__all__ = ["CONNECTION_FAULTS", "Interrupted", "InterruptibleRequest"]

#: Faults of the connection to Redis (broker, streams): retrying later may succeed.
CONNECTION_FAULTS: tuple[type[BaseException], ...] = (
    redis.ConnectionError,
    redis.TimeoutError,
    kombu.exceptions.OperationalError,
    ConnectionError,
)


class Interrupted(Reject):  # type: ignore[misc]  # celery ships no type hints
    """Raised by a task that an outage cut off: its message goes back as a replay."""

    def __init__(self, reason: object = None, requeue: bool = True) -> None:
        """Requeue, always: the arguments are Reject's, so that a pool child can pickle it."""
        super().__init__(reason, requeue)


class InterruptibleRequest(Request):  # type: ignore[misc]  # celery ships no type hints
    """Celery's request, whose ``Interrupted`` task's requeue marks a replay.

    Runs where the worker holds the message (a prefork parent, or the task's own process).
    """

    def on_failure(
        self, exc_info: Any, send_failed_event: bool = True, return_ok: bool = False
    ) -> Any:
        """Celery's; the channel is told first that an interrupted try's reject is a replay."""
        exc = exc_info.exception
        exc = getattr(exc, "exc", exc)  # billiard's ExceptionWithTraceback wraps it
        message = self._message
        if isinstance(exc, Interrupted) and not self.acknowledged and message.channel is not None:
            recovery.interrupted(message.channel.qos, message.delivery_tag)
        return super().on_failure(
            exc_info, send_failed_event=send_failed_event, return_ok=return_ok
        )
