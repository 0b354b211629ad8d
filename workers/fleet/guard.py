"""The poison-task boundary: count each try, retry faults a bounded number of times.

Redis keeps no delivery count, so a task that fails or kills its worker every time
would loop forever; past ``max_task_tries`` the review is dead-lettered with a
``poison`` entry instead.

A first delivery (neither restored by kombu, which marks what it restores
``redelivered``, nor a Celery retry, which counts its ``retries``) is the first try of
its message: a stage with no claim counts nothing then, and every later delivery counts
one more than the counter says. An accepted node's Stage 1 and router cost no round trip
for the count; a task that kills its worker is still dead-lettered after the same number
of tries, since every delivery after the first is counted.

An outage is not a try's failure: a connection fault of Redis that the work meets goes
through uncounted, and the task hands its message back as a replay of this try
(``workers/fleet/outage.py``). Unless it is handed back past ``max_task_replays``
(``Delivery.REPLAY_COUNTED``): no run of outages is that long, a try that breaks its own
connection every time is, and its tries count.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum

from pydantic import ValidationError

from schemas.hops import ReviewIdentity
from workers.fleet.deps import Deps
from workers.fleet.next_hop import CLAIM_WAIT, Outcome, RetryLater
from workers.fleet.outage import CONNECTION_FAULTS
from workers.fleet.queues import Queue
from workers.fleet.refusals import as_text, dead_letter
from workers.fleet.tries import Claim, ClaimState, TryCount, digest

log = logging.getLogger("windags.fleet")
MAX_RETRY_DELAY_S = 30.0


class Delivery(StrEnum):
    """What the broker tells of one delivery of a task."""

    FIRST = "first"
    """Neither redelivered nor a retry: no earlier try of this message to count."""
    AGAIN = "again"
    """Redelivered (after a death, a requeue, a restore) or a retry of an earlier try."""
    REPLAY = "replay"
    """A live worker's hand-back (its Redis connection died) of a delivery that was not
    the first: that try is already counted, and this one is the same try again."""
    FIRST_REPLAY = "first_replay"
    """A hand-back of a first delivery: still the first try where the first goes uncounted
    (``Job.counts_lazily``); elsewhere that try counted itself, and this is the same one."""
    REPLAY_COUNTED = "replay_counted"
    """A hand-back of a message handed back more than ``max_task_replays`` times: a try
    that kills its own connection would otherwise replay forever, so it counts as
    ``AGAIN`` does (``workers/fleet/replay.py``)."""
    UNKNOWN = "unknown"
    """Not told (a handler driven directly): every try is counted as it runs."""


@dataclass(frozen=True, slots=True)
class Job:
    """One delivery of one stage's task, as the try counter and the dead letters see it."""

    stage: Queue
    identity: str
    """The review key, or a digest of a body that names none."""
    raw: str
    """The body, kept with a dead-letter entry."""
    whose: ReviewIdentity | None = None
    """The review, when known without reading ``raw``."""
    check_published: bool = False
    """Ask, in the same round trip as the count, whether the review is on its stream."""
    claim: Claim | None = None
    """What a live worker holds while it does this job's work: taken with the count."""
    delivery: Delivery = Delivery.UNKNOWN
    """Whether this is the message's first delivery (``Delivery``)."""

    @classmethod
    def of_hop(
        cls,
        stage: Queue,
        identity_json: object,
        raw: str,
        *,
        check_published: bool = False,
        delivery: Delivery = Delivery.UNKNOWN,
    ) -> Job:
        """A job of an internal hop, whose first argument is the review's identity."""
        whose = read_identity(identity_json)
        identity = whose.key if whose is not None else digest(as_text(identity_json) + raw)
        return cls(stage, identity, raw, whose, check_published=check_published, delivery=delivery)

    @property
    def counts_lazily(self) -> bool:
        """Whether the first delivery goes uncounted (a stage that holds no claim)."""
        return self.claim is None and self.delivery is not Delivery.UNKNOWN


def read_identity(identity_json: object) -> ReviewIdentity | None:
    """The hop's identity, or None when another producer sent something else."""
    if not isinstance(identity_json, str):
        return None
    try:
        return ReviewIdentity.model_validate_json(identity_json)
    except (ValidationError, ValueError, RecursionError):
        return None


