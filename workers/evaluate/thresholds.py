"""The score lines the seeds draw, each named once.

dag-quality.md: >= 0.8 accepts, < 0.3 on a first attempt is fundamentally wrong.
windags-evaluator.md: a score above 0.8 needs a justification (no rubber stamps).
"""

from __future__ import annotations

ACCEPT_SCORE = 0.8
"""A dimension at or above this is good enough to accept, and a strength to preserve."""
HOPELESS_SCORE = 0.3
"""Below this on a first attempt, the output goes to a human at once."""
ACCEPTABLE_BEST = 0.5
"""Below this, even a plateaued best attempt is not accepted on its own."""
JUSTIFY_ABOVE = 0.8
"""A judged score above this needs a justification, or it is capped here."""
