"""What each DAG's reviews cost, kept in Redis so every worker sees one total.

Charging is idempotent per review key: a redelivered task that charges again for the
same review does not count twice (claim with SET NX and add, atomically in one script).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import redis

from workers.keys import Keys

_CHARGE = """
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'EX', ARGV[2]) then
  local total = redis.call('INCRBYFLOAT', KEYS[1], ARGV[1])
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  return {1, total}
end
return {0, redis.call('GET', KEYS[1]) or '0'}
"""

DEFAULT_TTL_S = 8 * 24 * 3600
"""Ledger keys outlive the results stream's retention window."""


def _as_float(raw: Any) -> float:
    if raw is None:
        return 0.0
    return float(raw.decode() if isinstance(raw, bytes) else raw)


@dataclass(frozen=True, slots=True)
class Charge:
    """One idempotent charge, for a script that applies it with other writes (``_CHARGE``).

    ``keys`` are (total, charged marker); ``args`` are (amount, ttl seconds).
    """

    keys: tuple[str, str]
    args: tuple[str, int]


class CostLedger:
    """Per-DAG review spend in USD.

    Args:
        client: the Redis connection (pool) to use.
        keys: the deployment's keys (``Keys.cost``, ``Keys.charged``).
        ttl_s: expiry of ledger keys, refreshed on every charge.
    """

    def __init__(self, client: redis.Redis, keys: Keys, ttl_s: int = DEFAULT_TTL_S) -> None:
        if ttl_s < 1:
            raise ValueError("ttl_s must be at least 1 second")
        self._redis = client
        self._keys = keys
        self._ttl_s = ttl_s
        self._charge = client.register_script(_CHARGE)

    def add(self, dag_id: str, usd: float) -> float:
        """Add ``usd`` unconditionally; the new total."""
        _check_amount(usd)
        pipe = self._redis.pipeline(transaction=True)
        pipe.incrbyfloat(self._keys.cost(dag_id), usd)
        pipe.expire(self._keys.cost(dag_id), self._ttl_s)
        total, _ = pipe.execute()
        return _as_float(total)

    def charge(self, dag_id: str, review_key: str, usd: float) -> tuple[bool, float]:
        """Add ``usd`` once per ``review_key``; (charged now, the total)."""
        _check_amount(usd)
        keys = [self._keys.cost(dag_id), self._keys.charged(review_key)]
        charged, total = self._charge(keys=keys, args=[repr(float(usd)), self._ttl_s])
        return bool(charged), _as_float(total)

    def pending_charge(self, dag_id: str, review_key: str, usd: float) -> Charge:
        """What ``charge`` would apply, for ``ResultStream.publish_result`` to apply at once."""
        _check_amount(usd)
        return Charge(
            keys=(self._keys.cost(dag_id), self._keys.charged(review_key)),
            args=(repr(float(usd)), self._ttl_s),
        )

    def total(self, dag_id: str) -> float:
        """What ``dag_id``'s reviews have cost so far."""
        return _as_float(self._redis.get(self._keys.cost(dag_id)))

    def has_budget(self, dag_id: str, budget_usd: float | None) -> bool:
        """Whether ``dag_id`` may spend more; no budget means yes."""
        return budget_usd is None or self.total(dag_id) < budget_usd


def _check_amount(usd: float) -> None:
    if not usd >= 0 or usd == float("inf"):
        raise ValueError(f"a charge must be a finite, non-negative USD amount, got {usd!r}")
