"""Celery beat's schedule state in Redis, under the deployment's prefix.

Celery's default scheduler keeps when each periodic task last ran in a shelve file beside
the worker: fleets on one host that share the file (the Procfile's ``/tmp`` path) read
each other's runs, and a pod's file dies with the pod. This scheduler keeps the state in
one hash per deployment (``Keys.beat_schedule``: entry name -> last run and run count);
the schedule itself is still the app's ``beat_schedule``. A Redis fault while saving is
a log line: beat goes on and saves at its next sync.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any

import redis
from celery.beat import Scheduler

from workers.connections import redis_client
from workers.settings import Settings

log = logging.getLogger("windags.beat")


class RedisScheduler(Scheduler):  # type: ignore[misc]  # celery ships no type hints
    """Celery's in-memory scheduler, whose entries' last runs are kept in Redis."""

    #: Save after every task sent: one refit every few minutes costs nothing.
    sync_every_tasks = 1
    _redis: redis.Redis | None = None
    _key = ""

    def setup_schedule(self) -> None:
        """The app's schedule, each entry resumed from its saved last run."""
        super().setup_schedule()
        settings: Settings = self.app.conf.windags_settings
        self._key = settings.keys.beat_schedule
        self._redis = redis_client(settings, max_connections=2)
        try:
            saved = self._redis.hgetall(self._key)
        except redis.RedisError as exc:
            log.warning("beat: could not read the saved schedule (%s); starting afresh", exc)
            return
        for name, entry in self.schedule.items():
            state = _state(saved.get(name.encode()))
            if state is not None:
                entry.last_run_at, entry.total_run_count = state

    def sync(self) -> None:
        """Save each entry's last run and run count."""
        mapping = {
            name: json.dumps(
                {"last_run_at": entry.last_run_at.isoformat(), "runs": entry.total_run_count}
            )
            for name, entry in self.schedule.items()
        }
        if not mapping or self._redis is None:
            return
        try:
            self._redis.hset(self._key, mapping=mapping)
        except redis.RedisError as exc:
            log.warning("beat: could not save the schedule (%s); saved at the next sync", exc)

    def close(self) -> None:
        """Save, then close the connection."""
        try:
            super().close()
        finally:
            if self._redis is not None:
                self._redis.close()

    @property
    def info(self) -> str:
        """Where the state lives (beat's banner)."""
        return f"    . state -> redis hash {self._key}"


def _state(raw: Any) -> tuple[datetime, int] | None:
    """A saved entry's (last run, run count); None when missing or unreadable."""
    if raw is None:
        return None
    try:
        found = json.loads(raw)
        return datetime.fromisoformat(found["last_run_at"]), int(found["runs"])
    except (ValueError, KeyError, TypeError):
        return None
