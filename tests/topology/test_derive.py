"""Downstream derived from a registered DAG: the same figures as a runtime's own lists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.dag_shapes import layered_dag
from schemas.decisions import EscalationDecision
from schemas.request import ReviewRequest
from schemas.topology import DagShape, DownstreamSource
from tests.topology.reference import demo_requests, demo_shape, full_lists, random_requests
from workers.evaluate import decide_escalation, run_stage1
from workers.evaluate.escalation.formula import cascade_waste
from workers.intake import request_from_obj
from workers.settings import Settings
from workers.topology import Topology, all_economics, consumers, dag_from_obj
from workers.topology import with_derived_downstream as derive

PRICE = Settings().price_of(Settings().stage2_model)
LIMITS = {"max_request_bytes": 10**7, "max_output_chars": 10**6}
SAMPLE = Path(__file__).resolve().parents[2] / "workers" / "samples" / "example2_no_escalation.json"


def request(body: dict[str, Any]) -> ReviewRequest:
    return request_from_obj(body, **LIMITS)


def escalation_of(req: ReviewRequest, dag_version: int | None = None) -> EscalationDecision:
    report = run_stage1(req)
    return decide_escalation(req, stage2_price=PRICE, stage1=report.stage1, dag_version=dag_version)


def shape(nodes: dict[str, tuple[float, float]], edges: list[tuple[str, str]]) -> DagShape:
    return dag_from_obj(
        {
            "dag_id": "sample-dag",
            "nodes": [
                {"node_id": n, "cost_usd": c, "duration_s": d} for n, (c, d) in nodes.items()
            ],
            "edges": [{"producer": a, "consumer": b} for a, b in edges],
        }
    )


def example2_shape() -> DagShape:
    nodes = {"doc-generator": (0.05, 30.0), "sdk-gen": (0.04, 20.0)}
    nodes |= {"examples": (0.05, 10.0), "changelog": (0.03, 5.0)}
    return shape(nodes, [("doc-generator", c) for c in ("sdk-gen", "examples", "changelog")])


def test_worked_example_2_is_unchanged_with_a_list_and_the_same_derived_from_its_dag() -> None:
    body = json.loads(SAMPLE.read_text())
    sent = escalation_of(request(body))
    assert (sent.failure_probability, sent.downstream_waste) == (0.225, 0.072)
    assert (round(sent.expected_waste, 3), sent.stage2_cost, sent.escalate) == (0.016, 0.045, False)
    assert (sent.downstream_source, sent.dag_version) == (DownstreamSource.REQUEST, None)

    bare = request({k: v for k, v in body.items() if k != "downstream"})
    derived, version = derive(bare, Topology(example2_shape()))
    assert version == 1 and [n.hops for n in derived.downstream] == [1, 1, 1]
    got = escalation_of(derived, version)
    figures = ("failure_probability", "downstream_waste", "expected_waste", "stage2_cost")
    assert [getattr(got, f) for f in figures] == [getattr(sent, f) for f in figures]
    assert (got.escalate, got.reason, got.raw_downstream_waste) == (False, sent.reason, 0.072)
    assert (got.downstream_source, got.dag_version) == (DownstreamSource.REGISTERED_DAG, 1)


def test_without_a_list_or_a_dag_the_breakdown_says_none() -> None:
    body = json.loads(SAMPLE.read_text())
    bare = request({k: v for k, v in body.items() if k != "downstream"})
    assert derive(bare, None) == (bare, None)
    got = escalation_of(bare)
    assert (got.downstream_waste, got.downstream_source) == (0.0, DownstreamSource.NONE)


def test_a_supplied_list_wins_and_a_node_the_dag_lacks_is_left_alone() -> None:
    body = json.loads(SAMPLE.read_text())
    topology = Topology(example2_shape())
    sent = request(body)
    assert derive(sent, topology) == (sent, None)
    stranger = request({**body, "node_id": "not-in-the-dag", "downstream": []})
    assert derive(stranger, topology) == (stranger, None)


def test_each_hop_discounts_by_the_cascade_once_more_and_the_5x_cap_stays() -> None:
    nodes = {"a": (0.1, 1.0), "b": (0.2, 1.0), "c": (0.4, 1.0), "d": (0.8, 1.0)}
    topology = Topology(shape(nodes, [("a", "b"), ("b", "c"), ("c", "d")]))
    listed = consumers(topology, "a")
    assert [(n.node_id, n.hops) for n in listed] == [("b", 1), ("c", 2), ("d", 3)]
    assert cascade_waste(listed, 0.5) == pytest.approx(0.2 * 0.5 + 0.4 * 0.25 + 0.8 * 0.125)
    body = {**json.loads(SAMPLE.read_text()), "node_id": "a", "downstream": []}
    capped = request({**body, "node_cost_usd": 0.01, "cascade_probability": 0.5})
    derived, version = derive(capped, topology)
    got = escalation_of(derived, version)
    assert got.raw_downstream_waste == pytest.approx(0.3)
    assert got.downstream_waste == pytest.approx(0.05)  # 5 x $0.01


def test_a_consumer_reached_two_ways_counts_once_at_its_nearest() -> None:
    nodes = {n: (0.1, 1.0) for n in "abcd"}
    topology = Topology(shape(nodes, [("a", "b"), ("b", "c"), ("a", "c"), ("c", "d")]))
    assert [(n.node_id, n.hops) for n in consumers(topology, "a")] == [
        ("b", 1),
        ("c", 1),
        ("d", 2),
    ]


def test_the_critical_path_is_the_longest_expected_duration_and_ties_share_it() -> None:
    nodes = {"a": (0.1, 10.0), "b": (0.1, 50.0), "c": (0.1, 5.0), "d": (0.1, 1.0)}
    topology = Topology(shape(nodes, [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")]))
    assert sorted(n for n in topology.ids if topology.is_critical(n)) == ["a", "b", "d"]
    assert topology.critical_duration_s == 61.0
    assert [(n.node_id, n.critical) for n in consumers(topology, "c")] == [("d", True)]
    tied = {"a": (0.1, 10.0), "b": (0.1, 5.0), "c": (0.1, 5.0)}
    both = Topology(shape(tied, [("a", "b"), ("a", "c")]))
    assert all(both.is_critical(n) for n in "abc")


@st.composite
def dags(draw: st.DrawFn) -> DagShape:
    size = draw(st.integers(1, 12))
    edges = draw(
        st.sets(
            st.tuples(st.integers(0, size - 1), st.integers(0, size - 1)).filter(
                lambda e: e[0] < e[1]
            ),
            max_size=30,
        )
    )
    costs = draw(st.lists(st.floats(0.0, 1.0), min_size=size, max_size=size))
    durations = draw(st.lists(st.sampled_from([0.0, 1.0, 2.5, 7.0]), min_size=size, max_size=size))
    order = draw(st.permutations(range(size)))  # the shape lists nodes in any order
    return dag_from_obj(
        {
            "dag_id": "h",
            "nodes": [
                {"node_id": f"n{i}", "cost_usd": costs[i], "duration_s": durations[i]}
                for i in order
            ],
            "edges": [{"producer": f"n{a}", "consumer": f"n{b}"} for a, b in sorted(edges)],
        }
    )


@settings(max_examples=150, deadline=None)
@given(dags(), st.sampled_from([0.0, 0.3, 0.6, 1.0]))
def test_derived_lists_and_all_nodes_waste_agree_with_the_runtimes_own(
    dag: DagShape, cascade: float
) -> None:
    topology = Topology(dag)
    expected = full_lists(dag)
    economics = all_economics(topology, cascade)
    for node in dag.nodes:
        listed = consumers(topology, node.node_id)
        assert [n.model_dump() for n in listed] == expected[node.node_id]
        cap = 5 * node.cost_usd
        assert economics[node.node_id].waste_usd == min(cascade_waste(listed, cascade), cap)
        assert economics[node.node_id].feeds_critical_path == any(n.critical for n in listed)
        assert economics[node.node_id].critical == topology.is_critical(node.node_id)


@pytest.mark.parametrize("which", ["demo", "random-200"])
def test_a_registered_dag_gives_the_same_escalations_as_the_full_lists(which: str) -> None:
    dag = demo_shape() if which == "demo" else layered_dag("r200", 200, layers=12, seed=26)
    bodies = demo_requests("demo") if which == "demo" else random_requests(dag)
    lists = full_lists(dag)
    topology = Topology(dag)
    decided = []
    for body in bodies:
        full = request({**body, "downstream": lists[body["node_id"]]})
        derived, version = derive(request(body), topology)
        assert version == 1 and derived.downstream == full.downstream
        sent, got = run_stage1(full), run_stage1(derived)
        assert got.stage1 == sent.stage1 and got.confidence == sent.confidence
        a = decide_escalation(full, stage2_price=PRICE, stage1=sent.stage1)
        b = decide_escalation(derived, stage2_price=PRICE, stage1=got.stage1, dag_version=version)
        same = {"downstream_source": a.downstream_source, "dag_version": None}
        assert b.model_copy(update=same) == a
        decided.append((a.escalate, a.reason.value, a.suppressed_by))
    # The comparison covers escalated and not, economic and hard rules, suppressed ones.
    assert {True, False} <= {e for e, _, _ in decided}
    assert "economic" in {r for _, r, _ in decided}
