"""Deliveries whose owner is dead go back to their queues now, not after the visibility timeout.

A worker killed with SIGKILL (OOM, ``kill -9``, a lost node) hands nothing back: what it
held stays in ``unacked``, and kombu's sweep restores it only once it is older than the
visibility timeout (900 s by default). Each record our take writes names its owner, whose
lease lives while that process does (``leases.py``). At most once per ``SWEEP_EVERY_MS``
across the fleet (a key every worker's sweep tries to take), one worker's restore sweep
(``QoS.restore_visible``) reads the owners of the oldest ``SWEEP_MAX`` records older than
``GRACE_S``, checks their leases in one pipelined round trip, and restores the records of
owners whose lease is gone. The bytes it moves are tags and owner ids: a script reads
each owner from its record's tail, so no payload leaves Redis.

Why this is safe:

- A record whose owner's lease exists is never touched, nor one without an owner (an old
  take's, kombu's ``BRPOP`` path): those keep the visibility timeout.
- The lease is set before its process's first take and outlives each renewal by two
  rounds, so a live owner's lease is gone only if the process stalled (or its Redis key
  was lost) for longer than ``LEASE_TTL_S``; a partition that long breaks its connections
  first, and its channel hands its deliveries back itself (``recovery.py``).
- Each restore is ``restore_by_tag(..., before=...)`` with the record's own score: a
  transaction that restores that record and never a later delivery of the same message
  (same tag), whoever restored and took it meanwhile. Two sweeps at once restore it once.
- An owner that was alive after all (a frozen process, thawed) runs the task to its end,
  and so does the worker that took it again: the result is published once (the publish
  script's dedup key), and its late ack or reject removes only the record its own take
  wrote (``leases.Lease.covers``, ``qos.py``).
"""

from __future__ import annotations

import logging
import math
from time import time
from typing import Any, Final

from workers.fleet.transport.leases import LEASE_TTL_S, OWNER_MAX_CHARS, RENEW_EVERY_S

log = logging.getLogger("windags.transport")

#: Records younger than this are not read: their owner held its lease when it took them,
#: and a lease lasts ``LEASE_TTL_S`` from its last renewal, at most ``RENEW_EVERY_S`` before
#: the take; so the grace delays no restore, and keeps fresh records out of the scan.
GRACE_S: Final = LEASE_TTL_S - RENEW_EVERY_S
#: Most records read per sweep, oldest first (as ``qos.RECONCILE_MAX``): in flight beyond
#: that many, a younger dead owner's record waits until older ones are acked or restored.
SWEEP_MAX: Final = 1000
#: At most one sweep this often across the fleet (each worker tries every 5 s).
SWEEP_EVERY_MS: Final = 4000
#: The tail of a record the owner is read from: ``,"","<queue>","<owner>"]``.
_TAIL_BYTES: Final = OWNER_MAX_CHARS + 200

#: KEYS: the sweep's key, the unacked hash, the unacked index. ARGV: the sweep key's life
#: in ms, the newest score to read, most records, tail bytes. Returns false when another
#: worker swept within the interval, else flat [tag, score, owner, ...] for each record of
#: our take (four elements, written without spaces); every other record is left out.
_OWNERS_LUA: Final = """
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return false end
local found = {}
local rows = redis.call('ZRANGE', KEYS[3], '-inf', ARGV[2], 'BYSCORE', 'LIMIT', 0,
  tonumber(ARGV[3]), 'WITHSCORES')
for i = 1, #rows, 2 do
  local record = redis.call('HGET', KEYS[2], rows[i])
  if record then
    local tail = string.sub(record, -tonumber(ARGV[4]))
    local owner = string.match(tail, ',"","[^"]*","([^"\\\\]+)"%]$')
    if owner then
      found[#found + 1] = rows[i]
      found[#found + 1] = rows[i + 1]
      found[#found + 1] = owner
    end
  end
end
return found
"""


def owned_records(channel: Any, *, now: float | None = None) -> list[tuple[str, float, str]] | None:
    """(tag, score, owner) of the oldest records older than ``GRACE_S`` that name an owner.

    None when another worker swept within ``SWEEP_EVERY_MS`` (one sweep per interval).
    """
    keys = [channel.broker_key(channel.owner_sweep_key)]
    keys += [channel.broker_key(k) for k in (channel.unacked_key, channel.unacked_index_key)]
    newest = (time() if now is None else now) - GRACE_S
    rows = channel.script(_OWNERS_LUA)(
        keys=keys, args=[SWEEP_EVERY_MS, repr(newest), SWEEP_MAX, _TAIL_BYTES]
    )
    if not rows:
        return None if rows is None else []
    return [
        (_text(rows[i]), float(rows[i + 1]), _text(rows[i + 2])) for i in range(0, len(rows), 3)
    ]


def dead_owners(channel: Any, owners: set[str]) -> set[str]:
    """The ``owners`` whose lease is gone: one pipelined round trip."""
    ordered = sorted(owners)
    with channel.scripts_client().pipeline(transaction=False) as pipe:
        for owner in ordered:
            pipe.exists(channel.lease_key(owner))
        alive = pipe.execute()
    return {owner for owner, held in zip(ordered, alive, strict=True) if not held}


def restore_dead_owners(qos: Any, *, now: float | None = None) -> int:
    """Restore every delivery of a dead owner the sweep finds; how many it tried.

    ``now``: the epoch seconds the grace counts back from (the current time unless given).
    """
    channel = qos.channel
    records = owned_records(channel, now=now)
    if not records:
        return 0
    dead = dead_owners(channel, {owner for _, _, owner in records})
    restored = 0
    for tag, score, owner in records:
        if owner in dead:
            # Only the record this sweep read: ``before`` admits its score and no later one.
            qos.restore_by_tag(tag, before=_just_after(score))
            restored += 1
    if restored:
        log.warning(
            "restored %d deliveries of %d dead owners (their lease expired): %s",
            restored,
            len(dead),
            ", ".join(sorted(dead)[:5]),
        )
    return restored


def _just_after(score: float) -> float:
    return math.nextafter(score, math.inf)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
