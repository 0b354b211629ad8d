"""What a live worker held when its Redis connection died goes back as soon as Redis answers.

A consumer whose connection dies (Redis restarted, a Sentinel failover) closes its channel,
and the channel hands what it held (reserved, or running) back to the queues. With Redis
down that failed, and kombu left the records in ``unacked`` for the visibility timeout (900 s
by default). Here a restorer thread of the process's own hands them back as soon as Redis
answers: not the channel that connects next (a first attempt): under gevent that may be a
task's greenlet, which Celery kills on a lost connection, between taking tags and restoring.

A hand-back is a *replay* of the try it interrupted (``workers/fleet/replay.py``): a
broker outage never counts towards the poison limit. Each one is counted on the message,
and past ``max_task_replays`` its tries count: no run of outages is that long. The old
delivery's late ack or reject (a task that went on running) is dropped (``disowned``): the
next delivery has the same tag.
After a restart, records nobody held (a take whose reply the kill cut off) go back too.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from workers.fleet.replay import mark

__all__ = [
    "RESTORER",
    "Restorer",
    "disowned",
    "hand_back",
    "interrupted",
    "mark",
    "replays",
    "taken_before",
]

log = logging.getLogger("windags.transport")

#: How often the restorer tries again while Redis does not answer, and after how many
#: failed attempts (ten minutes) it leaves the records to the visibility timeout.
RETRY_EVERY_S: Final = 0.5
GIVE_UP_AFTER: Final = 1200


class RestoringQoS(Protocol):
    """What a hand-back needs of kombu's QoS (``workers/fleet/transport/qos.py``)."""

    channel: Any
    _delivered: Any

    def restore_by_tag(
        self,
        tag: Any,
        client: Any = None,
        leftmost: bool = False,
        *,
        replay: bool = False,
        before: float | None = None,
    ) -> None:
        """Back to its queue; ``replay`` marks a hand-back, ``before`` bounds the record."""

    def lapsed_bound(self, tag: Any) -> float | None:
        """None, or the ``before`` of a delivery whose lease may have lapsed (``leases.py``)."""


#: The attribute of a QoS that holds the tags it handed back.
_HANDED_BACK: Final = "_windags_handed_back"
#: The attribute of a QoS that holds the tags whose try an outage interrupted.
_INTERRUPTED: Final = "_windags_interrupted"


def hand_back(qos: RestoringQoS, client: Any = None) -> None:
    """Restore every delivery ``qos`` holds; what Redis refuses, as soon as it answers.

    kombu's ``restore_unacked``, run as a channel closes (a lost connection, a shutdown).
    From now on ``disowned`` tells this QoS to leave those deliveries alone.
    """
    tags = [tag for tag in qos._delivered if tag is not None]
    qos._delivered.clear()
    handed_back: set[Any] | None = getattr(qos, _HANDED_BACK, None)
    if handed_back is None:
        handed_back = set()
        setattr(qos, _HANDED_BACK, handed_back)
    handed_back.update(tags)
    connection = getattr(qos.channel.connection, "client", None)
    if not tags:
        return
    since = time.time()
    if connection is not None and not _answers(connection):
        RESTORER.keep(connection.clone(), tags, since=since)
        return
    log.info("handing back %d deliveries as the channel closes", len(tags))
    for done, tag in enumerate(tags):
        try:
            # Its own record only, if its lease lapsed: the sweep may have handed it to
            # another worker meanwhile (``workers/fleet/transport/owner_sweep.py``).
            before = qos.lapsed_bound(tag)
            qos.restore_by_tag(tag, client=client, replay=True, before=before)
        except Exception as exc:  # Redis away (or kombu's wrapping of that): retry later
            if connection is None:  # no way back to Redis: after the visibility timeout
                log.error("could not hand back %d deliveries: %r", len(tags) - done, exc)
                return
            RESTORER.keep(connection.clone(), tags[done:], since=since)
            return


def _answers(connection: Any) -> bool:
    """Whether Redis answers now, asked once (a channel's client retried 10 s)."""
    try:
        with connection.clone() as probe:
            probe.ensure_connection(max_retries=0)  # a channel that pings
    except Exception:  # any failure: the restorer retries
        return False
    return True


def taken_before(pipe: Any, qos: Any, tag: Any, before: float) -> bool:
    """Whether the ``unacked`` record of ``tag`` was taken before ``before`` (epoch s).

    A hand-back that waited for Redis restores the delivery it held, never a later one of
    the same message (same tag): the take scores each record with the time it took it.
    """
    # kombu's client prefixes the keys of some commands only; ZSCORE's is spelled whole.
    score = pipe.zscore(qos.channel.broker_key(qos.unacked_index_key), tag)
    return score is not None and float(score) < before


def disowned(qos: object, tag: Any) -> bool:
    """Whether ``qos`` handed ``tag`` back: its late ack or reject must not reach Redis.

    The next delivery of the message has the same tag; the ack of a task that went on
    running (threads) or that Celery cancelled on the connection loss (gevent acks those
    as successes), or a requeue of its retry, deleted or restored that delivery's record.
    Restarted again, Redis then had nothing left to hand back: the review was lost.
    """
    handed_back: set[Any] | None = getattr(qos, _HANDED_BACK, None)
    if not handed_back or tag not in handed_back:
        return False  # kept: Celery may ack or reject one delivery more than once
    log.info("delivery %s was handed back: its late ack or reject is dropped", tag)
    return True


