"""Stage 2's claim and cache: a redelivered review never pays the judge twice.

The finished Ceiling is kept under the review key; while a worker runs it, a claim
(``SET NX`` with the Stage 2 hard limit as TTL) tells every other delivery to wait.

A claim whose release meets Redis down (restarting) is released as soon as Redis answers,
for as long as it would live: left to expire, it held the review's redeliveries (handed
back when the connection died) in 5 s waits up to the hard limit after Redis was back.
"""

from __future__ import annotations

import time

import redis

from schemas.hops import Stage1Report, Stage2Report
from schemas.request import ReviewRequest
from workers.evaluate import run_ceiling
from workers.fleet.deps import Deps
from workers.judges.ceiling import model_ceiling_judge


def cached_ceiling(request: ReviewRequest, report: Stage1Report, deps: Deps) -> Stage2Report | None:
    """The review's Ceiling: cached, or judged now under a claim; None while another holds it."""
    keys, review_key = deps.keys, request.review_key
    cached = deps.redis.get(keys.stage2_report(review_key))
    if cached is not None:
        return Stage2Report.model_validate_json(cached)
    # The claim only guards a judgement in progress; a crash releases it, a kill -9
    # leaves it to expire (at the hard limit, before any redelivery can arrive).
    claim = keys.stage2_claim(review_key)
    lives_s = deps.settings.stage2_hard_limit_s
    if not deps.redis.set(claim, "1", nx=True, ex=lives_s):
        return None
    expires_at = time.monotonic() + lives_s
    try:
        stage2 = run_ceiling(request, report, model_ceiling_judge(deps.judge))
        deps.redis.set(
            keys.stage2_report(review_key), stage2.model_dump_json(), ex=deps.settings.dedup_ttl_s
        )
    finally:
        _release(deps, claim, expires_at)
    return stage2


#: How often a release that met Redis down tries again.
RELEASE_EVERY_S = 0.5


def _release(deps: Deps, claim: str, expires_at: float) -> None:
    """Delete ``claim``; through a Redis outage, until it would have expired anyway."""
    while True:
        try:
            deps.redis.delete(claim)
            return
        except (redis.ConnectionError, redis.TimeoutError):
            if time.monotonic() + RELEASE_EVERY_S >= expires_at:
                raise
            time.sleep(RELEASE_EVERY_S)
