"""What the soak saw come back: every entry of every DAG it sent, counted by identity.

A DAG stays watched from its submission until each of its reviews has its entry, each
review escalated to a person has the person's verdict and the recomputed decision, and
then ``LINGER_S`` more (a late duplicate would land then); its stream is read forward
from the last entry seen, every DAG in one pipeline. Raw messages are matched to the
quarantine by digest. End-to-end latency is the entry's publish time (the Redis clock in
its id) less the moment the soak submitted the review.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import redis

from bench.common import entry_ms
from bench.soak_mix import Kind, Review
from workers.keys import Keys
from workers.results.stream import EntryKind

#: How long a finished DAG is still read for late duplicates (below the stream retention),
#: and how often meanwhile.
LINGER_S = 30.0
LINGER_POLL_S = 5.0
_REVIEW_KINDS = (EntryKind.RESULT.value, EntryKind.ERROR.value)
_HUMAN_KINDS = (EntryKind.HUMAN_VERDICT.value, EntryKind.DECISION.value)


@dataclass
class _Dag:
    reviews: dict[str, Review]
    submitted_at: float
    last_id: str = "-"
    finished_at: float | None = None
    polled_at: float = 0.0


@dataclass
class Watch:
    """Every entry of the soak's DAGs, counted per (kind, review key), and latencies."""

    db: redis.Redis
    keys: Keys
    #: Called with a review key once its result asks for a person.
    to_person: Callable[[str], None]
    seen: Counter[tuple[str, str]] = field(default_factory=Counter)
    decisions: Counter[str] = field(default_factory=Counter)
    #: (publish time s, end-to-end latency ms) of each first review entry.
    latencies: list[tuple[float, float]] = field(default_factory=list)
    expected: dict[str, Review] = field(default_factory=dict)
    raw_sent: dict[str, str] = field(default_factory=dict)
    raw_filed: Counter[str] = field(default_factory=Counter)
    quarantine_last: str = "-"
    _open: dict[str, _Dag] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def submitted(self, dag_id: str, reviews: list[Review], at: float) -> None:
        """Watch a DAG whose reviews were submitted at ``at`` (epoch seconds)."""
        with self._lock:
            self._open[dag_id] = _Dag({r.key: r for r in reviews}, at)
            self.expected.update((r.key, r) for r in reviews)

    def pushed_raw(self, queue: str, data: bytes) -> None:
        """Expect ``data`` in the quarantine, filed from ``queue``."""
        with self._lock:
            self.raw_sent[hashlib.sha1(data).hexdigest()] = queue

    @property
    def open_dags(self) -> int:
        """DAGs still watched."""
        return len(self._open)

    def poll(self) -> None:
        """Read what is new on every open DAG's stream and on the quarantine."""
        now = time.time()
        with self._lock:
            dags = [
                (dag_id, dag)
                for dag_id, dag in self._open.items()
                if dag.finished_at is None or now - dag.polled_at >= LINGER_POLL_S
            ]
        pipe = self.db.pipeline(transaction=False)
        for dag_id, dag in dags:
            start = "-" if dag.last_id == "-" else f"({dag.last_id}"
            pipe.xrange(self.keys.results(dag_id), min=start)
        replies = cast(list[list[tuple[bytes, dict[bytes, bytes]]]], pipe.execute())
        for (dag_id, dag), entries in zip(dags, replies, strict=True):
            dag.polled_at = now
            for entry_id, fields in entries:
                dag.last_id = entry_id.decode()
                self._count(dag, dag.last_id, fields)
            self._maybe_close(dag_id, dag, now)
        self._poll_quarantine()

    def _count(self, dag: _Dag, entry_id: str, fields: dict[bytes, bytes]) -> None:
        kind = fields.get(b"kind", b"").decode()
        key = fields.get(b"review_key", b"").decode()
        self.seen[kind, key] += 1
        if kind not in _REVIEW_KINDS or self.seen[kind, key] > 1 or key not in dag.reviews:
            return
        published_s = entry_ms(entry_id) / 1000
        self.latencies.append((published_s, (published_s - dag.submitted_at) * 1000))
        payload = json.loads(fields[b"payload"])
        decision = str(payload.get("decision", kind))
        self.decisions[decision] += 1
        self.decisions["stage2_run"] += int(payload.get("stage2") is not None)
        if decision == "escalate_human":
            self.to_person(key)

    def _maybe_close(self, dag_id: str, dag: _Dag, now: float) -> None:
        done = all(self._done(key, r.kind) for key, r in dag.reviews.items())
        if dag.finished_at is None and done:
            dag.finished_at = now
        if dag.finished_at is not None and now - dag.finished_at >= LINGER_S:
            with self._lock:
                del self._open[dag_id]

    def _done(self, key: str, kind: Kind) -> bool:
        if not any(self.seen[k, key] for k in _REVIEW_KINDS):
            return False
        return kind is not Kind.HUMAN or all(self.seen[k, key] for k in _HUMAN_KINDS)

    def _poll_quarantine(self) -> None:
        start = "-" if self.quarantine_last == "-" else f"({self.quarantine_last}"
        raw = cast(
            list[tuple[bytes, dict[bytes, bytes]]],
            self.db.xrange(self.keys.quarantine, min=start),
        )
        for entry_id, fields in raw:
            self.quarantine_last = entry_id.decode()
            self.raw_filed[fields.get(b"sha1", b"").decode()] += 1

    def lost(self) -> list[str]:
        """Reviews with no entry, escalations with no verdict, raw messages not filed."""
        missing = [key for key, r in self.expected.items() if not self._done(key, r.kind)]
        return missing + [f"raw:{d}" for d in self.raw_sent if not self.raw_filed[d]]

    def duplicated(self) -> list[str]:
        """Entries (or quarantine filings) that came more than once for one identity."""
        twice = [f"{kind}:{key}" for (kind, key), n in self.seen.items() if n > 1]
        return twice + [f"raw:{d}" for d, n in self.raw_filed.items() if n > 1]

    def stray(self) -> list[str]:
        """Entries for no review the soak sent (there should be none)."""
        unknown = [key for _, key in self.seen if key not in self.expected]
        return unknown + [f"raw:{d}" for d in self.raw_filed if d not in self.raw_sent]
