"""Every Redis key the fleet reads or writes, spelled in this one place.

Each key starts with the deployment's prefix (``WINDAGS_KEY_PREFIX``), so two deployments
share a Redis database without sharing state. kombu's keys too: the transport prepends
``Keys.broker`` (its ``global_keyprefix``) to every key and pub/sub channel it names, the
queue lists (``<prefix>:broker:stage1``), ``unacked``, its index and mutex, the binding
tables and the broadcast channels of remote control. A test greps the tree for the
``<prefix>:<family>:`` pattern outside this module.
"""

from __future__ import annotations

from dataclasses import dataclass

UNROUTABLE_DAG = "_unroutable"
"""The stream of error entries whose DAG could not be read."""


@dataclass(frozen=True, slots=True)
class Keys:
    """The keys of one deployment; cheap to build, safe to share between threads."""

    prefix: str

    # The broker: what kombu writes, under kombu's ``global_keyprefix``.

    @property
    def broker(self) -> str:
        """What kombu prepends to each key and channel of this deployment's broker."""
        return f"{self.prefix}:broker:"

    def queue(self, name: str) -> str:
        """The list of one Celery queue (``workers.fleet.queues.Queue``), as Redis names it."""
        return f"{self.broker}{name}"

    @property
    def unacked(self) -> str:
        """The hash of kombu's delivered, unacknowledged messages (delivery tag -> record)."""
        return f"{self.broker}unacked"

    @property
    def unacked_index(self) -> str:
        """The sorted set of those delivery tags, scored by delivery time."""
        return f"{self.broker}unacked_index"

    def reserved(self, queue: str) -> str:
        """The delivery tags taken from ``queue``, not yet acked or restored: in flight.

        A sorted set scored by delivery time; KEDA adds its size to the waiting list's.
        """
        return f"{self.broker}reserved:{queue}"

    @property
    def beat_schedule(self) -> str:
        """Celery beat's schedule state: when each periodic task last ran (a hash)."""
        return f"{self.prefix}:beat:schedule"

    def results(self, dag_id: str) -> str:
        """The results stream of one DAG."""
        return f"{self.prefix}:results:{dag_id}"

    def of_dag(self, dag_id: str) -> tuple[str, ...]:
        """The keys that hold one DAG's reviews: its results stream, spend and shape.

        What a throwaway run (the demo) sets to expire, so it leaves nothing for good.
        """
        return (self.results(dag_id), self.cost(dag_id), self.dag(dag_id))

    @property
    def unroutable(self) -> str:
        """Error entries for requests whose DAG could not be read."""
        return self.results(UNROUTABLE_DAG)

    @property
    def dead_letter(self) -> str:
        """Requests given up on, with their raw bodies, for an operator to inspect."""
        return f"{self.prefix}:deadletter"

    @property
    def quarantine(self) -> str:
        """Queue messages no worker could decode, raw, with the queue, reason and time.

        Apart from the dead letters: nothing in it ever reached a handler, and most of it
        names no review.
        """
        return f"{self.prefix}:quarantine"

    def published(self, review_key: str) -> str:
        """Remembers that ``review_key`` reached its stream (publication's dedup key)."""
        return f"{self.prefix}:published:{review_key}"

    def booked(self, review_key: str) -> str:
        """Marks that a published result's bookkeeping (attempt, labels, queue) is done."""
        return f"{self.prefix}:booked:{review_key}"

    def tries(self, stage: str, identity: str) -> str:
        """Executions of one stage of one review (or of one unreadable body)."""
        return f"{self.prefix}:tries:{stage}:{identity}"

    def stage2_claim(self, review_key: str) -> str:
        """Held while one worker runs the review's Ceiling."""
        return f"{self.prefix}:claim:{review_key}"

    def stage2_report(self, review_key: str) -> str:
        """A finished Ceiling, kept so that a redelivery never pays the judge twice."""
        return f"{self.prefix}:stage2:{review_key}"

    def cost(self, dag_id: str) -> str:
        """A DAG's review spend in USD."""
        return f"{self.prefix}:cost:{dag_id}"

    def dag(self, dag_id: str) -> str:
        """A registered DAG's shape (hash: version, digest, shape); expires with its results."""
        return f"{self.prefix}:dag:{dag_id}"

    def charged(self, review_key: str) -> str:
        """Marks ``review_key``'s cost as already charged to its DAG."""
        return f"{self.prefix}:charged:{review_key}"

    def verdict(self, digest: str) -> str:
        """A cached model verdict, by the content hash of its task."""
        return f"{self.prefix}:verdict:{digest}"

    def rate_bucket(self, model: str) -> str:
        """The fleet-wide token bucket of one model."""
        return f"{self.prefix}:ratelimit:{model}"

    # The human gate (workers.human): review queue, verdicts, attempts, outcomes.

    @property
    def human_pending(self) -> str:
        """Sorted set of review keys waiting for a person, scored by enqueue time (ms)."""
        return f"{self.prefix}:human:pending"

    @property
    def human_summaries(self) -> str:
        """Hash of review key -> the short ``ReviewSummary`` the queue page lists."""
        return f"{self.prefix}:human:summaries"

    def human_item(self, review_key: str) -> str:
        """What a reviewer sees of one waiting review (a ``ReviewItem``); set once."""
        return f"{self.prefix}:human:item:{review_key}"

    def human_claim(self, review_key: str) -> str:
        """The reviewer holding ``review_key``, until the claim expires back to the queue."""
        return f"{self.prefix}:human:claim:{review_key}"

    def human_decided(self, review_key: str) -> str:
        """The verdict's entry id and reviewer: the verdict's dedup key."""
        return f"{self.prefix}:human:decided:{review_key}"

    def attempts(self, dag_id: str, node_id: str) -> str:
        """One node's attempt records (hash: attempt -> ``AttemptRecord``)."""
        return f"{self.prefix}:attempts:{dag_id}:{node_id}"

    def outcomes_of_skill(self, skill_id: str) -> str:
        """Labelled outcomes of one skill, newest first (a capped list)."""
        return f"{self.prefix}:outcomes:skill:{skill_id}"

    def outcome_once(self, dag_id: str, node_id: str, attempt: int, label_id: str) -> str:
        """Marks that one label of one attempt was recorded (a replay adds it once)."""
        return f"{self.prefix}:outcomes:once:{dag_id}:{node_id}:{attempt}:{label_id}"

    def outcomes_of_evaluator(self, evaluator: str) -> str:
        """Labelled outcomes by one evaluator, newest first (a capped list)."""
        return f"{self.prefix}:outcomes:evaluator:{evaluator}"

    @property
    def outcome_skills(self) -> str:
        """The skills that have outcomes (a set), for export."""
        return f"{self.prefix}:outcomes:skills"

    @property
    def outcome_evaluators(self) -> str:
        """The evaluators that have outcomes (a set), for export."""
        return f"{self.prefix}:outcomes:evaluators"

    # The learned router (workers.learning): the current calibration model.
    @property
    def calibration_model(self) -> str:
        """The router's current calibration model (JSON), written by the refit task."""
        return f"{self.prefix}:calibration:model"

    @property
    def calibration_refit_lease(self) -> str:
        """Held (with a TTL) while a refit runs or just ran: duplicate beats skip theirs."""
        return f"{self.prefix}:calibration:refit-lease"
