"""The index's answers, remembered: fleet-wide in Redis, or in this process.

"It exists" is kept long and "no such project" short: a project seldom disappears, but
anyone may register a missing name next (the slopsquatting the check is there for). No
usable answer is never kept: the next review asks again. A cache that fails is a miss,
never a failed review.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import redis
from pydantic import ValidationError

from schemas.packages import IndexAnswer, PackageAnswer
from workers.keys import Keys


@dataclass(frozen=True, slots=True)
class Lifetimes:
    """How long each kind of answer is kept, in seconds (0: not kept)."""

    present_s: int
    absent_s: int

    def of(self, answer: PackageAnswer) -> int:
        """The lifetime of ``answer``; 0 for an unreachable index."""
        if answer.answer is IndexAnswer.PRESENT:
            return self.present_s
        if answer.answer is IndexAnswer.ABSENT:
            return self.absent_s
        return 0


class AnswerCache(Protocol):
    """Where answers are kept between reviews."""

    def get_many(self, names: Iterable[str]) -> dict[str, PackageAnswer]:
        """The kept answers among ``names``."""
        ...

    def put(self, answer: PackageAnswer) -> None:
        """Keep ``answer`` for as long as its kind is kept."""
        ...


class RedisAnswers:
    """Answers shared by the fleet: one key per name (``Keys.package_answer``) with its TTL."""

    def __init__(self, client: redis.Redis, keys: Keys, lifetimes: Lifetimes) -> None:
        self._client, self._keys, self._lifetimes = client, keys, lifetimes

    def get_many(self, names: Iterable[str]) -> dict[str, PackageAnswer]:
        """One pipelined GET per name (keys of many cluster slots: never one MGET)."""
        wanted = list(names)
        if not wanted:
            return {}
        try:
            pipe = self._client.pipeline(transaction=False)
            for name in wanted:
                pipe.get(self._keys.package_answer(name))
            raw = pipe.execute()
        except redis.RedisError:
            return {}
        found: dict[str, PackageAnswer] = {}
        for name, value in zip(wanted, raw, strict=True):
            answer = _decoded(value)
            if answer is not None and answer.name == name:
                found[name] = answer
        return found

    def put(self, answer: PackageAnswer) -> None:
        """SET with the kind's TTL; nothing for an unreachable index."""
        ttl = self._lifetimes.of(answer)
        if ttl <= 0:
            return
        try:
            self._client.set(
                self._keys.package_answer(answer.name), answer.model_dump_json(), ex=ttl
            )
        except redis.RedisError:
            return


class MemoryAnswers:
    """Answers of one process (the in-process review: a batch asks once per name)."""

    def __init__(self, lifetimes: Lifetimes) -> None:
        self._lifetimes = lifetimes
        self._kept: dict[str, tuple[float, PackageAnswer]] = {}
        self._lock = threading.Lock()

    def get_many(self, names: Iterable[str]) -> dict[str, PackageAnswer]:
        """The answers still within their lifetime."""
        now = time.monotonic()
        with self._lock:
            kept = {n: self._kept.get(n) for n in names}
        return {n: a for n, entry in kept.items() if entry and (a := entry[1]) and entry[0] > now}

    def put(self, answer: PackageAnswer) -> None:
        """Keep ``answer`` until its lifetime ends."""
        ttl = self._lifetimes.of(answer)
        if ttl > 0:
            with self._lock:
                self._kept[answer.name] = (time.monotonic() + ttl, answer)


def _decoded(value: object) -> PackageAnswer | None:
    if not isinstance(value, bytes | str):
        return None
    try:
        return PackageAnswer.model_validate_json(value)
    except ValidationError:
        return None
