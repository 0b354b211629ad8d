"""``ReviewClient.review``: submit one request and wait for its verdict, without asyncio.

The same promises as the asyncio client's: a review already published answers at once
(and is not sent again), a deadline raises ``ReviewTimeoutError`` with the review still in
flight, and no consumer group is joined. It reads the one stream with plain ``XREAD``
from the stream's last id, taken before the submission.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

import redis

from schemas.request import ReviewRequest
from schemas.result import ReviewResult
from workers.errors import BrokerUnavailableError, ReviewTimeoutError
from workers.keys import Keys
from workers.results.stream import parse_entry
from workers.runtime.verdicts import REVIEW_KINDS, as_review, review_outcome, text_of

_Entry = tuple[bytes, dict[bytes, bytes]]
#: The longest one ``XREAD`` blocks: below every socket timeout the settings allow.
BLOCK_MS = 1000


def review_blocking(
    client: redis.Redis,
    keys: Keys,
    request: ReviewRequest,
    submit: Callable[[ReviewRequest], object],
    *,
    timeout_s: float,
) -> ReviewResult:
    """``request``'s verdict: from the stream if there, else submitted and waited for."""
    stream = keys.results(request.dag_id)
    try:
        pipe = client.pipeline(transaction=True)
        pipe.xrevrange(stream, count=1)
        pipe.get(keys.published(request.review_key, request.dag_id))
        tail, published = pipe.execute()
        entry_id = text_of(published)
        if entry_id is not None:
            [(_, fields)] = cast(list[_Entry], client.xrange(stream, min=entry_id, count=1))
            return review_outcome(as_review(parse_entry(fields)))
        submit(request)
        cursor = tail[0][0].decode() if tail else "0-0"
        return _wait(client, stream, request.review_key, cursor, timeout_s)
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise BrokerUnavailableError(f"results of {request.dag_id} unreadable: {exc}") from exc


def _wait(
    client: redis.Redis, stream: str, key: str, cursor: str, timeout_s: float
) -> ReviewResult:
    deadline = time.monotonic() + timeout_s
    streams: dict[Any, Any] = {stream: cursor}
    while (left_ms := int((deadline - time.monotonic()) * 1000)) > 0:
        reply = client.xread(streams, count=100, block=min(BLOCK_MS, left_ms))
        for _, entries in cast(list[tuple[bytes, list[_Entry]]], reply or []):
            for entry_id, fields in entries:
                streams[stream] = entry_id
                if text_of(fields.get(b"review_key")) == key and (
                    text_of(fields.get(b"kind")) in REVIEW_KINDS
                ):
                    return review_outcome(as_review(parse_entry(fields)))
    raise ReviewTimeoutError((key,), timeout_s)
