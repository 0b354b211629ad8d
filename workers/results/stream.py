"""Publication of results on the per-DAG Redis stream: exactly one entry per review key.

Celery delivers at least once, so the same review can finish twice (a redelivery after
a worker died, a retry). The check-and-add runs as one Lua script
(``workers.results.booking``): if the review key was already published the script
returns the first entry's id and adds nothing. Streams
are trimmed by age (MINID), never by a small count, which would delete entries no
subscriber has read yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final, cast

import redis

from schemas.human import HumanDecision, HumanVerdict
from schemas.request import review_key as identity_of
from schemas.result import ReviewError, ReviewResult
from workers.errors import PublishError
from workers.keys import UNROUTABLE_DAG, Keys
from workers.results.booking import PUBLISH_ONCE_LUA, Booking
from workers.results.ledger import Charge


class EntryKind(StrEnum):
    """The ``kind`` field of a stream entry."""

    RESULT = "result"
    """A ``ReviewResult``: one per review key."""
    ERROR = "error"
    """A ``ReviewError``: the request could not be reviewed."""
    HUMAN_VERDICT = "human_verdict"
    """A ``HumanVerdict`` on an escalated attempt: one per review key."""
    DECISION = "decision"
    """A ``HumanDecision``: the attempt's decision recomputed with the human verdict."""


#: What a review itself leaves on the stream.
ReviewPayload = ReviewResult | ReviewError
#: Every typed payload a stream entry can carry.
Payload = ReviewResult | ReviewError | HumanVerdict | HumanDecision
REVIEW_KINDS: Final = frozenset({EntryKind.RESULT.value, EntryKind.ERROR.value})


@dataclass(frozen=True, slots=True)
class Published:
    """Where a result went, and whether this call added it."""

    entry_id: str
    added: bool


class ResultStream:
    """Writes results and error entries; one instance per process, thread-safe."""

    def __init__(
        self,
        client: redis.Redis,
        keys: Keys,
        *,
        retention_s: int,
        dedup_ttl_s: int,
    ) -> None:
        self._redis = client
        self._keys = keys
        self._retention_ms = retention_s * 1000
        self._dedup_ttl_s = dedup_ttl_s
        self._script = client.register_script(PUBLISH_ONCE_LUA)

    def is_published(self, review_key: str, dag_id: str | None = None) -> bool:
        """Whether a result or error for ``review_key`` is already on its stream.

        ``dag_id``: the DAG whose stream an error entry's key went to (``publish_error``'s
        ``error.dag_id``, None for the unroutable stream) when the key does not name it.
        """
        return bool(self._redis.exists(self._published(review_key, dag_id)))

    def publish_result(
        self,
        result: ReviewResult,
        *,
        traceparent: str | None = None,
        charge: Charge | None = None,
        booking: Booking | None = None,
    ) -> Published:
        """Add ``result`` to its DAG's stream unless its review key is already there.

        ``charge`` (``CostLedger.pending_charge``) and ``booking`` (``Bookkeeping.publish``)
        are applied in the same script, only when the entry is added: one round trip, and
        no entry without its charge and its attempt record.
        """
        return self._publish(
            result.dag_id,
            identity_of(result.dag_id, result.node_id, result.attempt),
            EntryKind.RESULT,
            result.model_dump_json(by_alias=True),
            traceparent,
            charge,
            booking,
        )

    def publish_error(
        self,
        error: ReviewError,
        *,
        review_key: str,
        raw: str | None = None,
        dead_letter: bool = False,
    ) -> Published:
        """Add an error entry, to the DAG's stream when known; optionally dead-letter it."""
        dag = error.dag_id or UNROUTABLE_DAG
        published = self._publish(dag, review_key, EntryKind.ERROR, error.model_dump_json(), None)
        if dead_letter and published.added:
            self._redis.xadd(
                self._keys.dead_letter,
                {
                    "review_key": review_key,
                    "error": error.model_dump_json(),
                    "raw": (raw or "")[:100_000],
                },
                maxlen=100_000,
                approximate=True,
            )
        return published

    def _published(self, review_key: str, dag_id: str | None) -> str:
        """The dedup key of ``review_key`` on ``dag_id``'s stream, in that stream's slot."""
        return self._keys.published(review_key, dag_id or UNROUTABLE_DAG)

    def _publish(
        self,
        dag_id: str,
        review_key: str,
        kind: EntryKind,
        payload: str,
        traceparent: str | None,
        charge: Charge | None = None,
        booking: Booking | None = None,
    ) -> Published:
        fields = ["kind", kind.value, "review_key", review_key, "payload", payload]
        if traceparent:
            fields += ["traceparent", traceparent]
        stream = self._keys.results(dag_id)
        keys = [stream, self._published(review_key, dag_id), *[stream] * 7]
        args: list[str | int] = [self._retention_ms, self._dedup_ttl_s, "", 0, "", "", 0, 0, "", ""]
        if charge is not None:
            keys[2:4] = charge.keys
            args[2:4] = charge.args
        if booking is not None:
            write = booking.attempt
            keys[4] = write.key
            args[4:8] = [write.attempt, write.record_json, write.ttl_s, write.kept]
            if booking.mark is not None:
                keys[5] = booking.mark
                args[8] = booking.mark_ttl_s
                if (settles := booking.settles) is not None:
                    keys[6:9] = [settles.unacked, settles.unacked_index, settles.reserved]
                    args[9] = settles.tag
        try:
            added, entry_id = self._script(keys=keys, args=[*args, *fields])
        except redis.RedisError as exc:
            raise PublishError(f"could not publish {review_key} to {stream}: {exc}") from exc
        return Published(entry_id=_text(entry_id), added=bool(added))


