"""The router's decision: run the expensive Ceiling only where it pays.

Hard rules first (human gate, final deliverable, irreversible), then
``P(fail | evidence) x P(catch | fail) x downstream waste > stage2 cost``; on a fresh
deployment (no calibration) that is the seed's ``P(fail) x downstream waste``, P(fail)
from the claimed success rate and the catch rate 1.0 (``calibration.posterior``).
P(fail) is floored at 0.01 and downstream waste capped at 5x the node's own cost,
the seed's fix for the Escalation Cascade Explosion. Every decision carries its
breakdown, whichever rule decided (BC-EVAL-003).
"""

from __future__ import annotations

from collections.abc import Iterable

from schemas.calibration import CalibrationModel
from schemas.decisions import Suppression
from schemas.judging import ModelPrice, TokenUsage
from schemas.request import DownstreamNode, ReviewRequest
from schemas.result import EscalationDecision, EscalationReason, Stage1Result
from schemas.topology import DownstreamSource
from workers.evaluate.escalation.calibration import posterior
from workers.evaluate.wall.grounding.task_parts import task_for_judge

FAILURE_PROBABILITY_FLOOR = 0.01
WASTE_CAP_MULTIPLE = 5.0
#: Tokens of rubric and instructions around the output in a Ceiling prompt.
RUBRIC_TOKENS = 1500
#: Tokens a Ceiling verdict takes to write.
VERDICT_TOKENS = 600


def failure_probability(request: ReviewRequest) -> tuple[float, float]:
    """(P(fail) used, raw P(fail)) from the skill's record, stage and breaker."""
    skill = request.skill
    raw = (1.0 - skill.success_rate) * skill.stage.factor * skill.breaker.penalty
    return min(1.0, max(FAILURE_PROBABILITY_FLOOR, raw)), raw


def downstream_waste(request: ReviewRequest) -> tuple[float, float]:
    """(waste used, raw waste): what a bad output would spoil downstream."""
    raw = cascade_waste(request.downstream, request.cascade_probability)
    return min(raw, WASTE_CAP_MULTIPLE * request.node_cost_usd), raw


def cascade_waste(downstream: Iterable[DownstreamNode], cascade_probability: float) -> float:
    """Each consumer's cost discounted by the cascade probability once per hop.

    Summed per hop first: with direct consumers only it is the seed's
    ``sum(costs) x cascade_probability``, to the last bit.
    """
    by_hop: dict[int, float] = {}
    for node in downstream:
        by_hop[node.hops] = by_hop.get(node.hops, 0.0) + node.cost_usd
    return sum(cost * cascade_probability**hops for hops, cost in sorted(by_hop.items()))


def estimate_stage2_cost(prompt_chars: int, price: ModelPrice) -> float:
    """A Ceiling review's cost from what its prompt carries: ~4 characters a token."""
    usage = TokenUsage(input_tokens=RUBRIC_TOKENS + prompt_chars // 4, output_tokens=VERDICT_TOKENS)
    return price.cost(usage)


def prompt_chars(request: ReviewRequest) -> int:
    """The characters a Ceiling prompt carries besides its rubric.

    The judge reads the output with everything the node was given (task, contract,
    sources): a summary of a long article costs the article, not only the summary, and
    costs it once whether the article came in the task, the sources or both.
    """
    contract = request.contract.model_dump_json() if request.contract is not None else ""
    given = sum(len(s.text) for s in request.sources)
    task = task_for_judge(request.task, request.sources) or ""
    return len(request.output.content) + len(task) + len(contract) + given


def decide_escalation(
    request: ReviewRequest,
    *,
    stage2_price: ModelPrice,
    stage1: Stage1Result,
    budget_left: bool = True,
    calibration: CalibrationModel | None = None,
    dag_version: int | None = None,
) -> EscalationDecision:
    """Decide whether Stage 2 runs, recording every number that went into it.

    ``calibration`` is the current learned model; None (a fresh deployment, or a model
    that could not be read) is the seed's formula exactly. ``dag_version``: the
    registered DAG the request's ``downstream`` was derived from, if it was.
    """
    post = posterior(request, stage1, calibration)
    raw_p = post.probability
    p_fail = min(1.0, max(FAILURE_PROBABILITY_FLOOR, raw_p))
    waste, raw_waste = downstream_waste(request)
    expected = p_fail * waste
    value = expected * post.catch_rate
    estimated = request.stage2_cost_usd is None
    cost = (
        estimate_stage2_cost(prompt_chars(request), stage2_price)
        if request.stage2_cost_usd is None
        else request.stage2_cost_usd
    )
    # Decide on the recorded (rounded) numbers, so the breakdown always explains the
    # decision: 0.225 x 0.072 is 0.016200000000000003 in floating point, not > 0.0162.
    expected, value, cost = round(expected, 6), round(value, 6), round(cost, 6)
    reason = _reason(request, value, cost)
    suppressed = None
    if reason is not EscalationReason.NONE:
        suppressed = _suppression(stage1, budget_left)
    return EscalationDecision(
        escalate=reason is not EscalationReason.NONE and suppressed is None,
        reason=reason,
        failure_probability=round(p_fail, 6),
        downstream_waste=round(waste, 6),
        expected_waste=expected,
        stage2_cost=cost,
        stage2_cost_estimated=estimated,
        raw_failure_probability=round(raw_p, 6),
        raw_downstream_waste=round(raw_waste, 6),
        suppressed_by=suppressed,
        prior_failure_probability=round(min(1.0, max(0.0, post.prior)), 6),
        skill_success_rate=round(post.skill_success, 6),
        evidence_terms=post.terms,
        catch_rate=round(post.catch_rate, 6),
        model_version=post.version,
        expected_value=value,
        downstream_source=_downstream_source(request, dag_version),
        dag_version=dag_version,
    )


def _downstream_source(request: ReviewRequest, dag_version: int | None) -> DownstreamSource:
    if dag_version is not None:
        return DownstreamSource.REGISTERED_DAG
    return DownstreamSource.REQUEST if request.downstream else DownstreamSource.NONE


def _suppression(stage1: Stage1Result, budget_left: bool) -> Suppression | None:
    """Why a warranted escalation does not run: a failed Stage 1 skips the Ceiling."""
    if not stage1.floor.passed:
        return Suppression.FLOOR_FAILED
    if not stage1.wall.passed:
        return Suppression.WALL_FAILED
    if not budget_left:
        return Suppression.BUDGET_EXHAUSTED
    return None


def _reason(request: ReviewRequest, expected_waste: float, stage2_cost: float) -> EscalationReason:
    flags = request.flags
    if flags.feeds_human_gate:
        return EscalationReason.HUMAN_GATE
    if flags.final_deliverable:
        return EscalationReason.FINAL_DELIVERABLE
    if flags.irreversible:
        return EscalationReason.IRREVERSIBLE
    if expected_waste > stage2_cost:
        return EscalationReason.ECONOMIC
    return EscalationReason.NONE
