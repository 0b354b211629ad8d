"""The current calibration model in Redis, read by routers through a per-process cache.

A worker builds one store at boot (``Deps.calibration``), so its cache outlives one task.

A router never fits and never waits on a refit: it reads the stored model at most every
``calibration_refresh_s`` seconds and keeps the last one it read. A missing, corrupted or
unreadable model means the seed's prior (None), with a logged warning, never a crash:
a bad model must not stop reviews.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import redis
from pydantic import ValidationError

from schemas.calibration import CalibrationModel
from workers.keys import Keys

log = logging.getLogger(__name__)


class CalibrationStore:
    """Reads and writes one deployment's calibration model; thread-safe."""

    def __init__(
        self,
        client: redis.Redis,
        keys: Keys,
        *,
        refresh_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._redis = client
        self._keys = keys
        self._refresh_s = refresh_s
        self._clock = clock
        self._lock = threading.Lock()
        self._cached: CalibrationModel | None = None
        self._read_at: float | None = None

    def save(self, model: CalibrationModel) -> None:
        """Make ``model`` the current one; routers pick it up within ``refresh_s``."""
        self._redis.set(self._keys.calibration_model, model.model_dump_json())

    def load(self) -> CalibrationModel | None:
        """The stored model, or None (prior only) when missing, corrupted or unreadable."""
        try:
            raw = self._redis.get(self._keys.calibration_model)
        except redis.RedisError as exc:
            log.warning("calibration model unreadable (%s): using the prior", exc)
            return None
        if raw is None:
            log.warning("no calibration model stored: using the seed's prior")
            return None
        try:
            return CalibrationModel.model_validate_json(raw)
        except ValidationError as exc:
            log.warning(
                "calibration model corrupted (%d errors): using the prior", exc.error_count()
            )
            return None

    def current(self) -> CalibrationModel | None:
        """The model to price with now: cached, reread at most every ``refresh_s``."""
        now = self._clock()
        with self._lock:
            if self._read_at is not None and now - self._read_at < self._refresh_s:
                return self._cached
            self._read_at = now
        model = self.load()
        with self._lock:
            self._cached = model
        return model
