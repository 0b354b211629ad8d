"""What Stage 1's suspicions say about P(fail) before any outcome is recorded.

A suspect finding never sends an output back; it is evidence, and evidence belongs in
P(fail). On a fresh deployment (no calibration model yet) the seed's prior is moved by a
likelihood ratio per finding code, fitted on labelled public data
(``python -m bench.fit_suspicion``, dev half of the tunable items; the weights and the data
behind them are in ``suspicion_weights``): ``logit P(fail) = logit(prior) + baseline +
sum over suspect codes of (w_count x log(1 + count) + w_penalty x penalty)``. The
baseline is what a check that ran says by itself (a clean extractive answer is less likely
wrong than the skill's record says); a node whose input was never checked (no sources, no
material in the task) gets no term at all, so the seed's formula stands exactly
(Worked Example 2). Weights are per grounding policy, since the same finding means
different things in an extraction and in a chat reply, and never below zero: a suspicion
never argues for an output. Once outcomes exist, their sum is one feature of the learned
map (``calibration.features``), which refits its weight.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from schemas.request import GroundingPolicy
from schemas.stages import Certainty, IssueCode, WallResult
from workers.evaluate.escalation import suspicion_weights

#: The evidence term that carries the policy's baseline.
BASELINE = "suspect:baseline"


@dataclass(frozen=True, slots=True)
class CodeWeights:
    """One code's weights: per log(1 + count) and per unit of penalty."""

    count: float = 0.0
    penalty: float = 0.0


@dataclass(frozen=True, slots=True)
class PolicyWeights:
    """A policy's fitted likelihood ratios, as log-odds."""

    baseline: float
    codes: dict[IssueCode, CodeWeights] = field(default_factory=dict)


def _fitted() -> dict[GroundingPolicy, PolicyWeights]:
    return {
        GroundingPolicy(policy): PolicyWeights(
            baseline=suspicion_weights.BASELINE[policy],
            codes={
                IssueCode(code): CodeWeights(count=c, penalty=p)
                for code, (c, p) in suspicion_weights.CODE_WEIGHTS.get(policy, {}).items()
            },
        )
        for policy in suspicion_weights.BASELINE
    }


#: The fitted table (``suspicion_weights``), one entry per grounding policy.
WEIGHTS = _fitted()


def suspicion_terms(
    wall: WallResult, weights: dict[GroundingPolicy, PolicyWeights] | None = None
) -> dict[str, float]:
    """Each suspect code's contribution to the logit of P(fail), and the baseline.

    Empty when the Wall did not check the output against an input, or did not run.
    """
    use = wall.grounding
    if use is None or wall.grade is None:
        return {}
    table = (weights or WEIGHTS).get(use.policy)
    if table is None:
        return {}
    counts: Counter[IssueCode] = Counter()
    penalties: defaultdict[IssueCode, float] = defaultdict(float)
    for issue in wall.issues:
        if issue.certainty is Certainty.SUSPECT:
            counts[issue.code] += 1
            penalties[issue.code] += issue.penalty
    terms = {BASELINE: table.baseline}
    for code, n in sorted(counts.items()):
        w = table.codes.get(code)
        if w is not None:
            term = w.count * math.log1p(n) + w.penalty * penalties[code]
            if term:
                terms[f"suspect:{code.value}"] = round(term, 6)
    return terms