def interrupted(qos: object, tag: Any) -> None:
    """The try of ``tag`` met an outage: its requeue is a replay (``workers/fleet/outage.py``)."""
    tags: set[Any] | None = getattr(qos, _INTERRUPTED, None)
    if tags is None:
        tags = set()
        setattr(qos, _INTERRUPTED, tags)
    tags.add(tag)


def replays(qos: object, tag: Any) -> bool:
    """Whether a requeue of ``tag`` hands back an interrupted try; asked once per reject."""
    tags: set[Any] | None = getattr(qos, _INTERRUPTED, None)
    if not tags or tag not in tags:
        return False
    tags.discard(tag)
    return True


@dataclass
class _Pending:
    connect: Any  # a kombu Connection (not connected) to the broker the tags belong to
    since: float  # when Redis was found away (epoch s): every record was taken before
    tags: list[Any] = field(default_factory=list)
    rounds: int = 0  # attempts that failed so far


class Restorer:
    """Tags this process could not hand back, and the thread that hands them back."""

    def __init__(self, *, every_s: float = RETRY_EVERY_S) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}
        self._thread: threading.Thread | None = None
        self._every_s = every_s
        self._wake = threading.Event()
        self._trying = 0  # tags of the batch the thread is handing back now

    def keep(self, connection: Any, tags: list[Any], *, since: float) -> None:
        """Hand ``tags`` back through ``connection`` (a clone) once Redis answers again."""
        key = connection.as_uri(include_password=False)
        with self._lock:
            pending = self._pending.setdefault(key, _Pending(connection, since))
            pending.since = max(pending.since, since)
            pending.tags.extend(tags)
            count = sum(len(p.tags) for p in self._pending.values())
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="windags-restorer", daemon=True
                )
                self._thread.start()
        self._wake.set()
        log.warning("Redis is away: %d held deliveries go back when it answers", count)

    def count(self) -> int:
        """Tags waiting to be handed back, the batch being tried included."""
        with self._lock:
            return self._trying + sum(len(p.tags) for p in self._pending.values())

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._thread = None
                    return
                key, pending = next(iter(self._pending.items()))
                self._pending.pop(key)
                self._trying = len(pending.tags)
            left = self._restore(pending)
            with self._lock:
                self._trying = 0
                if left:
                    again = self._pending.setdefault(key, _Pending(pending.connect, pending.since))
                    again.since = max(again.since, pending.since)
                    again.tags[:0] = left
                    again.rounds = max(again.rounds, pending.rounds)
            if left:
                self._wake.wait(self._every_s)
                self._wake.clear()

    def _restore(self, pending: _Pending) -> list[Any]:
        """Restore what ``pending`` holds; the tags left when Redis did not answer.

        Any failure is retried (an unreadable record is quarantined, not a failure).
        """
        tags = pending.tags
        done = 0
        try:
            with pending.connect.clone() as connection:
                connection.ensure_connection(max_retries=0)  # fails at once while away
                channel = connection.channel()  # pings: Redis answers
                try:
                    for tag in tags:
                        channel.qos.restore_by_tag(tag, replay=True, before=pending.since)
                        done += 1
                    orphans = _orphans(channel, pending.since)
                    for tag in orphans:
                        channel.qos.restore_by_tag(tag, replay=True, before=pending.since)
                finally:
                    channel.close()
                if orphans:
                    log.warning("handed back %d deliveries nobody held", len(orphans))
        except Exception as exc:  # Redis not back yet (or going away again): retry
            pending.rounds += 1
            if pending.rounds >= GIVE_UP_AFTER:
                log.error("gave up handing back %d deliveries: %r", len(tags) - done, exc)
                return []
            log.debug("hand-back of %d deliveries waits: %r", len(tags) - done, exc)
        if done:
            log.warning("handed back %d deliveries held when Redis went away", done)
        return tags[done:]


def _orphans(channel: Any, since: float) -> list[Any]:
    """After a Redis restart, every record taken before it: no live connection holds them.

    Their holders' connections died with the old server, and each hands back what it
    knew it held; a take whose reply the kill cut off left records nobody knew of, which
    waited for the visibility timeout. None when Redis did not restart after ``since``
    (a Sentinel failover, a network fault: other workers may still hold theirs).
    """
    client = channel.client
    seconds, micros = client.time()
    uptime = float(client.info("server")["uptime_in_seconds"])
    started = float(seconds) + float(micros) / 1e6 - uptime
    # Redis counts its uptime in whole seconds from a whole-second start: ``started`` may
    # be up to a second early. Redis refused a connection at ``since``, so a server that
    # started after ``since - 1`` is a new one; one that kept running started long before.
    if started <= since - 1.0:
        return []
    index = channel.qos.unacked_index_key
    tags: list[Any] = client.zrange(index, f"({since}", "-inf", desc=True, byscore=True)
    return tags


#: This process's restorer: one per process, for every channel of every connection.
RESTORER = Restorer()


def _fresh_after_fork() -> None:
    """A forked child holds none of its parent's deliveries (nor its thread, nor its lock)."""
    global RESTORER  # replaced, never shared with the parent
    RESTORER = Restorer()


os.register_at_fork(after_in_child=_fresh_after_fork)
