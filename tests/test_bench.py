"""The benchmarks run and write well-formed figures (never asserts timings)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import redis

from bench import common, corpus, economics, latency, overhead, recall, redis_items, stage1_io
from bench.common import CORPUS_PATH, private_redis
from bench.redis_cost import Meter, measured
from bench.redis_floor import GROUP, Floor, Samples
from bench.redis_items import Items
from tests.infrastructure import require_redis_server
from workers.client import ReviewClient
from workers.fleet.queues import Queue
from workers.keys import Keys
from workers.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
#: Every defect class the generator declares, and nothing else.
CLASSES = set(corpus.DEFECT_CLASSES)


@pytest.fixture(scope="module")
def redis_server() -> None:
    require_redis_server()


def _load(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text())
    assert isinstance(data, dict)
    return data


def test_corpus_is_labelled_and_the_shipped_file_matches_the_generator(tmp_path: Path) -> None:
    items = corpus.generate()
    assert len(items) >= 200
    assert {i.kind for i in items} == {"python", "json", "sql", "markdown", "text"}
    assert {i.defect_class for i in items} == CLASSES
    assert {i.expected for i in items} == {"pass", "floor_fail", "wall_fail"}
    written = corpus.write(items, tmp_path / "c.jsonl")
    assert written.read_text() == CORPUS_PATH.read_text()


def test_recall_reports_every_class(tmp_path: Path) -> None:
    figures = recall.run(out_dir=tmp_path)
    data = _load(tmp_path / "recall.json")
    assert data["items"] == figures["items"] >= 200
    rows = data["rows"]
    assert isinstance(rows, list)
    assert {r["class"] for r in rows} == CLASSES
    for key in ("false_reject_rate_critical", "good_ceiling_false_flag_rate", "misses"):
        assert key in data


def test_economics_compares_four_policies_and_plots(tmp_path: Path) -> None:
    economics.run(seeds=1, nodes=150, out_dir=tmp_path, with_short=False)
    data = _load(tmp_path / "economics.json")
    policies = data["policies"]
    assert isinstance(policies, dict)
    assert set(policies) == set(economics.POLICIES)
    assert {"learned", "cold_start", "always", "never", "random", "oracle"} <= set(policies)
    for figures in policies.values():
        assert {"stage2_spend_usd", "escalation_rate", "defects_caught"} <= set(figures)
    assert policies["never"]["stage2_spend_usd"] == 0
    assert (tmp_path / "economics.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert data["plot"] == "economics.png"  # beside the results, never this machine's path


def test_no_results_file_names_a_path_of_the_machine_that_wrote_it() -> None:
    machine_paths = re.compile(r'"(/(home|root|tmp|work|Users|var)/[^"]*)"')
    found = {
        path.name: hit.group(1)
        for path in sorted((ROOT / "bench" / "results").glob("*.json"))
        if (hit := machine_paths.search(path.read_text()))
    }
    assert found == {}


@pytest.mark.integration
@pytest.mark.usefixtures("redis_server")
def test_overhead_measures_fleet_hand_rolled_and_bare(tmp_path: Path) -> None:
    overhead.run(20, out_dir=tmp_path, timeout_s=60)
    data = _load(tmp_path / "overhead.json")
    for run in ("bare", "handrolled", "fleet", "fleet_on_gevent"):
        figures = data[run]
        assert isinstance(figures, dict)
        assert figures["n"] == 20 and figures["seconds"] > 0
    assert isinstance(data["ratio_fleet_over_bare"], float)
    assert isinstance(data["ratio_fleet_over_handrolled"], float)
    assert isinstance(data["ratio_gevent_over_threads_builtin_judge"], float)
    # The refs lane waits on the network whatever the judge: gevent in every fleet.
    assert data["pools"] == {
        "stage1": "threads",
        "router": "threads",
        "stage2": "threads",
        "refs": "gevent",
    }


@pytest.mark.integration
@pytest.mark.usefixtures("redis_server")
def test_latency_reports_percentiles(tmp_path: Path) -> None:
    latency.run(1.0, (20,), out_dir=tmp_path)
    rows = _load(tmp_path / "latency.json")["rows"]
    assert isinstance(rows, list) and len(rows) == 1
    assert rows[0]["received"] == rows[0]["submitted"] == 20
    assert rows[0]["p50_ms"] <= rows[0]["p95_ms"] <= rows[0]["p99_ms"]


@pytest.mark.integration
@pytest.mark.usefixtures("redis_server")
def test_stage1_io_measures_each_pool_and_the_server_alone_against_their_bounds(
    tmp_path: Path,
) -> None:
    stage1_io.run((("threads", 4), ("gevent", 8)), slow_configs=(), bursts=(8,), out_dir=tmp_path)
    data = _load(tmp_path / "stage1_io.json")
    assert data["measured_worker"] == "stage1"
    rows = data["rows"]
    assert isinstance(rows, list)
    assert [(r["pool"], r["bound_per_s"]) for r in rows] == [("threads", 20.0), ("gevent", 40.0)]
    for row in rows:
        assert row["judged"] == row["reviews"]
        assert row["escalated"] == 0
        assert row["worker_cpu_ms_per_review"] > 0
    bursts = data["model_server_alone"]
    assert isinstance(bursts, list) and len(bursts) == 1
    alone = bursts[0]
    assert alone["connections"] == 8 and alone["requests"] == 40 and alone["bound_per_s"] == 40.0
    assert isinstance(data["recommendation"], str)


@pytest.mark.usefixtures("redis_server")
def test_the_least_design_publishes_every_node_once_and_acks_each_hop() -> None:
    """The floor ``bench.redis_cost`` compares the fleet with does all of a node's work."""
    samples = Samples(message=b'{"body": "x"}', entry={b"kind": b"result"}, attempt_record=b"{}")
    keys = Keys("floor-test")
    with private_redis() as server:
        client = redis.Redis.from_url(server.url)
        floor = Floor(server.url, keys, samples)
        try:
            floor.run(40, timeout_s=60, pace_s=0.001)
            floor.run(40, timeout_s=60)
            published = list(client.scan_iter(keys.published("*")))
            streams = [floor.stage1, floor.router]
            pending = [client.xpending(stream, GROUP)["pending"] for stream in streams]
            waiting = [client.xlen(stream) for stream in streams]
            entries = [client.xlen(keys.results(f"floor-{run}")) for run in (1, 2)]
            booked = [client.exists(keys.booked(f"floor-1:n{i}:1")) for i in (0, 39)]
        finally:
            client.close()
    assert len(published) == 80
    assert entries == [40, 40]
    assert pending == [0, 0] and waiting == [0, 0]
    assert booked == [1, 1]


