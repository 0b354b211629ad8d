"""The learned router inside the economics simulation: outcomes fed back as nodes are reviewed.

Each seed is a fresh deployment: the learned router starts from the seed's prior (no
model) and, as nodes are reviewed, every node that passed Stage 1 becomes a labelled
outcome (its true defectiveness, as a downstream consumer would report it, and, when
Stage 2 reviewed a defective one, whether it caught it). The model is refitted every
``REFIT_EVERY`` outcomes by the same ``fit`` the refit task runs, and the router prices
each next node with the latest model. Only Stage 1 passes are outcomes: the router only
ever prices those (a Stage 1 rejection short-circuits the Ceiling).

Calibration is scored on held-out simulated nodes (a seed the router never learned
from): Brier score and ECE of P(fail) against defectiveness, prior vs learned, and the
learning curve of models snapshotted after 100, 500 and 2000 outcomes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from schemas.calibration import CalibrationModel, TrainingOutcome
from schemas.judging import ModelPrice
from workers.evaluate import decide_escalation
from workers.evaluate.escalation.calibration import brier, ece, evidence_of, fit, seed_prior
from workers.settings import Settings

if TYPE_CHECKING:
    from bench.economics import Node, Simulation

REFIT_EVERY = 100
CURVE = (100, 500, 2000)


class Priced(Protocol):
    """What the router needs of a simulation: Stage 2's price."""

    @property
    def price(self) -> ModelPrice:
        """The Stage 2 model's price."""
        ...


def _settings() -> tuple[int, float]:
    settings = Settings()
    return settings.calibration_min_outcomes, settings.calibration_pseudo_count


def outcome_of(node: Node, escalated: bool) -> TrainingOutcome:
    """What the outcome store would hold for ``node`` once its truth is known."""
    request = node.request
    return TrainingOutcome(
        skill_id=request.skill.id,
        claimed_success_rate=request.skill.success_rate,
        prior=min(1.0, seed_prior(request.skill.success_rate, request)),
        evidence=evidence_of(request, node.stage1),
        failed=node.defective,
        stage2_caught=node.ceiling_flags if escalated and node.defective else None,
        prior_scale=request.skill.stage.factor * request.skill.breaker.penalty,
    )


def refit(rows: list[TrainingOutcome]) -> CalibrationModel:
    """The model the refit task would fit on ``rows``, with the fleet's settings."""
    least, pseudo = _settings()
    return fit(rows, version=f"v{len(rows) // REFIT_EVERY}-n{len(rows)}", min_outcomes=least,
               pseudo_count=pseudo)  # fmt: skip


def learned_run(
    sim: Priced, nodes: Sequence[Node]
) -> tuple[list[bool], list[TrainingOutcome], CalibrationModel | None]:
    """The learned router's decisions on ``nodes`` in order, learning as it goes."""
    model: CalibrationModel | None = None
    rows: list[TrainingOutcome] = []
    escalated: list[bool] = []
    for node in nodes:
        decision = decide_escalation(
            node.request, stage2_price=sim.price, stage1=node.stage1, calibration=model
        )
        escalated.append(decision.escalate)
        if node.stage1_passed:
            rows.append(outcome_of(node, decision.escalate))
            if len(rows) % REFIT_EVERY == 0:
                model = refit(rows)
    return escalated, rows, model


def training_stream(sim: Simulation, seed: int, wanted: int) -> list[TrainingOutcome]:
    """``wanted`` outcomes from a fresh stream of nodes, labelled as the learned router runs."""
    import random

    rng = random.Random(seed)
    rows: list[TrainingOutcome] = []
    model: CalibrationModel | None = None
    index = 0
    while len(rows) < wanted:
        node = sim.node(rng, index)
        index += 1
        if not node.stage1_passed:
            continue
        decision = decide_escalation(
            node.request, stage2_price=sim.price, stage1=node.stage1, calibration=model
        )
        rows.append(outcome_of(node, decision.escalate))
        if len(rows) % REFIT_EVERY == 0:
            model = refit(rows)
    return rows


def _p_fail(sim: Priced, node: Node, model: CalibrationModel | None) -> float:
    return decide_escalation(
        node.request, stage2_price=sim.price, stage1=node.stage1, calibration=model
    ).failure_probability


def calibration_scores(
    sim: Priced, held_out: Sequence[Node], models: dict[str, CalibrationModel | None]
) -> dict[str, dict[str, float]]:
    """Brier and ECE of each model's P(fail) on the held-out Stage 1 passes."""
    passes = [n for n in held_out if n.stage1_passed]
    failed = [n.defective for n in passes]
    scores = {}
    for name, model in models.items():
        probabilities = [_p_fail(sim, n, model) for n in passes]
        scores[name] = {
            "brier": round(brier(probabilities, failed), 5),
            "ece": round(ece(probabilities, failed), 5),
            "n": len(passes),
        }
    return scores


