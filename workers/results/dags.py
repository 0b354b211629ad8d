"""Registered DAG shapes in Redis: one hash per DAG, versioned, expiring with its results.

``register`` runs one script: a new or higher version replaces the stored shape, the
same version with the same shape only renews its expiry, and an older version, or the
same version with a different shape, is refused (``DagVersionError``). Readers (Stage 1,
on every request that sends no ``downstream``) ask for the version alone, renewing the
expiry in the same round trip, and index a shape once per process and version.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, cast

import redis
from pydantic import ValidationError

from schemas.topology import DagShape
from workers.keys import Keys
from workers.topology import DagVersionError, Topology

log = logging.getLogger(__name__)

#: Indexed shapes kept per process (one per DAG and version read lately).
CACHED_TOPOLOGIES = 64

# KEYS: the DAG's hash. ARGV: version, digest, shape JSON, ttl s. Returns {status, stored}.
_REGISTER: Final = """
local stored = redis.call('HGET', KEYS[1], 'version')
if stored then
  local old, new = tonumber(stored), tonumber(ARGV[1])
  if new < old then return {'stale', old} end
  if new == old then
    if redis.call('HGET', KEYS[1], 'digest') ~= ARGV[2] then return {'conflict', old} end
    redis.call('EXPIRE', KEYS[1], ARGV[4])
    return {'unchanged', old}
  end
end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'digest', ARGV[2], 'shape', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return {'registered', tonumber(ARGV[1])}
"""


class RegisterStatus(StrEnum):
    """What a registration did."""

    REGISTERED = "registered"
    """Stored: the first version, or a higher one replacing the last."""
    UNCHANGED = "unchanged"
    """The same version and shape were already stored; their expiry was renewed."""


@dataclass(frozen=True, slots=True)
class Registration:
    """A registration's outcome."""

    dag_id: str
    version: int
    status: RegisterStatus


class DagRegistry:
    """One deployment's registered DAGs; thread-safe, one per process."""

    def __init__(self, client: redis.Redis, keys: Keys, *, ttl_s: int) -> None:
        self._redis = client
        self._keys = keys
        self._ttl_s = ttl_s
        self._register = client.register_script(_REGISTER)
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, int], Topology] = OrderedDict()

    def register(self, shape: DagShape) -> Registration:
        """Store ``shape`` unless a newer or different one of its version is stored.

        Raises:
            DagVersionError: an older version than the stored one, or the stored version
                with a different shape.
        """
        text = shape.model_dump_json()
        digest = hashlib.sha256(text.encode()).hexdigest()
        status, stored = self._register(
            keys=[self._keys.dag(shape.dag_id)], args=[shape.version, digest, text, self._ttl_s]
        )
        stored, status = int(stored), _text(status)
        if status == "stale":
            raise DagVersionError(shape.dag_id, stored, shape.version, f"version {stored} is newer")
        if status == "conflict":
            reason = f"version {stored} is stored with a different shape; a change needs a new one"
            raise DagVersionError(shape.dag_id, stored, shape.version, reason)
        return Registration(shape.dag_id, stored, RegisterStatus(status))

    def shape(self, dag_id: str) -> DagShape | None:
        """The registered shape of ``dag_id``, or None (never registered, or expired)."""
        raw = cast(bytes | None, self._redis.hget(self._keys.dag(dag_id), "shape"))
        return None if raw is None else _parsed(dag_id, raw)

    def topology(self, dag_id: str, *, renew: bool = True) -> Topology | None:
        """The current version of ``dag_id``, indexed, or None.

        One round trip when this process indexed that version before. ``renew``: renew
        its expiry too (a DAG under review lives as long as its results; a reader only
        looking leaves it as it is).
        """
        key = self._keys.dag(dag_id)
        pipe = self._redis.pipeline(transaction=False)
        pipe.hget(key, "version")
        if renew:
            pipe.expire(key, self._ttl_s)
        stored = pipe.execute()[0]
        if stored is None:
            return None
        version = int(stored)
        with self._lock:
            cached = self._cache.get((dag_id, version))
            if cached is not None:
                self._cache.move_to_end((dag_id, version))
                return cached
        shape = self.shape(dag_id)
        if shape is None:
            return None
        topology = Topology(shape)  # the version read now: a newer one may have replaced it
        with self._lock:
            self._cache[(dag_id, topology.version)] = topology
            while len(self._cache) > CACHED_TOPOLOGIES:
                self._cache.popitem(last=False)
        return topology


def _parsed(dag_id: str, raw: bytes) -> DagShape | None:
    try:
        return DagShape.model_validate_json(raw)
    except (ValidationError, ValueError) as exc:
        log.warning("registered DAG %s is unreadable (%s): nothing derived from it", dag_id, exc)
        return None


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
