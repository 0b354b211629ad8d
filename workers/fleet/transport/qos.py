"""kombu's Redis QoS for ``redis_transport.py``: no second unacked write, safe restore.

The take script already recorded each delivery in ``unacked``; kombu's QoS would write it
again. A restore of a record kombu cannot read quarantines it instead of raising or
dropping it with a log line. The restore sweep also hands back, at once, what dead owners
held (``owner_sweep.py``); so an ack or reject of a delivery whose owner's lease may have
lapsed since its take touches only the record that take wrote (``leases.py``).
"""

from __future__ import annotations

import logging
from typing import Any, Final

from kombu.transport import redis as kombu_redis
from kombu.transport.virtual import QoS as VirtualQoS
from kombu.utils.encoding import bytes_to_str
from kombu.utils.objects import cached_property

from workers.fleet import recovery
from workers.fleet.transport import settle
from workers.fleet.transport.inspection import Refused, unacked_record
from workers.fleet.transport.leases import Taken
from workers.fleet.transport.owner_sweep import restore_dead_owners

log = logging.getLogger("windags.transport")

#: Oldest reserved tags checked per set and sweep (a sweep runs every few seconds).
RECONCILE_MAX: Final = 1000

#: KEYS: the unacked hash, then the reserved sets. ARGV: most tags checked per set.
_RECONCILE_LUA: Final = """
local removed = 0
for i = 2, #KEYS do
  for _, tag in ipairs(redis.call('ZRANGE', KEYS[i], 0, tonumber(ARGV[1]) - 1)) do
    if redis.call('HEXISTS', KEYS[1], tag) == 0 then
      redis.call('ZREM', KEYS[i], tag)
      removed = removed + 1
    end
  end
end
return removed
"""


