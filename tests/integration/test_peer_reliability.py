"""The peer's historical reliability from outcomes (issue 15): graded in refit against the
truth someone else gave, stored with the model, and read by the conflict rules in Stage 1
when a request sends a peer signal without one ("Historical Peer reliability < 0.7?")."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from schemas.calibration import CalibrationModel, EvaluatorRecord
from schemas.hops import Stage1Report
from schemas.human import LabelledOutcome, OutcomeSource, StageOneView
from schemas.result import Decision
from tests.integration.support import sample
from tests.integration.test_handlers import scratch_deps, through_stage1
from workers.evaluate.escalation.calibration import RELIABILITY_MIN_GRADED
from workers.fleet.deps import Deps
from workers.learning.refit import evaluator_records
from workers.records.calibration import CalibrationStore

pytestmark = pytest.mark.integration


@pytest.fixture
def deps(redis_url: str) -> Iterator[Deps]:
    with scratch_deps(redis_url, "peer") as built:
        yield built


def _conflicting(**signals: Any) -> dict[str, Any]:
    """Worked Example 3 (peer 0.85, downstream 0.35) without the caller's reliability."""
    body = sample("example3_conflicting_signals.json", dag_id=f"d-{uuid.uuid4().hex[:6]}")
    body["signals"] = {"peer": 0.85, "downstream": 0.35, **signals}
    return body


def _stage1(deps: Deps, body: dict[str, Any]) -> tuple[Stage1Report, dict[str, Any]]:
    _, request_json, report_json = through_stage1(deps, body).args
    return Stage1Report.model_validate_json(report_json), json.loads(request_json)


def _store(deps: Deps, agreed: int, graded: int) -> None:
    model = CalibrationModel(
        version="v1-n40",
        evaluators={"peer:sql-optimizer": EvaluatorRecord(agreed=agreed, graded=graded)},
    )
    CalibrationStore(deps.redis, deps.keys, refresh_s=0.0).save(model)


def test_an_unreliable_peer_on_record_gets_its_weight_halved(deps: Deps) -> None:
    _store(deps, agreed=10, graded=25)
    report, request = _stage1(deps, _conflicting())
    assert request["signals"]["peer_reliability"] == 0.4  # filled in from outcomes
    rules = report.confidence.rules
    assert any(r.startswith("peer reliability 0.4 < 0.7: peer weight halved") for r in rules), rules


def test_the_callers_reliability_wins_and_a_short_record_is_not_used(deps: Deps) -> None:
    _store(deps, agreed=10, graded=25)
    report, request = _stage1(deps, _conflicting(peer_reliability=0.82))
    assert request["signals"]["peer_reliability"] == 0.82
    assert not any("peer reliability" in r for r in report.confidence.rules)
    _store(deps, agreed=1, graded=RELIABILITY_MIN_GRADED - 1)
    report, request = _stage1(deps, _conflicting())
    assert (
        "peer_reliability" not in request["signals"]
        or request["signals"]["peer_reliability"] is None
    )
    assert not any("peer reliability" in r for r in report.confidence.rules)


def _label(node: str, source: OutcomeSource, evaluator: str, label: float) -> LabelledOutcome:
    view = StageOneView(floor_passed=True, wall_grade=0.9, failure_probability=0.1,
                        escalated=False, decision=Decision.ACCEPT)  # fmt: skip
    return LabelledOutcome(source=source, evaluator=evaluator, skill_id="s", dag_id="d",
                           node_id=node, attempt=1, label=label, stage1=view,
                           recorded_at="2026-12-03T10:00:00Z")  # fmt: skip


def test_refit_grades_each_evaluator_against_the_truth_someone_else_gave() -> None:
    human, down, stage2, peer = (OutcomeSource.HUMAN, OutcomeSource.DOWNSTREAM,
                                 OutcomeSource.STAGE2, OutcomeSource.PEER)  # fmt: skip
    labels = [
        _label("a", human, "human:x", 0.2), _label("a", peer, "peer:s", 0.9),  # peer wrong
        _label("a", stage2, "stage2:m", 0.3),  # Stage 2 right, graded by the human
        _label("b", down, "downstream:y", 0.9), _label("b", peer, "peer:s", 0.95),  # right
        _label("c", peer, "peer:s", 0.1),  # no truth: a peer is never the truth
        _label("d", stage2, "stage2:m", 0.9),  # Stage 2 alone: the truth, never graded
    ]  # fmt: skip
    records = evaluator_records(labels)
    assert records == {
        "peer:s": EvaluatorRecord(agreed=1, graded=2),
        "stage2:m": EvaluatorRecord(agreed=1, graded=1),
    }
