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

A try that breaks its own connection every time (a record of the review Redis drops the
client for) would be replayed forever, uncounted. So every hand-back also counts itself
in ``REPLAYS_HEADER``, kept across restores and retries; past
``Settings.max_task_replays`` a replay is told ``Delivery.REPLAY_COUNTED``, whose try
counts, and the poison limit dead-letters the review as usual.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final

#: The header a hand-back writes on the message it restores: ``<ReplayOf>:<retries>``.
REPLAY_HEADER: Final = "windags_replay"
#: The header that counts a message's hand-backs: an int, never cleared, so that no mix of
#: restores and retries starts a replay loop afresh. Apart from ``REPLAY_HEADER``, whose
#: format a worker of an earlier release still reads.
REPLAYS_HEADER: Final = "windags_replays"


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
    interrupted delivery was. Replayed again before it ran, it keeps its first mark. Every
    replay adds one to ``REPLAYS_HEADER``; a restore of another kind leaves the count.
    """
    headers = payload.get("headers")
    if not isinstance(headers, dict):
        if not replay:
            return
        headers = payload["headers"] = {}
    if not replay:
        headers.pop(REPLAY_HEADER, None)
        return
    headers[REPLAYS_HEADER] = replay_count(headers) + 1
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


def replay_count(headers: Mapping[str, Any] | None) -> int:
    """How many times the message was handed back as a replay (``mark``); 0 if unreadable.

    A header from the wire is hostile: anything but a non-negative int counts as none.
    Too high a count only makes the message's own tries count.
    """
    count = (headers or {}).get(REPLAYS_HEADER)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        return 0
    return count


def _retries(headers: Mapping[str, Any]) -> int:
    retries = headers.get("retries")
    return retries if isinstance(retries, int) and retries >= 0 else 0
