"""kombu's Redis transport, with delivery that a kill -9 cannot lose.

kombu takes a message with ``BRPOP`` and only afterwards, in a second command, writes
it to the ``unacked`` hash that redelivery restores from. A worker killed between the
two (or with the ``BRPOP`` reply still in its socket buffer) has taken a message nobody
holds any more: it is gone (kombu#305, celery#4354; a CI run of our worker-death test
lost one review of 330, and tests/integration/test_transport.py shows the window).

This channel waits with ``BLMOVE q q RIGHT RIGHT``, which blocks like ``BRPOP`` but
leaves the message where it is, then pops it and records it as unacked in one Lua
script: at every instant the message is in its queue or in ``unacked``. Two round trips
per message, as before (the second write kombu makes is skipped). A message arriving at
an idle queue wakes every consumer waiting on it; those that lose the race find nothing
and wait again, one round trip each. It covers channels that consume one queue with one
priority step, which is what our workers are (``priority_steps`` is ``[0]`` in
``workers.fleet.app``); any other channel keeps kombu's ``BRPOP``.

The channel also reuses one synchronous ``redis.Redis`` per connection pool: kombu
builds one per command (about 0.2 ms of CPU here: ~170 response callbacks copied),
three per task hop. ``redis.Redis`` is thread-safe and every command is unchanged.
"""

from __future__ import annotations

from queue import Empty
from time import monotonic, time
from typing import Any

from kombu.transport import redis as kombu_redis
from kombu.transport.virtual import QoS as VirtualQoS
from kombu.utils.encoding import bytes_to_str
from kombu.utils.json import loads
from kombu.utils.objects import cached_property

# KEYS: queue, unacked hash, unacked index. ARGV: now (the index score kombu uses).
# Pop the oldest message and record it as unacked, keyed by its delivery tag, in the
# form kombu's restore reads: [payload, exchange, routing_key], the payload verbatim.
# Returns {message} when it could not be recorded (not a kombu message: kombu's own
# decoder refuses it as it would have after BRPOP), else {message, delivery tag}.
_TAKE = """
local raw = redis.call('RPOP', KEYS[1])
if not raw then return false end
local ok, message = pcall(cjson.decode, raw)
if not ok or type(message) ~= 'table' or type(message.properties) ~= 'table' then
    return {raw}
end
local tag = message.properties.delivery_tag
if type(tag) ~= 'string' then return {raw} end
local info = message.properties.delivery_info
if type(info) ~= 'table' then info = {} end
local exchange = info.exchange
local routing_key = info.routing_key
if type(exchange) ~= 'string' then exchange = '' end
if type(routing_key) ~= 'string' then routing_key = '' end
redis.call('ZADD', KEYS[3], ARGV[1], tag)
redis.call('HSET', KEYS[2], tag,
    '[' .. raw .. ',' .. cjson.encode(exchange) .. ',' .. cjson.encode(routing_key) .. ']')
return {raw, tag}
"""


class QoS(kombu_redis.QoS):
    """kombu's QoS, minus the unacked write for messages the take script recorded."""

    def append(self, message: Any, delivery_tag: str) -> None:
        """Track the delivery; write it to Redis unless it is already there."""
        if self.channel.recorded_by_take(delivery_tag):
            VirtualQoS.append(self, message, delivery_tag)
        else:
            super().append(message, delivery_tag)


class Channel(kombu_redis.Channel):
    """A Redis channel whose deliveries are never held only in the worker's memory."""

    QoS = QoS
    _sync_client: Any = None
    _take_script: Any = None
    #: The queue the outstanding wait is for; ``None`` while kombu's BRPOP is in use.
    _waiting_on: str | None = None

    @cached_property
    def _recorded(self) -> set[str]:
        return set()

    def recorded_by_take(self, delivery_tag: str) -> bool:
        """Whether the take script recorded ``delivery_tag`` (asked once per delivery)."""
        try:
            self._recorded.remove(delivery_tag)
        except KeyError:
            return False
        return True

    def _create_client(self, asynchronous: bool = False) -> Any:
        if asynchronous:
            return super()._create_client(asynchronous=True)
        client = self._sync_client
        if client is None or client.connection_pool is not self.pool:
            client = self._sync_client = super()._create_client()
            self._take_script = client.register_script(_TAKE)
        return client

    def _can_take(self, queues: list[str]) -> bool:
        return (
            len(queues) == 1
            and list(self.priority_steps) == [0]
            and not self.global_keyprefix
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
        self.client.connection.send_command("BLMOVE", queue, queue, "RIGHT", "RIGHT", wait or 0)

    def _brpop_read(self, **options: Any) -> bool:
        queue = self._waiting_on
        if queue is None:
            return bool(super()._brpop_read(**options))
        self._waiting_on = None
        try:
            try:
                woken = self.client.parse_response(self.client.connection, "BLMOVE", **options)
            except self.connection_errors:
                self.client.connection.disconnect()
                raise
        finally:
            self._in_poll = False
            self._flush_brpop_reauth()
        # A wake-up took nothing: while closing, leave the message in its queue.
        if woken is None or self._closing:
            raise Empty()
        taken = self._take(queue)
        if not taken:  # another consumer took it first
            raise Empty()
        raw, *recorded = taken
        self._recorded.update(bytes_to_str(tag) for tag in recorded)
        payload = loads(bytes_to_str(raw))
        self._queue_cycle.rotate(queue)
        self.connection._deliver(payload, queue)
        return True

    def _take(self, queue: str) -> list[bytes] | None:
        """Pop the oldest message of ``queue``, recorded as unacked in the same step."""
        self._create_client()
        taken: list[bytes] | None = self._take_script(
            keys=[queue, self.unacked_key, self.unacked_index_key], args=[time()]
        )
        return taken


class Transport(kombu_redis.Transport):
    """The Redis transport with ``Channel`` above."""

    Channel = Channel


#: ``broker_transport`` for ``redis://`` URLs (TLS and socket URLs keep kombu's own).
TRANSPORT = f"{__name__}:Transport"
