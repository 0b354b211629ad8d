"""Celery publishing from asyncio: one sync client, on one thread of its own.

Celery cannot publish from a coroutine (celery#6603), and ``shared_task`` proxies look the
app up per thread, where an executor thread may find a default AMQP app instead. So
every submission goes through one explicit ``ReviewClient`` (its own Celery app), only
ever used from this publisher's thread. Submissions that arrive while it sends are sent
next, together: one pipeline for a burst of concurrent reviews.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from schemas.request import ReviewRequest


class Submitter(Protocol):
    """The sync client's side this publisher needs (``workers.client.ReviewClient``)."""

    def submit_checked(self, validated: list[ReviewRequest]) -> list[str]:
        """Enqueue requests already checked; their review keys, or ``BrokerUnavailableError``."""
        ...

    @property
    def submit_bound_s(self) -> float:
        """The longest a submission waits on a Redis that does not answer."""
        ...

    def close(self) -> None:
        """Release the broker connections."""
        ...


_Pending = tuple[list[ReviewRequest], asyncio.Future[list[str]]]


class ThreadPublisher:
    """Sends review requests through one ``Submitter`` on one thread."""

    def __init__(self, submitter: Submitter) -> None:
        self._submitter = submitter
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="windags-publish")
        self._lock = threading.Lock()
        self._pending: list[_Pending] = []
        self._sending = False

    async def publish(self, requests: list[ReviewRequest]) -> list[str]:
        """Enqueue ``requests`` with the next batch; their review keys."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[list[str]] = loop.create_future()
        with self._lock:
            self._pending.append((requests, done))
            start = not self._sending
            self._sending = True
        if start:
            self._executor.submit(self._drain, loop)
        return await done

    def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the publisher thread: send what is pending, batch after batch, until none."""
        while True:
            with self._lock:
                batch, self._pending = self._pending, []
                if not batch:
                    self._sending = False
                    return
            requests = [request for chunk, _ in batch for request in chunk]
            try:
                keys = self._submitter.submit_checked(requests)
            except Exception as exc:  # the whole pipeline failed: each caller hears it
                for _, done in batch:
                    loop.call_soon_threadsafe(_fail, done, exc)
                continue
            start = 0
            for chunk, done in batch:
                loop.call_soon_threadsafe(_resolve, done, keys[start : start + len(chunk)])
                start += len(chunk)

    async def aclose(self) -> None:
        """Finish what is being sent, then close the sync client on its own thread."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._submitter.close)
        self._executor.shutdown(wait=True)


def _resolve(done: asyncio.Future[list[str]], keys: list[str]) -> None:
    if not done.cancelled():
        done.set_result(keys)


def _fail(done: asyncio.Future[list[str]], exc: Exception) -> None:
    if not done.cancelled():
        done.set_exception(exc)
