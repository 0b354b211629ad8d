"""What each thing the least design leaves out costs the fleet's Redis, one at a time.

``bench.redis_floor`` moves an accepted node the least way we know (Redis Streams
consumer groups) and leaves out three things the fleet pays for: the delivery owners'
leases, the reserved sets (KEDA's in-flight count per queue) and the inspection. Each is
a part of the fleet's own delivery of a message: the take script (``TAKE_LUA``) and the
ack that goes with the hop (``settle``). Here that delivery runs alone on the server
``bench.redis_cost`` measures, in the same run, with the fleet's real message, in
variants:

- ``fleet``: taken ``TAKE_COUNT`` at a time by the take script as the workers call it,
  each then acked as a settled hop acks it (``HDEL``, ``ZREM`` of the index and of the
  reserved set, in a ``MULTI``);
- ``without_reserved_sets``: the take without the queue's set, the ack without its ``ZREM``;
- ``without_leases``: the take names no owner (as records did before leases);
- ``tag_search`` and ``tag_search_baseline``: the inspection's Redis side, the take's own
  Lua that reads a message's delivery tag (``TAG_OF_LUA``), against the same call that
  returns at once (the worker's inspection of the decoded message runs in Python, on the
  worker's CPU, not Redis's);
- ``least_design``: the floor's delivery, ``XREADGROUP COUNT`` then ``XACK`` and ``XDEL``
  in a ``MULTI``.

Each is measured per delivery over ``DELIVERIES`` deliveries, in every round, two ways:
the server's CPU (``INFO cpu``, less the idle fleet's rate: everything, the AOF and the
round trips included) and the time inside its commands (``INFO commandstats``: the
scripts' and transactions' own time, their commands' included; wall-clock time, so a
busy machine stretches it too). An item's cost is the difference between two variants
within a round, its median over the rounds; the spread of the rounds is kept beside it.
An accepted node has two deliveries (Stage 1's and the router's), so an item costs a
node twice what it costs a delivery.
"""

from __future__ import annotations

import re
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, cast

import redis

from workers.client import SUBMIT_BATCH
from workers.fleet.transport.quarantine import RAW_KEPT_BYTES, TAG_OF_LUA, TAKE_LUA
from workers.keys import Keys

#: Messages a take pops, and a read returns: about what the accept workload's takes found.
TAKE_COUNT: Final = 2
DELIVERIES: Final = 2000
#: Seconds between putting the messages in place and measuring: Redis fsyncs its AOF once a
#: second (``everysec``) in a thread whose CPU ``INFO cpu`` counts; the fsync of a
#: variant's thousands of queued messages must not land in the window of its deliveries.
SETTLE_S: Final = 1.5
#: Deliveries an accepted node has: Stage 1's and the router's.
PER_NODE: Final = 2
#: An owner id as long as the workers' (``leases.new_owner_id``).
OWNER: Final = "bench-host:12345:0123abcd"
GROUP: Final = "items"
#: What the least design leaves out, as ``per_node`` names them.
LEFT_OUT: Final = ("reserved_sets", "leases", "inspection")
VARIANTS: Final = (
    "fleet",
    "without_reserved_sets",
    "without_leases",
    "tag_search",
    "tag_search_baseline",
    "least_design",
)
_TAG: Final = re.compile(rb'"delivery_tag": "([^"]+)"')
_TAG_SEARCH: Final = TAG_OF_LUA + "return tag_of(ARGV[1])\n"
_TAG_BASELINE: Final = "local raw = ARGV[1]\nreturn raw ~= nil\n"

