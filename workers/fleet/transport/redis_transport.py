"""kombu's Redis transport, with delivery that a kill -9 cannot lose.

kombu takes a message with ``BRPOP`` and only afterwards, in a second command, writes
it to the ``unacked`` hash that redelivery restores from. A worker killed between the
two (or with the ``BRPOP`` reply still in its socket buffer) has taken a message nobody
holds any more: it is gone (kombu#305, celery#4354; a CI run of our worker-death test
lost one review of 330, and tests/integration/test_transport.py shows the window).

This channel waits with ``BLMOVE q q RIGHT RIGHT``, which blocks like ``BRPOP`` but
leaves the message where it is, then pops it and records it as unacked in one Lua
script: at every instant the message is in its queue or in ``unacked``. A take pops as
many messages as the prefetch leaves room for (up to ``TAKE_MAX``), each recorded in the
same script (kombu's second write is skipped). The take goes behind the wait, in the same
write: Redis runs a client's pipelined commands in order, the take as soon as the wait
ends, so a wake is one round trip, not two. After a take that filled all the room asked
for, the queue likely holds more: the next poll sends the take alone, without the wait.
A message arriving at an idle queue wakes every consumer waiting on it; those that lose
the race find nothing and wait again, one round trip each. A take behind a wait is
scored (``unacked_index``) when the wait was sent: early by at most the wait's timeout,
which only brings its visibility-timeout restore forward by as much. It covers channels that
consume one queue with one priority step, which is what our workers are
(``priority_steps`` is ``[0]`` in ``workers.fleet.app``); others (and control replies,
read unacked) keep kombu's ``BRPOP``. Its QoS is in ``workers/fleet/transport/qos.py``.

Nothing a queue holds kills the consumer: the take script quarantines what is no kombu
message at all as it pops it; every other message is read as kombu and Celery will read
it (``workers/fleet/transport/inspection.py``) and, if they could not take it, moved from
``unacked`` to the quarantine in one script (``workers/fleet/transport/quarantine.py``). An
``unacked`` record kombu could not restore is quarantined by the restore itself.

Its Redis clients, and every key under the deployment's prefix: ``clients.py``.

Each record the take writes names the taking process (its owner), whose lease lives while
it does: a worker killed with SIGKILL has its deliveries restored once its lease expires,
not after the visibility timeout (``leases.py``, ``owner_sweep.py``).

Remote control's broadcasts (ping, inspect) come through Redis restarts on every pool,
gevent's included: ``workers/fleet/transport/broadcast.py``.
"""

from __future__ import annotations

import logging
from queue import Empty
from time import monotonic, time
from typing import Any, Final

from kombu.transport import redis as kombu_redis
from kombu.utils.encoding import bytes_to_str
from kombu.utils.json import dumps
from kombu.utils.objects import cached_property
from redis.exceptions import NoScriptError, ResponseError

from workers.fleet.transport import broadcast, clients, eta, inspection, leases, settle
from workers.fleet.transport.inspection import Refused, Rules, inspect_message
from workers.fleet.transport.leases import Lease, Taken
from workers.fleet.transport.qos import QoS
from workers.fleet.transport.quarantine import RAW_KEPT_BYTES, TAKE_LUA, QuarantineStream
from workers.keys import Keys

log = logging.getLogger("windags.transport")

_DEFAULT_KEYS = Keys("windags")

#: Most messages one take pops (never more than the prefetch leaves room for): a gevent
#: worker's consumer shares its thread with a hundred tasks, and fetching one message per
#: turn left it far below its concurrency (``bench.stage1_io``).
TAKE_MAX = 16
#: The take behind a wait found its script gone (``SCRIPT FLUSH``, a restarted Redis).
_SCRIPT_LOST: Final = object()


