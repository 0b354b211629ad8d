"""P(fail | evidence): the seed's prior, the skill's record, and Stage 1's evidence.

Cold start is the seed's formula exactly, ``(1 - success_rate) x stage x breaker``, so a
fresh deployment decides as the seed does (Worked Example 2). Outcomes then move it in
two ways: the skill's success rate becomes a Beta posterior whose prior is the claimed
rate worth ``pseudo_count`` outcomes, so a record that contradicts the claim wins once it
is long enough; and, once the model has seen ``min_outcomes``, a logistic map from the
priors (over the record and over the claim) and Stage 1's evidence (Wall grade, issues,
disagreement, kind, attempt) to observed failure replaces the prior, because a node that
scraped through the Wall at 0.61 is not as safe as one that passed at 1.0. Fitting is
plain gradient descent here, called by a refit task, never by the router.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from schemas.calibration import CalibrationModel, Evidence, SkillRecord, TrainingOutcome
from schemas.request import ReviewRequest
from schemas.stages import Stage1Result
from workers.evaluate.escalation.suspicion import suspicion_terms

#: Probabilities are clipped this far from 0 and 1 before a logit.
_EPS = 1e-4
#: Pseudo-outcomes behind the cold-start catch rate of 1.0 (the seed assumes Stage 2 sees all).
CATCH_PSEUDO = 2.0
#: Graded labels an evaluator needs before its historical reliability is used.
RELIABILITY_MIN_GRADED = 20


@dataclass(frozen=True)
class Posterior:
    """P(fail) for one node with every term that produced it."""

    prior: float
    """The seed formula with the claimed success rate."""
    skill_success: float
    """The success rate used: the claimed one, or its Beta posterior."""
    terms: dict[str, float]
    """Each evidence feature's contribution to the logit, and the intercept as ``bias``
    (empty when the map is unused); P(fail) is the sigmoid of their sum."""
    probability: float
    """P(fail | evidence), before the floor."""
    catch_rate: float
    """P(Stage 2 catches | fail)."""
    version: str | None
    """The model that priced it; null on a cold start."""


def evidence_of(request: ReviewRequest, stage1: Stage1Result) -> Evidence:
    """What Stage 1 and the request tell about the node, as the map's input."""
    signals = request.signals
    disagreement = None
    if signals is not None and signals.peer is not None and signals.downstream is not None:
        disagreement = abs(signals.peer - signals.downstream)
    return Evidence(
        wall_grade=stage1.wall.grade,
        wall_issues=len(stage1.wall.issues),
        suspicion=round(sum(suspicion_terms(stage1.wall).values()), 6),
        floor_violations=len(stage1.floor.violations),
        disagreement=disagreement,
        kind=request.output.kind.value,
        attempt=request.attempt,
    )


def seed_prior(success_rate: float, request: ReviewRequest) -> float:
    """The seed's formula: (1 - success rate) x stage factor x breaker penalty."""
    skill = request.skill
    return (1.0 - success_rate) * skill.stage.factor * skill.breaker.penalty


def _logit(p: float) -> float:
    p = min(1.0 - _EPS, max(_EPS, p))
    return math.log(p / (1.0 - p))


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def features(prior: float, evidence: Evidence, claim: float | None = None) -> dict[str, float]:
    """The map's features: the priors' logits and Stage 1's evidence, each near unit scale.

    ``prior`` is the seed formula over the skill's record (its Beta posterior), ``claim``
    the same formula over the rate the caller claimed for this node (``prior`` when not
    given). Both, because a skill's pooled record says nothing about why one request
    claims 0.75 and the next 0.98: the claim keeps ranking nodes within a skill.
    """
    grade = evidence.wall_grade
    return {
        "prior_logit": _logit(prior),
        "claim_logit": _logit(prior if claim is None else claim),
        "wall_gap": 0.0 if grade is None else 1.0 - grade,
        "wall_missing": 1.0 if grade is None else 0.0,
        "wall_issues": math.log1p(evidence.wall_issues),
        "suspicion": evidence.suspicion,
        "floor_violations": math.log1p(evidence.floor_violations),
        "disagreement": evidence.disagreement or 0.0,
        "retry": float(min(evidence.attempt - 1, 5)),
        f"kind:{evidence.kind}": 1.0,
    }


def skill_success(model: CalibrationModel | None, skill_id: str, claimed: float) -> float:
    """The Beta posterior mean of a skill's success rate; the claim itself with no record."""
    record = model.skills.get(skill_id) if model is not None else None
    if record is None or record.successes + record.failures == 0:
        return claimed
    a = model.pseudo_count if model is not None else 0.0
    n = record.successes + record.failures
    return (a * claimed + record.successes) / (a + n)


