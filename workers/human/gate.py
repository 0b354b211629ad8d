"""The human gate as the fleet and the clients use it: one object, built from settings.

After a result reaches its stream, the fleet remembers the attempt, records the labels
the review produced (Stage 2's verdict, a downstream signal the request carried), and
puts the attempt in the review queue when it waits for a person. Before ``finalize``,
it gives a request without ``history`` the fleet's record of the earlier attempts.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis

from schemas.human import AttemptRecord, OutcomeSource, ReviewItem
from schemas.request import ReviewRequest
from schemas.result import ReviewResult
from workers.evaluate.calibration import peer_evaluator
from workers.evaluate.human import needs_human, reasons_for_human
from workers.human.attempts import AttemptStore, with_fleet_history
from workers.human.marks import BookkeepingMarks
from workers.human.outcomes import OutcomeStore, labelled, stage2_label, utc_now
from workers.human.queue import ReviewQueue
from workers.human.verdicts import VerdictDesk
from workers.settings import Settings


@dataclass(frozen=True, slots=True)
class HumanGate:
    """Queue, verdicts, attempts and outcomes of one deployment."""

    queue: ReviewQueue
    desk: VerdictDesk
    attempts: AttemptStore
    outcomes: OutcomeStore
    marks: BookkeepingMarks

    def with_history(self, request: ReviewRequest) -> ReviewRequest:
        """``request`` with the fleet's record of its earlier attempts, if it sent none."""
        return with_fleet_history(request, self.attempts)

    def after_publish(self, result: ReviewResult, request: ReviewRequest, *, added: bool) -> bool:
        """Remember a published result, once; whether it entered the review queue now.

        ``added``: this call published the entry. A redelivery that finds the entry there
        (``added`` false) does the bookkeeping only if the worker that published it died
        before finishing it: every step keeps what is there, so nothing is done twice and
        an escalation to a person is never lost.
        """
        if not added and self.marks.is_done(request.review_key):
            return False
        earlier = self.attempts.records(result.dag_id, result.node_id, before=result.attempt)
        record = self.attempts.record(result, request)
        self._label(result, request, record)
        queued = False
        if needs_human(result):
            queued = self.queue.enqueue(
                ReviewItem(
                    review_key=request.review_key,
                    reasons=reasons_for_human(result),
                    enqueued_at=utc_now(),
                    request=request,
                    result=result,
                    earlier=tuple(earlier),
                )
            )
        self.marks.done(request.review_key)
        return queued

    def report_downstream(
        self, dag_id: str, node_id: str, attempt: int, score: float, *, reporter: str
    ) -> bool:
        """A downstream consumer's later report on an attempt; False when it is forgotten."""
        record = self.attempts.get(dag_id, node_id, attempt)
        if record is None:
            return False
        self.outcomes.record(
            labelled(
                OutcomeSource.DOWNSTREAM,
                f"downstream:{reporter}",
                record,
                dag_id=dag_id,
                node_id=node_id,
                label=score,
            )
        )
        return True

    def _label(self, result: ReviewResult, request: ReviewRequest, record: AttemptRecord) -> None:
        labels = []
        judged = stage2_label(result)
        if judged is not None:
            labels.append((OutcomeSource.STAGE2, *judged))
        signals = request.signals
        if signals is not None and signals.downstream is not None:
            labels.append((OutcomeSource.DOWNSTREAM, "downstream:request", signals.downstream))
        if signals is not None and signals.peer is not None:
            # The request names no peer: its record is kept per skill it reviewed.
            labels.append((OutcomeSource.PEER, peer_evaluator(request), signals.peer))
        for source, evaluator, label in labels:
            self.outcomes.record(
                labelled(
                    source,
                    evaluator,
                    record,
                    dag_id=result.dag_id,
                    node_id=result.node_id,
                    label=label,
                ),
                once=True,
            )


def build_gate(client: redis.Redis, settings: Settings) -> HumanGate:
    """The gate of the deployment ``settings`` describe, on ``client``."""
    keys = settings.keys
    queue = ReviewQueue(
        client,
        keys,
        item_ttl_s=settings.stream_retention_s,
        claim_ttl_s=settings.human_claim_ttl_s,
    )
    attempts = AttemptStore(
        client, keys, kept=settings.attempts_kept, ttl_s=settings.stream_retention_s
    )
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
    marks = BookkeepingMarks(client, keys, ttl_s=settings.stream_retention_s)
    return HumanGate(queue=queue, desk=desk, attempts=attempts, outcomes=outcomes, marks=marks)