class Channel(clients.ClientsChannel):
    """A Redis channel whose deliveries are never held only in the worker's memory."""

    QoS = QoS
    from_transport_options = (  # type: ignore[assignment]  # kombu's tuple, extended
        *kombu_redis.Channel.from_transport_options,
        "quarantine_key",
        "quarantine_retention_s",
        "accepted_tasks",
        "task_queues",
        "max_message_bytes",
        "max_eta_s",
        "reserved_keys",
        "lease_key_prefix",
        "owner_sweep_key",
    )
    #: Where refused messages go, and for how long (transport options; ``celery_config``).
    quarantine_key: str = Keys("windags").quarantine
    quarantine_retention_s: int = 7 * 24 * 3600
    #: Task names accepted on ``task_queues``; elsewhere (control replies) envelopes only.
    accepted_tasks: tuple[str, ...] = ()
    task_queues: tuple[str, ...] = ()
    max_message_bytes: int = inspection.MAX_BYTES
    max_eta_s: float = eta.MAX_ETA_S
    #: Per task queue, the set of its taken, unacked delivery tags (``Keys.reserved``, under
    #: kombu's prefix): the take adds to it, an ack or a restore removes (``qos.py``).
    reserved_keys: dict[str, str] = {}  # noqa: RUF012  # a transport option, never mutated
    #: Under kombu's prefix: the lease of an owner is this and its id (``Keys.lease``), and
    #: the key that lets one owner sweep run per interval (``Keys.owner_sweep``).
    lease_key_prefix: str = _DEFAULT_KEYS.lease("").removeprefix(_DEFAULT_KEYS.broker)
    owner_sweep_key: str = _DEFAULT_KEYS.owner_sweep.removeprefix(_DEFAULT_KEYS.broker)
    _lease: Lease | None = None  # the lease this channel's takes name (``_owner``)
    _waiting_on: str | None = None  # the BLMOVE wait's queue; None under kombu's BRPOP
    _taking = False  # the poll in flight is the take script itself, not the wait
    _busy = False  # the last take filled the room it asked for: take again without waiting
    _asked = 1  # how many messages the take in flight asked for
    _at = (0.0, 0.0)  # when the take was sent: its index score and ``monotonic()``

    @cached_property
    def _recorded(self) -> dict[str, Taken]:  # delivery tag the take script recorded -> when
        return {}

    def rules(self, queue: str) -> Rules:
        """What this channel delivers from ``queue`` (the rest is quarantined)."""
        tasks = frozenset(self.accepted_tasks if queue in self.task_queues else ())
        return Rules(tasks, self.max_message_bytes, self.max_eta_s)

    @cached_property
    def quarantine(self) -> QuarantineStream:
        """The deployment's quarantine stream."""
        return QuarantineStream(self.quarantine_key, int(self.quarantine_retention_s))

    def recorded_by_take(self, delivery_tag: str) -> Taken | None:
        """How the take script recorded ``delivery_tag`` (its queue, when), else None (once)."""
        taken: Taken | None = self._recorded.pop(delivery_tag, None)
        return taken

    def lease_key(self, owner: str) -> str:
        """The Redis key of ``owner``'s lease, prefix included."""
        return self.broker_key(f"{self.lease_key_prefix}{owner}")

    def lease_covers(self, taken: Taken) -> bool:
        """Whether this channel's lease held, without a gap, since ``taken`` (``leases.py``)."""
        return self._lease is not None and self._lease.covers(taken.at)

    def _owner(self) -> str:
        """This process's owner id; its lease is set before the channel's first take."""
        registry = leases.LEASES  # replaced in a forked child: another owner
        key = self.lease_key(registry.owner)
        if self._lease is None or self._lease.key != key:
            self._lease = registry.join(key, self, self.scripts_client())
        return registry.owner

    def _can_take(self, queues: list[str]) -> bool:
        # Not for control replies: consumed without acks, the take's record would linger.
        return (
            len(queues) == 1
            and (not self.task_queues or queues[0] in self.task_queues)
            and list(self.priority_steps) == [0]
            and bool(self.ack_emulation)
        )

    def _brpop_start(self, timeout: float | None = None) -> None:
        queues = self._queue_cycle.consume(len(self.active_queues))
        if not queues:
            return
        if not self._can_take(queues):
            self._waiting_on = None
            super()._brpop_start(timeout)
            return
        queue = self._waiting_on = queues[0]
        wait = self.brpop_timeout if timeout is None else timeout
        self._in_poll = self.client.connection
        self._brpop_sent_at = monotonic()  # type: ignore[assignment]
        self._taking, self._busy = self._busy and not self._closing, False
        # Sent as is: the keys are spelled whole, kombu prefixes none.
        self._asked = self._take_count()
        keys, args, self._at = self._take_call(queue, self._asked)
        take = ("EVALSHA", self.script(TAKE_LUA).sha, len(keys), *keys, *args)
        connection = self.client.connection
        if self._taking:
            connection.send_command(*take)
            return
        key = self.broker_key(queue)
        wait_for = ("BLMOVE", key, key, "RIGHT", "RIGHT", wait or 0)
        connection.send_packed_command(connection.pack_commands([wait_for, take]))

    def _brpop_read(self, **options: Any) -> bool:
        queue = self._waiting_on
        self._waiting_on = None
        command = "BRPOP" if queue is None else "EVALSHA" if self._taking else "BLMOVE"
        try:
            try:
                woken, taken = self._replies(command, **options)
            except NoScriptError:  # Redis restarted: the next wait's take loads it again
                raise Empty() from None
            except self.connection_errors:
                self.client.connection.disconnect()
                if self._closing:  # kombu's close reads the wait first: its restore must run
                    raise Empty() from None
                raise
        finally:
            self._in_poll = False
            self._flush_brpop_reauth()
        if queue is None:  # kombu's BRPOP: [list, message], popped and not yet recorded
            if woken is None:  # nothing came (b"" is a message)
                raise Empty()
            queue = bytes_to_str(woken[0]).rsplit(self.sep, 1)[0]
            self._queue_cycle.rotate(queue)
            return self._deliver_checked(woken[1], queue, None, None)
        if taken is _SCRIPT_LOST:  # woken, but Redis lost the script (``_replies``)
            if woken is None or self._closing:
                raise Empty()
            count = self._take_count()
            return self._taken(queue, *self._take_at(queue, count), count)  # loads it again
        # Popped and recorded, by the take alone or behind the wait: delivered even while
        # closing (kombu's close restores what was delivered).
        taken = woken if command == "EVALSHA" else taken
        return self._taken(queue, taken, self._at, self._asked)

    def _replies(self, command: str, **options: Any) -> tuple[Any, Any]:
        """The wait's reply, and the reply of the take behind a ``BLMOVE`` (else None).

        ``_SCRIPT_LOST`` for a take whose script Redis forgot. A wait refused (``READONLY``
        on a demoted primary) leaves the take's reply unread: the connection is dropped
        rather than left to hand that reply to the next command.
        """
        connection = self.client.connection
        try:
            woken = self.client.parse_response(connection, command, **options)
        except ResponseError:
            if command == "BLMOVE":
                connection.disconnect()
            raise
        if command != "BLMOVE":
            return woken, None
        try:  # the take ran as soon as the wait ended
            return woken, self.client.parse_response(connection, "EVALSHA", **options)
        except NoScriptError:
            return woken, _SCRIPT_LOST

    def _taken(
        self, queue: str, taken: list[list[Any]] | None, at: tuple[float, float], asked: int
    ) -> bool:
        """Deliver what one take of ``asked`` messages, made ``at``, popped from ``queue``.

        Empty when it found nothing (another consumer took it first, or the queue ran
        dry); when it found all it asked for, the next poll takes without waiting.
        """
        self._busy = bool(taken) and len(taken or ()) >= asked
        if not taken:
            raise Empty()
        self._queue_cycle.rotate(queue)
        delivered = False
        # A connection error mid-way leaves the rest recorded in ``unacked``: redelivered
        # after the visibility timeout, as after a kill.
        for recorded, raw, detail in taken:
            if not recorded:
                log.error("quarantined a message of %s: %s", queue, bytes_to_str(detail))
                continue
            try:
                took = Taken(queue, *at)
                delivered = (
                    self._deliver_checked(raw, queue, bytes_to_str(detail), took) or delivered
                )
            except Empty:  # refused, and quarantined
                continue
        if not delivered:
            raise Empty()
        return True

    def _put(self, queue: str, message: Any, **kwargs: Any) -> None:
        """Send ``message``; a task's last hop acks its delivery in the same transaction.

        (``workers/fleet/transport/settle.py``; batches and expiring queues keep kombu's.)
        """
        batched = "_publish_batch" in kwargs or (self._expires and queue in self._expires)
        delivery = None if batched else settle.took()
        if delivery is None:
            super()._put(queue, message, **kwargs)
            return
        key = self._q_for_pri(queue, self._get_message_priority(message, reverse=False))
        with self.conn_or_acquire() as client:
            pipe = client.pipeline()  # MULTI/EXEC; kombu's client prefixes each key
            pipe.lpush(key, dumps(message))
            pipe.hdel(self.unacked_key, delivery.tag).zrem(self.unacked_index_key, delivery.tag)
            reserved = self.reserved_keys.get(delivery.queue)
            if reserved is not None:
                pipe.zrem(reserved, delivery.tag)
            pipe.execute()
        settle.settled(delivery)

    def _take_count(self) -> int:
        """Messages one take may pop: the room the prefetch leaves, at most ``TAKE_MAX``."""
        room = self.qos.can_consume_max_estimate()
        return max(1, min(TAKE_MAX, room)) if room else 1

    def _deliver_checked(
        self, raw: bytes, queue: str, tag: str | None, taken: Taken | None
    ) -> bool:
        """Deliver ``raw`` if kombu and Celery can take it; else quarantine it, once.

        ``tag`` and ``taken``: the take script recorded it (else kombu's ``BRPOP`` took it).
        """
        try:
            verdict = inspect_message(raw, self.rules(queue))
        except Exception as exc:  # a gap in the inspection must not kill the consumer
            verdict = Refused(f"inspection failed: {type(exc).__name__}: {exc}"[:300])
        if isinstance(verdict, Refused):
            self._refuse(raw, queue, verdict.reason, tag)
            raise Empty()
        if tag is not None and verdict.payload["properties"]["delivery_tag"] != tag:
            # The take read the tag without decoding the message (``TAKE_LUA``).
            held = verdict.payload["properties"]["delivery_tag"]
            reason = f"its delivery tag is {str(held)[:100]!r}, but it was taken as {tag!r}"
            self._refuse(raw, queue, reason, tag)
            raise Empty()
        if verdict.repairs:
            log.warning("a message of %s repaired: %s", queue, "; ".join(verdict.repairs))
        if tag is not None and taken is not None:
            self._recorded[tag] = taken
        try:
            self.connection._deliver(verdict.payload, queue)
        except self.connection_errors:
            raise
        except Exception as exc:  # Celery refused it after all: quarantine, never crash
            log.exception("a message of %s failed in delivery", queue)
            held = verdict.payload["properties"]["delivery_tag"]  # recorded by now
            self._recorded.pop(held, None)
            self.qos._delivered.pop(held, None)
            self._refuse(raw, queue, f"delivery failed: {type(exc).__name__}: {exc}"[:300], held)
        return True

    def _refuse(self, raw: bytes, queue: str, reason: str, tag: str | None) -> None:
        self.file_refused(raw, queue, reason, tag=tag)
        log.error("quarantined a message of %s: %s", queue, reason)

    def file_refused(self, raw: bytes, queue: str, reason: str, *, tag: str | None = None) -> str:
        """Quarantine ``raw``; with ``tag``, its ``unacked`` record goes in the same script."""
        held = reserved = None
        if tag is not None:
            held = (self.broker_key(self.unacked_key), self.broker_key(self.unacked_index_key))
            reserved = self._reserved_key(queue)
        client = self.scripts_client()
        entry_id: str = self.quarantine.put(
            client, raw, queue, reason, tag=tag or "", unacked=held, reserved=reserved
        )
        return entry_id

    def _reserved_key(self, queue: str) -> str | None:
        name = self.reserved_keys.get(queue)
        return None if name is None else self.broker_key(name)

    def _take(self, queue: str, count: int = 1) -> list[list[Any]] | None:
        """Pop up to ``count`` messages, each recorded as unacked, with its owner, in one step.

        One ``[recorded, message, tag or reason]`` per message; None when it was empty.
        """
        return self._take_at(queue, count)[0]

    def _take_at(
        self, queue: str, count: int
    ) -> tuple[list[list[Any]] | None, tuple[float, float]]:
        """``_take``, and when it was made (``_take_call``)."""
        keys, args, at = self._take_call(queue, count)
        taken: list[list[Any]] | None = self.script(TAKE_LUA)(keys=keys, args=args)
        return taken, at

    def _take_call(
        self, queue: str, count: int
    ) -> tuple[list[str], list[Any], tuple[float, float]]:
        """``TAKE_LUA``'s keys and arguments, and when the take is made.

        ``at``: its index score (epoch s) and ``monotonic()``, read after this process's
        lease is set (``_owner``), as ``leases.Lease.covers`` needs.
        """
        owner = self._owner()
        at = (time(), monotonic())
        keys = [self.broker_key(name) for name in (queue, self.unacked_key, self.unacked_index_key)]
        reserved = self._reserved_key(queue)
        retention_ms = self.quarantine.retention_s * 1000
        return (
            [*keys, self.quarantine.key, *filter(None, [reserved])],
            [repr(at[0]), queue, RAW_KEPT_BYTES, retention_ms, count, owner],
            at,
        )


class Transport(broadcast.BroadcastTransport):
    """The Redis transport with ``Channel`` above."""

    Channel = Channel


#: ``broker_transport`` for ``redis://`` URLs (TLS and socket URLs keep kombu's own).
TRANSPORT = f"{__name__}:Transport"
