"""What a handler hands back to its Celery task: the next hop, a retry, or nothing."""

from __future__ import annotations

from dataclasses import dataclass

from workers.fleet.queues import TaskName


@dataclass(frozen=True, slots=True)
class Hop:
    """The next task to enqueue."""

    task: TaskName
    args: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RetryLater:
    """Run this task again after ``delay_s``; always far below the visibility timeout.

    ``counted=False`` marks a wait, not a failure (another worker holds the review's
    Stage 2 claim): the guard takes that try back, so waiting never dead-letters a good
    review. Waits stay bounded by the claim's TTL (the Stage 2 hard limit): the claim is
    released when its holder ends, or expires, and the next try takes it.
    """

    delay_s: float
    error: str
    counted: bool = True


Outcome = Hop | RetryLater | None

CLAIM_WAIT = RetryLater(5.0, "another worker holds this review's Stage 2 claim", counted=False)
"""The answer to a delivery of a review whose Ceiling another worker is running."""
