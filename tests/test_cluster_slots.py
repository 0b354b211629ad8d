"""Every state script's KEYS hash to one Redis Cluster slot, and its Lua names no other key.

Each script is called as its store calls it, against a recording client (no Redis): the
keys of one call must share a slot (``redis.crc.key_slot``) under the cluster's tagged
names, and a script body may reach keys only through ``KEYS`` (a key built in Lua from a
string would be a slot the cluster never checked). The names on one Redis stay untagged.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import pytest
import redis
from redis.crc import key_slot

from schemas.decisions import Decision
from schemas.human import AttemptRecord, LabelledOutcome, OutcomeSource, StageOneView
from schemas.quality import Dimension
from schemas.request import BreakerState, SkillStage
from workers.human.queue import ReviewQueue
from workers.human.verdicts import _RECORD_ONCE
from workers.judges.ratelimit import _TAKE_TOKEN
from workers.keys import UNROUTABLE_DAG, Keys, hash_tagged
from workers.records.attempts import AttemptStore
from workers.records.outcomes import OutcomeStore
from workers.results import booking, dags, ledger
from workers.results.ledger import CostLedger
from workers.results.stream import EntryKind, ResultStream

#: DAG ids as runtimes spell them, and as a refused request may (braces, a leading colon).
DAGS = ("dag-1", "team:run:7", "a.b@c/d", "x{y}z", ":lead", "}{", "%7B")
CLUSTER = Keys("windags", tagged=True)


@dataclass
class Recorded:
    """The scripts registered and the KEYS of every call."""

    scripts: list[str] = field(default_factory=list)
    calls: list[tuple[str, list[str]]] = field(default_factory=list)


class RecordingScript:
    """Stands for redis-py's ``Script``: records the keys it is called with."""

    def __init__(self, record: Recorded, lua: str) -> None:
        self.record, self.lua = record, lua
        self.sha = hashlib.sha1(lua.encode()).hexdigest()

    def __call__(self, keys: list[str], args: list[Any], client: Any = None) -> Any:
        self.record.calls.append((self.lua, [str(k) for k in keys]))
        if "'mine'" in self.lua:
            return [b"mine", b"alice", 60]
        return [b"added", b""] if "'added'" in self.lua else [0, b"0"]


class RecordingClient:
    """Just enough of a client for the stores to register and call their scripts."""

    def __init__(self) -> None:
        self.record = Recorded()

    def register_script(self, lua: str) -> RecordingScript:
        self.record.scripts.append(lua)
        return RecordingScript(self.record, lua)

    def pipeline(self, transaction: bool = True) -> RecordingPipeline:
        assert not transaction, "a multi-slot pipeline must be non-transactional"
        return RecordingPipeline(self.record)


class RecordingPipeline:
    """Counts its commands; records the keys of each script it carries (``EVALSHA``)."""

    def __init__(self, record: Recorded) -> None:
        self.record, self.commands = record, 0

    def __len__(self) -> int:
        return self.commands

    def evalsha(self, sha: str, numkeys: int, *keys_and_args: Any) -> None:
        [lua] = [
            lua for lua in self.record.scripts if hashlib.sha1(lua.encode()).hexdigest() == sha
        ]
        self.record.calls.append((lua, [str(k) for k in keys_and_args[:numkeys]]))
        self.commands += 1

    def __getattr__(self, name: str) -> Any:
        def command(*args: Any, **kwargs: Any) -> None:
            self.commands += 1

        return command

    def execute(self, raise_on_error: bool = True) -> list[int]:
        return [1] * self.commands


def _slots(keys: list[str]) -> set[int]:
    return {key_slot(key.encode()) for key in keys}


def _stores(client: RecordingClient) -> Iterator[Any]:
    fake = cast(redis.Redis, client)
    yield ResultStream(fake, CLUSTER, retention_s=60, dedup_ttl_s=60)
    yield CostLedger(fake, CLUSTER)
    yield AttemptStore(fake, CLUSTER, kept=5, ttl_s=60)
    yield OutcomeStore(fake, CLUSTER, kept=5, ttl_s=60)
    yield ReviewQueue(fake, CLUSTER, item_ttl_s=60, claim_ttl_s=60)


@pytest.mark.parametrize("dag", DAGS)
def test_a_dags_keys_and_its_reviews_keys_share_one_slot(dag: str) -> None:
    review = f"{dag}:node:a:3"
    keys = [
        CLUSTER.results(dag),
        CLUSTER.cost(dag),
        CLUSTER.dag(dag),
        CLUSTER.attempts(dag, "node:a"),
        CLUSTER.published(review),
        CLUSTER.published(f"invalid:sha256-{'0' * 32}", dag),
        CLUSTER.booked(review),
        CLUSTER.charged(review),
        CLUSTER.tries("stage1", review),
        CLUSTER.stage2_claim(review),
        CLUSTER.stage2_report(review),
        CLUSTER.human_item(review),
        CLUSTER.human_claim(review),
        CLUSTER.human_decided(review),
    ]
    assert len(_slots(keys)) == 1, keys
    assert len(set(keys)) == len(keys)
    assert CLUSTER.published(review, dag) == CLUSTER.published(review)


