"""The one place the harness calls the engine: an in-process review with the built-in judge.

When the engine's entry point moves, only this import changes.
"""

from __future__ import annotations

from schemas.request import ReviewRequest
from schemas.result import ReviewResult
from workers.judges.builtin import BuiltinJudge
from workers.review import review as _review
from workers.settings import DEFAULT_PRICING

STAGE2_MODEL = "claude-sonnet-4-5"
_JUDGE = BuiltinJudge()


def review(request: ReviewRequest) -> ReviewResult:
    """Review ``request`` as ``windags-eval review`` does, with no Wall model judge."""
    return _review(request, _JUDGE, stage2_price=DEFAULT_PRICING[STAGE2_MODEL], wall_judge=None)