#: The commands a variant sends itself: their time includes that of the commands inside.
OUTER: Final = ("evalsha", "multi", "exec", "xreadgroup")
#: Measures ``work()``: ``bench.redis_cost.measured``'s figures (``cpu_ms``, ``by_command``).
Measure = Callable[[Callable[[], None]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Items:
    """The variants of one delivery, on one server, with the fleet's own message."""

    url: str
    keys: Keys
    """A prefix of the bench's own (no worker consumes it)."""
    message: bytes
    """A submitted message as the fleet's queue holds it (kombu's envelope)."""
    deliveries: int = DELIVERIES
    settle_s: float = SETTLE_S

    def round(self, measure: Measure, *, first: int = 0) -> dict[str, dict[str, float]]:
        """Each variant once, from the ``first``-th on (rounds rotate the order so none is
        always measured first): per delivery, µs of the server's CPU and of command time."""
        client = redis.Redis.from_url(self.url)
        try:
            runs: dict[str, Callable[[], None]] = {
                "fleet": lambda: self._fleet(client, reserved=True, owner=OWNER),
                "without_reserved_sets": lambda: self._fleet(client, reserved=False, owner=OWNER),
                "without_leases": lambda: self._fleet(client, reserved=True, owner=""),
                "tag_search": lambda: self._script(client, _TAG_SEARCH),
                "tag_search_baseline": lambda: self._script(client, _TAG_BASELINE),
                "least_design": lambda: self._floor(client),
            }
            figures = {}
            for name in (*VARIANTS[first % len(VARIANTS) :], *VARIANTS[: first % len(VARIANTS)]):
                self._ready(client, name)
                time.sleep(self.settle_s)  # the AOF's fsync of the messages, before the window
                done = measure(runs[name])
                usec = sum(done["by_command"].get(c, {}).get("usec", 0) for c in OUTER)
                figures[name] = {
                    "cpu_us": round(1000 * done["cpu_ms"] / self.deliveries, 2),
                    "command_us": round(usec / self.deliveries, 2),
                }
            return figures
        finally:
            client.delete(*self._names())
            client.close()

    def _names(self) -> list[str]:
        """The fleet's queue, unacked hash, index, reserved set, quarantine; the floor's stream."""
        keys = self.keys
        return [
            keys.queue("items"),
            keys.unacked,
            keys.unacked_index,
            keys.reserved("items"),
            keys.quarantine,
            keys.queue("items.stream"),
        ]

    def _ready(self, client: redis.Redis, variant: str) -> None:
        """``deliveries`` messages waiting, each with a delivery tag of its own."""
        if variant.startswith("tag_search"):
            return
        head, tag, tail = _split(self.message)
        queue, *_, stream = self._names()
        if variant == "least_design":
            try:
                client.xgroup_create(stream, GROUP, id="$", mkstream=True)
            except redis.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        for start in range(0, self.deliveries, SUBMIT_BATCH):
            pipe = client.pipeline(transaction=False)
            for _ in range(min(SUBMIT_BATCH, self.deliveries - start)):
                body = head + str(uuid.uuid4()).encode()[: len(tag)] + tail
                if variant == "least_design":
                    pipe.xadd(stream, {"m": body})
                else:
                    pipe.lpush(queue, body)
            pipe.execute()

    def _fleet(self, client: redis.Redis, *, reserved: bool, owner: str) -> None:
        queue, unacked, index, reserved_set, quarantine, _ = self._names()
        take = client.register_script(TAKE_LUA)
        keys = [queue, unacked, index, quarantine, *([reserved_set] if reserved else [])]
        done = 0
        while done < self.deliveries:
            args: list[str | int] = [repr(time.time()), "items", RAW_KEPT_BYTES, 60_000]
            args += [TAKE_COUNT, owner]
            taken = cast("list[list[Any]] | None", take(keys=keys, args=args))
            if not taken:
                raise RuntimeError("the take found the queue empty before its deliveries")
            for recorded, _, tag in taken:
                if not recorded:
                    raise RuntimeError(f"the take refused the fleet's message: {tag!r}")
                pipe = client.pipeline()  # a settled hop's ack (``Channel._put``)
                pipe.hdel(unacked, tag)
                pipe.zrem(index, tag)
                if reserved:
                    pipe.zrem(reserved_set, tag)
                pipe.execute()
                done += 1

    def _script(self, client: redis.Redis, lua: str) -> None:
        script = client.register_script(lua)
        for _ in range(self.deliveries):
            script(keys=[], args=[self.message])

    def _floor(self, client: redis.Redis) -> None:
        stream = self._names()[-1]
        done = 0
        while done < self.deliveries:
            replies = client.xreadgroup(GROUP, "c", {stream: ">"}, count=TAKE_COUNT)
            for _, entries in cast("list[Any]", replies or []):
                for entry_id, _ in entries:
                    pipe = client.pipeline()
                    pipe.xack(stream, GROUP, entry_id)
                    pipe.xdel(stream, entry_id)
                    pipe.execute()
                    done += 1


def _split(message: bytes) -> tuple[bytes, bytes, bytes]:
    """The message around its last delivery tag (the one the take reads)."""
    found = list(_TAG.finditer(message))
    if not found:
        raise RuntimeError("the fleet's message names no delivery tag")
    start, end = found[-1].span(1)
    return message[:start], message[start:end], message[end:]


#: Each item: the variant with it, and the one without (the difference is its cost).
PAIRS: Final = {
    "reserved_sets": ("fleet", "without_reserved_sets"),
    "leases": ("fleet", "without_leases"),
    "inspection": ("tag_search", "tag_search_baseline"),
    "delivery_over_least_design": ("fleet", "least_design"),
}
WAYS: Final = ("cpu_us", "command_us")


def per_node(rounds: list[dict[str, dict[str, float]]]) -> dict[str, Any]:
    """What each item costs an accepted node (µs): the median over rounds of its difference.

    A difference is taken within a round (the variant with the item less the one without,
    measured a few seconds apart), so what the machine's other work does between rounds
    moves both; ``spread`` is the least and most of those differences. ``per_delivery``
    keeps each variant's least of the rounds.
    """

    def costs(way: str) -> dict[str, list[float]]:
        return {
            item: sorted(PER_NODE * (r[with_][way] - r[without][way]) for r in rounds)
            for item, (with_, without) in PAIRS.items()
        }

    least = {name: {way: min(r[name][way] for r in rounds) for way in WAYS} for name in VARIANTS}
    by_way = {way.removesuffix("_us"): costs(way) for way in WAYS}
    return {
        "take_count": TAKE_COUNT,
        "per_delivery": least,
        "per_node_us": {
            way: {item: round(statistics.median(diffs), 2) for item, diffs in found.items()}
            for way, found in by_way.items()
        },
        "spread": {
            way: {item: [round(diffs[0], 2), round(diffs[-1], 2)] for item, diffs in found.items()}
            for way, found in by_way.items()
        },
        "rounds": rounds,
    }
