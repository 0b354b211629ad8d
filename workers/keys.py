"""Every Redis key the fleet reads or writes, spelled in this one place.

Each key starts with the deployment's prefix (``WINDAGS_KEY_PREFIX``), so two deployments
share a Redis database without sharing state. kombu's keys too: the transport prepends
``Keys.broker`` (its ``global_keyprefix``) to every key and pub/sub channel it names, the
queue lists (``<prefix>:broker:stage1``), ``unacked``, its index and mutex, the binding
tables and the broadcast channels of remote control. A test greps the tree for the
``<prefix>:<family>:`` pattern outside this module.

On a Redis Cluster (``tagged``: the state URL is ``cluster://``) a DAG's keys and its
reviews' keys carry one hash tag, the first ``:``-part of the DAG id in braces
(``<prefix>:results:{team}:run-7``, ``<prefix>:published:{team}:run-7:node:1``), so every
script of one review touches one slot; a review key starts with its DAG id, so the tag
comes from either. On one Redis the names stay as they always were (``tagged`` false): a
running fleet upgrades without a key changing name under it.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.request import review_key as identity_of

UNROUTABLE_DAG = "_unroutable"
"""The stream of error entries whose DAG could not be read."""


def hash_tagged(name: str) -> str:
    """``name`` with its first ``:``-part as a Redis Cluster hash tag: ``a:b`` -> ``{a}:b``.

    Braces and ``%`` in ``name`` are escaped first (a refused request's DAG id may hold any
    text), and an empty first part becomes ``{%}``: the tag is never empty, never cut short,
    and two names never spell one key.
    """
    escaped = name.replace("%", "%25").replace("{", "%7B").replace("}", "%7D")
    head, sep, rest = escaped.partition(":")
    return f"{{{head or '%'}}}{sep}{rest}"


@dataclass(frozen=True, slots=True)
class Keys:
    """The keys of one deployment; cheap to build, safe to share between threads."""

    prefix: str
    tagged: bool = False
    """Spell per-DAG and per-review keys with the DAG's hash tag (state on a cluster)."""

    def _slot(self, name: str) -> str:
        """A DAG id, review key, skill or evaluator as its keys spell it."""
        return hash_tagged(name) if self.tagged else name

    def _review(self, review_key: str, dag_id: str | None) -> str:
        """A review key in its DAG's slot: ``dag_id`` names the stream when the key does not.

        An error entry's key (``invalid:<digest>``, a body's digest) does not start with the
        DAG id of the stream it goes to; on a cluster its keys are put in that DAG's slot.
        """
        if not self.tagged or dag_id is None or review_key.startswith(f"{dag_id}:"):
            return self._slot(review_key)
        return f"{hash_tagged(dag_id)}:{review_key}"

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

    def lease(self, owner: str) -> str:
        """Held (a TTL its process renews) while the consuming process ``owner`` is alive.

        Each delivery a take records names its owner (``workers/fleet/transport/leases.py``);
        a delivery whose owner's lease is gone is restored at once, not after the visibility
        timeout (``workers/fleet/transport/owner_sweep.py``).
        """
        return f"{self.broker}lease:{owner}"

    @property
    def owner_sweep(self) -> str:
        """Held for one interval by the worker looking for deliveries of dead owners."""
        return f"{self.broker}owner-sweep"

    @property
    def beat_schedule(self) -> str:
        """Celery beat's schedule state: when each periodic task last ran (a hash)."""
        return f"{self.prefix}:beat:schedule"

    def results(self, dag_id: str) -> str:
        """The results stream of one DAG."""
        return f"{self.prefix}:results:{self._slot(dag_id)}"

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

    def published(self, review_key: str, dag_id: str | None = None) -> str:
        """Remembers that ``review_key`` reached its stream (publication's dedup key).

        ``dag_id``: the DAG of the stream, for an error entry's key that does not name it.
        """
        return f"{self.prefix}:published:{self._review(review_key, dag_id)}"

    def booked(self, review_key: str) -> str:
        """Marks that a published result's bookkeeping (attempt, labels, queue) is done."""
        return f"{self.prefix}:booked:{self._slot(review_key)}"

    def tries(self, stage: str, identity: str) -> str:
        """Executions of one stage of one review (or of one unreadable body)."""
        return f"{self.prefix}:tries:{stage}:{self._slot(identity)}"

    def stage2_claim(self, review_key: str) -> str:
        """Held while one worker runs the review's Ceiling."""
        return f"{self.prefix}:claim:{self._slot(review_key)}"

    def stage2_report(self, review_key: str) -> str:
        """A finished Ceiling, kept so that a redelivery never pays the judge twice."""
        return f"{self.prefix}:stage2:{self._slot(review_key)}"

    def cost(self, dag_id: str) -> str:
        """A DAG's review spend in USD."""
        return f"{self.prefix}:cost:{self._slot(dag_id)}"

    def dag(self, dag_id: str) -> str:
        """A registered DAG's shape (hash: version, digest, shape); expires with its results."""
        return f"{self.prefix}:dag:{self._slot(dag_id)}"

    def charged(self, review_key: str) -> str:
        """Marks ``review_key``'s cost as already charged to its DAG."""
        return f"{self.prefix}:charged:{self._slot(review_key)}"

    def verdict(self, digest: str) -> str:
        """A cached model verdict, by the content hash of its task."""
        return f"{self.prefix}:verdict:{digest}"

    def rate_bucket(self, model: str) -> str:
        """The fleet-wide token bucket of one model."""
        return f"{self.prefix}:ratelimit:{model}"

    def package_answer(self, name: str) -> str:
        """The package index's cached answer about one project (its PEP 503 normal form).

        A ``PackageAnswer`` as JSON; its TTL says how long it holds (present long, absent
        short, unreachable never written). ``name`` is validated before it gets here.
        """
        return f"{self.prefix}:pkgindex:{name}"

    # The network lane (workers.lookups): fetched pages, single flight, per-host politeness.

    def refs_page(self, digest: str) -> str:
        """A fetched page's record (``FetchedPage`` JSON), by the URL's SHA-256; expires."""
        return f"{self.prefix}:refs:page:{digest}"

    def refs_flight(self, digest: str) -> str:
        """Held while one worker fetches the URL: the others wait for its record."""
        return f"{self.prefix}:refs:flight:{digest}"

    def refs_host_in_flight(self, host: str) -> str:
        """Requests in flight to ``host`` (a sorted set of tickets scored by expiry, ms)."""
        return f"{self.prefix}:refs:host:{self._slot(host)}:in-flight"

    def refs_host_next(self, host: str) -> str:
        """When the next request to ``host`` may start (ms): spacing, or ``Retry-After``.

        In the in-flight set's slot: one script reads and writes both.
        """
        return f"{self.prefix}:refs:host:{self._slot(host)}:next"

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
        return f"{self.prefix}:human:item:{self._slot(review_key)}"

    def human_claim(self, review_key: str) -> str:
        """The reviewer holding ``review_key``, until the claim expires back to the queue."""
        return f"{self.prefix}:human:claim:{self._slot(review_key)}"

    def human_decided(self, review_key: str) -> str:
        """The verdict's entry id and reviewer: the verdict's dedup key."""
        return f"{self.prefix}:human:decided:{self._slot(review_key)}"

    def attempts(self, dag_id: str, node_id: str) -> str:
        """One node's attempt records (hash: attempt -> ``AttemptRecord``)."""
        return f"{self.prefix}:attempts:{self._slot(dag_id)}:{node_id}"

    def outcomes_of_skill(self, skill_id: str) -> str:
        """Labelled outcomes of one skill, newest first (a capped list)."""
        return f"{self.prefix}:outcomes:skill:{self._slot(skill_id)}"

    def skill_outcome_once(
        self, skill_id: str, dag_id: str, node_id: str, attempt: int, label_id: str
    ) -> str:
        """Marks that one label of one attempt is in its skill's list (a replay adds it once).

        In the list's slot, so that the mark and the push are one script.
        """
        label = f"{identity_of(dag_id, node_id, attempt)}:{label_id}"
        return f"{self.prefix}:outcomes:once:skill:{self._slot(skill_id)}:{label}"

    def evaluator_outcome_once(
        self, evaluator: str, dag_id: str, node_id: str, attempt: int, label_id: str
    ) -> str:
        """Marks that one label of one attempt is in its evaluator's list (in its slot)."""
        label = f"{identity_of(dag_id, node_id, attempt)}:{label_id}"
        return f"{self.prefix}:outcomes:once:evaluator:{self._slot(evaluator)}:{label}"

    def outcomes_of_evaluator(self, evaluator: str) -> str:
        """Labelled outcomes by one evaluator, newest first (a capped list)."""
        return f"{self.prefix}:outcomes:evaluator:{self._slot(evaluator)}"

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
