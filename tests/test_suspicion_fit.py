"""The cold-start suspicion weights are current: fitted on the findings the engine gives now.

``suspicion_weights.py`` records a digest of Stage 1's findings on the lines it was fitted
on. An engine change that moves those findings fails here until the weights are refitted
(``python -m bench.fit_suspicion --write``), so weights never silently outlive the engine
they were fitted to. The test recomputes the short digest (the first ``SHORT_LINES`` dev
lines per file); ``python -m bench.fit_suspicion --check`` compares the whole fit set.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench import fit_suspicion
from bench.public.archives import DataUnavailable
from schemas.stages import Stage1Result
from tests.infrastructure import unavailable
from workers.evaluate import run_stage1
from workers.evaluate.escalation import suspicion_weights


def _digest(lines: int) -> str:
    try:
        return str(fit_suspicion.stage1_rows(lines).digest.hexdigest())
    except DataUnavailable as exc:
        unavailable(f"HaluEval data: {exc}")
        raise


def test_the_weights_were_fitted_on_the_findings_the_engine_gives_now() -> None:
    digest = _digest(fit_suspicion.SHORT_LINES)
    assert digest == suspicion_weights.SHORT_DIGEST, (
        "Stage 1's findings on the lines the suspicion weights were fitted on moved since they "
        f"were fitted: run {fit_suspicion.COMMAND} and commit the weights with the change"
    )


def test_the_digest_moves_with_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _digest(1)
    real = run_stage1

    class Dropped:
        def __init__(self, stage1: Stage1Result) -> None:
            wall = stage1.wall.model_copy(update={"issues": stage1.wall.issues[1:]})
            self.stage1 = stage1.model_copy(update={"wall": wall})

    def one_finding_fewer(request: Any) -> Dropped:
        return Dropped(real(request).stage1)

    monkeypatch.setattr(fit_suspicion, "run_stage1", one_finding_fewer)
    assert _digest(1) != before
