"""Time limits for fleets that must get through faults in seconds, not production minutes.

Test fleets run with them, and so does ``bench.soak``, whose compressed run needs the try
counters (kept four visibility timeouts) to expire within its warm-up. They still nest
(``Settings`` checks): judge calls < soft limit < hard limit < visibility timeout.
"""

from __future__ import annotations

from typing import Final

SHORT_LIMITS: Final = {
    "WINDAGS_STAGE1_SOFT_LIMIT_S": "10",
    "WINDAGS_STAGE1_HARD_LIMIT_S": "12",
    "WINDAGS_STAGE2_SOFT_LIMIT_S": "25",
    "WINDAGS_STAGE2_HARD_LIMIT_S": "28",
    "WINDAGS_JUDGE_TIMEOUT_S": "2",
    "WINDAGS_JUDGE_RETRY_BUDGET_S": "2",
    "WINDAGS_VISIBILITY_TIMEOUT_S": "30",
}
