"""The periodic refit a Stage 2 worker runs when celery beat asks, off the router's path.

Celery beat sends the task every ``calibration_refit_s`` (``beat_schedule`` in the app
config; the Procfile runs beat inside the Stage 2 worker). Beat keeps its schedule in a
file and a worker restart loses nothing: the message waits in the Stage 2 queue. A lease
in Redis makes a refit run at most once per half period, so two beats (two Stage 2
replicas with ``-B``) or a backlog of messages after an outage cost one refit, not many.
A refit that fails is logged and the next one tries again; the router never waits on any
of it: it reads whatever model is stored, or the prior.
"""

from __future__ import annotations

import logging

import redis

from schemas.calibration import CalibrationModel
from workers.learning.refit import refit
from workers.records.calibration import CalibrationStore
from workers.records.outcomes import OutcomeStore
from workers.settings import Settings

log = logging.getLogger(__name__)


def run_refit(client: redis.Redis, settings: Settings) -> CalibrationModel | None:
    """Refit and store the model, unless another refit holds the lease; the new model."""
    keys = settings.keys
    lease_ms = max(1000, int(settings.calibration_refit_s * 500))
    if not client.set(keys.calibration_refit_lease, "1", nx=True, px=lease_ms):
        log.info("calibration refit skipped: another ran within the last half period")
        return None
    outcomes = OutcomeStore(
        client, keys, kept=settings.outcomes_kept, ttl_s=settings.outcome_retention_s
    )
    try:
        model = refit(
            outcomes,
            CalibrationStore(client, keys, refresh_s=0.0),
            min_outcomes=settings.calibration_min_outcomes,
            pseudo_count=settings.calibration_pseudo_count,
        )
    except redis.RedisError:
        raise  # a connection fault requeues the task (ReviewTask); the lease skips a rerun
    except Exception:  # a bad refit must not take the worker's task down with a traceback
        log.exception("calibration refit failed; routers keep the stored model")
        return None
    log.info("calibration refit: model %s from %d outcomes", model.version, model.outcomes)
    return model
