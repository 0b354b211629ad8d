"""Who holds a delivery, and whether that process is alive: an owner id and its lease.

Every process that takes deliveries has an owner id, unique to this incarnation of it
(host, pid and a random part), which the take script writes into each ``unacked`` record
it makes (``TAKE_LUA``: no command more per take). Before its channel's first take the
process sets its lease, ``Keys.lease(owner)`` with a TTL, and a daemon thread renews it
while any of its channels is open. A process killed with SIGKILL (OOM, ``kill -9``, a lost
node) stops renewing: ``LEASE_TTL_S`` later its lease is gone, and the owner sweep hands
its deliveries back to their queues (``owner_sweep.py``) instead of leaving them to the
visibility timeout (900 s by default).

A live process whose lease lapsed anyway (frozen longer than the TTL: SIGSTOP, a paused
VM, a thread starved that long; or its key evicted) may have had its deliveries restored
and taken again by another worker, under the same delivery tag. Its late ack or reject
must not remove that newer delivery's record: each delivery remembers when it was taken
(``Taken``), and ``Lease.covers`` tells whether the lease was held without a gap since,
from local clocks only. When it cannot say so, the QoS removes or restores the record only
if it is still the one this delivery's take wrote (``qos.py``), at the price of a
transaction on that rare path; an ack on the usual path costs what it did.

Renewing every ``RENEW_EVERY_S`` with a TTL of ``LEASE_TTL_S`` lets two renewals in a row
fail (a Redis that answers late, a busy gevent hub) before a live process's lease lapses.
"""

from __future__ import annotations

import logging
import math
import os
import re
import secrets
import socket
import threading
import time
import weakref
from dataclasses import dataclass, field
from time import monotonic
from typing import Any, Final

log = logging.getLogger("windags.transport")

#: Seconds a lease lives unless renewed: how long after a kill the owner's deliveries wait.
LEASE_TTL_S: Final = 30
#: Seconds between two renewals of every lease of the process.
RENEW_EVERY_S: Final = 10
#: An ack or reject goes to Redis as usual only while the lease holds at least this much
#: longer (as far as this process knows): room for the command to arrive. Two renewals
#: must fail in a row before a delivery takes the careful path.
PLAIN_ACK_MARGIN_S: Final = LEASE_TTL_S - 2 * RENEW_EVERY_S
#: The longest owner id: the sweep reads it from a record's tail (``owner_sweep.py``).
OWNER_MAX_CHARS: Final = 100
#: What an owner id may hold: nothing JSON or a Lua pattern would escape.
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def new_owner_id() -> str:
    """An owner id for this process: ``<host>:<pid>:<random>``, safe in JSON as is."""
    host = _UNSAFE.sub("-", socket.gethostname())[:64] or "host"
    return f"{host}:{os.getpid()}:{secrets.token_hex(4)}"


@dataclass(frozen=True, slots=True)
class Taken:
    """A delivery this process's take recorded: where from, and when."""

    queue: str
    score: float
    """Its ``unacked_index`` score: the epoch seconds the take passed to the script."""
    at: float
    """``time.monotonic()`` just before the take, for ``Lease.covers``."""

    def bound(self) -> float:
        """A ``before`` that admits this delivery's record and no later one (``recovery``)."""
        return math.nextafter(self.score, math.inf)


@dataclass
class Lease:
    """One process's lease on one broker: its key, and how long it is known to have held."""

    key: str
    channels: weakref.WeakSet[Any] = field(default_factory=weakref.WeakSet)
    unbroken_since: float = math.inf
    """Monotonic time since which the key existed without a gap, as far as renewals show."""
    valid_until: float = -math.inf
    """Monotonic time until which the last renewal keeps the key (counted from its send)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def covers(self, taken_at: float) -> bool:
        """Whether the lease held, without a gap, from ``taken_at`` until a while after now.

        Then nobody restored a delivery taken at ``taken_at`` for want of a lease, and its
        ack or reject may go to Redis unconditionally.
        """
        with self._lock:
            since, until = self.unbroken_since, self.valid_until
        return since <= taken_at and monotonic() < until - PLAIN_ACK_MARGIN_S

    def renew(self, client: Any) -> None:
        """Set the key for ``LEASE_TTL_S`` more; note a gap if it was gone or may have been."""
        sent = monotonic()
        held = client.set(self.key, "1", ex=LEASE_TTL_S, get=True)
        with self._lock:
            if held is None or monotonic() > self.valid_until:
                if self.valid_until > -math.inf:
                    log.warning("the lease %s lapsed: held deliveries ack carefully", self.key)
                self.unbroken_since = sent
            self.valid_until = sent + LEASE_TTL_S

    def open_channel(self) -> Any:
        """A channel of this lease that is still open, or None."""
        for channel in list(self.channels):
            if not getattr(channel, "closed", True) and not getattr(channel, "_closing", False):
                return channel
        return None


class Leases:
    """This process's owner id, its leases, and the thread that renews them."""

    def __init__(self, *, every_s: float = RENEW_EVERY_S) -> None:
        self.owner = new_owner_id()
        self._every_s = every_s
        self._lock = threading.Lock()
        self._held: dict[str, Lease] = {}
        self._thread: threading.Thread | None = None

    def join(self, key: str, channel: Any, client: Any) -> Lease:
        """Hold the lease ``key`` for ``channel``: set now (before its first take), then renewed."""
        with self._lock:
            lease = self._held.setdefault(key, Lease(key))
            lease.channels.add(channel)
        lease.renew(client)
        with self._lock:
            self._held.setdefault(key, lease)  # a renewal round may have let it go meanwhile
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="windags-lease", daemon=True)
                self._thread.start()
        return lease

    def _run(self) -> None:
        while True:
            time.sleep(self._every_s)
            with self._lock:
                due = [(lease, lease.open_channel()) for lease in self._held.values()]
                for lease, channel in due:
                    if channel is None:  # every channel closed: it expires on its own
                        self._held.pop(lease.key, None)
                if not self._held:
                    self._thread = None
                    return
            for lease, channel in due:
                if channel is not None:
                    self._renew(lease, channel)

    @staticmethod
    def _renew(lease: Lease, channel: Any) -> None:
        try:
            lease.renew(channel.scripts_client())
        except Exception as exc:  # Redis away: the next round tries again
            log.debug("could not renew the lease %s: %r", lease.key, exc)


#: This process's leases: one owner id per process incarnation.
LEASES = Leases()


def _fresh_after_fork() -> None:
    """A forked child is another owner: it holds none of its parent's deliveries."""
    global LEASES  # replaced, never shared with the parent
    LEASES = Leases()


os.register_at_fork(after_in_child=_fresh_after_fork)
