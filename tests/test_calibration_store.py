"""The router's calibration store against a real Redis: cached, and never a crash."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from schemas.calibration import CalibrationModel, Evidence, TrainingOutcome
from schemas.human import LabelledOutcome, OutcomeSource, StageOneView
from schemas.result import Decision
from tests.infrastructure import scratch_redis
from workers.evaluate.escalation.calibration import brier
from workers.keys import Keys
from workers.learning.refit import refit, training_outcomes
from workers.learning.report import describe, holdout_scores, plot_reliability
from workers.records.calibration import CalibrationStore
from workers.records.outcomes import OutcomeStore


@pytest.fixture
def scratch() -> Iterator[tuple[redis.Redis, str]]:
    with scratch_redis("calibration") as found:
        yield found


@pytest.fixture
def client(scratch: tuple[redis.Redis, str]) -> redis.Redis:
    return scratch[0]


@pytest.fixture
def keys(scratch: tuple[redis.Redis, str]) -> Keys:
    return Keys(scratch[1])


def test_a_missing_model_is_the_prior_with_a_warning(
    client: redis.Redis, keys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="workers.records.calibration"):
        assert CalibrationStore(client, keys, refresh_s=0.0).current() is None
    assert "no calibration model" in caplog.text


@pytest.mark.parametrize("body", [b"{not json", b'{"version": 3}', b'{"weights": "x"}'])
def test_a_corrupted_model_is_the_prior_with_a_warning(
    client: redis.Redis, keys: Keys, caplog: pytest.LogCaptureFixture, body: bytes
) -> None:
    client.set(keys.calibration_model, body)
    with caplog.at_level(logging.WARNING, logger="workers.records.calibration"):
        assert CalibrationStore(client, keys, refresh_s=0.0).current() is None
    assert "corrupted" in caplog.text


def test_an_unreachable_redis_is_the_prior_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    dead = redis.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    with caplog.at_level(logging.WARNING, logger="workers.records.calibration"):
        assert CalibrationStore(dead, Keys("x"), refresh_s=0.0).current() is None
    assert "unreadable" in caplog.text


def test_the_model_is_cached_and_reread_after_refresh(client: redis.Redis, keys: Keys) -> None:
    now = [0.0]
    store = CalibrationStore(client, keys, refresh_s=30.0, clock=lambda: now[0])
    store.save(CalibrationModel(version="v1-n0"))
    assert (m := store.current()) is not None and m.version == "v1-n0"
    store.save(CalibrationModel(version="v2-n0"))
    now[0] = 29.0
    assert (m := store.current()) is not None and m.version == "v1-n0"  # no Redis read
    now[0] = 31.0
    assert (m := store.current()) is not None and m.version == "v2-n0"


def _label(node: str, source: OutcomeSource, label: float, grade: float) -> LabelledOutcome:
    view = StageOneView(
        floor_passed=True,
        wall_grade=grade,
        failure_probability=0.1,
        escalated=True,
        decision=Decision.ACCEPT,
    )
    return LabelledOutcome(
        source=source, evaluator=f"{source.value}:x", skill_id="sk", dag_id="d",
        node_id=node, attempt=1, label=label, stage1=view, recorded_at="2026-01-01T00:00:00Z",
    )  # fmt: skip


def test_refit_reads_outcomes_grades_stage2_by_others_and_versions_the_model(
    client: redis.Redis, keys: Keys
) -> None:
    outcomes = OutcomeStore(client, keys, kept=100, ttl_s=600)
    for label in (
        _label("a", OutcomeSource.HUMAN, 0.2, 0.7),  # bad, Stage 2 caught it
        _label("a", OutcomeSource.STAGE2, 0.3, 0.7),
        _label("b", OutcomeSource.DOWNSTREAM, 0.1, 0.9),  # bad, Stage 2 missed it
        _label("b", OutcomeSource.STAGE2, 0.9, 0.9),
        _label("c", OutcomeSource.STAGE2, 0.95, 1.0),  # good, by Stage 2 alone
    ):
        outcomes.record(label)
    rows = training_outcomes(outcomes.export())
    assert sorted(r.failed for r in rows) == [False, True, True]
    store = CalibrationStore(client, keys, refresh_s=0.0)
    first = refit(outcomes, store, min_outcomes=200, pseudo_count=20.0)
    assert (first.version, first.catches, first.misses) == ("v1-n3", 1, 1)
    assert first.skills["sk"].failures == 2
    assert refit(outcomes, store, min_outcomes=200, pseudo_count=20.0).version == "v2-n3"
    assert (m := store.current()) is not None and m.version == "v2-n3"


def test_the_report_scores_out_of_sample_and_draws_a_reliability_png(tmp_path: Path) -> None:
    rng = random.Random(3)
    rows = []
    for _ in range(400):
        grade = rng.uniform(0.6, 1.0)
        rows.append(
            TrainingOutcome(
                skill_id="sk", claimed_success_rate=0.9, prior=0.1,
                evidence=Evidence(wall_grade=grade), failed=rng.random() < 1.5 * (1.0 - grade),
            )
        )  # fmt: skip
    scores = holdout_scores(rows, min_outcomes=200, pseudo_count=20.0)
    assert set(scores) == {"prior", "learned"} and len(scores["prior"][0]) == 100
    assert brier(*scores["learned"]) < brier(*scores["prior"])
    plot_reliability(scores, tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    assert describe(None) == ["no calibration model: the router uses the seed's prior"]
