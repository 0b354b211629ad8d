"""The DAG runtime's client for asyncio: await one node's verdict, many, or a person's.

``workers.client.AsyncReviewClient`` is this class with the sync ``ReviewClient`` as its
publisher. Waiting costs no connection per waiter: one reader answers every wait of the
client (``workers.runtime.waiters``). Submissions go through the sync client on a thread
of its own (``workers.runtime.publisher``).

Every wait is safe to repeat: a review (or a person's verdict) already on the stream
answers at once, and a review already published is not sent again, so a runtime that
crashed, resumed from a checkpoint or retried a step asks the fleet nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from typing import Any, TypeVar

import redis

from schemas.request import ReviewRequest, review_key
from schemas.result import ReviewResult
from workers.errors import BrokerUnavailableError, ReviewTimeoutError
from workers.intake import request_from_obj
from workers.runtime.aio_redis import command_client, reader_client
from workers.runtime.publisher import Submitter, ThreadPublisher
from workers.runtime.subscription import AsyncDelivery, AsyncSubscription
from workers.runtime.verdicts import PersonDecided, ReviewPayload, review_outcome
from workers.runtime.waiters import Expectation, StreamWaiters
from workers.settings import Settings

T = TypeVar("T")
#: Connections for commands (look-ups, acks); waiters queue for them, never open more.
COMMAND_CONNECTIONS = 8
#: The reader's ``XREAD`` block: below the socket timeout (redis-py #2807), short enough to
#: notice a closed client.
READ_BLOCK_MS = 1000


class AsyncClient:
    """Submits reviews and awaits their verdicts on redis.asyncio, from one event loop."""

    def __init__(self, settings: Settings, submitter: Submitter) -> None:
        self.settings = settings
        self.sent = 0
        """Reviews this client sent to the fleet."""
        self.found = 0
        """Reviews asked for that were already on the stream, so not sent again."""
        self._submitter = submitter
        self._publisher = ThreadPublisher(submitter)
        self._redis = command_client(settings, max_connections=COMMAND_CONNECTIONS)
        self._reader = reader_client(settings)
        block_ms = min(READ_BLOCK_MS, int((settings.redis_socket_timeout_s - 1) * 1000))
        self._waiters = StreamWaiters(
            self._redis,
            self._reader,
            settings.keys,
            block_ms=block_ms,
            outage_bound_s=submitter.submit_bound_s,
        )

    @property
    def submit_bound_s(self) -> float:
        """The longest a call waits on an unanswering Redis before ``BrokerUnavailableError``.

        The sync client's own bound (``ReviewClient.submit_bound_s``), for look-ups and
        submission together, and for an outage met while waiting.
        """
        return self._submitter.submit_bound_s

    async def submit(self, request: ReviewRequest | dict[str, Any]) -> str:
        """Enqueue one review; its review key (``dag_id:node_id:attempt``)."""
        [key] = await self.submit_many([request])
        return key

    async def submit_many(self, requests: Iterable[ReviewRequest | dict[str, Any]]) -> list[str]:
        """Validate every request, then enqueue them together; their review keys."""
        validated = [self._validated(r) for r in requests]
        async with self._bounded():
            keys = await self._publisher.publish(validated)
        self.sent += len(keys)
        return keys

    async def review(
        self, request: ReviewRequest | dict[str, Any], *, timeout: float
    ) -> ReviewResult:
        """Submit ``request`` unless already reviewed, and wait for its verdict.

        Raises:
            InvalidRequest: not a valid request (nothing was sent).
            ReviewFailedError: the fleet's error entry for it (``error`` holds it).
            ReviewTimeoutError: no verdict within ``timeout`` seconds of the submission;
                the review is still in flight, and awaiting it again is allowed.
            BrokerUnavailableError: Redis did not answer within ``submit_bound_s``.
        """
        [payload] = await self.review_many([request], timeout=timeout)
        return review_outcome(payload)

    async def review_many(
        self, requests: Iterable[ReviewRequest | dict[str, Any]], *, timeout: float
    ) -> list[ReviewPayload]:
        """Submit the requests not yet reviewed, together; every one's result or error.

        In the requests' order; an error entry comes back as data here (``review`` raises
        it). A deadline raises ``ReviewTimeoutError`` naming every review not back.
        """
        validated = [self._validated(r) for r in requests]
        waits: list[Expectation[ReviewPayload]] = []
        try:
            async with self._bounded():
                for request in validated:
                    waits.append(
                        await self._waiters.expect_review(request.dag_id, request.review_key)
                    )
                unsent = [r for r, w in zip(validated, waits, strict=True) if not w.future.done()]
                self.found += len(validated) - len(unsent)
                if unsent:
                    await self._publisher.publish(unsent)
                    self.sent += len(unsent)
            return await _gathered(waits, timeout)
        finally:
            for wait in waits:
                wait.close()

    async def wait_for_person(
        self, dag_id: str, node_id: str, attempt: int, *, timeout: float
    ) -> PersonDecided:
        """A person's verdict on an escalated attempt and the decision recomputed with it.

        Recorded on the review page, with ``windags-eval verdict`` or ``record_verdict``;
        one already recorded answers at once.

        Raises:
            ReviewTimeoutError: no verdict within ``timeout`` seconds; waiting again is
                allowed.
            BrokerUnavailableError: Redis did not answer within ``submit_bound_s``.
        """
        key = review_key(dag_id, node_id, attempt)
        async with self._bounded():
            wait = await self._waiters.expect_person(dag_id, key)
        try:
            [decided] = await _gathered([wait], timeout)
            return decided
        finally:
            wait.close()

    def subscribe(
        self, dag_id: str, group: str, consumer: str, *, claim_idle_ms: int = 30_000
    ) -> AsyncIterator[AsyncDelivery]:
        """The DAG's results for this consumer of ``group``; ``await delivery.ack()`` each."""
        return aiter(self.subscription(dag_id, group, consumer, claim_idle_ms=claim_idle_ms))

    def subscription(
        self, dag_id: str, group: str, consumer: str, *, claim_idle_ms: int = 30_000
    ) -> AsyncSubscription:
        """The consumer-group subscription itself, for callers that poll."""
        return AsyncSubscription(
            self._redis,
            self.settings.keys.results(dag_id),
            group=group,
            consumer=consumer,
            claim_idle_ms=claim_idle_ms,
        )

    async def aclose(self) -> None:
        """Stop the reader (open waits end with ``ClientClosedError``), release connections."""
        await self._waiters.aclose()
        await self._publisher.aclose()
        await self._reader.aclose(close_connection_pool=True)
        await self._redis.aclose(close_connection_pool=True)

    async def __aenter__(self: T) -> T:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    @contextlib.asynccontextmanager
    async def _bounded(self) -> AsyncIterator[None]:
        """Look-ups and submission end within the sync client's bound, as its own do."""
        where = f"redis at {self.settings.state_url}"
        try:
            async with asyncio.timeout(self.submit_bound_s):
                yield
        except TimeoutError as exc:
            raise BrokerUnavailableError(
                f"{where} did not answer within {self.submit_bound_s:g} s"
            ) from exc
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise BrokerUnavailableError(f"{where} unavailable: {exc}") from exc

    def _validated(self, request: ReviewRequest | dict[str, Any]) -> ReviewRequest:
        obj: Any = (
            request.model_dump(mode="json", by_alias=True)
            if isinstance(request, ReviewRequest)
            else request
        )
        return request_from_obj(
            obj,
            max_request_bytes=self.settings.max_request_bytes,
            max_output_chars=self.settings.max_output_chars,
        )


async def _gathered(waits: list[Expectation[T]], timeout: float) -> list[T]:
    """Every wait's answer, in order; ``ReviewTimeoutError`` naming those not back in time.

    A wait that failed (an outage, a closed client) raises its error, the first one's.
    """
    futures = [w.future for w in waits]
    if not all(f.done() for f in futures):
        await asyncio.wait(futures, timeout=max(0.0, timeout))
    failed = [exc for f in futures if f.done() and (exc := f.exception()) is not None]
    if failed:
        raise failed[0]
    late = tuple(w.key for w in waits if not w.future.done())
    if late:
        raise ReviewTimeoutError(late, timeout)
    return [f.result() for f in futures]
