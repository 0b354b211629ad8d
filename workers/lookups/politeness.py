"""Politeness per host, fleet-wide: a few requests in flight, spaced, and Retry-After obeyed.

A request to a host starts only while fewer than ``in_flight`` requests to it are out
across the whole fleet, at least ``spacing_s`` after the last one started, and not before
a time a ``Retry-After`` set (capped). The fleet's gate is one Lua script over two keys
in Redis, with Redis's own clock, so workers on several machines agree; a ticket expires
should its worker die holding it. The in-process review keeps the same rules in memory.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Final, Protocol

import redis

from workers.keys import Keys

#: How often a request waiting for its host asks again.
POLL_S = 0.02

# KEYS: in-flight tickets (zset: ticket -> expiry ms), next start (ms). ARGV: limit,
# spacing ms, ticket, ticket lease ms. Returns 0 when the ticket was taken, else ms to wait.
_TAKE: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, spacing, lease = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local next = tonumber(redis.call('GET', KEYS[2]) or '0')
if next > now then return next - now end
if redis.call('ZCARD', KEYS[1]) >= limit then return 1 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
redis.call('PEXPIRE', KEYS[1], lease)
if spacing > 0 then redis.call('SET', KEYS[2], now + spacing, 'PX', spacing) end
return 0
"""
# KEYS: as above. ARGV: ticket, ms to keep the host alone (Retry-After, capped; 0: none).
_GIVE: Final = """
redis.call('ZREM', KEYS[1], ARGV[1])
local hold = tonumber(ARGV[2])
if hold > 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local next = tonumber(redis.call('GET', KEYS[2]) or '0')
  if now + hold > next then redis.call('SET', KEYS[2], now + hold, 'PX', hold) end
end
return 1
"""


class HostGate(Protocol):
    """Admits one request to a host when politeness allows."""

    def enter(self, host: str, *, deadline: float) -> str | None:
        """A ticket once a request to ``host`` may start; None if not before ``deadline``."""
        ...

    def leave(self, host: str, ticket: str, *, retry_after_s: float | None = None) -> None:
        """The request ended; a ``Retry-After`` keeps the host alone that long (capped)."""
        ...


class RedisHostGate:
    """The fleet's gate: every refs worker takes tickets from the same keys."""

    def __init__(
        self,
        client: redis.Redis,
        keys: Keys,
        *,
        in_flight: int,
        spacing_s: float,
        retry_after_cap_s: float,
        lease_s: float,
    ) -> None:
        self._keys = keys
        self._take = client.register_script(_TAKE)
        self._give = client.register_script(_GIVE)
        self._limit = in_flight
        self._spacing_ms = int(spacing_s * 1000)
        self._cap_s = retry_after_cap_s
        self._lease_ms = max(1000, int(lease_s * 1000))

    def _keys_of(self, host: str) -> list[str]:
        return [self._keys.refs_host_in_flight(host), self._keys.refs_host_next(host)]

    def enter(self, host: str, *, deadline: float) -> str | None:
        """Wait for a ticket, polling; None if the deadline comes first."""
        ticket = uuid.uuid4().hex
        args: list[str | int] = [self._limit, self._spacing_ms, ticket, self._lease_ms]
        while True:
            wait_ms = int(self._take(keys=self._keys_of(host), args=args))
            if wait_ms == 0:
                return ticket
            pause = max(POLL_S, min(wait_ms / 1000, 1.0))
            if time.monotonic() + pause >= deadline:
                return None
            time.sleep(pause)

    def leave(self, host: str, ticket: str, *, retry_after_s: float | None = None) -> None:
        """Give the ticket back; keep the host alone for its ``Retry-After``, capped."""
        hold_ms = int(min(retry_after_s or 0.0, self._cap_s) * 1000)
        self._give(keys=self._keys_of(host), args=[ticket, hold_ms])


class MemoryHostGate:
    """The in-process review's gate: the same rules for the threads of one process."""

    def __init__(self, *, in_flight: int, spacing_s: float, retry_after_cap_s: float) -> None:
        self._limit = in_flight
        self._spacing_s = spacing_s
        self._cap_s = retry_after_cap_s
        self._lock = threading.Condition()
        self._out: dict[str, set[str]] = {}
        self._next: dict[str, float] = {}

    def enter(self, host: str, *, deadline: float) -> str | None:
        """Wait for a free slot and the host's next start time, until ``deadline``."""
        with self._lock:
            while True:
                now = time.monotonic()
                out = self._out.setdefault(host, set())
                start = self._next.get(host, 0.0)
                if len(out) < self._limit and start <= now:
                    ticket = uuid.uuid4().hex
                    out.add(ticket)
                    self._next[host] = now + self._spacing_s
                    return ticket
                wait = max(start - now, POLL_S)
                if now + wait >= deadline:
                    return None
                self._lock.wait(wait)

    def leave(self, host: str, ticket: str, *, retry_after_s: float | None = None) -> None:
        """Free the slot; a ``Retry-After`` pushes the host's next start out (capped)."""
        with self._lock:
            self._out.get(host, set()).discard(ticket)
            if retry_after_s:
                hold = time.monotonic() + min(retry_after_s, self._cap_s)
                self._next[host] = max(self._next.get(host, 0.0), hold)
            self._lock.notify_all()
