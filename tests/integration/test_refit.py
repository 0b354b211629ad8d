"""The periodic refit (issue 15): beat in the router worker sends it, the Stage 2 worker
refits from stored outcomes, a restart does not stop it, and the router never waits on it
nor fails for a bad model."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
import redis

from schemas.calibration import CalibrationModel
from schemas.human import LabelledOutcome
from schemas.result import ReviewResult
from tests.infrastructure import drop_prefix
from tests.integration.support import sample
from tests.integration.test_handlers import ceiling_only, results, run_router, through_stage1
from tests.integration.test_procfile import procfile_commands
from tests.test_cli_calibration import _label
from workers.fleet.deps import Deps
from workers.fleet.lifeline import LAUNCHER_PID_ENV
from workers.fleet.queues import Queue
from workers.keys import Keys
from workers.learning.refit import refit
from workers.local.launcher import LocalFleet
from workers.records.calibration import CalibrationStore
from workers.records.outcomes import OutcomeStore
from workers.settings import Settings
from workers.testing.scripted_judge import ScriptedJudge

pytestmark = pytest.mark.integration


@pytest.fixture
def url(redis_url: str) -> str:
    """The brief's database for these tests (db 10 unless WINDAGS_TEST_REDIS_URL says)."""
    return redis_url


@pytest.fixture
def prefix(url: str) -> Iterator[str]:
    name = f"refit-{uuid.uuid4().hex[:8]}"
    yield name
    client = redis.Redis.from_url(url)
    drop_prefix(client, name)
    client.close()


def _record_outcomes(client: redis.Redis, keys: Keys, n: int, seed: int = 5) -> None:
    store = OutcomeStore(client, keys, kept=10_000, ttl_s=600)
    rng = random.Random(seed)
    for i in range(n):
        for label in _label(rng, i, "skill-1", 0.9, 0.1):
            store.record(label)


def _version(client: redis.Redis, keys: Keys) -> int:
    raw = client.get(keys.calibration_model)
    if raw is None:
        return 0
    return int(CalibrationModel.model_validate_json(raw).version.split("-")[0][1:])


