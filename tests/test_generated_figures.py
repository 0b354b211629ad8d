"""Failover and economics blocks are written from recorded figures, and say what they show."""

from __future__ import annotations

from typing import Any

import pytest

from bench import economics_blocks, failover, figure_text


def test_the_deployment_guides_quote_the_recorded_failover_runs() -> None:
    assert failover.main(["--check"]) == 0, f"a guide is stale: run {failover.COMMAND}"


def _run(**changes: Any) -> dict[str, Any]:
    run = {
        "reviews": 1000, "results": 1000, "lost": 0, "duplicated": 0, "errors": 0,
        "new_primary_named_after_s": 2.1, "first_result_after_kill_s": 3.0,
        "all_done_after_kill_s": 9.1, "batches_refused_and_resubmitted": 1,
        "of_those_lost_in_failover": 0, "run_s": 30.0, "passed": True,
        "reserved_sets_empty_after_kill_s": 12.2,
    }  # fmt: skip
    return {**run, **changes}


def test_failover_ranges_span_every_run() -> None:
    runs = [_run(), _run(new_primary_named_after_s=2.4, results=998, lost=2, passed=False)]
    text = failover.measured(runs)
    assert "In 2 runs (1 passed)" in text
    assert "(998 to 1000 per run)" in text and "0 to 2 lost" in text
    assert "primary 2.1 to 2.4 s after the kill" in text
    assert "empty 12.2 s after" in failover.reserved_sets(runs)


@pytest.mark.parametrize(("learned", "says"), [(-1.0, "at least the nets"), (-3.0, "behind")])
def test_the_economics_paragraph_says_where_the_learned_router_stands(
    learned: float, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures = figure_text.results("economics")
    figures["policies"]["learned"]["net_usd"] = learned
    figures["policies"]["evidence_oracle"]["net_usd"] = -2.0
    figures["policies"]["rate_oracle"]["net_usd"] = -2.5
    monkeypatch.setattr(economics_blocks, "results", lambda name: figures)
    assert says in economics_blocks.economics()
