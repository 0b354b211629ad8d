"""Confidence: the weighted average of the evaluator signals that are available.

Weights are renormalised over the signals present (dag-quality.md). Self-evaluation is
sycophancy-biased, so it never enters the score (BC-EVAL-005): it is kept beside it as a
process self-check. When peer and downstream disagree by more than 0.4 a human should
look (unless a human signal is already in: then a person has looked), and the conflict
rules shift weight towards whichever source is more trustworthy.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.request import Signals
from schemas.result import Confidence, SelfCheck


@dataclass(frozen=True, slots=True)
class ConfidencePolicy:
    """Weights and thresholds of the aggregation; the defaults are the seeds'."""

    peer: float = 0.25
    downstream: float = 0.35
    human: float = 0.50
    self_check: float = 0.15
    disagreement_limit: float = 0.4
    critical_peer: float = 0.15
    """Worked Example 3: a critical downstream consumer shifts weight from peer to it."""
    critical_downstream: float = 0.45
    expert_peer: float = 0.40
    expert_downstream: float = 0.25
    reliability_floor: float = 0.7
    """Below this historical reliability the peer's weight is halved."""


DEFAULT_POLICY = ConfidencePolicy()


def aggregate_confidence(
    signals: Signals | None,
    *,
    downstream_critical: bool,
    policy: ConfidencePolicy = DEFAULT_POLICY,
) -> Confidence:
    """Combine the signals; the rules that fired are recorded in order."""
    if signals is None:
        return Confidence(score=None, weights={})
    weights, rules = _weights(signals, downstream_critical, policy)
    values = {"peer": signals.peer, "downstream": signals.downstream, "human": signals.human}
    present = {name: value for name, value in values.items() if value is not None}
    # Rounded before the comparison, so the recorded value explains the flag.
    disagreement = (
        round(abs(signals.peer - signals.downstream), 6)
        if signals.peer is not None and signals.downstream is not None
        else None
    )
    conflict = disagreement is not None and disagreement > policy.disagreement_limit
    # The flag asks for a person; a human signal means one has already looked.
    human_review = conflict and signals.human is None
    if conflict:
        settled = "human review" if human_review else "settled by the human signal"
        rules = (
            f"disagreement {disagreement:.2f} > {policy.disagreement_limit}: {settled}",
            *rules,
        )
    score = weighted_average(present, weights)
    used = {name: round(weights[name], 6) for name in present}
    self_check = None
    if signals.self_ is not None:
        gap = signals.self_ - score if score is not None else 0.0
        self_check = SelfCheck(score=signals.self_, weight=policy.self_check, gap=round(gap, 6))
    return Confidence(
        score=None if score is None else round(score, 6),
        weights=used,
        rules=rules,
        disagreement=disagreement,
        human_review=human_review,
        self_check=self_check,
    )


def weighted_average(values: dict[str, float], weights: dict[str, float]) -> float | None:
    """Weighted mean of ``values`` with weights renormalised to sum to 1 over those present."""
    total = sum(weights[name] for name in values)
    if not values or total <= 0:
        return None
    return sum(values[name] * weights[name] for name in values) / total


def _weights(
    signals: Signals, downstream_critical: bool, policy: ConfidencePolicy
) -> tuple[dict[str, float], tuple[str, ...]]:
    peer, downstream, rules = policy.peer, policy.downstream, []
    if downstream_critical:
        peer, downstream = policy.critical_peer, policy.critical_downstream
        rules.append(f"critical downstream: peer {peer}, downstream {downstream}")
    elif signals.peer_has_expertise:
        peer, downstream = policy.expert_peer, policy.expert_downstream
        rules.append(f"peer expertise: peer {peer}, downstream {downstream}")
    if signals.peer_reliability is not None and signals.peer_reliability < policy.reliability_floor:
        peer /= 2
        rules.append(
            f"peer reliability {signals.peer_reliability} < {policy.reliability_floor}: "
            f"peer weight halved to {peer}"
        )
    return {"peer": peer, "downstream": downstream, "human": policy.human}, tuple(rules)