def _procfile_worker(
    name: str, url: str, prefix: str, tmp_path: Path, log_name: str
) -> subprocess.Popen[bytes]:
    """The Procfile's line for ``name`` (the router's runs beat), refitting every second."""
    argv = procfile_commands()[name]
    if "--schedule" in argv:
        argv[argv.index("--schedule") + 1] = str(tmp_path / "beat-schedule")
    argv[argv.index("--concurrency") + 1] = "2"
    env = {
        **os.environ,
        "WINDAGS_REDIS_URL": url,
        "WINDAGS_KEY_PREFIX": prefix,
        LAUNCHER_PID_ENV: str(os.getpid()),  # a killed test run leaves no worker behind
        "WINDAGS_JUDGE_BACKEND": "builtin",
        "WINDAGS_CALIBRATION_REFIT_S": "1",
    }
    with (tmp_path / log_name).open("wb") as log:
        return subprocess.Popen([sys.executable, "-m", *argv], env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip


def _stop(*workers: subprocess.Popen[bytes]) -> None:
    for worker in workers:
        with contextlib.suppress(ProcessLookupError):  # already stopped
            os.killpg(worker.pid, signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:  # never outlive the test
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=10)


def _wait_for_version(
    client: redis.Redis, keys: Keys, above: int, *workers: subprocess.Popen[bytes]
) -> int:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert all(w.poll() is None for w in workers), "a worker exited"
        if (found := _version(client, keys)) > above:
            return found
        time.sleep(0.2)
    pytest.fail(f"no refit past v{above} within 90 s")


def test_beat_in_the_router_worker_refits_periodically_and_a_restart_does_not_stop_it(
    url: str, prefix: str, tmp_path: Path
) -> None:
    client, keys = redis.Redis.from_url(url), Keys(prefix)
    _record_outcomes(client, keys, 250)
    stage2 = _procfile_worker("stage2", url, prefix, tmp_path, "stage2.log")
    router = _procfile_worker("router", url, prefix, tmp_path, "router.log")
    try:
        first = _wait_for_version(client, keys, 0, stage2, router)
        second = _wait_for_version(client, keys, first, stage2, router)  # again: periodic
        raw = client.get(keys.calibration_model)
        assert raw is not None
        model = CalibrationModel.model_validate_json(raw)
        assert model.outcomes == 250 and model.weights and model.skills["skill-1"].claimed == 0.9
        # Beat's state is the deployment's, in Redis under its prefix (not a file on the host).
        assert client.hexists(keys.beat_schedule, "calibration-refit")
        _stop(router)  # the beat's host restarts; its state is kept
        router = _procfile_worker("router", url, prefix, tmp_path, "router-again.log")
        assert _wait_for_version(client, keys, second, stage2, router) > second
    finally:
        _stop(stage2, router)
        client.close()


def test_the_local_fleet_refits_too(url: str, prefix: str, tmp_path: Path) -> None:
    """``windags-eval fleet`` (LocalFleet): beat in its router, the refit in its Stage 2."""
    client, keys = redis.Redis.from_url(url), Keys(prefix)
    _record_outcomes(client, keys, 250)
    env = {"WINDAGS_KEY_PREFIX": prefix, "WINDAGS_CALIBRATION_REFIT_S": "1"}
    fleet = LocalFleet(url, extra_env=env, start_private_redis=False, log_dir=tmp_path)
    try:
        with fleet:
            fleet.wait_ready()
            assert "-B" in cast(list[str], fleet.workers[Queue.ROUTER].args)
            _wait_for_version(client, keys, 0, *fleet.workers.values())
    finally:
        client.close()


class _HeldOutcomes(OutcomeStore):
    """A real outcome store whose export waits for a signal: a refit held mid-way."""

    def __init__(self, client: redis.Redis, keys: Keys, release: threading.Event) -> None:
        super().__init__(client, keys, kept=10_000, ttl_s=600)
        self.started = threading.Event()
        self._release = release

    def export(
        self, *, skill: str | None = None, evaluator: str | None = None
    ) -> Iterator[LabelledOutcome]:
        self.started.set()
        assert self._release.wait(60)
        yield from super().export(skill=skill, evaluator=evaluator)


@pytest.fixture
def deps(url: str, prefix: str) -> Iterator[Deps]:
    settings = Settings(redis_url=url, key_prefix=prefix, calibration_refresh_s=0.0)
    built = ceiling_only(settings, ScriptedJudge())
    yield built
    built.close()


def _routed(deps: Deps, dag: str) -> ReviewResult:
    """A node that is not escalated, through Stage 1 and the router; its published result."""
    assert run_router(through_stage1(deps, sample("good_python.json", dag_id=dag)), deps) is None
    [result] = results(deps, dag)
    assert isinstance(result, ReviewResult)
    return result


def test_the_router_decides_while_a_refit_is_in_progress(deps: Deps) -> None:
    keys = deps.keys
    _record_outcomes(deps.redis, keys, 250)
    store = CalibrationStore(deps.redis, keys, refresh_s=0.0)
    refit(OutcomeStore(deps.redis, keys, kept=10_000, ttl_s=600), store,
          min_outcomes=200, pseudo_count=20.0)  # fmt: skip
    release = threading.Event()
    held = _HeldOutcomes(deps.redis, keys, release)
    running = threading.Thread(
        target=refit, args=(held, store), kwargs={"min_outcomes": 200, "pseudo_count": 20.0}
    )
    running.start()
    try:
        assert held.started.wait(30)
        result = _routed(deps, "during-refit")
        assert running.is_alive()  # decided while the refit was still in progress
    finally:
        release.set()
        running.join(60)
    assert result.escalation.model_version == "v1-n250"  # the stored model, not the new one
    assert json.loads(deps.redis.get(keys.calibration_model) or b"{}")["version"] == "v2-n250"


@pytest.mark.parametrize(
    ("stored", "warning"),
    [(None, "no calibration model"), (b'{"version": 7, "weights": []}', "corrupted")],
)
def test_a_missing_or_corrupt_model_routes_on_the_prior_with_a_warning(
    deps: Deps, caplog: pytest.LogCaptureFixture, stored: bytes | None, warning: str
) -> None:
    if stored is not None:
        deps.redis.set(deps.keys.calibration_model, stored)
    with caplog.at_level(logging.WARNING, logger="workers.records.calibration"):
        result = _routed(deps, f"prior-{uuid.uuid4().hex[:6]}")
    assert warning in caplog.text
    escalation = result.escalation
    assert escalation.model_version is None and escalation.evidence_terms == {}
    assert escalation.failure_probability == escalation.prior_failure_probability
