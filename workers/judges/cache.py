"""A fleet-wide verdict cache in front of a model judge.

The same task (content hash) under the same rubric and models gets the same verdict, from
any worker, at no cost. Judges flap near thresholds; a review that is repeated must not
flip, and a redelivered task must not pay twice.
"""

from __future__ import annotations

import hashlib

import redis

from schemas.judging import JudgeTask, JudgeVerdict, TokenUsage
from workers.judges.base import Judge
from workers.keys import Keys


class CachedJudge:
    """Answers a task seen before from Redis; asks the inner judge otherwise."""

    def __init__(
        self, inner: Judge, client: redis.Redis, keys: Keys, *, namespace: str, ttl_s: int
    ) -> None:
        self._inner = inner
        self._redis = client
        self._keys = keys
        self._namespace = namespace
        self._ttl_s = ttl_s

    def key(self, task: JudgeTask) -> str:
        """The content hash of a task under this judge's rubric and models."""
        digest = hashlib.sha256(f"{self._namespace}\n{task.model_dump_json()}".encode())
        return self._keys.verdict(digest.hexdigest())

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