def guarded(job: Job, deps: Deps, work: Callable[[TryCount], Outcome]) -> Outcome:
    """Count the try, run ``work(count)``, and bound what fails.

    ``work`` releases the claim when ``count`` says it took it. A delivery past the limit
    while a live worker holds ``job.claim`` waits instead: its poison entry would take the
    stream slot of that worker's result.
    """
    count, bumped = _count(job, deps)
    limit = deps.settings.max_task_tries
    if count.tries > limit and count.claim is ClaimState.HELD:
        _uncount_wait(job, bumped, deps)
        return CLAIM_WAIT
    if count.tries > limit:
        if job.claim is not None and count.claim is ClaimState.TAKEN:
            deps.tries.release(job.claim, expires_at=time.monotonic() + job.claim.ttl_s)
        why = f"{job.stage.value} did not finish in {limit} tries "
        _give_up(job, why + _unfinished(job, deps), count.tries - 1, deps)
        return None
    try:
        outcome = work(count)
    except CONNECTION_FAULTS:
        raise  # an outage interrupted this try: replayed, not counted (``fleet/outage.py``)
    except Exception as exc:  # the poison-task boundary: anything else would loop or vanish
        error = f"{type(exc).__name__}: {exc}"[:500]
        log.warning(
            "%s failed on try %d/%d for %s: %s",
            job.stage.value,
            count.tries,
            limit,
            job.identity,
            error,
        )
        if count.tries < limit:
            return RetryLater(min(MAX_RETRY_DELAY_S, 2.0**count.tries), error)
        why = f"{job.stage.value} failed {count.tries} times; last: {error}"
        _give_up(job, why, count.tries, deps)
        return None
    if isinstance(outcome, RetryLater) and not outcome.counted and not job.counts_lazily:
        _uncount_wait(job, bumped, deps)
    return outcome


_REPLAYS = frozenset({Delivery.REPLAY, Delivery.FIRST_REPLAY})


def _uncount_wait(job: Job, bumped: bool, deps: Deps) -> None:
    """A wait is no try: its retry counts one, so take one back.

    This delivery's own count; or, for a replay that counted none (its try counted
    itself), the count the retry adds: the interrupted try, resumed, is still that try.
    """
    if bumped or job.delivery in _REPLAYS:
        deps.tries.unbump(job.stage.value, job.identity)


def _count(job: Job, deps: Deps) -> tuple[TryCount, bool]:
    """This delivery's place in the review's tries (``Delivery``), and whether it counted."""
    if job.counts_lazily and job.delivery in (Delivery.FIRST, Delivery.FIRST_REPLAY):
        return TryCount(1), False  # nothing written: the first delivery of its message
    stage, identity, published = job.stage.value, job.identity, job.check_published
    claim = job.claim
    if job.delivery in _REPLAYS:
        # The try it replays counted itself if it had started; one handed back before it
        # started is counted one short (a broker outage is not the task's fault).
        seen = deps.tries.peek(stage, identity, check_published=published, claim=claim)
        if seen.tries > 0 or job.counts_lazily:
            tries = max(seen.tries, 1) + (1 if job.counts_lazily else 0)
            return replace(seen, tries=tries), False
        count = deps.tries.bump(stage, identity)  # the claim was asked with the peek
        return replace(seen, tries=count.tries), True
    count = deps.tries.bump(stage, identity, check_published=published, claim=claim)
    if job.counts_lazily:  # the uncounted first delivery came before this one
        return replace(count, tries=count.tries + 1), True
    return count, True


def _unfinished(job: Job, deps: Deps) -> str:
    """Why a job's tries never finished, as its poison entry tells an operator."""
    if job.delivery is Delivery.REPLAY_COUNTED:
        most = deps.settings.max_task_replays
        return f"(handed back more than {most} times, its Redis connection lost mid-try)"
    return "(its worker died or timed out each time)"


def _give_up(job: Job, message: str, tries: int, deps: Deps) -> None:
    dead_letter(job.raw, job.identity, message, tries, deps, about=job.whose)
