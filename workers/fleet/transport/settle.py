"""A delivery acknowledged in the same Redis step as its task's last write.

With late acks a task's last write (Stage 1's hop to the router, the router's published
result) and its ack were two round trips: the write, then ``MULTI HDEL ZREM ZREM EXEC``.
Here the write carries the ack: the hop's ``LPUSH`` goes in one transaction with the
removal of the delivery's ``unacked`` record (``redis_transport.Channel._put``), and the
publish script removes it when it adds the entry (``workers.results.booking``). Both
happen or neither, so nothing is acked unrun and a kill between write and ack can no
longer run the task twice. Celery's ack that follows is then bookkeeping in memory only.

Only a delivery this process's consumer holds is settled so (``hold``): the threads and
gevent pools, whose tasks run beside their consumer. A prefork child's task does not see
its parent's deliveries and leaves the ack to Celery, as before. A delivery is settled by
the task's *last* write only: once its record is gone nothing can bring the message back,
so a write that anything else must follow never carries it (``publish`` settles only a
result whose bookkeeping the script completes).

The write removes the record by its tag. A delivery whose owner's lease lapsed since its
take (``leases.py``) may have been restored and taken again under the same tag, so it is
not settled (``hold``'s ``vouched``): Celery's ack then removes only its own record. Were
the lease to lapse in the instant between that check and the write, the write would remove
the newer delivery's record with the work that delivery repeats already done: nothing is
lost, and the review is published once.

Thread-local is greenlet-local under gevent, whose pool patches ``threading``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

__all__ = [
    "Delivery",
    "arm",
    "hold",
    "release",
    "running",
    "settled",
    "take",
    "took",
]


@dataclass(frozen=True, slots=True)
class Delivery:
    """The message a running task came in, as the broker recorded it."""

    tag: str
    """kombu's delivery tag: the field of its ``unacked`` record."""
    queue: str
    """The queue it was taken from (its reserved set is that queue's)."""


class _Local(threading.local):
    running: Delivery | None = None
    """The task's own delivery, while its handler runs (``running``)."""
    armed: Delivery | None = None
    """The delivery the next broker write of this task settles (``arm``)."""


_local: Final = _Local()
#: Delivery tags this process's consumer holds (taken, not yet acked, rejected or restored),
#: each with the queue it was taken from and whether its owner's lease still vouches for it.
_held: Final[dict[str, tuple[str, Callable[[], bool]]]] = {}
#: Held tags whose record a task's write removed: their ack stays in memory.
_settled: Final[set[str]] = set()


def hold(tag: str, queue: str, vouched: Callable[[], bool]) -> None:
    """The consumer took ``tag`` from ``queue``; settle it only while ``vouched()``."""
    _held[tag] = (queue, vouched)


def release(tag: str) -> bool:
    """The consumer is done with ``tag``; whether a task's write already settled it."""
    _held.pop(tag, None)
    if tag in _settled:
        _settled.discard(tag)
        return True
    return False


@contextmanager
def running(tag: object) -> Iterator[None]:
    """The task of delivery ``tag`` runs: its last write may settle it."""
    held = _held.get(tag) if isinstance(tag, str) else None
    _local.running = None if held is None else Delivery(str(tag), held[0])
    try:
        yield
    finally:
        _local.running = _local.armed = None


def take() -> Delivery | None:
    """The running task's delivery, for a write that completes its work; once.

    None when its owner's lease no longer vouches for it: Celery's ack is then careful.
    """
    delivery, _local.running = _local.running, None
    held = None if delivery is None else _held.get(delivery.tag)
    return delivery if held is not None and held[1]() else None


@contextmanager
def arm() -> Iterator[None]:
    """The broker write inside settles the running task's delivery (``took`` it)."""
    _local.armed = take()
    try:
        yield
    finally:
        _local.armed = None


def took() -> Delivery | None:
    """The delivery the broker write being made settles, if armed; once."""
    delivery, _local.armed = _local.armed, None
    return delivery


def settled(delivery: Delivery) -> None:
    """``delivery``'s record went with a write: Celery's ack of it stays in memory."""
    if delivery.tag in _held:
        _settled.add(delivery.tag)
