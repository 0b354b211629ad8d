"""The pure review engine: plain functions over wire models.

Imports nothing from Celery, Redis or any network client; a test proves it.
"""

from workers.evaluate.confidence import aggregate_confidence
from workers.evaluate.convergence import monitor_convergence
from workers.evaluate.escalation import decide_escalation, estimate_stage2_cost
from workers.evaluate.feedback import synthesize_feedback
from workers.evaluate.floor import check_floor
from workers.evaluate.iteration import decide_iteration
from workers.evaluate.stages import apply_ceiling, indeterminate_ceiling, run_stage1
from workers.evaluate.verdict import decision_basis, finalize
from workers.evaluate.wall import resolve_wall, score_wall

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
    "run_stage1",
    "score_wall",
    "synthesize_feedback",
]
