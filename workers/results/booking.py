"""Publication's one script: the entry once, with its charge, attempt record and mark.

A result's bookkeeping (``workers.records.bookkeeping``) remembers the node's attempt and,
for some results, records labels and has the human gate queue the attempt for a person.
The attempt record and, when nothing else follows, the mark that the bookkeeping is
done go in the script that adds the entry (``workers.results.stream``): one round trip
for the accepted node, and no entry without its record, whatever kills the worker.
Every key here is the DAG's or the review's, as the entry's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: Lua: write one attempt record in a node's hash (``HSETNX`` with ``keep == 'nx'``), renew
#: the hash's expiry, and keep its newest ``kept`` attempts. Shared by the publish script
#: and ``workers.records.attempts``, so both write records alike.
RECORD_ATTEMPT_LUA: Final = """
local function record_attempt(key, field, record, ttl, kept, keep)
  if keep == 'nx' then
    redis.call('HSETNX', key, field, record)
  else
    redis.call('HSET', key, field, record)
  end
  redis.call('EXPIRE', key, ttl)
  local n = redis.call('HLEN', key)
  kept = tonumber(kept)
  if n > kept then
    local fields = redis.call('HKEYS', key)
    table.sort(fields, function(a, b) return tonumber(a) < tonumber(b) end)
    for i = 1, n - kept do redis.call('HDEL', key, fields[i]) end
  end
  return n
end
"""


# KEYS: stream, dedup key, ledger total, ledger charged marker, the node's attempt records,
# the bookkeeping mark, the broker's unacked hash, its index, the reserved set (keys a call
# does not use repeat the stream's). ARGV: retention ms, dedup ttl s, charge USD ('' for
# none), ledger ttl s, attempt ('' for no record), record JSON, records' ttl s, records
# kept, mark ttl s ('' for no mark), delivery tag ('' for none), then field/value pairs.
# A charge applies only with the entry it pays for, once per marker (the ledger's own
# script); the attempt record (kept if there), the mark and the delivery's ack only with
# the entry too. The stream expires a retention window after its newest entry: MINID
# trims only when an entry is added, and a DAG that is done adds none, so its stream
# would otherwise stay for good (one per DAG ever reviewed).
PUBLISH_ONCE_LUA: Final = (
    RECORD_ATTEMPT_LUA
    + """
local existing = redis.call('GET', KEYS[2])
if existing then return {0, existing} end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local minid = tostring(math.max(0, now_ms - tonumber(ARGV[1]))) .. '-0'
local id = redis.call('XADD', KEYS[1], 'MINID', '~', minid, '*', unpack(ARGV, 11))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], id, 'EX', tonumber(ARGV[2]))
if ARGV[3] ~= '' and redis.call('SET', KEYS[4], ARGV[3], 'NX', 'EX', ARGV[4]) then
  redis.call('INCRBYFLOAT', KEYS[3], ARGV[3])
  redis.call('EXPIRE', KEYS[3], ARGV[4])
end
if ARGV[5] ~= '' then record_attempt(KEYS[5], ARGV[5], ARGV[6], ARGV[7], ARGV[8], 'nx') end
if ARGV[9] ~= '' then redis.call('SET', KEYS[6], '1', 'EX', tonumber(ARGV[9])) end
if ARGV[10] ~= '' then
  redis.call('HDEL', KEYS[7], ARGV[10])
  redis.call('ZREM', KEYS[8], ARGV[10])
  redis.call('ZREM', KEYS[9], ARGV[10])
end
return {1, id}
"""
)


@dataclass(frozen=True, slots=True)
class AttemptWrite:
    """One attempt record to write, kept if already there (``AttemptStore.pending``)."""

    key: str
    """The node's hash of attempt records."""
    attempt: int
    record_json: str
    ttl_s: int
    kept: int


@dataclass(frozen=True, slots=True)
class Settlement:
    """The broker's record of the delivery whose work an entry completes: acked with it.

    Only when the entry's script completes the work (the bookkeeping's mark goes with
    it) and the broker shares the state's Redis (``workers.fleet.transport.settle``).
    """

    unacked: str
    unacked_index: str
    reserved: str
    """The reserved set of the queue the delivery came from."""
    tag: str


@dataclass(frozen=True, slots=True)
class Booking:
    """What the publish script writes besides the entry (``Bookkeeping.publish``)."""

    attempt: AttemptWrite
    mark: str | None = None
    """The bookkeeping-done key, set with the entry when nothing else follows; else None."""
    mark_ttl_s: int = 0
    settles: Settlement | None = None
    """The delivery acked with the entry; only with a mark (nothing follows the script)."""
