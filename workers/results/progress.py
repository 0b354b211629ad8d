"""DAG progress for the CLI and the review page: the stream folded as it grows.

A reader keeps one ``ProgressFold`` per DAG it was asked about (the newest few), and on
each call reads only the entries after the last one folded: a page reloaded every few
seconds costs the new entries, not the whole stream.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import redis

from schemas.progress import DagProgress
from workers.keys import Keys
from workers.results.dags import DagRegistry
from workers.results.stream import read_after
from workers.topology.progress import ProgressFold

#: DAGs whose folds one reader keeps.
KEPT_FOLDS = 32
#: Entries read per round trip.
BATCH = 500


class ProgressReader:
    """Reads DAGs' progress from their results streams and registered shapes."""

    def __init__(self, client: redis.Redis, keys: Keys, registry: DagRegistry) -> None:
        self._redis = client
        self._keys = keys
        self._registry = registry
        self._lock = threading.Lock()
        self._folds: OrderedDict[str, ProgressFold] = OrderedDict()

    def progress(self, dag_id: str, *, block_ms: int | None = None) -> DagProgress:
        """The DAG as of its newest entry.

        ``block_ms``: first wait up to that long for an entry newer than the last one
        folded (a live view's next frame).
        """
        with self._lock:
            fold = self._folds.pop(dag_id, None) or ProgressFold(dag_id)
            self._folds[dag_id] = fold
            while len(self._folds) > KEPT_FOLDS:
                self._folds.popitem(last=False)
            self._catch_up(fold, block_ms)
            topology = self._registry.topology(dag_id, renew=False)
            return fold.progress(topology)

    def _catch_up(self, fold: ProgressFold, block_ms: int | None) -> None:
        stream = self._keys.results(fold.dag_id)
        while True:
            entries = read_after(
                self._redis, stream, fold.last_entry_id, count=BATCH, block_ms=block_ms
            )
            for entry in entries:
                fold.add(entry.entry_id, entry.payload)
            if len(entries) < BATCH:
                return
            block_ms = None
