"""Which write settles a delivery: only a held one, only once, only the task's own.

The transport and the publish script are exercised on real Redis in
``tests/integration/test_settled_acks.py``; here, the bookkeeping that decides.
"""

from __future__ import annotations

import threading

from workers.fleet.transport import settle
from workers.settings import Settings


def _vouched() -> bool:
    return True


def test_a_held_delivery_is_settled_by_one_write_and_acked_in_memory_once() -> None:
    settle.hold("t1", "stage1", _vouched)
    with settle.running("t1"):
        delivery = settle.take()
        assert delivery == settle.Delivery("t1", "stage1")
        assert settle.take() is None  # one write settles it, not two
        settle.settled(delivery)
    assert settle.release("t1") is True  # Celery's ack: in memory only
    assert settle.release("t1") is False  # a second ack or reject is Celery's own


def test_a_delivery_this_process_does_not_hold_is_left_to_celery() -> None:
    """A prefork child's task: its parent holds the delivery, and acks it."""
    with settle.running("not-held"):
        assert settle.take() is None
    with settle.running(None):
        assert settle.take() is None


def test_only_an_armed_broker_write_takes_the_delivery() -> None:
    settle.hold("t2", "router", _vouched)
    with settle.running("t2"):
        assert settle.took() is None  # a plain send (a retry): not armed
        with settle.arm():
            assert settle.took() == settle.Delivery("t2", "router")
            assert settle.took() is None
    assert settle.release("t2") is False  # never marked settled: Celery acks in Redis


def test_a_write_settled_for_a_released_delivery_is_not_remembered() -> None:
    """Handed back meanwhile: nothing stays behind in the process for ever."""
    settle.hold("t3", "stage1", _vouched)
    with settle.running("t3"):
        delivery = settle.take()
    assert delivery is not None
    settle.release("t3")
    settle.settled(delivery)
    assert settle.release("t3") is False


def test_a_delivery_whose_lease_lapsed_is_left_to_celerys_careful_ack() -> None:
    """Restored and taken again under the same tag, maybe: only its own record may go."""
    settle.hold("t5", "stage1", lambda: False)
    with settle.running("t5"):
        assert settle.take() is None
    assert settle.release("t5") is False


def test_the_running_delivery_is_each_threads_own() -> None:
    settle.hold("t4", "stage1", _vouched)
    seen: list[settle.Delivery | None] = []
    with settle.running("t4"):
        other = threading.Thread(target=lambda: seen.append(settle.take()))
        other.start()
        other.join()
        assert settle.take() is not None
    assert seen == [None]
    settle.release("t4")


def test_the_state_shares_the_brokers_redis_unless_it_has_its_own() -> None:
    assert Settings(redis_url="redis://h.invalid:6379/0").state_on_broker
    assert Settings(
        redis_url="redis://h.invalid:6379/0", state_redis_url="redis://h.invalid:6379/0"
    ).state_on_broker
    assert not Settings(
        redis_url="redis://h.invalid:6379/0", state_redis_url="redis://other.invalid:6379/0"
    ).state_on_broker
