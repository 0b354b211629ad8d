"""Stage 2's claim and cache: a redelivered review never pays the judge twice.

The finished Ceiling is kept under the review key; while a worker runs it, a claim
(``SET NX`` with the Stage 2 hard limit as TTL) tells every other delivery to wait. The
claim is taken, and the kept Ceiling looked for, in the round trip that counts the try
(``workers.fleet.tries``). After the model call the report is kept, and the claim
released, in the round trip that records the review's labels just before its entry
(``ahead`` of ``workers.fleet.publish``): a worker killed after it leaves a redelivery
that finds the report, publishes once and pays the judge nothing more. A try that fails
after judging keeps the report as it ends.

A claim whose release meets Redis down (restarting) is released as soon as Redis answers,
for as long as it would live (``TryCounter.release``).
"""

from __future__ import annotations

import time

import redis

from schemas.hops import Stage1Report, Stage2Report
from schemas.request import ReviewRequest
from workers.evaluate import run_ceiling
from workers.fleet.deps import Deps
from workers.fleet.tries import Claim, ClaimState, TryCount
from workers.judges.ceiling import model_ceiling_judge
from workers.results.batch import Batch


def stage2_claim(deps: Deps, review_key: str) -> Claim:
    """The claim on ``review_key``'s Ceiling, and where the Ceiling is kept once judged."""
    keys = deps.keys
    return Claim(
        keys.stage2_claim(review_key),
        deps.settings.stage2_hard_limit_s,
        keys.stage2_report(review_key),
    )


class CeilingClaim:
    """One delivery's Ceiling: kept already, judged under its claim, or waited for.

    Built from the try's count, which took the claim (or found it held) and asked whether
    the Ceiling is kept; ``release`` must follow, whatever ends the work.
    """

    def __init__(self, deps: Deps, claim: Claim, count: TryCount) -> None:
        self._deps = deps
        self._claim = claim
        self._held = count.claim is ClaimState.TAKEN
        self._kept = count.kept
        self._expires_at = time.monotonic() + claim.ttl_s
        self._unkept: Stage2Report | None = None  # judged here, not yet written

    def ceiling(self, request: ReviewRequest, report: Stage1Report) -> Stage2Report | None:
        """The review's Ceiling: kept, or judged now under the claim; None while another has it."""
        if self._kept:
            cached = self._deps.redis.get(self._claim.kept)
            if cached is not None:
                return Stage2Report.model_validate_json(cached)
        if not self._held:
            return None
        # The claim only guards a judgement in progress; a crash releases it, a kill -9
        # leaves it to expire (at the hard limit, before any redelivery can arrive).
        self._unkept = run_ceiling(request, report, model_ceiling_judge(self._deps.judge))
        return self._unkept

    def keep(self, batch: Batch) -> Batch:
        """``batch`` with the judged report kept and the claim released, in that order."""
        if self._unkept is not None:
            ttl_s = self._deps.settings.dedup_ttl_s
            batch.pipe.set(self._claim.kept, self._unkept.model_dump_json(), ex=ttl_s)
        if self._held:
            batch.pipe.delete(self._claim.key)
        batch.then(self._sent)
        return batch

    def release(self) -> None:
        """After the work, however it ended: keep what was judged, release the claim.

        Both went with the publication's first round trip, unless the work ended first.
        """
        if self._unkept is not None:
            try:
                self.keep(Batch(self._deps.redis)).send()
            except redis.RedisError:
                pass  # Redis is down (or refused): the report is lost; the claim goes below
        if self._held:
            self._held = False
            self._deps.tries.release(self._claim, expires_at=self._expires_at)

    def _sent(self) -> None:
        self._unkept = None
        self._held = False
