"""Writes that go to Redis in one round trip: commands and script calls, in order.

redis-py's pipeline checks every script it carries with a ``SCRIPT EXISTS`` first, one
round trip more each time. A batch sends each script as a bare ``EVALSHA`` and calls again,
through its ``Script`` (which loads it), only one that Redis had forgotten (after a restart
or a ``SCRIPT FLUSH``): what a batch holds must be safe to run twice.

The batch is not a transaction. Redis runs its commands in order, but one that fails does
not stop the next, and a connection lost mid-way leaves a prefix done: ``send`` raises
then, and whoever sends a batch writes nothing in it that a later write must not outrun.
On a Redis Cluster it is redis-py's cluster pipeline: each node runs its own share.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import redis
from redis.commands.core import Script
from redis.exceptions import NoScriptError

Arg = str | bytes | int | float


@dataclass(frozen=True, slots=True)
class _ScriptCall:
    at: int
    script: Script
    keys: tuple[str, ...]
    args: tuple[Arg, ...]


class Batch:
    """One round trip of writes; build it, then ``send`` it once."""

    def __init__(self, client: redis.Redis) -> None:
        self.pipe: Any = client.pipeline(transaction=False)
        """Plain commands go here (``batch.pipe.set(...)``), in the order they run."""
        self._scripts: list[_ScriptCall] = []
        self._sent: list[Callable[[], None]] = []

    def __len__(self) -> int:
        return len(self.pipe)

    def script(self, script: Script, keys: Sequence[str], args: Sequence[Arg]) -> None:
        """Call ``script`` (registered on the client) in its place in the batch."""
        call = _ScriptCall(len(self.pipe), script, tuple(keys), tuple(args))
        self._scripts.append(call)
        self.pipe.evalsha(script.sha, len(call.keys), *call.keys, *call.args)

    def then(self, done: Callable[[], None]) -> None:
        """Call ``done`` once the whole batch has run (not when ``send`` raises)."""
        self._sent.append(done)

    def send(self) -> list[Any]:
        """Run everything in one round trip; the replies, in order.

        A script Redis had forgotten runs again through its ``Script``; any other error
        raises (the first one), after what ran did run.
        """
        replies: list[Any] = self.pipe.execute(raise_on_error=False) if len(self.pipe) else []
        for call in self._scripts:
            if isinstance(replies[call.at], NoScriptError):
                replies[call.at] = call.script(keys=list(call.keys), args=list(call.args))
        failed = next((r for r in replies if isinstance(r, redis.RedisError)), None)
        if failed is not None:
            raise failed
        for done in self._sent:
            done()
        return replies
