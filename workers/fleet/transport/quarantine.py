"""The quarantine: queue messages no worker could decode, kept raw with why and where.

A message lands here once, in the same Redis step that removes it from its queue or
from ``unacked`` (a Lua script, or the restore transaction), so at every instant it is
in exactly one of those places: a worker killed mid-way loses nothing and files nothing
twice. Each entry carries the raw bytes (the first ``RAW_KEPT_BYTES``; ``size`` and
``sha1`` describe the whole), the queue, the reason, the delivery tag when there was one,
and the server time. The stream is trimmed by age like the results streams.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Final, cast

import redis

log = logging.getLogger("windags.transport")

#: Raw bytes kept per entry; a larger message keeps its head, its size and its digest.
RAW_KEPT_BYTES: Final = 256 * 1024

#: Lua: XADD one quarantine entry. Shared by the take script (redis_transport.py)
#: and ``_QUARANTINE`` below, so both write the same fields.
QUARANTINE_LUA: Final = """
local function quarantine(stream, raw, queue, reason, tag, keep, retention_ms)
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  local minid = tostring(math.max(0, now_ms - retention_ms)) .. '-0'
  local truncated = '0'
  if #raw > keep then truncated = '1' end
  return redis.call('XADD', stream, 'MINID', '~', minid, '*',
    'queue', queue, 'reason', reason, 'raw', string.sub(raw, 1, keep),
    'size', tostring(#raw), 'sha1', redis.sha1hex(raw), 'truncated', truncated,
    'tag', tag, 'at_ms', tostring(now_ms))
end
"""

# Lua: ``tag_of(raw)``, the delivery tag of a message the take pops (else nil and why),
# read without decoding the message: the last ``"delivery_tag": "..."`` (kombu writes
# ``properties`` last, and the tag last in them), found by plain search in the
# message's last 256 bytes, or in the whole when they hold none. Decoding every byte with
# cjson was the largest part of a take's Redis CPU, growing with the body. A message that
# only looks like kombu's gets recorded, and the worker's inspection
# (``Channel._deliver_checked``: not JSON, or another tag in ``properties``) quarantines it
# with its unacked record in one script; after a kill, the restore quarantines a record
# that is no JSON. A tag written any other way (escapes, no such key) is decoded with
# cjson, as before.
TAG_OF_LUA: Final = """
local function last_tag_key(raw)
  local from, after = math.max(1, #raw - 255), nil
  while true do
    while true do
      local _, stop = string.find(raw, '"delivery_tag"', from, true)
      if not stop then break end
      after, from = stop + 1, stop + 1
    end
    if after or from == 1 then return after end
    from = 1
  end
end
local function tag_of(raw)
  local after = last_tag_key(raw)
  if after then
    local _, _, tag = string.find(raw, '^%s*:%s*"([^"\\\\]+)"', after)
    if tag then return tag end
  end
  local ok, message = pcall(cjson.decode, raw)
  if not ok or type(message) ~= 'table' or type(message.properties) ~= 'table' then
    return nil, 'not a kombu message: no JSON object with a properties object'
  end
  local tag = message.properties.delivery_tag
  if type(tag) ~= 'string' or tag == '' then
    return nil, 'not a kombu message: no delivery tag (properties.delivery_tag)'
  end
  return tag
end
"""

# The take of redis_transport.py. KEYS: queue, unacked hash, unacked index,
# quarantine, and optionally the queue's reserved set (``Keys.reserved``). ARGV: now (the
# index score kombu uses), queue name, bytes kept, retention ms, most messages to take,
# the taking process's owner id (``leases.py``).
# Pop the oldest messages, up to the count (one ``RPOP`` with a count), and record each as
# unacked under its delivery tag (and in the reserved set; one ``ZADD`` each for all):
# [payload, exchange, routing key, owner], kombu's triple (the payload verbatim, the
# routing key the queue it came from) and the owner whose lease vouches for it
# (``owner_sweep.py``; records of old takes have no owner). What has no delivery tag, or
# reuses a tag another delivery holds, is quarantined in the same step. Returns one
# triple per message popped: {1, message, tag} when recorded, {0, message, reason} when
# not; false when the queue was empty. One script: each message is in its queue, in
# ``unacked`` or in the quarantine at every instant, however many it takes. The tag is
# read as ``TAG_OF_LUA`` says.
TAKE_LUA: Final = (
    QUARANTINE_LUA
    + TAG_OF_LUA
    + """local owner = ''
if ARGV[6] and ARGV[6] ~= '' then owner = ',' .. cjson.encode(ARGV[6]) end
local record_tail = ',"",' .. cjson.encode(ARGV[2]) .. owner .. ']'
local function refuse(raw, reason)
  quarantine(KEYS[4], raw, ARGV[2], reason, '', tonumber(ARGV[3]), tonumber(ARGV[4]))
  return {0, raw, reason}
end
local popped = redis.call('RPOP', KEYS[1], math.max(1, tonumber(ARGV[5]) or 1))
if not popped then return false end
local taken, scored = {}, {}
for i, raw in ipairs(popped) do
  local tag, why = tag_of(raw)
  if not tag then
    taken[i] = refuse(raw, why)
  elseif redis.call('HSETNX', KEYS[2], tag, '[' .. raw .. record_tail) == 0 then
    local held = ' is held by another delivery (a copied message)'
    taken[i] = refuse(raw, 'delivery tag ' .. tag .. held)
  else
    taken[i] = {1, raw, tag}
    scored[#scored + 1] = ARGV[1]
    scored[#scored + 1] = tag
  end
end
if #scored > 0 then
  redis.call('ZADD', KEYS[3], unpack(scored))
  if KEYS[5] then redis.call('ZADD', KEYS[5], unpack(scored)) end
end
return taken
"""
)


# KEYS: quarantine stream, unacked hash, unacked index, optionally the reserved set. ARGV:
# raw, queue, reason, delivery tag ('' when the message was never recorded as unacked),
# bytes kept, retention ms.
_QUARANTINE: Final = (
    QUARANTINE_LUA
    + """
if ARGV[4] ~= '' then
  redis.call('HDEL', KEYS[2], ARGV[4])
  redis.call('ZREM', KEYS[3], ARGV[4])
  if KEYS[4] then redis.call('ZREM', KEYS[4], ARGV[4]) end
end
return quarantine(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]),
  tonumber(ARGV[6]))
"""
)


@dataclass(frozen=True, slots=True)
class Quarantined:
    """One quarantine entry, as an operator reads it."""

    entry_id: str
    queue: str
    reason: str
    raw: bytes
    """The message's first ``RAW_KEPT_BYTES`` bytes (all of it unless ``truncated``)."""
    size: int
    sha1: str
    truncated: bool
    tag: str
    at_ms: int


@dataclass(frozen=True, slots=True)
class QuarantineStream:
    """Where one deployment's quarantine lives, and how long it keeps entries."""

    key: str
    retention_s: int

    def put(
        self,
        client: redis.Redis,
        raw: bytes,
        queue: str,
        reason: str,
        *,
        tag: str = "",
        unacked: tuple[str, str] | None = None,
        reserved: str | None = None,
    ) -> str:
        """Quarantine ``raw``; its entry id.

        With ``tag`` and ``unacked`` (hash, index), its unacked record is removed in the
        same script (and the tag from ``reserved``, the queue's in-flight set): the
        message is in exactly one place throughout.
        """
        hash_key, index_key = unacked or ("", "")
        script = client.register_script(_QUARANTINE)
        entry_id = script(
            keys=[self.key, hash_key or self.key, index_key or self.key, *filter(None, [reserved])],
            args=[raw, queue, reason[:1000], tag if unacked else "", RAW_KEPT_BYTES, self._ms],
        )
        return _text(entry_id)

    def add_to(self, pipe: Any, raw: bytes, queue: str, reason: str, *, tag: str = "") -> None:
        """Queue the XADD on ``pipe`` (a transaction that removes the message elsewhere)."""
        now_ms = int(time.time() * 1000)
        pipe.xadd(self.key, self.fields(raw, queue, reason, tag, now_ms), minid=now_ms - self._ms)

    @staticmethod
    def fields(raw: bytes, queue: str, reason: str, tag: str, now_ms: int) -> dict[str, Any]:
        """An entry's fields, as ``QUARANTINE_LUA`` writes them."""
        return {
            "queue": queue,
            "reason": reason[:1000],
            "raw": raw[:RAW_KEPT_BYTES],
            "size": len(raw),
            "sha1": hashlib.sha1(raw).hexdigest(),
            "truncated": int(len(raw) > RAW_KEPT_BYTES),
            "tag": tag,
            "at_ms": now_ms,
        }

    def read(self, client: redis.Redis) -> list[Quarantined]:
        """Every entry, oldest first."""
        entries = cast(list[tuple[bytes, dict[bytes, bytes]]], client.xrange(self.key))
        return [_entry(entry_id, fields) for entry_id, fields in entries]

    @property
    def _ms(self) -> int:
        return self.retention_s * 1000


def quarantine_refused(message: Any, reason: str) -> None:
    """File a message Celery refused after our channel delivered it (a gap in inspection).

    Celery drops such a message with a log line (``task_unknown``, ``task_rejected``):
    this copies it to the quarantine first. It is already acknowledged by then, so a
    worker killed in between loses it: the channel's own checks are the guarantee.
    """
    channel = getattr(message, "channel", None)
    file_refused = getattr(channel, "file_refused", None)
    if file_refused is None:
        log.error("refused a message outside our transport: %s", reason)
        return
    raw = json.dumps(getattr(message, "_raw", None), default=repr).encode()
    queue = str((getattr(message, "delivery_info", None) or {}).get("routing_key", ""))
    file_refused(raw, queue or "?", f"Celery refused it: {reason}")


def _entry(entry_id: bytes, fields: dict[bytes, bytes]) -> Quarantined:
    text = {_text(k): v for k, v in fields.items()}

    def field(name: str) -> str:
        return _text(text.get(name, b""))

    return Quarantined(
        entry_id=_text(entry_id),
        queue=field("queue"),
        reason=field("reason"),
        raw=text.get("raw", b""),
        size=int(field("size") or 0),
        sha1=field("sha1"),
        truncated=field("truncated") == "1",
        tag=field("tag"),
        at_ms=int(field("at_ms") or 0),
    )


def _text(value: bytes | str | int) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
