"""What the fleet remembers of a review: read before its verdict, written with its entry.

One object per process (``Deps.records``) does both jobs of this room on the same memory:

- before ``finalize``, ``with_history`` gives a request without ``history`` the node's
  earlier attempts, as the fleet recorded them;
- at publication, ``publish`` records the labels the result carries, in one round trip
  with whatever the caller's batch already holds (Stage 2 keeps its report there); then
  it hands the booking (the attempt record, and the mark unless a person must be asked)
  to the stream write it is given (``ResultStream.publish_result``: entry, charge and
  booking in one script); an attempt that waits for a person then goes to the human
  gate, and the mark is set last.

Labels go before the entry: each is added once per attempt whatever replays it, so a
worker killed between them and the entry leaves a redelivery that adds none twice, and
the entry's script can carry the mark (and the delivery's ack). A label is the judge's or
a signal's word on the attempt's output, true whether or not its entry lands. A
redelivery that finds the entry published finishes the bookkeeping only when the mark is
missing (the worker that published died before it): every step keeps what is there, so
nothing is added twice and an escalation to a person is never lost. A node with no
person to ask has nothing after the entry: an accepted one, one round trip; an escalated
one, two (labels, then the entry).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from schemas.human import AttemptRecord, OutcomeSource
from schemas.request import ReviewRequest
from schemas.result import ReviewResult
from workers.evaluate.escalation.calibration import peer_evaluator
from workers.evaluate.verdict.human import needs_human
from workers.records.attempts import AttemptStore, attempt_record, with_fleet_history
from workers.records.marks import BookkeepingMarks
from workers.records.outcomes import OutcomeStore, labelled, stage2_label
from workers.results.batch import Batch
from workers.results.booking import Booking
from workers.results.stream import Published

#: The stream write ``publish`` is given: the entry, with ``booking`` in the same script.
StreamWrite = Callable[[Booking], Published]


class PersonQueue(Protocol):
    """Where an attempt that waits for a person goes: the human gate.

    ``workers.human.HumanGate`` is one; it imports this room, so this room names only
    the one call it makes.
    """

    def enqueue(
        self, result: ReviewResult, request: ReviewRequest, earlier: Sequence[AttemptRecord]
    ) -> bool:
        """Queue the attempt for a person once; whether this call added it."""
        ...


@dataclass(frozen=True, slots=True)
class Bookkeeping:
    """Attempts, labelled outcomes and bookkeeping marks of one deployment."""

    attempts: AttemptStore
    outcomes: OutcomeStore
    marks: BookkeepingMarks

    def with_history(self, request: ReviewRequest) -> ReviewRequest:
        """``request`` with the fleet's record of its earlier attempts, if it sent none."""
        return with_fleet_history(request, self.attempts)

    def publish(
        self,
        result: ReviewResult,
        request: ReviewRequest,
        write: StreamWrite,
        gate: PersonQueue,
        *,
        ahead: Batch | None = None,
    ) -> Published:
        """Publish ``result`` through ``write`` with its bookkeeping, each step once.

        ``ahead``: writes of the caller's that go in the labels' round trip, before the
        entry. ``write`` adds the entry with the booking (one script); what follows it
        (the person's queue, the mark) runs when this call added the entry, or when a
        redelivery finds the entry without its mark.
        """
        batch = ahead if ahead is not None else self.outcomes.batch()
        self._record_labels(batch, result, request)
        if len(batch):
            batch.send()
        booking = self._booking(result, request)
        published = write(booking)
        self._finish(result, request, added=published.added, booking=booking, gate=gate)
        return published

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

    def _booking(self, result: ReviewResult, request: ReviewRequest) -> Booking:
        """What the publish script writes with ``result``'s entry.

        Always the attempt record; the mark too unless a person must be asked (the labels
        went before), so the bookkeeping costs no round trip after the entry.
        """
        write = self.attempts.pending(result, request)
        if needs_human(result):
            return Booking(write)
        return Booking(write, self.marks.key(request.review_key), self.marks.ttl_s)

    def _finish(
        self,
        result: ReviewResult,
        request: ReviewRequest,
        *,
        added: bool,
        booking: Booking,
        gate: PersonQueue,
    ) -> None:
        """The bookkeeping after the entry: the person's queue, then the mark.

        ``added``: the entry, and ``booking`` with it, went in just now. A redelivery that
        finds the entry there (``added`` false) does the rest only if the worker that
        published it died before finishing it (the labels went before the entry).
        """
        if added and booking.mark is not None:
            return  # the script did it all
        if not added and self.marks.is_done(request.review_key):
            return
        if not added:
            self.attempts.record(result, request)  # kept if the entry's script wrote it
        if needs_human(result):
            earlier = self.attempts.records(result.dag_id, result.node_id, before=result.attempt)
            gate.enqueue(result, request, earlier)
        self.marks.done(request.review_key)

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

    def _record_labels(self, batch: Batch, result: ReviewResult, request: ReviewRequest) -> None:
        """The labels ``result`` gives, each once per attempt, added to ``batch``."""
        labels = self._labels(result, request)
        if not labels:
            return
        record = attempt_record(result, request)
        for source, evaluator, label in labels:
            self.outcomes.record_in(
                batch,
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