def curve_models(rows: list[TrainingOutcome]) -> dict[str, CalibrationModel | None]:
    """The prior and models fitted on the first 100, 500 and 2000 outcomes."""
    models: dict[str, CalibrationModel | None] = {"prior": None}
    for n in CURVE:
        if len(rows) >= n:
            models[f"learned@{n}"] = refit(rows[:n])
    return models


def decisions_with(
    sim: Priced, nodes: Sequence[Node], model: CalibrationModel | None
) -> list[bool]:
    """A fixed model's decisions on ``nodes`` (no learning): for the learning curve."""
    return [
        decide_escalation(
            n.request, stage2_price=sim.price, stage1=n.stage1, calibration=model
        ).escalate
        for n in nodes
    ]


def summarise_curve(
    outcome: Any,
    sim: Simulation,
    held_out: Sequence[Node],
    models: dict[str, CalibrationModel | None],
) -> dict[str, dict[str, float]]:
    """Policy figures (via ``outcome``) of each snapshot model on the held-out nodes."""
    return {name: outcome(list(held_out), decisions_with(sim, held_out, model))
            for name, model in models.items()}  # fmt: skip


def rate_oracle(nodes: Sequence[Node], share: float) -> list[bool]:
    """Hard rules, then Stage-1 passes by true failure rate x waste within ``share`` of always."""
    budget = share * sum(n.stage2_cost for n in nodes if n.stage1_passed)
    chosen = [n.stage1_passed and any(n.request.flags.model_dump().values()) for n in nodes]
    spent = sum(n.stage2_cost for n, c in zip(nodes, chosen, strict=True) if c)
    order = sorted(
        (i for i, n in enumerate(nodes) if n.stage1_passed and not chosen[i]),
        key=lambda i: nodes[i].true_fail * nodes[i].waste,
        reverse=True,
    )
    for i in order:
        if spent + nodes[i].stage2_cost > budget:
            break
        chosen[i] = True
        spent += nodes[i].stage2_cost
    return chosen


def true_rate(node: Node) -> float:
    """The node's true failure rate (noise included): what no router sees."""
    return node.true_fail


def claimed_rate(node: Node) -> float:
    """The seed formula over the claimed rate: what every router sees."""
    request = node.request
    return min(1.0, seed_prior(request.skill.success_rate, request))


def raw_waste(node: Node) -> float:
    """What a defect would spoil downstream, uncapped: what the bench counts as averted."""
    return node.waste


def capped_waste(node: Node) -> float:
    """The waste the seed lets a router act on (capped at 5x the node's cost)."""
    return node.capped_waste


def evidence_oracle(
    nodes: Sequence[Node],
    share: float,
    rate: Callable[[Node], float] = true_rate,
    waste: Callable[[Node], float] = raw_waste,
) -> list[bool]:
    """The best a router working from rates and Stage 1 evidence can do on ``share`` of always.

    It knows each node's true failure rate (no router does) and how Stage 1's evidence
    (whether the Wall found issues) and the Ceiling's catches split defective from good
    outputs in this run (likelihoods counted from the labels). With ``rate=claimed_rate``
    it knows only the seed formula's rate: the best from what a router sees, given perfect
    evidence likelihoods. After the hard rules, it
    escalates Stage-1 passes by expected averted waste per Stage 2 dollar,
    P(defective | rate, evidence) x P(caught | defective, evidence) x waste / cost, until
    it has spent ``share`` of what always spends. ``waste``: the figure it ranks on, the
    uncapped one by default; ``capped_waste`` holds it to the seed's cap, as every router is.
    """

    def evidence(n: Node) -> bool:
        return bool(n.stage1.wall.issues)

    passes = [n for n in nodes if n.stage1_passed]
    bad, good = sum(n.defective for n in nodes) or 1, sum(not n.defective for n in nodes) or 1
    rows = {}
    for seen in (False, True):
        group = [n for n in passes if evidence(n) is seen]
        defective = [n for n in group if n.defective]
        rows[seen] = (
            len(defective) / bad,  # P(passes with this evidence | defective)
            (len(group) - len(defective)) / good,  # P(passes with this evidence | good)
            sum(n.ceiling_flags for n in defective) / len(defective) if defective else 0.0,
        )

    def value(n: Node) -> float:
        like_bad, like_good, caught = rows[evidence(n)]
        r = rate(n)
        p = r * like_bad / (r * like_bad + (1 - r) * like_good or 1.0)
        return p * caught * waste(n) / max(n.stage2_cost, 1e-9)

    budget = share * sum(n.stage2_cost for n in passes)
    chosen = [n.stage1_passed and any(n.request.flags.model_dump().values()) for n in nodes]
    spent = sum(n.stage2_cost for n, c in zip(nodes, chosen, strict=True) if c)
    order = sorted((i for i, n in enumerate(nodes) if n.stage1_passed and not chosen[i]),
                   key=lambda i: value(nodes[i]), reverse=True)  # fmt: skip
    for i in order:
        if spent + nodes[i].stage2_cost > budget:
            continue  # a cheaper one may still fit
        chosen[i] = True
        spent += nodes[i].stage2_cost
    return chosen