def catch_rate(model: CalibrationModel | None, feats: dict[str, float] | None = None) -> float:
    """P(Stage 2 catches | fail): 1.0 (the seed's assumption) shrunk toward the record.

    With enough graded reviews the rate depends on the evidence too: what the Wall
    already flagged is not always what the Ceiling catches.
    """
    if model is None:
        return 1.0
    if feats is not None and model.catch_weights:
        z = model.catch_bias + sum(model.catch_weights.get(k, 0.0) * v for k, v in feats.items())
        return _sigmoid(z)
    return (model.catches + CATCH_PSEUDO) / (model.catches + model.misses + CATCH_PSEUDO)


def posterior(
    request: ReviewRequest, stage1: Stage1Result, model: CalibrationModel | None
) -> Posterior:
    """P(fail | evidence) for ``request`` under ``model`` (None: a fresh deployment).

    Before the learned map takes over, Stage 1's suspicions move the prior by their
    fitted likelihood ratios (``suspicion``); with none, the prior stands exactly.
    """
    claimed = request.skill.success_rate
    prior = seed_prior(claimed, request)
    success = skill_success(model, request.skill.id, claimed)
    adjusted = prior if success == claimed else seed_prior(success, request)
    if model is None or model.outcomes < model.min_outcomes or not model.weights:
        version = model.version if model is not None else None
        suspicions = suspicion_terms(stage1.wall)
        if suspicions:
            terms = {"prior_logit": round(_logit(min(1.0, adjusted)), 6), **suspicions}
            probability = _sigmoid(sum(terms.values()))
            return Posterior(prior, success, terms, probability, catch_rate(model), version)
        return Posterior(prior, success, {}, adjusted, catch_rate(model), version)
    feats = features(min(1.0, adjusted), evidence_of(request, stage1), min(1.0, prior))
    # The intercept is a term too: the logit is their sum, so the breakdown re-derives P(fail).
    terms = {"bias": round(model.bias, 6)}
    terms.update({k: round(model.weights.get(k, 0.0) * v, 6) for k, v in feats.items()})
    probability = _sigmoid(sum(terms.values()))
    return Posterior(prior, success, terms, probability, catch_rate(model, feats), model.version)


def prior_under(model: CalibrationModel | None, outcome: TrainingOutcome) -> float:
    """The prior the router prices ``outcome``'s node with under ``model`` (skill record in)."""
    if outcome.prior_scale is None:
        return outcome.prior
    success = skill_success(model, outcome.skill_id, outcome.claimed_success_rate)
    return min(1.0, (1.0 - success) * outcome.prior_scale)


def historical_reliability(model: CalibrationModel | None, evaluator: str) -> float | None:
    """An evaluator's share of labels that agreed with the truth.

    None below ``RELIABILITY_MIN_GRADED`` graded labels: too few to overrule anyone.
    """
    record = model.evaluators.get(evaluator) if model is not None else None
    if record is None or record.graded < RELIABILITY_MIN_GRADED:
        return None
    return round(record.agreed / record.graded, 4)


def peer_evaluator(request: ReviewRequest) -> str:
    """The name a request's peer signal is recorded under: per skill, as no peer is named."""
    return f"peer:{request.skill.id}"


def with_historical_reliability(
    request: ReviewRequest, model: CalibrationModel | None
) -> ReviewRequest:
    """``request`` with its peer's historical reliability filled in from outcomes.

    Only when it sent a peer signal and no reliability (the seed's conflict rule reads it)
    and the record is long enough; unchanged otherwise.
    """
    signals = request.signals
    if signals is None or signals.peer is None or signals.peer_reliability is not None:
        return request
    found = historical_reliability(model, peer_evaluator(request))
    if found is None:
        return request
    updated = signals.model_copy(update={"peer_reliability": found})
    return request.model_copy(update={"signals": updated})


def predict(
    model: CalibrationModel, prior: float, evidence: Evidence, claim: float | None = None
) -> float:
    """The map's P(fail) from a prior and evidence (the prior alone below ``min_outcomes``)."""
    if model.outcomes < model.min_outcomes or not model.weights:
        return prior
    feats = features(prior, evidence, claim)
    return _sigmoid(model.bias + sum(model.weights.get(k, 0.0) * v for k, v in feats.items()))


