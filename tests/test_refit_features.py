"""Refit fits on the features the router prices with (issue 15): an outcome remembers the
claimed rate, stage and breaker behind the prior and Stage 1's evidence as the router read
them; the fit prices the prior with the skill's posterior, leaving the outcome's own label
out, as the router does after the refit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemas.calibration import CalibrationModel, Evidence, SkillRecord, TrainingOutcome
from schemas.human import LabelledOutcome, OutcomeSource, StageOneView
from schemas.result import Decision
from schemas.stages import Certainty
from workers.evaluate.escalation.calibration import (
    evidence_of,
    features,
    posterior,
    prior_under,
    seed_prior,
)
from workers.intake import decode_request
from workers.learning.refit import training_outcomes
from workers.records.attempts import stage_one_view
from workers.review import Reviewer
from workers.settings import Settings

SAMPLES = Path(__file__).resolve().parent.parent / "workers" / "samples"


def _labelled(view: StageOneView) -> LabelledOutcome:
    return LabelledOutcome(source=OutcomeSource.DOWNSTREAM, evaluator="downstream:x",
                           skill_id="sql-optimizer", dag_id="d", node_id="n", attempt=1,
                           label=0.2, stage1=view, recorded_at="2026-12-03T10:00:00Z")  # fmt: skip


def test_an_outcome_row_has_the_routers_prior_and_evidence() -> None:
    raw = (SAMPLES / "example3_conflicting_signals.json").read_bytes()
    request = decode_request(raw, max_request_bytes=1_000_000, max_output_chars=200_000)
    result = Reviewer(Settings(judge_backend="builtin"))(request)
    [row] = training_outcomes([_labelled(stage_one_view(result, request))])
    skill = request.skill
    assert row.claimed_success_rate == skill.success_rate
    assert row.prior == pytest.approx(seed_prior(skill.success_rate, request))
    assert row.prior_scale == pytest.approx(skill.stage.factor * skill.breaker.penalty)
    assert row.evidence == evidence_of(request, result.stage1)
    assert row.evidence.disagreement == pytest.approx(0.5) and row.evidence.kind == "sql"
    # Under a model with a record for the skill, the row's prior is the router's.
    model = CalibrationModel(
        version="v1", skills={"sql-optimizer": SkillRecord(successes=5, failures=15)}
    )
    router = posterior(request, result.stage1, model)
    assert prior_under(model, row) == pytest.approx(seed_prior(router.skill_success, request))


def test_an_older_record_without_the_priors_inputs_still_trains() -> None:
    view = StageOneView(floor_passed=True, wall_grade=0.8, failure_probability=0.2,
                        escalated=False, decision=Decision.ACCEPT)  # fmt: skip
    [row] = training_outcomes([_labelled(view)])
    assert (row.prior, row.prior_scale, row.evidence) == (0.2, None, Evidence(wall_grade=0.8))


def test_the_fit_leaves_each_outcomes_own_label_out_of_its_prior() -> None:
    from workers.evaluate.escalation.calibration import _fit_prior

    row = TrainingOutcome(skill_id="s", claimed_success_rate=0.9, prior=0.1, failed=True,
                          evidence=Evidence(wall_grade=1.0), prior_scale=1.0)  # fmt: skip
    # The skill's record holds 10 successes and 10 failures, this failure among them.
    loo = _fit_prior(row, [10, 10, 18.0], pseudo_count=20.0)
    assert loo == pytest.approx(1 - (20 * 0.9 + 10) / (20 + 19))
    in_sample = 1 - (20 * 0.9 + 10) / (20 + 20)
    assert loo < in_sample  # its own failure would have raised its own prior
    assert (
        features(loo, row.evidence)["prior_logit"]
        < features(in_sample, row.evidence)["prior_logit"]
    )


def test_nodes_of_one_skill_keep_their_claimed_rates_apart_once_its_record_is_long() -> None:
    import random

    from schemas.result import FloorResult, Stage1Result, WallResult
    from tests.evaluate.builders import request, skill
    from workers.evaluate.escalation.calibration import fit

    rng = random.Random(4)
    rows = []
    for _ in range(1500):  # one skill, claims spread 0.75..0.98, failing as claimed
        claimed = rng.uniform(0.75, 0.98)
        failed = rng.random() < 1 - claimed
        rows.append(TrainingOutcome(skill_id="skill-1", claimed_success_rate=claimed,
                                    prior=1 - claimed, evidence=Evidence(wall_grade=1.0),
                                    failed=failed, prior_scale=1.0))  # fmt: skip
    model = fit(rows, version="v1-n1500", min_outcomes=200)
    stage1 = Stage1Result(passed=True, floor=FloorResult(passed=True),
                          wall=WallResult(passed=True, grade=1.0))  # fmt: skip
    # The skill's pooled record (pseudo-count 20 against 1500) says ~0.86 for both.
    low, high = (posterior(request(skill=skill(rate)), stage1, model) for rate in (0.75, 0.98))
    assert abs(low.skill_success - high.skill_success) < 0.01
    assert low.probability > 2 * high.probability  # the claim still ranks them
    assert low.terms["claim_logit"] > high.terms["claim_logit"]


def test_a_suspect_finding_with_no_input_is_evidence_for_the_learned_map() -> None:
    # "Studies show ..." with no source to check it against: an unsupported claim, suspect
    # (it never sends the output back) and covered by no cold-start weight. The learned map
    # still reads it (python -m bench.economics lost it when it was made suspect).
    content = (
        "The search service handles about 4500 queries per hour at peak. Studies show that "
        "87% of companies lose data in nightly migrations. Experts agree that rolling "
        "backfills are always safer."
    )
    request = decode_request(
        json.dumps(
            {
                "dag_id": "d",
                "node_id": "n",
                "skill": {"id": "writer", "success_rate": 0.9},
                "output": {"kind": "text", "content": content},
                "task": "Describe how the search service scales and what the main risk is.",
            }
        ).encode(),
        max_request_bytes=1_000_000,
        max_output_chars=200_000,
    )
    stage1 = Reviewer(Settings(judge_backend="builtin"))(request).stage1
    suspect = [i for i in stage1.wall.issues if i.certainty is Certainty.SUSPECT]
    assert suspect and stage1.wall.grounding is None  # nothing to weigh it at cold start
    evidence = evidence_of(request, stage1)
    assert evidence.wall_issues == len(stage1.wall.issues) >= 1
    assert features(0.1, evidence)["wall_issues"] > 0
