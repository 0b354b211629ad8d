"""Fleet-wide wrappers around a model judge, shared by every worker through Redis.

- ``CachedJudge``: the same task (content hash) under the same rubric and models gets the
  same verdict, from any worker, at no cost. Judges flap near thresholds; a review that
  is repeated must not flip, and a redelivered task must not pay twice.
- ``RateLimitedJudge``: one token bucket per model for the whole fleet. Per-process
  concurrency knobs do not stop a fleet of workers from tripping the provider's limits.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from typing import Final

import redis

from schemas.judging import JudgeTask, JudgeTier, JudgeVerdict, TokenUsage
from workers.errors import JudgeRetryableError
from workers.judges.base import Judge

# KEYS: bucket. ARGV: rate per second, burst, now (ms). Returns 0 when a token was
# taken, else the milliseconds to wait for one.
_TAKE_TOKEN: Final = """
local rate, burst, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = math.ceil((1 - tokens) * 1000 / rate) end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return wait
"""


class CachedJudge:
    """Answers a task seen before from Redis; asks the inner judge otherwise."""

    def __init__(
        self, inner: Judge, client: redis.Redis, *, key_prefix: str, namespace: str, ttl_s: int
    ) -> None:
        self._inner = inner
        self._redis = client
        self._prefix = key_prefix
        self._namespace = namespace
        self._ttl_s = ttl_s

    def key(self, task: JudgeTask) -> str:
        """The content hash of a task under this judge's rubric and models."""
        digest = hashlib.sha256(f"{self._namespace}\n{task.model_dump_json()}".encode())
        return f"{self._prefix}:verdict:{digest.hexdigest()}"

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        """The cached verdict (free: no calls, no cost), or a fresh one, then cached."""
        key = self.key(task)
        cached = self._redis.get(key)
        if cached is not None:
            hit = JudgeVerdict.model_validate_json(cached)
            return hit.model_copy(update={"usage": TokenUsage(), "cost_usd": 0.0, "calls": 0})
        verdict = self._inner.evaluate(task)
        self._redis.set(key, verdict.model_dump_json(), ex=self._ttl_s)
        return verdict


class RateLimitedJudge:
    """Takes a fleet-wide token for the task's model before each call."""

    def __init__(
        self,
        inner: Judge,
        client: redis.Redis,
        *,
        key_prefix: str,
        models: Mapping[JudgeTier, str],
        rate_per_s: float,
        burst: int,
        max_wait_s: float,
    ) -> None:
        self._inner = inner
        self._script = client.register_script(_TAKE_TOKEN)
        self._prefix = key_prefix
        self._models = dict(models)
        self._rate = rate_per_s
        self._burst = burst
        self._max_wait_s = max_wait_s

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        """Wait for a token (bounded), then call the inner judge."""
        self.acquire(self._models[task.tier])
        return self._inner.evaluate(task)

    def acquire(self, model: str) -> None:
        """Block until the model's bucket yields a token, or fail as retryable."""
        deadline = time.monotonic() + self._max_wait_s
        bucket = f"{self._prefix}:ratelimit:{model}"
        while True:
            wait_ms = int(self._script(keys=[bucket], args=[self._rate, self._burst, _now_ms()]))
            if wait_ms == 0:
                return
            if time.monotonic() + wait_ms / 1000 > deadline:
                raise JudgeRetryableError(
                    f"rate limit for {model}: no token within {self._max_wait_s:.0f}s"
                )
            time.sleep(wait_ms / 1000)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000
