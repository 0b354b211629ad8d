"""The human gate as the fleet and the clients use it: one object, built from settings.

What is the human's: an attempt that waits for a person enters the review queue once
(``enqueue``, which the fleet's bookkeeping calls after the result's entry), and a
person's verdict is recorded once by the desk. The review memory the gate reads and
writes (attempts, outcomes) is ``workers.records``'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import redis

from schemas.human import AttemptRecord, ReviewItem
from schemas.request import ReviewRequest
from schemas.result import ReviewResult
from workers.evaluate.verdict.human import reasons_for_human
from workers.human.queue import ReviewQueue
from workers.human.verdicts import VerdictDesk
from workers.records.attempts import AttemptStore
from workers.records.outcomes import OutcomeStore, utc_now
from workers.settings import Settings


@dataclass(frozen=True, slots=True)
class HumanGate:
    """The review queue and the verdict desk of one deployment."""

    queue: ReviewQueue
    desk: VerdictDesk

    def enqueue(
        self, result: ReviewResult, request: ReviewRequest, earlier: Sequence[AttemptRecord]
    ) -> bool:
        """Put ``result``'s attempt in the review queue once; whether this call added it.

        ``earlier``: the node's earlier attempts, as the fleet remembers them, for the
        reviewer. A replay keeps the item already queued (``ReviewQueue.enqueue``).
        """
        return self.queue.enqueue(
            ReviewItem(
                review_key=request.review_key,
                reasons=reasons_for_human(result),
                enqueued_at=utc_now(),
                request=request,
                result=result,
                earlier=tuple(earlier),
            )
        )


def build_gate(
    client: redis.Redis,
    settings: Settings,
    *,
    attempts: AttemptStore | None = None,
    outcomes: OutcomeStore | None = None,
) -> HumanGate:
    """The gate of the deployment ``settings`` describe, on ``client``.

    ``attempts`` and ``outcomes``: the process's review memory (``Deps.records``) when it
    has one; the review page and the client get the desk's own, sized by ``settings``.
    """
    keys = settings.keys
    queue = ReviewQueue(
        client,
        keys,
        item_ttl_s=settings.stream_retention_s,
        claim_ttl_s=settings.human_claim_ttl_s,
    )
    if attempts is None:
        attempts = AttemptStore(
            client, keys, kept=settings.attempts_kept, ttl_s=settings.stream_retention_s
        )
    if outcomes is None:
        outcomes = OutcomeStore(
            client, keys, kept=settings.outcomes_kept, ttl_s=settings.outcome_retention_s
        )
    desk = VerdictDesk(
        client,
        keys,
        queue=queue,
        attempts=attempts,
        outcomes=outcomes,
        retention_s=settings.stream_retention_s,
        decided_ttl_s=settings.dedup_ttl_s,
    )
    return HumanGate(queue=queue, desk=desk)