@pytest.mark.usefixtures("redis_server")
def test_each_item_the_least_design_leaves_out_is_measured_on_the_fleets_own_delivery() -> None:
    """``bench.redis_items``: every variant takes and acks the fleet's real message."""
    keys = Keys("items-test")
    with private_redis() as server:
        settings = Settings(redis_url=server.url, key_prefix="items-sample")
        client = ReviewClient(settings)
        try:
            client.submit_many([common.review_obj("sample", "n0", final_deliverable=False)])
        finally:
            client.close()
        meter = Meter(server.url)
        db = redis.Redis.from_url(server.url)
        try:
            queue = settings.keys.queue(Queue.STAGE1.value)
            message = db.lindex(queue, 0)
            assert isinstance(message, bytes)
            db.delete(queue)
            items = Items(server.url, keys, message, deliveries=30, settle_s=0)
            rounds = [items.round(lambda work: measured(meter, work)) for _ in range(2)]
            left = [k for k in db.scan_iter() if k.decode().startswith(keys.prefix)]
        finally:
            meter.close()
            db.close()
    figures = redis_items.per_node(rounds)
    assert left == []  # every take acked (a refused or missing message raises)
    assert set(figures["per_delivery"]) == set(redis_items.VARIANTS)
    assert all(v["command_us"] > 0 for v in figures["per_delivery"].values())
    costs = figures["per_node_us"]["command"]
    assert set(costs) == {*redis_items.LEFT_OUT, "delivery_over_least_design"}
    paired = sorted(
        2 * (r["fleet"]["command_us"] - r["without_reserved_sets"]["command_us"]) for r in rounds
    )
    assert figures["spread"]["command"]["reserved_sets"] == [
        round(paired[0], 2),
        round(paired[-1], 2),
    ]
    assert costs["reserved_sets"] == round(sum(paired) / 2, 2)  # the median of two rounds
