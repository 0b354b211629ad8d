"""Queue and task names: the one place routing is spelled."""

from __future__ import annotations

from enum import StrEnum


class Queue(StrEnum):
    """The worker kinds, each scaled on its own."""

    STAGE1 = "stage1"
    """Floor + Wall on every node (cheap, fast)."""
    ROUTER = "router"
    """The escalation decision (pure arithmetic)."""
    STAGE2 = "stage2"
    """The Ceiling (expensive model calls)."""
    REFS = "refs"
    """Look-ups of what an output cites (network waits): only outputs that cite something."""


class TaskName(StrEnum):
    """Celery task names; routed by ``TASK_ROUTES``."""

    STAGE1 = "windags.review.stage1"
    """Floor and Wall on one request, then the hop to the router (or an error entry)."""
    ROUTER = "windags.review.router"
    """The escalation decision: publish the result, or hop to Stage 2."""
    STAGE2 = "windags.review.stage2"
    """The Ceiling on one escalated review, then the result on the DAG's stream."""
    REFS = "windags.review.refs"
    """Look up what one output cites, fold the answers into its report, then hop to the router."""
    REFIT = "windags.learning.refit"
    """The periodic calibration refit: on the Stage 2 workers, never the router's."""


TASK_ROUTES: dict[str, dict[str, str]] = {
    TaskName.STAGE1.value: {"queue": Queue.STAGE1.value},
    TaskName.ROUTER.value: {"queue": Queue.ROUTER.value},
    TaskName.STAGE2.value: {"queue": Queue.STAGE2.value},
    TaskName.REFS.value: {"queue": Queue.REFS.value},
    TaskName.REFIT.value: {"queue": Queue.STAGE2.value},
}
