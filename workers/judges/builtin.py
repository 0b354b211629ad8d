"""The built-in judge: deterministic scores from measurable properties of the output.

It needs no network, so a fresh machine runs the whole fleet. It is not a rubber stamp:
each score is computed from what the output contains, and each carries the observations
behind it. An output that tries to instruct its judge loses correctness and relevance.
"""

from __future__ import annotations

from schemas.judging import DimensionVerdict, JudgeTask, JudgeTier, JudgeVerdict
from schemas.quality import Dimension
from schemas.request import NodeOutput
from workers.evaluate.findings import Finding
from workers.evaluate.wall.grounding.task_parts import split_task
from workers.evaluate.wall.scoring import score_wall
from workers.judges import coverage, measures

MODEL = "builtin-v1"
INJECTION_PENALTY = 0.3


class BuiltinJudge:
    """Scores Wall, Ceiling and pairwise tasks without calling a model."""

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        """Score every requested dimension of the task's output."""
        if task.tier is JudgeTier.PAIRWISE:
            return self._pairwise(task)
        scores = self._score(task.output, split_task(task.task, task.sources).subject)
        return JudgeVerdict(
            model=MODEL, scores={d: scores[d] for d in task.dimensions if d in scores}, calls=0
        )

    def _score(self, output: NodeOutput, task: str | None) -> dict[Dimension, DimensionVerdict]:
        """Scores against ``task``, what the ask is about (``subject_of``).

        Material pasted into a task is input, not something to cover, and a template's
        standing instructions are about form, not the subject.
        """
        wall = score_wall(output)
        verdicts = {
            d: DimensionVerdict(score=v, justification=_wall_note(wall.findings, d))
            for d, v in wall.scores.items()
        }
        measured = {
            Dimension.CORRECTNESS: measures.correctness(output),
            Dimension.COMPLETENESS: coverage.completeness(output, task),
            Dimension.CLARITY: measures.clarity(output),
            Dimension.RELEVANCE: coverage.relevance(output, task),
        }
        injection = measures.injection_scan(output.content)
        for dimension, (score, notes) in measured.items():
            if injection.attempts and dimension in (Dimension.CORRECTNESS, Dimension.RELEVANCE):
                score -= INJECTION_PENALTY
                notes = [*notes, injection.describe()]
            verdicts[dimension] = DimensionVerdict(
                score=round(min(1.0, max(0.0, score)), 4), justification="; ".join(notes)
            )
        return verdicts

    def _pairwise(self, task: JudgeTask) -> JudgeVerdict:
        if task.other is None:
            raise ValueError("a pairwise task needs a second output")
        ask = split_task(task.task, task.sources).subject
        first = self._score(task.output, ask)
        second = self._score(task.other, ask)
        scores = {}
        for dimension in task.dimensions:
            a, b = first[dimension].score, second[dimension].score
            scores[dimension] = DimensionVerdict(
                score=round(min(1.0, max(0.0, 0.5 + (a - b) / 2)), 4),
                justification=f"first {a:.2f} against second {b:.2f}",
            )
        return JudgeVerdict(model=MODEL, scores=scores, calls=0)


def _wall_note(findings: tuple[Finding, ...], dimension: Dimension) -> str:
    messages = [f.issue.message for f in findings if f.issue.dimension is dimension]
    return "; ".join(messages) if messages else f"no {dimension.value} issues found"
