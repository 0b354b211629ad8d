"""The worker entry point: ``celery -A workers.fleet.worker worker -Q stage1 ...``.

Celery looks up ``app`` in this module; the lookup (not the import) reads the settings
from the environment and builds the app, so importing this module reads nothing. A bad
setting stops the worker at boot with one line naming the variable (exit 2).
"""

from __future__ import annotations

import sys
from functools import cache

from celery import Celery

from workers.errors import ConfigurationError
from workers.fleet.app import create_app
from workers.settings import load_settings


@cache
def boot() -> Celery:
    """This process's app, built from the environment once."""
    try:
        return create_app(load_settings())
    except ConfigurationError as exc:
        print(f"error: bad settings: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def __getattr__(name: str) -> Celery:
    """``app``, built on first access (module ``__getattr__``, PEP 562)."""
    if name == "app":
        return boot()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