def parse_entry(fields: dict[bytes, bytes] | dict[str, str]) -> Payload:
    """Decode one stream entry's fields into its typed payload, whatever its kind."""
    decoded = {_text(k): _text(v) for k, v in fields.items()}
    payload = decoded.get("payload", "")
    kind = decoded.get("kind")
    if kind == EntryKind.ERROR:
        return ReviewError.model_validate_json(payload)
    if kind == EntryKind.HUMAN_VERDICT:
        return HumanVerdict.model_validate_json(payload)
    if kind == EntryKind.DECISION:
        return HumanDecision.model_validate_json(payload)
    return ReviewResult.model_validate_json(payload)


def entry_fields(fields: dict[bytes, bytes] | dict[str, str]) -> dict[str, str]:
    """The entry's fields as text."""
    return {_text(k): _text(v) for k, v in fields.items()}


def _text(value: bytes | str | int) -> str:
    if isinstance(value, bytes):
        return value.decode()
    return str(value)


@dataclass(frozen=True, slots=True)
class StreamEntry:
    """One decoded review entry (a result or an error) of a results stream."""

    entry_id: str
    fields: dict[str, str]
    payload: ReviewPayload


@dataclass(frozen=True, slots=True)
class AnyEntry:
    """One decoded entry of any kind: a review's, or a human verdict or decision."""

    entry_id: str
    fields: dict[str, str]
    payload: Payload


_RawEntry = tuple[bytes | str, dict[bytes, bytes]]


def read_after(
    client: redis.Redis, stream: str, last_id: str, *, count: int = 100, block_ms: int | None = None
) -> list[AnyEntry]:
    """Entries of every kind after ``last_id`` (``$`` for only new ones).

    Blocks up to ``block_ms``; ``reviews_only`` keeps the results and errors of a batch.
    """
    reply = cast(
        list[tuple[bytes, list[_RawEntry]]],
        client.xread({stream: last_id}, count=count, block=block_ms) or [],
    )
    return [_decoded(entry) for _, items in reply for entry in items]


def reviews_only(entries: list[AnyEntry]) -> list[StreamEntry]:
    """The results and errors among ``entries``."""
    return [
        StreamEntry(e.entry_id, e.fields, e.payload)
        for e in entries
        if isinstance(e.payload, ReviewResult | ReviewError)
    ]


def read_all(client: redis.Redis, stream: str) -> list[StreamEntry]:
    """Every review entry (results and errors) of ``stream``, oldest first."""
    return reviews_only(read_all_kinds(client, stream))


def read_all_kinds(client: redis.Redis, stream: str) -> list[AnyEntry]:
    """Every entry of ``stream``, human verdicts and decisions included, oldest first."""
    return [_decoded(entry) for entry in cast(list[_RawEntry], client.xrange(stream))]


def _decoded(entry: _RawEntry) -> AnyEntry:
    entry_id, fields = entry
    return AnyEntry(_text(entry_id), entry_fields(fields), parse_entry(fields))
