"""Scheduling headers of a task message, repaired so that a review is never dropped for them.

Celery drops a task whose ``eta`` it cannot turn into a timestamp (a log line, the
message deleted), refuses one whose ``eta`` or ``expires`` does not parse, and discards
one past its ``expires``. A valid review is never dropped for its schedule: an ``eta``
that does not parse, lies further ahead than ``max_eta_s`` (it would wait past the
visibility timeout and be redelivered while it waits) or more than a day back, is
dropped and the task runs now; ``expires`` is always dropped (reviews do not expire).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from celery.utils import time as celery_time

#: Celery's own parser (untyped), so that what passes here parses there.
_iso8601: Callable[[str], datetime | None] = celery_time.maybe_iso8601
#: Default of ``Rules.max_eta_s`` (``celery_config`` sets half the visibility timeout).
MAX_ETA_S = 3600.0
#: An ``eta`` further back than this is dropped too (Celery's timestamp maths can overflow).
OLDEST_ETA = timedelta(days=1)


def repair_times(headers: dict[str, Any], max_eta_s: float = MAX_ETA_S) -> list[str]:
    """Drop an ``eta`` Celery would choke on or hold too long, and any ``expires``.

    Changes ``headers`` in place; returns one line per header dropped.
    """
    repairs: list[str] = []
    if headers.get("expires") is not None:
        repairs.append(f"expires {str(headers['expires'])[:60]!r} dropped: reviews never expire")
        headers["expires"] = None
    eta = headers.get("eta")
    why = None if eta is None else _bad_eta(eta, max_eta_s)
    if why:
        repairs.append(f"eta {str(eta)[:60]!r} dropped ({why}): the task runs now")
        headers["eta"] = None
    return repairs


def _bad_eta(eta: Any, max_eta_s: float) -> str | None:
    try:
        when = _iso8601(eta) if isinstance(eta, str) else None
    except (ValueError, TypeError, OverflowError) as exc:
        return f"not an ISO 8601 time: {f'{type(exc).__name__}: {exc}'[:200]}"
    if when is None:
        return "not an ISO 8601 time"
    if when.tzinfo is None or when.utcoffset() is None:
        when = when.replace(tzinfo=UTC)
    now = datetime.now(UTC)
    try:
        ahead = (when - now).total_seconds()
    except OverflowError:
        return "out of range"
    if ahead > max_eta_s:
        return f"{ahead:.0f} s ahead, beyond the {max_eta_s:.0f} s a message may wait"
    if ahead < -OLDEST_ETA.total_seconds():
        return "more than a day in the past"
    return None
