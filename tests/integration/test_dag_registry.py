"""A registered DAG as the fleet uses it: real Redis, real worker processes.

A runtime that registers its DAG and then sends no ``downstream`` gets the same
escalation decisions, and the same figures, as one that sends the full lists it would
compute itself; a new version applies to the attempts reviewed after it; ``windags-eval
dag`` registers a shape and shows a DAG's progress.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import redis

from bench.dag_shapes import layered_dag
from schemas.progress import DagProgress, NodeState
from schemas.result import ReviewResult
from schemas.topology import DagShape, DownstreamSource
from tests.infrastructure import wait_until
from tests.integration.support import fresh_dag, read_stream, sample
from tests.topology.reference import demo_requests, demo_shape, full_lists, random_requests
from workers.client import ReviewClient
from workers.local.launcher import LocalFleet
from workers.results.dags import DagRegistry, RegisterStatus
from workers.settings import Settings
from workers.topology import DagCycleError, DagVersionError, dag_from_obj

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "workers.local.cli"]


def results(
    db: redis.Redis, settings: Settings, dag_id: str, count: int
) -> dict[str, ReviewResult]:
    """The DAG's results by review key, once ``count`` of them are on its stream."""
    stream = settings.keys.results(dag_id)
    assert wait_until(lambda: db.xlen(stream) >= count, timeout_s=240), (dag_id, db.xlen(stream))
    out = {}
    for _, payload in read_stream(db, settings, dag_id):
        assert isinstance(payload, ReviewResult), payload
        out[f"{payload.node_id}:{payload.attempt}"] = payload
    return out


def example2(dag_id: str, sdk_cost: float = 0.04, version: int = 1) -> DagShape:
    nodes = [("doc-generator", 0.05), ("sdk-gen", sdk_cost), ("examples", 0.05)]
    nodes += [("changelog", 0.03)]
    return dag_from_obj(
        {
            "dag_id": dag_id,
            "version": version,
            "nodes": [{"node_id": n, "cost_usd": c, "duration_s": 10.0} for n, c in nodes],
            "edges": [{"producer": "doc-generator", "consumer": n} for n, _ in nodes[1:]],
        }
    )


def test_a_shape_is_stored_once_per_version_and_expires_with_the_results(
    client: ReviewClient, redis_db: redis.Redis, settings: Settings
) -> None:
    dag_id = fresh_dag()
    first = client.register_dag(example2(dag_id).model_dump(mode="json"))
    assert (first.status, first.version) == (RegisterStatus.REGISTERED, 1)
    assert client.register_dag(example2(dag_id)).status is RegisterStatus.UNCHANGED
    key = settings.keys.dag(dag_id)
    assert key in settings.keys.of_dag(dag_id)
    assert 0 < redis_db.ttl(key) <= settings.stream_retention_s
    with pytest.raises(DagVersionError) as changed:
        client.register_dag(example2(dag_id, sdk_cost=0.1))  # changed, same version
    assert (changed.value.stored, changed.value.offered) == (1, 1)
    assert client.register_dag(example2(dag_id, 0.1, version=3)).version == 3
    with pytest.raises(DagVersionError):
        client.register_dag(example2(dag_id, version=2))  # older than the stored 3
    registry = DagRegistry(redis_db, settings.keys, ttl_s=settings.stream_retention_s)
    indexed = registry.topology(dag_id, renew=False)
    assert indexed is not None and indexed.version == 3
    assert registry.topology(dag_id) is indexed  # indexed once per process and version
    assert registry.topology(fresh_dag()) is None
    cyclic = example2(dag_id).model_dump(mode="json")
    cyclic["edges"].append({"producer": "examples", "consumer": "doc-generator"})
    with pytest.raises(DagCycleError):
        client.register_dag(cyclic)


@pytest.mark.parametrize("which", ["demo", "random-200"])
def test_registering_the_dag_gives_the_same_escalations_as_sending_the_full_lists(
    which: str, fleet: LocalFleet, client: ReviewClient, redis_db: redis.Redis, settings: Settings
) -> None:
    registered, listed = fresh_dag(), fresh_dag()
    if which == "demo":
        dag, bodies = demo_shape(registered), demo_requests(registered)
    else:
        dag = layered_dag(registered, 200, layers=12, seed=26)
        bodies = random_requests(dag)
    lists = full_lists(dag)
    client.register_dag(dag)
    client.submit_many(bodies)  # no downstream: the fleet derives it
    client.submit_many([{**b, "dag_id": listed, "downstream": lists[b["node_id"]]} for b in bodies])
    derived = results(redis_db, settings, registered, len(bodies))
    sent = results(redis_db, settings, listed, len(bodies))
    assert derived.keys() == sent.keys()
    for key, mine in derived.items():
        theirs = sent[key]
        assert mine.escalation.downstream_source is DownstreamSource.REGISTERED_DAG
        assert (mine.escalation.dag_version, theirs.escalation.dag_version) == (1, None)
        node = key.split(":")[0]
        said = DownstreamSource.REQUEST if lists[node] else DownstreamSource.NONE  # a sink
        assert theirs.escalation.downstream_source is said
        same = {"downstream_source": theirs.escalation.downstream_source, "dag_version": None}
        assert mine.escalation.model_copy(update=same) == theirs.escalation, key
        assert (mine.decision, mine.stage1) == (theirs.decision, theirs.stage1), key
    escalated = {r.escalation.escalate for r in sent.values()}
    assert escalated == {True, False}