def test_the_tag_is_never_empty_or_cut_short_and_names_stay_distinct() -> None:
    tagged = [hash_tagged(name) for name in ("", ":", "%", "{", "}", "{}", "a", "a:", "%7B")]
    assert len(set(tagged)) == len(tagged)
    for name in tagged:
        tag = re.match(r"^\{([^{}]+)\}", name)
        assert tag is not None, name


def test_one_redis_keeps_the_names_it_always_had() -> None:
    plain = Keys("windags")
    assert plain.results("d") == "windags:results:d"
    assert plain.published("d:n:1", "other") == "windags:published:d:n:1"
    assert plain.attempts("d", "n") == "windags:attempts:d:n"
    assert plain.human_item("d:n:1") == "windags:human:item:d:n:1"


def _drive(stores: list[Any], dag: str) -> None:
    stream, charges, attempts, outcomes, queue = stores
    review = f"{dag}:n:1"
    charge = charges.pending_charge(dag, review, 0.25)
    book = booking.Booking(
        booking.AttemptWrite(CLUSTER.attempts(dag, "n"), 1, "{}", 60, 5),
        CLUSTER.booked(review),
        60,
    )
    stream._publish(dag, review, stream_kind(), "{}", None, charge, book)
    stream._publish(UNROUTABLE_DAG, "sha256-" + "1" * 32, stream_kind(), "{}", None)
    stream._publish(dag, "invalid:sha256-" + "2" * 32, stream_kind(), "{}", None)
    charges.charge(dag, review, 0.5)
    attempts._write(dag, "n", _record(), keep=True)
    outcomes.record(_outcome("team:run"), once=True)  # its lists are the skill's and evaluator's
    queue.claim(review, "alice")
    queue.release(review, "alice")


def stream_kind() -> EntryKind:
    return EntryKind.RESULT


def _record() -> AttemptRecord:
    view = StageOneView(
        floor_passed=True,
        wall_grade=0.9,
        failure_probability=0.1,
        escalated=False,
        decision=Decision.ACCEPT,
        claimed_success_rate=0.9,
        stage=SkillStage.EXPERT,
        breaker=BreakerState.CLOSED,
    )
    return AttemptRecord(
        attempt=1, skill_id="skill:x", score=0.9, dimension=Dimension.SUBSTANCE, stage1=view
    )


def _outcome(dag: str) -> LabelledOutcome:
    return LabelledOutcome(
        source=OutcomeSource.STAGE2,
        evaluator="stage2:claude",
        skill_id="skill:x",
        dag_id=dag,
        node_id="n",
        attempt=1,
        label=0.5,
        stage1=_record().stage1,
        recorded_at="2026-01-01T00:00:00.000+00:00",
    )


@pytest.mark.parametrize("dag", DAGS)
def test_every_script_call_touches_one_slot(dag: str) -> None:
    client = RecordingClient()
    stores = list(_stores(client))
    _drive(stores, dag)
    # The verdict script, called with the keys the desk passes.
    review = f"{dag}:n:1"
    verdict_keys = [
        CLUSTER.results(dag),
        CLUSTER.human_decided(review),
        CLUSTER.human_claim(review),
        CLUSTER.human_item(review),
    ]
    client.record.calls.append((_RECORD_ONCE, verdict_keys))
    client.record.calls.append((dags._REGISTER, [CLUSTER.dag(dag)]))
    client.record.calls.append((_TAKE_TOKEN, [CLUSTER.rate_bucket("claude")]))
    assert client.record.calls
    for lua, keys in client.record.calls:
        assert len(_slots(keys)) == 1, (lua[:80], keys)


def test_scripts_reach_keys_only_through_keys() -> None:
    """No ``redis.call`` names a key from ARGV or a built string: its first argument is KEYS."""
    client = RecordingClient()
    list(_stores(client))
    scripts = [*client.record.scripts, _RECORD_ONCE, dags._REGISTER, _TAKE_TOKEN, ledger._CHARGE]
    call = re.compile(r"redis\.call\('(\w+)',\s*([^,)]+)")
    keyless = {"TIME"}
    for lua in scripts:
        for command, first in call.findall(lua):
            if command in keyless:
                continue
            assert first.startswith("KEYS[") or first in {"key", "list", "index"}, (command, first)
