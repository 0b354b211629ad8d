"""A message a live worker handed back is a replay of the try it interrupted.

That try was cut off by the broker (its Redis connection died), not by the task, so it
must not count towards the poison limit: three Redis restarts used to dead-letter the
reviews that happened to be in flight at each one, every hand-back coming back
``redelivered`` and counting one more try. The hand-back (``workers/fleet/recovery.py``)
marks the message with what the interrupted delivery was, and the try counter reads the
count instead of adding to it (``Delivery.REPLAY`` and ``FIRST_REPLAY``,
``workers/fleet/guard.py``). Every other restore (a dead worker's, a requeue) clears the
mark.

The mark names the message's ``retries``: Celery copies a task's headers into its retry,
a new message whose tries all count; a mark from another message is no mark.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final

#: The header a hand-back writes on the message it restores: ``<ReplayOf>:<retries>``.
REPLAY_HEADER: Final = "windags_replay"


class ReplayOf(StrEnum):
    """What the delivery a hand-back interrupted was."""

    FIRST = "first"
    """A first delivery: a stage that counts its first delivery counted it; one that counts
    lazily counted nothing, and the replay is its first delivery still."""
    AGAIN = "again"
    """A redelivery or a retry: its try was counted, the replay's is the same one."""


def mark(payload: dict[str, Any], *, replay: bool) -> None:
    """Mark a message being restored as a replay, or clear an earlier replay's mark.

    Called before kombu's restore marks it ``redelivered``: a replay remembers what the
    interrupted delivery was. Replayed again before it ran, it keeps its first mark.
    """
    headers = payload.get("headers")
    if not isinstance(headers, dict):
        if not replay:
            return
        headers = payload["headers"] = {}
    if not replay:
        headers.pop(REPLAY_HEADER, None)
        return
    retries = _retries(headers)
    if replay_of(headers, retries) is not None:
        return
    properties = payload.get("properties")
    info = properties.get("delivery_info") if isinstance(properties, dict) else None
    again = bool(headers.get("redelivered")) or (
        isinstance(info, dict) and bool(info.get("redelivered"))
    )
    headers[REPLAY_HEADER] = f"{ReplayOf.AGAIN if again else ReplayOf.FIRST}:{retries}"


def replay_of(headers: Mapping[str, Any] | None, retries: int) -> ReplayOf | None:
    """The replay mark of a message with ``retries``; None when it carries none of its own."""
    raw = (headers or {}).get(REPLAY_HEADER)
    if not isinstance(raw, str):
        return None
    kind, _, marked = raw.partition(":")
    if marked != str(retries) or kind not in {r.value for r in ReplayOf}:
        return None
    return ReplayOf(kind)


def _retries(headers: Mapping[str, Any]) -> int:
    retries = headers.get("retries")
    return retries if isinstance(retries, int) and retries >= 0 else 0