def test_a_new_version_applies_to_the_attempts_reviewed_after_it(
    fleet: LocalFleet, client: ReviewClient, redis_db: redis.Redis, settings: Settings
) -> None:
    dag_id = fresh_dag()
    body = sample("example2_no_escalation.json", dag_id=dag_id)
    del body["downstream"]
    client.register_dag(example2(dag_id))
    client.submit(body)
    first = results(redis_db, settings, dag_id, 1)["doc-generator:1"].escalation
    assert (first.dag_version, first.downstream_waste, first.escalate) == (1, 0.072, False)
    client.register_dag(example2(dag_id, sdk_cost=0.10, version=2))
    client.submit({**body, "attempt": 2})
    reviewed = results(redis_db, settings, dag_id, 2)
    second = reviewed["doc-generator:2"].escalation
    assert (second.dag_version, second.downstream_waste) == (2, 0.108)  # 0.6 x 0.18
    assert reviewed["doc-generator:1"].escalation == first


def cli(fleet_env: dict[str, str], redis_url: str, *args: str, stdin: str = "") -> Any:
    env = {k: v for k, v in os.environ.items() if "WINDAGS" not in k}
    env.update(fleet_env, WINDAGS_REDIS_URL=redis_url, COLUMNS="220")
    return subprocess.run(
        [*CLI, *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_dag_register_and_show_on_the_demo_dag(
    fleet: LocalFleet,
    client: ReviewClient,
    redis_db: redis.Redis,
    settings: Settings,
    fleet_env: dict[str, str],
    redis_url: str,
) -> None:
    dag_id = fresh_dag()
    shape = json.dumps(demo_shape(dag_id).model_dump(mode="json"))
    done = cli(fleet_env, redis_url, "dag", "register", "-", stdin=shape)
    assert done.returncode == 0, done.stderr
    assert f"registered: DAG {dag_id} version 1, 18 nodes" in done.stdout
    assert "plan, backfill-sql, backfill-run" in done.stdout  # the critical path
    again = cli(fleet_env, redis_url, "dag", "register", "-", stdin=shape)
    assert again.returncode == 0 and again.stdout.startswith("unchanged:")

    client.submit_many(demo_requests(dag_id))
    reviewed = results(redis_db, settings, dag_id, 14)
    shown = cli(fleet_env, redis_url, "dag", "show", dag_id, "--json")
    assert shown.returncode == 0, shown.stderr
    progress = DagProgress.model_validate_json(shown.stdout)
    states = {n.node_id: n.state for n in progress.nodes}
    assert len(states) == 18 and list(states.values()).count(NodeState.PENDING) == 4
    for result in reviewed.values():
        assert states[result.node_id] is not NodeState.PENDING
    table = cli(fleet_env, redis_url, "dag", "show", dag_id)
    assert table.returncode == 0, table.stderr
    for node in states:
        assert node in table.stdout
    assert "waiting for a person" in table.stdout and "not reviewed yet" in table.stdout
    assert "of a $0.75 budget" in table.stdout


def test_dag_register_refuses_a_cycle_in_one_line_and_show_an_unknown_dag(
    fleet_env: dict[str, str], redis_url: str
) -> None:
    body = example2("cyclic").model_dump(mode="json")
    body["edges"].append({"producer": "changelog", "consumer": "doc-generator"})
    done = cli(fleet_env, redis_url, "dag", "register", "-", stdin=json.dumps(body))
    assert done.returncode == 2
    loop = "doc-generator -> changelog -> doc-generator"
    assert done.stderr.strip().splitlines() == [
        f"error: -: invalid DAG: edges.3: closes the cycle {loop}"
    ]
    missing = cli(fleet_env, redis_url, "dag", "show", fresh_dag())
    assert missing.returncode == 1 and "no results and no registered shape" in missing.stderr
