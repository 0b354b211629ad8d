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
from workers.evaluate.escalation.calibration import peer_evaluator
from workers.evaluate.verdict.human import needs_human, reasons_for_human
from workers.human.queue import ReviewQueue
from workers.human.verdicts import VerdictDesk
from workers.records.attempts import AttemptStore, attempt_record, with_fleet_history
from workers.records.marks import BookkeepingMarks
from workers.records.outcomes import OutcomeStore, labelled, stage2_label, utc_now
from workers.results.booking import Booking
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

    def booking(self, result: ReviewResult, request: ReviewRequest) -> Booking:
        """What the publish script writes with ``result``'s entry.

        Always the attempt record; the mark too when that is the whole bookkeeping (no
        labels, no person to ask), so an accepted node's bookkeeping costs no round trip.
        """
        write = self.attempts.pending(result, request)
        if self._labels(result, request) or needs_human(result):
            return Booking(write)
        return Booking(write, self.marks.key(request.review_key), self.marks.ttl_s)

    def after_publish(
        self,
        result: ReviewResult,
        request: ReviewRequest,
        *,
        added: bool,
        booking: Booking | None = None,
    ) -> bool:
        """Remember a published result, once; whether it entered the review queue now.

        ``added``: this call published the entry, and ``booking`` (from ``booking``) in
        the same script. A redelivery that finds the entry there (``added`` false) does the
        bookkeeping only if the worker that published it died before finishing it: every
        step keeps what is there, so nothing is done twice and an escalation to a person
        is never lost.
        """
        if added and booking is not None and booking.mark is not None:
            return False  # the script did it all
        if not added and self.marks.is_done(request.review_key):
            return False
        if added and booking is not None:
            record = attempt_record(result, request)  # written with the entry
        else:
            record = self.attempts.record(result, request)
        self._record_labels(result, request, record)
        queued = False
        if needs_human(result):
            earlier = self.attempts.records(result.dag_id, result.node_id, before=result.attempt)
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

    def _labels(
        self, result: ReviewResult, request: ReviewRequest
    ) -> list[tuple[OutcomeSource, str, float]]:
        """The labels ``result`` gives: Stage 2's verdict, the request's signals."""
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
        return labels

    def _record_labels(
        self, result: ReviewResult, request: ReviewRequest, record: AttemptRecord
    ) -> None:
        for source, evaluator, label in self._labels(result, request):
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
