"""kombu's Redis QoS for ``workers/fleet/transport.py``: no second unacked write, safe restore.

The take script already recorded each delivery in ``unacked``; kombu's QoS would write it
again. A restore of a record kombu cannot read quarantines it instead of raising or
dropping it with a log line.
"""

from __future__ import annotations

import logging
from typing import Any

from kombu.transport import redis as kombu_redis
from kombu.transport.virtual import QoS as VirtualQoS
from kombu.utils.encoding import bytes_to_str

from workers.fleet.inspection import Refused, unacked_record

log = logging.getLogger("windags.transport")


class QoS(kombu_redis.QoS):
    """kombu's QoS, minus the unacked write the take script made, plus a safe restore."""

    def append(self, message: Any, delivery_tag: str) -> None:
        """Track the delivery; write it to Redis unless it is already there."""
        if self.channel.recorded_by_take(delivery_tag):
            VirtualQoS.append(self, message, delivery_tag)
        else:
            super().append(message, delivery_tag)

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
