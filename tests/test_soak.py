"""The soak's pure parts: its mix is what it says, and its windows and growth are right.

The soak itself (``python -m bench.soak``) runs for tens of minutes and is not part of
the suite; its committed figures are (``docs/capacity.md``, ``test_capacity_doc.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

from bench import soak_page, soak_report
from bench.common import RESULTS_DIR, build_request
from bench.soak_mix import DAG_NODES, PER_DAG, SAMPLES, Kind, dag_reviews, malformed
from workers.fleet.queues import Queue
from workers.review import Reviewer
from workers.settings import Settings

#: What the fleet decides for each kind of the mix (Stage 2 runs, then accepts).
DECISION = {
    Kind.ACCEPTED: "accept",
    Kind.ITERATED: "iterate",
    Kind.STAGE2: "accept",
    Kind.HUMAN: "escalate_human",
}


def test_each_sample_of_the_mix_ends_as_its_kind_is_counted() -> None:
    review = Reviewer(Settings())
    firsts = {item.sample: item for item in reversed(dag_reviews("soak-check"))}
    assert set(firsts) == {name for names in SAMPLES.values() for name in names}
    for item in firsts.values():
        result = review(build_request(item.body))
        assert result.decision.value == DECISION[item.kind], item.sample
        assert (result.stage2 is not None) == (item.kind is Kind.STAGE2), item.sample


def test_a_dag_of_the_mix_has_every_kind_in_proportion_and_unique_outputs() -> None:
    reviews = dag_reviews("soak-dag")
    assert len(reviews) == DAG_NODES
    assert {k: sum(r.kind is k for r in reviews) for k in Kind} == PER_DAG
    assert len({r.body["output"]["content"] for r in reviews}) == DAG_NODES
    assert len({r.key for r in reviews}) == DAG_NODES
    raw = [malformed(i) for i in range(2 * len(Queue))]
    assert len({data for _, data in raw}) == len(raw) and {q for q, _ in raw} == set(Queue)


def _row(minute: int, rss: float, redis_mb: float) -> dict[str, Any]:
    return {
        "minute": minute,
        "worker_rss_mb": {"stage1": rss, "router": 100.0},
        "redis_used_memory_mb": redis_mb,
        "neighbour_cores": 0.5,
    }


def test_growth_compares_the_last_window_with_the_first_after_the_warm_up() -> None:
    # Minutes 0-1 warm up (ignored however high); 2-3 first window; 8-9 last window.
    series = [_row(m, 200.0 if m < 2 else 100.0 + (10 if m >= 8 else 0), 50.0) for m in range(10)]
    latencies = [(60.0 * m + 1, 100.0 * (2 if m >= 8 else 1)) for m in range(10) for _ in range(5)]
    figures = soak_report.summary(series, latencies, 0.0, warmup=2, size=2)
    assert figures["first_window"] == [2, 4] and figures["last_window"] == [8, 10]
    assert figures["worker_rss_growth_by_worker"] == {"router": 0.0, "stage1": 0.1}
    assert figures["worker_rss_growth"] == 0.1
    assert figures["redis_memory_growth"] == 0.0
    assert (figures["p99_ms_first_window"], figures["p99_ms_last_window"]) == (100.0, 200.0)
    with pytest.raises(ValueError, match="cannot hold"):
        soak_report.windows(5, 2, 2)


def test_the_committed_soak_meets_what_issue_39_asks() -> None:
    """The committed run: 20+ minutes, nothing lost or doubled, flat memory and latency."""
    import json

    soak = json.loads((RESULTS_DIR / "soak.json").read_text())
    assert soak["minutes"] >= 20 and len(soak["series"]) == soak["minutes"]
    assert soak["lost"] == 0 and soak["duplicated"] == 0 and soak["stray"] == 0
    assert soak["worker_rss_growth"] <= 0.10 and soak["redis_memory_growth"] <= 0.10
    assert soak["p99_ms_last_window"] <= 1.2 * soak["p99_ms_first_window"]
    overhead = json.loads((RESULTS_DIR / "overhead.json").read_text())
    assert "Lost: 0. Duplicated: 0" in soak_page.render(soak, overhead)
