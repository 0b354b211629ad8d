"""``windags-eval calibration`` run as an operator runs it, against outcomes in a real Redis."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from schemas.calibration import Evidence
from schemas.human import LabelledOutcome, OutcomeSource, StageOneView
from schemas.request import BreakerState, SkillStage
from schemas.result import Decision
from tests.infrastructure import scratch_redis
from tests.test_cli_operator import NOTHING_LISTENS, _run
from workers.keys import Keys
from workers.records.outcomes import OutcomeStore


@pytest.fixture
def deployment(cli_redis_url: str) -> Iterator[tuple[redis.Redis, str]]:
    """A client of the test Redis and a fresh key prefix, its keys deleted after."""
    with scratch_redis("calcli", cli_redis_url) as found:
        yield found


def _label(
    rng: random.Random, index: int, skill: str, claimed: float, fail_rate: float
) -> list[LabelledOutcome]:
    """A reviewed attempt a downstream consumer labelled: failures rise as the Wall grade falls."""
    grade = rng.uniform(0.6, 1.0)
    failed = rng.random() < min(0.95, fail_rate + 1.2 * (1.0 - grade))
    view = StageOneView(
        floor_passed=True, wall_grade=grade, failure_probability=1.0 - claimed, escalated=False,
        decision=Decision.ACCEPT, claimed_success_rate=claimed, stage=SkillStage.EXPERT,
        breaker=BreakerState.CLOSED, evidence=Evidence(wall_grade=grade),
    )  # fmt: skip

    def labelled(source: OutcomeSource, evaluator: str, bad: bool) -> LabelledOutcome:
        return LabelledOutcome(
            source=source, evaluator=evaluator, skill_id=skill, dag_id="d", node_id=f"n{index}",
            attempt=1, label=0.2 if bad else 0.95, stage1=view,
            recorded_at=f"2026-12-03T10:{index // 60:02d}:{index % 60:02d}Z",
        )  # fmt: skip

    agrees = rng.random() < 0.75  # a peer that agrees with the truth three times in four
    return [
        labelled(OutcomeSource.DOWNSTREAM, "downstream:x", failed),
        labelled(OutcomeSource.PEER, f"peer:{skill}", failed if agrees else not failed),
    ]


def test_calibration_refits_shows_each_skill_scores_and_draws_the_diagram(
    deployment: tuple[redis.Redis, str], tmp_path: Path, cli_redis_url: str
) -> None:
    client, prefix = deployment
    store = OutcomeStore(client, Keys(prefix), kept=10_000, ttl_s=600)
    rng = random.Random(11)
    for i in range(400):
        # "honest" keeps its claim of 0.9; "boastful" claims 0.95 and fails far more.
        skill, claimed, rate = ("honest", 0.9, 0.05) if i % 2 else ("boastful", 0.95, 0.4)
        for label in _label(rng, i, skill, claimed, rate):
            store.record(label)
    png = tmp_path / "reliability.png"
    done = _run("calibration", "--refit", "--png", str(png),
                WINDAGS_REDIS_URL=cli_redis_url, WINDAGS_KEY_PREFIX=prefix)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "model v1-n400: 400 outcomes (evidence map used" in out, out
    boastful = next(line for line in out.splitlines() if line.strip().startswith("boastful:"))
    claimed, posterior = (float(x) for x in boastful.split("claimed ")[1].split(" -> posterior "))
    assert claimed == pytest.approx(0.95) and posterior < 0.8  # its record overrules its claim
    assert "evidence map: bias" in out and "wall_gap +" in out
    peer = next(line for line in out.splitlines() if "evaluator peer:boastful: agreed" in line)
    assert 0.65 < float(peer.split("reliability ")[1]) < 0.85, peer
    scores = {
        line.split(":")[0]: float(line.split("Brier ")[1].split(",")[0])
        for line in out.splitlines()
        if ": Brier " in line
    }
    assert set(scores) == {"prior", "learned"} and scores["learned"] < scores["prior"]
    assert "ECE" in out and png.read_bytes()[:4] == b"\x89PNG"
    # Without --refit it shows the stored model, and refits nothing.
    again = _run("calibration", "--png", str(png),
                 WINDAGS_REDIS_URL=cli_redis_url, WINDAGS_KEY_PREFIX=prefix)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "model v1-n400" in again.stdout


def test_calibration_on_a_fresh_deployment_says_the_prior_is_used(
    deployment: tuple[redis.Redis, str], tmp_path: Path, cli_redis_url: str
) -> None:
    _, prefix = deployment
    done = _run("calibration", "--png", str(tmp_path / "c.png"),
                WINDAGS_REDIS_URL=cli_redis_url, WINDAGS_KEY_PREFIX=prefix)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "no calibration model: the router uses the seed's prior" in done.stdout
    assert "0 labelled outcomes: too few to score calibration" in done.stdout
    assert not (tmp_path / "c.png").exists()


def test_calibration_with_a_redis_that_does_not_answer_fails_in_one_line() -> None:
    done = _run("calibration", WINDAGS_REDIS_URL=NOTHING_LISTENS)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and NOTHING_LISTENS in lines[0], done.stderr
