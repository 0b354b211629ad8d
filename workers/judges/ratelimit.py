"""A token bucket per model, shared by every worker of the fleet through Redis.

Per-process concurrency knobs do not stop a fleet of workers from tripping the
provider's limits; one bucket in Redis does.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Final

import redis

from schemas.judging import JudgeTask, JudgeTier, JudgeVerdict
from workers.errors import JudgeRetryableError
from workers.judges.base import Judge
from workers.keys import Keys

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


class RateLimitedJudge:
    """Takes a fleet-wide token for the task's model before each call."""

    def __init__(
        self,
        inner: Judge,
        client: redis.Redis,
        keys: Keys,
        *,
        models: Mapping[JudgeTier, str],
        rate_per_s: float,
        burst: int,
        max_wait_s: float,
    ) -> None:
        self._inner = inner
        self._script = client.register_script(_TAKE_TOKEN)
        self._keys = keys
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
        bucket = self._keys.rate_bucket(model)
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
