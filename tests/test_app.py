"""The Celery task base: connection faults requeue the message, never delete it."""

from __future__ import annotations

from typing import Any

import kombu.exceptions
import pytest
import redis
from celery.exceptions import Reject, SoftTimeLimitExceeded

from workers.fleet.app import create_app
from workers.fleet.outage import Interrupted
from workers.settings import Settings

APP = create_app(Settings(redis_url="redis://127.0.0.1:1/0"))


def _task_raising(exc: BaseException) -> Any:
    def body() -> None:
        raise exc

    return APP.task(name=f"test.raises.{id(exc)}")(body)


@pytest.mark.parametrize(
    ("fault", "replay"),
    [
        # An outage interrupted the try: its message goes back as a replay of it.
        (redis.ConnectionError("Redis went away"), True),
        (kombu.exceptions.OperationalError("no broker"), True),
        # Met outside the handlers' guard (a replaced prefork child building its judge).
        (SoftTimeLimitExceeded(), False),
    ],
)
def test_a_connection_fault_escaping_a_task_requeues_its_message(
    fault: Exception, replay: bool
) -> None:
    with pytest.raises(Reject) as raised:
        _task_raising(fault)()
    assert raised.value.requeue is True
    assert raised.value.reason is fault
    assert isinstance(raised.value, Interrupted) is replay


def test_a_retry_that_could_not_be_published_requeues_instead_of_deleting() -> None:
    """``Task.retry`` answers a failed publish with ``Reject(requeue=False)``: a lost review."""
    unpublished = kombu.exceptions.OperationalError("Error 111 connecting to Redis")
    with pytest.raises(Reject) as raised:
        _task_raising(Reject(unpublished, requeue=False))()
    assert raised.value.requeue is True
    assert raised.value.reason is unpublished
    assert not isinstance(raised.value, Interrupted)  # it is that retry: it counts


def test_any_other_reject_is_left_as_the_task_meant_it() -> None:
    with pytest.raises(Reject) as raised:
        _task_raising(Reject("not a connection fault", requeue=False))()
    assert raised.value.requeue is False


def test_collaborators_are_built_once_however_many_tasks_ask_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A hundred greenlets finding no collaborators must not each build them (and import the
    SDK's HTTP stack at once: a half-imported module raised AttributeError in the others)."""
    import threading
    import time

    from workers.fleet import worker_deps

    built: list[Settings] = []

    def slow_build(settings: Settings) -> Any:
        built.append(settings)
        time.sleep(0.05)  # long enough for every other caller to arrive meanwhile
        return object()

    monkeypatch.setattr(worker_deps, "build_deps", slow_build)
    app = create_app(Settings(redis_url="redis://127.0.0.1:6379/15"))
    got: list[object] = []
    callers = [
        threading.Thread(target=lambda: got.append(worker_deps.deps_of(app))) for _ in range(8)
    ]
    try:
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join()
        assert len(built) == 1
        assert len(got) == 8 and all(g is got[0] for g in got)
    finally:
        worker_deps._deps.pop(id(app), None)
