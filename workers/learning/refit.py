"""Refit the calibration from the outcome store: the periodic task the router never waits on.

Labels are grouped per attempt; the truth is the human's label when there is one, else a
downstream consumer's, else Stage 2's (a score below 0.8 is a failure, the Ceiling's own
bar). Stage 2's catch rate counts only attempts it reviewed whose truth came from someone
else, so Stage 2 is never graded by itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from schemas.calibration import CalibrationModel, Evidence, TrainingOutcome
from schemas.human import LabelledOutcome, OutcomeSource
from workers.evaluate.calibration import fit
from workers.human.outcomes import OutcomeStore
from workers.learning.store import CalibrationStore

#: A label below this is a failure (the Ceiling's pass bar).
FAIL_BELOW = 0.8
_TRUST = (OutcomeSource.HUMAN, OutcomeSource.DOWNSTREAM, OutcomeSource.STAGE2)


def training_outcomes(labels: Iterable[LabelledOutcome]) -> list[TrainingOutcome]:
    """One training row per labelled attempt that remembers what Stage 1 saw."""
    grouped: dict[tuple[str, str, int], list[LabelledOutcome]] = {}
    for label in labels:
        if label.stage1 is not None:
            grouped.setdefault((label.dag_id, label.node_id, label.attempt), []).append(label)
    rows = []
    for group in grouped.values():
        truth = min(group, key=lambda o: _TRUST.index(o.source))
        view = truth.stage1
        assert view is not None  # filtered above
        failed = truth.label < FAIL_BELOW
        stage2 = [o for o in group if o.source is OutcomeSource.STAGE2]
        caught = None
        if failed and stage2 and truth.source is not OutcomeSource.STAGE2:
            caught = stage2[0].label < FAIL_BELOW
        rows.append(
            TrainingOutcome(
                skill_id=truth.skill_id,
                claimed_success_rate=1.0 - view.failure_probability,
                prior=view.failure_probability,
                evidence=Evidence(wall_grade=view.wall_grade, attempt=truth.attempt),
                failed=failed,
                stage2_caught=caught,
            )
        )
    return rows


def refit(
    outcomes: OutcomeStore,
    store: CalibrationStore,
    *,
    min_outcomes: int,
    pseudo_count: float,
) -> CalibrationModel:
    """Fit a new model from every stored outcome and make it current; returns it."""
    rows = training_outcomes(outcomes.export())
    previous = store.load()
    sequence = _sequence(previous) + 1
    model = fit(
        rows,
        version=f"v{sequence}-n{len(rows)}",
        min_outcomes=min_outcomes,
        pseudo_count=pseudo_count,
    )
    store.save(model)
    return model


def _sequence(model: CalibrationModel | None) -> int:
    if model is None:
        return 0
    head = model.version.split("-", 1)[0].lstrip("v")
    return int(head) if head.isdigit() else 0
