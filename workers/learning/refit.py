"""Refit the calibration from the outcome store: the periodic task the router never waits on.

Labels are grouped per attempt; the truth is the human's label when there is one, else a
downstream consumer's, else Stage 2's (a score below 0.8 is a failure, the Ceiling's own
bar). Stage 2's catch rate counts only attempts it reviewed whose truth came from someone
else, so Stage 2 is never graded by itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from schemas.calibration import CalibrationModel, EvaluatorRecord, Evidence, TrainingOutcome
from schemas.human import LabelledOutcome, OutcomeSource
from workers.evaluate.escalation.calibration import fit
from workers.records.calibration import CalibrationStore
from workers.records.outcomes import OutcomeStore

#: A label below this is a failure (the Ceiling's pass bar).
FAIL_BELOW = 0.8
_TRUST = (OutcomeSource.HUMAN, OutcomeSource.DOWNSTREAM, OutcomeSource.STAGE2)


def _grouped(labels: Iterable[LabelledOutcome]) -> list[list[LabelledOutcome]]:
    """Labels per attempt, of attempts the fleet remembered Stage 1's view of."""
    grouped: dict[tuple[str, str, int], list[LabelledOutcome]] = {}
    for label in labels:
        if label.stage1 is not None:
            grouped.setdefault((label.dag_id, label.node_id, label.attempt), []).append(label)
    return sorted(grouped.values(), key=lambda g: min(o.recorded_at for o in g))  # oldest first


def _truth(group: list[LabelledOutcome]) -> LabelledOutcome | None:
    """The most trusted label of an attempt; a peer's signal is never the truth."""
    trusted = [o for o in group if o.source in _TRUST]
    return min(trusted, key=lambda o: _TRUST.index(o.source)) if trusted else None


def _row(truth: LabelledOutcome, group: list[LabelledOutcome]) -> TrainingOutcome:
    view = truth.stage1
    assert view is not None  # grouped only with a view
    failed = truth.label < FAIL_BELOW
    stage2 = [o for o in group if o.source is OutcomeSource.STAGE2]
    caught = None
    if failed and stage2 and truth.source is not OutcomeSource.STAGE2:
        caught = stage2[0].label < FAIL_BELOW
    if view.claimed_success_rate is None or view.stage is None or view.breaker is None:
        # An older record: only the P(fail) the router used and the Wall grade remain.
        return TrainingOutcome(
            skill_id=truth.skill_id, claimed_success_rate=1.0 - view.failure_probability,
            prior=view.failure_probability,
            evidence=Evidence(wall_grade=view.wall_grade, attempt=truth.attempt),
            failed=failed, stage2_caught=caught,
        )  # fmt: skip
    scale = view.stage.factor * view.breaker.penalty
    return TrainingOutcome(
        skill_id=truth.skill_id,
        claimed_success_rate=view.claimed_success_rate,
        prior=min(1.0, (1.0 - view.claimed_success_rate) * scale),
        evidence=view.evidence or Evidence(wall_grade=view.wall_grade, attempt=truth.attempt),
        failed=failed,
        stage2_caught=caught,
        prior_scale=scale,
    )


def training_outcomes(labels: Iterable[LabelledOutcome]) -> list[TrainingOutcome]:
    """One training row per labelled attempt, with the truth.

    The prior's inputs and Stage 1's evidence are those the router saw: the same features
    it prices with.
    """
    rows = []
    for group in _grouped(labels):
        truth = _truth(group)
        if truth is not None:
            rows.append(_row(truth, group))
    return rows


def evaluator_records(labels: Iterable[LabelledOutcome]) -> dict[str, EvaluatorRecord]:
    """Each evaluator's agreement with the truth someone else gave on the same attempt."""
    counts: dict[str, list[int]] = {}
    for group in _grouped(labels):
        truth = _truth(group)
        if truth is None:
            continue
        failed = truth.label < FAIL_BELOW
        for other in group:
            if other is truth or other.evaluator == truth.evaluator:
                continue
            agreed, graded = counts.setdefault(other.evaluator, [0, 0])
            counts[other.evaluator] = [agreed + ((other.label < FAIL_BELOW) == failed), graded + 1]
    return {k: EvaluatorRecord(agreed=a, graded=g) for k, (a, g) in sorted(counts.items())}


def refit(
    outcomes: OutcomeStore,
    store: CalibrationStore,
    *,
    min_outcomes: int,
    pseudo_count: float,
) -> CalibrationModel:
    """Fit a new model from every stored outcome and make it current; returns it."""
    labels = list(outcomes.export())
    rows = training_outcomes(labels)
    previous = store.load()
    sequence = _sequence(previous) + 1
    model = fit(
        rows,
        version=f"v{sequence}-n{len(rows)}",
        min_outcomes=min_outcomes,
        pseudo_count=pseudo_count,
    ).model_copy(update={"evaluators": evaluator_records(labels)})
    store.save(model)
    return model


def _sequence(model: CalibrationModel | None) -> int:
    if model is None:
        return 0
    head = model.version.split("-", 1)[0].lstrip("v")
    return int(head) if head.isdigit() else 0