class QoS(kombu_redis.QoS):
    """kombu's QoS, minus the unacked write the take script made, plus a safe restore."""

    @cached_property
    def _taken_from(self) -> dict[str, Taken]:  # delivery tag -> how our take recorded it
        return {}

    def append(self, message: Any, delivery_tag: str) -> None:
        """Track the delivery; write it to Redis unless it is already there."""
        taken = self.channel.recorded_by_take(delivery_tag)
        if taken is not None:
            self._taken_from[delivery_tag] = taken
            VirtualQoS.append(self, message, delivery_tag)
            settle.hold(delivery_tag, taken.queue, lambda: self.channel.lease_covers(taken))
        else:
            super().append(message, delivery_tag)

    def _remove_from_indices(self, delivery_tag: Any, pipe: Any = None) -> Any:
        """The tag out of ``unacked`` (kombu's) and out of the reserved sets: an ack, a restore.

        A tag this channel's take recorded is in its queue's set only: one ``ZREM``, not
        one per queue. Any other (a sweep's, or after a retried transaction) leaves all.
        """
        pipe = super()._remove_from_indices(delivery_tag, pipe)
        reserved = self.channel.reserved_keys
        taken = self._taken_from.pop(bytes_to_str(delivery_tag), None)
        queue = None if taken is None else taken.queue
        for key in [reserved[queue]] if queue in reserved else reserved.values():
            pipe.zrem(key, delivery_tag)
        return pipe

    def restore_visible(self, start: int = 0, num: int = 10, interval: int = 10) -> None:
        """Kombu's restore sweep; then dead owners' deliveries, and the reserved sets' tidy.

        What a worker killed with SIGKILL held goes back once its lease is gone, not after
        the visibility timeout (``owner_sweep.py``). The reserved sets lose tags ``unacked``
        no longer holds: the take records a tag in both in one script and an ack or a
        restore removes it from both in one transaction, so a tag without its record was
        left by some other way out of ``unacked`` (kombu's own QoS, which a worker ran
        after a Sentinel failover until its connections kept our transport:
        ``connection.py``); KEDA must not count it in flight for ever.
        """
        super().restore_visible(start, num, interval)
        keys = [self.channel.broker_key(k) for k in self.channel.reserved_keys.values()]
        if keys:
            unacked = self.channel.broker_key(self.unacked_key)
            removed = self.channel.script(_RECONCILE_LUA)(
                keys=[unacked, *keys], args=[RECONCILE_MAX]
            )
            if removed:
                log.warning("removed %s reserved tags that unacked no longer held", removed)
        try:
            restore_dead_owners(self)
        except self.channel.connection_errors:
            raise  # kombu skips this round; the next one sweeps
        except Exception:  # a fault of the sweep must not stop the consumer: visibility
            log.exception("the sweep for dead owners' deliveries failed")

    def ack(self, delivery_tag: Any) -> None:
        """Acknowledge; a delivery this channel handed back is left alone (``recovery``).

        One its task's last write acked already (``settle``) is acked in memory only; one
        whose lease may have lapsed since its take removes its own record only.
        """
        if self._settled(delivery_tag) or recovery.disowned(self, delivery_tag):
            return
        before = self.lapsed_bound(delivery_tag)
        if before is None:
            super().ack(delivery_tag)
            return
        self._remove_by_tag(delivery_tag, before)
        VirtualQoS.ack(self, delivery_tag)

    def reject(self, delivery_tag: Any, requeue: bool = False) -> None:
        """Reject; a delivery this channel handed back is left alone (``recovery``).

        The requeue of a try an outage interrupted marks a replay (``fleet/outage.py``).
        One its task's last write acked is done: its work is in, nothing to requeue. One
        whose lease may have lapsed since its take moves its own record only.
        """
        if self._settled(delivery_tag) or recovery.disowned(self, delivery_tag):
            return
        before = self.lapsed_bound(delivery_tag)
        if requeue and recovery.replays(self, delivery_tag):
            self.restore_by_tag(delivery_tag, leftmost=True, replay=True, before=before)
        elif before is None:
            super().reject(delivery_tag, requeue)
            return
        elif requeue:
            self.restore_by_tag(delivery_tag, leftmost=True, before=before)
        else:
            self._remove_by_tag(delivery_tag, before)
        VirtualQoS.ack(self, delivery_tag)  # as kombu's reject: the record is gone

    def lapsed_bound(self, delivery_tag: Any) -> float | None:
        """None while this delivery's owner held its lease since the take (the usual case).

        Else the sweep may have restored it, and another worker taken it again under the
        same tag: the ``before`` that admits only the record this delivery's take wrote.
        """
        taken: Taken | None = self._taken_from.get(bytes_to_str(delivery_tag))
        if taken is None or self.channel.lease_covers(taken):
            return None
        return taken.bound()

    def _remove_by_tag(self, tag: Any, before: float) -> None:
        """Remove the record of ``tag`` as an ack does, if it was taken before ``before``."""

        def remove_transaction(pipe: Any) -> None:
            if not recovery.taken_before(pipe, self, tag, before):
                self._taken_from.pop(bytes_to_str(tag), None)
                log.warning("delivery %s was restored after its lease lapsed: left alone", tag)
                return
            pipe.multi()
            self._remove_from_indices(tag, pipe)

        with self.channel.conn_or_acquire() as conn:
            conn.transaction(remove_transaction, self.unacked_key)

    def _settled(self, delivery_tag: Any) -> bool:
        """Whether the delivery's record went with its task's last write; if so, forget it."""
        if not settle.release(bytes_to_str(delivery_tag)):
            return False
        self._taken_from.pop(bytes_to_str(delivery_tag), None)
        VirtualQoS.ack(self, delivery_tag)
        return True

    def restore_unacked(self, client: Any = None) -> None:
        """Hand back what the channel holds; if Redis is down, when it answers (``recovery``)."""
        recovery.hand_back(self, client)

    def restore_by_tag(
        self,
        tag: Any,
        client: Any = None,
        leftmost: bool = False,
        *,
        replay: bool = False,
        before: float | None = None,
    ) -> None:
        """Back to its queue, or to the quarantine when kombu could not restore it.

        (kombu's restore raises on an unreadable record, or drops it with a log line.)
        ``replay``: a hand-back by a live worker; ``before``: only a record taken before
        then, never a later delivery of the same message (``workers/fleet/recovery.py``).
        """

        def restore_transaction(pipe: Any) -> None:
            if before is not None and not recovery.taken_before(pipe, self, tag, before):
                self._taken_from.pop(bytes_to_str(tag), None)
                return
            raw = pipe.hget(self.unacked_key, tag)
            pipe.multi()
            self._remove_from_indices(tag, pipe)
            if not raw:
                return
            record = unacked_record(raw)
            if isinstance(record, Refused):
                where = bytes_to_str(tag)
                self.channel.quarantine.add_to(pipe, raw, "unacked", record.reason, tag=where)
                log.error("quarantined unacked record %s: %s", where, record.reason)
            else:
                recovery.mark(record.message, replay=replay)
                self.channel._do_restore_message(*record.restorable(), pipe, leftmost)

        with self.channel.conn_or_acquire(client) as conn:
            conn.transaction(restore_transaction, self.unacked_key)
