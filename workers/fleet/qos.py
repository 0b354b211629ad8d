"""kombu's Redis QoS for ``workers/fleet/transport.py``: no second unacked write, safe restore.

The take script already recorded each delivery in ``unacked``; kombu's QoS would write it
again. A restore of a record kombu cannot read quarantines it instead of raising or
dropping it with a log line.

A worker whose broker connection dies hands what it held (reserved, or running) back to
the queues as its consumer closes the channel; with Redis down that restore fails, and
kombu left those messages in ``unacked`` until the visibility timeout (900 s by default)
had passed. Here a restore that meets a connection fault keeps the rest of the delivery
tags (``ORPHANS``), and the next channel that connects, or the next periodic sweep, hands
them back: as soon as Redis answers again. Restoring a tag twice is harmless (the restore
transaction finds no record the second time), and a review that then runs twice is
published once.

A delivery handed back so is no longer this channel's: a late ack or reject of it (a task
that went on running, or one Celery cancelled on the connection loss, which its gevent
pool acknowledges as a success) leaves Redis alone. Otherwise it deleted the record of the
message's next delivery, or, after a failed restore, the only one: the message was gone.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kombu.transport import redis as kombu_redis
from kombu.transport.virtual import QoS as VirtualQoS
from kombu.utils.encoding import bytes_to_str

from workers.fleet.inspection import Refused, unacked_record

log = logging.getLogger("windags.transport")


class Orphans:
    """Delivery tags this process held when its connection died, per ``unacked`` key."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tags: dict[str, list[str]] = {}

    def keep(self, where: str, tags: list[Any]) -> None:
        """Remember ``tags`` (of the ``unacked`` hash ``where``) for a later restore."""
        with self._lock:
            self._tags.setdefault(where, []).extend(bytes_to_str(tag) for tag in tags)

    def take(self, where: str) -> list[str]:
        """The tags kept for ``where``, forgotten here (``keep`` what cannot be restored)."""
        with self._lock:
            return self._tags.pop(where, [])

    def count(self) -> int:
        """Tags kept, all keys together."""
        with self._lock:
            return sum(map(len, self._tags.values()))


#: This process's orphans: one per process, shared by every channel of its connections.
ORPHANS = Orphans()


class QoS(kombu_redis.QoS):
    """kombu's QoS, minus the unacked write the take script made, plus a safe restore."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._handed_back: set[Any] = set()

    def append(self, message: Any, delivery_tag: str) -> None:
        """Track the delivery; write it to Redis unless it is already there."""
        if self.channel.recorded_by_take(delivery_tag):
            VirtualQoS.append(self, message, delivery_tag)
        else:
            super().append(message, delivery_tag)

    def restore_unacked(self, client: Any = None) -> None:
        """Hand every delivery back; if Redis is down, as soon as it answers (``ORPHANS``)."""
        tags = list(self._delivered)
        self._delivered.clear()
        self._handed_back.update(tags)
        self._restore_each(tags, client)

    def ack(self, delivery_tag: Any) -> None:
        """Acknowledge; a delivery already handed back is left alone."""
        if not self._disowned(delivery_tag):
            super().ack(delivery_tag)

    def reject(self, delivery_tag: Any, requeue: bool = False) -> None:
        """Reject; a delivery already handed back is left alone."""
        if not self._disowned(delivery_tag):
            super().reject(delivery_tag, requeue)

    def _disowned(self, delivery_tag: Any) -> bool:
        if delivery_tag not in self._handed_back:
            return False
        self._handed_back.discard(delivery_tag)
        log.warning("delivery %s was handed back already: ack or reject dropped", delivery_tag)
        return True

    def restore_orphans(self) -> int:
        """Hand back what a connection that died held; how many tags were restored."""
        tags = ORPHANS.take(self._orphans_key)
        restored = self._restore_each(tags, None)
        if tags:
            log.warning("restored %d of %d messages held when Redis went away", restored, len(tags))
        return restored

    def restore_visible(self, *args: Any, **kwargs: Any) -> None:
        """The periodic sweep: orphans first, then kombu's (records past the timeout)."""
        self.restore_orphans()
        super().restore_visible(*args, **kwargs)

    def _restore_each(self, tags: list[Any], client: Any) -> int:
        """Restore ``tags`` in order; at a connection fault keep the rest; how many went."""
        restored = 0
        for done, tag in enumerate(tags):
            try:
                self.restore_by_tag(tag, client=client)
            except self.channel.connection_errors:
                ORPHANS.keep(self._orphans_key, tags[done:])
                break
            except Exception:  # its record stays in unacked: back after the visibility timeout
                log.exception("could not restore delivery %s", bytes_to_str(tag))
            else:
                restored += 1
        return restored

    @property
    def _orphans_key(self) -> str:
        return str(self.channel.broker_key(self.unacked_key))

    def restore_by_tag(self, tag: Any, client: Any = None, leftmost: bool = False) -> None:
        """Back to its queue, or to the quarantine when kombu could not restore it.

        (kombu's restore raises on an unreadable record, or drops it with a log line.)
        """

        def restore_transaction(pipe: Any) -> None:
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
                self.channel._do_restore_message(*record, pipe, leftmost)

        with self.channel.conn_or_acquire(client) as conn:
            conn.transaction(restore_transaction, self.unacked_key)
