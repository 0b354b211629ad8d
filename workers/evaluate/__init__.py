"""The pure review engine: plain functions over wire models.

Imports nothing from Celery, Redis or any network client; a test proves it.
"""

from workers.evaluate.ceiling.apply import apply_ceiling, indeterminate_ceiling
from workers.evaluate.ceiling.run import run_ceiling
from workers.evaluate.escalation.formula import decide_escalation, estimate_stage2_cost
from workers.evaluate.floor.structure import check_floor
from workers.evaluate.stage1 import run_stage1
from workers.evaluate.verdict.confidence import aggregate_confidence
from workers.evaluate.verdict.convergence import monitor_convergence
from workers.evaluate.verdict.feedback import synthesize_feedback
from workers.evaluate.verdict.final import decision_basis, finalize
from workers.evaluate.verdict.iteration import decide_iteration
from workers.evaluate.wall.scoring import resolve_wall, score_wall

__all__ = [
    "aggregate_confidence",
    "apply_ceiling",
    "check_floor",
    "decide_escalation",
    "decide_iteration",
    "decision_basis",
    "estimate_stage2_cost",
    "finalize",
    "indeterminate_ceiling",
    "monitor_convergence",
    "resolve_wall",
    "run_ceiling",
    "run_stage1",
    "score_wall",
    "synthesize_feedback",
]
