"""This process's collaborators, built once on first use after any fork.

A prefork child must not inherit its parent's Redis connections: the fork handler in
``workers/fleet/signals.py`` forgets what was built before it.
"""

from __future__ import annotations

import threading

from celery import Celery

from workers.fleet.deps import Deps, build_deps
from workers.settings import Settings

_deps: dict[int, Deps] = {}
#: One builder at a time: a hundred greenlets that each found no collaborators would each
#: build them, importing the SDK's HTTP stack concurrently (a half-imported httpcore2 raised
#: AttributeError in the others). Normally ``worker_ready`` builds them before any task.
_building = threading.Lock()


def deps_of(app: Celery) -> Deps:
    """This process's collaborators for ``app``, built on first use after the fork."""
    found = _deps.get(id(app))
    if found is None:
        with _building:
            found = _deps.get(id(app))
            if found is None:
                found = _deps[id(app)] = build_deps(settings_of(app))
    return found


def settings_of(app: Celery) -> Settings:
    """The settings ``create_app`` attached to ``app``."""
    settings: Settings = app.conf.windags_settings
    return settings


def forget_after_fork() -> None:
    """Drop what the parent built: the child builds its own on first use."""
    _deps.clear()