def fit(
    outcomes: Sequence[TrainingOutcome],
    *,
    version: str,
    min_outcomes: int = 200,
    pseudo_count: float = 20.0,
    steps: int = 300,
    rate: float = 0.5,
    l2: float = 1e-3,
) -> CalibrationModel:
    """Fit skill records, Stage 2's catch rate and the logistic evidence map from outcomes."""
    skills: dict[str, list[float]] = {}
    for o in outcomes:
        counts = skills.setdefault(o.skill_id, [0, 0, 0.0])
        counts[1 if o.failed else 0] += 1
        counts[2] += o.claimed_success_rate
    priors = [_fit_prior(o, skills[o.skill_id], pseudo_count) for o in outcomes]
    bias, weights = 0.0, dict[str, float]()
    if len(outcomes) >= min_outcomes:
        rows = [
            (features(p, o.evidence, o.prior), 1.0 if o.failed else 0.0)
            for p, o in zip(priors, outcomes, strict=True)
        ]
        bias, weights = _gradient_descent(rows, steps=steps, rate=rate, l2=l2)
    graded = [
        (features(p, o.evidence, o.prior), 1.0 if o.stage2_caught else 0.0)
        for p, o in zip(priors, outcomes, strict=True)
        if o.stage2_caught is not None
    ]
    catch_bias, catch_weights = 0.0, dict[str, float]()
    if graded and len(graded) >= max(1, min_outcomes // 10):
        catch_bias, catch_weights = _gradient_descent(
            graded, steps=steps, rate=rate, l2=l2, prior_weight=0.0
        )
    return CalibrationModel(
        version=version,
        outcomes=len(outcomes),
        min_outcomes=min_outcomes,
        pseudo_count=pseudo_count,
        skills={
            k: SkillRecord(successes=int(s), failures=int(f), claimed=round(c / (s + f), 6))
            for k, (s, f, c) in skills.items()
        },
        bias=bias,
        weights=weights,
        catches=sum(1 for o in outcomes if o.stage2_caught is True),
        misses=sum(1 for o in outcomes if o.failed and o.stage2_caught is False),
        catch_bias=catch_bias,
        catch_weights=catch_weights,
    )


def _fit_prior(outcome: TrainingOutcome, counts: Sequence[float], pseudo_count: float) -> float:
    """The prior the router would have priced ``outcome`` with.

    The seed formula over the skill's Beta posterior success rate, the outcome itself left
    out of the record: its own label must not leak into its feature.
    """
    if outcome.prior_scale is None:
        return outcome.prior  # an older record: the prior as it was stored
    successes = counts[0] - (0 if outcome.failed else 1)
    failures = counts[1] - (1 if outcome.failed else 0)
    claimed = outcome.claimed_success_rate
    n = successes + failures
    success = claimed if n <= 0 else (pseudo_count * claimed + successes) / (pseudo_count + n)
    return min(1.0, (1.0 - success) * outcome.prior_scale)


def _gradient_descent(
    rows: list[tuple[dict[str, float], float]],
    *,
    steps: int,
    rate: float,
    l2: float,
    prior_weight: float = 1.0,
) -> tuple[float, dict[str, float]]:
    """Full-batch logistic regression; the failure map starts at the prior (trust the seed)."""
    names = sorted({k for feats, _ in rows for k in feats})
    # The map starts where a fresh deployment decides: the prior, moved by suspicions.
    weights = {k: prior_weight if k in ("prior_logit", "suspicion") else 0.0 for k in names}
    bias, n = 0.0, float(len(rows))
    for _ in range(steps):
        grad = dict.fromkeys(names, 0.0)
        grad_bias = 0.0
        for feats, y in rows:
            err = _sigmoid(bias + sum(weights[k] * v for k, v in feats.items())) - y
            grad_bias += err
            for k, v in feats.items():
                grad[k] += err * v
        bias -= rate * grad_bias / n
        for k in names:
            weights[k] -= rate * (grad[k] / n + l2 * weights[k])
    return round(bias, 6), {k: round(w, 6) for k, w in weights.items()}


def brier(probabilities: Sequence[float], failed: Sequence[bool]) -> float:
    """Mean squared error of P(fail) against the outcome."""
    pairs = list(zip(probabilities, failed, strict=True))
    return sum((p - float(y)) ** 2 for p, y in pairs) / len(pairs) if pairs else 0.0


def reliability(
    probabilities: Sequence[float], failed: Sequence[bool], bins: int = 10
) -> list[tuple[float, float, int]]:
    """(mean predicted, observed rate, count) per equal-width bin with any members."""
    buckets: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for p, y in zip(probabilities, failed, strict=True):
        buckets[min(bins - 1, int(p * bins))].append((p, y))
    return [
        (sum(p for p, _ in b) / len(b), sum(1 for _, y in b if y) / len(b), len(b))
        for b in buckets
        if b
    ]


def ece(probabilities: Sequence[float], failed: Sequence[bool], bins: int = 10) -> float:
    """Expected calibration error: |predicted - observed| per bin, weighted by its size."""
    rows = reliability(probabilities, failed, bins)
    total = sum(n for _, _, n in rows)
    return sum(n * abs(p - o) for p, o, n in rows) / total if total else 0.0
