"""The DAG runtime's side: submit reviews, subscribe to their results.

``submit`` validates before it enqueues, so a bad request is refused at once with the
field that is wrong; a broker outage ends in ``BrokerUnavailableError`` within a bounded
time, never a hang (``ReviewClient.submit_bound_s``), even when Redis accepts connections
but does not answer. A submission that failed so may still have reached a Redis that
answers later: resubmitting it is safe, each review key is published once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

import kombu.exceptions
import redis
from celery import Celery

from schemas.human import VerdictChannel, VerdictInput
from schemas.request import ReviewRequest, review_key
from schemas.result import ReviewResult
from schemas.topology import DagShape
from workers.connections import redis_client
from workers.errors import BrokerUnavailableError
from workers.fleet.app import create_app
from workers.fleet.deps import build_records
from workers.fleet.queues import TaskName
from workers.human import Recorded, RecordStatus, VerdictRefusedError, build_gate
from workers.intake import encode_request, request_from_obj
from workers.observe import spans, telemetry
from workers.results.dags import DagRegistry, Registration
from workers.results.subscriber import Delivery, Subscription
from workers.runtime.aio import AsyncClient
from workers.runtime.blocking import review_blocking
from workers.settings import Settings
from workers.topology import dag_from_obj

_BROKER_FAULTS = (kombu.exceptions.OperationalError, redis.RedisError, OSError)
#: Those, and a pipelined batch that failed (which of its messages reached Redis is unknown).
_BATCH_FAULTS = (*_BROKER_FAULTS, kombu.exceptions.BatchPublishError)
#: Submissions ``submit_many`` sends in one pipeline.
SUBMIT_BATCH = 100
#: Publish retries after a broker fault (one is enough to ride out a reconnect).
SUBMIT_RETRIES = 1
_RETRY_POLICY = {"interval_start": 0.2, "interval_step": 0.5, "interval_max": 1.0}


class ReviewClient:
    """Submits review requests to the fleet and reads results back."""

    def __init__(self, settings: Settings, *, app: Celery | None = None) -> None:
        self.settings = settings
        if app is None:
            app = create_app(settings)
            # One retry layer (kombu's publish retry): redis-py's own retry of a timed-out
            # read would double every wait on a hung Redis.
            options = app.conf.broker_transport_options
            app.conf.broker_transport_options = {**options, "retry_on_timeout": False}
        self._app = app
        self._redis = redis_client(settings, max_connections=8)
        self._dags = DagRegistry(self._redis, settings.keys, ttl_s=settings.stream_retention_s)
        # The publisher must be instrumented too, or each review starts a new trace.
        telemetry.setup(settings, serve_metrics=False)

    def submit(self, request: ReviewRequest | dict[str, Any]) -> str:
        """Enqueue one review; returns its review key (``dag_id:node_id:attempt``)."""
        return self.submit_many([request])[0]

    def submit_many(self, requests: Iterable[ReviewRequest | dict[str, Any]]) -> list[str]:
        """Validate every request first, then enqueue them on one connection.

        Up to ``SUBMIT_BATCH`` go in one pipeline (kombu's ``Producer.batch``): one round
        trip, where each cost one (a sixth of an accepted node's, ``bench.redis_cost``).
        A batch that fails is sent again, as one message was: ``SUBMIT_RETRIES`` times,
        within ``submit_bound_s``. A review that reached Redis twice is published once.
        """
        return self.submit_checked([self._validated(r) for r in requests])

    def submit_checked(self, validated: list[ReviewRequest]) -> list[str]:
        """Enqueue requests that already passed this client's intake checks.

        The asyncio client checks each request on its event loop, before the request
        reaches this client's thread: checking it again there would hold the GIL the
        loop needs to read verdicts (a quarter of a submission's time).
        """
        keys: list[str] = []
        try:
            with self._app.producer_or_acquire() as producer:
                for start in range(0, len(validated), SUBMIT_BATCH):
                    chunk = validated[start : start + SUBMIT_BATCH]
                    self._send_batch(chunk, producer)
                    keys += [request.review_key for request in chunk]
        except _BATCH_FAULTS as exc:
            raise BrokerUnavailableError(
                f"broker at {self.settings.redis_url} unavailable after {len(keys)} of "
                f"{len(validated)} submissions: {exc}"
            ) from exc
        return keys

    def _send_batch(self, chunk: list[ReviewRequest], producer: Any) -> None:
        """Publish ``chunk`` in one pipeline; on a broker fault, the whole of it again."""
        for retry in range(SUBMIT_RETRIES + 1):
            try:
                with producer.batch(max_size=SUBMIT_BATCH):
                    for request in chunk:
                        with spans.submit_span(request):
                            self._app.send_task(
                                TaskName.STAGE1.value,
                                args=[encode_request(request)],
                                # Monitors show the review's key, not Celery's repr of the
                                # whole request: a copy in every message's headers (a
                                # third of its bytes, each one Redis reads and logs).
                                argsrepr=f"({request.review_key!r})",
                                kwargsrepr="{}",
                                producer=producer,
                                retry=False,  # this loop retries, the batch as a whole
                            )
                return
            except _BATCH_FAULTS:
                if retry == SUBMIT_RETRIES:
                    raise
                time.sleep(min(_RETRY_POLICY["interval_start"], _RETRY_POLICY["interval_max"]))

    @property
    def submit_bound_s(self) -> float:
        """The longest ``submit`` waits on a Redis that does not answer before it raises.

        Each try is a command that times out, plus, before a retry, the reconnect's own
        PING; then the connect and the retry intervals.
        """
        tries = SUBMIT_RETRIES + 1
        waits = tries * self.settings.redis_socket_timeout_s + SUBMIT_RETRIES * (
            self.settings.redis_socket_timeout_s + self.settings.redis_connect_timeout_s
        )
        return waits + SUBMIT_RETRIES * _RETRY_POLICY["interval_max"]

    def review(self, request: ReviewRequest | dict[str, Any], *, timeout: float) -> ReviewResult:
        """Submit ``request`` unless already reviewed, and wait for its verdict.

        What ``AsyncReviewClient.review`` does, blocking: a review already on the stream
        answers at once and is not sent again; no consumer group is joined.

        Raises:
            InvalidRequest: not a valid request (nothing was sent).
            ReviewFailedError: the fleet's error entry for it (``error`` holds it).
            ReviewTimeoutError: no verdict within ``timeout`` seconds; the review is still
                in flight, and asking again is allowed.
            BrokerUnavailableError: Redis did not answer.
        """
        validated = self._validated(request)
        return review_blocking(
            self._redis, self.settings.keys, validated, self.submit, timeout_s=timeout
        )

    def subscribe(
        self, dag_id: str, group: str, consumer: str, *, claim_idle_ms: int = 30_000
    ) -> Iterator[Delivery]:
        """Yield the DAG's results for this consumer of ``group``; ack each when handled."""
        return iter(self.subscription(dag_id, group, consumer, claim_idle_ms=claim_idle_ms))

    def subscription(
        self, dag_id: str, group: str, consumer: str, *, claim_idle_ms: int = 30_000
    ) -> Subscription:
        """The consumer-group subscription itself, for callers that poll."""
        return Subscription(
            self._redis,
            self.settings.keys.results(dag_id),
            group=group,
            consumer=consumer,
            claim_idle_ms=claim_idle_ms,
        )

    def record_verdict(
        self,
        dag_id: str,
        node_id: str,
        attempt: int,
        verdict: VerdictInput,
        *,
        reviewer: str,
    ) -> Recorded:
        """Record a person's verdict on an attempt waiting in the review queue.

        Exactly once per attempt: the ``human_verdict`` and recomputed ``decision``
        entries go on the DAG's stream together, or not at all.

        Raises:
            VerdictRefusedError: already decided, claimed by another reviewer, or no such
                attempt waits for a person; ``recorded`` says which.
        """
        key = review_key(dag_id, node_id, attempt)
        gate = build_gate(self._redis, self.settings)
        done = gate.desk.record(key, verdict, reviewer=reviewer, channel=VerdictChannel.API)
        if done.status is not RecordStatus.RECORDED:
            raise VerdictRefusedError(done, key)
        return done

    def report_downstream(
        self, dag_id: str, node_id: str, attempt: int, score: float, *, reporter: str
    ) -> bool:
        """Record a downstream node's later usability report (0..1) as a labelled outcome.

        False when the fleet no longer remembers that attempt.
        """
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"score must be within 0..1, not {score}")
        records = build_records(self._redis, self.settings)
        return records.report_downstream(dag_id, node_id, attempt, score, reporter=reporter)

    def register_dag(self, dag: DagShape | dict[str, Any]) -> Registration:
        """Register a DAG's shape once, so that its requests may omit ``downstream``.

        Stage 1 then derives each such request's downstream from the shape: every
        transitive consumer with its cost and hops, and the critical path by expected
        duration. A changed shape needs a higher ``version``; it applies to the attempts
        reviewed after it. The shape expires with the DAG's results.

        Raises:
            InvalidDag: not a valid shape, naming the node or edge (``DagCycleError``,
                ``UnknownDagNodeError``, ``DuplicateDagNodeError``, ``OversizedDagError``).
            DagVersionError: an older version than the stored one, or the stored version
                with a different shape.
            BrokerUnavailableError: Redis did not answer.
        """
        shape = dag_from_obj(dag)
        try:
            return self._dags.register(shape)
        except redis.RedisError as exc:
            raise BrokerUnavailableError(
                f"redis at {self.settings.redis_url} unavailable: {exc}"
            ) from exc

    def close(self) -> None:
        """Release broker and Redis connections."""
        self._redis.close()
        self._app.close()

    def _validated(self, request: ReviewRequest | dict[str, Any]) -> ReviewRequest:
        if isinstance(request, ReviewRequest):
            obj: Any = request.model_dump(mode="json", by_alias=True)
        else:
            obj = request
        return request_from_obj(
            obj,
            max_request_bytes=self.settings.max_request_bytes,
            max_output_chars=self.settings.max_output_chars,
        )


class AsyncReviewClient(AsyncClient):
    """The runtime's asyncio client (``workers.runtime.aio``).

    It publishes through a ``ReviewClient`` (its own Celery app, never ``shared_task``) on
    a thread of its own. ``await review(request, timeout=...)``, ``review_many``,
    ``submit``, ``subscribe``, ``wait_for_person``, then ``await aclose()``.
    """

    def __init__(self, settings: Settings, *, app: Celery | None = None) -> None:
        super().__init__(settings, ReviewClient(settings, app=app))
